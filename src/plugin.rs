//! Checker plugins: the public API for writing your own invariant, and [`CheckerSet`], which
//! decides which checkers judge a run.
//!
//! DESIGN.md §1 promises that encoding a new invariant takes one small file and no change
//! to the simulator or the model. Everything that file needs is re-exported here, so a
//! user depends on `sutra-sim` alone and writes `use sutra_sim::plugin::*;`:
//!
//! - the trait [`Checker`] (a name, a [`CheckerKind`], `on_event`, `at_end`) and what it
//!   returns, [`Check`];
//! - what it judges: each [`Event`] of kind [`ModelEvent`] (with the id, exit and reaction
//!   types its fields use), and the read-only [`ModelView`] of the model's state;
//! - how it is registered: a [`ModelCheckerSpec`] with a factory, added to a [`CheckerSet`]
//!   next to the built-in checkers.
//!
//! A [`CheckerSet`] is also where names are resolved — a scenario's `checkers = [...]`,
//! the command line's `--checker` and `--skip-checker` — so an unknown name is refused
//! before anything runs, with the list of the known ones, instead of a run that silently
//! checks less than it was asked to.
//!
//! # A checker in one file
//!
//! ```
//! use std::collections::BTreeSet;
//! use std::sync::Arc;
//!
//! use sutra_sim::plugin::*;
//!
//! /// A step that panicked never commits: R9 releases and re-raises, it does not carry on.
//! #[derive(Default)]
//! struct PanickedStepsNeverCommit {
//!     /// Executions whose step panicked.
//!     panicked: BTreeSet<ExecId>,
//! }
//!
//! impl Checker<ModelEvent, ModelView> for PanickedStepsNeverCommit {
//!     fn name(&self) -> &str {
//!         "panicked-steps-never-commit"
//!     }
//!
//!     fn kind(&self) -> CheckerKind {
//!         CheckerKind::Always
//!     }
//!
//!     fn on_event(&mut self, event: &Event<ModelEvent>, _view: &ModelView) -> Check {
//!         match &event.kind {
//!             ModelEvent::StepEnded { exec, error: Some(Code::StepPanic), .. } => {
//!                 self.panicked.insert(*exec);
//!             }
//!             ModelEvent::CommitAccepted { instance, exec, .. } if self.panicked.contains(exec) => {
//!                 return Check::Fail(format!("execution {} of instance {} committed after a panic", exec.0, instance.0));
//!             }
//!             _ => {}
//!         }
//!         Check::Ok
//!     }
//! }
//!
//! fn panicked_steps_never_commit() -> ModelCheckerSpec {
//!     ModelCheckerSpec {
//!         name: "panicked-steps-never-commit",
//!         kind: CheckerKind::Always,
//!         description: "a step that panicked never commits",
//!         rules: &["R9"],
//!         factory: Arc::new(|| Box::new(PanickedStepsNeverCommit::default())),
//!     }
//! }
//!
//! // Every built-in checker, plus ours, judges every run of this set.
//! let checkers = CheckerSet::built_in().with(panicked_steps_never_commit());
//! let scenario = Scenario::built_in("smoke").unwrap();
//! let names = checkers.names_for(&scenario).unwrap();
//! assert_eq!(names.last().map(String::as_str), Some("panicked-steps-never-commit"));
//!
//! let outcome = checkers.run(&scenario, &RunOptions::seeded(7)).unwrap();
//! assert!(outcome.verdict.is_pass(), "{}", outcome.verdict);
//! ```

use std::collections::BTreeSet;
use std::fmt;

pub use sutra_sim_core::checker::CheckerFactory;
pub use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event, NodeId, Registry, SimTime, UnknownChecker};
pub use sutra_sim_model::event::{Component, Exit, LaneAction, Reaction, WriteKind};
pub use sutra_sim_model::ids::{Code, ExecId, InstanceId, MessageId, OwnerId, ProcessId, ResumePath};
pub use sutra_sim_model::{ModelEvent, ModelView, Mutant, RunOptions, Scenario};

use sutra_sim_core::Outcome;
use sutra_sim_model::checkers;

/// The registration of a checker of the Sutra model: its name, kind, a one-line
/// description, the rule ids it asserts (DESIGN.md §4, or your own) and its factory.
pub type ModelCheckerSpec = CheckerSpec<ModelEvent, ModelView>;

/// Checkers of the Sutra model by name.
pub type ModelRegistry = Registry<ModelEvent, ModelView>;

/// One checker instance, built fresh for each run by its spec's factory.
pub type ModelChecker = Box<dyn Checker<ModelEvent, ModelView>>;

/// A checker registration or selection that cannot be honoured, as one line for a person.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckerError(pub String);

impl fmt::Display for CheckerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CheckerError {}

/// The checkers that judge a run: the built-in ones, any registered by the user, and the
/// choice made by name (the scenario's `checkers = [...]`, `--checker`, `--skip-checker`).
///
/// For a scenario, the checkers run are, in this order:
/// 1. the names given to [`CheckerSet::only`] if any; otherwise the scenario's
///    `run.checkers` if it names some; otherwise every built-in checker and coverage
///    property, in the built-in order (DESIGN.md §5);
/// 2. then, unless [`CheckerSet::only`] was given, every user checker not already named, in
///    the order registered — a checker you register runs without being named again;
/// 3. minus the names given to [`CheckerSet::skip`].
///
/// Order matters only when one event breaks two invariants: the first checker in the
/// order reports it. A selection that leaves nothing to check is an error, never a run
/// that passes because nothing looked.
#[derive(Clone)]
pub struct CheckerSet {
    registry: ModelRegistry,
    /// Names registered with [`CheckerSet::with`] or [`CheckerSet::add`], in order.
    /// Invariant: every one is in `registry` and none is a built-in name.
    user: Vec<&'static str>,
    /// `--checker`: when not empty, exactly these run. Invariant: every one is registered.
    only: Vec<String>,
    /// `--skip-checker`: never run. Invariant: every one is registered.
    skip: Vec<String>,
    /// How to replay a seed of a program that registered user checkers (see
    /// [`CheckerSet::replay_with`]); `None` means the `sutra-sim run` command line.
    replay_template: Option<String>,
}

impl fmt::Debug for CheckerSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckerSet")
            .field("user", &self.user)
            .field("only", &self.only)
            .field("skip", &self.skip)
            .field("replay_template", &self.replay_template)
            .finish_non_exhaustive()
    }
}

impl Default for CheckerSet {
    fn default() -> Self {
        CheckerSet::built_in()
    }
}

impl CheckerSet {
    /// The built-in checkers and coverage properties, nothing else, none skipped: what
    /// `sutra-sim run` and `sutra-sim sweep` use.
    pub fn built_in() -> CheckerSet {
        CheckerSet {
            registry: checkers::registry(),
            user: Vec::new(),
            only: Vec::new(),
            skip: Vec::new(),
            replay_template: None,
        }
    }

    /// Adds a user checker; it runs in every run of this set unless skipped.
    ///
    /// # Panics
    ///
    /// If [`CheckerSet::add`] refuses the spec: a second registration of a name, or a
    /// factory whose checker calls itself by another name or kind. Both are mistakes in
    /// the program, found the first time it runs.
    #[track_caller]
    pub fn with(mut self, spec: ModelCheckerSpec) -> CheckerSet {
        if let Err(e) = self.add(spec) {
            panic!("{e}");
        }
        self
    }

    /// Adds a user checker, refusing a name that is already registered (two invariants
    /// must not share a name: reports and replays name the checker) and a factory whose
    /// checker disagrees with its spec about its name or kind (a verdict would then name a
    /// checker that `--checker` cannot find). The factory is called once here to check.
    pub fn add(&mut self, spec: ModelCheckerSpec) -> Result<&mut CheckerSet, CheckerError> {
        if self.registry.get(spec.name).is_ok() {
            return Err(CheckerError(format!("checker {:?} is registered twice", spec.name)));
        }
        if spec.name.is_empty() || spec.name.contains(char::is_whitespace) {
            return Err(CheckerError(format!(
                "checker name {:?} must be one word, kebab-case (it is typed on the command line)",
                spec.name
            )));
        }
        let probe = (spec.factory)();
        if probe.name() != spec.name || probe.kind() != spec.kind {
            return Err(CheckerError(format!(
                "checker spec {:?} ({}) builds a checker that calls itself {:?} ({}): the two must agree",
                spec.name,
                spec.kind.as_str(),
                probe.name(),
                probe.kind().as_str()
            )));
        }
        self.user.push(spec.name);
        self.registry.register(spec);
        Ok(self)
    }

    /// Runs exactly these checkers (the command line's repeatable `--checker NAME`), in
    /// the order given, instead of the scenario's list or the defaults. An empty list
    /// changes nothing. Unknown names are an error listing the known ones.
    pub fn only<S: AsRef<str>>(mut self, names: impl IntoIterator<Item = S>) -> Result<CheckerSet, CheckerError> {
        for name in names {
            let name = self.known(name.as_ref(), "--checker")?;
            if !self.only.contains(&name) {
                self.only.push(name);
            }
        }
        Ok(self)
    }

    /// Never runs these checkers (the command line's repeatable `--skip-checker NAME`).
    /// Unknown names are an error listing the known ones: a typo must not leave a checker
    /// running that the user believes is off, nor hide one they meant to silence.
    pub fn skip<S: AsRef<str>>(mut self, names: impl IntoIterator<Item = S>) -> Result<CheckerSet, CheckerError> {
        for name in names {
            let name = self.known(name.as_ref(), "--skip-checker")?;
            if !self.skip.contains(&name) {
                self.skip.push(name);
            }
        }
        Ok(self)
    }

    /// Sets the command printed to replay a failing seed of a sweep of this set, for
    /// programs that register their own checkers (the `sutra-sim` command line does not
    /// know them, so its `run` command would replay without them). `{scenario}`, `{seed}`
    /// and `{mutant}` (a mutant name, or `none`) are replaced.
    pub fn replay_with(mut self, template: impl Into<String>) -> CheckerSet {
        self.replay_template = Some(template.into());
        self
    }

    /// Every registered checker: built-in, coverage and user.
    pub fn registry(&self) -> &ModelRegistry {
        &self.registry
    }

    /// The names of the user checkers, in the order registered.
    pub fn user_names(&self) -> &[&'static str] {
        &self.user
    }

    /// The names of the checkers that judge a run of `scenario`, in judging order (see
    /// [`CheckerSet`] for the rule). Errors name the unknown checker and list the known ones.
    pub fn names_for(&self, scenario: &Scenario) -> Result<Vec<String>, CheckerError> {
        let mut names: Vec<String> = if !self.only.is_empty() {
            self.only.clone()
        } else if !scenario.run.checkers.is_empty() {
            for name in &scenario.run.checkers {
                self.known(name, &format!("scenario {:?}: run.checkers", scenario.name))?;
            }
            scenario.run.checkers.clone()
        } else {
            checkers::default_names()
        };
        if self.only.is_empty() {
            for name in &self.user {
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_string());
                }
            }
        }
        let mut seen = BTreeSet::new();
        names.retain(|n| !self.skip.contains(n) && seen.insert(n.clone()));
        if names.is_empty() {
            return Err(CheckerError(format!(
                "no checker left to run on scenario {:?}: --skip-checker removed every one selected",
                scenario.name
            )));
        }
        Ok(names)
    }

    /// Fresh instances of the checkers for one run of `scenario`.
    pub fn build_for(&self, scenario: &Scenario) -> Result<Vec<ModelChecker>, CheckerError> {
        Ok(self.factories_for(scenario)?.iter().map(|f| f()).collect())
    }

    /// The factories of the checkers for `scenario`, in order: resolved once, so that a
    /// sweep builds each seed's checkers without resolving names again.
    pub fn factories_for(
        &self,
        scenario: &Scenario,
    ) -> Result<Vec<CheckerFactory<ModelEvent, ModelView>>, CheckerError> {
        let names = self.names_for(scenario)?;
        names
            .iter()
            .map(|n| self.registry.get(n).map(|spec| spec.factory.clone()).map_err(|e| CheckerError(e.to_string())))
            .collect()
    }

    /// The factories a sweep runs for `scenario`: [`CheckerSet::factories_for`] less the
    /// built-in coverage properties the scenario cannot be expected to reach. A sweep counts
    /// only the expected ones ([`CheckerSet::coverage_names`]); the others would be judged
    /// on every event of every seed for a count nobody reads (22 of smoke's 57). No verdict
    /// changes: a coverage property never fails a run. A property a user registered, or one
    /// named outright (`only`, the scenario's `run.checkers`), always runs.
    pub fn sweep_factories_for(
        &self,
        scenario: &Scenario,
    ) -> Result<Vec<CheckerFactory<ModelEvent, ModelView>>, CheckerError> {
        if !self.only.is_empty() || !scenario.run.checkers.is_empty() {
            return self.factories_for(scenario);
        }
        let expected = checkers::coverage::expected(scenario);
        let counted = |name: &String| {
            let sometimes = self.registry.get(name).is_ok_and(|s| s.kind == CheckerKind::Sometimes);
            !sometimes || self.user.iter().any(|u| u == name) || expected.contains(&name.as_str())
        };
        let names: Vec<String> = self.names_for(scenario)?.into_iter().filter(counted).collect();
        names
            .iter()
            .map(|n| self.registry.get(n).map(|spec| spec.factory.clone()).map_err(|e| CheckerError(e.to_string())))
            .collect()
    }

    /// Refuses, before anything runs, any scenario whose checker names this set cannot
    /// resolve. Call it when scenarios are loaded.
    pub fn check_scenarios(&self, scenarios: &[Scenario]) -> Result<(), CheckerError> {
        scenarios.iter().try_for_each(|s| self.names_for(s).map(drop))
    }

    /// Runs `scenario` once under `options`, judged by this set's checkers.
    pub fn run(&self, scenario: &Scenario, options: &RunOptions) -> Result<Outcome<ModelEvent>, CheckerError> {
        Ok(sutra_sim_model::run_with(scenario, options, self.build_for(scenario)?))
    }

    /// The coverage (sometimes) properties a sweep of `scenarios` counts, and flags when no
    /// seed reached them: those selected for a scenario that can be expected to reach them.
    /// A built-in property is expected only where the scenario has the faults or load that
    /// provoke it ([`checkers::coverage::expected`]); a user's property wherever it runs —
    /// whoever registers it says it should happen. Scenarios that do not resolve contribute
    /// nothing (they are refused by [`CheckerSet::check_scenarios`] first).
    pub fn coverage_names(&self, scenarios: &[Scenario]) -> Vec<String> {
        let mut names = BTreeSet::new();
        for scenario in scenarios {
            let expected = checkers::coverage::expected(scenario);
            for name in self.names_for(scenario).unwrap_or_default() {
                let sometimes = self.registry.get(&name).is_ok_and(|s| s.kind == CheckerKind::Sometimes);
                let is_user = self.user.iter().any(|u| *u == name);
                if sometimes && (is_user || expected.contains(&name.as_str())) {
                    names.insert(name);
                }
            }
        }
        names.into_iter().collect()
    }

    /// The command that replays one seed under this selection: the `sutra-sim run`
    /// command line given (`base`), with `--checker`/`--skip-checker` flags so the same
    /// checkers judge it — or, if [`CheckerSet::replay_with`] was set, that template filled in.
    /// Without a template, a set with user checkers says the command line lacks them.
    pub fn replay_command(&self, base: &str, scenario: &str, seed: u64, mutant: Option<Mutant>) -> String {
        if let Some(template) = &self.replay_template {
            return template
                .replace("{scenario}", scenario)
                .replace("{seed}", &seed.to_string())
                .replace("{mutant}", mutant.map_or("none", |m| m.name()));
        }
        // The command line knows only the built-in checkers: flags name those alone.
        let is_user = |name: &String| self.user.iter().any(|u| u == name);
        let mut command = base.to_string();
        for name in self.only.iter().filter(|n| !is_user(n)) {
            command.push_str(&format!(" --checker {name}"));
        }
        for name in self.skip.iter().filter(|n| !is_user(n)) {
            command.push_str(&format!(" --skip-checker {name}"));
        }
        if !self.user.is_empty() {
            command.push_str(&format!(
                "  (runs without your checkers {}: replay in your program, see CheckerSet::replay_with)",
                self.user.join(", ")
            ));
        }
        command
    }

    fn known(&self, name: &str, context: &str) -> Result<String, CheckerError> {
        self.registry.get(name).map(|s| s.name.to_string()).map_err(|e| CheckerError(format!("{context}: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// A checker with nothing to say, under a name chosen by the test.
    struct Quiet(&'static str, CheckerKind);

    impl Checker<ModelEvent, ModelView> for Quiet {
        fn name(&self) -> &str {
            self.0
        }
        fn kind(&self) -> CheckerKind {
            self.1
        }
        fn on_event(&mut self, _: &Event<ModelEvent>, _: &ModelView) -> Check {
            Check::Ok
        }
    }

    fn quiet(name: &'static str, kind: CheckerKind) -> ModelCheckerSpec {
        ModelCheckerSpec {
            name,
            kind,
            description: "",
            rules: &[],
            factory: Arc::new(move || Box::new(Quiet(name, kind))),
        }
    }

    fn smoke() -> Scenario {
        Scenario::built_in("smoke").unwrap()
    }

    #[test]
    fn the_built_in_set_runs_what_the_model_runs_by_default() {
        assert_eq!(CheckerSet::built_in().names_for(&smoke()).unwrap(), checkers::default_names());
    }

    #[test]
    fn a_user_checker_runs_after_the_built_ins_without_being_named_again() {
        let set = CheckerSet::built_in().with(quiet("mine", CheckerKind::Always));
        let names = set.names_for(&smoke()).unwrap();
        assert_eq!(names.last().unwrap(), "mine");
        assert_eq!(names.len(), checkers::default_names().len() + 1);
    }

    #[test]
    fn a_user_checker_joins_a_scenario_that_names_its_own_checkers() {
        let mut scenario = smoke();
        scenario.run.checkers = vec!["exits-release".into()];
        let set = CheckerSet::built_in().with(quiet("mine", CheckerKind::Always));
        assert_eq!(set.names_for(&scenario).unwrap(), vec!["exits-release".to_string(), "mine".to_string()]);
    }

    #[test]
    fn only_runs_exactly_the_names_given_and_skip_removes() {
        let set = CheckerSet::built_in()
            .with(quiet("mine", CheckerKind::Always))
            .only(["linear-history", "no-double-resume", "linear-history"])
            .unwrap()
            .skip(["linear-history"])
            .unwrap();
        assert_eq!(set.names_for(&smoke()).unwrap(), vec!["no-double-resume".to_string()]);
    }

    #[test]
    fn unknown_names_are_refused_with_the_known_ones_listed() {
        let err = CheckerSet::built_in().only(["no-double-resum"]).unwrap_err().0;
        assert!(err.starts_with("--checker: unknown checker \"no-double-resum\""), "{err}");
        assert!(err.contains("no-double-resume") && err.contains("exits-release"), "{err}");
        let err = CheckerSet::built_in().skip(["nope"]).unwrap_err().0;
        assert!(err.starts_with("--skip-checker: unknown checker"), "{err}");
    }

    #[test]
    fn an_unknown_name_in_a_scenario_is_refused_before_anything_runs() {
        let mut scenario = smoke();
        scenario.run.checkers = vec!["no-such-checker".into()];
        let err = CheckerSet::built_in().check_scenarios(&[scenario]).unwrap_err().0;
        assert!(err.contains("scenario \"smoke\": run.checkers: unknown checker \"no-such-checker\""), "{err}");
        assert!(err.contains("known checkers: "), "{err}");
    }

    #[test]
    fn skipping_everything_is_an_error_not_a_vacuous_pass() {
        let set = CheckerSet::built_in().only(["exits-release"]).unwrap().skip(["exits-release"]).unwrap();
        assert!(set.names_for(&smoke()).unwrap_err().0.contains("no checker left"));
    }

    #[test]
    fn a_name_registered_twice_or_a_spec_that_disagrees_with_its_checker_is_refused() {
        let mut set = CheckerSet::built_in();
        assert!(set.add(quiet("exits-release", CheckerKind::Always)).unwrap_err().0.contains("registered twice"));
        let mut liar = quiet("liar", CheckerKind::Always);
        liar.kind = CheckerKind::Sometimes;
        assert!(set.add(liar).unwrap_err().0.contains("must agree"));
        assert!(set.add(quiet("two words", CheckerKind::Always)).is_err());
    }

    #[test]
    fn coverage_counts_only_the_selected_sometimes_properties() {
        let set = CheckerSet::built_in().with(quiet("sometimes-mine", CheckerKind::Sometimes));
        let all = set.coverage_names(&[smoke()]);
        assert!(all.contains(&"sometimes-mine".to_string()));
        assert!(all.contains(&"sometimes-relay-refused".to_string()));
        let narrowed = set.only(["exits-release", "sometimes-relay-refused"]).unwrap();
        assert_eq!(narrowed.coverage_names(&[smoke()]), vec!["sometimes-relay-refused".to_string()]);
    }

    #[test]
    fn a_sweep_judges_the_coverage_it_counts_and_every_checker_that_can_fail() {
        let set = CheckerSet::built_in().with(quiet("sometimes-mine", CheckerKind::Sometimes));
        let names = |set: &CheckerSet, scenario: &Scenario| -> Vec<String> {
            let built: Vec<ModelChecker> = set.sweep_factories_for(scenario).unwrap().iter().map(|f| f()).collect();
            built.iter().map(|c| c.name().to_string()).collect()
        };
        let mut quiet_world = smoke();
        quiet_world.faults = Default::default();
        quiet_world.admin = Default::default();
        let swept = names(&set, &quiet_world);
        let counted = set.coverage_names(std::slice::from_ref(&quiet_world));
        for name in set.names_for(&quiet_world).unwrap() {
            let sometimes = set.registry().get(&name).unwrap().kind == CheckerKind::Sometimes;
            let judged = swept.contains(&name);
            assert_eq!(judged, !sometimes || counted.contains(&name), "{name}: judged {judged}");
        }
        assert!(swept.contains(&"sometimes-mine".to_string()), "a user's property always runs");
        assert!(!swept.contains(&"fault-replica-crash".to_string()), "no crash, no crash coverage");
        assert!(swept.len() < set.names_for(&quiet_world).unwrap().len());
        // A property named outright runs wherever it is named.
        let mut named = quiet_world.clone();
        named.run.checkers = vec!["fault-replica-crash".into()];
        assert!(names(&set, &named).contains(&"fault-replica-crash".to_string()));
        let only = set.only(["fault-replica-crash"]).unwrap();
        assert_eq!(names(&only, &quiet_world), vec!["fault-replica-crash".to_string()]);
    }

    #[test]
    fn the_replay_command_carries_the_selection() {
        let set = CheckerSet::built_in().only(["exits-release"]).unwrap().skip(["linear-history"]).unwrap();
        assert_eq!(
            set.replay_command("sutra-sim run --seed 3", "smoke", 3, None),
            "sutra-sim run --seed 3 --checker exits-release --skip-checker linear-history"
        );
        let templated =
            CheckerSet::built_in().replay_with("my-program --scenario {scenario} --seed {seed} --mutant {mutant}");
        assert_eq!(
            templated.replay_command("ignored", "smoke", 9, Some(Mutant::AckBeforeCommit)),
            "my-program --scenario smoke --seed 9 --mutant ack-before-commit"
        );
    }
}

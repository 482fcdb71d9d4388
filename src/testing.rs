//! sutra-sim inside `cargo test`: [`SimTest`], a builder a user calls from an ordinary
//! `#[test]` to sweep a seed range of a scenario with their own checkers.
//!
//! Rust developers already test with `cargo test`; an invariant that only runs in a
//! separate nightly job is an invariant nobody sees fail. So the builder runs the seeds
//! (across threads, as a sweep does — each seed is still its own single-threaded,
//! deterministic world) and, when one fails, panics with a message a person can act on:
//! the checker, the seed, what it saw, and the one command that replays exactly that
//! seed — `SUTRA_SIM_SEED=37 cargo test -p my-crate --test my_test -- my_test_name --exact`.
//! With [`SEED_VARIABLE`] set, the same test runs that one seed and nothing else, so the
//! failure is back in seconds, under a debugger if need be.
//!
//! The first failing seed in seed order is the one reported, whatever the number of
//! threads, so the message is the same on every machine.
//!
//! ```
//! use sutra_sim::plugin::Mutant;
//! use sutra_sim::testing::SimTest;
//!
//! // In a #[test]: the correct model passes every built-in checker on these seeds ...
//! SimTest::scenario("smoke").seeds(0..8).run();
//!
//! // ... and a known-bad variant does not (`run` would panic with the replay command).
//! let failure = SimTest::scenario("smoke").seeds(0..8).mutant(Mutant::ReleaseAfterCommit).try_run().unwrap_err();
//! assert!(failure.to_string().contains("release-with-commit"), "{failure}");
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use sutra_sim_core::{StrategyConfig, Verdict};
use sutra_sim_model::{Mutant, RunOptions, Scenario};

use crate::plugin::{CheckerKind, CheckerSet, ModelCheckerSpec};
use crate::scenario_arg;
use crate::sweep::{self, SweepPlan};

/// The environment variable that replays one seed: with `SUTRA_SIM_SEED=N` set, every
/// [`SimTest`] in the process runs seed `N` alone, whatever its seed range.
pub const SEED_VARIABLE: &str = "SUTRA_SIM_SEED";

/// Seeds a [`SimTest`] runs unless told otherwise: enough to meet the common faults, few
/// enough for a debug-build `cargo test`.
pub const SEEDS_DEFAULT: Range<u64> = 0..100;

/// Most worker threads a [`SimTest`] uses by default. `cargo test` already runs tests in
/// parallel; more threads per test would only queue.
pub const JOBS_DEFAULT_MAX: usize = 4;

/// Most failing seeds listed in a failure message (the count is always given).
pub const FAILING_SEEDS_LISTED_MAX: usize = 10;

/// A seed sweep run from a `#[test]`: a scenario, a seed range, checkers (the built-in
/// ones plus any you add), optionally a mutant and a strategy.
///
/// [`SimTest::run`] panics on the first failing seed (in seed order) with the checker, the
/// seed, its message and the command that replays it; [`SimTest::try_run`] returns the same
/// as a value.
#[derive(Debug)]
pub struct SimTest {
    scenario: Result<Scenario, String>,
    seeds: Range<u64>,
    checkers: CheckerSet,
    mutant: Option<Mutant>,
    strategy: Option<StrategyConfig>,
    jobs: usize,
    /// Mistakes in the builder calls, reported by `run`/`try_run` before any seed runs.
    setup_errors: Vec<String>,
}

/// What a passing [`SimTest`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimTestSummary {
    /// The scenario's name.
    pub scenario: String,
    /// Seeds run (1 when [`SEED_VARIABLE`] chose the seed).
    pub seeds_run: u64,
    /// Events judged in all.
    pub events: u64,
    /// For every selected coverage (sometimes) property, the seeds that reached it.
    pub coverage: BTreeMap<String, u64>,
    /// The seed [`SEED_VARIABLE`] chose, if it was set.
    pub replayed_seed: Option<u64>,
}

/// One failing seed of a [`SimTest`], with everything needed to replay it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimTestFailure {
    /// The scenario's name.
    pub scenario: String,
    /// The first failing seed, in seed order.
    pub seed: u64,
    /// The mutant that was on, if any.
    pub mutant: Option<Mutant>,
    /// How the seed ended.
    pub verdict: Verdict,
    /// The failing checker (or the verdict class for a hang, budget overrun or crash).
    pub checker: String,
    /// What it saw.
    pub message: String,
    /// The run's trace fingerprint: a replay of the seed reproduces it.
    pub fingerprint: u64,
    /// Events judged in the failing run.
    pub events: u64,
    /// Every failing seed, in order.
    pub failing_seeds: Vec<u64>,
    /// Seeds run.
    pub seeds_run: u64,
    /// True if [`SEED_VARIABLE`] chose the seed (this run was a replay).
    pub replayed: bool,
    /// The command that replays this seed alone: the environment variable and `cargo test`.
    pub replay: String,
    /// Where the shrunk reproducer was saved, if it was.
    pub reproducer: Option<PathBuf>,
    /// Why no reproducer was saved, if none was.
    pub reproducer_note: Option<String>,
}

/// Why a [`SimTest`] did not pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimTestError {
    /// The test is set up wrong (an unknown scenario, checker or mutant name, a bad
    /// [`SEED_VARIABLE`]); no seed ran.
    Setup(String),
    /// A seed failed.
    Failed(Box<SimTestFailure>),
    /// Every seed passed, but a coverage property you registered was reached by none of
    /// them: the invariant it partners was never put to the test (a vacuous green).
    Vacuous {
        /// The scenario's name.
        scenario: String,
        /// The unreached properties.
        unreached: Vec<String>,
        /// Seeds run.
        seeds_run: u64,
    },
}

impl SimTest {
    /// A test of a built-in scenario by name (`smoke`, …) or of a scenario file (a path
    /// ending in `.toml`, relative to the package root where `cargo test` runs).
    pub fn scenario(name_or_path: &str) -> SimTest {
        // Checker names in the file are resolved in `try_run`, once every checker is added.
        let scenario = match scenario_arg::load(name_or_path) {
            Ok(mut scenarios) if scenarios.len() == 1 => Ok(scenarios.remove(0)),
            Ok(_) => Err(format!("a SimTest runs one scenario, and {name_or_path:?} names several")),
            Err(e) => Err(e.0),
        };
        SimTest::build(scenario)
    }

    /// A test of a scenario built in code.
    pub fn with_scenario(scenario: Scenario) -> SimTest {
        SimTest::build(Ok(scenario))
    }

    fn build(scenario: Result<Scenario, String>) -> SimTest {
        SimTest {
            scenario,
            seeds: SEEDS_DEFAULT,
            checkers: CheckerSet::built_in(),
            mutant: None,
            strategy: None,
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()).min(JOBS_DEFAULT_MAX),
            setup_errors: Vec::new(),
        }
    }

    /// The seeds to run (default [`SEEDS_DEFAULT`]).
    pub fn seeds(mut self, seeds: Range<u64>) -> SimTest {
        if seeds.is_empty() {
            self.setup_errors.push(format!("the seed range {seeds:?} is empty"));
        }
        self.seeds = seeds;
        self
    }

    /// Adds your checker; it judges every seed alongside the built-in ones.
    pub fn checker(mut self, spec: ModelCheckerSpec) -> SimTest {
        if let Err(e) = self.checkers.add(spec) {
            self.setup_errors.push(e.0);
        }
        self
    }

    /// Runs only these checkers, by name (as `--checker` on the command line).
    pub fn only_checkers<S: AsRef<str>>(self, names: impl IntoIterator<Item = S>) -> SimTest {
        self.select(|set| set.only(names))
    }

    /// Does not run this checker, by name (as `--skip-checker` on the command line).
    pub fn skip_checker(self, name: &str) -> SimTest {
        self.select(|set| set.skip([name]))
    }

    fn select(mut self, choose: impl FnOnce(CheckerSet) -> Result<CheckerSet, crate::plugin::CheckerError>) -> SimTest {
        match choose(self.checkers.clone()) {
            Ok(set) => self.checkers = set,
            Err(e) => self.setup_errors.push(e.0),
        }
        self
    }

    /// Switches on a known-bad variant of the model.
    pub fn mutant(mut self, mutant: Mutant) -> SimTest {
        self.mutant = Some(mutant);
        self
    }

    /// Overrides the scenario's scheduling strategy.
    pub fn strategy(mut self, strategy: StrategyConfig) -> SimTest {
        self.strategy = Some(strategy);
        self
    }

    /// Worker threads (default: the machine's parallelism, at most [`JOBS_DEFAULT_MAX`]).
    /// The result is the same for any number.
    pub fn jobs(mut self, jobs: usize) -> SimTest {
        if jobs == 0 || jobs > sweep::JOBS_MAX {
            self.setup_errors.push(format!("jobs = {jobs} is outside 1..={}", sweep::JOBS_MAX));
        }
        self.jobs = jobs;
        self
    }

    /// Runs the seeds and returns what they did.
    ///
    /// # Panics
    ///
    /// If a seed fails, with the checker, the seed, its message and the replay command; if
    /// the test is set up wrong; if a coverage property you registered was never reached.
    #[track_caller]
    pub fn run(self) -> SimTestSummary {
        match self.try_run() {
            Ok(summary) => summary,
            Err(e) => panic!("{e}"),
        }
    }

    /// Runs the seeds; a failure is returned, not panicked.
    pub fn try_run(self) -> Result<SimTestSummary, SimTestError> {
        let scenario = self.scenario.map_err(SimTestError::Setup)?;
        if let Some(e) = self.setup_errors.first() {
            return Err(SimTestError::Setup(e.clone()));
        }
        self.checkers.check_scenarios(std::slice::from_ref(&scenario)).map_err(|e| SimTestError::Setup(e.0))?;
        let replayed_seed = seed_from_environment().map_err(SimTestError::Setup)?;
        let (start, count) = match replayed_seed {
            Some(seed) => (seed, 1),
            None => (self.seeds.start, self.seeds.end - self.seeds.start),
        };
        let plan = SweepPlan {
            scenarios: vec![scenario],
            start,
            count,
            shard: None,
            mutant: self.mutant,
            strategy: self.strategy,
            jobs: self.jobs.clamp(1, sweep::JOBS_MAX),
            time_budget: None,
            checkers: self.checkers,
        };
        // Every seed runs, even after a failure: stopping at the first failure a thread
        // happens to see would make "the first failing seed" depend on the thread count.
        let (tally, _) = sweep::run(&plan, &AtomicBool::new(false), &|_, _| {});
        let scenario = &plan.scenarios[0];
        let failing = &tally.failing;
        if let Some(first) = failing.first() {
            print_log_of(&plan, first.seed);
            let (reproducer, reproducer_note) = match save_reproducer(&plan, first) {
                Ok(path) => (Some(path), None),
                Err(note) => (None, Some(note)),
            };
            return Err(SimTestError::Failed(Box::new(SimTestFailure {
                scenario: scenario.name.clone(),
                seed: first.seed,
                mutant: plan.mutant,
                verdict: first.verdict.clone(),
                checker: first.verdict.checker().unwrap_or("").to_string(),
                message: first.verdict.message(),
                fingerprint: first.fingerprint,
                events: first.events,
                failing_seeds: failing.iter().map(|r| r.seed).collect(),
                seeds_run: tally.seeds_run,
                replayed: replayed_seed.is_some(),
                replay: replay_command(first.seed),
                reproducer,
                reproducer_note,
            })));
        }
        let coverage = sweep::coverage(&plan, &tally);
        // A user's sometimes-property that no seed reached means its invariant was never
        // tested. (Built-in ones are not held to this here: a small seed range of one
        // scenario need not meet every fault; the nightly sweep flags those.)
        let unreached: Vec<String> = plan
            .checkers
            .user_names()
            .iter()
            .filter(|n| coverage.get(**n) == Some(&0))
            .filter(|n| plan.checkers.registry().get(n).is_ok_and(|s| s.kind == CheckerKind::Sometimes))
            .map(|n| n.to_string())
            .collect();
        if !unreached.is_empty() && replayed_seed.is_none() {
            return Err(SimTestError::Vacuous {
                scenario: scenario.name.clone(),
                unreached,
                seeds_run: tally.seeds_run,
            });
        }
        Ok(SimTestSummary {
            scenario: scenario.name.clone(),
            seeds_run: tally.seeds_run,
            events: tally.events,
            coverage,
            replayed_seed,
        })
    }
}

/// Reads [`SEED_VARIABLE`]: unset (or empty) means the test's own seed range.
fn seed_from_environment() -> Result<Option<u64>, String> {
    match std::env::var(SEED_VARIABLE) {
        Ok(text) if text.trim().is_empty() => Ok(None),
        Ok(text) => text
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| format!("{SEED_VARIABLE}={text:?} is not a seed (a whole number from 0 to {})", u64::MAX)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(format!("{SEED_VARIABLE} is not valid text")),
    }
}

/// Where a failing `SimTest` saves its shrunk reproducer, under the target directory.
pub const REPRODUCERS_DIR: &str = "sutra-sim/reproducers";

/// Wall-clock budget for shrinking a failing `SimTest` seed: a test that expects a failure
/// pays it (in a debug build), so it is much shorter than a sweep's.
pub const SHRINK_BUDGET_IN_TESTS: std::time::Duration = std::time::Duration::from_secs(2);

/// Shrinks the failing seed (same checker, same checkers judging) and saves its reproducer
/// atomically under the target directory's [`REPRODUCERS_DIR`], returning its path.
fn save_reproducer(plan: &SweepPlan, failing: &sweep::SeedResult) -> Result<PathBuf, String> {
    use crate::shrinking::{shrink_failure, FailingRun};
    let scenario = plan.scenarios[failing.scenario].clone();
    let stem = crate::reproducer::file_stem(&scenario.name, failing.seed, plan.mutant);
    let run =
        FailingRun::from_seed(scenario, failing.seed, plan.mutant, plan.strategy).with_checkers(plan.checkers.clone());
    let limits = sutra_sim_shrink::Limits { time_budget: SHRINK_BUDGET_IN_TESTS, ..Default::default() };
    let shrunk = shrink_failure(&run, limits).map_err(|e| format!("not saved: {e}"))?;
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| PathBuf::from("target"), PathBuf::from);
    let dir = target.join(REPRODUCERS_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| format!("not saved: cannot create {}: {e}", dir.display()))?;
    shrunk.reproducer.save_in(&dir, &stem).map_err(|e| format!("not saved: {e}"))
}

/// The one command that replays `seed` alone: the environment variable, then `cargo test`
/// narrowed to this package, this test target and this test, so nothing else runs.
fn replay_command(seed: u64) -> String {
    let mut command = format!("{SEED_VARIABLE}={seed} cargo test");
    let package = std::env::var("CARGO_PKG_NAME").ok().filter(|p| !p.is_empty());
    if let Some(package) = &package {
        command.push_str(&format!(" -p {package}"));
    }
    if let Some(target) = package.as_deref().and_then(test_target_flag) {
        command.push_str(&format!(" {target}"));
    }
    // libtest names each test's thread after the test's path; a program outside libtest
    // runs on `main`, and then the variable alone replays the seed on the next run.
    match std::thread::current().name() {
        Some(test) if test != "main" => command.push_str(&format!(" -- {test} --exact")),
        _ => {}
    }
    command
}

/// `--test NAME` or `--example NAME` for the running test binary, when the binary is
/// certainly that target (its source file exists where Cargo looks for it). `None` when in
/// doubt — the lib's own unit tests, a bin — because a wrong target flag would make the
/// printed command fail, and `cargo test -p PACKAGE -- NAME --exact` is right for all.
fn test_target_flag(package: &str) -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let stem = exe.file_stem()?.to_str()?;
    // Cargo names test binaries `TARGET-HASH`.
    let (target, hash) = stem.rsplit_once('-')?;
    if hash.is_empty() || !hash.chars().all(|c| c.is_ascii_hexdigit()) || target == package.replace('-', "_") {
        return None;
    }
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?);
    let has_source = |dir: &str| {
        let dir = root.join(dir);
        dir.join(format!("{target}.rs")).is_file() || dir.join(target).join("main.rs").is_file()
    };
    let kind = exe.parent().and_then(Path::file_name).and_then(|d| d.to_str());
    match kind {
        Some("deps") if has_source("tests") => Some(format!("--test {target}")),
        Some("examples") if has_source("examples") => Some(format!("--example {target}")),
        _ => None,
    }
}

/// Reruns `seed` with the simulator's log captured and prints it, so that the test's
/// captured output (shown when the test fails) holds the run's log.
fn print_log_of(plan: &SweepPlan, seed: u64) {
    let directives = std::env::var("RUST_LOG").unwrap_or_else(|_| "debug".to_string());
    match log_of(plan, seed, &directives) {
        Ok(log) => {
            println!("sutra-sim: log of scenario {}, seed {seed} (RUST_LOG={directives}):", plan.scenarios[0].name);
            print!("{log}");
        }
        Err(e) => println!("sutra-sim: no log of seed {seed}: {e}"),
    }
}

/// The log of `seed` of the plan's scenario, filtered by `directives` (`RUST_LOG` style;
/// `debug` is everything the model and the simulator record). The rerun is the same run:
/// logging draws nothing.
fn log_of(plan: &SweepPlan, seed: u64, directives: &str) -> Result<String, String> {
    let scenario = &plan.scenarios[0];
    let filter: sutra_sim_core::log::LogFilter = directives.parse().map_err(|e| format!("RUST_LOG: {e}"))?;
    let judges = plan.checkers.build_for(scenario).map_err(|e| e.0)?;
    let options = RunOptions::for_seed(seed, plan.strategy, plan.mutant);
    let (_, log) = sutra_sim_core::log::capture(&filter, || sutra_sim_model::run_with(scenario, &options, judges));
    Ok(log)
}

impl fmt::Display for SimTestFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mutant = self.mutant.map(|m| format!(", mutant {}", m.name())).unwrap_or_default();
        match &self.verdict {
            Verdict::Violation { .. } => writeln!(
                f,
                "sutra-sim: checker {} failed on scenario {}, seed {}{mutant}",
                self.checker, self.scenario, self.seed
            )?,
            other => {
                writeln!(f, "sutra-sim: {} on scenario {}, seed {}{mutant}", other.class(), self.scenario, self.seed)?
            }
        }
        writeln!(f, "  {}", self.message)?;
        writeln!(f, "  fingerprint {:016x}, {} events", self.fingerprint, self.events)?;
        if self.replayed {
            writeln!(f, "  (replayed seed {} alone, chosen by {SEED_VARIABLE})", self.seed)?;
        } else {
            let listed: Vec<String> =
                self.failing_seeds.iter().take(FAILING_SEEDS_LISTED_MAX).map(u64::to_string).collect();
            let more = if self.failing_seeds.len() > FAILING_SEEDS_LISTED_MAX { ", …" } else { "" };
            writeln!(
                f,
                "  {} of {} seeds failed: {}{more}",
                self.failing_seeds.len(),
                self.seeds_run,
                listed.join(", ")
            )?;
        }
        match (&self.reproducer, &self.reproducer_note) {
            (Some(path), _) => writeln!(f, "  reproducer: {}", path.display())?,
            (None, Some(note)) => writeln!(f, "  reproducer: {note}")?,
            (None, None) => {}
        }
        write!(f, "replay this seed alone:\n  {}", self.replay)
    }
}

impl fmt::Display for SimTestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimTestError::Setup(message) => write!(f, "sutra-sim: the test is set up wrong: {message}"),
            SimTestError::Failed(failure) => failure.fmt(f),
            SimTestError::Vacuous { scenario, unreached, seeds_run } => write!(
                f,
                "sutra-sim: every seed passed, but {} was reached in none of {seeds_run} seeds of scenario {scenario}: \
                 the invariant it partners was never tested (a vacuous green); run more seeds or a scenario that provokes it",
                unreached.join(", ")
            ),
        }
    }
}

impl std::error::Error for SimTestError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_scenario_or_checker_name_is_a_setup_error_before_any_seed_runs() {
        let err = SimTest::scenario("atlantis").try_run().unwrap_err();
        assert!(matches!(&err, SimTestError::Setup(m) if m.contains("atlantis")), "{err}");
        let err = SimTest::scenario("smoke").skip_checker("no-such").try_run().unwrap_err();
        assert!(matches!(&err, SimTestError::Setup(m) if m.contains("known checkers")), "{err}");
        let err = SimTest::scenario("smoke").seeds(5..5).try_run().unwrap_err();
        assert!(matches!(&err, SimTestError::Setup(m) if m.contains("empty")), "{err}");
    }

    #[test]
    fn the_replay_command_names_the_variable_the_seed_and_this_test() {
        let command = replay_command(37);
        assert!(command.starts_with("SUTRA_SIM_SEED=37 cargo test"), "{command}");
        assert!(
            command
                .ends_with("-- testing::tests::the_replay_command_names_the_variable_the_seed_and_this_test --exact"),
            "{command}"
        );
    }

    #[test]
    fn a_registered_sometimes_property_that_no_seed_reached_is_a_vacuous_green() {
        use std::sync::Arc;

        use crate::plugin::{Check, Checker, Event, ModelEvent, ModelView};

        struct NeverReached;
        impl Checker<ModelEvent, ModelView> for NeverReached {
            fn name(&self) -> &str {
                "sometimes-never"
            }
            fn kind(&self) -> CheckerKind {
                CheckerKind::Sometimes
            }
            fn on_event(&mut self, _: &Event<ModelEvent>, _: &ModelView) -> Check {
                Check::Ok
            }
        }
        let spec = ModelCheckerSpec {
            name: "sometimes-never",
            kind: CheckerKind::Sometimes,
            description: "never happens",
            rules: &[],
            factory: Arc::new(|| Box::new(NeverReached)),
        };
        let err = SimTest::scenario("smoke").seeds(0..2).checker(spec).try_run().unwrap_err();
        assert!(matches!(&err, SimTestError::Vacuous { unreached, .. } if unreached == &["sometimes-never"]), "{err}");
    }

    #[test]
    fn the_first_failing_seed_is_the_same_for_any_number_of_threads() {
        let first =
            |jobs| match SimTest::scenario("smoke").seeds(0..6).mutant(Mutant::NoReleaseOnError).jobs(jobs).try_run() {
                Err(SimTestError::Failed(f)) => (f.seed, f.failing_seeds, f.fingerprint),
                other => panic!("expected a failure, got {other:?}"),
            };
        assert_eq!(first(1), first(3));
    }

    #[test]
    fn a_failing_seed_has_its_log_with_simulated_time_node_and_lane() {
        let plan = SweepPlan {
            scenarios: vec![Scenario::built_in("smoke").unwrap()],
            start: 3,
            count: 1,
            shard: None,
            mutant: Some(Mutant::PerProcessOwner),
            strategy: None,
            jobs: 1,
            time_budget: None,
            checkers: CheckerSet::built_in(),
        };
        let log = log_of(&plan, 3, "debug").unwrap();
        let granted = log.lines().find(|l| l.contains("claim-granted")).unwrap_or_else(|| panic!("no grant in {log}"));
        assert!(granted.contains("s replica-"), "sim time and node: {granted}");
        assert!(granted.contains("execution{lane="), "the execution's lane: {granted}");
        let store_only = log_of(&plan, 3, "sutra_sim_model::store=trace").unwrap();
        assert!(!store_only.is_empty());
        assert!(store_only.lines().all(|l| l.contains("sutra_sim_model::store")), "{store_only}");
        assert!(log_of(&plan, 3, "sutra_sim_model=nonsense").is_err());
    }
}

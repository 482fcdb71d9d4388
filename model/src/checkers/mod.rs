//! The built-in checkers of DESIGN.md §5, one file each, and the coverage
//! (sometimes-)properties. Every checker judges events and the read-only [`ModelView`]
//! only — exactly what a user-written checker can see.
//!
//! To add a checker: a file here with its `//!`, a `spec()` and a [`sutra_sim_core::Checker`]
//! whose `interest` names only the tags it reads (the judge calls it for those alone); list
//! its `spec()` in [`built_in`] at its place in judging order. A coverage property goes in
//! `coverage/` (see its `//!`). Books another checker keeps too go in [`ledger`], kept once
//! per run in the view and booked once per event, not in each checker.

pub mod bindings_consistent;
pub mod bounce_meter_agrees;
pub mod claim_tenure;
pub mod codes_acted_on;
pub mod commit_by_owner;
pub mod commit_once;
pub mod coverage;
pub mod eventual_completion;
pub mod exited_stays_exited;
pub mod exits_release;
pub mod faults_applied;
pub mod lane_contract;
pub mod lease_exclusive;
pub mod ledger;
pub mod linear_history;
pub mod live_leak;
pub mod no_double_resume;
pub mod no_stale_snapshot;
pub mod no_wait_in_turn;
pub mod one_trigger_one_step;
pub mod owner_scope;
pub mod parked_holds_no_claim;
pub mod prefetch_window;
pub mod process_ends;
pub mod quiet_bounce_meter;
pub mod refusal_contract;
pub mod refusal_grounds;
pub mod refused_migration_touches_nothing;
pub mod release_with_commit;
pub mod running_time;
pub mod stale_steal;
pub mod store_divergence;
pub mod sweep_by_age;
pub mod task_lists;
pub mod tickets_follow_routes;

#[cfg(test)]
pub(crate) mod testing;

use sutra_sim_core::{CheckerKind, CheckerSpec, Registry};

use crate::event::{tag, ModelEvent, Source};
use crate::view::ModelView;

/// The registry type of this model.
pub type ModelRegistry = Registry<ModelEvent, ModelView>;

/// The safety and liveness checkers in the order of DESIGN.md §5 (the witness-based ones of
/// issue #12 after the older always-checkers), which is the order they judge each event:
/// when one event breaks two rules, the first named here reports it.
pub fn built_in() -> Vec<CheckerSpec<ModelEvent, ModelView>> {
    vec![
        no_double_resume::spec(),
        no_stale_snapshot::spec(),
        linear_history::spec(),
        one_trigger_one_step::spec(),
        release_with_commit::spec(),
        exits_release::spec(),
        refusal_contract::spec(),
        codes_acted_on::spec(),
        sweep_by_age::spec(),
        parked_holds_no_claim::spec(),
        lane_contract::spec(),
        no_wait_in_turn::spec(),
        commit_by_owner::spec(),
        stale_steal::spec(),
        refusal_grounds::spec(),
        lease_exclusive::spec(),
        owner_scope::spec(),
        tickets_follow_routes::spec(),
        refused_migration_touches_nothing::spec(),
        bindings_consistent::spec(),
        prefetch_window::spec(),
        faults_applied::spec(),
        exited_stays_exited::spec(),
        commit_once::spec(),
        live_leak::spec(),
        claim_tenure::spec(),
        store_divergence::spec(),
        eventual_completion::spec(),
        quiet_bounce_meter::spec(),
        bounce_meter_agrees::spec(),
    ]
}

/// Every built-in checker and coverage property, registered by name.
pub fn registry() -> ModelRegistry {
    let mut r = Registry::new();
    for spec in built_in().into_iter().chain(coverage::specs()) {
        r.register(spec);
    }
    r
}

/// The names run when a scenario names none: every built-in checker in DESIGN order,
/// then every coverage property.
pub fn default_names() -> Vec<String> {
    built_in().iter().chain(coverage::specs().iter()).map(|s| s.name.to_string()).collect()
}

/// Names of the coverage (sometimes) properties.
pub fn coverage_names() -> Vec<String> {
    coverage::specs().iter().filter(|s| s.kind == CheckerKind::Sometimes).map(|s| s.name.to_string()).collect()
}

/// One kind of event a checker reads: its tag, its kebab-case name and who emits it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Input {
    /// The event tag ([`sutra_sim_core::EventKind::tag`]).
    pub tag: u8,
    /// The events' kebab-case name.
    pub name: &'static str,
    /// Who emits them.
    pub source: Source,
}

/// The kinds of event a registered checker reads, from the interest mask of a fresh
/// instance ([`sutra_sim_core::Checker::interest`]), in tag order. A checker that keeps the
/// default mask reads every kind.
pub fn inputs(spec: &CheckerSpec<ModelEvent, ModelView>) -> Vec<Input> {
    let mask = (spec.factory)().interest();
    tag::in_mask(mask)
        .into_iter()
        .map(|t| Input {
            tag: t,
            name: tag::name(t).expect("in_mask gives tags only"),
            source: tag::source(t).expect("in_mask gives tags only"),
        })
        .collect()
}

/// The narrative (self-report) events a registered checker reads, by name: what its verdict
/// could rest on besides the witnesses. Empty for a checker that believes witnesses only.
pub fn narrative_inputs(spec: &CheckerSpec<ModelEvent, ModelView>) -> Vec<&'static str> {
    inputs(spec).into_iter().filter(|i| !i.source.is_witness()).map(|i| i.name).collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use sutra_sim_core::{Check, Checker, Event};

    use super::*;

    /// Built-in safety and liveness checkers that still read narrative events while they
    /// are rewritten on witnesses (issue #12, in parallel branches). Shrink this list as
    /// each lands: the test below fails for a listed checker that no longer needs it.
    const STILL_READING_NARRATIVE: &[&str] = &[
        // Every always- and eventually-checker reads witnesses only; keep it so.
    ];

    /// The always- and eventually-checkers among `specs` that read narrative events, with
    /// what they read, leaving out the names in `allowed`; and the allowed names that read
    /// witnesses only (or name no such checker).
    fn narrative_readers(specs: &[CheckerSpec<ModelEvent, ModelView>], allowed: &[&str]) -> (Vec<String>, Vec<String>) {
        let judges: Vec<_> = specs.iter().filter(|s| s.kind != CheckerKind::Sometimes).collect();
        let offending = judges
            .iter()
            .filter(|s| !allowed.contains(&s.name))
            .filter_map(|s| {
                let read = narrative_inputs(s);
                (!read.is_empty()).then(|| format!("{} reads {}", s.name, read.join(", ")))
            })
            .collect();
        let needless = allowed
            .iter()
            .filter(|name| !judges.iter().any(|s| s.name == **name && !narrative_inputs(s).is_empty()))
            .map(|name| name.to_string())
            .collect();
        (offending, needless)
    }

    #[test]
    fn no_built_in_always_or_eventually_checker_reads_a_narrative_event() {
        let (offending, needless) = narrative_readers(&built_in(), STILL_READING_NARRATIVE);
        assert!(offending.is_empty(), "verdicts resting on self-reports: {offending:?}");
        assert!(
            needless.is_empty(),
            "these read witnesses only now (or are gone): remove them from STILL_READING_NARRATIVE: {needless:?}"
        );
    }

    /// A checker reading the tags it is given.
    struct Reads(u64, CheckerKind);
    impl Checker<ModelEvent, ModelView> for Reads {
        fn name(&self) -> &str {
            "reads"
        }
        fn kind(&self) -> CheckerKind {
            self.1
        }
        fn on_event(&mut self, _: &Event<ModelEvent>, _: &ModelView) -> Check {
            Check::Ok
        }
        fn interest(&self) -> u64 {
            self.0
        }
    }

    fn reading(name: &'static str, kind: CheckerKind, mask: u64) -> CheckerSpec<ModelEvent, ModelView> {
        CheckerSpec {
            name,
            kind,
            description: "test",
            rules: &[],
            factory: Arc::new(move || Box::new(Reads(mask, kind))),
        }
    }

    #[test]
    fn the_narrative_test_catches_a_checker_reading_a_self_report() {
        use crate::event::tag::*;
        let specs = vec![
            reading("witnesses-only", CheckerKind::Always, sutra_sim_core::tag_mask(&[COMMIT_ACCEPTED, RELAY_ACKED])),
            reading("believes-rehydrated", CheckerKind::Always, sutra_sim_core::tag_mask(&[CLAIM_GRANTED, REHYDRATED])),
            // The default mask reads everything, self-reports included.
            reading("reads-everything", CheckerKind::Eventually, u64::MAX),
            // Coverage properties may read narrative events (where no witness can tell).
            reading("coverage", CheckerKind::Sometimes, sutra_sim_core::tag_mask(&[REFUSAL])),
        ];
        let (offending, needless) = narrative_readers(&specs, &[]);
        assert_eq!(offending.len(), 2, "{offending:?}");
        assert_eq!(offending[0], "believes-rehydrated reads rehydrated");
        assert!(offending[1].starts_with("reads-everything reads dispatched, claim-attempt"), "{offending:?}");
        assert!(needless.is_empty());
        // An allowed checker is let through; an allowed one that reads witnesses only is named.
        let (offending, needless) =
            narrative_readers(&specs, &["believes-rehydrated", "reads-everything", "witnesses-only"]);
        assert!(offending.is_empty());
        assert_eq!(needless, ["witnesses-only"]);
    }

    #[test]
    fn inputs_name_each_tag_and_its_emitter() {
        let spec = reading("x", CheckerKind::Always, sutra_sim_core::tag_mask(&[tag::RELAY_REQUEUED, tag::SWEPT]));
        let names: Vec<(&str, &str)> = inputs(&spec).iter().map(|i| (i.name, i.source.as_str())).collect();
        assert_eq!(names, [("relay-requeued", "broker"), ("swept", "store")]);
    }
}

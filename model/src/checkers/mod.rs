//! The built-in checkers of DESIGN.md §5, one file each, and the coverage
//! (sometimes-)properties. Every checker judges events and the read-only [`ModelView`]
//! only — exactly what a user-written checker can see.

pub mod bindings_consistent;
pub mod coverage;
pub mod eventual_completion;
pub mod exits_release;
pub mod lane_contract;
pub mod linear_history;
pub mod no_double_resume;
pub mod no_stale_snapshot;
pub mod one_trigger_one_step;
pub mod parked_holds_no_claim;
pub mod quiet_bounce_meter;
pub mod refusal_contract;
pub mod release_with_commit;
pub mod sweep_by_age;

#[cfg(test)]
pub(crate) mod testing;

use sutra_sim_core::{CheckerKind, CheckerSpec, Registry};

use crate::event::ModelEvent;
use crate::view::ModelView;

/// The registry type of this model.
pub type ModelRegistry = Registry<ModelEvent, ModelView>;

/// The safety and liveness checkers in the order of DESIGN.md §5, which is the order they
/// judge each event: when one event breaks two rules, the first named here reports it.
pub fn built_in() -> Vec<CheckerSpec<ModelEvent, ModelView>> {
    vec![
        no_double_resume::spec(),
        no_stale_snapshot::spec(),
        linear_history::spec(),
        one_trigger_one_step::spec(),
        release_with_commit::spec(),
        exits_release::spec(),
        refusal_contract::spec(),
        sweep_by_age::spec(),
        parked_holds_no_claim::spec(),
        lane_contract::spec(),
        bindings_consistent::spec(),
        eventual_completion::spec(),
        quiet_bounce_meter::spec(),
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

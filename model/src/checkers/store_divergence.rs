//! store-divergence (always; differential runs): the model's store and the SQL engine,
//! run in lockstep by `--store differential`, gave the same answer to every operation and
//! left the same instance row behind. A difference is a verdict of its own — neither store
//! is presumed right: either the model's store is kinder than a database, or the SQL says
//! something the spec does not.
//!
//! The comparison is the harness's, made where both stores answered (see
//! `sql_store::differential`); this checker asks the read-only view after every store
//! witness ([`ModelView::store_divergence`]), so the run stops at the operation's own
//! witnesses. No component code is imported here. In a run of one engine there is nothing
//! to compare and it never fires; a history judged by `check` holds no second store, so
//! `check` reports it unable to judge.

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::{tag, ModelEvent, Source};
use crate::view::ModelView;

/// Stateless: every judgment is a question to the view.
#[derive(Default)]
pub struct StoreDivergence;

/// The checker's name.
pub const NAME: &str = "store-divergence";

/// True if a run of `scenario` has a second store to compare: only then is the checker
/// installed (in a run of one engine the view never holds a divergence, so leaving it out
/// changes no verdict and saves a call per store witness).
pub fn judges(scenario: &crate::scenario::Scenario) -> bool {
    scenario.store.engine == crate::sql_store::StoreEngine::Differential
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: NAME,
        kind: CheckerKind::Always,
        description:
            "with --store differential, the model's store and the SQL statements give the same answers and rows",
        rules: &[],
        factory: Arc::new(|| Box::new(StoreDivergence)),
    }
}

/// Every store witness: a store operation has just answered.
fn store_witness_mask() -> u64 {
    (0..tag::COUNT)
        .filter(|t| matches!(tag::source(*t), Some(Source::Witness(crate::event::Witness::Store))))
        .fold(0u64, |mask, t| mask | (1u64 << t))
}

impl Checker<ModelEvent, ModelView> for StoreDivergence {
    fn interest(&self) -> u64 {
        store_witness_mask()
    }

    fn name(&self) -> &str {
        NAME
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, _event: &Event<ModelEvent>, view: &ModelView) -> Check {
        match view.store_divergence() {
            Some(d) => Check::Fail(format!("the store engines diverged at {d}")),
            None => Check::Ok,
        }
    }

    fn at_end(&mut self, view: &ModelView) -> Check {
        match view.store_divergence() {
            Some(d) => Check::Fail(format!("the store engines diverged at {d}")),
            None => Check::Ok,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed_with, view};
    use crate::ids::InstanceId;
    use crate::sql_store::differential::Divergence;

    fn completed() -> ModelEvent {
        ModelEvent::InstanceCompleted { instance: InstanceId(0) }
    }

    #[test]
    fn a_recorded_divergence_fails_at_the_next_store_witness_naming_both_results() {
        let v = view();
        assert!(!fails(&feed_with(&mut StoreDivergence, vec![(1, completed())], &v)));
        v.store_state_for_tests().borrow_mut().divergence = Some(Divergence {
            operation: "claim",
            statement: "UPDATE instance SET owner = $2 WHERE id = $1".into(),
            model: "Refused { holder: p1#lane-0 }".into(),
            sqlite: "Granted { epoch: 2 }".into(),
        });
        let check = feed_with(&mut StoreDivergence, vec![(1, completed())], &v);
        let Check::Fail(message) = check else { panic!("{check:?}") };
        assert!(
            message.contains("claim") && message.contains("Refused") && message.contains("Granted { epoch: 2 }"),
            "{message}"
        );
        assert!(message.contains("UPDATE instance"), "{message}");
    }

    #[test]
    fn it_reads_store_witnesses_only() {
        let mask = StoreDivergence.interest();
        assert_ne!(mask, 0);
        for t in tag::in_mask(mask) {
            assert!(matches!(tag::source(t), Some(Source::Witness(crate::event::Witness::Store))), "tag {t}");
        }
    }
}

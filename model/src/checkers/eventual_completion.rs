//! eventual-completion (eventually; R4, R5, R18): after the heal phase every instance
//! completes and no claim is held, within a bound derived from the scenario's timeouts
//! (the run ends at that bound at the latest, and this checker judges the end state).

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::ModelEvent;
use crate::view::ModelView;

/// Judges the end state only.
#[derive(Default)]
pub struct EventualCompletion;

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "eventual-completion",
        kind: CheckerKind::Eventually,
        description: "after the heal every instance completes and no claim is held, within the derived bound",
        rules: &["R4", "R5", "R18"],
        factory: Arc::new(|| Box::new(EventualCompletion)),
    }
}

impl Checker<ModelEvent, ModelView> for EventualCompletion {
    fn interest(&self) -> u64 {
        0
    }

    fn name(&self) -> &str {
        "eventual-completion"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Eventually
    }

    fn on_event(&mut self, _event: &Event<ModelEvent>, _view: &ModelView) -> Check {
        Check::Ok
    }

    fn at_end(&mut self, view: &ModelView) -> Check {
        let incomplete = view.incomplete_instances();
        let held = view.held_claims();
        if incomplete.is_empty() && held.is_empty() {
            return Check::Ok;
        }
        let bound = sutra_sim_core::format_duration(view.scenario().completion_bound());
        let mut parts = Vec::new();
        if !incomplete.is_empty() {
            let list: Vec<String> = incomplete
                .iter()
                .take(8)
                .map(|i| format!("{} (at step {})", i.0, view.version(*i).unwrap_or(0)))
                .collect();
            parts.push(format!("{} instance(s) never completed: {}", incomplete.len(), list.join(", ")));
        }
        if !held.is_empty() {
            let list: Vec<String> = held.iter().take(8).map(|(i, o)| format!("{} by {o}", i.0)).collect();
            parts.push(format!("{} claim(s) still held: {}", held.len(), list.join(", ")));
        }
        Check::Fail(format!("{} within {bound} after the heal", parts.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed_with};
    use crate::scenario::Scenario;
    use crate::store::{StoreState, Trigger};
    use crate::view::ModelView;
    use std::cell::RefCell;
    use std::rc::Rc;

    fn view_with(version: u64, owner: Option<crate::ids::OwnerId>) -> ModelView {
        let s = Scenario::built_in("smoke").unwrap();
        let mut store = StoreState::default();
        store.instances.push(crate::store::InstanceRow {
            owner,
            claimed_at: sutra_sim_core::SimTime::ZERO,
            version,
            parked: false,
            steps: 2,
            plan: vec![Trigger::Relay, Trigger::Relay],
            epoch: 1,
            committed_under: vec![1; version as usize],
        });
        ModelView::new(
            Rc::new(crate::ctx::Config { scenario: s.clone(), faults: s.faults.clone() }),
            Rc::new(RefCell::new(store)),
        )
    }

    #[test]
    fn fires_when_an_instance_never_completed() {
        assert!(fails(&feed_with(&mut EventualCompletion, vec![], &view_with(1, None))));
    }

    #[test]
    fn fires_when_a_claim_is_left_held() {
        let owner = crate::ids::OwnerId::lane(crate::ids::ProcessId(1), 0);
        assert!(fails(&feed_with(&mut EventualCompletion, vec![], &view_with(2, Some(owner)))));
    }

    #[test]
    fn accepts_everything_complete_and_free() {
        assert_eq!(feed_with(&mut EventualCompletion, vec![], &view_with(2, None)), Check::Ok);
    }
}

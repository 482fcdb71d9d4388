//! bindings-consistent (always; L9): a replica's binding table keeps its cross-collection
//! invariant (C2: the per-lane counts agree with the delivery tickets) at the end of every
//! turn of its state lane. State with an invariant across collections lives on one lane
//! (spec 003 §4); a table updated in two turns, or outside its lane, shows here as an
//! inconsistent table at some turn's end.
//!
//! The checker asks the read-only view ([`ModelView::bindings_consistent`]), which the model
//! wires up at setup: no component code is imported here.
//!
//! A bug that would still pass: a table whose counts agree with wrong tickets (a ticket
//! registered under the wrong lane, with the count bumped for that same wrong lane) is
//! consistent and wrong; only where the work then goes can tell (coverage's
//! `sometimes-override-routed` asks that the override's lane handles the work).

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::{Component, LaneAction, ModelEvent};
use crate::view::ModelView;

/// Stateless: every judgment is a question to the view.
#[derive(Default)]
pub struct BindingsConsistent;

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "bindings-consistent",
        kind: CheckerKind::Always,
        description: "every replica's binding table keeps its per-lane counts equal to its tickets after every turn",
        rules: &["L9"],
        factory: Arc::new(|| Box::new(BindingsConsistent)),
    }
}

impl Checker<ModelEvent, ModelView> for BindingsConsistent {
    fn interest(&self) -> u64 {
        sutra_sim_core::tag_mask(&[crate::event::tag::LANE])
    }

    fn name(&self) -> &str {
        "bindings-consistent"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, view: &ModelView) -> Check {
        if let ModelEvent::Lane {
            process, component: Component::Bindings, action: LaneAction::TurnEnded(item), ..
        } = event.kind
        {
            if view.bindings_consistent(process) == Some(false) {
                return Check::Fail(format!(
                    "the binding table of process {} is inconsistent at the end of turn {item}: its per-lane counts disagree with its tickets (L9)",
                    process.0
                ));
            }
        }
        Check::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed_with, view};
    use crate::ids::ProcessId;

    fn turn_ended(process: u32) -> ModelEvent {
        ModelEvent::Lane {
            process: ProcessId(process),
            component: Component::Bindings,
            action: LaneAction::TurnEnded(1),
            task: None,
        }
    }

    #[test]
    fn fires_when_a_table_is_inconsistent_after_a_turn() {
        let v = view().with_bindings_probe(Box::new(|p| Some(p != ProcessId(2))));
        assert_eq!(feed_with(&mut BindingsConsistent, vec![(1, turn_ended(1))], &v), Check::Ok);
        assert!(fails(&feed_with(&mut BindingsConsistent, vec![(1, turn_ended(1)), (2, turn_ended(2))], &v)));
    }

    #[test]
    fn a_turn_that_has_not_ended_is_not_judged() {
        let v = view().with_bindings_probe(Box::new(|_| Some(false)));
        let started = ModelEvent::Lane {
            process: ProcessId(1),
            component: Component::Bindings,
            action: LaneAction::TurnStarted(1),
            task: None,
        };
        assert_eq!(feed_with(&mut BindingsConsistent, vec![(1, started)], &v), Check::Ok);
    }

    #[test]
    fn a_process_without_a_table_is_not_judged() {
        let v = view().with_bindings_probe(Box::new(|_| None));
        assert_eq!(feed_with(&mut BindingsConsistent, vec![(1, turn_ended(3))], &v), Check::Ok);
    }
}

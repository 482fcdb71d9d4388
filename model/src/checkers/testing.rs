//! Helpers for the checkers' unit tests: feed a hand-made history, get the first failure.

use std::cell::RefCell;
use std::rc::Rc;

use sutra_sim_core::{Check, Checker, Event, NodeId, SimTime};

use crate::event::ModelEvent;
use crate::scenario::Scenario;
use crate::store::StoreState;
use crate::view::ModelView;

/// A view of the smoke scenario over an empty store.
pub fn view() -> ModelView {
    let s = Scenario::built_in("smoke").unwrap();
    ModelView::new(
        Rc::new(crate::ctx::Config { scenario: s.clone(), faults: s.faults.clone() }),
        Rc::new(RefCell::new(StoreState::default())),
    )
}

/// Feeds `(time_ms, event)` pairs; returns the first failure (or `at_end`'s verdict).
pub fn feed(checker: &mut dyn Checker<ModelEvent, ModelView>, history: Vec<(u64, ModelEvent)>) -> Check {
    feed_with(checker, history, &view())
}

/// As [`feed`], with a given view.
pub fn feed_with(
    checker: &mut dyn Checker<ModelEvent, ModelView>,
    history: Vec<(u64, ModelEvent)>,
    view: &ModelView,
) -> Check {
    let mut reached = false;
    for (seq, (ms, kind)) in history.into_iter().enumerate() {
        let event = Event { seq: seq as u64, time: SimTime(ms * 1_000_000), node: NodeId(1), kind };
        match checker.on_event(&event, view) {
            Check::Fail(m) => return Check::Fail(m),
            Check::Reached => reached = true,
            Check::Ok => {}
        }
    }
    match checker.at_end(view) {
        Check::Ok if reached => Check::Reached,
        other => other,
    }
}

/// True if the check is a failure.
pub fn fails(c: &Check) -> bool {
    matches!(c, Check::Fail(_))
}

/// As [`feed`], with times in nanoseconds (for checkers that judge sub-millisecond ages).
pub fn feed_at(checker: &mut dyn Checker<ModelEvent, ModelView>, history: Vec<(u64, ModelEvent)>) -> Check {
    let view = view();
    let mut reached = false;
    for (seq, (ns, kind)) in history.into_iter().enumerate() {
        let event = Event { seq: seq as u64, time: SimTime(ns), node: NodeId(1), kind };
        match checker.on_event(&event, &view) {
            Check::Fail(m) => return Check::Fail(m),
            Check::Reached => reached = true,
            Check::Ok => {}
        }
    }
    match checker.at_end(&view) {
        Check::Ok if reached => Check::Reached,
        other => other,
    }
}

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

/// Hand-made store witnesses for the histories of the checkers that follow claims by
/// task and epoch (`live-leak`, `exits-release`): one lane owner, its grants, its rows.
pub mod claims {
    use crate::event::{ModelEvent, WriteKind};
    use crate::ids::{ExecId, InstanceId, OwnerId, ProcessId, ResumePath};

    /// Lane 0 of process p1: the owner the histories grant claims to.
    pub fn owner() -> OwnerId {
        OwnerId::lane(ProcessId(1), 0)
    }

    /// The store granted [`owner`] the claim on `instance` under `epoch`, asked by lane task
    /// `task` (execution `epoch`, on the relay path).
    pub fn granted(instance: u32, epoch: u64, task: u64) -> ModelEvent {
        ModelEvent::ClaimGranted {
            instance: InstanceId(instance),
            exec: ExecId(epoch as u32),
            owner: owner(),
            process: Some(ProcessId(1)),
            path: ResumePath::Relay,
            previous: None,
            stale_age_ns: None,
            epoch,
            task: Some(task),
        }
    }

    /// The store wrote `instance`'s row (`write`): its claim is now `owner`'s (none after a
    /// release, commit-with-release or sweep), under `epoch`.
    pub fn row(instance: u32, write: WriteKind, owner: Option<OwnerId>, epoch: u64) -> ModelEvent {
        ModelEvent::RowWritten {
            instance: InstanceId(instance),
            write,
            by: None,
            writer: None,
            owner,
            version: 0,
            epoch,
            parked: false,
        }
    }
}

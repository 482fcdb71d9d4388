//! exited-stays-exited (always; environment honesty, like `faults-applied`): a process the
//! environment witnessed as gone — crashed (`ReplicaCrashed`) or stopped after a graceful
//! shutdown (`ReplicaStopped`) — never acts again. A new incarnation is a new process.
//!
//! Why: every other verdict about crashes and stops believes those witnesses. If the fault
//! injector kills one node and reports another process dead (a slot whose node and process
//! disagree for a moment, found in the 200k sweep of issue #13), the reported process lives
//! on while the checkers judge it dead, and the one really killed dies unreported: a
//! sweeper's takeover of its claim then looks like a leak, or worse, a leak looks fine.
//!
//! What counts as acting, from witnesses only: the state-lane primitive reports a
//! submission or a turn of the process's binding-table lane (`Lane`), the store grants it the
//! sweeper lease or records its sweep (`LeaseAcquired`, `Swept`), or the environment aims a
//! shutdown or a task abort at it (`ShutdownRequested`, `TaskAborted`) — a fault aimed at a
//! dead process is the same lie from the other side.
//!
//! A real bug that would still pass: a node killed with no witness at all whose process
//! had nothing left to do (it never acts again, so nothing contradicts the silence); and a
//! dead process's store call already on the wire, which the store may still witness
//! (owners are opaque here: only lane, lease and sweep witnesses name the process).

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::dense::DenseSet;
use crate::event::{millis_text, ModelEvent};
use crate::ids::ProcessId;
use crate::view::ModelView;

/// The checker's state: the processes witnessed gone, and how.
#[derive(Default)]
pub struct ExitedStaysExited {
    crashed: DenseSet<ProcessId>,
    stopped: DenseSet<ProcessId>,
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "exited-stays-exited",
        kind: CheckerKind::Always,
        description: "a process witnessed crashed or stopped never acts again, and no fault is aimed at it",
        rules: &[],
        factory: Arc::new(|| Box::new(ExitedStaysExited::default())),
    }
}

impl ExitedStaysExited {
    /// How `process` went, if the environment witnessed it gone.
    fn gone(&self, process: ProcessId) -> Option<&'static str> {
        if self.crashed.contains(process) {
            Some("crashed")
        } else if self.stopped.contains(process) {
            Some("stopped")
        } else {
            None
        }
    }
}

impl Checker<ModelEvent, ModelView> for ExitedStaysExited {
    fn interest(&self) -> u64 {
        use crate::event::tag;
        sutra_sim_core::tag_mask(&[
            tag::REPLICA_CRASHED,
            tag::REPLICA_STOPPED,
            tag::LANE,
            tag::LEASE_ACQUIRED,
            tag::SWEPT,
            tag::SHUTDOWN_REQUESTED,
            tag::TASK_ABORTED,
        ])
    }

    fn name(&self) -> &str {
        "exited-stays-exited"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, _view: &ModelView) -> Check {
        let process = match &event.kind {
            ModelEvent::ReplicaCrashed { process, .. } => {
                self.crashed.insert(*process);
                return Check::Ok;
            }
            ModelEvent::ReplicaStopped { process, .. } => {
                self.stopped.insert(*process);
                return Check::Ok;
            }
            ModelEvent::Lane { process, .. }
            | ModelEvent::LeaseAcquired { process, .. }
            | ModelEvent::ShutdownRequested { process, .. }
            | ModelEvent::TaskAborted { process, .. } => *process,
            ModelEvent::Swept { by, .. } => *by,
            _ => return Check::Ok,
        };
        // The act is put into words only for a failure: this runs on every lane turn.
        match self.gone(process) {
            Some(how) => Check::Fail(format!(
                "p{} was witnessed {how}, yet at {} {}: the environment killed one process and reported another",
                process.0,
                millis_text(event.time.as_nanos()),
                act(&event.kind)
            )),
            None => Check::Ok,
        }
    }
}

/// What a process did, in words, for a witness of it acting.
fn act(kind: &ModelEvent) -> String {
    match kind {
        ModelEvent::Lane { component, action, .. } => format!("its {component:?} lane reported {action:?}"),
        ModelEvent::LeaseAcquired { .. } => "the store granted it the sweeper lease".into(),
        ModelEvent::Swept { instance, .. } => format!("the store recorded its sweep of instance {}", instance.0),
        ModelEvent::ShutdownRequested { .. } => "the environment asked it to shut down".into(),
        ModelEvent::TaskAborted { lane, .. } => format!("the environment aborted the task of its lane {lane}"),
        _ => unreachable!("only acts are put into words"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed};
    use crate::event::{Component, LaneAction};

    fn crashed(p: u32) -> ModelEvent {
        ModelEvent::ReplicaCrashed { replica: 0, process: ProcessId(p) }
    }

    fn stopped(p: u32) -> ModelEvent {
        ModelEvent::ReplicaStopped { replica: 0, process: ProcessId(p) }
    }

    fn turn(p: u32) -> ModelEvent {
        ModelEvent::Lane {
            process: ProcessId(p),
            component: Component::Bindings,
            action: LaneAction::TurnStarted(1),
            task: Some(3),
        }
    }

    fn lease(p: u32) -> ModelEvent {
        ModelEvent::LeaseAcquired { process: ProcessId(p), until_ns: 1, renewal: false, task: None }
    }

    #[test]
    fn fires_on_a_lane_turn_of_a_process_witnessed_crashed_or_stopped() {
        assert!(fails(&feed(&mut ExitedStaysExited::default(), vec![(1, turn(1)), (2, crashed(1)), (3, turn(1))])));
        assert!(fails(&feed(&mut ExitedStaysExited::default(), vec![(1, stopped(1)), (3, turn(1))])));
    }

    #[test]
    fn fires_on_a_lease_or_a_fault_aimed_at_a_process_gone() {
        assert!(fails(&feed(&mut ExitedStaysExited::default(), vec![(1, crashed(2)), (2, lease(2))])));
        let shutdown = ModelEvent::ShutdownRequested { replica: 0, process: ProcessId(2), drain_ns: 1 };
        assert!(fails(&feed(&mut ExitedStaysExited::default(), vec![(1, stopped(2)), (2, shutdown)])));
        let abort = ModelEvent::TaskAborted { replica: 0, process: ProcessId(2), lane: 0, task: 9 };
        assert!(fails(&feed(&mut ExitedStaysExited::default(), vec![(1, crashed(2)), (2, abort)])));
    }

    #[test]
    fn stays_quiet_while_the_next_incarnation_and_other_processes_act() {
        let history = vec![(1, turn(1)), (2, crashed(1)), (3, turn(2)), (4, lease(3)), (5, stopped(3)), (6, turn(4))];
        assert!(!fails(&feed(&mut ExitedStaysExited::default(), history)));
    }
}

//! no-wait-in-turn (always; L8, L14): a state-lane turn goes as far as reading the state and
//! settling a decision — it never waits for a long external call (spec 003 §3–4: "Do not
//! wait for a long external call inside a turn").
//!
//! Why: a turn that awaits the store, the broker or a sleep holds its lane for that long;
//! every other caller of the component queues behind one network round trip, and the 120 s
//! stall bound is the only other thing that could ever notice.
//!
//! Judged from the executor's witnesses alone:
//! - the lane's observer reports each turn's start and end, with the task running it (the
//!   lane's worker) and the simulated time of each;
//! - the store names the task that sent every request it serves (`task` on a grant, a
//!   refusal, a read, a commit, a release, a migration write, a sweep, a lease, a timer
//!   deferral).
//!
//! A store request sent by a task while that task runs an open turn is a store round trip
//! inside the turn. A turn that ends later in simulated time than it began waited on
//! something outside the lane — in the simulation a turn's own work takes no simulated
//! time, so only a timer, a store or broker round trip or another wait can make it last
//! (a real runtime's history would name its own bound; this one is zero).
//!
//! A real bug that would still pass: a turn that hands the external call to a spawned task
//! and waits for that task's answer without the call taking any simulated time.

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event, EventKind};

use crate::event::{Component, LaneAction, ModelEvent};
use crate::ids::ProcessId;
use crate::view::ModelView;

/// An open turn: its item, the task running it, and when it began (ns).
#[derive(Clone, Copy, Debug)]
struct OpenTurn {
    item: u64,
    task: u64,
    started_ns: u64,
}

/// The turns open now.
#[derive(Default)]
pub struct NoWaitInTurn {
    /// Invariant: at most one open turn per lane (a lane runs one turn at a time, L1).
    open: OpenTurns,
}

/// The turns open now, by lane, in ascending lane order. A turn opens and ends around one
/// poll, so few are open at once: a vector sorted by lane keeps its room between turns,
/// where a tree allocated a node for nearly every turn and freed it at the turn's end.
#[derive(Default)]
struct OpenTurns {
    turns: Vec<((ProcessId, Component), OpenTurn)>,
}

impl OpenTurns {
    fn at(&self, key: &(ProcessId, Component)) -> Result<usize, usize> {
        self.turns.binary_search_by(|(k, _)| k.cmp(key))
    }

    fn insert(&mut self, key: (ProcessId, Component), turn: OpenTurn) {
        match self.at(&key) {
            Ok(i) => self.turns[i].1 = turn,
            Err(i) => self.turns.insert(i, (key, turn)),
        }
    }

    fn remove(&mut self, key: &(ProcessId, Component)) -> Option<OpenTurn> {
        self.at(key).ok().map(|i| self.turns.remove(i).1)
    }

    fn iter(&self) -> impl Iterator<Item = (&(ProcessId, Component), &OpenTurn)> {
        self.turns.iter().map(|(k, t)| (k, t))
    }

    fn retain(&mut self, mut keep: impl FnMut(&(ProcessId, Component), &mut OpenTurn) -> bool) {
        self.turns.retain_mut(|(k, t)| keep(k, t));
    }
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "no-wait-in-turn",
        kind: CheckerKind::Always,
        description: "a state-lane turn never spans a store round trip, a broker call or a sleep",
        rules: &["L8", "L14"],
        factory: Arc::new(|| Box::new(NoWaitInTurn::default())),
    }
}

/// The task the store names as the sender of the request it served, if `event` is one.
fn store_request_sender(event: &ModelEvent) -> Option<u64> {
    use ModelEvent::*;
    match event {
        ClaimGranted { task, .. }
        | ClaimRefused { task, .. }
        | StoreRead { task, .. }
        | CommitAccepted { task, .. }
        | CommitRejected { task, .. }
        | Released { task, .. }
        | MigrationCommitted { task, .. }
        | Swept { task, .. }
        | SweepSelected { task, .. }
        | SweepClearMissed { task, .. }
        | LeaseAcquired { task, .. }
        | TimerDeferred { task, .. } => *task,
        _ => None,
    }
}

impl NoWaitInTurn {
    fn turn_of(&self, task: u64) -> Option<(&(ProcessId, Component), &OpenTurn)> {
        self.open.iter().find(|(_, t)| t.task == task)
    }

    fn lane_event(&mut self, key: (ProcessId, Component), action: LaneAction, task: Option<u64>, now: u64) -> Check {
        match (action, task) {
            (LaneAction::TurnStarted(item), Some(task)) => {
                self.open.insert(key, OpenTurn { item, task, started_ns: now });
            }
            (LaneAction::TurnEnded(item), _) => {
                let Some(turn) = self.open.remove(&key) else { return Check::Ok };
                if turn.item == item && now > turn.started_ns {
                    return Check::Fail(format!(
                        "turn of item {item} on p{}'s {:?} lane (task {}) lasted {}: it waited on something outside the lane (L8)",
                        key.0 .0,
                        key.1,
                        turn.task,
                        crate::event::millis_text(now - turn.started_ns)
                    ));
                }
            }
            _ => {}
        }
        Check::Ok
    }
}

impl Checker<ModelEvent, ModelView> for NoWaitInTurn {
    fn interest(&self) -> u64 {
        use crate::event::tag;
        sutra_sim_core::tag_mask(&[
            tag::LANE,
            tag::REPLICA_CRASHED,
            tag::CLAIM_GRANTED,
            tag::CLAIM_REFUSED,
            tag::STORE_READ,
            tag::COMMIT_ACCEPTED,
            tag::COMMIT_REJECTED,
            tag::RELEASED,
            tag::MIGRATION_COMMITTED,
            tag::SWEPT,
            tag::SWEEP_SELECTED,
            tag::SWEEP_CLEAR_MISSED,
            tag::LEASE_ACQUIRED,
            tag::TIMER_DEFERRED,
        ])
    }

    fn name(&self) -> &str {
        "no-wait-in-turn"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, _view: &ModelView) -> Check {
        let now = event.time.as_nanos();
        match &event.kind {
            ModelEvent::Lane { process, component, action, task } => {
                self.lane_event((*process, *component), *action, *task, now)
            }
            // A dead process's turns end with it: no turn of it is open any more.
            ModelEvent::ReplicaCrashed { process, .. } => {
                self.open.retain(|(p, _), _| p != process);
                Check::Ok
            }
            other => {
                let Some(task) = store_request_sender(other) else { return Check::Ok };
                let Some(((process, component), turn)) = self.turn_of(task) else { return Check::Ok };
                Check::Fail(format!(
                    "task {task} sent a store request ({}, instance {}) while running the turn of item {} on p{}'s {component:?} lane: a store round trip inside a turn (L8)",
                    other.name(),
                    other.instance().map_or_else(|| "-".to_string(), |i| i.to_string()),
                    turn.item,
                    process.0
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed};
    use crate::ids::{ExecId, InstanceId, OwnerId};

    fn lane(action: LaneAction, task: u64) -> ModelEvent {
        ModelEvent::Lane { process: ProcessId(1), component: Component::Bindings, action, task: Some(task) }
    }

    fn read(task: u64) -> ModelEvent {
        let owner = OwnerId::migration(3);
        ModelEvent::StoreRead {
            instance: InstanceId(2),
            exec: ExecId(5),
            claim_owner: owner,
            claim_epoch: 1,
            owner: Some(owner),
            epoch: 1,
            version: 0,
            task: Some(task),
        }
    }

    #[test]
    fn fires_when_a_turn_s_task_sends_a_store_request_inside_the_turn() {
        let history =
            vec![(1, lane(LaneAction::TurnStarted(4), 9)), (1, read(9)), (1, lane(LaneAction::TurnEnded(4), 9))];
        assert!(fails(&feed(&mut NoWaitInTurn::default(), history)));
    }

    #[test]
    fn fires_when_a_turn_lasts_any_simulated_time() {
        let history = vec![(1, lane(LaneAction::TurnStarted(4), 9)), (3, lane(LaneAction::TurnEnded(4), 9))];
        assert!(fails(&feed(&mut NoWaitInTurn::default(), history)));
    }

    #[test]
    fn the_same_task_s_request_after_its_turn_ended_passes() {
        let history = vec![
            (1, lane(LaneAction::Submitted(4), 7)),
            (1, lane(LaneAction::TurnStarted(4), 9)),
            (1, lane(LaneAction::TurnEnded(4), 9)),
            (2, read(9)),
            // Another task's request during a turn is not the turn's.
            (3, lane(LaneAction::TurnStarted(5), 9)),
            (3, read(7)),
            (3, lane(LaneAction::TurnEnded(5), 9)),
        ];
        assert_eq!(feed(&mut NoWaitInTurn::default(), history), Check::Ok);
    }

    #[test]
    fn a_turn_cut_by_its_process_crash_is_not_judged() {
        let history = vec![
            (1, lane(LaneAction::TurnStarted(4), 9)),
            (1, ModelEvent::ReplicaCrashed { replica: 0, process: ProcessId(1) }),
            (5, read(9)),
        ];
        assert_eq!(feed(&mut NoWaitInTurn::default(), history), Check::Ok);
    }
}

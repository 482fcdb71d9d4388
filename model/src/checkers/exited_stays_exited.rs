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
//! A store call already on the wire when its process died may still land (a database
//! applies a statement whose client went away after sending it), so the store's witnesses
//! of one (`LeaseAcquired`, `Swept`) are allowed within one trip of the wire after the death:
//! the store's latency and its spikes (`timeouts.store_latency_max` +
//! `faults.store.latency_spike_max`), the longest a request travels. The lane witnesses and
//! the faults aimed at the process come from the process and the environment, not the wire,
//! and get no such allowance.
//!
//! **What it forgets.** Every process dies in the end, so a long history would keep a
//! record of every process it ever saw. A death's time only matters for one wire trip: past
//! it, any act of the process is flagged whenever it comes. So a death is kept with its time
//! and how only until one wire trip has passed since it (dated from the latest instant
//! witnessed), then the process moves to a set of bits — gone for good, and which of them
//! were stopped rather than crashed — and an act of it is flagged as before; only the
//! message names the latest death forgotten instead of its own. A process witnessed gone
//! again gets its record and its wire trip back, as before. Memory follows the deaths of
//! the last wire trip, plus about a bit per process id.
//!
//! A real bug that would still pass: a node killed with no witness at all whose process
//! had nothing left to do (it never acts again, so nothing contradicts the silence); a
//! dead process that sends one more lease or sweep call within a wire trip of its death;
//! and a dead process's acts the witnesses do not name it in (owners are opaque here: only
//! lane, lease and sweep witnesses name the process); in a history whose clock goes back
//! more than a wire trip, a lease or sweep of a forgotten process dated within one trip of
//! the latest death forgotten (its own death may have been earlier).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::{millis_text, ModelEvent};
use crate::id_bits::IdBits;
use crate::ids::ProcessId;
use crate::view::ModelView;

/// The checker's state: the processes witnessed gone, how and when.
#[derive(Default)]
pub struct ExitedStaysExited {
    /// Deaths within one wire trip of the latest instant witnessed: how and when.
    recent: BTreeMap<ProcessId, Gone>,
    /// The recent deaths in the order witnessed, each with the latest instant witnessed at
    /// its witness (ns): its record is forgotten one wire trip after that.
    due: VecDeque<(u64, ProcessId)>,
    /// Processes gone more than a wire trip ago.
    gone: IdBits,
    /// Of those, the ones witnessed stopped (the others crashed).
    stopped: IdBits,
    /// The latest death forgotten (ns).
    forgotten_ns: u64,
    /// The latest instant witnessed (ns).
    now_ns: u64,
}

/// How and when a process was witnessed gone.
#[derive(Clone, Copy)]
struct Gone {
    how: &'static str,
    at_ns: u64,
    /// "at", or "at or before" for a death forgotten (dated at the latest one forgotten).
    dated: &'static str,
    /// The latest instant witnessed when it was witnessed (its place in `due`).
    noted_ns: u64,
}

impl ExitedStaysExited {
    /// Deaths remembered with their time.
    #[cfg(test)]
    fn timed(&self) -> usize {
        self.recent.len()
    }

    /// `process` was witnessed gone, `how`, at `at_ns`.
    fn died(&mut self, process: ProcessId, how: &'static str, at_ns: u64) {
        self.recent.insert(process, Gone { how, at_ns, dated: "at", noted_ns: self.now_ns });
        self.due.push_back((self.now_ns, process));
    }

    /// Moves the deaths older than one wire trip to the bits.
    fn forget_past(&mut self, trip_ns: u64) {
        while let Some(&(noted_ns, process)) = self.due.front() {
            if noted_ns.saturating_add(trip_ns) >= self.now_ns {
                return;
            }
            self.due.pop_front();
            // A process witnessed gone again since has a later place in `due`.
            let Some(gone) = self.recent.get(&process).filter(|g| g.noted_ns == noted_ns).copied() else { continue };
            self.recent.remove(&process);
            let id = u64::from(process.0);
            self.gone.insert(id);
            if gone.how == "stopped" {
                self.stopped.insert(id);
            } else {
                self.stopped.remove(id);
            }
            self.forgotten_ns = self.forgotten_ns.max(gone.at_ns);
        }
    }

    /// How and when `process` was witnessed gone, if it was: a forgotten death is dated at
    /// the latest death forgotten, no earlier than its own.
    fn gone(&self, process: ProcessId) -> Option<Gone> {
        if self.recent.is_empty() && self.gone.is_empty() {
            // Nobody died yet: the common case of a lane turn, answered without a look.
            return None;
        }
        if let Some(gone) = self.recent.get(&process) {
            return Some(*gone);
        }
        let id = u64::from(process.0);
        let how = if self.stopped.contains(id) { "stopped" } else { "crashed" };
        self.gone.contains(id).then_some(Gone { how, at_ns: self.forgotten_ns, dated: "at or before", noted_ns: 0 })
    }
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

/// The longest a request on the wire travels in this seed's store: its latency and spikes.
fn wire_trip_ns(view: &ModelView) -> u64 {
    let trip = view.scenario().timeouts.store_latency_max + view.faults().store.latency_spike_max;
    u64::try_from(trip.as_nanos()).unwrap_or(u64::MAX)
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

    fn on_event(&mut self, event: &Event<ModelEvent>, view: &ModelView) -> Check {
        let now = event.time.as_nanos();
        self.now_ns = self.now_ns.max(now);
        if !self.due.is_empty() {
            self.forget_past(wire_trip_ns(view));
        }
        let (process, on_the_wire) = match &event.kind {
            ModelEvent::ReplicaCrashed { process, .. } => {
                self.died(*process, "crashed", now);
                return Check::Ok;
            }
            ModelEvent::ReplicaStopped { process, .. } => {
                self.died(*process, "stopped", now);
                return Check::Ok;
            }
            ModelEvent::LeaseAcquired { process, .. } => (*process, true),
            ModelEvent::Swept { by, .. } => (*by, true),
            ModelEvent::Lane { process, .. }
            | ModelEvent::ShutdownRequested { process, .. }
            | ModelEvent::TaskAborted { process, .. } => (*process, false),
            _ => return Check::Ok,
        };
        let Some(Gone { how, at_ns, dated, .. }) = self.gone(process) else { return Check::Ok };
        if on_the_wire && now.saturating_sub(at_ns) <= wire_trip_ns(view) {
            return Check::Ok;
        }
        // The act is put into words only for a failure: this runs on every lane turn.
        Check::Fail(format!(
            "p{} was witnessed {how} {dated} {}, yet at {} {}: the environment killed one process and reported another",
            process.0,
            millis_text(at_ns),
            millis_text(now),
            act(&event.kind)
        ))
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

    fn swept_by(p: u32) -> ModelEvent {
        ModelEvent::Swept {
            instance: crate::ids::InstanceId(0),
            owner: crate::ids::OwnerId(1),
            epoch: 1,
            age_ns: 1,
            by: ProcessId(p),
            lease_held: true,
            task: None,
        }
    }

    #[test]
    fn fires_on_a_lease_or_a_sweep_landing_past_one_wire_trip_after_the_death() {
        // Smoke's wire trip: 4 ms of latency and spikes up to 500 ms.
        assert!(fails(&feed(&mut ExitedStaysExited::default(), vec![(1, crashed(2)), (506, lease(2))])));
        assert!(fails(&feed(&mut ExitedStaysExited::default(), vec![(1, stopped(2)), (600, swept_by(2))])));
    }

    #[test]
    fn a_lease_or_a_sweep_already_on_the_wire_may_land_within_one_trip_after_the_death() {
        assert!(!fails(&feed(&mut ExitedStaysExited::default(), vec![(1, crashed(2)), (505, lease(2))])));
        assert!(!fails(&feed(&mut ExitedStaysExited::default(), vec![(1, crashed(2)), (2, swept_by(2))])));
    }

    #[test]
    fn fires_on_a_lane_turn_or_a_fault_aimed_at_a_process_gone_however_soon() {
        assert!(fails(&feed(&mut ExitedStaysExited::default(), vec![(1, crashed(2)), (1, turn(2))])));
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

    #[test]
    fn a_long_history_of_dead_processes_keeps_few_records_and_still_flags_an_old_one_acting() {
        let mut history = Vec::new();
        for p in 0..5_000u32 {
            let at = u64::from(p) * 10;
            history.push((at, turn(p)));
            history.push((at + 1, if p % 2 == 0 { crashed(p) } else { stopped(p) }));
        }
        let mut checker = ExitedStaysExited::default();
        assert!(!fails(&feed(&mut checker, history.clone())));
        assert!(checker.timed() <= 60, "{} deaths remembered with their time", checker.timed());
        // Long dead, still dead: a lane turn, a late lease, a fault aimed at it.
        for late in [turn(7), lease(8), swept_by(9)] {
            let mut again = history.clone();
            again.push((60_000, late));
            let Check::Fail(message) = feed(&mut ExitedStaysExited::default(), again) else { panic!("not flagged") };
            assert!(message.contains("witnessed stopped") || message.contains("witnessed crashed"), "{message}");
        }
        // A process forgotten and witnessed gone again gets its wire trip from the new witness.
        let mut again = history.clone();
        again.extend([(60_000, crashed(3)), (60_100, lease(3))]);
        assert!(!fails(&feed(&mut ExitedStaysExited::default(), again)));
    }
}

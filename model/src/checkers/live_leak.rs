//! live-leak (always; R9, R22): the sweeper never clears a claim whose owner process is
//! alive and running, and whose execution already ended. The sweep is the backstop for a
//! process that is not around to run any exit; a live process releases on every exit —
//! cancellation included, where a destructor cannot await and only an explicit, awaited
//! release path does it.
//!
//! Judged from witnesses alone:
//! - the store's grant names the claim's epoch, its process and the task that asked;
//! - the execution holding it has ended once the executor witnesses that task aborted
//!   (`TaskAborted`), or once the same task asks for a claim on another instance (an
//!   execution lane is one task running one execution at a time, R20), or — for an
//!   administrative migration, whose grant names the replica process serving the request —
//!   once the server witnesses the request's handler task ended (`AdminRequestEnded`);
//! - the environment witnesses every crash and pause of a process, and every graceful stop
//!   (`ReplicaStopped`: the process exited by itself after a shutdown request, its drain
//!   done — every execution it had ended by then);
//! - the store's `Swept` names the epoch of the claim it cleared, and a grant that takes a
//!   stale claim over (`ClaimGranted` with its age) supersedes the one on the row — the
//!   same backstop by the claim timeout, taken by a claimant rather than the sweeper.
//!
//! A sweep or stale takeover of a claim whose execution ended, after which the owner's
//! process *ran* — neither crashed nor frozen, as the environment witnesses — for at least
//! the exit-path bound, is a live process that left its claim to the sweeper. What counts
//! is the running time after the end, not whether a pause came at all: a process that ran
//! on for 14 s and then paused briefly (or crashed) had every chance to release (issue 23);
//! only a freeze or a death within the bound of the end excuses it. The bound is the longest a
//! live process's exit path can take in the seed's store: a release sent again through
//! lost replies and short unavailability ([`exit_path_bound`]); a sweep inside it may race
//! a release in flight. A gracefully stopped process is a live exit too: every claim it
//! still held when it stopped ended then, and no crash or pause of it can follow.
//!
//! **What it forgets.** A grant leaves the books when its row moves on, and a task with its
//! last grant. A process's running time and graceful stop are forgotten once it ended
//! (crashed or stopped) and the store call latency the history declares has passed
//! ([`ProcessEnds`]) — no grant naming it can land any more — and no grant of its is still
//! on a row: only such a grant's sweep or takeover would ask about it. No verdict changes.
//! Without the declaration (and in a simulation) it is kept, as before. So a long history's
//! memory follows the processes alive and the claims on rows.
//!
//! A real bug that would still pass: a leak whose claim is re-taken by its own lane (the
//! same owner's re-entrant grant supersedes it) before the sweeper looks.

use std::sync::Arc;
use std::time::Duration;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::checkers::process_ends::ProcessEnds;
use crate::checkers::running_time::RunningTime;
use crate::checkers::task_lists::TaskLists;
use crate::dense::DenseMap;
use crate::event::ModelEvent;
use crate::ids::{InstanceId, ProcessId};
use crate::spec::RETRY_BACKOFF_MAX;
use crate::view::ModelView;

/// One grant the store witnessed.
#[derive(Clone, Copy, Debug)]
struct Grant {
    task: Option<u64>,
    process: Option<ProcessId>,
    /// When its execution ended (ns), once witnessed.
    ended_ns: Option<u64>,
}

/// What the checker knows.
#[derive(Default)]
pub struct LiveLeak {
    /// The grant still on each instance's row, with its epoch: at most one, since a grant
    /// forgets every earlier one of its instance and a row write all but its own epoch's.
    grants: DenseMap<InstanceId, (u64, Grant)>,
    /// Each task's grants still on their rows.
    by_task: TaskLists<(InstanceId, u64)>,
    /// How long each process ran, from its freezes and death.
    running: RunningTime,
    /// The instant each process stopped gracefully (ns).
    exited_ns: DenseMap<ProcessId, u64>,
    /// Processes ended whose last requests have landed: forgotten once no grant names them.
    ends: ProcessEnds,
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "live-leak",
        kind: CheckerKind::Always,
        description: "the sweeper never clears a claim whose execution ended while its process lived and ran",
        rules: &["R9", "R22"],
        factory: Arc::new(|| Box::new(LiveLeak::default())),
    }
}

/// The longest a live process's exit path may take in this seed's store: a few calls, each
/// possibly sent again after a lost request or reply (the client timeout), through the
/// store's latency, its spikes and a short unavailability with the client's backoff.
pub fn exit_path_bound(view: &ModelView) -> Duration {
    let faults = view.faults();
    let latency = view.scenario().timeouts.store_latency_max + faults.store.latency_spike_max;
    latency * 4 + faults.store.unavailable_max + RETRY_BACKOFF_MAX + faults.store_replies.client_timeout * 4
}

impl LiveLeak {
    /// The grant of `instance` under `epoch`, if it is still on its row.
    fn grant(&self, instance: InstanceId, epoch: u64) -> Option<&Grant> {
        self.grants.get(instance).filter(|(e, _)| *e == epoch).map(|(_, grant)| grant)
    }

    /// The execution of every grant `task` holds, except on `except`, ended at `now`.
    fn ended(&mut self, task: u64, except: Option<InstanceId>, now: u64) {
        let Some(held) = self.by_task.get_mut(task) else { return };
        let grants = &mut self.grants;
        held.retain(|&(instance, epoch)| grants.get(instance).is_some_and(|(e, _)| *e == epoch));
        if held.is_empty() {
            // Nothing of the task's is on a row any more: forget the task (bounded memory).
            self.by_task.remove(task);
            return;
        }
        for &(instance, epoch) in held.iter() {
            if Some(instance) == except {
                continue;
            }
            if let Some((_, grant)) = grants.get_mut(instance).filter(|(e, _)| *e == epoch) {
                grant.ended_ns.get_or_insert(now);
            }
        }
    }

    /// Judges the backstop clearing the grant of `instance` under `epoch` at `now`: a leak if
    /// its execution ended (or its process stopped gracefully) at least the exit-path bound
    /// earlier, and its process neither crashed nor paused since. `how` says who cleared it.
    fn judge_clear(&self, instance: InstanceId, epoch: u64, now: u64, view: &ModelView, how: &str) -> Check {
        let Some(grant) = self.grant(instance, epoch).copied() else { return Check::Ok };
        let Some(process) = grant.process else { return Check::Ok };
        let (ended, why) = match self.exited_ns.get(process) {
            Some(&exited) => (exited, "stopped gracefully"),
            None => {
                let Some(ended) = grant.ended_ns else { return Check::Ok };
                (ended, "ran on")
            }
        };
        let bound = sutra_sim_core::time::duration_nanos(exit_path_bound(view));
        if self.running.ran_between(process, ended, now) < bound {
            return Check::Ok;
        }
        let task = grant.task.map_or_else(|| "an unknown task".to_string(), |t| format!("task {t}"));
        Check::Fail(format!(
            "{how} instance {}'s claim (epoch {epoch}), whose execution on {task} of process p{} ended {} ms earlier without releasing it while the process {why} (R22)",
            instance.0,
            process.0,
            (now - ended) / 1_000_000
        ))
    }

    /// Forgets the processes ended whose requests have all landed (no grant of theirs can
    /// come any more) and whose grants have all left their rows: nothing can ask about them.
    fn forget_settled_processes(&mut self) {
        for process in self.ends.settled() {
            if self.grants.values().any(|(_, grant)| grant.process == Some(process)) {
                self.ends.offer_later(process);
            } else {
                self.running.forget(process);
                self.exited_ns.remove(process);
            }
        }
    }

    /// Forgets the grants of `instance` other than `keep` (a newer grant, a release, a
    /// commit or a sweep took the row).
    fn row_moved_on(&mut self, instance: InstanceId, keep: Option<u64>) {
        if self.grants.get(instance).is_some_and(|(epoch, _)| Some(*epoch) != keep) {
            if let Some((epoch, Grant { task: Some(task), .. })) = self.grants.remove(instance) {
                self.forget_task_grant(task, instance, epoch);
            }
        }
    }

    /// Drops the grant of `instance` under `epoch` from `task`'s list, and the task with
    /// its last one: what is off its row can no longer be judged, so it is not kept.
    fn forget_task_grant(&mut self, task: u64, instance: InstanceId, epoch: u64) {
        if let Some(held) = self.by_task.get_mut(task) {
            held.retain(|&g| g != (instance, epoch));
            self.by_task.remove_if_empty(task);
        }
    }
}

impl Checker<ModelEvent, ModelView> for LiveLeak {
    fn interest(&self) -> u64 {
        use crate::event::tag;
        sutra_sim_core::tag_mask(&[
            tag::CLAIM_GRANTED,
            tag::CLAIM_REFUSED,
            tag::ROW_WRITTEN,
            tag::TASK_ABORTED,
            tag::REPLICA_CRASHED,
            tag::REPLICA_PAUSED,
            tag::REPLICA_RESUMED,
            tag::REPLICA_STOPPED,
            tag::SWEPT,
            tag::ADMIN_REQUEST_ENDED,
        ])
    }

    fn name(&self) -> &str {
        "live-leak"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, view: &ModelView) -> Check {
        let now = event.time.as_nanos();
        self.ends.observe(&event.kind, now, view);
        self.forget_settled_processes();
        match &event.kind {
            ModelEvent::ClaimGranted { instance, process, epoch, task, stale_age_ns, .. } => {
                if stale_age_ns.is_some() {
                    if let Some(&(old, _)) = self.grants.get(*instance) {
                        let verdict = self.judge_clear(*instance, old, now, view, "a stale claim took over");
                        if verdict != Check::Ok {
                            return verdict;
                        }
                    }
                }
                if let Some(t) = task {
                    self.ended(*t, Some(*instance), now);
                    self.by_task.push(*t, (*instance, *epoch));
                }
                self.row_moved_on(*instance, None);
                self.grants.insert(*instance, (*epoch, Grant { task: *task, process: *process, ended_ns: None }));
            }
            ModelEvent::ClaimRefused { instance, task: Some(t), .. } => self.ended(*t, Some(*instance), now),
            ModelEvent::RowWritten { instance, owner, epoch, .. } => {
                self.row_moved_on(*instance, owner.map(|_| *epoch));
            }
            ModelEvent::TaskAborted { task, .. } | ModelEvent::AdminRequestEnded { task, .. } => {
                self.ended(*task, None, now)
            }
            ModelEvent::ReplicaCrashed { .. }
            | ModelEvent::ReplicaPaused { .. }
            | ModelEvent::ReplicaResumed { .. } => {
                self.running.observe(&event.kind, now);
            }
            ModelEvent::ReplicaStopped { process, .. } => {
                self.exited_ns.insert(*process, now);
            }
            ModelEvent::Swept { instance, epoch, .. } => {
                return self.judge_clear(*instance, *epoch, now, view, "the sweeper cleared");
            }
            _ => {}
        }
        Check::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::claims::{granted, owner, row};
    use crate::checkers::testing::{fails, feed, feed_with};
    use crate::event::WriteKind;
    use crate::ids::{ExecId, OwnerId, ResumePath};

    fn aborted(task: u64) -> ModelEvent {
        ModelEvent::TaskAborted { replica: 0, process: ProcessId(1), lane: 0, task }
    }

    fn swept(instance: u32, epoch: u64) -> ModelEvent {
        ModelEvent::Swept {
            instance: InstanceId(instance),
            owner: owner(),
            epoch,
            age_ns: 31_000_000_000,
            by: ProcessId(2),
            lease_held: true,
            task: None,
        }
    }

    /// A granted claim whose task is aborted at 1 s.
    fn leaked() -> Vec<(u64, ModelEvent)> {
        vec![(0, granted(0, 1, 7)), (0, row(0, WriteKind::Claim, Some(owner()), 1)), (1_000, aborted(7))]
    }

    #[test]
    fn a_claim_left_by_an_aborted_execution_of_a_live_process_swept_later_fails() {
        let mut history = leaked();
        history.push((31_000, swept(0, 1)));
        assert!(fails(&feed(&mut LiveLeak::default(), history)));
    }

    #[test]
    fn a_task_forgotten_once_its_grants_left_their_rows_is_judged_again_when_it_claims_anew() {
        // Task 7's first grant is released (the task and the grant are forgotten); the same
        // task claims the same instance again and leaks it: still flagged when swept.
        let mut checker = LiveLeak::default();
        let history = vec![
            (0, granted(0, 1, 7)),
            (0, row(0, WriteKind::Claim, Some(owner()), 1)),
            (100, row(0, WriteKind::Release, None, 1)),
        ];
        assert_eq!(feed(&mut checker, history), Check::Ok);
        assert!(checker.by_task.is_empty() && checker.grants.is_empty(), "nothing kept for what left its row");
        let mut history = vec![(200, granted(0, 2, 7)), (200, row(0, WriteKind::Claim, Some(owner()), 2))];
        history.push((1_000, aborted(7)));
        history.push((31_000, swept(0, 2)));
        assert!(fails(&feed(&mut checker, history)));
    }

    #[test]
    fn a_claim_left_by_a_lane_that_moved_on_fails_when_swept() {
        let history = vec![
            (0, granted(0, 1, 7)),
            (0, row(0, WriteKind::Claim, Some(owner()), 1)),
            (500, granted(1, 1, 7)),
            (31_000, swept(0, 1)),
        ];
        assert!(fails(&feed(&mut LiveLeak::default(), history)));
    }

    #[test]
    fn a_dead_or_frozen_owner_s_claim_is_the_sweeper_s_to_clear() {
        for stop in [
            ModelEvent::ReplicaCrashed { replica: 0, process: ProcessId(1) },
            ModelEvent::ReplicaPaused { replica: 0, process: ProcessId(1), for_ns: 1 },
        ] {
            let mut history = leaked();
            history.push((2_000, stop));
            history.push((31_000, swept(0, 1)));
            assert_eq!(feed(&mut LiveLeak::default(), history), Check::Ok);
        }
    }

    #[test]
    fn a_leak_on_a_process_that_ran_on_for_14_s_before_a_brief_pause_fails() {
        // Issue 23: the pause comes long after the exit path had every chance to release.
        let mut history = leaked();
        history.push((15_000, ModelEvent::ReplicaPaused { replica: 0, process: ProcessId(1), for_ns: 200_000_000 }));
        history.push((15_200, ModelEvent::ReplicaResumed { replica: 0, process: ProcessId(1) }));
        history.push((31_000, swept(0, 1)));
        assert!(fails(&feed(&mut LiveLeak::default(), history)));
        // The same for a process that ran on for 14 s and then crashed.
        let mut history = leaked();
        history.push((15_000, ModelEvent::ReplicaCrashed { replica: 0, process: ProcessId(1) }));
        history.push((31_000, swept(0, 1)));
        assert!(fails(&feed(&mut LiveLeak::default(), history)));
    }

    #[test]
    fn a_pause_right_after_the_end_excuses_only_while_the_process_has_not_run_the_bound_since() {
        // Paused 100 ms after the abort until the sweep: it never ran long enough to release.
        let mut history = leaked();
        history.push((1_100, ModelEvent::ReplicaPaused { replica: 0, process: ProcessId(1), for_ns: 40_000_000_000 }));
        history.push((31_000, swept(0, 1)));
        assert_eq!(feed(&mut LiveLeak::default(), history), Check::Ok);
        // Paused briefly, then running for 20 s before the sweep: it had time.
        let mut history = leaked();
        history.push((1_100, ModelEvent::ReplicaPaused { replica: 0, process: ProcessId(1), for_ns: 9_000_000_000 }));
        history.push((10_100, ModelEvent::ReplicaResumed { replica: 0, process: ProcessId(1) }));
        history.push((31_000, swept(0, 1)));
        assert!(fails(&feed(&mut LiveLeak::default(), history)));
    }

    #[test]
    fn a_claim_released_on_the_way_out_is_never_swept_under_its_epoch() {
        let mut history = leaked();
        history.push((1_010, row(0, WriteKind::Release, None, 1)));
        history.push((31_000, swept(0, 1)));
        assert_eq!(feed(&mut LiveLeak::default(), history), Check::Ok);
    }

    #[test]
    fn a_sweep_racing_the_exit_path_is_not_a_leak() {
        // A live-but-slow claim swept while the aborted execution's release is in flight.
        let mut history = leaked();
        history.push((1_100, swept(0, 1)));
        assert_eq!(feed(&mut LiveLeak::default(), history), Check::Ok);
    }

    /// A granted claim still on its row when its process stops gracefully at 1 s.
    fn stopped_holding_it() -> Vec<(u64, ModelEvent)> {
        vec![
            (0, granted(0, 1, 7)),
            (0, row(0, WriteKind::Claim, Some(owner()), 1)),
            (900, ModelEvent::ShutdownRequested { replica: 0, process: ProcessId(1), drain_ns: 150_000_000 }),
            (1_000, ModelEvent::ReplicaStopped { replica: 0, process: ProcessId(1) }),
        ]
    }

    fn stale_takeover(instance: u32, epoch: u64) -> ModelEvent {
        ModelEvent::ClaimGranted {
            instance: InstanceId(instance),
            exec: ExecId(99),
            owner: OwnerId::lane(ProcessId(2), 0),
            process: Some(ProcessId(2)),
            path: ResumePath::Relay,
            previous: Some(owner()),
            stale_age_ns: Some(31_000_000_000),
            epoch,
            task: Some(99),
        }
    }

    #[test]
    fn a_claim_of_a_gracefully_stopped_process_swept_later_fails() {
        let mut history = stopped_holding_it();
        history.push((31_000, swept(0, 1)));
        assert!(fails(&feed(&mut LiveLeak::default(), history)));
    }

    #[test]
    fn a_claim_of_a_gracefully_stopped_process_taken_over_as_stale_fails() {
        let mut history = stopped_holding_it();
        history.push((31_000, stale_takeover(0, 2)));
        assert!(fails(&feed(&mut LiveLeak::default(), history)));
    }

    #[test]
    fn a_crashed_process_s_claim_swept_later_is_the_sweeper_s_to_clear() {
        let history = vec![
            (0, granted(0, 1, 7)),
            (0, row(0, WriteKind::Claim, Some(owner()), 1)),
            (1_000, ModelEvent::ReplicaCrashed { replica: 0, process: ProcessId(1) }),
            (31_000, swept(0, 1)),
        ];
        assert_eq!(feed(&mut LiveLeak::default(), history), Check::Ok);
    }

    #[test]
    fn a_crash_mid_drain_leaves_the_claim_to_the_sweeper() {
        let history = vec![
            (0, granted(0, 1, 7)),
            (0, row(0, WriteKind::Claim, Some(owner()), 1)),
            (900, ModelEvent::ShutdownRequested { replica: 0, process: ProcessId(1), drain_ns: 150_000_000 }),
            (950, ModelEvent::ReplicaCrashed { replica: 0, process: ProcessId(1) }),
            (31_000, swept(0, 1)),
        ];
        assert_eq!(feed(&mut LiveLeak::default(), history), Check::Ok);
    }

    #[test]
    fn a_graceful_stop_that_released_everything_leaves_nothing_to_sweep() {
        let history = vec![
            (0, granted(0, 1, 7)),
            (0, row(0, WriteKind::Claim, Some(owner()), 1)),
            (900, ModelEvent::ShutdownRequested { replica: 0, process: ProcessId(1), drain_ns: 150_000_000 }),
            (990, row(0, WriteKind::Release, None, 1)),
            (1_000, ModelEvent::ReplicaStopped { replica: 0, process: ProcessId(1) }),
            (31_000, swept(0, 1)),
            (31_000, stale_takeover(0, 2)),
        ];
        assert_eq!(feed(&mut LiveLeak::default(), history), Check::Ok);
    }

    fn request_ended(task: u64) -> ModelEvent {
        ModelEvent::AdminRequestEnded {
            process: ProcessId(1),
            task,
            instance: InstanceId(0),
            status: crate::event::AdminStatus::Invalid,
            code: Some(crate::ids::Code::MigrateValidation),
        }
    }

    #[test]
    fn a_migration_that_returned_holding_its_claim_on_a_live_replica_fails_when_swept() {
        let history = vec![
            (0, granted(0, 1, 30)),
            (0, row(0, WriteKind::Claim, Some(owner()), 1)),
            (200, request_ended(30)),
            (31_000, swept(0, 1)),
        ];
        assert!(fails(&feed(&mut LiveLeak::default(), history)));
    }

    #[test]
    fn a_migration_whose_replica_crashed_after_its_request_ended_is_the_sweeper_s() {
        let history = vec![
            (0, granted(0, 1, 30)),
            (0, row(0, WriteKind::Claim, Some(owner()), 1)),
            (200, request_ended(30)),
            (300, ModelEvent::ReplicaCrashed { replica: 0, process: ProcessId(1) }),
            (31_000, swept(0, 1)),
        ];
        assert_eq!(feed(&mut LiveLeak::default(), history), Check::Ok);
    }

    #[test]
    fn a_running_execution_s_claim_swept_is_not_this_checker_s() {
        let history =
            vec![(0, granted(0, 1, 7)), (0, row(0, WriteKind::Claim, Some(owner()), 1)), (31_000, swept(0, 1))];
        assert_eq!(feed(&mut LiveLeak::default(), history), Check::Ok);
    }

    /// Process `p` (from 10) is granted instance `p`'s claim, releases it, and crashes.
    fn a_life_ended(p: u32) -> Vec<(u64, ModelEvent)> {
        let (at, process) = (u64::from(p) * 1_000, ProcessId(p + 10));
        let owner = OwnerId::lane(process, 0);
        let grant = ModelEvent::ClaimGranted {
            instance: InstanceId(p),
            exec: ExecId(p),
            owner,
            process: Some(process),
            path: ResumePath::Relay,
            previous: None,
            stale_age_ns: None,
            epoch: 1,
            task: Some(u64::from(p) + 100),
        };
        vec![
            (at, ModelEvent::ReplicaPaused { replica: 0, process, for_ns: 1_000_000 }),
            (at + 1, ModelEvent::ReplicaResumed { replica: 0, process }),
            (at + 2, grant),
            (at + 2, row(p, WriteKind::Claim, Some(owner), 1)),
            (at + 3, row(p, WriteKind::Release, None, 1)),
            (at + 4, ModelEvent::ReplicaCrashed { replica: 0, process }),
        ]
    }

    #[test]
    fn thousands_of_dead_processes_are_forgotten_and_the_claims_they_left_are_still_judged() {
        let view = crate::checkers::testing::view().with_store_call_latency(Some(Duration::from_millis(100)));
        // Process 1 stops gracefully holding instance 0's claim: a live exit that left it.
        let stopped = ModelEvent::ReplicaStopped { replica: 0, process: ProcessId(1) };
        let mut history = vec![(0, granted(0, 1, 7)), (0, row(0, WriteKind::Claim, Some(owner()), 1)), (1, stopped)];
        history.extend((1..5_000).flat_map(a_life_ended));
        let mut checker = LiveLeak::default();
        assert_eq!(feed_with(&mut checker, history.clone(), &view), Check::Ok);
        assert!(checker.running.entries() <= 4, "{} processes on the books", checker.running.entries());
        assert!(
            checker.ends.len() <= 2 && checker.exited_ns.len() == 1,
            "only process 1 is kept: its grant is on its row"
        );
        // Swept long after: still the leak of a process that stopped gracefully.
        history.push((5_100_000, swept(0, 1)));
        let verdict = feed_with(&mut LiveLeak::default(), history, &view);
        assert!(matches!(&verdict, Check::Fail(m) if m.contains("stopped gracefully")), "{verdict:?}");
        // Crashed instead, right after its execution ended: the sweeper's to clear, however
        // long after (its clock stopped at the crash, and is kept while its grant is).
        let mut history = leaked();
        history.push((1_001, ModelEvent::ReplicaCrashed { replica: 0, process: ProcessId(1) }));
        history.extend((2..5_000).flat_map(a_life_ended));
        history.push((5_100_000, swept(0, 1)));
        assert_eq!(feed_with(&mut LiveLeak::default(), history, &view), Check::Ok);
    }

    #[test]
    fn without_a_declared_store_latency_no_dead_process_is_forgotten() {
        let mut checker = LiveLeak::default();
        assert_eq!(feed(&mut checker, (1..100).flat_map(a_life_ended).collect()), Check::Ok);
        assert!(checker.running.entries() >= 99);
    }
}

//! codes-acted-on (always; R7): the admin surface's callers act on the structured code of
//! each answer — "you lost a race, try again" is tried again, "this will never work" is
//! never sent again (spec 000). Judged from the admin server's witnesses alone: what it
//! received (`AdminRequestReceived`: client, request id, instance, lane) and what it
//! answered (`AdminRequestEnded`: status and code, paired by the handler task). The
//! attempt number a client sends is its own story and is not believed: attempts are
//! counted here.
//!
//! - **A permanent code is final**: once a request (client, request id) was answered with
//!   a permanent code (`SUTRA.ADMIN.MIGRATE.VALIDATION`), any later receipt of the same
//!   request is a violation. An always-judgement: the repeat is wrong the moment it lands.
//! - **CLAIM_HELD is retried**: a request answered `SUTRA.ADMIN.MIGRATE.CLAIM_HELD` is
//!   received again within [`retry_bound`] of the answer, counted in the running time of
//!   the process that answered (the client sends its retry there while it serves, and a
//!   frozen process receives nothing) — unless the instance completed meanwhile (there is
//!   nothing left to migrate), the client's attempt budget (`ADMIN_ATTEMPTS_MAX`) is spent,
//!   or the answering process stopped serving (it crashed, stopped, was asked to shut
//!   down, or its replica was replaced — before or after it answered): where a client
//!   sends next is then its own choice, and no bound here could time it. Also an always-judgement, with a bound: judged
//!   eventually, at the end of the run, every such migration's instance has completed and
//!   would excuse it, and a client that retries an hour later would pass with one that
//!   retries at once.
//!
//! A bug that still passes: a client that sends a permanently refused migration again
//! under a *new* request id (the server cannot tell an operator's new order from a
//! resend), or one that gives up on CLAIM_HELD only when the answering process dies just
//! after answering. A 500 (`SUTRA.ADMIN.MIGRATE.FAILED`) is judged neither way: its
//! outcome is unknown to the caller.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::checkers::running_time::RunningTime;
use crate::dense::DenseMap;
use crate::event::{millis_text, ModelEvent};
use crate::ids::{Code, InstanceId, ProcessId};
use crate::spec::ADMIN_ATTEMPTS_MAX;
use crate::view::ModelView;

/// A request as the server knows it: (client, request id).
type RequestKey = (u32, u32);

/// A CLAIM_HELD answer owed a retry.
#[derive(Clone, Copy, Debug)]
struct Owed {
    instance: InstanceId,
    /// The process that answered.
    process: ProcessId,
    /// When it answered (ns).
    at_ns: u64,
}

/// What the checker has counted from the witnesses.
#[derive(Default)]
pub struct CodesActedOn {
    /// The answering processes' freezes and deaths.
    running: RunningTime,
    /// Handlers received and not yet ended, by (process, task): the request they serve.
    handling: BTreeMap<(ProcessId, u64), (RequestKey, InstanceId)>,
    /// Receipts of each request so far.
    attempts: BTreeMap<RequestKey, u32>,
    /// Requests answered with a permanent code: the code.
    refused_for_good: BTreeMap<RequestKey, Code>,
    /// Requests answered CLAIM_HELD and not received again yet.
    owed: BTreeMap<RequestKey, Owed>,
    /// The replica of each process, as pauses, crashes, shutdowns and restarts name it.
    replica_of: DenseMap<ProcessId, u32>,
    /// Each replica's latest process, where a restart or a replacement was witnessed: an
    /// earlier process of it that still runs is a zombie, no longer its replica's server.
    current: BTreeMap<u32, ProcessId>,
    /// Processes that crashed, stopped or were asked to shut down: they no longer serve,
    /// though a request in flight there may still be answered while the process drains.
    gone: BTreeSet<ProcessId>,
    /// The time of the last event read (ns).
    last_ns: u64,
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "codes-acted-on",
        kind: CheckerKind::Always,
        description: "an admin request answered CLAIM_HELD is sent again within the backoff cap; one answered with a permanent code never is",
        rules: &["R7"],
        factory: Arc::new(|| Box::new(CodesActedOn::default())),
    }
}

/// How long, in the answering process's running time, a retry of a request answered
/// CLAIM_HELD may take to be received: the cap of the runtime's backoff for a refused
/// resume (`timeouts.timer_backoff_max`), the longest a correct client waits between
/// attempts. The retry goes out when that wait ends and lands in the same instant at a
/// process that runs.
pub fn retry_bound(view: &ModelView) -> Duration {
    view.scenario().timeouts.timer_backoff_max
}

impl Checker<ModelEvent, ModelView> for CodesActedOn {
    fn interest(&self) -> u64 {
        use crate::event::tag::*;
        sutra_sim_core::tag_mask(&[
            ADMIN_REQUEST_RECEIVED,
            ADMIN_REQUEST_ENDED,
            INSTANCE_COMPLETED,
            REPLICA_PAUSED,
            REPLICA_RESUMED,
            REPLICA_CRASHED,
            REPLICA_STOPPED,
            REPLICA_RESTARTED,
            SHUTDOWN_REQUESTED,
            // Time passing, so that an unanswered obligation is judged without waiting for
            // the next admin request.
            CLAIM_GRANTED,
            COMMIT_ACCEPTED,
        ])
    }

    fn name(&self) -> &str {
        "codes-acted-on"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, view: &ModelView) -> Check {
        let now = event.time.as_nanos();
        self.last_ns = now;
        self.running.observe(&event.kind, now);
        let overdue = self.overdue(now, view);
        if overdue != Check::Ok {
            return overdue;
        }
        match &event.kind {
            ModelEvent::AdminRequestReceived { process, task, client, request, instance, attempt, .. } => {
                let key = (*client, *request);
                if let Some(code) = self.refused_for_good.get(&key) {
                    return Check::Fail(format!(
                        "request {request} of client {client} (migrate instance {}) was received again at {} (attempt {attempt} by its own count) after the server answered it {}: \"this will never work\" is never sent again (R7)",
                        instance.0,
                        millis_text(now),
                        code.as_str()
                    ));
                }
                self.owed.remove(&key);
                *self.attempts.entry(key).or_insert(0) += 1;
                self.handling.insert((*process, *task), (key, *instance));
            }
            ModelEvent::AdminRequestEnded { process, task, code: Some(code), .. } => {
                if let Some((key, instance)) = self.handling.remove(&(*process, *task)) {
                    self.answered(key, instance, *process, *code, now);
                }
            }
            ModelEvent::AdminRequestEnded { process, task, .. } => {
                self.handling.remove(&(*process, *task));
            }
            ModelEvent::InstanceCompleted { instance } => self.owed.retain(|_, o| o.instance != *instance),
            ModelEvent::ReplicaPaused { replica, process, .. } => {
                self.replica_of.insert(*process, *replica);
            }
            ModelEvent::ReplicaCrashed { replica, process }
            | ModelEvent::ReplicaStopped { replica, process }
            | ModelEvent::ShutdownRequested { replica, process, .. } => {
                self.replica_of.insert(*process, *replica);
                self.gone.insert(*process);
                self.owed.retain(|_, o| o.process != *process);
            }
            ModelEvent::ReplicaRestarted { replica, process } => {
                let replaced = |o: &Owed| o.process != *process && self.replica_of.get(o.process) == Some(replica);
                self.owed.retain(|_, o| !replaced(o));
                self.replica_of.insert(*process, *replica);
                self.current.insert(*replica, *process);
            }
            _ => {}
        }
        Check::Ok
    }

    fn at_end(&mut self, view: &ModelView) -> Check {
        self.overdue(self.last_ns, view)
    }
}

impl CodesActedOn {
    /// Books the answer `code` to request `key`, given by `process` at `now`.
    fn answered(&mut self, key: RequestKey, instance: InstanceId, process: ProcessId, code: Code, now: u64) {
        if code.is_permanent() {
            self.refused_for_good.insert(key, code);
        } else if code.is_retryable_race()
            && self.attempts.get(&key).copied().unwrap_or(0) < ADMIN_ATTEMPTS_MAX
            && !self.replaced(process)
        {
            self.owed.insert(key, Owed { instance, process, at_ns: now });
        }
    }

    /// True if `process` no longer serves: it is going or gone (a drain answers the requests
    /// in flight), or it is no longer its replica's current process — a zombie, replaced
    /// while it was frozen, that answered a request sent before.
    fn replaced(&self, process: ProcessId) -> bool {
        if self.gone.contains(&process) {
            return true;
        }
        let replica = self.replica_of.get(process);
        replica.and_then(|r| self.current.get(r)).is_some_and(|current| *current != process)
    }

    /// A failure if some CLAIM_HELD answer's process ran longer than [`retry_bound`] since
    /// with no retry received.
    fn overdue(&self, now: u64, view: &ModelView) -> Check {
        if self.owed.is_empty() {
            return Check::Ok;
        }
        let bound = u64::try_from(retry_bound(view).as_nanos()).unwrap_or(u64::MAX);
        let late = self.owed.iter().find(|(_, o)| self.running.ran_between(o.process, o.at_ns, now) > bound);
        let Some(((client, request), o)) = late else { return Check::Ok };
        Check::Fail(format!(
            "request {request} of client {client} (migrate instance {}) was answered {} at {} and not sent again while the answering process ran {}, past the backoff cap {}: \"you lost a race, try again\" was given up on (R7)",
            o.instance.0,
            Code::MigrateClaimHeld.as_str(),
            millis_text(o.at_ns),
            millis_text(self.running.ran_between(o.process, o.at_ns, now)),
            millis_text(bound)
        ))
    }
}

#[cfg(test)]
mod tests {
    use sutra_sim_core::Check;

    use super::*;
    use crate::checkers::testing::feed;
    use crate::event::AdminStatus;

    const P: ProcessId = ProcessId(1);
    const I: InstanceId = InstanceId(3);

    fn received(task: u64, request: u32, attempt: u32) -> ModelEvent {
        ModelEvent::AdminRequestReceived { process: P, task, client: 0, request, instance: I, to_lane: 1, attempt }
    }

    fn ended(task: u64, status: AdminStatus, code: Option<Code>) -> ModelEvent {
        ModelEvent::AdminRequestEnded { process: P, task, instance: I, status, code }
    }

    fn conflict(task: u64) -> ModelEvent {
        ended(task, AdminStatus::Conflict, Some(Code::MigrateClaimHeld))
    }

    fn invalid(task: u64) -> ModelEvent {
        ended(task, AdminStatus::Invalid, Some(Code::MigrateValidation))
    }

    fn granted() -> ModelEvent {
        ModelEvent::ClaimGranted {
            instance: InstanceId(0),
            exec: crate::ids::ExecId(0),
            owner: crate::ids::OwnerId(0),
            process: None,
            path: crate::ids::ResumePath::Relay,
            previous: None,
            stale_age_ns: None,
            epoch: 1,
            task: None,
        }
    }

    /// The smoke scenario's backoff cap, in ms.
    const CAP_MS: u64 = 5_000;

    fn run(events: Vec<(u64, ModelEvent)>) -> Check {
        feed(&mut CodesActedOn::default(), events)
    }

    #[test]
    fn a_request_sent_again_after_a_validation_error_is_flagged() {
        let verdict = run(vec![(1, received(10, 7, 1)), (2, invalid(10)), (100, received(11, 7, 2))]);
        assert!(matches!(&verdict, Check::Fail(m) if m.contains("VALIDATION")), "{verdict:?}");
    }

    #[test]
    fn a_new_request_for_the_same_instance_after_a_validation_error_passes() {
        let verdict = run(vec![(1, received(10, 7, 1)), (2, invalid(10)), (100, received(11, 8, 1))]);
        assert_eq!(verdict, Check::Ok);
    }

    #[test]
    fn a_claim_held_answer_never_retried_is_flagged_once_the_backoff_cap_passed() {
        let verdict = run(vec![(1, received(10, 7, 1)), (2, conflict(10)), (2 + CAP_MS + 1, granted())]);
        assert!(matches!(&verdict, Check::Fail(m) if m.contains("CLAIM_HELD")), "{verdict:?}");
        let verdict = run(vec![(1, received(10, 7, 1)), (2, conflict(10))]);
        assert_eq!(verdict, Check::Ok, "not yet due at the end");
    }

    #[test]
    fn a_claim_held_answer_retried_within_the_cap_passes_and_the_retry_counts_not_the_attempt_header() {
        let verdict = run(vec![
            (1, received(10, 7, 1)),
            (2, conflict(10)),
            (2 + CAP_MS, received(11, 7, 1)),
            (2 + CAP_MS + 1, ended(11, AdminStatus::Migrated, None)),
            (3 * CAP_MS, granted()),
        ]);
        assert_eq!(verdict, Check::Ok);
    }

    #[test]
    fn a_retry_late_in_running_time_is_flagged_and_a_freeze_does_not_count() {
        let late = run(vec![(1, received(10, 7, 1)), (2, conflict(10)), (2 + CAP_MS + 1, received(11, 7, 2))]);
        assert!(matches!(late, Check::Fail(_)), "{late:?}");
        let paused = ModelEvent::ReplicaPaused { replica: 0, process: P, for_ns: 0 };
        let resumed = ModelEvent::ReplicaResumed { replica: 0, process: P };
        let verdict = run(vec![
            (1, received(10, 7, 1)),
            (2, conflict(10)),
            (3, paused),
            (3 + 2 * CAP_MS, resumed),
            (4 + 2 * CAP_MS, received(11, 7, 2)),
        ]);
        assert_eq!(verdict, Check::Ok);
    }

    #[test]
    fn completion_a_spent_budget_or_a_dead_answerer_excuse_a_missing_retry() {
        let later = 10 * CAP_MS;
        let completed = ModelEvent::InstanceCompleted { instance: I };
        let verdict = run(vec![(1, received(10, 7, 1)), (2, conflict(10)), (3, completed), (later, granted())]);
        assert_eq!(verdict, Check::Ok);
        let crashed = ModelEvent::ReplicaCrashed { replica: 0, process: P };
        let verdict = run(vec![(1, received(10, 7, 1)), (2, conflict(10)), (3, crashed), (later, granted())]);
        assert_eq!(verdict, Check::Ok);
        let mut spent = Vec::new();
        for attempt in 1..=ADMIN_ATTEMPTS_MAX {
            let task = u64::from(attempt) + 10;
            spent.push((u64::from(attempt) * 10, received(task, 7, attempt)));
            spent.push((u64::from(attempt) * 10 + 1, conflict(task)));
        }
        spent.push((later, granted()));
        assert_eq!(run(spent), Check::Ok);
    }

    #[test]
    fn a_claim_held_from_a_replaced_process_owes_nothing_to_it() {
        let paused = ModelEvent::ReplicaPaused { replica: 0, process: P, for_ns: 0 };
        let replacement = ModelEvent::ReplicaRestarted { replica: 0, process: ProcessId(2) };
        let resumed = ModelEvent::ReplicaResumed { replica: 0, process: P };
        let verdict = run(vec![
            (1, paused),
            (2, replacement),
            (3, resumed),
            (4, received(10, 7, 1)),
            (5, conflict(10)),
            (10 * CAP_MS, granted()),
        ]);
        assert_eq!(verdict, Check::Ok);
    }

    #[test]
    fn a_claim_held_answered_while_draining_owes_nothing_to_the_draining_process() {
        let shutdown = ModelEvent::ShutdownRequested { replica: 0, process: P, drain_ns: 0 };
        let verdict = run(vec![(1, received(10, 7, 1)), (2, shutdown), (3, conflict(10)), (10 * CAP_MS, granted())]);
        assert_eq!(verdict, Check::Ok);
    }

    #[test]
    fn a_completion_after_the_retry_was_due_excuses_nothing() {
        let completed = ModelEvent::InstanceCompleted { instance: I };
        let verdict = run(vec![(1, received(10, 7, 1)), (2, conflict(10)), (3 + CAP_MS, completed)]);
        assert!(matches!(verdict, Check::Fail(_)), "{verdict:?}");
    }
}

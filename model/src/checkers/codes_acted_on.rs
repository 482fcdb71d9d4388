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
//! **What it forgets.** A process witnessed crashed, stopped or asked to shut down no longer
//! serves: no CLAIM_HELD it answers is owed a retry (and what it owed is dropped then, as
//! before), so its freezes, death and replica — kept only to time and excuse what it owes —
//! are forgotten, and it stays known as gone as a bit (process ids come from a counter). A
//! crashed or stopped process runs nothing again, so its handlers that never ended are
//! dropped. What must be kept for the whole history — a request's receipts (a late resend
//! answered CLAIM_HELD is owed a retry only within the budget) and its refusal for good (a
//! late resend is flagged) — is kept as a byte a request in a row per client, not a tree
//! entry. No verdict changes; memory follows the clients, not the processes or requests.
//!
//! A bug that still passes: a client that sends a permanently refused migration again
//! under a *new* request id (the server cannot tell an operator's new order from a
//! resend), or one that gives up on CLAIM_HELD only when the answering process dies just
//! after answering. A 500 (`SUTRA.ADMIN.MIGRATE.FAILED`) is judged neither way: its
//! outcome is unknown to the caller.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::checkers::running_time::RunningTime;
use crate::dense::DenseMap;
use crate::event::{millis_text, ModelEvent};
use crate::id_bits::IdBits;
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
    /// Receipts of each request so far, and the requests answered with a permanent code.
    requests: Requests,
    /// Requests answered CLAIM_HELD and not received again yet.
    owed: BTreeMap<RequestKey, Owed>,
    /// The replica of each process, as pauses, crashes, shutdowns and restarts name it.
    replica_of: DenseMap<ProcessId, u32>,
    /// Each replica's latest process, where a restart or a replacement was witnessed: an
    /// earlier process of it that still runs is a zombie, no longer its replica's server.
    current: BTreeMap<u32, ProcessId>,
    /// Processes that crashed, stopped or were asked to shut down: they no longer serve,
    /// though a request in flight there may still be answered while the process drains.
    /// Kept for the whole history, as bits: process ids come from a counter.
    gone: IdBits,
    /// The time of the last event read (ns).
    last_ns: u64,
}

/// What each request has come to: its receipts, counted up to the attempt budget (no more
/// is ever asked), and whether it was answered with a permanent code — a byte a request, in a
/// row per client indexed by request id (a client numbers its requests from a counter).
#[derive(Default)]
struct Requests {
    /// Client → a byte per request id from 0 (see [`Requests::byte`]).
    by_client: BTreeMap<u32, Vec<u8>>,
    /// Requests whose id lies far past the rest of its client's row (not from a counter).
    strays: BTreeMap<RequestKey, u8>,
    /// The permanent codes answered, in the order first seen: a byte names one by place.
    codes: Vec<Code>,
}

/// A request's byte: this bit set if it was refused for good, with the code's place in the
/// bits above [`CODE_SHIFT`]; its receipts in the bits below.
const REFUSED: u8 = 0x80;
const CODE_SHIFT: u32 = 4;
const RECEIPTS: u8 = (1 << CODE_SHIFT) - 1;
/// A request id this far past its client's row is kept apart, so a row never grows for one.
const STRAY_GAP: usize = 4_096;

impl Requests {
    fn byte(&self, (client, request): RequestKey) -> u8 {
        let row = self.by_client.get(&client);
        let in_row = row.and_then(|row| row.get(request as usize)).copied();
        in_row.or_else(|| self.strays.get(&(client, request)).copied()).unwrap_or(0)
    }

    fn set(&mut self, (client, request): RequestKey, byte: u8) {
        let row = self.by_client.entry(client).or_default();
        let at = request as usize;
        if at < row.len() + STRAY_GAP && !self.strays.contains_key(&(client, request)) {
            if row.len() <= at {
                row.resize(at + 1, 0);
            }
            row[at] = byte;
        } else {
            self.strays.insert((client, request), byte);
        }
    }

    /// Receipts of `key` so far (at most the attempt budget).
    fn receipts(&self, key: RequestKey) -> u32 {
        u32::from(self.byte(key) & RECEIPTS)
    }

    /// Counts a receipt of `key`.
    fn received(&mut self, key: RequestKey) {
        let byte = self.byte(key);
        let budget = u8::try_from(ADMIN_ATTEMPTS_MAX).expect("a small budget").min(RECEIPTS);
        self.set(key, (byte & !RECEIPTS) | ((byte & RECEIPTS) + 1).min(budget));
    }

    /// The permanent code `key` was answered with, if it was.
    fn refused(&self, key: RequestKey) -> Option<Code> {
        let byte = self.byte(key);
        (byte & REFUSED != 0).then(|| self.codes[usize::from((byte & !REFUSED) >> CODE_SHIFT)])
    }

    /// Notes that `key` was answered with the permanent `code`.
    fn refuse(&mut self, key: RequestKey, code: Code) {
        let place = self.codes.iter().position(|c| *c == code).unwrap_or_else(|| {
            self.codes.push(code);
            self.codes.len() - 1
        });
        let place = u8::try_from(place).ok().filter(|p| *p < REFUSED >> CODE_SHIFT).expect("few permanent codes");
        let byte = self.byte(key);
        self.set(key, REFUSED | (place << CODE_SHIFT) | (byte & RECEIPTS));
    }

    /// Rows and strays held.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.by_client.len() + self.strays.len()
    }
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

/// The process a replica's witness names: its freezes, death, shutdown or start.
fn replica_process(kind: &ModelEvent) -> Option<ProcessId> {
    match kind {
        ModelEvent::ReplicaPaused { process, .. }
        | ModelEvent::ReplicaResumed { process, .. }
        | ModelEvent::ReplicaCrashed { process, .. }
        | ModelEvent::ReplicaStopped { process, .. }
        | ModelEvent::ShutdownRequested { process, .. }
        | ModelEvent::ReplicaRestarted { process, .. } => Some(*process),
        _ => None,
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
        let verdict = self.judge(event, view);
        if let Some(process) = replica_process(&event.kind).filter(|p| self.is_gone(*p)) {
            self.running.forget(process);
            self.replica_of.remove(process);
        }
        verdict
    }

    fn at_end(&mut self, view: &ModelView) -> Check {
        self.overdue(self.last_ns, view)
    }
}

impl CodesActedOn {
    /// The verdict on `event`, with the books brought up to date.
    fn judge(&mut self, event: &Event<ModelEvent>, view: &ModelView) -> Check {
        let now = event.time.as_nanos();
        let overdue = self.overdue(now, view);
        if overdue != Check::Ok {
            return overdue;
        }
        match &event.kind {
            ModelEvent::AdminRequestReceived { process, task, client, request, instance, attempt, .. } => {
                let key = (*client, *request);
                if let Some(code) = self.requests.refused(key) {
                    return Check::Fail(format!(
                        "request {request} of client {client} (migrate instance {}) was received again at {} (attempt {attempt} by its own count) after the server answered it {}: \"this will never work\" is never sent again (R7)",
                        instance.0,
                        millis_text(now),
                        code.as_str()
                    ));
                }
                self.owed.remove(&key);
                self.requests.received(key);
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
            ModelEvent::ReplicaPaused { replica, process, .. } if !self.is_gone(*process) => {
                self.replica_of.insert(*process, *replica);
            }
            ModelEvent::ReplicaCrashed { process, .. } | ModelEvent::ReplicaStopped { process, .. } => {
                self.gone.insert(u64::from(process.0));
                self.owed.retain(|_, o| o.process != *process);
                // Nothing of it runs again: its handlers never end.
                self.handling.retain(|&(p, _), _| p != *process);
            }
            ModelEvent::ShutdownRequested { process, .. } => {
                self.gone.insert(u64::from(process.0));
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

    /// True if `process` crashed, stopped or was asked to shut down.
    fn is_gone(&self, process: ProcessId) -> bool {
        self.gone.contains(u64::from(process.0))
    }

    /// Entries and words the books hold (for tests: what must not grow with the history).
    #[cfg(test)]
    fn books(&self) -> usize {
        self.handling.len()
            + self.requests.held()
            + self.owed.len()
            + self.replica_of.len()
            + self.current.len()
            + self.gone.words()
            + self.running.entries()
    }

    /// Books the answer `code` to request `key`, given by `process` at `now`.
    fn answered(&mut self, key: RequestKey, instance: InstanceId, process: ProcessId, code: Code, now: u64) {
        if code.is_permanent() {
            self.requests.refuse(key, code);
        } else if code.is_retryable_race()
            && self.requests.receipts(key) < ADMIN_ATTEMPTS_MAX
            && !self.replaced(process)
        {
            self.owed.insert(key, Owed { instance, process, at_ns: now });
        }
    }

    /// True if `process` no longer serves: it is going or gone (a drain answers the requests
    /// in flight), or it is no longer its replica's current process — a zombie, replaced
    /// while it was frozen, that answered a request sent before.
    fn replaced(&self, process: ProcessId) -> bool {
        if self.is_gone(process) {
            return true;
        }
        let replica = self.replica_of.get(process);
        replica.and_then(|r| self.current.get(r)).is_some_and(|current| *current != process)
    }

    /// A failure if some CLAIM_HELD answer's process ran longer than [`retry_bound`] since
    /// with no retry received. Inline for the common case, nothing owed: this runs on every
    /// event.
    #[inline]
    fn overdue(&self, now: u64, view: &ModelView) -> Check {
        if self.owed.is_empty() {
            return Check::Ok;
        }
        self.overdue_owed(now, view)
    }

    /// [`Self::overdue`], with something owed.
    fn overdue_owed(&self, now: u64, view: &ModelView) -> Check {
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

    fn received_by(process: ProcessId, task: u64, client: u32, request: u32) -> ModelEvent {
        ModelEvent::AdminRequestReceived { process, task, client, request, instance: I, to_lane: 1, attempt: 1 }
    }

    fn ended_by(process: ProcessId, task: u64, status: AdminStatus, code: Option<Code>) -> ModelEvent {
        ModelEvent::AdminRequestEnded { process, task, instance: I, status, code }
    }

    /// `runs` runs of one process each (a fresh replica process, as a restart makes), the
    /// operator (client 0) numbering its requests on: a request answered CLAIM_HELD and
    /// retried to success, one refused for good, one whose handler the crash cut short, a
    /// freeze, and the crash that ends the process.
    fn many_runs(runs: u32) -> Vec<(u64, ModelEvent)> {
        let mut history = Vec::new();
        for run in 0..runs {
            let (process, t, client, first) = (ProcessId(run + 10), u64::from(run) * 100, 0, run * 3);
            let replica = run % 3;
            let task = u64::from(run) * 10;
            history.push((t + 1, ModelEvent::ReplicaRestarted { replica, process }));
            history.push((t + 2, received_by(process, task, client, first)));
            history.push((t + 3, ended_by(process, task, AdminStatus::Conflict, Some(Code::MigrateClaimHeld))));
            history.push((t + 4, received_by(process, task + 1, client, first)));
            history.push((t + 5, ended_by(process, task + 1, AdminStatus::Migrated, None)));
            history.push((t + 6, received_by(process, task + 2, client, first + 1)));
            let refused = ended_by(process, task + 2, AdminStatus::Invalid, Some(Code::MigrateValidation));
            history.push((t + 7, refused));
            history.push((t + 8, ModelEvent::ReplicaPaused { replica, process, for_ns: 0 }));
            history.push((t + 9, ModelEvent::ReplicaResumed { replica, process }));
            history.push((t + 10, received_by(process, task + 3, client, first + 2)));
            history.push((t + 11, ModelEvent::ReplicaCrashed { replica, process }));
        }
        history
    }

    #[test]
    fn a_long_history_of_dead_processes_and_answered_requests_leaves_small_books() {
        let runs = 4_000;
        let mut checker = CodesActedOn::default();
        assert_eq!(feed(&mut checker, many_runs(runs)), Check::Ok);
        let held = checker.books();
        assert!(held <= runs as usize / 16, "{held} entries and words held after {runs} runs");
    }

    #[test]
    fn a_late_duplicate_of_a_request_refused_for_good_long_ago_is_still_flagged() {
        let mut history = many_runs(2_000);
        let late = 1_000_000;
        history.push((late, ModelEvent::ReplicaRestarted { replica: 0, process: ProcessId(1) }));
        history.push((late + 1, received_by(ProcessId(1), 1, 0, 7 * 3 + 1)));
        let verdict = feed(&mut CodesActedOn::default(), history);
        assert!(
            matches!(&verdict, Check::Fail(m) if m.contains("VALIDATION") && m.contains("request 22 of client 0")),
            "{verdict:?}"
        );
    }

    #[test]
    fn after_thousands_of_dead_processes_a_live_one_still_owes_its_retry_and_a_spent_budget_stays_spent() {
        let live = ProcessId(1);
        let late = 1_000_000;
        let mut history = many_runs(2_000);
        history.push((late, ModelEvent::ReplicaRestarted { replica: 0, process: live }));
        history.push((late + 1, received_by(live, 1, 0, 1_000_000)));
        history.push((late + 2, ended_by(live, 1, AdminStatus::Conflict, Some(Code::MigrateClaimHeld))));
        history.push((late + 3 + CAP_MS, granted()));
        let verdict = feed(&mut CodesActedOn::default(), history);
        assert!(matches!(&verdict, Check::Fail(m) if m.contains("CLAIM_HELD")), "{verdict:?}");

        let mut history = Vec::new();
        for attempt in 1..=ADMIN_ATTEMPTS_MAX {
            let task = u64::from(attempt);
            history.push((u64::from(attempt) * 10, received_by(P, task, 9, 5)));
            history.push((
                u64::from(attempt) * 10 + 1,
                ended_by(P, task, AdminStatus::Conflict, Some(Code::MigrateClaimHeld)),
            ));
        }
        history.extend(many_runs(2_000).into_iter().map(|(t, e)| (t + 1_000, e)));
        history.push((late, received_by(P, 100, 9, 5)));
        history.push((late + 1, ended_by(P, 100, AdminStatus::Conflict, Some(Code::MigrateClaimHeld))));
        history.push((late + 2 + CAP_MS, granted()));
        assert_eq!(feed(&mut CodesActedOn::default(), history), Check::Ok, "the budget was spent long ago");
    }
}

//! refusal-contract (always; R3–R6): what happens after the store refuses a claim, judged
//! only from what the store, the broker and the executor witness — never from the
//! runtime's own account of its reaction.
//!
//! - **R3, no retry in place**: an execution the store refused never asks for the claim
//!   again (the store records the execution each request names).
//! - **R3 and R4, a refusal that gives its delivery back at once**: a refused relay
//!   (relay or pull-completion path) names the broker delivery it was claimed for
//!   (`ClaimRefused.delivery`), and that very copy is requeued by the broker — or taken
//!   back from its consumer (it died or froze) — within [`requeue_bound`] of the refusal,
//!   counted in the time the refusing process *ran* (a frozen or dead process runs
//!   nothing). Waiting before the requeue ("backoff" in the lane) holds the delivery's
//!   prefetch slot and the lane; acking or dead-lettering it instead drops a relay that
//!   only lost a race (R7: `CLAIM_HELD` is "try again"); and the refusing lane task sending its next store request while the copy
//!   is still unsettled is a lane that moved on holding it. A refusal is judged by its
//!   own delivery alone: a takeback of another copy of the same relay excuses nothing, and
//!   the judgement waits for no later request of the refusing task. A history without
//!   delivery ids falls back to pairing by task (the refusing task's next store request
//!   must come after some requeue or takeback of the instance). A requeued message is not
//!   redelivered before the requeue delay the broker recorded: a refusal is no busy loop.
//! - **R5, deferral with backoff**: a refused timer fire moves the timer row's due time
//!   (the store's `TimerDeferred`, paired with the refusal by the task that sent both). The
//!   deferral after the row's k-th refusal — k counted here from the witnesses — is at
//!   least the spec's capped exponential backoff `min(base · 2^(k-1), max)` and at most the
//!   cap plus the jitter the model may add (bounded by `base`), both from the scenario.
//! - **R6, 409 touching nothing**: a refused migration's execution is never seen by the
//!   store again: no read, write, release or migration commit.
//!
//! A refusal whose reply the environment lost (`CallStruck`, a lost reply of a claim) never
//! reached the lane: it is no refusal the lane could react to, and its claim is sent again.
//!
//! R7 on the relay path is judged by behaviour, not by the code written: a refused delivery
//! (CLAIM_HELD, "try again") that the broker then sees dead-lettered or acked fails above,
//! whatever reason header it carries. R7 on the admin path — the caller acting on the 409's
//! code — is `codes-acted-on`'s.
//!
//! **What it keeps, and for how long.** A refusal may name a delivery settled long before
//! (a frozen lane waking), so the deliveries settled and acked are kept for the whole
//! history, as bits ([`IdBits`]: a broker numbers its deliveries from a counter, so one
//! costs about a bit); so are the aborted tasks. A message's outstanding requeues and
//! takebacks are kept until its redelivery answers them, in a tree, so that one never
//! redelivered (the history ended first) costs its own entry and not a slot for every
//! message after it. Per instance (the last settle and takeback times, the timer row's
//! refusal count) in pages of fixed size ([`PagedMap`]: 8 bytes an instance for a time,
//! about a byte for records alike). The executions the store refused are kept for the whole
//! history too (R3 and R6 hold forever), as bits: executions are numbered from a counter.
//! The running time of a process (its freezes and death) is forgotten once the process
//! ended (crashed) and the store call latency the history declares has passed
//! ([`ProcessEnds`]): no refusal naming it can land any more, so only a refused delivery
//! of its that still waits for its requeue could ask — and while one does, the process is
//! kept. No verdict changes: nothing forgotten is ever asked about. Without the
//! declaration (and in a simulation) it is kept, as before.
//!
//! A bug that would still pass: a refused relay requeued by the lane but *also* executed
//! under a second claim attempt by a fresh execution id in the same task — the store sees a
//! new execution, not a retry in place (no-double-resume judges the double run, if any).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::checkers::process_ends::ProcessEnds;
use crate::checkers::running_time::RunningTime;
use crate::event::{millis_text, ModelEvent};
use crate::id_bits::IdBits;
use crate::ids::{ExecId, InstanceId, MessageId, ProcessId, ResumePath};
use crate::paged::PagedMap;
use crate::sorted_vec::SortedVecMap;
use crate::view::ModelView;

/// A refused relay waiting for the broker's requeue.
#[derive(Clone, Copy, Debug)]
struct PendingRequeue {
    instance: InstanceId,
    /// When the refusal happened (ns).
    at_ns: u64,
    /// When the broker last settled a delivery of the instance (ack or requeue) before the
    /// refusal: the refused delivery came after it, so a takeback since then may be it.
    since_ns: u64,
}

/// A refused delivery the broker has not yet requeued or taken back.
#[derive(Clone, Copy, Debug)]
struct RefusedDelivery {
    instance: InstanceId,
    exec: ExecId,
    /// The process and task that asked for the claim.
    process: Option<ProcessId>,
    task: Option<u64>,
    /// When the store refused (ns).
    at_ns: u64,
    /// The running time of the process the requeue may take after the refusal (ns):
    /// [`requeue_bound`], plus every latency spike witnessed on the refusing task since.
    allowance_ns: u64,
}

/// What the checker has counted from the witnesses.
#[derive(Default)]
pub struct RefusalContract {
    /// Refused deliveries not yet requeued or taken back, by delivery id (a sorted vector:
    /// few wait at once, and a tree allocated and freed its root for nearly every one).
    refused_deliveries: SortedVecMap<u32, RefusedDelivery>,
    /// Deliveries the broker has acked, requeued or taken back: a refusal naming one of
    /// them (a frozen process's lane waking to a copy taken back meanwhile) owes nothing.
    settled_deliveries: IdBits,
    /// Deliveries their consumer acked: one whose claim is refused afterwards was given up
    /// before the step it carries was done (R4).
    acked_deliveries: IdBits,
    /// The processes' freezes and deaths (a requeue is owed in running time).
    running: RunningTime,
    /// Tasks the executor witnessed aborted: a refusal naming one landed after its sender
    /// was gone (a request on the wire outlives its sender), and only the lane's exit path
    /// can give the delivery back.
    aborted: IdBits,
    /// Executions the store refused.
    refused: IdBits,
    /// Of those, the refused migrations (R6).
    refused_migrations: IdBits,
    /// Processes ended whose last requests have landed: their running time is forgotten.
    ends: ProcessEnds,
    /// Refused relays not yet requeued, by the task that sent the refused claim.
    requeue_pending: BTreeMap<Option<u64>, PendingRequeue>,
    /// Last time the broker took a delivery of the instance back from its consumer (ns).
    reclaimed_ns: PagedMap<InstanceId, u64>,
    /// First time the broker took a delivery of the instance back (ns).
    first_reclaimed_ns: PagedMap<InstanceId, u64>,
    /// Last time the broker acked or requeued a delivery of the instance (ns).
    settled_ns: PagedMap<InstanceId, u64>,
    /// Per message: the earliest redelivery times (ns) of its outstanding requeues.
    requeued_until: BTreeMap<MessageId, Vec<u64>>,
    /// Per message: takebacks from a consumer not yet redelivered (no delay applies).
    takebacks: BTreeMap<MessageId, u32>,
    /// Refused timer fires waiting for their deferral, by task: the instance.
    deferral_pending: BTreeMap<Option<u64>, InstanceId>,
    /// Refusal-deferrals applied to each instance's current timer row.
    row_refusals: PagedMap<InstanceId, u32>,
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "refusal-contract",
        kind: CheckerKind::Always,
        description: "refusals are requeued (no earlier than the delay), deferred by capped exponential backoff, or touch nothing; nobody retries in place",
        rules: &["R3", "R4", "R5", "R6", "R7"],
        factory: Arc::new(|| Box::new(RefusalContract::default())),
    }
}

impl Checker<ModelEvent, ModelView> for RefusalContract {
    fn interest(&self) -> u64 {
        use crate::event::tag::*;
        sutra_sim_core::tag_mask(&[
            CLAIM_GRANTED,
            CLAIM_REFUSED,
            STORE_READ,
            COMMIT_ACCEPTED,
            COMMIT_REJECTED,
            ROW_WRITTEN,
            RELEASED,
            MIGRATION_COMMITTED,
            RELAY_ACKED,
            RELAY_REQUEUED,
            RELAY_RECLAIMED,
            RELAY_DEAD_LETTERED,
            RELAY_DELIVERED,
            TIMER_SCHEDULED,
            TIMER_DEFERRED,
            CALL_STRUCK,
            // Time passing, and what stops a process from running or extends its exit path.
            FAULT_INJECTED,
            TASK_ABORTED,
            REPLICA_PAUSED,
            REPLICA_RESUMED,
            REPLICA_CRASHED,
            LEASE_ACQUIRED,
            SWEEP_SELECTED,
            SWEPT,
        ])
    }

    fn name(&self) -> &str {
        "refusal-contract"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, view: &ModelView) -> Check {
        let now = event.time.as_nanos();
        self.running.observe(&event.kind, now);
        self.ends.observe(&event.kind, now, view);
        self.forget_settled_processes();
        let verdict = self.judge_deliveries(&event.kind, now, view);
        if verdict != Check::Ok {
            return verdict;
        }
        // A store request from a task whose refused relay is still not requeued: the lane
        // moved on without giving the relay back (R4).
        if let Some(task) = store_request_task(&event.kind) {
            // A refused fire's deferral is the refusing task's next store request. If the
            // task sends another request first, the deferral matched no row (a commit
            // consumed the row meanwhile, and the store witnesses nothing): the refusal is
            // answered, and must not be paired with a later deferral of that task.
            // (Most requests find it empty: skip the call into the tree then.)
            if !self.deferral_pending.is_empty() {
                self.deferral_pending.remove(&task);
            }
            if let Some(p) = self.requeue_pending.get(&task).copied() {
                // Lenient: a paused consumer's delivery can be taken back long before its claim is
                // refused, and neither witness names the delivery; any takeback of the
                // instance since the refused delivery may have been it.
                let taken_back = self
                    .reclaimed_ns
                    .get(p.instance)
                    .is_some_and(|&t| t >= p.since_ns.min(self.first_reclaim(p.instance)));
                self.requeue_pending.remove(&task);
                if !taken_back {
                    return Check::Fail(format!(
                        "the relay of instance {} refused at {} was never requeued by the broker before its lane sent its next request (R4)",
                        p.instance.0,
                        millis_text(p.at_ns)
                    ));
                }
            }
        }
        match &event.kind {
            ModelEvent::CallStruck {
                exec,
                instance,
                call: crate::event::StoreCall::Claim,
                fault: crate::event::CallFault::ReplyLost,
                task,
            } => {
                // The refusal (if that is what the store answered) never reached the lane.
                self.refused_migrations.remove(u64::from(exec.0));
                if self.refused.remove(u64::from(exec.0)) {
                    self.refused_deliveries.retain(|_, r| r.exec != *exec);
                    self.requeue_pending.retain(|t, p| !(t == task && p.instance == *instance));
                    if self.deferral_pending.get(task) == Some(instance) {
                        self.deferral_pending.remove(task);
                    }
                }
            }
            ModelEvent::ClaimGranted { exec, instance, .. } | ModelEvent::ClaimRefused { exec, instance, .. }
                if self.refused.contains(u64::from(exec.0)) =>
            {
                return Check::Fail(format!(
                    "execution {} asked for the claim on instance {} again after the store refused it: it waited on a held claim (R3)",
                    exec.0, instance.0
                ));
            }
            ModelEvent::ClaimRefused { exec, instance, path, task, delivery, process, .. } => {
                self.refused.insert(u64::from(exec.0));
                if *path == ResumePath::Migration {
                    self.refused_migrations.insert(u64::from(exec.0));
                }
                match path {
                    ResumePath::Relay | ResumePath::PullCompletion if delivery.is_some() => {
                        let d = delivery.unwrap_or_default();
                        if self.acked_deliveries.contains(u64::from(d)) {
                            return Check::Fail(format!(
                                "execution {} was refused the claim on instance {} for delivery {d}, which its consumer had already acked: the relay is gone though its step was never done (R4)",
                                exec.0, instance.0
                            ));
                        }
                        if self.settled_deliveries.contains(u64::from(d)) {
                            return Check::Ok;
                        }
                        let mut allowance_ns = nanos(requeue_bound(view));
                        if task.is_some_and(|t| self.aborted.contains(t)) {
                            // Nobody heard it: the exit path that started at the abort requeues.
                            let exit = nanos(crate::checkers::live_leak::exit_path_bound(view));
                            allowance_ns = allowance_ns.max(exit);
                        }
                        let refused = RefusedDelivery {
                            instance: *instance,
                            exec: *exec,
                            process: *process,
                            task: *task,
                            at_ns: now,
                            allowance_ns,
                        };
                        self.refused_deliveries.insert(d, refused);
                    }
                    ResumePath::Relay | ResumePath::PullCompletion => {
                        let since_ns = self.settled_ns.get(*instance).copied().unwrap_or(0);
                        self.requeue_pending
                            .insert(*task, PendingRequeue { instance: *instance, at_ns: now, since_ns });
                    }
                    ResumePath::Timer => {
                        self.deferral_pending.insert(*task, *instance);
                    }
                    ResumePath::Migration => {}
                }
            }
            ModelEvent::RelayAcked { instance, .. } => {
                self.settled_ns.insert(*instance, now);
            }
            ModelEvent::RelayRequeued { instance, message, delay_ns, .. } => {
                self.settled_ns.insert(*instance, now);
                // The requeue does not name the task that asked for it: it answers every
                // refusal of the instance still waiting (lenient where a witness is missing).
                self.requeue_pending.retain(|_, p| p.instance != *instance);
                self.requeued_until.entry(*message).or_default().push(now.saturating_add(*delay_ns));
            }
            ModelEvent::RelayReclaimed { instance, message, .. } => {
                self.reclaimed_ns.insert(*instance, now);
                self.first_reclaimed_ns.get_or_insert_with(*instance, || now);
                *self.takebacks.entry(*message).or_default() += 1;
            }
            ModelEvent::RelayDelivered { instance, message, redelivery: true, duplicate: false, .. } => {
                let ready = self.requeued_until.get_mut(message).and_then(|dues| {
                    let i =
                        dues.iter().enumerate().filter(|(_, d)| **d <= now).min_by_key(|(_, d)| **d).map(|(i, _)| i);
                    i.map(|i| dues.swap_remove(i))
                });
                // A message with no requeue or takeback outstanding is forgotten (an absent
                // entry reads as an empty one), so the map holds the messages in flight.
                if self.requeued_until.get(message).is_some_and(Vec::is_empty) {
                    self.requeued_until.remove(message);
                }
                if ready.is_none() {
                    match self.takebacks.get_mut(message) {
                        Some(n) if *n > 1 => *n -= 1,
                        Some(n) if *n == 1 => {
                            self.takebacks.remove(message);
                        }
                        _ => {
                            if let Some(&due) = self.requeued_until.get(message).and_then(|d| d.iter().min()) {
                                return Check::Fail(format!(
                                    "relay m{} of instance {} was redelivered at {}, before its requeue delay ran out at {}: a busy loop (R4)",
                                    message.0,
                                    instance.0,
                                    millis_text(now),
                                    millis_text(due)
                                ));
                            }
                        }
                    }
                }
            }
            ModelEvent::TimerScheduled { instance, .. } => {
                self.row_refusals.insert(*instance, 0);
            }
            ModelEvent::TimerDeferred { instance, expects, due_ns, task, .. } => {
                let t = &view.scenario().timeouts;
                let delay = due_ns.saturating_sub(now);
                let most = nanos(t.timer_backoff_max).saturating_add(nanos(t.timer_backoff_base));
                if delay > most {
                    return Check::Fail(format!(
                        "the timer of instance {} (step {}) was deferred by {}, above the cap {} plus its jitter bound {} (R5)",
                        instance.0,
                        expects + 1,
                        millis_text(delay),
                        millis_text(nanos(t.timer_backoff_max)),
                        millis_text(nanos(t.timer_backoff_base))
                    ));
                }
                if self.deferral_pending.get(task) == Some(instance) {
                    self.deferral_pending.remove(task);
                    let k = self.row_refusals.get_or_insert_with(*instance, || 0);
                    *k += 1;
                    let least = nanos(least_backoff(t.timer_backoff_base, t.timer_backoff_max, *k));
                    if delay < least {
                        return Check::Fail(format!(
                            "the timer of instance {} (step {}) refused {k} time(s) was deferred by {}, below the backoff {} (R5)",
                            instance.0,
                            expects + 1,
                            millis_text(delay),
                            millis_text(least)
                        ));
                    }
                }
            }
            other => {
                // R6: a refused migration touches nothing afterwards.
                if let Some(exec) = other.exec() {
                    if self.refused_migrations.contains(u64::from(exec.0)) && touches_the_row(other) {
                        return Check::Fail(format!(
                            "migration {} was refused and then {} instance {}: a 409 must have read and written nothing (R6)",
                            exec.0,
                            sutra_sim_core::EventKind::name(other),
                            sutra_sim_core::EventKind::instance(other).unwrap_or_default()
                        ));
                    }
                }
                if let ModelEvent::MigrationCommitted { exec, instance, .. } = other {
                    if self.refused_migrations.contains(u64::from(exec.0)) {
                        return Check::Fail(format!(
                            "migration {} was refused and then committed on instance {} (R6)",
                            exec.0, instance.0
                        ));
                    }
                }
            }
        }
        Check::Ok
    }
}

impl RefusalContract {
    /// Judges the refused deliveries still owed a requeue at `now`, and settles them with
    /// what the broker, the executor and the environment witness in `kind`.
    fn judge_deliveries(&mut self, kind: &ModelEvent, now: u64, view: &ModelView) -> Check {
        if let ModelEvent::RelayRequeued { delivery: Some(d), .. }
        | ModelEvent::RelayReclaimed { delivery: Some(d), .. }
        | ModelEvent::RelayAcked { delivery: Some(d), .. }
        | ModelEvent::RelayDeadLettered { delivery: Some(d), .. } = kind
        {
            self.settled_deliveries.insert(u64::from(*d));
        }
        if let ModelEvent::RelayAcked { delivery: Some(d), .. }
        | ModelEvent::RelayDeadLettered { delivery: Some(d), .. } = kind
        {
            self.acked_deliveries.insert(u64::from(*d));
        }
        match kind {
            ModelEvent::RelayRequeued { delivery: Some(d), .. } => {
                if let Some(r) = self.refused_deliveries.remove(d) {
                    return self.judge_wait(*d, &r, now);
                }
            }
            ModelEvent::RelayReclaimed { delivery: Some(d), .. } => {
                self.refused_deliveries.remove(d);
            }
            ModelEvent::RelayAcked { delivery: Some(d), instance, .. } => {
                if let Some(r) = self.refused_deliveries.remove(d) {
                    return Check::Fail(format!(
                        "delivery {d} of instance {}'s relay was refused at {} and then acked, not requeued: a relay that lost a race was dropped (R4)",
                        instance.0,
                        millis_text(r.at_ns)
                    ));
                }
            }
            ModelEvent::RelayDeadLettered { delivery: Some(d), instance, code, .. } => {
                if let Some(r) = self.refused_deliveries.remove(d) {
                    return Check::Fail(format!(
                        "delivery {d} of instance {}'s relay was refused at {} (the claim was held: lost a race, retry) and then dead-lettered as {}: a refused relay is requeued (R4, R7)",
                        instance.0,
                        millis_text(r.at_ns),
                        code.as_str()
                    ));
                }
            }
            ModelEvent::FaultInjected {
                fault: crate::faults::kind::FaultKind::Store,
                task: Some(t),
                detail_ns,
                ..
            } => {
                // A latency spike on the refusing task's call: its reply took that much longer.
                for r in self.refused_deliveries.values_mut().filter(|r| r.task == Some(*t)) {
                    r.allowance_ns = r.allowance_ns.saturating_add(*detail_ns);
                }
            }
            ModelEvent::TaskAborted { task, .. } => {
                self.aborted.insert(*task);
                // The refusal may not have reached the aborted task: the lane's next worker
                // runs the execution's exit path — a claim again, a release — then requeues.
                let exit = nanos(crate::checkers::live_leak::exit_path_bound(view));
                for r in self.refused_deliveries.values_mut().filter(|r| r.task == Some(*task)) {
                    let ran = r.process.map_or(0, |p| self.running.ran_between(p, r.at_ns, now));
                    r.allowance_ns = r.allowance_ns.max(ran.saturating_add(exit));
                }
            }
            _ => {}
        }
        if let Some(task) = store_request_task(kind).flatten() {
            let held = self.refused_deliveries.iter().find(|(_, r)| r.task == Some(task));
            if let Some((d, r)) = held {
                return Check::Fail(format!(
                    "the lane task {task} that was refused instance {}'s delivery {d} at {} sent its next store request before the broker requeued that delivery: it moved on holding it (R3, R4)",
                    r.instance.0,
                    millis_text(r.at_ns)
                ));
            }
        }
        let overdue = self.refused_deliveries.iter().find(|(_, r)| self.ran_since(r, now) > r.allowance_ns);
        if let Some((d, r)) = overdue {
            return self.judge_wait(*d, r, now);
        }
        Check::Ok
    }

    /// How long the refusing process ran since the refusal (ns); all of it if unknown.
    fn ran_since(&self, r: &RefusedDelivery, now: u64) -> u64 {
        r.process.map_or(now.saturating_sub(r.at_ns), |p| self.running.ran_between(p, r.at_ns, now))
    }

    /// A refused delivery still unsettled, or requeued, at `now`: a failure if its process
    /// ran longer than the allowance since the refusal.
    fn judge_wait(&self, delivery: u32, r: &RefusedDelivery, now: u64) -> Check {
        let ran = self.ran_since(r, now);
        if ran <= r.allowance_ns {
            return Check::Ok;
        }
        Check::Fail(format!(
            "delivery {delivery} of instance {}'s relay, refused at {}, was still not requeued after its process ran {} — longer than the {} a refusal's reply and requeue take: the lane waited while holding it (R3, R4)",
            r.instance.0,
            millis_text(r.at_ns),
            millis_text(ran),
            millis_text(r.allowance_ns)
        ))
    }

    /// Forgets the running time of the processes ended whose requests have all landed, unless
    /// a refused delivery of theirs is still waiting for its requeue (its clock stopped at
    /// the end: forgotten, it would run on).
    fn forget_settled_processes(&mut self) {
        for process in self.ends.settled() {
            if self.refused_deliveries.values().any(|r| r.process == Some(process)) {
                self.ends.offer_later(process);
            } else {
                self.running.forget(process);
            }
        }
    }

    /// The first takeback of the instance's deliveries, if any (else never).
    fn first_reclaim(&self, instance: InstanceId) -> u64 {
        self.first_reclaimed_ns.get(instance).copied().unwrap_or(u64::MAX)
    }
}

/// The task behind a store request, for the events that are one.
fn store_request_task(kind: &ModelEvent) -> Option<Option<u64>> {
    match kind {
        ModelEvent::ClaimGranted { task, .. }
        | ModelEvent::ClaimRefused { task, .. }
        | ModelEvent::StoreRead { task, .. }
        | ModelEvent::CommitAccepted { task, .. }
        | ModelEvent::CommitRejected { task, .. }
        | ModelEvent::Released { task, .. } => task.map(Some),
        _ => None,
    }
}

/// Store witnesses of an execution reading or writing the instance.
fn touches_the_row(kind: &ModelEvent) -> bool {
    matches!(
        kind,
        ModelEvent::StoreRead { .. }
            | ModelEvent::CommitAccepted { .. }
            | ModelEvent::CommitRejected { .. }
            | ModelEvent::RowWritten { .. }
            | ModelEvent::Released { .. }
    )
}

/// The longest a correct lane takes, in its process's running time, from the store's
/// refusal of a relay's claim to the broker's requeue of that delivery: the refusal's reply
/// crossing back (one store latency, drawn in whole milliseconds up to
/// `timeouts.store_latency_max`), after which the lane requeues in the same turn, before it
/// awaits anything else. A latency spike on the reply is added as it is witnessed on the
/// calling task (`fault-injected`) where the history records spikes; where it does not (a
/// real deployment's store is late by itself, and nothing witnesses by how much), the
/// scenario's longest spike stands in for every reply, if its store's replies may spike at
/// all ([`unwitnessed_spike`]). A freeze or death of the process stops its clock; a lost
/// reply is witnessed (`CallStruck`) and the claim sent again makes a refusal of its own;
/// an aborted task's exit path gets the exit-path bound. Nothing in it depends on the size
/// of the world, so it holds at every valid size.
///
/// A real broker takes time of its own to answer the lane's requeue call (a network round
/// trip, its own disk or lock), which the simulation's broker does not: a history declares
/// that bound in its header (`broker_call_latency_max_ns`, [`ModelView::broker_call_latency`])
/// and it is added here; a simulation declares none.
pub fn requeue_bound(view: &ModelView) -> Duration {
    let latency = view.scenario().timeouts.store_latency_max;
    Duration::from_millis(u64::try_from(latency.as_millis()).unwrap_or(u64::MAX))
        + unwitnessed_spike(view)
        + view.broker_call_latency()
}

/// How late a store reply may be beyond the store's latency without a witness saying so:
/// nothing where spikes are witnessed (the simulation; a harness that injects its own and
/// records them) or where the store's replies never spike; else the longest spike the
/// scenario declares (`faults.store.latency_spike_max`), the parameter a real deployment
/// states for its store's late replies.
pub fn unwitnessed_spike(view: &ModelView) -> Duration {
    let store = &view.faults().store;
    if view.witnesses(crate::event::tag::FAULT_INJECTED) || store.latency_spike_per_call.is_never() {
        Duration::ZERO
    } else {
        store.latency_spike_max
    }
}

fn nanos(d: Duration) -> u64 {
    sutra_sim_core::time::duration_nanos(d)
}

/// The least deferral R5 allows after `attempt` refusals: capped exponential backoff,
/// `base` doubled for every refusal after the first, never above `cap`. The checker's own
/// reading of the spec's parameters — not the model's formula, which it judges.
fn least_backoff(base: Duration, cap: Duration, attempt: u32) -> Duration {
    let mut least = base.min(cap);
    for _ in 1..attempt {
        if least >= cap {
            break;
        }
        least = least.saturating_mul(2).min(cap);
    }
    least
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed, feed_with};
    use crate::ids::{OwnerId, ProcessId};

    const TASK: Option<u64> = Some(7);

    fn refused(exec: u32, path: ResumePath) -> ModelEvent {
        ModelEvent::ClaimRefused {
            instance: InstanceId(0),
            exec: ExecId(exec),
            owner: OwnerId::lane(ProcessId(1), 0),
            path,
            holder: OwnerId::lane(ProcessId(2), 0),
            task: TASK,
            delivery: None,
            process: None,
        }
    }

    fn granted(exec: u32) -> ModelEvent {
        ModelEvent::ClaimGranted {
            instance: InstanceId(0),
            exec: ExecId(exec),
            owner: OwnerId::lane(ProcessId(1), 0),
            process: Some(ProcessId(1)),
            path: ResumePath::Relay,
            previous: None,
            stale_age_ns: None,
            epoch: 1,
            task: TASK,
        }
    }

    fn requeued(delay_ms: u64) -> ModelEvent {
        ModelEvent::RelayRequeued {
            instance: InstanceId(0),
            message: MessageId(1),
            delay_ns: delay_ms * 1_000_000,
            delivery: None,
        }
    }

    fn redelivered() -> ModelEvent {
        ModelEvent::RelayDelivered {
            instance: InstanceId(0),
            message: MessageId(1),
            process: ProcessId(1),
            redelivery: true,
            duplicate: false,
            delivery: None,
        }
    }

    /// A deferral to `due_ms` (absolute), asked by the refusing task.
    fn deferred(due_ms: u64) -> ModelEvent {
        ModelEvent::TimerDeferred {
            instance: InstanceId(0),
            expects: 1,
            attempt: 1,
            due_ns: due_ms * 1_000_000,
            task: TASK,
        }
    }

    /// The store refusing execution `exec`'s claim for broker delivery `delivery`.
    fn refused_delivery(exec: u32, delivery: u32) -> ModelEvent {
        ModelEvent::ClaimRefused {
            instance: InstanceId(0),
            exec: ExecId(exec),
            owner: OwnerId::lane(ProcessId(1), 0),
            path: ResumePath::Relay,
            holder: OwnerId::lane(ProcessId(2), 0),
            task: TASK,
            process: Some(ProcessId(1)),
            delivery: Some(delivery),
        }
    }

    fn requeued_delivery(delivery: u32) -> ModelEvent {
        ModelEvent::RelayRequeued {
            instance: InstanceId(0),
            message: MessageId(1),
            delay_ns: 50_000_000,
            delivery: Some(delivery),
        }
    }

    fn reclaimed_delivery(delivery: u32) -> ModelEvent {
        ModelEvent::RelayReclaimed {
            instance: InstanceId(0),
            message: MessageId(1),
            process: ProcessId(1),
            silent: true,
            delivery: Some(delivery),
        }
    }

    /// An event of the sweeper's, far from the refusal: time passing.
    fn lease_renewed() -> ModelEvent {
        ModelEvent::LeaseAcquired { process: ProcessId(3), until_ns: 0, renewal: true, task: Some(99) }
    }

    #[test]
    fn a_refused_delivery_requeued_within_the_reply_latency_passes() {
        // smoke: store latency up to 4 ms.
        let h = vec![(1, refused_delivery(1, 5)), (5, requeued_delivery(5)), (200, granted(2))];
        assert_eq!(feed(&mut RefusalContract::default(), h), Check::Ok);
    }

    #[test]
    fn fires_on_a_refused_delivery_requeued_after_the_lane_slept() {
        let h = vec![(1, refused_delivery(1, 5)), (101, requeued_delivery(5))];
        assert!(fails(&feed(&mut RefusalContract::default(), h)));
    }

    #[test]
    fn fires_on_a_refused_delivery_never_requeued_without_waiting_for_the_lane_s_next_request() {
        let h = vec![(1, refused_delivery(1, 5)), (5_000, lease_renewed())];
        assert!(fails(&feed(&mut RefusalContract::default(), h)));
    }

    #[test]
    fn fires_on_a_refused_delivery_acked_instead_of_requeued() {
        let acked = ModelEvent::RelayAcked { instance: InstanceId(0), message: MessageId(1), delivery: Some(5) };
        assert!(fails(&feed(&mut RefusalContract::default(), vec![(1, refused_delivery(1, 5)), (2, acked)])));
    }

    #[test]
    fn fires_on_a_refused_delivery_dead_lettered() {
        let dead = ModelEvent::RelayDeadLettered {
            instance: InstanceId(0),
            message: MessageId(1),
            delivery: Some(5),
            code: crate::ids::Code::ResumeClaimHeld,
        };
        assert!(fails(&feed(&mut RefusalContract::default(), vec![(1, refused_delivery(1, 5)), (2, dead)])));
    }

    #[test]
    fn a_takeback_of_another_copy_does_not_excuse_the_refused_one() {
        let h = vec![(1, refused_delivery(1, 5)), (2, reclaimed_delivery(4)), (5_000, lease_renewed())];
        assert!(fails(&feed(&mut RefusalContract::default(), h)));
        let h = vec![(1, refused_delivery(1, 5)), (2, reclaimed_delivery(5)), (5_000, lease_renewed())];
        assert_eq!(feed(&mut RefusalContract::default(), h), Check::Ok);
    }

    #[test]
    fn a_refusal_landing_after_its_task_was_aborted_gets_the_exit_path_bound_and_no_more() {
        // The claim was on the wire when its lane task (7) was aborted: nobody hears the
        // refusal, and the lane's next worker requeues from the exit path. Smoke's exit-path
        // bound is well under 5 s and well over the 4 ms of a heard refusal.
        let aborted = ModelEvent::TaskAborted { replica: 0, process: ProcessId(1), lane: 0, task: 7 };
        let h = vec![(0, aborted.clone()), (1, refused_delivery(1, 5)), (300, requeued_delivery(5))];
        assert_eq!(feed(&mut RefusalContract::default(), h), Check::Ok);
        let h = vec![(0, aborted), (1, refused_delivery(1, 5)), (60_000, lease_renewed())];
        assert!(fails(&feed(&mut RefusalContract::default(), h)), "the exit path never requeued it");
        let h = vec![(1, refused_delivery(1, 5)), (300, requeued_delivery(5))];
        assert!(fails(&feed(&mut RefusalContract::default(), h)), "a live task heard it");
    }

    #[test]
    fn a_frozen_process_or_a_latency_spike_on_the_reply_extends_the_bound() {
        let paused = ModelEvent::ReplicaPaused { replica: 0, process: ProcessId(1), for_ns: 10_000_000_000 };
        let resumed = ModelEvent::ReplicaResumed { replica: 0, process: ProcessId(1) };
        let h = vec![(1, refused_delivery(1, 5)), (2, paused), (10_002, resumed), (10_004, requeued_delivery(5))];
        assert_eq!(feed(&mut RefusalContract::default(), h), Check::Ok);
        let spike = ModelEvent::FaultInjected {
            fault: crate::faults::kind::FaultKind::Store,
            replica: None,
            detail_ns: 300_000_000,
            task: TASK,
        };
        let h = vec![(1, refused_delivery(1, 5)), (1, spike), (304, requeued_delivery(5))];
        assert_eq!(feed(&mut RefusalContract::default(), h), Check::Ok);
    }

    /// The smoke view of a history whose writer does not witness `fault-injected` (a real
    /// runtime: its store is late by itself, and nothing records by how much).
    fn spikes_unwitnessed() -> ModelView {
        crate::checkers::testing::view().with_unwitnessed(1u64 << crate::event::tag::FAULT_INJECTED)
    }

    #[test]
    fn without_spike_witnesses_the_declared_longest_spike_stands_in_for_every_reply() {
        use crate::checkers::testing::feed_with;
        // smoke: store latency 4 ms, spikes on (1/50), up to 500 ms each.
        let view = spikes_unwitnessed();
        let late = vec![(1, refused_delivery(1, 5)), (300, requeued_delivery(5))];
        assert_eq!(feed_with(&mut RefusalContract::default(), late.clone(), &view), Check::Ok);
        // The same history where spikes are witnessed and none was: the lane slept.
        assert!(fails(&feed(&mut RefusalContract::default(), late)));
        // Beyond the latency and the longest spike, the lane slept in either history.
        let slept = vec![(1, refused_delivery(1, 5)), (1 + 4 + 500 + 1, requeued_delivery(5))];
        assert!(fails(&feed_with(&mut RefusalContract::default(), slept.clone(), &view)));
        let never = vec![(1, refused_delivery(1, 5)), (5_000, lease_renewed())];
        assert!(fails(&feed_with(&mut RefusalContract::default(), never, &view)));
    }

    #[test]
    fn without_spike_witnesses_a_store_that_never_spikes_gets_its_latency_alone() {
        use crate::checkers::testing::feed_with;
        let mut s = crate::scenario::Scenario::built_in("smoke").unwrap();
        s.faults.store.latency_spike_per_call = crate::ratio::Ratio::NEVER;
        let view = ModelView::new(
            std::rc::Rc::new(crate::ctx::Config { scenario: s.clone(), faults: s.faults.clone() }),
            std::rc::Rc::new(std::cell::RefCell::new(crate::store::StoreState::default())),
        )
        .with_unwitnessed(1u64 << crate::event::tag::FAULT_INJECTED);
        let h = vec![(1, refused_delivery(1, 5)), (101, requeued_delivery(5))];
        assert!(fails(&feed_with(&mut RefusalContract::default(), h, &view)));
        let h = vec![(1, refused_delivery(1, 5)), (5, requeued_delivery(5))];
        assert_eq!(feed_with(&mut RefusalContract::default(), h, &view), Check::Ok);
    }

    #[test]
    fn a_declared_broker_call_latency_extends_the_requeue_bound_and_no_further() {
        use crate::checkers::testing::feed_with;
        // smoke: store latency 4 ms; spikes witnessed, none here. The writer declares its
        // broker answers a call within 200 ms.
        let view = crate::checkers::testing::view().with_broker_call_latency(Duration::from_millis(200));
        let late_by_less = vec![(1, refused_delivery(1, 5)), (1 + 4 + 199, requeued_delivery(5))];
        assert_eq!(feed_with(&mut RefusalContract::default(), late_by_less.clone(), &view), Check::Ok);
        // Without the declaration the same requeue is late.
        assert!(fails(&feed(&mut RefusalContract::default(), late_by_less)));
        // Later than the store's latency and the broker's together: the lane waited.
        let later = vec![(1, refused_delivery(1, 5)), (1 + 4 + 200 + 1, requeued_delivery(5))];
        assert!(fails(&feed_with(&mut RefusalContract::default(), later, &view)));
        let never = vec![(1, refused_delivery(1, 5)), (5_000, lease_renewed())];
        assert!(fails(&feed_with(&mut RefusalContract::default(), never, &view)));
    }

    #[test]
    fn a_refusal_of_a_copy_the_broker_already_took_back_owes_nothing() {
        // A frozen process wakes and claims for a delivery taken back while it was out: its
        // requeue of that copy is ignored by the broker, and its lane moves on.
        let h = vec![(1, reclaimed_delivery(5)), (40_000, refused_delivery(1, 5)), (40_010, granted(2))];
        assert_eq!(feed(&mut RefusalContract::default(), h), Check::Ok);
    }

    #[test]
    fn fires_on_a_refusal_of_a_copy_its_consumer_had_acked_already() {
        let acked = ModelEvent::RelayAcked { instance: InstanceId(0), message: MessageId(1), delivery: Some(5) };
        assert!(fails(&feed(&mut RefusalContract::default(), vec![(1, acked), (2, refused_delivery(1, 5))])));
    }

    #[test]
    fn fires_on_a_lane_that_moves_on_holding_its_refused_delivery() {
        let h = vec![(1, refused_delivery(1, 5)), (2, granted(2))];
        assert!(fails(&feed(&mut RefusalContract::default(), h)));
    }

    #[test]
    fn fires_on_a_retry_in_place() {
        let h = vec![(1, refused(1, ResumePath::Relay)), (2, requeued(50)), (101, granted(1))];
        assert!(fails(&feed(&mut RefusalContract::default(), h)));
    }

    #[test]
    fn fires_on_a_refused_relay_the_lane_never_requeued() {
        // The relay was acked before the claim: the requeue found nothing to give back.
        let h = vec![(1, refused(1, ResumePath::Relay)), (200, granted(2))];
        assert!(fails(&feed(&mut RefusalContract::default(), h)));
    }

    #[test]
    fn excuses_a_missing_requeue_when_the_broker_took_the_relay_back() {
        let reclaimed = ModelEvent::RelayReclaimed {
            instance: InstanceId(0),
            message: MessageId(1),
            process: ProcessId(1),
            silent: false,
            delivery: None,
        };
        let h = vec![(1, refused(1, ResumePath::Relay)), (5, reclaimed.clone()), (6, redelivered()), (200, granted(2))];
        assert_eq!(feed(&mut RefusalContract::default(), h), Check::Ok);
        // Taken back while the claim request was still on its way to the store.
        let h = vec![(5, reclaimed), (6, refused(1, ResumePath::Relay)), (200, granted(2))];
        assert_eq!(feed(&mut RefusalContract::default(), h), Check::Ok);
    }

    #[test]
    fn fires_on_a_redelivery_before_the_requeue_delay() {
        let h = vec![(1, refused(1, ResumePath::Relay)), (1, requeued(50)), (20, redelivered())];
        assert!(fails(&feed(&mut RefusalContract::default(), h)));
    }

    /// A message whose requeues were all redelivered is forgotten; requeued again, it is
    /// judged as a new one: too early a redelivery still fires.
    #[test]
    fn a_forgotten_message_requeued_again_is_still_judged() {
        let mut checker = RefusalContract::default();
        let first = vec![(1, refused(1, ResumePath::Relay)), (1, requeued(50)), (51, redelivered()), (52, granted(2))];
        assert_eq!(feed(&mut checker, first.clone()), Check::Ok);
        assert!(checker.requeued_until.is_empty(), "nothing outstanding: forgotten");
        let mut again = first.clone();
        again.extend([(60, requeued(50)), (70, redelivered())]);
        assert!(fails(&feed(&mut RefusalContract::default(), again)));
        let mut again = first;
        again.extend([(60, requeued(50)), (110, redelivered())]);
        assert_eq!(feed(&mut RefusalContract::default(), again), Check::Ok);
    }

    #[test]
    fn accepts_a_requeue_redelivered_after_its_delay() {
        let h = vec![(1, refused(1, ResumePath::Relay)), (1, requeued(50)), (51, redelivered()), (52, granted(2))];
        assert_eq!(feed(&mut RefusalContract::default(), h), Check::Ok);
    }

    #[test]
    fn fires_on_a_deferral_without_backoff() {
        let h = vec![(1, refused(1, ResumePath::Timer)), (1, deferred(1))];
        assert!(fails(&feed(&mut RefusalContract::default(), h)));
    }

    #[test]
    fn the_backoff_doubles_with_the_refusals_it_counted() {
        // smoke: base 100ms, max 5s. Third refusal of the row: at least 400ms.
        let mut h = Vec::new();
        for (i, at) in [(1, 0u64), (2, 1_000), (3, 2_000)] {
            h.push((at, refused(i, ResumePath::Timer)));
            h.push((at, deferred(at + 150)));
        }
        assert!(fails(&feed(&mut RefusalContract::default(), h)));
        let mut h = Vec::new();
        for (i, at, backoff) in [(1, 0u64, 100), (2, 1_000, 200), (3, 2_000, 400)] {
            h.push((at, refused(i, ResumePath::Timer)));
            h.push((at, deferred(at + backoff)));
        }
        assert_eq!(feed(&mut RefusalContract::default(), h), Check::Ok);
    }

    #[test]
    fn a_refused_fire_whose_deferral_found_no_row_is_not_paired_with_a_later_deferral() {
        // The refused fire's row was consumed before its deferral arrived (nothing written,
        // nothing witnessed); the task's next execution is granted, fails and defers the
        // new row without a refusal: no backoff for a refusal is owed there.
        let h = vec![
            (0, refused(1, ResumePath::Timer)),
            (0, deferred(100)),
            (1_000, refused(2, ResumePath::Timer)),
            (3_000, granted(3)),
            (3_100, deferred(3_150)),
        ];
        assert_eq!(feed(&mut RefusalContract::default(), h), Check::Ok);
        // Without the grant in between, the same deferral answers the second refusal.
        let h = vec![
            (0, refused(1, ResumePath::Timer)),
            (0, deferred(100)),
            (1_000, refused(2, ResumePath::Timer)),
            (3_100, deferred(3_150)),
        ];
        assert!(fails(&feed(&mut RefusalContract::default(), h)));
    }

    #[test]
    fn fires_on_a_deferral_above_the_cap_and_its_jitter() {
        // smoke: max 5s + jitter up to 100ms.
        let h = vec![(1, refused(1, ResumePath::Timer)), (1, deferred(1 + 5_101))];
        assert!(fails(&feed(&mut RefusalContract::default(), h)));
    }

    #[test]
    fn a_new_timer_row_starts_its_refusal_count_again() {
        let h = vec![
            (0, refused(1, ResumePath::Timer)),
            (0, deferred(100)),
            (500, ModelEvent::TimerScheduled { instance: InstanceId(0), step: 3, due_ns: 600_000_000 }),
            (600, refused(2, ResumePath::Timer)),
            (600, deferred(700)),
        ];
        assert_eq!(feed(&mut RefusalContract::default(), h), Check::Ok);
    }

    #[test]
    fn fires_on_a_refused_migration_that_wrote_the_row() {
        let write = ModelEvent::RowWritten {
            instance: InstanceId(0),
            write: crate::event::WriteKind::Migration,
            by: Some(ExecId(1)),
            writer: Some(OwnerId::lane(ProcessId(1), 0)),
            owner: None,
            version: 0,
            epoch: 1,
            parked: false,
        };
        assert!(fails(&feed(
            &mut RefusalContract::default(),
            vec![(1, refused(1, ResumePath::Migration)), (2, write)]
        )));
        let committed = ModelEvent::MigrationCommitted {
            instance: InstanceId(0),
            exec: ExecId(1),
            owner: OwnerId::lane(ProcessId(1), 0),
            epoch: 1,
            current_epoch: 1,
            done: false,
            task: None,
        };
        assert!(fails(&feed(
            &mut RefusalContract::default(),
            vec![(1, refused(1, ResumePath::Migration)), (2, committed)]
        )));
    }

    /// The smoke view of a history that declares its store answers within 100 ms.
    fn latency_declared() -> ModelView {
        crate::checkers::testing::view().with_store_call_latency(Some(Duration::from_millis(100)))
    }

    /// Process `p` (from 10) frozen a while, refused a delivery its lane gives back, then
    /// crashed: a second apart each.
    fn a_life_ended(p: u32) -> Vec<(u64, ModelEvent)> {
        let (at, process) = (u64::from(p) * 1_000, ProcessId(p + 10));
        let refused = ModelEvent::ClaimRefused {
            instance: InstanceId(p),
            exec: ExecId(p + 10),
            owner: OwnerId::lane(process, 0),
            path: ResumePath::Relay,
            holder: OwnerId::lane(ProcessId(2), 0),
            task: Some(u64::from(p) + 100),
            process: Some(process),
            delivery: Some(p + 10),
        };
        vec![
            (at, ModelEvent::ReplicaPaused { replica: 0, process, for_ns: 1_000_000 }),
            (at + 1, ModelEvent::ReplicaResumed { replica: 0, process }),
            (at + 2, refused),
            (at + 3, requeued_delivery(p + 10)),
            (at + 4, ModelEvent::ReplicaCrashed { replica: 0, process }),
        ]
    }

    #[test]
    fn the_running_time_of_thousands_of_dead_processes_is_forgotten_and_refusals_are_still_judged() {
        let view = latency_declared();
        let mut checker = RefusalContract::default();
        // Process 1 is refused delivery 5 and crashes before giving it back: its clock stops,
        // so it owes nothing yet — and must stay on the books while the delivery waits.
        let mut history =
            vec![(1, refused_delivery(1, 5)), (2, ModelEvent::ReplicaCrashed { replica: 0, process: ProcessId(1) })];
        history.extend((1..5_000).flat_map(a_life_ended));
        assert_eq!(feed_with(&mut checker, history, &view), Check::Ok);
        assert!(checker.running.entries() <= 4, "{} processes on the books", checker.running.entries());
        assert!(checker.ends.len() <= 2, "{} ended processes waiting", checker.ends.len());
        assert!(checker.refused.words() < 100, "refused executions as bits");
        // Its delivery acked rather than requeued, long after: still the R4 failure.
        let acked = ModelEvent::RelayAcked { instance: InstanceId(0), message: MessageId(1), delivery: Some(5) };
        let verdict = feed_with(&mut checker, vec![(6_000_000, acked)], &view);
        assert!(matches!(&verdict, Check::Fail(m) if m.contains("acked")), "{verdict:?}");
        // An execution refused long ago, whose process is forgotten, asking again: R3.
        let mut checker = RefusalContract::default();
        let mut history: Vec<_> = (1..3_000).flat_map(a_life_ended).collect();
        let again = ModelEvent::ClaimGranted {
            instance: InstanceId(1),
            exec: ExecId(11),
            owner: OwnerId::lane(ProcessId(11), 0),
            process: Some(ProcessId(11)),
            path: ResumePath::Relay,
            previous: None,
            stale_age_ns: None,
            epoch: 2,
            task: Some(101),
        };
        history.push((4_000_000, again));
        assert!(fails(&feed_with(&mut checker, history, &view)));
    }

    #[test]
    fn without_a_declared_store_latency_no_process_is_forgotten() {
        let mut checker = RefusalContract::default();
        assert_eq!(feed(&mut checker, (1..100).flat_map(a_life_ended).collect()), Check::Ok);
        assert!(checker.running.entries() >= 99);
    }
}

//! refusal-contract (always; R3–R6): what happens after the store refuses a claim, judged
//! only from what the store, the broker and the executor witness — never from the
//! runtime's own account of its reaction.
//!
//! - **R3, no retry in place**: an execution the store refused never asks for the claim
//!   again (the store records the execution each request names).
//! - **R4, requeue**: a refused relay (relay or pull-completion path) is requeued by the
//!   broker before the refusing lane task sends its next store request — unless the broker
//!   took the delivery back from its consumer meanwhile (the consumer died or froze). A
//!   requeued message is not redelivered before the requeue delay the broker recorded:
//!   a refusal is no busy loop.
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
//! R7 (the structured code) is not judged: the code is what the runtime answers its caller,
//! and nothing in the model witnesses that answer.
//!
//! A bug that would still pass: a refused relay requeued by the lane but *also* executed
//! under a second claim attempt by a fresh execution id in the same task — the store sees a
//! new execution, not a retry in place (no-double-resume judges the double run, if any).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::dense::DenseMap;
use crate::event::{millis_text, ModelEvent};
use crate::ids::{ExecId, InstanceId, MessageId, ResumePath};
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

/// What the checker has counted from the witnesses.
#[derive(Default)]
pub struct RefusalContract {
    /// Executions the store refused, with the path they were on.
    refused: DenseMap<ExecId, ResumePath>,
    /// Refused relays not yet requeued, by the task that sent the refused claim.
    requeue_pending: BTreeMap<Option<u64>, PendingRequeue>,
    /// Last time the broker took a delivery of the instance back from its consumer (ns).
    reclaimed_ns: DenseMap<InstanceId, u64>,
    /// First time the broker took a delivery of the instance back (ns).
    first_reclaimed_ns: DenseMap<InstanceId, u64>,
    /// Last time the broker acked or requeued a delivery of the instance (ns).
    settled_ns: DenseMap<InstanceId, u64>,
    /// Per message: the earliest redelivery times (ns) of its outstanding requeues.
    requeued_until: DenseMap<MessageId, Vec<u64>>,
    /// Per message: takebacks from a consumer not yet redelivered (no delay applies).
    takebacks: DenseMap<MessageId, u32>,
    /// Refused timer fires waiting for their deferral, by task: the instance.
    deferral_pending: BTreeMap<Option<u64>, InstanceId>,
    /// Refusal-deferrals applied to each instance's current timer row.
    row_refusals: DenseMap<InstanceId, u32>,
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "refusal-contract",
        kind: CheckerKind::Always,
        description: "refusals are requeued (no earlier than the delay), deferred by capped exponential backoff, or touch nothing; nobody retries in place",
        rules: &["R3", "R4", "R5", "R6"],
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
            RELAY_DELIVERED,
            TIMER_SCHEDULED,
            TIMER_DEFERRED,
            CALL_STRUCK,
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
        // A store request from a task whose refused relay is still not requeued: the lane
        // moved on without giving the relay back (R4).
        if let Some(task) = store_request_task(&event.kind) {
            // A refused fire's deferral is the refusing task's next store request. If the
            // task sends another request first, the deferral matched no row (a commit
            // consumed the row meanwhile, and the store witnesses nothing): the refusal is
            // answered, and must not be paired with a later deferral of that task.
            self.deferral_pending.remove(&task);
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
                if self.refused.remove(*exec).is_some() {
                    self.requeue_pending.retain(|t, p| !(t == task && p.instance == *instance));
                    if self.deferral_pending.get(task) == Some(instance) {
                        self.deferral_pending.remove(task);
                    }
                }
            }
            ModelEvent::ClaimGranted { exec, instance, .. } | ModelEvent::ClaimRefused { exec, instance, .. }
                if self.refused.contains_key(*exec) =>
            {
                return Check::Fail(format!(
                    "execution {} asked for the claim on instance {} again after the store refused it: it waited on a held claim (R3)",
                    exec.0, instance.0
                ));
            }
            ModelEvent::ClaimRefused { exec, instance, path, task, .. } => {
                self.refused.insert(*exec, *path);
                match path {
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
            ModelEvent::RelayRequeued { instance, message, delay_ns } => {
                self.settled_ns.insert(*instance, now);
                // The requeue does not name the task that asked for it: it answers every
                // refusal of the instance still waiting (lenient where a witness is missing).
                self.requeue_pending.retain(|_, p| p.instance != *instance);
                self.requeued_until.get_or_insert_with(*message, Vec::new).push(now.saturating_add(*delay_ns));
            }
            ModelEvent::RelayReclaimed { instance, message, .. } => {
                self.reclaimed_ns.insert(*instance, now);
                self.first_reclaimed_ns.get_or_insert_with(*instance, || now);
                *self.takebacks.get_or_insert_with(*message, || 0) += 1;
            }
            ModelEvent::RelayDelivered { instance, message, redelivery: true, duplicate: false, .. } => {
                let ready = self.requeued_until.get_mut(*message).and_then(|dues| {
                    let i =
                        dues.iter().enumerate().filter(|(_, d)| **d <= now).min_by_key(|(_, d)| **d).map(|(i, _)| i);
                    i.map(|i| dues.swap_remove(i))
                });
                if ready.is_none() {
                    match self.takebacks.get_mut(*message) {
                        Some(n) if *n > 0 => *n -= 1,
                        _ => {
                            if let Some(&due) = self.requeued_until.get(*message).and_then(|d| d.iter().min()) {
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
                    if self.refused.get(exec) == Some(&ResumePath::Migration) && touches_the_row(other) {
                        return Check::Fail(format!(
                            "migration {} was refused and then {} instance {}: a 409 must have read and written nothing (R6)",
                            exec.0,
                            sutra_sim_core::EventKind::name(other),
                            sutra_sim_core::EventKind::instance(other).unwrap_or_default()
                        ));
                    }
                }
                if let ModelEvent::MigrationCommitted { exec, instance, .. } = other {
                    if self.refused.get(*exec) == Some(&ResumePath::Migration) {
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
    use crate::checkers::testing::{fails, feed};
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
        ModelEvent::RelayRequeued { instance: InstanceId(0), message: MessageId(1), delay_ns: delay_ms * 1_000_000 }
    }

    fn redelivered() -> ModelEvent {
        ModelEvent::RelayDelivered {
            instance: InstanceId(0),
            message: MessageId(1),
            process: ProcessId(1),
            redelivery: true,
            duplicate: false,
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
}

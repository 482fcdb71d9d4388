//! faults-applied (always; DESIGN.md §6): a fault is applied as it is reported and as the
//! scenario configures it. A fault reported but not applied — or applied more widely than
//! its definition — makes every other verdict about a world the run did not have: a
//! scenario of late timers that never runs a late fire tests nothing about late fires.
//!
//! Two rules, each judged from witnesses only:
//!
//! - **Timer jitter delays its fire.** The environment reports a late fire
//!   (`FaultInjected`, kind `timer-jitter`, `detail_ns` = the lateness) with the task it was
//!   injected into — the timer poller carrying the fire. That task must wait out the
//!   lateness: nothing it does is witnessed (no store call, no lane submission, no further
//!   fault injected into it) before the report's time plus the lateness.
//! - **A duplicate copies a first delivery.** The duplicate-delivery fault copies a relay at
//!   its first delivery, once; copies never multiply on redeliveries. So, by the broker's
//!   witnesses, no message has more duplicate deliveries (`RelayDelivered`, `duplicate`)
//!   than first deliveries (neither redelivered nor a duplicate).
//!
//! **What it keeps.** A duplicate may come at any time after its first delivery, so each
//! message's two counts are kept for the whole history — as bits where they are the usual
//! ones (one first delivery and no copy, or one of each: a message id from a counter costs
//! about a bit in each set), in a tree for the rare others. A task waiting out its lateness
//! is dropped when it next acts, or once the latest instant witnessed is past its wait (a
//! task whose process died never acts again): swept each time the waiting tasks doubled in
//! number, so memory follows the tasks still waiting.
//!
//! A bug that would still pass: a jittered fire that waits, but on another task than the
//! one the fault was reported into (the poller waits, the fire it already sent does not).

use std::collections::BTreeMap;
use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::{millis_text, ModelEvent};
use crate::faults::kind::FaultKind;
use crate::id_bits::IdBits;
use crate::ids::MessageId;
use crate::view::ModelView;

/// The checker's state.
#[derive(Default)]
pub struct FaultsApplied {
    /// Task → (until when it must stay quiet, when the lateness was reported, the lateness).
    waiting: BTreeMap<u64, (u64, u64, u64)>,
    /// Tasks waiting when `waiting` was last swept of the waits passed.
    waiting_swept: usize,
    /// Message → (first deliveries, duplicate deliveries).
    deliveries: Deliveries,
    /// The latest instant witnessed (ns).
    now_ns: u64,
}

/// Message → (first deliveries, duplicate deliveries), (0, 0) where absent.
#[derive(Default)]
struct Deliveries {
    /// Messages at (1, 0): delivered once, not copied.
    once: IdBits,
    /// Messages at (1, 1): delivered once, copied once.
    copied: IdBits,
    /// Messages at any other counts but (0, 0).
    other: BTreeMap<MessageId, (u32, u32)>,
}

impl Deliveries {
    fn get(&self, message: MessageId) -> (u32, u32) {
        let id = u64::from(message.0);
        if self.once.contains(id) {
            (1, 0)
        } else if self.copied.contains(id) {
            (1, 1)
        } else {
            self.other.get(&message).copied().unwrap_or_default()
        }
    }

    fn set(&mut self, message: MessageId, old: (u32, u32), new: (u32, u32)) {
        let id = u64::from(message.0);
        match old {
            (1, 0) => drop(self.once.remove(id)),
            (1, 1) => drop(self.copied.remove(id)),
            _ => drop(self.other.remove(&message)),
        }
        match new {
            (0, 0) => {}
            (1, 0) => drop(self.once.insert(id)),
            (1, 1) => drop(self.copied.insert(id)),
            _ => drop(self.other.insert(message, new)),
        }
    }
}

impl FaultsApplied {
    /// Records kept (entries, not bytes; the bits not counted).
    #[cfg(test)]
    fn kept(&self) -> usize {
        self.waiting.len() + self.deliveries.other.len()
    }

    /// Judges a delivery of `message`: a duplicate needs a first delivery not yet copied.
    fn delivered(&mut self, message: MessageId, redelivery: bool, duplicate: bool, now: u64) -> Check {
        let old = self.deliveries.get(message);
        let (mut first, mut copies) = old;
        if duplicate {
            copies += 1;
        } else if !redelivery {
            first += 1;
        }
        self.deliveries.set(message, old, (first, copies));
        if duplicate && copies > first {
            return Check::Fail(format!(
                "the broker delivered duplicate #{copies} of m{} at {}, but the message had {first} first deliveries: the duplicate-delivery fault copies a first delivery, once",
                message.0,
                millis_text(now)
            ));
        }
        Check::Ok
    }

    /// `task` must stay quiet until `until`; the tasks whose wait has passed are swept out
    /// each time the waiting doubled in number.
    fn wait(&mut self, task: u64, entry: (u64, u64, u64)) {
        self.waiting.insert(task, entry);
        if self.waiting.len() >= 2 * self.waiting_swept.max(16) {
            let now = self.now_ns;
            self.waiting.retain(|_, &mut (until, _, _)| until > now);
            self.waiting_swept = self.waiting.len();
        }
    }
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "faults-applied",
        kind: CheckerKind::Always,
        description: "a fault is applied as reported: a fire reported late waits that long, and a duplicate copies a first delivery only",
        rules: &[],
        factory: Arc::new(|| Box::new(FaultsApplied::default())),
    }
}

/// The task a witness event names as the one that acted, if it names one.
fn acting_task(event: &ModelEvent) -> Option<u64> {
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
        | LeaseAcquired { task, .. }
        | TimerDeferred { task, .. }
        | Lane { task, .. }
        | FaultInjected { task, .. } => *task,
        _ => None,
    }
}

impl Checker<ModelEvent, ModelView> for FaultsApplied {
    fn interest(&self) -> u64 {
        use crate::event::tag;
        sutra_sim_core::tag_mask(&[
            tag::CLAIM_GRANTED,
            tag::CLAIM_REFUSED,
            tag::STORE_READ,
            tag::COMMIT_ACCEPTED,
            tag::COMMIT_REJECTED,
            tag::RELEASED,
            tag::MIGRATION_COMMITTED,
            tag::SWEPT,
            tag::LEASE_ACQUIRED,
            tag::TIMER_DEFERRED,
            tag::LANE,
            tag::FAULT_INJECTED,
            tag::RELAY_DELIVERED,
        ])
    }

    fn name(&self) -> &str {
        "faults-applied"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, _view: &ModelView) -> Check {
        let now = event.time.as_nanos();
        self.now_ns = self.now_ns.max(now);
        if let ModelEvent::RelayDelivered { message, redelivery, duplicate, .. } = &event.kind {
            return self.delivered(*message, *redelivery, *duplicate, now);
        }
        if !self.waiting.is_empty() {
            if let Some(task) = acting_task(&event.kind) {
                if let Some(&(until, reported, late)) = self.waiting.get(&task) {
                    if now < until {
                        return Check::Fail(format!(
                            "task {task} was reported {} late at {} (timer jitter) but acted at {}, before {}: the fault was reported, not applied",
                            millis_text(late),
                            millis_text(reported),
                            millis_text(now),
                            millis_text(until)
                        ));
                    }
                    self.waiting.remove(&task);
                }
            }
        }
        if let ModelEvent::FaultInjected { fault: FaultKind::TimerJitter, detail_ns, task: Some(task), .. } = event.kind
        {
            if detail_ns > 0 {
                self.wait(task, (now.saturating_add(detail_ns), now, detail_ns));
            }
        }
        Check::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed};
    use crate::event::{Component, LaneAction};
    use crate::ids::{InstanceId, ProcessId};

    fn jitter(task: u64, late_ms: u64) -> ModelEvent {
        ModelEvent::FaultInjected {
            fault: FaultKind::TimerJitter,
            replica: None,
            detail_ns: late_ms * 1_000_000,
            task: Some(task),
        }
    }

    fn submitted(task: u64) -> ModelEvent {
        ModelEvent::Lane {
            process: ProcessId(1),
            component: Component::Bindings,
            action: LaneAction::Submitted(1),
            task: Some(task),
        }
    }

    fn delivered(message: u32, redelivery: bool, duplicate: bool) -> ModelEvent {
        ModelEvent::RelayDelivered {
            instance: InstanceId(0),
            message: MessageId(message),
            process: ProcessId(1),
            redelivery,
            duplicate,
            delivery: None,
        }
    }

    #[test]
    fn a_late_fire_whose_task_waits_passes() {
        let history = vec![(1_000, jitter(7, 2_000)), (1_500, submitted(8)), (3_000, submitted(7))];
        assert!(!fails(&feed(&mut FaultsApplied::default(), history)));
    }

    #[test]
    fn fires_when_a_task_reported_late_acts_before_its_lateness_passed() {
        let history = vec![(1_000, jitter(7, 2_000)), (1_000, submitted(7))];
        assert!(fails(&feed(&mut FaultsApplied::default(), history)));
        // Another fault injected into the same task counts as acting: it did not wait.
        let history = vec![(1_000, jitter(7, 2_000)), (1_001, jitter(7, 500))];
        assert!(fails(&feed(&mut FaultsApplied::default(), history)));
    }

    #[test]
    fn a_lateness_reported_outside_any_task_is_not_judged() {
        let untasked =
            ModelEvent::FaultInjected { fault: FaultKind::TimerJitter, replica: None, detail_ns: 1 << 40, task: None };
        let history = vec![(1_000, untasked), (1_000, submitted(7))];
        assert!(!fails(&feed(&mut FaultsApplied::default(), history)));
    }

    #[test]
    fn one_duplicate_of_a_first_delivery_passes_and_its_redeliveries_too() {
        let history = vec![
            (1, delivered(1, false, false)),
            (2, delivered(1, true, true)),
            (3, delivered(1, true, false)),
            (4, delivered(1, true, false)),
        ];
        assert!(!fails(&feed(&mut FaultsApplied::default(), history)));
    }

    #[test]
    fn fires_on_a_duplicate_of_a_duplicate_or_of_a_redelivery() {
        let copies =
            vec![(1, delivered(1, false, false)), (2, delivered(1, true, true)), (3, delivered(1, true, true))];
        assert!(fails(&feed(&mut FaultsApplied::default(), copies)));
        let never_first = vec![(1, delivered(2, true, true))];
        assert!(fails(&feed(&mut FaultsApplied::default(), never_first)));
    }

    #[test]
    fn a_long_history_keeps_few_records_and_still_flags_a_late_copy_of_an_old_message() {
        let mut history = Vec::new();
        for m in 0..5_000u32 {
            let at = u64::from(m) * 10;
            history.push((at, delivered(m, false, false)));
            if m % 3 == 0 {
                history.push((at + 1, delivered(m, true, true)));
            }
            history.push((at + 2, delivered(m, true, false)));
            // A late fire into a task that never acts again (its process died).
            history.push((at + 3, jitter(100_000 + u64::from(m), 5)));
        }
        let mut checker = FaultsApplied::default();
        assert!(!fails(&feed(&mut checker, history.clone())));
        assert!(checker.kept() <= 64, "{} records kept", checker.kept());
        // A message whose one copy was delivered long ago gets no second one; one with none
        // still may get one.
        let mut copy_of_copy = history.clone();
        copy_of_copy.push((90_000, delivered(3, true, true)));
        assert!(fails(&feed(&mut FaultsApplied::default(), copy_of_copy)));
        let mut first_copy = history.clone();
        first_copy.push((90_000, delivered(4, true, true)));
        assert!(!fails(&feed(&mut FaultsApplied::default(), first_copy)));
        // A task still waiting out its lateness is flagged however many others were dropped.
        let mut early = history;
        early.extend([(90_000, jitter(7, 2_000)), (90_001, submitted(7))]);
        assert!(fails(&feed(&mut FaultsApplied::default(), early)));
    }
}

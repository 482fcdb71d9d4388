//! one-trigger-one-step (always; R25): each trigger drives exactly the step it was issued
//! for. Every commit the store accepts names its trigger; the checker matches it against
//! the trigger's own issue, as the store's outbox and timer rows witnessed it:
//!
//! - a relay (`TriggerRef::Message`) was published (`RelayPublished`, the store's outbox —
//!   an instance's creation message and a pull completion's relay included) for this
//!   instance and for step `based_on + 1`;
//! - a timer row (`TriggerRef::TimerRow { expects }`) was written (`TimerScheduled`) for this
//!   instance and step `expects + 1`, and `expects == based_on`;
//! - no trigger advances two steps (the second accepted commit naming it fails).
//!
//! A runtime that resumes step N+1 from a duplicate of step N's relay names a relay issued
//! for step N, and fails here even though the store accepted the write.
//!
//! **What it forgets.** A trigger that drove a commit is spent: any later commit naming it
//! fails, whatever instance and step it names (so judging it needs no more than "spent").
//! Its record — the relay's instance and step, the timer row — is dropped when it is
//! spent, and only the fact stays, as a bit: message ids come from a counter, and a timer
//! row is a bit in eight slots per instance (a row for a later step, a tree entry). So a
//! long history holds records for the triggers issued and not yet spent (the live world's
//! work), plus about a bit per trigger ever spent. A trigger issued and never spent (a
//! relay whose instance completed by a timer row, say) is kept: a store that took a commit
//! naming it later would pass here, and forgetting it would turn that into a failure.
//! Verdicts are unchanged; only the message of a spent trigger named again no longer says
//! which instance or step it was issued for.
//!
//! A bug that would still pass: a runtime that runs the right step but for the wrong
//! *delivery* of the right relay (two deliveries of one message both executing, the second
//! rejected by the claim) — that is no-double-resume's to judge, not this checker's.

use std::collections::BTreeSet;
use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::dense::DenseMap;
use crate::event::{ModelEvent, TriggerRef};
use crate::id_bits::IdBits;
use crate::ids::{InstanceId, MessageId};
use crate::view::ModelView;

/// Triggers issued and not yet spent, and the ones spent (as bits).
#[derive(Default)]
pub struct OneTriggerOneStep {
    /// Message → (instance, step) it was published for, until it drives a commit.
    relays: DenseMap<MessageId, (InstanceId, u32)>,
    /// Timer rows written and not yet spent: (instance, step).
    timers: BTreeSet<(InstanceId, u32)>,
    /// Messages that drove a commit.
    spent_relays: IdBits,
    /// Timer rows that drove a commit.
    spent_timers: SpentTimers,
}

/// Timer rows that drove a commit, as (instance, expects): a bit each in
/// [`TIMER_SLOTS`] slots per instance, a tree entry for a row of a later step.
#[derive(Default)]
struct SpentTimers {
    slots: IdBits,
    later: BTreeSet<(InstanceId, u64)>,
}

/// Slots per instance in [`SpentTimers::slots`]: rows expecting versions `0..TIMER_SLOTS`.
const TIMER_SLOTS: u64 = 8;

impl SpentTimers {
    fn slot(instance: InstanceId, expects: u64) -> Option<u64> {
        (expects < TIMER_SLOTS).then(|| u64::from(instance.0) * TIMER_SLOTS + expects)
    }

    fn contains(&self, instance: InstanceId, expects: u64) -> bool {
        match Self::slot(instance, expects) {
            Some(slot) => self.slots.contains(slot),
            None => self.later.contains(&(instance, expects)),
        }
    }

    fn insert(&mut self, instance: InstanceId, expects: u64) {
        match Self::slot(instance, expects) {
            Some(slot) => self.slots.insert(slot),
            None => self.later.insert((instance, expects)),
        };
    }
}

impl OneTriggerOneStep {
    /// Entries held in the checker's maps and trees (spent triggers, kept as bits, not
    /// counted): what its memory follows.
    pub fn held(&self) -> usize {
        self.relays.len() + self.timers.len() + self.spent_timers.later.len()
    }

    /// Words of bits held for spent triggers.
    pub fn spent_words(&self) -> usize {
        self.spent_relays.words() + self.spent_timers.slots.words()
    }
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "one-trigger-one-step",
        kind: CheckerKind::Always,
        description:
            "every accepted commit names a trigger issued for exactly that step; no trigger advances two steps",
        rules: &["R25"],
        factory: Arc::new(|| Box::new(OneTriggerOneStep::default())),
    }
}

impl Checker<ModelEvent, ModelView> for OneTriggerOneStep {
    fn interest(&self) -> u64 {
        use crate::event::tag::*;
        sutra_sim_core::tag_mask(&[RELAY_PUBLISHED, TIMER_SCHEDULED, COMMIT_ACCEPTED])
    }

    fn name(&self) -> &str {
        "one-trigger-one-step"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, _view: &ModelView) -> Check {
        match &event.kind {
            ModelEvent::RelayPublished { instance, message, step } => {
                // A spent id published again can only fail whatever names it: not kept.
                if !self.spent_relays.contains(u64::from(message.0)) {
                    self.relays.insert(*message, (*instance, *step));
                }
            }
            ModelEvent::TimerScheduled { instance, step, .. } => {
                if !self.spent_timers.contains(*instance, u64::from(*step).wrapping_sub(1)) {
                    self.timers.insert((*instance, *step));
                }
            }
            ModelEvent::CommitAccepted { instance, exec, trigger, based_on, .. } => {
                let step = based_on + 1;
                let judged = match *trigger {
                    TriggerRef::Message(message) => self.relay_drove(message, *instance, step),
                    TriggerRef::TimerRow { expects } => self.timer_row_drove(expects, *instance, *based_on),
                };
                if let Err(what) = judged {
                    return Check::Fail(format!(
                        "execution {} committed step {step} of instance {} on {what} (R25)",
                        exec.0, instance.0
                    ));
                }
            }
            _ => {}
        }
        Check::Ok
    }
}

impl OneTriggerOneStep {
    /// Judges relay `message` driving `step` of `instance`, and spends it.
    fn relay_drove(&mut self, message: MessageId, instance: InstanceId, step: u64) -> Result<(), String> {
        if self.spent_relays.contains(u64::from(message.0)) {
            return Err(format!("relay m{}, which already drove a commit", message.0));
        }
        match self.relays.get(message) {
            None => return Err(format!("relay m{}, which was never published", message.0)),
            Some(&(for_instance, _)) if for_instance != instance => {
                return Err(format!("relay m{}, published for instance {}", message.0, for_instance.0))
            }
            Some(&(_, for_step)) if u64::from(for_step) != step => {
                return Err(format!(
                    "relay m{}, published for step {for_step}: a stale or duplicate trigger advanced another step",
                    message.0
                ))
            }
            Some(_) => {}
        }
        self.relays.remove(message);
        self.spent_relays.insert(u64::from(message.0));
        Ok(())
    }

    /// Judges the timer row expecting `expects` driving the commit based on `based_on` of
    /// `instance`, and spends it.
    fn timer_row_drove(&mut self, expects: u64, instance: InstanceId, based_on: u64) -> Result<(), String> {
        if expects != based_on {
            return Err(format!("the timer row written for step {}", expects + 1));
        }
        if self.spent_timers.contains(instance, expects) {
            return Err("a timer row that already drove a commit".to_string());
        }
        let row = u32::try_from(expects + 1).ok().map(|step| (instance, step));
        if !row.is_some_and(|row| self.timers.remove(&row)) {
            return Err("a timer row never written for it".to_string());
        }
        self.spent_timers.insert(instance, expects);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed};
    use crate::ids::{ExecId, OwnerId, ProcessId};

    fn published(message: u32, step: u32) -> ModelEvent {
        ModelEvent::RelayPublished { instance: InstanceId(0), message: MessageId(message), step }
    }

    fn commit(exec: u32, trigger: TriggerRef, based_on: u64) -> ModelEvent {
        commit_of(InstanceId(0), exec, trigger, based_on)
    }

    /// An accepted commit of `instance` by execution `exec`, on `trigger`, from version `based_on`.
    fn commit_of(instance: InstanceId, exec: u32, trigger: TriggerRef, based_on: u64) -> ModelEvent {
        let owner = OwnerId::lane(ProcessId(1), 0);
        ModelEvent::CommitAccepted {
            instance,
            exec: ExecId(exec),
            owner,
            epoch: 1,
            owner_before: Some(owner),
            current_epoch: 1,
            trigger,
            based_on,
            version_before: based_on,
            version_after: based_on + 1,
            task: None,
        }
    }

    #[test]
    fn accepts_each_trigger_driving_its_own_step() {
        let h = vec![
            (1, published(1, 1)),
            (2, commit(1, TriggerRef::Message(MessageId(1)), 0)),
            (3, ModelEvent::TimerScheduled { instance: InstanceId(0), step: 2, due_ns: 9 }),
            (4, commit(2, TriggerRef::TimerRow { expects: 1 }, 1)),
            (5, published(2, 3)),
            (6, commit(3, TriggerRef::Message(MessageId(2)), 2)),
        ];
        assert_eq!(feed(&mut OneTriggerOneStep::default(), h), Check::Ok);
    }

    #[test]
    fn fires_when_a_duplicate_of_step_ns_relay_resumes_step_n_plus_one() {
        let h = vec![
            (1, published(1, 1)),
            (2, commit(1, TriggerRef::Message(MessageId(1)), 0)),
            (3, published(2, 2)),
            // The duplicate of m1 arrives and the runtime runs step 2 with it.
            (4, commit(2, TriggerRef::Message(MessageId(1)), 1)),
        ];
        assert!(fails(&feed(&mut OneTriggerOneStep::default(), h)));
    }

    #[test]
    fn fires_when_one_relay_drives_two_commits_of_its_step() {
        let h = vec![
            (1, published(1, 1)),
            (2, commit(1, TriggerRef::Message(MessageId(1)), 0)),
            (3, commit(2, TriggerRef::Message(MessageId(1)), 0)),
        ];
        assert!(fails(&feed(&mut OneTriggerOneStep::default(), h)));
    }

    #[test]
    fn fires_on_a_relay_nobody_published() {
        assert!(fails(&feed(
            &mut OneTriggerOneStep::default(),
            vec![(1, commit(1, TriggerRef::Message(MessageId(7)), 0))]
        )));
    }

    #[test]
    fn fires_on_a_timer_row_written_for_another_step() {
        let h = vec![
            (1, ModelEvent::TimerScheduled { instance: InstanceId(0), step: 2, due_ns: 9 }),
            (2, commit(1, TriggerRef::TimerRow { expects: 1 }, 2)),
        ];
        assert!(fails(&feed(&mut OneTriggerOneStep::default(), h)));
        let never_written = vec![(2, commit(1, TriggerRef::TimerRow { expects: 1 }, 1))];
        assert!(fails(&feed(&mut OneTriggerOneStep::default(), never_written)));
    }

    /// Instance `i`'s life: its creation relay drives step 1, a timer row step 2.
    fn finished_instance(i: u32) -> Vec<(u64, ModelEvent)> {
        let instance = InstanceId(i);
        let commit = |trigger, based_on: u64| commit_of(instance, i, trigger, based_on);
        vec![
            (1, ModelEvent::RelayPublished { instance, message: MessageId(i), step: 1 }),
            (2, commit(TriggerRef::Message(MessageId(i)), 0)),
            (3, ModelEvent::TimerScheduled { instance, step: 2, due_ns: 9 }),
            (4, commit(TriggerRef::TimerRow { expects: 1 }, 1)),
        ]
    }

    fn many_finished(n: u32) -> Vec<(u64, ModelEvent)> {
        (0..n).flat_map(finished_instance).collect()
    }

    #[test]
    fn books_stay_small_over_thousands_of_finished_instances() {
        let mut checker = OneTriggerOneStep::default();
        assert_eq!(feed(&mut checker, many_finished(5_000)), Check::Ok);
        assert!(checker.held() <= 16, "{} entries held", checker.held());
        // Spent relays and timer rows stay, as about a bit each.
        assert!(checker.spent_words() <= 5_000 / 64 + 5_000 * 8 / 64 + 4, "{} words", checker.spent_words());
    }

    #[test]
    fn a_spent_trigger_forgotten_long_ago_still_fails_when_named_again() {
        let late = finished_instance(3);
        // A late duplicate of instance 3's creation relay, its timer row, and the relay
        // republished (an id reused) then named again: each drove a commit long ago.
        for extra in [
            vec![late[1].clone()],
            vec![late[3].clone()],
            vec![late[0].clone(), late[1].clone()],
            vec![late[2].clone(), late[3].clone()],
        ] {
            let mut h = many_finished(5_000);
            h.extend(extra);
            assert!(fails(&feed(&mut OneTriggerOneStep::default(), h)));
        }
    }
}

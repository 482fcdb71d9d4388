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
//! A bug that would still pass: a runtime that runs the right step but for the wrong
//! *delivery* of the right relay (two deliveries of one message both executing, the second
//! rejected by the claim) — that is no-double-resume's to judge, not this checker's.

use std::collections::BTreeSet;
use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::dense::{DenseMap, DenseSet};
use crate::event::{ModelEvent, TriggerRef};
use crate::ids::{InstanceId, MessageId};
use crate::view::ModelView;

/// Issued triggers and the ones already spent.
#[derive(Default)]
pub struct OneTriggerOneStep {
    /// Message → (instance, step) it was published for.
    relays: DenseMap<MessageId, (InstanceId, u32)>,
    /// Timer rows written: (instance, step).
    timers: BTreeSet<(InstanceId, u32)>,
    /// Messages that drove a commit.
    spent_relays: DenseSet<MessageId>,
    /// Timer rows that drove a commit: (instance, expects).
    spent_timers: BTreeSet<(InstanceId, u64)>,
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
                self.relays.insert(*message, (*instance, *step));
            }
            ModelEvent::TimerScheduled { instance, step, .. } => {
                self.timers.insert((*instance, *step));
            }
            ModelEvent::CommitAccepted { instance, exec, trigger, based_on, .. } => {
                let step = based_on + 1;
                match *trigger {
                    TriggerRef::Message(message) => {
                        match self.relays.get(message) {
                            None => {
                                return Check::Fail(format!(
                                    "execution {} committed step {step} of instance {} on relay m{}, which was never published",
                                    exec.0, instance.0, message.0
                                ))
                            }
                            Some(&(for_instance, _)) if for_instance != *instance => {
                                return Check::Fail(format!(
                                    "execution {} committed step {step} of instance {} on relay m{}, published for instance {} (R25)",
                                    exec.0, instance.0, message.0, for_instance.0
                                ))
                            }
                            Some(&(_, for_step)) if u64::from(for_step) != step => {
                                return Check::Fail(format!(
                                    "execution {} committed step {step} of instance {} on relay m{}, published for step {for_step}: a stale or duplicate trigger advanced another step (R25)",
                                    exec.0, instance.0, message.0
                                ))
                            }
                            Some(_) => {}
                        }
                        if !self.spent_relays.insert(message) {
                            return Check::Fail(format!(
                                "relay m{} drove a second commit (execution {}, step {step} of instance {}) (R25)",
                                message.0, exec.0, instance.0
                            ));
                        }
                    }
                    TriggerRef::TimerRow { expects } => {
                        if expects != *based_on {
                            return Check::Fail(format!(
                                "execution {} committed step {step} of instance {} on the timer row written for step {} (R25)",
                                exec.0,
                                instance.0,
                                expects + 1
                            ));
                        }
                        let written = u32::try_from(step).is_ok_and(|s| self.timers.contains(&(*instance, s)));
                        if !written {
                            return Check::Fail(format!(
                                "execution {} committed step {step} of instance {} on a timer row never written for it (R25)",
                                exec.0, instance.0
                            ));
                        }
                        if !self.spent_timers.insert((*instance, expects)) {
                            return Check::Fail(format!(
                                "the timer row of instance {} for step {step} drove a second commit (execution {}) (R25)",
                                instance.0, exec.0
                            ));
                        }
                    }
                }
            }
            _ => {}
        }
        Check::Ok
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
        let owner = OwnerId::lane(ProcessId(1), 0);
        ModelEvent::CommitAccepted {
            instance: InstanceId(0),
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
}

//! bounce-meter-agrees (eventually; R13): the runtime's claim-bounce meter, split by relay
//! and timer, counts the bounces the store witnessed on each path — no more, and no fewer
//! than the lanes certainly heard. R13 makes the meter the rollout's observable ("a
//! mis-route shows up as a number going up"): a meter that under-counts hides exactly the
//! contention it exists to show, and one that over-counts cries wolf.
//!
//! The meter is read as the harness reads it — a scrape of the runtime's exported counter
//! at the end of the run (`bounce-meter`, an executor witness: the harness's reading of the
//! number, not the runtime's account of what it did). It is judged against the store:
//! - **at most** the store's refusals on that path (`claim-refused`; relay and
//!   pull-completion count as relay; a migration's 409 is no resume bouncing);
//! - **at least** the refusals a lane certainly heard: a refusal followed by the broker's
//!   requeue of the very delivery it named (relay), or by the store's deferral of the timer
//!   row asked by the refusing task (timer) — a lane gives its trigger back only after the
//!   refusal's reply reached it. Each give-back answers the latest refusal of its delivery
//!   or task at most once, and a refusal whose reply the environment lost (`call-struck`),
//!   or whose task was aborted before the give-back (`task-aborted`: the reply may still
//!   have been on its way), may never have been heard — nor one the store answered after
//!   its task was aborted (the claim was still on the wire: nobody was there to hear it).
//!
//! The quiet scenario judges it like every other: this is about the meter's honesty, which
//! `quiet-bounce-meter` (the meter's level in a run without contention) takes for granted.
//!
//! A bug that would still pass: a meter that misses only refusals whose lane never gave
//! the trigger back afterwards (its process crashed just after the reply) — those are
//! neither certainly heard nor certainly missed.

use std::collections::BTreeMap;
use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::ModelEvent;
use crate::ids::{ExecId, ResumePath};
use crate::view::ModelView;

/// Counts on one path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counts {
    /// Refusals the store witnessed.
    refused: u32,
    /// Refusals a lane certainly heard.
    heard: u32,
}

/// What the checker has counted.
#[derive(Default)]
pub struct BounceMeterAgrees {
    relay: Counts,
    timer: Counts,
    /// Relay refusals not yet answered by a requeue, by the delivery they named: the
    /// execution and the task that asked.
    unanswered_relays: BTreeMap<u32, (ExecId, Option<u64>)>,
    /// Timer refusals not yet answered by a deferral, by the task that asked.
    unanswered_timers: BTreeMap<u64, ExecId>,
    /// The meter as the harness read it: (relay, timer).
    meter: Option<(u32, u32)>,
    /// Tasks witnessed aborted.
    aborted: crate::id_bits::IdBits,
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "bounce-meter-agrees",
        kind: CheckerKind::Eventually,
        description: "the claim-bounce meter counts, by relay and timer, no more than the store's refusals and no fewer than the lanes certainly heard",
        rules: &["R13"],
        factory: Arc::new(|| Box::new(BounceMeterAgrees::default())),
    }
}

impl Checker<ModelEvent, ModelView> for BounceMeterAgrees {
    fn interest(&self) -> u64 {
        use crate::event::tag::*;
        sutra_sim_core::tag_mask(&[
            CLAIM_REFUSED,
            RELAY_REQUEUED,
            TIMER_DEFERRED,
            CALL_STRUCK,
            TASK_ABORTED,
            BOUNCE_METER,
        ])
    }

    fn name(&self) -> &str {
        "bounce-meter-agrees"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Eventually
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, _view: &ModelView) -> Check {
        match &event.kind {
            ModelEvent::ClaimRefused { exec, path, delivery, task, .. } => match path {
                ResumePath::Relay | ResumePath::PullCompletion => {
                    self.relay.refused += 1;
                    let unheard = task.is_some_and(|t| self.aborted.contains(t));
                    if let Some(d) = delivery.filter(|_| !unheard).as_ref() {
                        self.unanswered_relays.insert(*d, (*exec, *task));
                    }
                }
                ResumePath::Timer => {
                    self.timer.refused += 1;
                    if let Some(t) = task.filter(|&t| !self.aborted.contains(t)).as_ref() {
                        self.unanswered_timers.insert(*t, *exec);
                    }
                }
                ResumePath::Migration => {}
            },
            ModelEvent::CallStruck {
                exec,
                call: crate::event::StoreCall::Claim,
                fault: crate::event::CallFault::ReplyLost,
                ..
            } => {
                self.unanswered_relays.retain(|_, (e, _)| e != exec);
                self.unanswered_timers.retain(|_, e| e != exec);
            }
            // An aborted task may never have heard a refusal still on its way back: the
            // lane's next worker gives the trigger back whatever the answer was.
            ModelEvent::TaskAborted { task, .. } => {
                self.aborted.insert(*task);
                self.unanswered_relays.retain(|_, (_, t)| *t != Some(*task));
                self.unanswered_timers.remove(task);
            }
            ModelEvent::RelayRequeued { delivery: Some(d), .. } => {
                if self.unanswered_relays.remove(d).is_some() {
                    self.relay.heard += 1;
                }
            }
            ModelEvent::TimerDeferred { task: Some(t), .. } => {
                if self.unanswered_timers.remove(t).is_some() {
                    self.timer.heard += 1;
                }
            }
            ModelEvent::BounceMeter { relay, timer } => self.meter = Some((*relay, *timer)),
            _ => {}
        }
        Check::Ok
    }

    fn at_end(&mut self, _view: &ModelView) -> Check {
        // A history that never read the meter has nothing to compare.
        let Some((relay, timer)) = self.meter else { return Check::Ok };
        for (name, read, counts) in [("relay", relay, self.relay), ("timer", timer, self.timer)] {
            if read > counts.refused {
                return Check::Fail(format!(
                    "the bounce meter reads {read} {name} bounces, but the store refused only {} claims on the {name} path: it over-counts (R13)",
                    counts.refused
                ));
            }
            if read < counts.heard {
                return Check::Fail(format!(
                    "the bounce meter reads {read} {name} bounces, but lanes gave back {} refused {name} triggers after hearing the refusal: it under-counts (R13)",
                    counts.heard
                ));
            }
        }
        Check::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed};
    use crate::ids::{InstanceId, MessageId, OwnerId, ProcessId};

    fn refused(exec: u32, path: ResumePath, delivery: Option<u32>, task: u64) -> ModelEvent {
        ModelEvent::ClaimRefused {
            instance: InstanceId(0),
            exec: ExecId(exec),
            owner: OwnerId::lane(ProcessId(1), 0),
            path,
            holder: OwnerId::lane(ProcessId(2), 0),
            task: Some(task),
            process: Some(ProcessId(1)),
            delivery,
        }
    }

    fn requeued(delivery: u32) -> ModelEvent {
        ModelEvent::RelayRequeued {
            instance: InstanceId(0),
            message: MessageId(1),
            delay_ns: 1,
            delivery: Some(delivery),
        }
    }

    fn deferred(task: u64) -> ModelEvent {
        ModelEvent::TimerDeferred { instance: InstanceId(0), expects: 1, attempt: 1, due_ns: 0, task: Some(task) }
    }

    fn meter(relay: u32, timer: u32) -> ModelEvent {
        ModelEvent::BounceMeter { relay, timer }
    }

    /// Two relay refusals given back, one timer refusal deferred.
    fn bounces() -> Vec<(u64, ModelEvent)> {
        vec![
            (1, refused(1, ResumePath::Relay, Some(5), 7)),
            (2, requeued(5)),
            (3, refused(2, ResumePath::PullCompletion, Some(6), 7)),
            (4, requeued(6)),
            (5, refused(3, ResumePath::Timer, None, 8)),
            (6, deferred(8)),
        ]
    }

    #[test]
    fn a_meter_that_counts_what_the_store_refused_passes() {
        let mut h = bounces();
        h.push((9, meter(2, 1)));
        assert_eq!(feed(&mut BounceMeterAgrees::default(), h), Check::Ok);
    }

    #[test]
    fn fires_on_a_meter_that_under_counts_a_path() {
        for read in [meter(1, 1), meter(2, 0), meter(0, 0)] {
            let mut h = bounces();
            h.push((9, read));
            assert!(fails(&feed(&mut BounceMeterAgrees::default(), h)));
        }
    }

    #[test]
    fn fires_on_a_meter_that_over_counts_or_mixes_the_paths() {
        for read in [meter(3, 1), meter(2, 2), meter(3, 0)] {
            let mut h = bounces();
            h.push((9, read));
            assert!(fails(&feed(&mut BounceMeterAgrees::default(), h)));
        }
    }

    #[test]
    fn a_refusal_whose_reply_was_lost_need_not_be_counted() {
        let lost = ModelEvent::CallStruck {
            instance: InstanceId(0),
            exec: ExecId(1),
            call: crate::event::StoreCall::Claim,
            fault: crate::event::CallFault::ReplyLost,
            task: Some(7),
        };
        // Refused, reply lost; the claim sent again was granted and the step failed: requeued.
        let h = vec![(1, refused(1, ResumePath::Relay, Some(5), 7)), (1, lost), (3, requeued(5)), (9, meter(0, 0))];
        assert_eq!(feed(&mut BounceMeterAgrees::default(), h), Check::Ok);
    }

    #[test]
    fn a_refusal_whose_task_was_aborted_before_the_give_back_need_not_be_counted() {
        // swarm seed 6052: the reply was delayed by a latency spike, the task aborted before
        // it arrived, and the lane's next worker requeued the delivery.
        let aborted = ModelEvent::TaskAborted { replica: 0, process: ProcessId(1), lane: 0, task: 7 };
        let h = vec![
            (1, refused(1, ResumePath::Relay, Some(5), 7)),
            (200, aborted),
            (300, requeued(5)),
            (900, meter(0, 0)),
        ];
        assert_eq!(feed(&mut BounceMeterAgrees::default(), h), Check::Ok);
    }

    #[test]
    fn a_refusal_landing_after_its_task_was_aborted_need_not_be_counted() {
        // real-world seed 10908: the claim was still on the wire when the task was aborted;
        // the store refused it after, and the exit path requeued the delivery.
        let aborted = ModelEvent::TaskAborted { replica: 0, process: ProcessId(1), lane: 0, task: 7 };
        let h = vec![
            (1, aborted),
            (200, refused(1, ResumePath::Relay, Some(5), 7)),
            (300, requeued(5)),
            (900, meter(0, 0)),
        ];
        assert_eq!(feed(&mut BounceMeterAgrees::default(), h), Check::Ok);
        // Another task's refusal is heard as before.
        let aborted = ModelEvent::TaskAborted { replica: 0, process: ProcessId(1), lane: 0, task: 9 };
        let h = vec![
            (1, aborted),
            (200, refused(1, ResumePath::Relay, Some(5), 7)),
            (300, requeued(5)),
            (900, meter(0, 0)),
        ];
        assert!(fails(&feed(&mut BounceMeterAgrees::default(), h)));
    }

    #[test]
    fn a_history_that_never_read_the_meter_is_not_judged() {
        assert_eq!(feed(&mut BounceMeterAgrees::default(), bounces()), Check::Ok);
    }
}

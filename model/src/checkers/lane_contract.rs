//! lane-contract (always; L1–L6, L10): on every state lane, one turn at a time, turns in
//! submission order, and no reentrant entry — a reentrant call must surface as an error at
//! its call site, which in a correct model never happens. (A reentrant call that is not
//! detected deadlocks its lane; the executor reports that as a Hang naming the lane.)
//!
//! **What it forgets.** A lane with nothing waiting and no turn open is in the state a
//! lane never seen is in, so it is dropped when its turn ends empty: the checker holds the
//! lanes with work in flight, not every lane of every process a long history has had.

use std::collections::VecDeque;
use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::dense::DenseMap;
use crate::event::{Component, LaneAction, ModelEvent};
use crate::ids::ProcessId;
use crate::view::ModelView;

#[derive(Default)]
struct LaneState {
    waiting: Waiting,
    open_turn: Option<u64>,
}

/// A lane's items submitted and not yet started, in submission order. The first is held
/// apart: a lane is dropped when its turn ends with nothing waiting, so a queue of its own
/// would be allocated anew for nearly every item; only the items behind a waiting one
/// need the deque.
#[derive(Default)]
struct Waiting {
    /// The item first in line; `None` only when nothing waits (`rest` empty too).
    first: Option<u64>,
    /// The items behind it.
    rest: VecDeque<u64>,
}

impl Waiting {
    fn push_back(&mut self, item: u64) {
        if self.first.is_none() {
            self.first = Some(item);
        } else {
            self.rest.push_back(item);
        }
    }

    fn pop_front(&mut self) -> Option<u64> {
        let first = self.first.take();
        self.first = self.rest.pop_front();
        first
    }

    fn is_empty(&self) -> bool {
        debug_assert!(self.first.is_some() || self.rest.is_empty(), "nothing waits behind an empty front");
        self.first.is_none()
    }
}

/// Per lane: items submitted and not started, and the open turn.
#[derive(Default)]
pub struct LaneContract {
    /// Indexed by [`lane_index`].
    lanes: DenseMap<u32, LaneState>,
}

/// A lane's dense index: its process, then its component.
fn lane_index(process: ProcessId, component: Component) -> u32 {
    process.0 * Component::COUNT as u32 + component.index() as u32
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "lane-contract",
        kind: CheckerKind::Always,
        description: "state lanes run one turn at a time, in FIFO order, and are never re-entered",
        rules: &["L1", "L2", "L3", "L4", "L5", "L6", "L10"],
        factory: Arc::new(|| Box::new(LaneContract::default())),
    }
}

impl Checker<ModelEvent, ModelView> for LaneContract {
    fn interest(&self) -> u64 {
        sutra_sim_core::tag_mask(&[crate::event::tag::LANE])
    }

    fn name(&self) -> &str {
        "lane-contract"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, _view: &ModelView) -> Check {
        let ModelEvent::Lane { process, component, action, .. } = &event.kind else { return Check::Ok };
        let lane = self.lanes.get_or_insert_with(lane_index(*process, *component), LaneState::default);
        // The lane's name is only needed for a failure message: built lazily.
        let name = || format!("p{}:{component:?}", process.0);
        match action {
            LaneAction::Submitted(item) => lane.waiting.push_back(*item),
            LaneAction::TurnStarted(item) => {
                if let Some(open) = lane.open_turn {
                    return Check::Fail(format!(
                        "lane {} started item {item} while item {open}'s turn was open (L1)",
                        name()
                    ));
                }
                match lane.waiting.pop_front() {
                    Some(first) if first == *item => {}
                    Some(first) => {
                        return Check::Fail(format!(
                            "lane {} ran item {item} before item {first}, submitted earlier (L2)",
                            name()
                        ))
                    }
                    None => return Check::Fail(format!("lane {} ran item {item}, which was never submitted", name())),
                }
                lane.open_turn = Some(*item);
            }
            LaneAction::TurnEnded(item) => {
                if lane.open_turn != Some(*item) {
                    return Check::Fail(format!("lane {} ended item {item}'s turn, which was not open", name()));
                }
                lane.open_turn = None;
                if lane.waiting.is_empty() {
                    self.lanes.remove(lane_index(*process, *component));
                }
            }
            LaneAction::ReentrantRefused => {
                return Check::Fail(format!(
                    "lane {} was re-entered from its own turn; the call was refused at its call site (L3)",
                    name()
                ))
            }
            LaneAction::ClosedRefused => {}
        }
        Check::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed};

    fn lane(action: LaneAction) -> ModelEvent {
        ModelEvent::Lane { process: ProcessId(1), component: Component::Bindings, action, task: None }
    }

    #[test]
    fn fires_on_overlapping_turns() {
        let h = vec![
            (1, lane(LaneAction::Submitted(0))),
            (1, lane(LaneAction::Submitted(1))),
            (1, lane(LaneAction::TurnStarted(0))),
            (2, lane(LaneAction::TurnStarted(1))),
        ];
        assert!(fails(&feed(&mut LaneContract::default(), h)));
    }

    #[test]
    fn fires_on_out_of_order_turns() {
        let h = vec![
            (1, lane(LaneAction::Submitted(0))),
            (1, lane(LaneAction::Submitted(1))),
            (1, lane(LaneAction::TurnStarted(1))),
        ];
        assert!(fails(&feed(&mut LaneContract::default(), h)));
    }

    #[test]
    fn fires_on_a_reentrant_call() {
        assert!(fails(&feed(&mut LaneContract::default(), vec![(1, lane(LaneAction::ReentrantRefused))])));
    }

    #[test]
    fn accepts_serial_fifo_turns() {
        let h = vec![
            (1, lane(LaneAction::Submitted(0))),
            (1, lane(LaneAction::Submitted(1))),
            (1, lane(LaneAction::TurnStarted(0))),
            (1, lane(LaneAction::TurnEnded(0))),
            (2, lane(LaneAction::TurnStarted(1))),
            (2, lane(LaneAction::TurnEnded(1))),
        ];
        assert_eq!(feed(&mut LaneContract::default(), h), Check::Ok);
    }

    /// A long history's lanes come and go: an idle lane is forgotten, and one that comes
    /// back is judged as a fresh one, which is what an idle lane is.
    #[test]
    fn idle_lanes_are_forgotten_and_judged_the_same_when_they_come_back() {
        let on = |process: u32, action| ModelEvent::Lane {
            process: ProcessId(process),
            component: Component::Bindings,
            action,
            task: None,
        };
        let mut checker = LaneContract::default();
        let mut h = Vec::new();
        for p in 0..20_000 {
            h.push((1, on(p, LaneAction::Submitted(0))));
            h.push((1, on(p, LaneAction::TurnStarted(0))));
            h.push((1, on(p, LaneAction::TurnEnded(0))));
        }
        assert_eq!(feed(&mut checker, h), Check::Ok);
        assert_eq!(checker.lanes.len(), 0);
        assert!(checker.lanes.capacity_in_slots() < 20_000, "{} slots", checker.lanes.capacity_in_slots());
        let back = vec![
            (2, on(3, LaneAction::Submitted(1))),
            (2, on(3, LaneAction::Submitted(2))),
            (2, on(3, LaneAction::TurnStarted(2))),
        ];
        assert!(fails(&feed(&mut checker, back)));
    }
}

//! The lane registry: the executor's view of the state lanes (`lane.rs`), for hang
//! detection.
//!
//! A lane tells the executor when a task takes or gives up its turn and when a task waits
//! on a lane. From that the executor finds the two hangs that timers can hide: a turn held
//! past the scenario's stall bound ([`State::stalled_turns`]), and a wait-for cycle among
//! turns, which ends the run at the next step.

use std::rc::Rc;
use std::time::Duration;

use crate::ids::{LaneKey, TaskId};
use crate::time::SimTime;

use super::ambient::with_state;
use super::state::{LaneInfo, State};

/// Upper bound on state lanes registered in one run.
pub const LANES_MAX: usize = 1 << 12;

/// Registers a state lane for hang detection.
pub(crate) fn register_lane(name: Rc<str>) -> LaneKey {
    with_state(|s| {
        assert!(s.lanes.len() < LANES_MAX, "more than {LANES_MAX} state lanes");
        s.lanes.push(LaneInfo { name, turn_holder: None, turn_started: SimTime::ZERO });
        LaneKey((s.lanes.len() - 1) as u32)
    })
}

/// The lane whose turn the current task is executing.
pub(crate) fn current_lane() -> Option<LaneKey> {
    with_state(|s| s.current.and_then(|id| s.task(id)).and_then(|t| t.on_lane))
}

/// Marks the current task as executing a turn of `lane` (or none).
pub(crate) fn set_turn(lane: LaneKey, holder: Option<TaskId>) {
    with_state(|s| {
        let now = s.now;
        let was_held = s.lanes[lane.0 as usize].turn_holder.is_some();
        if let Some(old) = s.lanes[lane.0 as usize].turn_holder.take() {
            if let Some(t) = s.task_mut(old) {
                t.on_lane = None;
            }
        }
        if let Some(id) = holder {
            if let Some(t) = s.task_mut(id) {
                t.on_lane = Some(lane);
            }
        }
        let info = &mut s.lanes[lane.0 as usize];
        info.turn_holder = holder;
        info.turn_started = now;
        if was_held {
            s.held_lanes.retain(|&key| key != lane);
        }
        if holder.is_some() {
            // The turn (re)starts now: it is the newest.
            debug_assert!(!s.held_lanes.contains(&lane), "a lane's turn is listed once");
            s.held_lanes.push(lane);
        }
        debug_assert!(s.held_lanes.len() <= s.lanes.len(), "only registered lanes are held");
    })
}

/// Gives `task` the marker of `lane` without making it the turn holder (a broken lane
/// that lets its marker leak to other tasks, for tests).
pub(crate) fn leak_marker(task: TaskId, lane: Option<LaneKey>) {
    with_state(|s| {
        if let Some(t) = s.task_mut(task) {
            t.on_lane = lane;
        }
    })
}

/// True if waiting on `lane` would make the current task wait for itself: `lane`'s turn is
/// held by the current task, or by a task that waits (directly, or through the turns of
/// other lanes) on a lane whose turn the current task holds — lane A's turn calling into
/// lane B, whose turn calls back into A (spec 003 §5: reentrancy fails at the call site).
pub(crate) fn turn_waits_on_current_task(lane: LaneKey) -> bool {
    with_state(|s| {
        let Some(me) = s.current else { return false };
        let mut lane = lane;
        for _ in 0..=s.lanes.len() {
            let Some(holder) = s.lanes[lane.0 as usize].turn_holder else { return false };
            if holder == me {
                return true;
            }
            match s.task(holder).and_then(|t| t.waiting_on_lane) {
                Some(next) => lane = next,
                None => return false,
            }
        }
        false
    })
}

/// Records that the current task waits on `lane` (or nothing). If that closes a wait-for
/// cycle among lane turns, the run ends as a hang naming the cycle.
pub(crate) fn set_waiting_on_lane(lane: Option<LaneKey>) {
    with_state(|s| {
        let Some(me) = s.current else { return };
        if let Some(t) = s.task_mut(me) {
            t.waiting_on_lane = lane;
        }
        let Some(start) = lane else { return };
        // Follow holder -> the lane it waits on; reaching `me` again is a cycle. Names are
        // only gathered once a cycle is found, so the common case allocates nothing.
        let mut lane = start;
        let mut hops = 0;
        loop {
            let Some(holder) = s.lanes[lane.0 as usize].turn_holder else { return };
            if holder == me {
                break;
            }
            match s.task(holder).and_then(|t| t.waiting_on_lane) {
                Some(next) if hops < s.lanes.len() => {
                    lane = next;
                    hops += 1;
                }
                _ => return,
            }
        }
        let mut chain = vec![s.lanes[start.0 as usize].name.to_string()];
        let mut lane = start;
        for _ in 0..hops {
            let holder = s.lanes[lane.0 as usize].turn_holder.expect("walked above");
            lane = s.task(holder).and_then(|t| t.waiting_on_lane).expect("walked above");
            chain.push(s.lanes[lane.0 as usize].name.to_string());
        }
        let message = format!("wait-for cycle between lane turns: {}", chain.join(" -> "));
        let stuck = vec![s.describe(me)];
        s.hang = Some((message, stuck));
    })
}

/// The name of a lane.
pub(crate) fn lane_name(lane: LaneKey) -> Rc<str> {
    with_state(|s| s.lanes[lane.0 as usize].name.clone())
}

impl State {
    /// True if some lane's current turn started before `now - bound`: only the oldest turn
    /// needs a look. What [`State::stalled_turns`] finds is not empty exactly when this is
    /// true, so the runner asks this after every advance and that only when it is.
    #[inline]
    pub(super) fn turn_held_past(&self, bound: Duration) -> bool {
        let oldest = self.held_lanes.first().map(|key| self.lanes[key.0 as usize].turn_started);
        oldest.is_some_and(|started| self.now.since(started) > bound)
    }

    /// Lanes whose current turn started before `now - bound`: (lane name, task name), in
    /// registration order.
    pub(super) fn stalled_turns(&self, bound: Duration) -> Vec<(String, String)> {
        if !self.turn_held_past(bound) {
            return Vec::new();
        }
        let mut stalled: Vec<_> = self
            .held_lanes
            .iter()
            .map(|key| (key, &self.lanes[key.0 as usize]))
            .filter_map(|(key, lane)| {
                let holder = lane.turn_holder?;
                (self.now.since(lane.turn_started) > bound)
                    .then(|| (*key, lane.name.to_string(), self.describe(holder)))
            })
            .collect();
        // Reported in registration order, whatever order the turns began in.
        stalled.sort_by_key(|(key, _, _)| *key);
        stalled.into_iter().map(|(_, lane, task)| (lane, task)).collect()
    }
}

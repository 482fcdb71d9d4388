//! Nodes: the processes of the simulated world (a replica, a pull worker, the broker).
//!
//! A node owns tasks and a local clock. It can be killed (every task dropped at once, no
//! exit path runs), restarted (a new incarnation runs the node's boot function), paused
//! (its tasks are not polled and its timers are held) and resumed. The local clock is the
//! simulated time seen through the node's offset and drift, so clock-skew faults are data.

use std::rc::Rc;

use serde::{Deserialize, Serialize};

use crate::time::SimTime;

/// Identifies a node for the lifetime of a run (across incarnations).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The world node: the environment (fault injectors, drivers). Never killed or paused.
    pub const WORLD: NodeId = NodeId(0);
}

/// Whether a node's tasks run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum NodeStatus {
    /// Running normally.
    Alive,
    /// Frozen: not polled, timers held, resumes where it was.
    Paused,
    /// Killed: its tasks were dropped; only a restart brings it back.
    Dead,
}

/// A node's view of time: `local = sim + offset + sim * drift_ppm / 1e6`, never negative.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeClock {
    /// Constant offset from simulated time, in nanoseconds (may be negative).
    pub offset_ns: i64,
    /// Rate error in parts per million (positive runs fast).
    pub drift_ppm: i32,
}

impl NodeClock {
    /// The local reading at simulated instant `now`.
    pub fn local(&self, now: SimTime) -> SimTime {
        let sim = i128::from(now.0);
        let local = sim + i128::from(self.offset_ns) + sim * i128::from(self.drift_ppm) / 1_000_000;
        SimTime(local.clamp(0, i128::from(u64::MAX)) as u64)
    }
}

/// The function that starts a node's tasks, run at creation and at every restart.
pub type BootFn = Rc<dyn Fn(NodeId)>;

pub(crate) struct Node {
    pub(crate) name: Rc<str>,
    /// Invariant: incremented exactly once per restart; never decreases.
    pub(crate) incarnation: u32,
    pub(crate) status: NodeStatus,
    pub(crate) clock: NodeClock,
    pub(crate) boot: Option<BootFn>,
    /// Tasks woken while the node was paused, in wake order; empty unless paused.
    pub(crate) held: Vec<crate::ids::TaskId>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_applies_offset_and_drift() {
        let c = NodeClock { offset_ns: 5_000, drift_ppm: 1_000 };
        assert_eq!(c.local(SimTime(1_000_000)), SimTime(1_000_000 + 5_000 + 1_000));
        let behind = NodeClock { offset_ns: -10, drift_ppm: 0 };
        assert_eq!(behind.local(SimTime(3)), SimTime(0));
    }
}

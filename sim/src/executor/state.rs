//! The state of one simulated world: the task table, the ready list, the timer queue, the
//! nodes, the entropy source, the strategy and the lane registry, with the invariant of
//! each field.
//!
//! Only data lives here. The behaviour over it is split by concept into the sibling files
//! (`tasks.rs`, `nodes.rs`, `lanes.rs`, `run_loop.rs`), which all build on this file and
//! not on each other's data, so the executor's files import one another without a cycle.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use crate::entropy::Entropy;
use crate::ids::{LaneKey, TaskId, TaskName};
use crate::node::{Node, NodeClock, NodeId, NodeStatus};
use crate::ready::ReadyList;
use crate::strategy::{Scheduler, StrategyConfig};
use crate::time::SimTime;
use crate::timer::TimerQueue;

/// A task's future, boxed so that tasks of every shape share one table.
pub(super) type BoxFuture = Pin<Box<dyn Future<Output = ()>>>;

/// One live task.
pub(super) struct Task {
    /// Invariant: `None` only while the task is being polled (the run loop holds it).
    pub(super) future: Option<BoxFuture>,
    pub(super) node: NodeId,
    pub(super) name: TaskName,
    /// Daemons (periodic roles) do not keep a run alive and are not named in hangs.
    pub(super) daemon: bool,
    /// Invariant: true iff the task id is in `ready` or in its node's `held` list.
    pub(super) queued: bool,
    /// The state lane whose turn this task is executing, if any (the lane marker).
    pub(super) on_lane: Option<LaneKey>,
    /// The lane this task is waiting to enter or waiting on, for wait-for cycle detection.
    pub(super) waiting_on_lane: Option<LaneKey>,
}

/// One entry of the task table.
pub(super) struct Slot {
    /// Invariant: moves on (wrapping) exactly when the slot's task ends, so that the id of
    /// an ended task never names the slot's next task.
    pub(super) generation: u32,
    pub(super) task: Option<Task>,
}

/// Bookkeeping for one registered state lane.
pub(crate) struct LaneInfo {
    pub(crate) name: Rc<str>,
    pub(crate) turn_holder: Option<TaskId>,
    pub(crate) turn_started: SimTime,
}

/// Everything one simulated world holds.
pub(super) struct State {
    /// Invariant: never moves backwards.
    pub(super) now: SimTime,
    pub(super) slots: Vec<Slot>,
    /// Slots without a task, reused last freed first.
    /// Invariant: every slot listed here has no task, and is listed once.
    pub(super) free: Vec<u32>,
    /// Ready tasks of alive nodes, in the order they became ready (front = oldest, which
    /// is index 0 for the strategy).
    pub(super) ready: ReadyList,
    /// Earliest deadline first, ties in registration order.
    /// Invariant: every deadline is later than `now` (a due sleep never registers).
    pub(super) timers: TimerQueue,
    /// Invariant: node 0 is the world node, which is never killed or paused.
    pub(super) nodes: Vec<Node>,
    pub(super) entropy: Entropy,
    pub(super) strategy: Scheduler,
    /// A switched strategy's switch: the first step at or after this many draws hands the
    /// schedule to `switch_to` ([`State::switch_strategy`]); `usize::MAX` for none.
    pub(super) switch_at: usize,
    /// The strategy after the switch.
    pub(super) switch_to: StrategyConfig,
    /// The task being polled.
    pub(super) current: Option<TaskId>,
    /// The node of the task being polled, kept beside it because the trace stamps every
    /// event with it and every sleep reads its clock: what
    /// [`current_node`](State::current_node) answers without a lookup.
    /// Invariant: the node of `current`'s task while that task is alive; the world node
    /// when no task is being polled, or when the polled task has ended during its poll.
    pub(super) current_node: NodeId,
    /// Count of live non-daemon tasks; the run is finished when it reaches zero.
    pub(super) live_work: usize,
    pub(super) polls: u64,
    pub(super) lanes: Vec<LaneInfo>,
    /// The lanes whose turn is held right now, in the order their turns began (so the
    /// first is the oldest turn, and the stall check after each advance reads one entry).
    /// Invariant: exactly the lanes with a `turn_holder`, ordered by `turn_started`.
    pub(super) held_lanes: Vec<LaneKey>,
    /// A hang found by a lane (wait-for cycle), reported at the next step.
    pub(super) hang: Option<(String, Vec<String>)>,
    /// Set by [`finish`](super::finish): end the run now, as finished.
    pub(super) finished: bool,
    /// The run's coverage marks, if it collects them (exploration); `None` costs nothing.
    pub(super) marks: Option<Box<crate::marks::MarkLog>>,
    /// Whether the run's model witnesses the end of a process on a killed node, so that
    /// every kill must be witnessed (`honesty.rs`).
    pub(super) kill_witnesses: bool,
    /// Kills not witnessed yet, oldest first: (node, instant). Empty unless `kill_witnesses`.
    /// Invariant: every entry is of the current instant once a step has judged its events.
    pub(super) unwitnessed_kills: Vec<(NodeId, SimTime)>,
    /// Lies planted by a test (`honesty.rs`); none in any other build.
    #[cfg(test)]
    pub(super) lies: super::honesty::Lies,
}

impl State {
    /// A fresh world drawing from `entropy` and scheduling with `strategy`: time zero, no
    /// task, and only the world node.
    pub(super) fn new(mut entropy: Entropy, strategy: StrategyConfig) -> State {
        let (switch_at, switch_to) = match strategy.switch() {
            Some((at, then)) => (at as usize, then),
            None => (usize::MAX, StrategyConfig::Random),
        };
        let strategy = strategy.scheduler(&mut entropy);
        let world = Node {
            name: Rc::from("world"),
            incarnation: 0,
            status: NodeStatus::Alive,
            clock: NodeClock::default(),
            boot: None,
            held: Vec::new(),
            local_sleepers: Vec::new(),
            clock_steps_ns: 0,
            drift_max_ppm: 0,
        };
        State {
            now: SimTime::ZERO,
            slots: Vec::with_capacity(256),
            free: Vec::new(),
            ready: ReadyList::with_capacity(256),
            timers: TimerQueue::default(),
            nodes: vec![world],
            entropy,
            strategy,
            switch_at,
            switch_to,
            current: None,
            current_node: NodeId::WORLD,
            live_work: 0,
            polls: 0,
            lanes: Vec::new(),
            held_lanes: Vec::new(),
            hang: None,
            finished: false,
            marks: None,
            kill_witnesses: false,
            unwitnessed_kills: Vec::new(),
            #[cfg(test)]
            lies: Default::default(),
        }
    }
}

impl State {
    /// Hands the schedule to the switched strategy's second half: PCT gives every live task
    /// a priority (in slot order) and draws its change points over what is left of its
    /// horizon. Made at a step, so a replay of the run's tape switches at the same step.
    #[cold]
    pub(super) fn switch_strategy(&mut self) {
        self.switch_at = usize::MAX;
        let live = self
            .slots
            .iter()
            .enumerate()
            .filter(|(_, slot)| slot.task.is_some())
            .map(|(i, slot)| TaskId { slot: i as u32, generation: slot.generation });
        self.strategy = self.switch_to.scheduler_from(self.polls, live, &mut self.entropy);
    }
}

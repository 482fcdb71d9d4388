//! The task table: spawning a task into a slot, finding it by id, queuing it when woken,
//! naming it for hangs, and freeing its slot when it ends.
//!
//! A task id carries its slot's generation, so a lookup with the id of an ended task finds
//! nothing: a waker or a timer that outlives its task is harmlessly ignored.

use crate::ids::{TaskId, TaskName};
use crate::node::{Node, NodeId, NodeStatus};
use crate::ready::ReadyList;
use crate::strategy::Strategy;

use super::state::{BoxFuture, Slot, State, Task};

/// Upper bound on live tasks at once; more is a runaway spawn loop.
pub const TASKS_MAX: usize = 1 << 20;

/// The live task `id` names in `slots`, if any. A free function over the one field, so that
/// callers can hold other fields of the state at the same time.
#[inline]
pub(super) fn task_in(slots: &[Slot], id: TaskId) -> Option<&Task> {
    let slot = slots.get(id.slot as usize)?;
    if slot.generation != id.generation {
        return None;
    }
    slot.task.as_ref()
}

/// Queues task `id` if it is alive and not queued yet: on the ready list, or on its node's
/// held list while the node is paused. True if the task is alive (queued now or already).
/// Over the fields it needs, so that the timer loop can wake tasks while it walks the
/// timer queue. Inlined: it runs once per fired timer.
#[inline(always)]
pub(super) fn wake_in(slots: &mut [Slot], nodes: &mut [Node], ready: &mut ReadyList, id: TaskId) -> bool {
    let Some(slot) = slots.get_mut(id.slot as usize) else { return false };
    if slot.generation != id.generation {
        return false;
    }
    let Some(task) = slot.task.as_mut() else { return false };
    if task.queued {
        return true;
    }
    task.queued = true;
    let node = &mut nodes[task.node.0 as usize];
    match node.status {
        NodeStatus::Alive => ready.push_back(id),
        NodeStatus::Paused => node.held.push(id),
        NodeStatus::Dead => unreachable!("a dead node has no tasks"),
    }
    true
}

impl State {
    /// The live task `id` names, if any.
    #[inline]
    pub(super) fn task_mut(&mut self, id: TaskId) -> Option<&mut Task> {
        let slot = self.slots.get_mut(id.slot as usize)?;
        if slot.generation != id.generation {
            return None;
        }
        slot.task.as_mut()
    }

    /// The live task `id` names, if any.
    #[inline]
    pub(super) fn task(&self, id: TaskId) -> Option<&Task> {
        task_in(&self.slots, id)
    }

    /// The node of the task being polled; the world node outside any task.
    #[inline]
    pub(super) fn current_node(&self) -> NodeId {
        debug_assert_eq!(
            self.current_node,
            self.current.and_then(|id| self.task(id)).map(|t| t.node).unwrap_or(NodeId::WORLD),
            "the current node is the current task's, while it is alive"
        );
        self.current_node
    }

    /// `node/task` (and whether the node is paused), for hangs and logs.
    pub(super) fn describe(&self, id: TaskId) -> String {
        match self.task(id) {
            Some(t) => {
                let node = &self.nodes[t.node.0 as usize];
                let paused = if node.status == NodeStatus::Paused { " (node paused)" } else { "" };
                format!("{}/{}{}", node.name, t.name, paused)
            }
            None => format!("<ended task {}>", id.slot),
        }
    }

    /// Frees the task's slot; the caller drops the future outside the borrow.
    pub(super) fn remove_task(&mut self, id: TaskId) -> Option<Task> {
        let slot = self.slots.get_mut(id.slot as usize)?;
        if slot.generation != id.generation {
            return None;
        }
        let task = slot.task.take()?;
        slot.generation = slot.generation.wrapping_add(1);
        if self.current == Some(id) {
            // Ended during its own poll (its node killed from it): the rest of the poll
            // runs on the world node.
            self.current_node = NodeId::WORLD;
        }
        self.free.push(id.slot);
        if task.queued {
            // It woke itself during its last poll and then ended (or was killed while
            // queued): its id must not stay queued, or a later pick would find no task.
            self.ready.retain(|&queued| queued != id);
            self.nodes[task.node.0 as usize].held.retain(|&queued| queued != id);
        }
        if !task.daemon {
            debug_assert!(self.live_work > 0, "live work counts every live non-daemon task");
            self.live_work -= 1;
        }
        let lanes = &mut self.lanes;
        self.held_lanes.retain(|key| {
            let lane = &mut lanes[key.0 as usize];
            let held_by_me = lane.turn_holder == Some(id);
            if held_by_me {
                lane.turn_holder = None;
            }
            !held_by_me
        });
        Some(task)
    }

    /// Puts a new task in a free slot (or a new one) and queues it.
    pub(super) fn spawn(&mut self, node: NodeId, name: TaskName, daemon: bool, future: BoxFuture) -> TaskId {
        let n = &self.nodes[node.0 as usize];
        assert!(n.status != NodeStatus::Dead, "spawn on dead node {}", n.name);
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                assert!(self.slots.len() < TASKS_MAX, "more than {TASKS_MAX} live tasks");
                self.slots.push(Slot { generation: 0, task: None });
                (self.slots.len() - 1) as u32
            }
        };
        debug_assert!(self.slots[slot as usize].task.is_none(), "a free slot holds no task");
        let generation = self.slots[slot as usize].generation;
        let id = TaskId { slot, generation };
        self.slots[slot as usize].task = Some(Task {
            future: Some(future),
            node,
            name,
            daemon,
            queued: false,
            on_lane: None,
            waiting_on_lane: None,
        });
        if !daemon {
            self.live_work += 1;
        }
        let State { strategy, entropy, .. } = self;
        strategy.on_spawn(id, entropy);
        self.wake(id);
        id
    }

    /// Queues the task if it is alive and not queued yet.
    #[inline]
    pub(super) fn wake(&mut self, id: TaskId) {
        wake_in(&mut self.slots, &mut self.nodes, &mut self.ready, id);
    }
}

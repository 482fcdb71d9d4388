//! Node faults and bookkeeping in the running world: adding a node, killing it (all its
//! futures dropped at once, no exit path runs), restarting it as a new incarnation,
//! pausing and resuming it, and reading or skewing its clock.
//!
//! Each fault is logged at `debug` level under the executor's log target, after the state
//! is released, so a subscriber may look at the world while it formats the record.

use std::rc::Rc;

use crate::ids::TaskId;
use crate::node::{BootFn, Node, NodeClock, NodeId, NodeStatus};

use super::ambient::with_state;
use super::ambient::LOG_TARGET;
use super::state::Task;

/// Upper bound on nodes in one run.
pub const NODES_MAX: usize = 1 << 12;

/// Adds a node (alive, incarnation 0, true clock). Its boot function, if given, runs now
/// and again at every restart; it spawns the node's tasks.
pub fn add_node(name: impl Into<Rc<str>>, boot: Option<BootFn>) -> NodeId {
    let id = with_state(|s| {
        assert!(s.nodes.len() < NODES_MAX, "more than {NODES_MAX} nodes");
        s.nodes.push(Node {
            name: name.into(),
            incarnation: 0,
            status: NodeStatus::Alive,
            clock: NodeClock::default(),
            boot: boot.clone(),
            held: Vec::new(),
            local_sleepers: Vec::new(),
            clock_steps_ns: 0,
            drift_max_ppm: 0,
        });
        NodeId((s.nodes.len() - 1) as u32)
    });
    tracing::debug!(target: LOG_TARGET, node = %node_name(id), "node added");
    if let Some(boot) = boot {
        boot(id);
    }
    id
}

/// The node's name.
pub fn node_name(node: NodeId) -> Rc<str> {
    with_state(|s| s.nodes[node.0 as usize].name.clone())
}

/// Every node's name so far, indexed by [`NodeId`] (the world node first). For stories and
/// timelines, which name nodes after the run.
pub fn node_names() -> Vec<Rc<str>> {
    with_state(|s| s.nodes.iter().map(|n| n.name.clone()).collect())
}

/// The node's status.
pub fn node_status(node: NodeId) -> NodeStatus {
    with_state(|s| s.nodes[node.0 as usize].status)
}

/// The node's incarnation: 0 at creation, +1 at every restart.
pub fn incarnation(node: NodeId) -> u32 {
    with_state(|s| s.nodes[node.0 as usize].incarnation)
}

/// Sets the node's clock offset and drift (clock-skew faults). The node's pending sleeps
/// follow the new clock: a step forward ends them early, a step back makes them late.
pub fn set_clock(node: NodeId, clock: NodeClock) {
    assert!(clock.drift_ppm > -1_000_000, "a clock with drift {} ppm does not run forwards", clock.drift_ppm);
    with_state(|s| {
        let now = s.now;
        let n = &mut s.nodes[node.0 as usize];
        if n.clock == clock {
            return;
        }
        let was_exact = n.clock.is_exact();
        super::honesty::clock_changed(n, now, n.clock, clock);
        n.clock = clock;
        // Every sleeper measures its deadline again; one still due later sets a new timer.
        // Sleeps by an exact clock are not listed (the usual case pays nothing for this), so
        // a clock skewed for the first time wakes every task of the node.
        let sleepers: Vec<TaskId> = if was_exact {
            s.slots
                .iter()
                .enumerate()
                .filter(|(_, slot)| slot.task.as_ref().is_some_and(|t| t.node == node))
                .map(|(i, slot)| TaskId { slot: i as u32, generation: slot.generation })
                .collect()
        } else {
            std::mem::take(&mut s.nodes[node.0 as usize].local_sleepers)
        };
        for id in sleepers {
            s.wake(id);
        }
    });
    tracing::debug!(
        target: LOG_TARGET,
        node = %node_name(node),
        offset_ns = clock.offset_ns,
        drift_ppm = clock.drift_ppm,
        "node clock set"
    );
}

/// The node's clock parameters.
pub fn clock(node: NodeId) -> NodeClock {
    with_state(|s| s.nodes[node.0 as usize].clock)
}

/// Kills the node: every task of it is dropped at once and no exit path runs. Killing the
/// node of the running task takes effect for that task at its next await. Killing a dead
/// node does nothing; the world node cannot be killed.
pub fn kill(node: NodeId) {
    assert!(node != NodeId::WORLD, "the world node cannot be killed");
    let dropped: Option<Vec<Task>> = with_state(|s| {
        let n = &mut s.nodes[node.0 as usize];
        if n.status == NodeStatus::Dead {
            return None;
        }
        n.status = NodeStatus::Dead;
        n.held.clear();
        n.local_sleepers.clear();
        super::honesty::kill_recorded(s, node);
        let ids: Vec<TaskId> = s
            .slots
            .iter()
            .enumerate()
            .filter(|(_, slot)| slot.task.as_ref().is_some_and(|t| t.node == node))
            .map(|(i, slot)| TaskId { slot: i as u32, generation: slot.generation })
            .collect();
        s.ready.retain(|id| !ids.contains(id));
        for &id in &ids {
            // Taken off the ready list (and `held`) above, all at once.
            s.task_mut(id).expect("listed just above").queued = false;
        }
        Some(ids.into_iter().filter_map(|id| s.remove_task(id)).collect())
    });
    let Some(dropped) = dropped else { return };
    tracing::debug!(target: LOG_TARGET, node = %node_name(node), tasks = dropped.len(), "node killed");
    drop(dropped);
}

/// Restarts a dead node as a new incarnation (its clock kept) and runs its boot function.
pub fn restart(node: NodeId) {
    let (boot, incarnation) = with_state(|s| {
        let n = &mut s.nodes[node.0 as usize];
        assert!(n.status == NodeStatus::Dead, "restart of node {} which is not dead", n.name);
        n.status = NodeStatus::Alive;
        n.incarnation += 1;
        (n.boot.clone(), n.incarnation)
    });
    tracing::debug!(target: LOG_TARGET, node = %node_name(node), incarnation, "node restarted");
    if let Some(boot) = boot {
        boot(node);
    }
}

/// Freezes the node: its tasks are not polled and its timers are held until [`resume`].
pub fn pause(node: NodeId) {
    assert!(node != NodeId::WORLD, "the world node cannot be paused");
    let paused = with_state(|s| {
        if s.nodes[node.0 as usize].status != NodeStatus::Alive {
            return false;
        }
        let (mine, others): (Vec<TaskId>, Vec<TaskId>) =
            s.ready.as_slice().iter().partition(|id| s.task(**id).is_some_and(|t| t.node == node));
        #[cfg(test)]
        let (mine, others) =
            if s.lies.pause_leaves_ready { (Vec::new(), s.ready.as_slice().to_vec()) } else { (mine, others) };
        s.ready.clear();
        s.ready.extend(others);
        let n = &mut s.nodes[node.0 as usize];
        debug_assert!(n.held.is_empty(), "an alive node holds no woken tasks");
        n.status = NodeStatus::Paused;
        n.held = mine;
        true
    });
    if paused {
        tracing::debug!(target: LOG_TARGET, node = %node_name(node), "node paused");
    }
}

/// Unfreezes a paused node: tasks woken meanwhile become ready, in wake order.
pub fn resume(node: NodeId) {
    let resumed = with_state(|s| {
        let n = &mut s.nodes[node.0 as usize];
        if n.status != NodeStatus::Paused {
            return false;
        }
        n.status = NodeStatus::Alive;
        let held = std::mem::take(&mut n.held);
        s.ready.extend(held);
        true
    });
    if resumed {
        tracing::debug!(target: LOG_TARGET, node = %node_name(node), "node resumed");
    }
}

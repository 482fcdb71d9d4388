//! Process pause: the replica freezes (GC, VM pause) for shorter or longer than the claim
//! timeout, then carries on where it was — possibly as a live-but-slow owner whose claims
//! were swept meanwhile (R19).

use std::rc::Rc;

use sutra_sim_core::executor::{self, sleep};
use sutra_sim_core::{NodeId, NodeStatus};

use crate::event::ModelEvent;
use crate::streams;
use crate::world::World;

/// Draws whether to pause a replica this tick, which, and for how long.
pub fn maybe_pause(world: &Rc<World>) {
    if !world.fault(world.faults.process_pause_per_tick) {
        return;
    }
    let alive: Vec<(u32, NodeId)> = world
        .replicas
        .borrow()
        .iter()
        .enumerate()
        .filter(|(_, r)| executor::node_status(r.node) == NodeStatus::Alive)
        .map(|(i, r)| (i as u32, r.node))
        .collect();
    if alive.is_empty() {
        return;
    }
    let (index, node) = alive[executor::choose_in(streams::FAULTS, alive.len() as u32) as usize];
    let duration = streams::millis_up_to(streams::FAULTS, world.scenario.faults.pause_max);
    let process = world.replicas.borrow()[index as usize].process;
    executor::pause(node);
    world
        .tracer
        .emit_on(node, ModelEvent::ReplicaPaused { replica: index, process, for_ms: duration.as_millis() as u64 });
    let w = world.clone();
    executor::spawn_daemon_on(NodeId::WORLD, "fault:resume", async move {
        sleep(duration).await;
        resume(&w, index, node);
    });
}

/// Resumes a paused replica (no-op if it is not paused).
pub fn resume(world: &Rc<World>, index: u32, node: NodeId) {
    if executor::node_status(node) != NodeStatus::Paused {
        return;
    }
    executor::resume(node);
    let process = world.replicas.borrow()[index as usize].process;
    world.tracer.emit_on(node, ModelEvent::ReplicaResumed { replica: index, process });
}

//! Process pause: the replica freezes (GC, VM pause) for shorter or longer than the claim
//! timeout, then carries on where it was — possibly as a live-but-slow owner whose claims
//! were swept meanwhile (R19). Variant: an orchestrator starts a replacement with the same
//! replica identity while the old process is frozen; the old one wakes later as a zombie.

use std::rc::Rc;
use std::time::Duration;

use sutra_sim_core::executor::{self, sleep};
use sutra_sim_core::{NodeId, NodeStatus};

use crate::ctx::FaultGate;
use crate::event::ModelEvent;
use crate::faults::kind::FaultKind;
use crate::streams;
use crate::world::World;

/// Draws whether to pause a replica this tick, which, and for how long.
pub fn maybe_pause(world: &Rc<World>) {
    if !world.ctx.fires(FaultGate::tick(FaultKind::ProcessPause), world.ctx.faults().process_pause.per_tick) {
        return;
    }
    let alive = super::crash::alive_replicas(world);
    if alive.is_empty() {
        return;
    }
    let (index, node) = alive[executor::choose_in(streams::FAULTS, alive.len() as u32) as usize];
    pause_for(world, index, node, streams::millis_up_to(streams::FAULTS, world.ctx.faults().process_pause.pause_max));
}

/// Freezes replica `index` for `duration`, maybe starting a replacement meanwhile.
pub fn pause_for(world: &Rc<World>, index: u32, node: NodeId, duration: Duration) {
    let process = world.cluster.slots.borrow()[index as usize].process;
    executor::pause(node);
    world.ctx.tracer.emit_on(
        node,
        ModelEvent::ReplicaPaused { replica: index, process, for_ns: sutra_sim_core::time::duration_nanos(duration) },
    );
    world.ctx.report(FaultKind::ProcessPause, Some(index), duration);
    if world.ctx.faults().process_pause.replacement.draw(streams::FAULTS) {
        start_replacement(world, index, node);
    }
    let w = world.clone();
    executor::spawn_daemon_on(NodeId::WORLD, "fault:resume", async move {
        sleep(duration).await;
        resume(&w, index, node);
    });
}

/// Starts a new process for replica `index` on a fresh node while `old` is frozen; the
/// old node becomes a zombie that resumes later with its stale owner ids. The slot stays
/// the frozen process's — node, process and surface — until the replacement boots and
/// takes it over whole ([`crate::replica::Cluster::begin_process`]): a fault drawn in
/// between sees a paused replica, not a mix of the replacement's node and the zombie's
/// process. (A second replacement while one is pending — the old process resumed and froze
/// again before it booted — is not started.)
fn start_replacement(world: &Rc<World>, index: u32, old: NodeId) {
    if world.cluster.replacement_pending(index) {
        return;
    }
    let process = world.cluster.slots.borrow()[index as usize].process;
    world.zombies.borrow_mut().push((index, old, process));
    let deps = world.replica_deps();
    let boot: sutra_sim_core::node::BootFn = Rc::new(move |node| crate::replica::boot(&deps, index, node));
    let generation = world.zombies.borrow().len();
    // The boot only spawns the process's start, which runs after this is recorded.
    let node = executor::add_node(format!("replica-{index}.{generation}"), Some(boot));
    world.cluster.start_replacement(index, node);
}

/// Resumes a paused node (no-op if it is not paused).
pub fn resume(world: &Rc<World>, index: u32, node: NodeId) {
    if executor::node_status(node) != NodeStatus::Paused {
        return;
    }
    executor::resume(node);
    let process = process_of(world, index, node);
    world.ctx.tracer.emit_on(node, ModelEvent::ReplicaResumed { replica: index, process });
}

/// The process last booted on `node` (a zombie keeps its own).
fn process_of(world: &World, index: u32, node: NodeId) -> crate::ids::ProcessId {
    let slot = &world.cluster.slots.borrow()[index as usize];
    if slot.node == node {
        slot.process
    } else {
        world.zombies.borrow().iter().find(|(_, n, _)| *n == node).map(|(_, _, p)| *p).unwrap_or(slot.process)
    }
}

//! Replica crash: the process dies at an arbitrary await point — every task dropped at
//! once, no exit path runs — and restarts later as a new incarnation, or stays dead until
//! the heal. The broker notices the dead consumer and redelivers its unacked relays; its
//! claims are left for the sweeper.

use std::rc::Rc;

use sutra_sim_core::executor::{self, sleep};
use sutra_sim_core::{NodeId, NodeStatus, SimTime};

use crate::ids::ProcessId;

use crate::ctx::FaultGate;
use crate::event::ModelEvent;
use crate::faults::kind::FaultKind;
use crate::streams;
use crate::world::World;

/// Alive replicas: (index, node).
pub fn alive_replicas(world: &World) -> Vec<(u32, NodeId)> {
    world
        .cluster
        .slots
        .borrow()
        .iter()
        .enumerate()
        .filter(|(_, r)| executor::node_status(r.node) == NodeStatus::Alive)
        .map(|(i, r)| (i as u32, r.node))
        .collect()
}

/// Draws whether to crash a replica this tick, and which.
pub fn maybe_crash(world: &Rc<World>) {
    if !world.ctx.fires(FaultGate::tick(FaultKind::ReplicaCrash), world.ctx.faults().replica_crash.per_tick) {
        return;
    }
    let alive = alive_replicas(world);
    if alive.is_empty() {
        return;
    }
    let (index, node) = alive[executor::choose_in(streams::FAULTS, alive.len() as u32) as usize];
    crash(world, index, node);
}

/// Kills replica `index` now and schedules its restart (or leaves it dead until the heal).
pub fn crash(world: &Rc<World>, index: u32, node: NodeId) {
    let process = world.cluster.slots.borrow()[index as usize].process;
    executor::kill(node);
    world.ctx.tracer.emit_on(node, ModelEvent::ReplicaCrashed { replica: index, process });
    let options = &world.ctx.faults().replica_crash;
    let stays_dead = options.stays_dead.draw(streams::FAULTS);
    let delay = streams::millis_up_to(streams::FAULTS, options.restart_delay_max);
    world.ctx.report(FaultKind::ReplicaCrash, Some(index), if stays_dead { Default::default() } else { delay });
    if stays_dead {
        return;
    }
    restart_later(world, index, node, delay);
}

/// Restarts replica `index`'s dead `node` as a new incarnation after `delay` — unless the
/// heal restarted it first, or the replica runs on another node by then (a replacement).
/// The orchestrator's side of both a crash and a graceful stop. A node still dead after the
/// heal is one the heal could not restart — a graceful stop that finished its drain after
/// it — since no fault kills a process once healed: it restarts too.
pub fn restart_later(world: &Rc<World>, index: u32, node: NodeId, delay: std::time::Duration) {
    let w = world.clone();
    executor::spawn_daemon_on(NodeId::WORLD, "fault:restart", async move {
        sleep(delay).await;
        let current = w.cluster.slots.borrow()[index as usize].node == node;
        if current && executor::node_status(node) == NodeStatus::Dead {
            executor::restart(node);
        }
    });
}

/// The broker's liveness check: redeliver the unacked relays of processes that died and,
/// if the scenario sets `faults.broker.paused_consumer_timeout`, of processes silent
/// (paused) for that long — counted from the first check that found them silent, as a
/// broker counts missed heartbeats.
pub async fn broker_liveness(world: Rc<World>) {
    let timeout = world.ctx.faults().broker.paused_consumer_timeout;
    let mut silent_since: Vec<(ProcessId, SimTime)> = Vec::new();
    loop {
        sleep(world.ctx.scenario().timeouts.broker_liveness_interval).await;
        let now = executor::now();
        let consumers = world.broker.consumers();
        silent_since.retain(|(p, _)| consumers.contains(p) && world.cluster.process_paused(*p));
        for consumer in consumers {
            if !world.cluster.process_alive(consumer) {
                world.broker.reclaim(consumer);
            } else if !timeout.is_zero() && !world.ctx.healed() && world.cluster.process_paused(consumer) {
                let since = match silent_since.iter().find(|(p, _)| *p == consumer) {
                    Some((_, since)) => *since,
                    None => {
                        silent_since.push((consumer, now));
                        now
                    }
                };
                if now.since(since) >= timeout {
                    world.broker.reclaim_silent(consumer);
                    silent_since.retain(|(p, _)| *p != consumer);
                }
            }
        }
    }
}

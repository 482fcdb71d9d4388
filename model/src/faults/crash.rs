//! Replica crash: the process dies at an arbitrary await point — every task dropped at
//! once, no exit path runs — and restarts later as a new incarnation, or stays dead until
//! the heal. The broker notices the dead consumer and redelivers its unacked relays; its
//! claims are left for the sweeper.

use std::rc::Rc;
use std::time::Duration;

use sutra_sim_core::executor::{self, sleep};
use sutra_sim_core::{NodeId, NodeStatus};

use crate::event::ModelEvent;
use crate::streams;
use crate::world::World;

/// Draws whether to crash a replica this tick, and which.
pub fn maybe_crash(world: &Rc<World>) {
    if !world.fault(world.faults.replica_crash_per_tick) {
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
    let process = world.replicas.borrow()[index as usize].process;
    executor::kill(node);
    world.tracer.emit_on(node, ModelEvent::ReplicaCrashed { replica: index, process });
    // 0 (the simplest draw) means "stays dead until the heal".
    let delay = streams::millis_up_to(streams::FAULTS, world.scenario.faults.restart_delay_max);
    if delay > Duration::ZERO {
        let w = world.clone();
        executor::spawn_daemon_on(NodeId::WORLD, "fault:restart", async move {
            sleep(delay).await;
            if !w.healed.get() && executor::node_status(node) == NodeStatus::Dead {
                executor::restart(node);
            }
        });
    }
}

/// The broker's liveness check: redeliver the unacked relays of processes that died.
pub async fn broker_liveness(world: Rc<World>) {
    loop {
        sleep(world.scenario.timeouts.broker_liveness_interval).await;
        for consumer in world.broker.consumers() {
            if !world.process_alive(consumer) {
                world.broker.reclaim(consumer);
            }
        }
    }
}

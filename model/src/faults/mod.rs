//! Fault injection. The injector runs on the world node during the faulty phase, ticking
//! every `faults.tick` and drawing each process-level fault; per-action faults (misroute,
//! duplicate delivery, slow steps) are drawn where the action happens through
//! [`crate::world::World::fault`]. At `heal_at` — or as soon as the work is done — faults
//! stop, paused replicas resume and dead ones restart. Only faults the spec tolerates are
//! injected: the store never loses a committed write.

pub mod clock_skew;
pub mod crash;
pub mod pause;
pub mod swarm;

use std::rc::Rc;

use sutra_sim_core::executor::{self, sleep};
use sutra_sim_core::NodeStatus;

use crate::event::ModelEvent;
use crate::world::World;

/// The injector loop: one tick at a time until the heal.
pub async fn inject(world: Rc<World>) {
    let heal_at = sutra_sim_core::SimTime(world.scenario.phases.heal_at.as_nanos() as u64);
    loop {
        sleep(world.faults.tick).await;
        if world.healed.get() {
            return;
        }
        if executor::now() >= heal_at {
            heal(&world);
            return;
        }
        crash::maybe_crash(&world);
        pause::maybe_pause(&world);
    }
}

/// Ends the faulty phase: no more faults, every paused replica resumes, every dead one
/// restarts. Idempotent.
pub fn heal(world: &Rc<World>) {
    if world.healed.replace(true) {
        return;
    }
    world.emit(ModelEvent::Healed);
    let replicas: Vec<(u32, sutra_sim_core::NodeId)> =
        world.replicas.borrow().iter().enumerate().map(|(i, r)| (i as u32, r.node)).collect();
    for (index, node) in replicas {
        match executor::node_status(node) {
            NodeStatus::Paused => pause::resume(world, index, node),
            NodeStatus::Dead => executor::restart(node),
            NodeStatus::Alive => {}
        }
    }
}

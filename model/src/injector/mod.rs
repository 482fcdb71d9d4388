//! The fault injector (DESIGN.md §6): the faults that act on the whole world, one file per
//! fault source. It runs on the world node during the faulty phase, ticking every
//! `faults.tick` and drawing each per-tick fault; per-action faults are the gates of
//! [`crate::faults`], drawn inside the components. At `heal_at` — or as soon as the work
//! is done — faults stop, paused replicas resume and dead ones restart.

pub mod cancel;
pub mod clock_skew;
pub mod crash;
pub mod lease;
pub mod misroute;
pub mod pause;
pub mod pull_worker;
pub mod swarm;

use std::rc::Rc;

use sutra_sim_core::executor::{self, sleep_until};
use sutra_sim_core::NodeStatus;

use crate::event::ModelEvent;
use crate::faults;
use crate::world::World;

/// The injector loop: one tick at a time until the heal. With drawn phases, tick `k`
/// strikes at a drawn instant within `[k·tick, (k+1)·tick)` rather than on the grid.
pub async fn inject(world: Rc<World>) {
    let heal_at = sutra_sim_core::SimTime(world.ctx.scenario().phases.heal_at.as_nanos() as u64);
    let tick = world.ctx.faults().tick;
    let start = executor::now();
    let mut ticks: u32 = 0;
    loop {
        ticks = ticks.saturating_add(1);
        let grid = start.add(tick.saturating_mul(ticks));
        // The world node's clock is exact: the fault schedule is simulated time.
        sleep_until(grid.add(faults::phase(&world.ctx, tick))).await;
        if world.ctx.healed() {
            return;
        }
        if executor::now() >= heal_at {
            heal(&world);
            return;
        }
        crash::maybe_crash(&world);
        pause::maybe_pause(&world);
        misroute::maybe_change_hash(&world.ctx, &world.routing);
        clock_skew::maybe_step(&world);
        faults::store::maybe_make_unavailable(world.store.faults());
        lease::maybe_hit_holder(&world);
        pull_worker::maybe_strike(&world);
        cancel::maybe_abort(&world);
        cancel::maybe_shut_down(&world);
    }
}

/// Lets the store's boundary faults strike a caller's process: freeze it (up to the
/// given span) or kill it, from the world's node, then let the caller go on — which a frozen
/// process does once resumed, and a killed one never. Only a replica's current process is
/// struck (not a zombie, not a pull worker). The store holds the world weakly: the world
/// owns the store.
pub fn install_boundary_strike(world: &Rc<World>) {
    let weak = Rc::downgrade(world);
    world.store.faults().set_boundary_strike(Rc::new(move |node, kill, pause, done| {
        let Some(world) = weak.upgrade() else { return };
        executor::spawn_daemon_on(sutra_sim_core::NodeId::WORLD, "fault:at-store-call", async move {
            let index = world.cluster.slots.borrow().iter().position(|slot| slot.node == node);
            if let Some(index) = index.filter(|_| executor::node_status(node) == NodeStatus::Alive) {
                if kill {
                    crash::crash(&world, index as u32, node);
                } else {
                    pause::pause_for(&world, index as u32, node, pause);
                }
            }
            done.send(());
        });
    }));
}

/// Ends the faulty phase: no more faults, every paused replica (zombies included)
/// resumes, every dead one restarts. Idempotent.
pub fn heal(world: &Rc<World>) {
    if !world.ctx.begin_heal() {
        return;
    }
    world.ctx.emit(ModelEvent::Healed);
    let replicas: Vec<(u32, sutra_sim_core::NodeId)> =
        world.cluster.slots.borrow().iter().enumerate().map(|(i, r)| (i as u32, r.node)).collect();
    for (index, node) in replicas {
        match executor::node_status(node) {
            NodeStatus::Paused => pause::resume(world, index, node),
            NodeStatus::Dead => executor::restart(node),
            NodeStatus::Alive => {}
        }
    }
    let zombies: Vec<(u32, sutra_sim_core::NodeId)> = world.zombies.borrow().iter().map(|(i, n, _)| (*i, *n)).collect();
    for (index, node) in zombies {
        pause::resume(world, index, node);
    }
    pull_worker::heal(world);
}

//! Mis-routing: work lands on the wrong lane — or, for a timer fire, the wrong replica —
//! and the routing hash may change mid-run. Routing is affinity only (R12): the claim
//! bounces mis-routed work as visible, retry-safe contention.

use std::rc::Rc;

use sutra_sim_core::executor;

use super::FaultKind;
use crate::streams;
use crate::world::World;

/// Where a dispatch goes after the misroute fault had its say.
pub struct Destination {
    /// Replica index (for timers, which any replica's poller may fire).
    pub replica: Option<u32>,
    /// Lane index.
    pub lane: u16,
    /// True if the fault moved it.
    pub misrouted: bool,
}

/// Maybe moves a dispatch meant for `lane`: to another lane of the same replica, or (when
/// `other_replica_ok`) to a lane of another replica.
pub fn route(world: &World, lane: u16, other_replica_ok: bool) -> Destination {
    let lanes = world.scenario.topology.lanes;
    let replicas = world.scenario.topology.replicas;
    if !world.fault(world.faults.misroute.per_delivery) {
        return Destination { replica: None, lane, misrouted: false };
    }
    if other_replica_ok && replicas > 1 && world.faults.misroute.wrong_replica.draw(streams::ROUTING) {
        let replica = executor::choose_in(streams::ROUTING, replicas);
        let lane = executor::choose_in(streams::ROUTING, lanes) as u16;
        super::report(world, FaultKind::Misroute, Some(replica), Default::default());
        return Destination { replica: Some(replica), lane, misrouted: true };
    }
    if lanes < 2 {
        return Destination { replica: None, lane, misrouted: false };
    }
    let moved = ((u32::from(lane) + 1 + executor::choose_in(streams::ROUTING, lanes - 1)) % lanes) as u16;
    super::report(world, FaultKind::Misroute, None, Default::default());
    Destination { replica: None, lane: moved, misrouted: true }
}

/// Draws whether the routing hash changes this tick.
pub fn maybe_change_hash(world: &Rc<World>) {
    if !world.fault(world.faults.misroute.hash_change_per_tick) {
        return;
    }
    let salt = u64::from(executor::choose_in(streams::ROUTING, u32::MAX)) + 1;
    world.routing_salt.set(salt);
    super::report(world, FaultKind::Misroute, None, Default::default());
}

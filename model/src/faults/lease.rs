//! Lease faults: the sweeper's lease holder dies or pauses. The lease expires, another
//! replica takes the role; a paused holder that wakes must not sweep on a lapsed lease.

use std::rc::Rc;

use sutra_sim_core::executor;
use sutra_sim_core::NodeStatus;

use super::kind::FaultKind;
use crate::ctx::FaultGate;
use crate::streams;
use crate::world::World;

/// Draws whether the lease holder is hit this tick.
pub fn maybe_hit_holder(world: &Rc<World>) {
    let options = &world.ctx.faults().lease;
    let crash = world.ctx.fires(FaultGate::tick(FaultKind::Lease), options.holder_crash_per_tick);
    let pause = !crash && world.ctx.fires(FaultGate::tick(FaultKind::Lease), options.holder_pause_per_tick);
    if !crash && !pause {
        return;
    }
    let holder = world.store.state().borrow().lease.map(|(p, _)| p);
    let Some(holder) = holder else { return };
    let slot = world
        .cluster
        .slots
        .borrow()
        .iter()
        .enumerate()
        .find(|(_, r)| r.process == holder)
        .map(|(i, r)| (i as u32, r.node));
    let Some((index, node)) = slot else { return };
    if executor::node_status(node) != NodeStatus::Alive {
        return;
    }
    world.ctx.report(FaultKind::Lease, Some(index), Default::default());
    if crash {
        super::crash::crash(world, index, node);
    } else {
        let d = streams::millis_up_to(streams::FAULTS, world.ctx.faults().process_pause.pause_max);
        super::pause::pause_for(world, index, node, d);
    }
}

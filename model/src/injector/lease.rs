//! Lease faults: the sweeper's lease holder dies or pauses. The lease expires, another
//! replica takes the role; a paused holder that wakes must not sweep on a lapsed lease.
//! A two-step sweep (select, then clear) can also be frozen between its statements
//! ([`pause_mid_sweep`]): the clear that follows must re-check what it selected.

use std::rc::Rc;

use sutra_sim_core::executor;
use sutra_sim_core::NodeStatus;

use crate::ctx::FaultGate;
use crate::faults::kind::FaultKind;
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
    let Some((index, node)) = alive_replica_running(world, holder) else { return };
    world.ctx.report(FaultKind::Lease, Some(index), Default::default());
    if crash {
        super::crash::crash(world, index, node);
    } else {
        let d = streams::millis_up_to(streams::FAULTS, world.ctx.faults().process_pause.pause_max);
        super::pause::pause_for(world, index, node, d);
    }
}

/// Freezes `process`, the lease holder, between its sweep's select and its clears (the
/// sweeper drew the `holder_pause_mid_sweep` fault). Nothing happens unless the process
/// is a replica's running process and alive.
pub fn pause_mid_sweep(world: &Rc<World>, process: crate::ids::ProcessId) {
    let Some((index, node)) = alive_replica_running(world, process) else { return };
    world.ctx.report(FaultKind::Lease, Some(index), Default::default());
    let d = streams::millis_up_to(streams::FAULTS, world.ctx.faults().process_pause.pause_max);
    super::pause::pause_for(world, index, node, d);
}

/// The replica whose running process is `process`, and its node, if that node is alive.
fn alive_replica_running(world: &Rc<World>, process: crate::ids::ProcessId) -> Option<(u32, sutra_sim_core::NodeId)> {
    let slot = world
        .cluster
        .slots
        .borrow()
        .iter()
        .enumerate()
        .find(|(_, r)| r.process == process)
        .map(|(i, r)| (i as u32, r.node));
    slot.filter(|&(_, node)| executor::node_status(node) == NodeStatus::Alive)
}

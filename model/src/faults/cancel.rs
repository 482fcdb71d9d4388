//! Cancellation: an execution ends at an await point while its process lives. The runtime
//! aborts a busy execution lane's worker task (a task abort); the per-step timeout lives in
//! the lane itself ([`crate::replica::execution`]). Nothing is released by the abort: the
//! exit path is the lane's to run, explicitly and awaited, since a destructor cannot await.

use std::rc::Rc;

use sutra_sim_core::executor;

use super::kind::FaultKind;
use crate::ctx::FaultGate;
use crate::event::ModelEvent;
use crate::streams;
use crate::world::World;

/// Draws whether to abort an execution lane's worker this tick, and which: one with an
/// execution in flight, on an alive replica.
pub fn maybe_abort(world: &Rc<World>) {
    if !world.ctx.fires(FaultGate::tick(FaultKind::Cancel), world.ctx.faults().cancel.abort_per_tick) {
        return;
    }
    let mut busy = Vec::new();
    for (index, node) in super::crash::alive_replicas(world) {
        let slots = world.cluster.slots.borrow();
        let slot = &slots[index as usize];
        let Some(surface) = slot.surface.as_ref().filter(|s| s.process == slot.process) else { continue };
        for (lane, inbox) in surface.lanes.iter().enumerate() {
            if inbox.in_flight.borrow().is_some() {
                busy.push((index, node, surface.process, lane as u16, inbox.clone()));
            }
        }
    }
    if busy.is_empty() {
        return;
    }
    let (replica, node, process, lane, inbox) =
        busy.swap_remove(executor::choose_in(streams::FAULTS, busy.len() as u32) as usize);
    if let Some(task) = inbox.abort() {
        world.ctx.tracer.emit_on(node, ModelEvent::TaskAborted { replica, process, lane, task: task.number() });
        world.ctx.report(FaultKind::Cancel, Some(replica), Default::default());
    }
}

//! Cancellation: an execution ends at an await point while its process lives. The runtime
//! aborts a busy execution lane's worker task (a task abort); the per-step timeout lives in
//! the lane itself ([`crate::replica::execution`]); an orchestrator shuts a replica down
//! gracefully — drain, then stop — and the drain deadline cancels what still runs
//! ([`crate::replica::shutdown`]). Nothing is released by an abort: the exit path is the
//! lane's to run, explicitly and awaited, since a destructor cannot await.

use std::rc::Rc;

use sutra_sim_core::executor;
use sutra_sim_core::sync::oneshot;
use sutra_sim_core::NodeId;

use crate::ctx::FaultGate;
use crate::event::ModelEvent;
use crate::faults::kind::FaultKind;
use crate::streams;
use crate::world::World;

/// Draws whether to abort an execution lane's worker this tick, and which: one with an
/// execution in flight, on an alive replica.
pub fn maybe_abort(world: &Rc<World>) {
    if !world.ctx.fires(FaultGate::tick(FaultKind::Cancel), world.ctx.faults().cancel.abort_per_tick) {
        return;
    }
    let mut busy = Vec::new();
    for (index, node, surface) in running_surfaces(world) {
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

/// Draws whether to shut a replica down gracefully this tick (an orchestrator's SIGTERM),
/// and which: an alive, unpaused replica whose running process is not already shutting
/// down. Its process drains and stops by itself ([`crate::replica::shutdown`]); once it
/// has, the orchestrator witnesses the stop and restarts the replica later as a new
/// incarnation. A crash or a replacement meanwhile ends it the other way: nothing to restart.
pub fn maybe_shut_down(world: &Rc<World>) {
    let options = &world.ctx.faults().cancel;
    if !world.ctx.fires(FaultGate::tick(FaultKind::Cancel), options.shutdown_per_tick) {
        return;
    }
    let mut running: Vec<_> = running_surfaces(world).into_iter().filter(|(_, _, s)| !s.shutdown.requested()).collect();
    if running.is_empty() {
        return;
    }
    let (replica, node, surface) =
        running.swap_remove(executor::choose_in(streams::FAULTS, running.len() as u32) as usize);
    let process = surface.process;
    let delay = streams::millis_up_to(streams::FAULTS, options.restart_delay_max);
    let drain = options.drain_timeout;
    world.ctx.tracer.emit_on(
        node,
        ModelEvent::ShutdownRequested { replica, process, drain_ns: sutra_sim_core::time::duration_nanos(drain) },
    );
    world.ctx.report(FaultKind::Cancel, Some(replica), drain);
    let (exited, stopped) = oneshot::<()>();
    let handler = crate::replica::shutdown::Handler {
        ctx: world.ctx.clone(),
        store: world.store.clone(),
        broker: world.broker.clone(),
        surface,
        replica,
    };
    executor::spawn_daemon_on(node, "shutdown", handler.run(drain, exited));
    let w = world.clone();
    executor::spawn_daemon_on(NodeId::WORLD, "fault:await-stop", async move {
        // Cancelled if the process crashed (or was killed at a store call) mid-drain.
        if stopped.await.is_ok() {
            w.ctx.tracer.emit_on(node, ModelEvent::ReplicaStopped { replica, process });
            // A drain that ended after the heal restarts at once: the heal is over.
            let delay = if w.ctx.healed() { std::time::Duration::ZERO } else { delay };
            super::crash::restart_later(&w, replica, node, delay);
        }
    });
}

/// The replicas whose running process lives on an alive node, with that process's surface
/// (a slot names one process at every await point: [`crate::replica::ReplicaSlot`]).
fn running_surfaces(world: &World) -> Vec<(u32, NodeId, Rc<crate::replica::cluster::ReplicaSurface>)> {
    let slots = world.cluster.slots.borrow();
    super::crash::alive_replicas(world)
        .into_iter()
        .filter_map(|(index, node)| Some((index, node, slots[index as usize].surface.clone()?)))
        .collect()
}

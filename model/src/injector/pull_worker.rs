//! Pull-worker faults: a pull worker dies or freezes — mid-task, past its task lock, or
//! idle. Until these, no fault struck a pull worker, so a task row's lock never expired and
//! the store's path that re-locks an expired task was never run (issue #23). A dead worker
//! restarts within the crash's restart delay; a frozen one carries on where it was. Either
//! may find on its return that its lock expired and another worker took the task over: its
//! late completion must then advance nothing (the store matches a completion only under an
//! unexpired lock of its own; R25).
//!
//! Drawn from their own sub-stream, so switching them on reshuffles no other fault.

use std::rc::Rc;

use sutra_sim_core::executor::{self, sleep};
use sutra_sim_core::{NodeId, NodeStatus};

use crate::ctx::FaultGate;
use crate::event::ModelEvent;
use crate::faults::kind::FaultKind;
use crate::streams;
use crate::world::World;

/// The crash gate of pull workers.
const CRASH: FaultGate = FaultGate { kind: FaultKind::ReplicaCrash, stream: streams::PULL_FAULTS };
/// The pause gate of pull workers.
const PAUSE: FaultGate = FaultGate { kind: FaultKind::ProcessPause, stream: streams::PULL_FAULTS };

/// The pull workers' nodes that are alive now.
fn alive(world: &World) -> Vec<NodeId> {
    world.pull_workers.borrow().iter().copied().filter(|n| executor::node_status(*n) == NodeStatus::Alive).collect()
}

/// One of the alive pull workers, drawn; `None` if none is alive.
fn draw_alive(world: &World) -> Option<NodeId> {
    let alive = alive(world);
    if alive.is_empty() {
        return None;
    }
    Some(alive[executor::choose_in(streams::PULL_FAULTS, alive.len() as u32) as usize])
}

/// Draws whether to kill a pull worker this tick and whether to freeze one.
pub fn maybe_strike(world: &Rc<World>) {
    let faults = world.ctx.faults();
    let (crash_rate, pause_rate) =
        (faults.replica_crash.pull_worker_per_tick, faults.process_pause.pull_worker_per_tick);
    if !crash_rate.is_never() && world.ctx.fires(CRASH, crash_rate) {
        if let Some(node) = draw_alive(world) {
            crash(world, node);
        }
    }
    if !pause_rate.is_never() && world.ctx.fires(PAUSE, pause_rate) {
        if let Some(node) = draw_alive(world) {
            pause(world, node);
        }
    }
}

/// Kills the pull worker on `node` and restarts it later (the heal restarts it at the
/// latest).
fn crash(world: &Rc<World>, node: NodeId) {
    let worker = world.pull_workers.borrow().iter().position(|n| *n == node).expect("a pull worker's node");
    executor::kill(node);
    world.ctx.tracer.emit_on(node, ModelEvent::PullWorkerCrashed { worker: worker as u32 });
    let delay = streams::millis_up_to(streams::PULL_FAULTS, world.ctx.faults().replica_crash.restart_delay_max);
    world.ctx.report(FaultKind::ReplicaCrash, None, delay);
    executor::spawn_daemon_on(NodeId::WORLD, "fault:restart-pull-worker", async move {
        sleep(delay).await;
        if executor::node_status(node) == NodeStatus::Dead {
            executor::restart(node);
        }
    });
}

/// Freezes the pull worker on `node` for a drawn span, then resumes it (unless the heal
/// did first).
fn pause(world: &Rc<World>, node: NodeId) {
    let duration = streams::millis_up_to(streams::PULL_FAULTS, world.ctx.faults().process_pause.pause_max);
    executor::pause(node);
    world.ctx.report(FaultKind::ProcessPause, None, duration);
    executor::spawn_daemon_on(NodeId::WORLD, "fault:resume-pull-worker", async move {
        sleep(duration).await;
        if executor::node_status(node) == NodeStatus::Paused {
            executor::resume(node);
        }
    });
}

/// The heal: every frozen pull worker resumes, every dead one restarts.
pub fn heal(world: &World) {
    for node in world.pull_workers.borrow().iter().copied() {
        match executor::node_status(node) {
            NodeStatus::Paused => executor::resume(node),
            NodeStatus::Dead => executor::restart(node),
            NodeStatus::Alive => {}
        }
    }
}

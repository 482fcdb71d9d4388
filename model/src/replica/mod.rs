//! A replica: a process node with N execution lanes, a binding table on a state lane, a
//! broker consumer (the relay path), a timer poller and a sweeper role.
//!
//! Every boot is a new process with a new process id, so a restarted or replacement
//! process never shares an owner id with the one it replaces (R11).

pub mod bindings;
pub mod consumer;
pub mod execution;
pub mod sweeper;
pub mod timers;

use std::rc::Rc;

use sutra_sim_core::executor;
use sutra_sim_core::NodeId;

use crate::event::ModelEvent;
use crate::ids::ProcessId;
use crate::world::World;
use bindings::Bindings;
use execution::{ExecutionLane, LaneInbox};

/// What a running replica process exposes to the rest of the world (the admin API).
pub struct ReplicaSurface {
    /// The process.
    pub process: ProcessId,
    /// Its binding table.
    pub bindings: Bindings,
    /// Its execution lanes' inboxes.
    pub lanes: Vec<LaneInbox>,
}

/// Boots replica `index` on `node` as a new process. The boot itself runs as a task of the
/// node, so that everything it starts (the binding lane's worker included) belongs to it
/// and dies with it.
pub fn boot(world: &Rc<World>, index: u32, node: NodeId) {
    let world = world.clone();
    executor::spawn_daemon_on(node, "boot", async move { start_process(&world, index, node) });
}

fn start_process(world: &Rc<World>, index: u32, node: NodeId) {
    let process = world.new_process();
    let restarted = {
        let mut replicas = world.replicas.borrow_mut();
        let slot = &mut replicas[index as usize];
        let restarted = slot.surface.is_some();
        slot.process = process;
        restarted
    };
    if restarted {
        world.emit(ModelEvent::ReplicaRestarted { replica: index, process });
    }
    let bindings = Bindings::new(world.clone(), process);
    let lanes: Vec<LaneInbox> = (0..world.scenario.topology.lanes).map(|_| LaneInbox::default()).collect();
    for (i, inbox) in lanes.iter().enumerate() {
        let lane = ExecutionLane {
            world: world.clone(),
            process,
            lane: i as u16,
            bindings: bindings.clone(),
            inbox: inbox.clone(),
        };
        executor::spawn_daemon_on(node, format!("lane-{i}"), lane.run());
    }
    let surface = Rc::new(ReplicaSurface { process, bindings, lanes });
    world.replicas.borrow_mut()[index as usize].surface = Some(surface.clone());
    executor::spawn_daemon_on(node, "consumer", consumer::run(world.clone(), surface.clone()));
    executor::spawn_daemon_on(node, "timer-poller", timers::run(world.clone(), surface.clone()));
    executor::spawn_daemon_on(node, "sweeper", sweeper::run(world.clone(), process));
}

//! A replica: a process node with N execution lanes, a binding table on a state lane, a
//! broker consumer (the relay path), a timer poller and a sweeper role.
//!
//! Every boot is a new process with a new process id, so a restarted or replacement
//! process never shares an owner id with the one it replaces (R11).

pub mod bindings;
pub mod cluster;
pub mod consumer;
pub mod error_mapping;
pub mod execution;
pub mod shutdown;
pub mod sweeper;
pub mod timers;

use std::rc::Rc;

use sutra_sim_core::executor;
use sutra_sim_core::NodeId;

use crate::broker::Broker;
use crate::ctx::Context;
use crate::event::ModelEvent;
use crate::routing::Routing;
use crate::store::Store;
use bindings::Bindings;
pub use cluster::{Cluster, ReplicaSlot, ReplicaSurface};
use execution::{ExecutionLane, LaneInbox};

/// What a replica process talks to: the run's context, the store, the broker, the routing
/// function, and the cluster registry it publishes its surface in. Each of its tasks takes
/// only the handles it uses.
#[derive(Clone)]
pub struct Deps {
    /// The run's context.
    pub ctx: Rc<Context>,
    /// The store.
    pub store: Store,
    /// The broker.
    pub broker: Broker,
    /// Instance-hash routing.
    pub routing: Rc<Routing>,
    /// The replica registry.
    pub cluster: Rc<Cluster>,
}

/// Boots replica `index` on `node` as a new process. The boot itself runs as a task of the
/// node, so that everything it starts (the binding lane's worker included) belongs to it
/// and dies with it.
pub fn boot(deps: &Deps, index: u32, node: NodeId) {
    let deps = deps.clone();
    executor::spawn_daemon_on(node, "boot", async move { start_process(&deps, index, node) });
}

fn start_process(deps: &Deps, index: u32, node: NodeId) {
    let ctx = &deps.ctx;
    // A node frozen between its restart and its process's start may find, once resumed,
    // that a replacement took the replica over meanwhile: it starts nothing.
    if !deps.cluster.boots_on(index, node) {
        return;
    }
    let process = ctx.new_process();
    if deps.cluster.begin_process(index, node, process) {
        ctx.emit(ModelEvent::ReplicaRestarted { replica: index, process });
    }
    let bindings = Bindings::new(ctx.clone(), deps.routing.clone(), process);
    let lanes: Vec<LaneInbox> = (0..ctx.scenario().topology.lanes).map(|_| LaneInbox::default()).collect();
    let in_hand = execution::InHand::default();
    let shutdown = Rc::new(shutdown::Shutdown::new(!ctx.faults().cancel.shutdown_per_tick.is_never()));
    for (i, inbox) in lanes.iter().enumerate() {
        let lane = ExecutionLane {
            ctx: ctx.clone(),
            store: deps.store.clone(),
            broker: deps.broker.clone(),
            routing: deps.routing.clone(),
            process,
            replica: index,
            lane: i as u16,
            bindings: bindings.clone(),
            inbox: inbox.clone(),
            claims: crate::claim_fence::ClaimNumbers::of(process),
            in_hand: in_hand.clone(),
            shutdown: shutdown.clone(),
        };
        executor::spawn_daemon_on(node, format!("lane-{i}"), lane.run());
    }
    let surface = Rc::new(ReplicaSurface { process, bindings, lanes, in_hand, shutdown: shutdown.clone() });
    deps.cluster.publish(index, surface.clone());
    executor::spawn_daemon_on(node, "consumer", consumer::run(ctx.clone(), deps.broker.clone(), surface.clone()));
    executor::spawn_daemon_on(
        node,
        "timer-poller",
        timers::run(ctx.clone(), deps.store.clone(), deps.routing.clone(), deps.cluster.clone(), surface),
    );
    executor::spawn_daemon_on(node, "sweeper", sweeper::run(ctx.clone(), deps.store.clone(), process, shutdown));
}

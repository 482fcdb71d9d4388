//! The world: the top of the model, where the components meet — the context, the store,
//! the broker, routing and the replica registry, plus what only the fault injector needs
//! (the frozen processes a replacement left behind). One `World` per run, behind an `Rc`,
//! created inside the simulated world by [`crate::setup`]. Only the roles that act on the
//! whole cluster — the fault injector, the operator, the workload driver, setup — take it;
//! every component takes the handles it uses.

use std::cell::RefCell;
use std::rc::Rc;

use sutra_sim_core::NodeId;

use crate::broker::Broker;
use crate::ctx::Context;
use crate::ids::ProcessId;
use crate::replica::{Cluster, Deps};
use crate::routing::Routing;
use crate::store::Store;

/// Shared state of one run.
pub struct World {
    /// The run's context.
    pub ctx: Rc<Context>,
    /// The store.
    pub store: Store,
    /// The broker.
    pub broker: Broker,
    /// Instance-hash routing.
    pub routing: Rc<Routing>,
    /// Replica identities, by index.
    pub cluster: Rc<Cluster>,
    /// Frozen processes replaced while they were out: (replica index, old node, old process).
    pub zombies: RefCell<Vec<(u32, NodeId, ProcessId)>>,
    /// The pull workers' nodes, by worker number.
    pub pull_workers: RefCell<Vec<NodeId>>,
}

impl World {
    /// What a booting replica process is given.
    pub fn replica_deps(&self) -> Deps {
        Deps {
            ctx: self.ctx.clone(),
            store: self.store.clone(),
            broker: self.broker.clone(),
            routing: self.routing.clone(),
            cluster: self.cluster.clone(),
        }
    }
}

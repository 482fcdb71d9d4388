//! The world: everything the model's components share — the scenario, the mutant switch,
//! the tracer, the store, the broker, the replica slots — and the ids they hand out.
//! One `World` per run, behind an `Rc`, created inside the simulated world by
//! [`crate::setup`].

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use sutra_sim_core::executor;
use sutra_sim_core::{NodeId, NodeStatus, Tracer};

use crate::broker::Broker;
use crate::event::ModelEvent;
use crate::faults::broker::BrokerFaults;
use crate::faults::store::StoreFaults;
use crate::ids::{ExecId, ProcessId};
use crate::mutant::Mutant;
use crate::ratio::Ratio;
use crate::replica::ReplicaSurface;
use crate::scenario::{Faults, Scenario};
use crate::store::Store;

/// One replica identity: its node and the process currently running it.
pub struct ReplicaSlot {
    /// The node (stable across incarnations).
    pub node: NodeId,
    /// The current process (a new one at every restart).
    pub process: ProcessId,
    /// The running process's surface (lanes, bindings), for the admin API and faults.
    pub surface: Option<Rc<ReplicaSurface>>,
    /// The clock offset given by the clock-skew fault, in ms.
    pub skew_ms: i64,
}

/// Shared state of one run.
pub struct World {
    /// The scenario being run.
    pub scenario: Scenario,
    /// The fault rates in force for this seed (after swarm selection).
    pub faults: Faults,
    /// The mutant switched on, if any. Only the model's code looks at it.
    pub mutant: Option<Mutant>,
    /// The trace.
    pub tracer: Tracer<ModelEvent>,
    /// The store.
    pub store: Store,
    /// The broker.
    pub broker: Broker,
    /// Replica identities, by index.
    pub replicas: RefCell<Vec<ReplicaSlot>>,
    /// Pull-worker nodes.
    pub pull_workers: RefCell<Vec<NodeId>>,
    /// Set once the heal phase began: no more faults.
    pub healed: Rc<Cell<bool>>,
    /// Claim bounces so far: (relay, timer) — the R13 meter.
    pub bounces: Cell<(u32, u32)>,
    /// Frozen processes replaced while they were out: (replica index, old node, old process).
    pub zombies: RefCell<Vec<(u32, NodeId, ProcessId)>>,
    /// The routing hash's salt; the misroute fault changes it mid-run.
    pub routing_salt: Cell<u64>,
    /// The store answers nothing before this instant (the store-unavailability fault).
    pub store_unavailable_until: Cell<sutra_sim_core::SimTime>,
    next_exec: Cell<u32>,
    next_process: Cell<u32>,
    next_operation: Cell<u32>,
}

impl World {
    /// A world for `scenario` with the effective `faults`.
    pub fn new(scenario: Scenario, faults: Faults, mutant: Option<Mutant>, tracer: Tracer<ModelEvent>) -> World {
        let healed = Rc::new(Cell::new(false));
        let broker = Broker::new(
            tracer.clone(),
            scenario.topology.prefetch,
            BrokerFaults::new(faults.broker.clone(), healed.clone(), tracer.clone()),
        );
        let store = Store::new(
            tracer.clone(),
            broker.clone(),
            StoreFaults::new(faults.store.clone(), healed.clone(), tracer.clone()),
            scenario.workload.relay_delay_max,
            scenario.timeouts.store_latency_max,
            scenario.timeouts.claim_timeout,
        );
        World {
            scenario,
            faults,
            mutant,
            tracer,
            store,
            broker,
            replicas: RefCell::new(Vec::new()),
            pull_workers: RefCell::new(Vec::new()),
            healed,
            bounces: Cell::new((0, 0)),
            zombies: RefCell::new(Vec::new()),
            routing_salt: Cell::new(0),
            store_unavailable_until: Cell::new(sutra_sim_core::SimTime::ZERO),
            next_exec: Cell::new(0),
            next_process: Cell::new(0),
            next_operation: Cell::new(0),
        }
    }

    /// True if `mutant` is the one switched on.
    pub fn mutant_is(&self, mutant: Mutant) -> bool {
        self.mutant == Some(mutant)
    }

    /// Emits an event.
    pub fn emit(&self, event: ModelEvent) {
        self.tracer.emit(event);
    }

    /// A fresh execution id.
    pub fn new_exec(&self) -> ExecId {
        let id = self.next_exec.get() + 1;
        self.next_exec.set(id);
        ExecId(id)
    }

    /// A fresh process id (every boot of a replica is a new process).
    pub fn new_process(&self) -> ProcessId {
        let id = self.next_process.get() + 1;
        self.next_process.set(id);
        ProcessId(id)
    }

    /// A fresh administrative operation number.
    pub fn new_operation(&self) -> u32 {
        let id = self.next_operation.get() + 1;
        self.next_operation.set(id);
        id
    }

    /// True if a fault of this rate fires now (never after the heal).
    pub fn fault(&self, rate: Ratio) -> bool {
        !self.healed.get() && !rate.is_never() && rate.draw(crate::streams::FAULTS)
    }

    /// True if `process` is the live (possibly paused) process of some replica.
    pub fn process_alive(&self, process: ProcessId) -> bool {
        self.replicas.borrow().iter().any(|r| r.process == process && executor::node_status(r.node) != NodeStatus::Dead)
    }

    /// The execution lane an instance hashes to (affinity only, R12).
    pub fn home_lane(&self, instance: crate::ids::InstanceId) -> u16 {
        // A fixed multiplicative hash: stable across platforms and runs.
        let h = (u64::from(instance.0) ^ self.routing_salt.get()).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
        (h % u64::from(self.scenario.topology.lanes)) as u16
    }

    /// Counts a claim bounce on the R13 meter.
    pub fn count_bounce(&self, path: crate::ids::ResumePath) {
        let (relay, timer) = self.bounces.get();
        match path {
            crate::ids::ResumePath::Timer => self.bounces.set((relay, timer + 1)),
            crate::ids::ResumePath::Migration => {}
            _ => self.bounces.set((relay + 1, timer)),
        }
    }
}

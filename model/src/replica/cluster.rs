//! The cluster's registry of replica identities: for each replica, its node, the process
//! running it now and that process's surface (lanes, binding table). A booting process
//! registers here; the timer poller looks up another replica's lanes here when a fire is
//! mis-routed to it; faults and the operator find their targets here.

use std::cell::RefCell;
use std::rc::Rc;

use sutra_sim_core::executor;
use sutra_sim_core::{NodeId, NodeStatus};

use super::bindings::Bindings;
use super::execution::{InHand, LaneInbox};
use crate::ids::ProcessId;

/// What a running replica process exposes to the rest of the world (the admin API).
pub struct ReplicaSurface {
    /// The process.
    pub process: ProcessId,
    /// Its binding table.
    pub bindings: Bindings,
    /// Its execution lanes' inboxes.
    pub lanes: Vec<LaneInbox>,
    /// The messages queued for its lanes (the `queued-copy-acked` mutant's).
    pub in_hand: InHand,
    /// Its shutdown switch (a graceful shutdown, the `cancel` fault).
    pub shutdown: Rc<super::shutdown::Shutdown>,
}

/// One replica identity: its node and the process currently running it.
///
/// Invariant: `node`, `process` and `surface` describe one process at every await point —
/// the node runs (or ran, or will boot again as) `process`, and the surface, once
/// published, is `process`'s. A replacement started while the process is frozen is
/// recorded in `replacement` and takes the slot over only when it boots
/// ([`Cluster::begin_process`]), node, process and surface together: until then the slot is
/// the frozen process's, and every fault aimed at "the replica" sees it paused.
pub struct ReplicaSlot {
    /// The node (a replacement started during a pause gets a new one, at its boot).
    pub node: NodeId,
    /// The current process (a new one at every restart).
    pub process: ProcessId,
    /// The running process's surface (lanes, bindings), for the admin API and faults.
    pub surface: Option<Rc<ReplicaSurface>>,
    /// A replacement's node, started while `process` is frozen and not booted yet.
    pub replacement: Option<NodeId>,
    /// The clock offset given by the clock-skew fault, in ms.
    pub skew_ms: i64,
}

/// Replica identities, by index.
#[derive(Default)]
pub struct Cluster {
    /// Invariant: indexed by replica index; one slot per replica of the topology.
    pub slots: RefCell<Vec<ReplicaSlot>>,
}

impl Cluster {
    /// True if `process` is the live (possibly paused) process of some replica.
    pub fn process_alive(&self, process: ProcessId) -> bool {
        self.slots.borrow().iter().any(|r| r.process == process && executor::node_status(r.node) != NodeStatus::Dead)
    }

    /// True if `process` is the current process of some replica and is paused (alive, but
    /// its tasks do not run).
    pub fn process_paused(&self, process: ProcessId) -> bool {
        self.slots.borrow().iter().any(|r| r.process == process && executor::node_status(r.node) == NodeStatus::Paused)
    }

    /// The surface of replica `index`'s running process, if it has booted and has not died
    /// since: a crashed process's surface stays in its slot until its successor boots, and
    /// its lanes take nothing any more, so a sender waiting for room there would wait forever.
    pub fn surface(&self, index: u32) -> Option<Rc<ReplicaSurface>> {
        let slots = self.slots.borrow();
        let slot = &slots[index as usize];
        slot.surface.clone().filter(|_| executor::node_status(slot.node) != NodeStatus::Dead)
    }

    /// Registers `process`, booting on `node`, as replica `index`'s current process; true if
    /// it replaces an earlier one (a restart or a replacement). A pending replacement's boot
    /// moves the slot to its node. The caller publishes the new surface before its next
    /// await ([`Cluster::publish`]), so no one sees the new process with the old surface.
    pub fn begin_process(&self, index: u32, node: NodeId, process: ProcessId) -> bool {
        let mut slots = self.slots.borrow_mut();
        let slot = &mut slots[index as usize];
        debug_assert!(slot.process < process, "process ids only grow");
        if slot.node != node {
            assert_eq!(slot.replacement, Some(node), "only the slot's node or its pending replacement boots");
            slot.node = node;
            slot.replacement = None;
        }
        slot.process = process;
        slot.surface.take().is_some()
    }

    /// True if a process booting on `node` would run replica `index`: the node is the
    /// slot's, or its pending replacement.
    pub fn boots_on(&self, index: u32, node: NodeId) -> bool {
        let slot = &self.slots.borrow()[index as usize];
        slot.node == node || slot.replacement == Some(node)
    }

    /// True if replica `index` has a replacement started and not booted yet.
    pub fn replacement_pending(&self, index: u32) -> bool {
        self.slots.borrow()[index as usize].replacement.is_some()
    }

    /// Records `node` as replica `index`'s replacement, started while its process is frozen:
    /// the slot stays the frozen process's until the replacement boots.
    pub fn start_replacement(&self, index: u32, node: NodeId) {
        let mut slots = self.slots.borrow_mut();
        let slot = &mut slots[index as usize];
        assert!(slot.replacement.is_none(), "one replacement pending at a time");
        slot.replacement = Some(node);
    }

    /// Publishes the surface of replica `index`'s current process.
    pub fn publish(&self, index: u32, surface: Rc<ReplicaSurface>) {
        let mut slots = self.slots.borrow_mut();
        let slot = &mut slots[index as usize];
        assert_eq!(slot.process, surface.process, "a process publishes its own surface");
        slot.surface = Some(surface);
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use sutra_sim_core::{simulate, RunConfig, Tracer};

    use super::*;
    use crate::ctx::{Config, Context};
    use crate::event::ModelEvent;
    use crate::routing::Routing;
    use crate::scenario::Scenario;

    #[test]
    fn a_crashed_process_offers_no_surface_to_send_work_to() {
        let seen = Rc::new(Cell::new((false, false)));
        let seen_in = seen.clone();
        let mut config = RunConfig::seeded(0);
        config.keep_trace = false;
        let out = simulate(&config, Vec::new(), move |tracer: &Tracer<ModelEvent>| {
            let scenario = Scenario::built_in("quiet").unwrap();
            let config = Rc::new(Config { faults: scenario.faults.clone(), scenario });
            let ctx = Rc::new(Context::new(config, None, tracer.clone()));
            let node = executor::add_node("replica-0", None);
            let process = ctx.new_process();
            let cluster = Cluster::default();
            let slot = ReplicaSlot { node, process, surface: None, replacement: None, skew_ms: 0 };
            cluster.slots.borrow_mut().push(slot);
            let bindings = Bindings::new(ctx.clone(), Rc::new(Routing::new(1)), process);
            let lanes = vec![LaneInbox::default()];
            let shutdown = Rc::new(super::super::shutdown::Shutdown::new(false));
            let surface = ReplicaSurface { process, bindings, lanes, in_hand: InHand::default(), shutdown };
            cluster.publish(0, Rc::new(surface));
            let running = cluster.surface(0).is_some();
            // The crash leaves the surface in the slot until a successor boots.
            executor::kill(node);
            seen_in.set((running, cluster.surface(0).is_some()));
        });
        assert!(out.verdict.is_pass(), "{}", out.verdict);
        assert_eq!(seen.get(), (true, false), "(surface while running, surface after the crash)");
    }
}

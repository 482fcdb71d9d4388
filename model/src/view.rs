//! The read-only view of the model that checkers get, built-in and user-written alike.
//! It exposes the scenario and the store's truth through methods that cannot change
//! anything; no checker reads the model any other way.

use std::cell::RefCell;
use std::rc::Rc;

use crate::checkers::ledger::Ledger;
use crate::ctx::Config;
use crate::ids::{InstanceId, OwnerId, ProcessId};
use crate::replica::cluster::Cluster;
use crate::scenario::{Faults, Scenario};
use crate::store::StoreState;

/// A stand-in for the model's binding tables in checkers' unit tests: process → consistent?
#[cfg(test)]
pub(crate) type BindingsProbe = Box<dyn Fn(ProcessId) -> Option<bool>>;

/// What a checker may read besides the events.
pub struct ModelView {
    config: Rc<Config>,
    store: Rc<RefCell<StoreState>>,
    /// The replicas, for read-only looks at their binding tables; `None` in hand-made views.
    cluster: Option<std::rc::Weak<Cluster>>,
    /// Tags of the witness kinds the history's writer does not record (`check`, from the
    /// header's `emits`); none in a simulation, which witnesses everything.
    unwitnessed: u64,
    /// The longest one broker call takes as the history's writer declares it (`check`, from
    /// the header's `broker_call_latency_max_ns`); zero in a simulation, whose broker answers
    /// within the scenario's own latencies.
    broker_call_latency: std::time::Duration,
    /// The longest one store request takes from its sender to the store's witness of it, as
    /// the history's writer declares it (`check`, from the header's
    /// `store_call_latency_max_ns`): a request of a task witnessed ended lands within it of
    /// the end. `None` — in a simulation, and in a history that does not declare it — makes
    /// no checker forget a task that ended.
    store_call_latency: Option<std::time::Duration>,
    /// The books several checkers keep alike, kept once (see [`crate::checkers::ledger`]):
    /// the checkers' own, made from the events they judge, not the model's state. Shared by
    /// reference so that a view remade for the same history keeps them.
    ledger: Rc<Ledger>,
    /// Hand-made binding tables for checkers' unit tests, by process.
    #[cfg(test)]
    tables: Option<Rc<RefCell<std::collections::BTreeMap<ProcessId, TableView>>>>,
    /// A stand-in answer to `bindings_consistent`, for checkers' unit tests.
    #[cfg(test)]
    probe: Option<BindingsProbe>,
}

/// A hand-made binding table (checkers' unit tests): routes and tickets.
#[cfg(test)]
#[derive(Clone, Debug, Default)]
pub(crate) struct TableView {
    /// Instance → route.
    pub routes: std::collections::BTreeMap<InstanceId, RouteView>,
    /// Tickets in flight.
    pub tickets: Vec<TicketView>,
}

/// A read-only copy of one delivery ticket in a replica's binding table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TicketView {
    /// The delivery's broker tag.
    pub tag: u32,
    /// The instance it delivers.
    pub instance: InstanceId,
    /// The lane the delivery was registered under.
    pub lane: u16,
    /// The table write that registered it (the table's own logical clock, see [`RouteView`]).
    pub registered: u64,
}

/// A read-only copy of one instance's route in a replica's binding table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteView {
    /// The lane the table routes the instance to.
    pub lane: u16,
    /// The table write that last changed the route (0: never changed). Writes of one table
    /// are numbered in order, so a ticket registered at a later write than this was
    /// registered while the route already named `lane`.
    pub changed: u64,
}

impl ModelView {
    /// A view of `store` under the run's `config` (the scenario and this seed's effective faults).
    pub fn new(config: Rc<Config>, store: Rc<RefCell<StoreState>>) -> ModelView {
        ModelView {
            config,
            store,
            cluster: None,
            unwitnessed: 0,
            broker_call_latency: std::time::Duration::ZERO,
            store_call_latency: None,
            ledger: Rc::default(),
            #[cfg(test)]
            tables: None,
            #[cfg(test)]
            probe: None,
        }
    }

    /// The same view, of a history whose writer does not record the witness kinds whose
    /// tags are set in `mask` (`check` reads them from the header's `emits`): a checker that
    /// can stand a declared bound in for a missing witness asks [`ModelView::witnesses`].
    pub fn with_unwitnessed(mut self, mask: u64) -> ModelView {
        self.unwitnessed = mask;
        self
    }

    /// The same view, of a history whose writer declares that one broker call (a requeue, an
    /// ack) takes at most `latency` from the client's call to the broker's witness of it.
    pub fn with_broker_call_latency(mut self, latency: std::time::Duration) -> ModelView {
        self.broker_call_latency = latency;
        self
    }

    /// The same view, of a history whose writer declares that a store request lands at most
    /// `latency` after it was sent (so at most that long after its task was witnessed ended).
    pub fn with_store_call_latency(mut self, latency: Option<std::time::Duration>) -> ModelView {
        self.store_call_latency = latency;
        self
    }

    /// The same view, sharing `other`'s ledger: a view remade in the middle of a history
    /// (`check`, at a swarm selection) keeps the books the checkers have kept so far.
    pub fn sharing_ledger(mut self, other: &ModelView) -> ModelView {
        self.ledger = other.ledger.clone();
        self
    }

    /// The books several checkers keep alike ([`crate::checkers::ledger`]).
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// The longest one broker call takes, as the history declares it (zero in a simulation).
    pub fn broker_call_latency(&self) -> std::time::Duration {
        self.broker_call_latency
    }

    /// The longest one store request takes, if the history declares it (`None` in a
    /// simulation: a run keeps what it judges for the whole run).
    pub fn store_call_latency(&self) -> Option<std::time::Duration> {
        self.store_call_latency
    }

    /// Whether the events of kind `tag` are witnessed where they happen (always in a
    /// simulation; in a history, as its header's `emits` says).
    pub fn witnesses(&self, tag: u8) -> bool {
        self.unwitnessed & (1u64 << tag) == 0
    }

    /// The same view, answering `bindings_consistent` with `probe` (checkers' unit tests).
    #[cfg(test)]
    pub(crate) fn with_bindings_probe(mut self, probe: BindingsProbe) -> ModelView {
        self.probe = Some(probe);
        self
    }

    /// Whether `process`'s binding table is consistent right now (its per-lane counts agree
    /// with its tickets); `None` if the process has no table to look at.
    pub fn bindings_consistent(&self, process: ProcessId) -> Option<bool> {
        #[cfg(test)]
        if let Some(probe) = &self.probe {
            return probe(process);
        }
        self.binding_table_consistent(process)
    }

    /// The same view, reading hand-made binding tables (checkers' unit tests).
    #[cfg(test)]
    pub(crate) fn with_tables(
        mut self,
        tables: Rc<RefCell<std::collections::BTreeMap<ProcessId, TableView>>>,
    ) -> ModelView {
        self.tables = Some(tables);
        self
    }

    /// The same view, able to read the binding tables of `cluster`'s running processes.
    /// Weak: the view must not keep the world alive after its run.
    pub fn with_cluster(mut self, cluster: std::rc::Weak<Cluster>) -> ModelView {
        self.cluster = Some(cluster);
        self
    }

    /// Runs `f` on the binding table of `process`, if that process is the one running its
    /// replica now (a dead or replaced process has no table to look at).
    fn with_table<R>(
        &self,
        process: ProcessId,
        f: impl FnOnce(&crate::replica::bindings::BindingState) -> R,
    ) -> Option<R> {
        let cluster = self.cluster.as_ref()?.upgrade()?;
        let slots = cluster.slots.borrow();
        let surface = slots.iter().find_map(|slot| slot.surface.as_ref().filter(|s| s.process == process))?;
        Some(surface.bindings.inspect(f))
    }

    /// The lane `process`'s binding table routes `instance` to (`None`: no table, or the
    /// table has not seen the instance).
    pub fn binding_route(&self, process: ProcessId, instance: InstanceId) -> Option<RouteView> {
        #[cfg(test)]
        if let Some(tables) = &self.tables {
            return tables.borrow().get(&process).and_then(|t| t.routes.get(&instance).copied());
        }
        self.with_table(process, |t| t.route_of(instance)).flatten().map(|(lane, changed)| RouteView { lane, changed })
    }

    /// True if `process`'s binding table keeps its C2 invariant: the per-lane counts agree
    /// with the tickets (`None`: no table).
    pub fn binding_table_consistent(&self, process: ProcessId) -> Option<bool> {
        self.with_table(process, |t| t.consistent())
    }

    /// Calls `visit` on each delivery ticket in `process`'s binding table, in the table's
    /// own order, until it returns false; `None` if there is no table. Allocates nothing:
    /// checkers that look after every turn use this.
    pub fn for_each_binding_ticket(&self, process: ProcessId, mut visit: impl FnMut(TicketView) -> bool) -> Option<()> {
        #[cfg(test)]
        if let Some(tables) = &self.tables {
            let tables = tables.borrow();
            let table = tables.get(&process)?;
            for t in &table.tickets {
                if !visit(*t) {
                    break;
                }
            }
            return Some(());
        }
        self.with_table(process, |t| {
            for (tag, instance, lane, registered) in t.tickets() {
                if !visit(TicketView { tag, instance, lane, registered }) {
                    break;
                }
            }
        })
    }

    /// Calls `visit` on each delivery ticket in `process`'s binding table with the route the
    /// table holds for the ticket's instance ([`Self::binding_route`]), as
    /// [`Self::for_each_binding_ticket`] does: the table is found once, not once a ticket.
    pub fn for_each_binding_ticket_with_route(
        &self,
        process: ProcessId,
        mut visit: impl FnMut(TicketView, Option<RouteView>) -> bool,
    ) -> Option<()> {
        #[cfg(test)]
        if self.tables.is_some() {
            return self.for_each_binding_ticket(process, |t| visit(t, self.binding_route(process, t.instance)));
        }
        self.with_table(process, |t| {
            for (tag, instance, lane, registered) in t.tickets() {
                let route = t.route_of(instance).map(|(lane, changed)| RouteView { lane, changed });
                if !visit(TicketView { tag, instance, lane, registered }, route) {
                    break;
                }
            }
        })
    }

    /// A weak handle on the store's state: it dies with the world (for leak tests).
    #[cfg(test)]
    pub(crate) fn store_weak(&self) -> std::rc::Weak<RefCell<StoreState>> {
        Rc::downgrade(&self.store)
    }

    /// The store's rows and the replicas, read-only, for the abstract-state signature
    /// ([`crate::signature`]); the cluster is `None` in hand-made views or once the world is gone.
    pub(crate) fn with_parts<R>(&self, f: impl FnOnce(&StoreState, Option<&Cluster>) -> R) -> R {
        let cluster = self.cluster.as_ref().and_then(|c| c.upgrade());
        f(&self.store.borrow(), cluster.as_deref())
    }

    /// The scenario being run.
    pub fn scenario(&self) -> &Scenario {
        &self.config.scenario
    }

    /// The fault rates in force for this seed (after swarm selection).
    pub fn faults(&self) -> &Faults {
        &self.config.faults
    }

    /// Instances that have not committed every step.
    pub fn incomplete_instances(&self) -> Vec<InstanceId> {
        let s = self.store.borrow();
        s.instances.iter().enumerate().filter(|(_, r)| !r.completed()).map(|(i, _)| InstanceId(i as u32)).collect()
    }

    /// Claims currently held: instance and owner.
    pub fn held_claims(&self) -> Vec<(InstanceId, OwnerId)> {
        let s = self.store.borrow();
        s.instances.iter().enumerate().filter_map(|(i, r)| r.owner.map(|o| (InstanceId(i as u32), o))).collect()
    }

    /// The committed version of an instance.
    pub fn version(&self, instance: InstanceId) -> Option<u64> {
        self.store.borrow().instances.get(instance.0 as usize).map(|r| r.version)
    }

    /// Number of instances.
    pub fn instance_count(&self) -> usize {
        self.store.borrow().instances.len()
    }

    #[cfg(test)]
    /// The store's rows, for checker tests that stage a state.
    pub fn store_state_for_tests(&self) -> Rc<RefCell<StoreState>> {
        self.store.clone()
    }

    /// The first difference a differential run saw between the model's store and the SQL
    /// engine, as one line (`None`: none, or not a differential run).
    pub fn store_divergence(&self) -> Option<String> {
        self.store.borrow().divergence.as_ref().map(|d| d.to_string())
    }
}

//! The read-only view of the model that checkers get, built-in and user-written alike.
//! It exposes the scenario and the store's truth through methods that cannot change
//! anything; no checker reads the model any other way.

use std::cell::RefCell;
use std::rc::Rc;

use crate::ctx::Config;
use crate::ids::{InstanceId, OwnerId, ProcessId};
use crate::scenario::{Faults, Scenario};
use crate::store::StoreState;

/// A read-only question the model answers about a process's binding table: is it
/// consistent (the C2 invariant of L9)? `None` if the process has no table (never booted,
/// or replaced). Wired by the model at setup, so checkers never import component code.
pub type BindingsProbe = Box<dyn Fn(ProcessId) -> Option<bool>>;

/// What a checker may read besides the events.
pub struct ModelView {
    config: Rc<Config>,
    store: Rc<RefCell<StoreState>>,
    bindings: Option<BindingsProbe>,
}

impl ModelView {
    /// A view of `store` under the run's `config` (the scenario and this seed's effective faults).
    pub fn new(config: Rc<Config>, store: Rc<RefCell<StoreState>>) -> ModelView {
        ModelView { config, store, bindings: None }
    }

    /// The view, able to answer [`ModelView::bindings_consistent`] through `probe`.
    pub fn with_bindings_probe(mut self, probe: BindingsProbe) -> ModelView {
        self.bindings = Some(probe);
        self
    }

    /// Whether `process`'s binding table is consistent right now (its per-lane counts agree
    /// with its tickets); `None` if the process has no table or the view was built without
    /// the model's probe.
    pub fn bindings_consistent(&self, process: ProcessId) -> Option<bool> {
        self.bindings.as_ref().and_then(|probe| probe(process))
    }

    /// A weak handle on the store's state: it dies with the world (for leak tests).
    #[cfg(test)]
    pub(crate) fn store_weak(&self) -> std::rc::Weak<RefCell<StoreState>> {
        Rc::downgrade(&self.store)
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
}

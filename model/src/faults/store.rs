//! Store faults: latency spikes, transient aborts and short unavailability. An aborted or
//! unavailable call writes nothing and the store client retries it within a bounded
//! horizon (see [`crate::store::RETRY_HORIZON`]); a committed write is never lost — a
//! fault the spec does not tolerate is never injected.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use sutra_sim_core::{executor, SimTime, Tracer};

use super::options::StoreOptions;
use super::FaultKind;
use crate::event::ModelEvent;
use crate::streams;
use crate::world::World;

/// The store's view of its own faults.
#[derive(Clone)]
pub struct StoreFaults {
    options: StoreOptions,
    gate: super::FaultGate,
    unavailable_until: Rc<Cell<SimTime>>,
}

impl StoreFaults {
    /// Faults with these options, off once `healed` is set.
    pub fn new(options: StoreOptions, healed: Rc<Cell<bool>>, tracer: Tracer<ModelEvent>) -> StoreFaults {
        StoreFaults {
            options,
            gate: super::FaultGate::new(FaultKind::Store, streams::STORE, healed, tracer),
            unavailable_until: Rc::new(Cell::new(SimTime::ZERO)),
        }
    }

    /// Extra latency for this call (zero unless a spike fires).
    pub fn spike(&self) -> Duration {
        if !self.gate.fires(self.options.latency_spike_per_call) {
            return Duration::ZERO;
        }
        let d = streams::millis_up_to(streams::STORE, self.options.latency_spike_max);
        self.gate.report(d);
        d
    }

    /// True if this call fails without writing: the store is unavailable, or the
    /// transaction aborts.
    pub fn refuses_call(&self) -> bool {
        if executor::now() < self.unavailable_until.get() {
            return true;
        }
        if self.gate.fires(self.options.abort_per_call) {
            self.gate.report(Duration::ZERO);
            return true;
        }
        false
    }

    /// Makes the store unavailable for `duration` from now.
    pub fn make_unavailable(&self, duration: Duration) {
        self.unavailable_until.set(executor::now().add(duration));
        self.gate.report(duration);
    }

    /// The options in force.
    pub fn options(&self) -> &StoreOptions {
        &self.options
    }
}

/// Draws whether the store becomes unavailable this tick, and for how long.
pub fn maybe_make_unavailable(world: &Rc<World>) {
    let options = world.store.faults().options().clone();
    if !world.fault(options.unavailable_per_tick) {
        return;
    }
    let d = streams::millis_up_to(streams::STORE, options.unavailable_max);
    world.store.faults().make_unavailable(d);
}

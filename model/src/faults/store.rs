//! Store faults: latency spikes, transient aborts and short unavailability. An aborted or
//! unavailable call writes nothing and the store client retries it within a bounded
//! horizon (see [`crate::spec::RETRY_HORIZON`]); a committed write is never lost — a
//! fault the spec does not tolerate is never injected.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use sutra_sim_core::{executor, SimTime};

use super::kind::FaultKind;
use crate::ctx::{Context, FaultGate};
use crate::streams;

/// Store faults inside a call draw from the store's own stream.
const GATE: FaultGate = FaultGate { kind: FaultKind::Store, stream: streams::STORE };
/// Unavailability is decided on the injector's tick, from the injector's stream.
const TICK_GATE: FaultGate = FaultGate { kind: FaultKind::Store, stream: streams::FAULTS };

/// Why the store refused a call; either way it wrote nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The store was unavailable: the request never reached a transaction.
    Unavailable,
    /// The transaction aborted (a transient conflict): the client is told so.
    Aborted,
}

/// The store's view of its own faults.
#[derive(Clone)]
pub struct StoreFaults {
    ctx: Rc<Context>,
    unavailable_until: Rc<Cell<SimTime>>,
}

impl StoreFaults {
    /// The store's faults as the context configures them (off once healed).
    pub fn new(ctx: Rc<Context>) -> StoreFaults {
        StoreFaults { ctx, unavailable_until: Rc::new(Cell::new(SimTime::ZERO)) }
    }

    /// Extra latency for this call (zero unless a spike fires).
    pub fn spike(&self) -> Duration {
        if !self.ctx.fires(GATE, self.ctx.faults().store.latency_spike_per_call) {
            return Duration::ZERO;
        }
        let d = streams::millis_up_to(streams::STORE, self.ctx.faults().store.latency_spike_max);
        self.ctx.report(GATE.kind, None, d);
        d
    }

    /// Whether this call fails without writing, and why: the store is unavailable, or the
    /// transaction aborts.
    pub fn refusal(&self) -> Option<Refusal> {
        if executor::now() < self.unavailable_until.get() {
            return Some(Refusal::Unavailable);
        }
        if self.ctx.fires(GATE, self.ctx.faults().store.abort_per_call) {
            self.ctx.report(GATE.kind, None, Duration::ZERO);
            return Some(Refusal::Aborted);
        }
        None
    }

    /// Makes the store unavailable for `duration` from now.
    pub fn make_unavailable(&self, duration: Duration) {
        self.unavailable_until.set(executor::now().add(duration));
        self.ctx.report(GATE.kind, None, duration);
    }
}

/// Draws whether the store becomes unavailable this tick, and for how long.
pub fn maybe_make_unavailable(faults: &StoreFaults) {
    let options = &faults.ctx.faults().store;
    if !faults.ctx.fires(TICK_GATE, options.unavailable_per_tick) {
        return;
    }
    let d = streams::millis_up_to(streams::STORE, options.unavailable_max);
    faults.make_unavailable(d);
}

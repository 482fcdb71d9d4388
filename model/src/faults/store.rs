//! Store faults: latency spikes, transient aborts and short unavailability. An aborted or
//! unavailable call writes nothing and the store client retries it within a bounded
//! horizon (see [`crate::spec::RETRY_HORIZON`]); a committed write is never lost — a
//! fault the spec does not tolerate is never injected.
//!
//! The `store-replies` kind strikes the request/reply boundary of every store client's
//! calls — a lane's, a migration's, and a role's (the sweeper's, the timer poller's, a pull
//! worker's; their requests can be lost, or their replies, never delayed): a lost request (nothing applied), a lost reply after the store applied the call
//! (an ambiguous outcome the client must resolve), or the calling process frozen or killed
//! just before it sends a request or just after the reply arrives. The client waits out its
//! timeout on a lost message; it never learns which of the two was lost. A lost request may
//! instead be delayed (`late_landing_per_lost`): it lands after the client gave up, whatever
//! the sender is doing by then — retrying, frozen, dead, or on its next execution. While
//! the boundary is struck at all, every request travels on the wire (`Store::exchange`),
//! so one sent by a process that then freezes lands on time, not when it resumes.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use sutra_sim_core::sync::{oneshot, Sender};
use sutra_sim_core::{executor, NodeId, SimTime};

use super::kind::FaultKind;
use crate::ctx::{Context, FaultGate};
use crate::event::{CallFault, ModelEvent, StoreCall};
use crate::ids::{ExecId, InstanceId};
use crate::ratio::Ratio;
use crate::streams;

/// Store faults inside a call draw from the store's own stream.
const GATE: FaultGate = FaultGate { kind: FaultKind::Store, stream: streams::STORE };
/// Unavailability is decided on the injector's tick, from the injector's stream.
const TICK_GATE: FaultGate = FaultGate { kind: FaultKind::Store, stream: streams::FAULTS };
/// The request/reply boundary draws from its own stream.
const WIRE_GATE: FaultGate = FaultGate { kind: FaultKind::StoreReplies, stream: streams::WIRE };

/// How the environment strikes a caller's process at a store call's boundary: freeze
/// (`crash` false) or kill the process on `node` (a replica's), for `pause`, then send on
/// `done` — which a frozen caller hears only once resumed, and a killed one never.
pub type BoundaryStrike = Rc<dyn Fn(NodeId, bool, Duration, Sender<()>)>;

/// What became of a request on its way to the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestFate {
    /// It reached the store.
    Arrives,
    /// It was lost: nothing is applied.
    Lost,
    /// It is in flight for this long (past the client's timeout), then lands.
    Delayed(Duration),
}

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
    /// Set by the world once it exists (the store is built before it).
    strike: Rc<RefCell<Option<BoundaryStrike>>>,
}

impl StoreFaults {
    /// The store's faults as the context configures them (off once healed).
    pub fn new(ctx: Rc<Context>) -> StoreFaults {
        StoreFaults { ctx, unavailable_until: Rc::new(Cell::new(SimTime::ZERO)), strike: Rc::new(RefCell::new(None)) }
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

    /// Installs how callers are struck at a call's boundary.
    pub fn set_boundary_strike(&self, strike: BoundaryStrike) {
        *self.strike.borrow_mut() = Some(strike);
    }

    /// How long a lane's store client waits for a reply.
    pub fn client_timeout(&self) -> Duration {
        self.ctx.faults().store_replies.client_timeout
    }

    /// What becomes of this call's request on its way (reported as struck when lost or
    /// delayed). Only a request the store can recognise as a copy (`keyed`) is drawn as
    /// delayed: its first copy then lands after the client's timeout, up to
    /// `late_landing_max` later.
    pub fn request_fate(&self, call: StoreCall, instance: InstanceId, exec: ExecId, keyed: bool) -> RequestFate {
        let options = &self.ctx.faults().store_replies;
        if !self.ctx.fires(WIRE_GATE, options.request_lost_per_call) {
            return RequestFate::Arrives;
        }
        if keyed && self.ctx.fires(WIRE_GATE, options.late_landing_per_lost) {
            let after = self.client_timeout() + streams::millis_up_to(streams::WIRE, options.late_landing_max);
            self.struck(call, CallFault::RequestDelayed, instance, exec, after);
            return RequestFate::Delayed(after);
        }
        self.struck(call, CallFault::RequestLost, instance, exec, self.client_timeout());
        RequestFate::Lost
    }

    /// Witnesses a delayed request reaching the store (`task`: the task that sent it).
    pub fn landed_late(&self, call: StoreCall, instance: InstanceId, exec: ExecId, task: Option<u64>) {
        self.ctx.emit(ModelEvent::CallStruck { instance, exec, call, fault: CallFault::LateLanded, task });
    }

    /// True if this applied call's reply is lost (reported as struck).
    pub fn reply_lost(&self, call: StoreCall, instance: InstanceId, exec: ExecId) -> bool {
        self.lost(self.ctx.faults().store_replies.reply_lost_per_call, CallFault::ReplyLost, call, instance, exec)
    }

    fn lost(&self, rate: Ratio, fault: CallFault, call: StoreCall, instance: InstanceId, exec: ExecId) -> bool {
        if !self.ctx.fires(WIRE_GATE, rate) {
            return false;
        }
        self.struck(call, fault, instance, exec, self.client_timeout());
        true
    }

    fn struck(&self, call: StoreCall, fault: CallFault, instance: InstanceId, exec: ExecId, detail: Duration) {
        let task = crate::sender::sender();
        self.ctx.emit(ModelEvent::CallStruck { instance, exec, call, fault, task });
        self.ctx.report(FaultKind::StoreReplies, None, detail);
    }

    /// True if the scenario strikes the request/reply boundary at all: requests then travel
    /// on the wire, independent of their senders' processes (see `Store::exchange`).
    pub fn on_the_wire(&self) -> bool {
        let options = &self.ctx.faults().store_replies;
        !(options.request_lost_per_call.is_never() && options.reply_lost_per_call.is_never())
    }

    /// True if a role's request reaches the store (otherwise it is reported lost).
    pub fn role_request_arrives(&self, call: StoreCall, instance: Option<InstanceId>) -> bool {
        let rate = self.ctx.faults().store_replies.request_lost_per_call;
        !self.role_lost(rate, CallFault::RequestLost, call, instance)
    }

    /// True if a role's applied call's reply is lost (reported as struck).
    pub fn role_reply_lost(&self, call: StoreCall, instance: Option<InstanceId>) -> bool {
        self.role_lost(self.ctx.faults().store_replies.reply_lost_per_call, CallFault::ReplyLost, call, instance)
    }

    fn role_lost(&self, rate: Ratio, fault: CallFault, call: StoreCall, instance: Option<InstanceId>) -> bool {
        if !self.ctx.fires(WIRE_GATE, rate) {
            return false;
        }
        let task = crate::sender::sender();
        self.ctx.emit(ModelEvent::RoleCallStruck { call, fault, for_instance: instance, task });
        self.ctx.report(FaultKind::StoreReplies, None, self.client_timeout());
        true
    }

    /// Maybe strikes the calling process at the boundary of a call: just before its request
    /// (`before`) or just after its reply. A frozen caller carries on once resumed; a killed
    /// one never returns from here.
    pub async fn at_boundary(&self, call: StoreCall, instance: InstanceId, exec: ExecId, before: bool) {
        let options = &self.ctx.faults().store_replies;
        let crash = self.ctx.fires(WIRE_GATE, options.boundary_crash_per_call);
        if !crash && !self.ctx.fires(WIRE_GATE, options.boundary_pause_per_call) {
            return;
        }
        let Some(strike) = self.strike.borrow().clone() else { return };
        let pause =
            if crash { Duration::ZERO } else { streams::millis_up_to(streams::WIRE, options.boundary_pause_max) };
        let fault = match (crash, before) {
            (true, true) => CallFault::CrashedBefore,
            (true, false) => CallFault::CrashedAfter,
            (false, true) => CallFault::PausedBefore,
            (false, false) => CallFault::PausedAfter,
        };
        self.struck(call, fault, instance, exec, pause);
        let (done, struck) = oneshot();
        strike(executor::current_node(), crash, pause, done);
        let _ = struck.await;
    }

    /// Makes the store unavailable for `duration` from now.
    pub fn make_unavailable(&self, duration: Duration) {
        self.unavailable_until.set(executor::now().add(duration));
        self.ctx.report(GATE.kind, None, duration);
    }
}

/// Draws whether the store becomes unavailable this tick, and for how long. Never boosted
/// (`Context::fires_exact`): scenario validation keeps one outage inside the client's retry
/// horizon, and outages several times as frequent would chain past it.
pub fn maybe_make_unavailable(faults: &StoreFaults) {
    let options = &faults.ctx.faults().store;
    if !faults.ctx.fires_exact(TICK_GATE, options.unavailable_per_tick) {
        return;
    }
    let d = streams::millis_up_to(streams::STORE, options.unavailable_max);
    faults.make_unavailable(d);
}

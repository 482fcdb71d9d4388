//! Fault injection (DESIGN.md §6): one file per fault kind, each with its typed options
//! (in [`options`]) and its injection code. The injector runs on the world node during the
//! faulty phase, ticking every `faults.tick` and drawing each per-tick fault; per-action
//! faults (mis-routing, duplicate delivery, slow steps, store aborts, late timers) are
//! drawn where the action happens. At `heal_at` — or as soon as the work is done — faults
//! stop, paused replicas resume and dead ones restart. Only faults the spec tolerates are
//! injected: the store never loses a committed write, and its clock stays authoritative.

pub mod broker;
pub mod clock_skew;
pub mod crash;
pub mod lease;
pub mod misroute;
pub mod options;
pub mod pause;
pub mod slow_step;
pub mod store;
pub mod swarm;
pub mod timer_jitter;

use std::rc::Rc;

use serde::{Deserialize, Serialize};
use sutra_sim_core::executor::{self, sleep};
use sutra_sim_core::NodeStatus;

use crate::event::ModelEvent;
use crate::world::World;

/// The fault kinds of DESIGN.md §6, by their names there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    /// The process dies at an arbitrary await point.
    ReplicaCrash,
    /// The process freezes, then carries on.
    ProcessPause,
    /// Work goes to the wrong lane or replica; the routing hash changes.
    Misroute,
    /// Replica clock offset, drift and steps.
    ClockSkew,
    /// Duplicate, delayed, reordered deliveries; redelivery after consumer death.
    Broker,
    /// Store latency spikes, transient aborts, short unavailability.
    Store,
    /// A live step outlasts the claim timeout.
    SlowStep,
    /// Timers fire late.
    TimerJitter,
    /// The sweeper lease holder dies or pauses.
    Lease,
}

impl FaultKind {
    /// Every kind, in DESIGN.md order.
    pub const ALL: [FaultKind; 9] = [
        FaultKind::ReplicaCrash,
        FaultKind::ProcessPause,
        FaultKind::Misroute,
        FaultKind::ClockSkew,
        FaultKind::Broker,
        FaultKind::Store,
        FaultKind::SlowStep,
        FaultKind::TimerJitter,
        FaultKind::Lease,
    ];

    /// The name as DESIGN.md and the CLI write it.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::ReplicaCrash => "replica-crash",
            FaultKind::ProcessPause => "process-pause",
            FaultKind::Misroute => "misroute",
            FaultKind::ClockSkew => "clock-skew",
            FaultKind::Broker => "broker",
            FaultKind::Store => "store",
            FaultKind::SlowStep => "slow-step",
            FaultKind::TimerJitter => "timer-jitter",
            FaultKind::Lease => "lease",
        }
    }

    /// What the fault does, in one line.
    pub fn description(self) -> &'static str {
        match self {
            FaultKind::ReplicaCrash => "the process dies at an arbitrary await point; it restarts later as a new incarnation, or stays dead until the heal",
            FaultKind::ProcessPause => "the process freezes for shorter or longer than the claim timeout, then carries on; variant: a replacement with the same identity starts meanwhile",
            FaultKind::Misroute => "a relay or timer fire goes to the wrong lane or the wrong replica; variant: the routing hash changes mid-run",
            FaultKind::ClockSkew => "per-replica clock offset, drift and steps; the store's clock stays authoritative",
            FaultKind::Broker => "duplicate delivery, delay, reorder; redelivery after consumer death",
            FaultKind::Store => "latency spikes, transient aborts (nothing written), short unavailability",
            FaultKind::SlowStep => "a live step outlasts the claim timeout (live-but-slow)",
            FaultKind::TimerJitter => "timers fire late",
            FaultKind::Lease => "the sweeper's lease holder dies or pauses",
        }
    }
}

/// A component's own fault switch: draws its faults from its own stream, never after the
/// heal, and reports each injection in the trace. The broker and the store hold one, since
/// their faults fire inside their own operations rather than from the injector's tick.
#[derive(Clone)]
pub struct FaultGate {
    kind: FaultKind,
    stream: sutra_sim_core::Stream,
    healed: Rc<std::cell::Cell<bool>>,
    tracer: sutra_sim_core::Tracer<ModelEvent>,
}

impl FaultGate {
    /// A gate for `kind`, drawing from `stream`, closed once `healed` is set.
    pub fn new(
        kind: FaultKind,
        stream: sutra_sim_core::Stream,
        healed: Rc<std::cell::Cell<bool>>,
        tracer: sutra_sim_core::Tracer<ModelEvent>,
    ) -> FaultGate {
        FaultGate { kind, stream, healed, tracer }
    }

    /// True if a fault of this rate fires now.
    pub fn fires(&self, rate: crate::ratio::Ratio) -> bool {
        !self.healed.get() && !rate.is_never() && rate.draw(self.stream)
    }

    /// Reports an injection of this gate's kind.
    pub fn report(&self, detail: std::time::Duration) {
        self.tracer.emit(ModelEvent::FaultInjected {
            fault: self.kind,
            replica: None,
            detail_ns: sutra_sim_core::time::duration_nanos(detail),
        });
    }
}

/// Reports an injected fault in the trace.
pub fn report(world: &World, fault: FaultKind, replica: Option<u32>, detail: std::time::Duration) {
    world.emit(ModelEvent::FaultInjected { fault, replica, detail_ns: sutra_sim_core::time::duration_nanos(detail) });
}

/// The injector loop: one tick at a time until the heal.
pub async fn inject(world: Rc<World>) {
    let heal_at = sutra_sim_core::SimTime(world.scenario.phases.heal_at.as_nanos() as u64);
    loop {
        sleep(world.faults.tick).await;
        if world.healed.get() {
            return;
        }
        if executor::now() >= heal_at {
            heal(&world);
            return;
        }
        crash::maybe_crash(&world);
        pause::maybe_pause(&world);
        misroute::maybe_change_hash(&world);
        clock_skew::maybe_step(&world);
        store::maybe_make_unavailable(&world);
        lease::maybe_hit_holder(&world);
    }
}

/// Ends the faulty phase: no more faults, every paused replica (zombies included)
/// resumes, every dead one restarts. Idempotent.
pub fn heal(world: &Rc<World>) {
    if world.healed.replace(true) {
        return;
    }
    world.emit(ModelEvent::Healed);
    let replicas: Vec<(u32, sutra_sim_core::NodeId)> =
        world.replicas.borrow().iter().enumerate().map(|(i, r)| (i as u32, r.node)).collect();
    for (index, node) in replicas {
        match executor::node_status(node) {
            NodeStatus::Paused => pause::resume(world, index, node),
            NodeStatus::Dead => executor::restart(node),
            NodeStatus::Alive => {}
        }
    }
    let zombies: Vec<(u32, sutra_sim_core::NodeId)> = world.zombies.borrow().iter().map(|(i, n, _)| (*i, *n)).collect();
    for (index, node) in zombies {
        pause::resume(world, index, node);
    }
}

//! The fault table and the gates (DESIGN.md §6). The table ([`kind`], [`options`]) names
//! every fault kind and its typed options. A *gate* is a fault drawn inside a component,
//! where the fault strikes: a dispatch mis-routed, a step slowed, a timer fired late, a
//! store or broker call faulted, a periodic role's phase, a timer's skew witnessed. Gates
//! sit below the components and know nothing of the world; what acts on the whole world
//! (crash, pause, cancel, lease, clock steps, swarm, the heal) is the injector
//! ([`crate::injector`]), above it. Only faults the spec tolerates are injected: the store
//! never loses a committed write, and its clock stays authoritative.

pub mod broker;
pub mod hung_step;
pub mod kind;
pub mod misroute;
pub mod options;
pub mod slow_step;
pub mod store;
pub mod timeout_watch;
pub mod timer_jitter;

pub use kind::FaultKind;

/// The phase of a periodic role with period `period`: how long it waits before its
/// first period. Zero unless the scenario asks for drawn phases (`faults.phases`), then
/// drawn per run (per process start, for a replica's roles) to the nanosecond.
pub fn phase(ctx: &crate::ctx::Context, period: std::time::Duration) -> std::time::Duration {
    if ctx.faults().phases {
        crate::streams::nanos_below(crate::streams::PHASES, period)
    } else {
        std::time::Duration::ZERO
    }
}

//! Which trace events are faults. Shrink reports count them before and after, stories show
//! them around the failing instance, and timelines mark them — all through this one
//! definition, so the three always agree.
//!
//! The model reports every injection of every fault kind as one `fault-injected` event,
//! besides the fault's own events (`replica-crashed`, `replica-paused`, `clock-skewed`, a
//! dispatch marked mis-routed, …). Counting `fault-injected` counts each injection exactly
//! once, whatever its kind; the specific events and the recoveries (restart, resume, heal)
//! are *environment* events: shown in stories beside the faults, but not counted.

use sutra_sim_model::faults::FaultKind;
use sutra_sim_model::ModelEvent;

/// The kind of fault `event` reports the injection of, if it reports one. This is the
/// definition of a "fault event" everywhere in sutra-sim.
pub fn injected_fault(event: &ModelEvent) -> Option<FaultKind> {
    match event {
        ModelEvent::FaultInjected { fault, .. } => Some(*fault),
        _ => None,
    }
}

/// True if `event` reports a fault injection (see [`injected_fault`]).
pub fn is_fault_event(event: &ModelEvent) -> bool {
    injected_fault(event).is_some()
}

/// True if `event` is something the environment did to the world rather than the runtime
/// doing its work: a fault's own event, a recovery, or the heal. Stories show these
/// around the failing instance.
pub fn is_environment_event(event: &ModelEvent) -> bool {
    matches!(
        event,
        ModelEvent::FaultInjected { .. }
            | ModelEvent::ReplicaCrashed { .. }
            | ModelEvent::ShutdownRequested { .. }
            | ModelEvent::ReplicaStopped { .. }
            | ModelEvent::ReplicaRestarted { .. }
            | ModelEvent::ReplicaPaused { .. }
            | ModelEvent::ReplicaResumed { .. }
            | ModelEvent::ClockSkewed { .. }
            | ModelEvent::TimeoutSkewed { .. }
            | ModelEvent::Healed
    ) || matches!(event, ModelEvent::Dispatched { misrouted: true, .. })
}

/// Number of fault events in a trace.
pub fn count_faults<'a>(events: impl IntoIterator<Item = &'a ModelEvent>) -> u64 {
    events.into_iter().filter(|e| is_fault_event(e)).count() as u64
}

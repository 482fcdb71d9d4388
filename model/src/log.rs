//! The model's events as `tracing` records, so `run --log` and `replay --log` show a run
//! as a log a person can filter: every event goes out under the target of the component
//! that witnessed it (`sutra_sim_model::store`, `::broker`, `::replica`, `::faults`,
//! `::admin`, `::workload`, `::pull`), at `debug` (`trace` for lane bookkeeping), with the
//! instance, execution and lane as fields. The simulator's subscriber adds the simulated
//! time and the node. Without a subscriber the cost is one check of a static per target.

use sutra_sim_core::EventKind;

use crate::event::ModelEvent;

/// Emits `event` as a `tracing` record under the target of its component.
pub fn record(event: &ModelEvent) {
    use ModelEvent as E;
    macro_rules! emit {
        ($level:ident, $target:literal) => {
            tracing::$level!(
                target: $target,
                instance = event.instance(),
                exec = exec_of(event),
                lane = event.lane(),
                "{} {:?}",
                event.name(),
                event
            )
        };
    }
    match event {
        E::ClaimGranted { .. }
        | E::ClaimRefused { .. }
        | E::StoreRead { .. }
        | E::MigrationCommitted { .. }
        | E::CommitAccepted { .. }
        | E::CommitRejected { .. }
        | E::RowWritten { .. }
        | E::Released { .. }
        | E::Swept { .. }
        | E::SweepSelected { .. }
        | E::SweepClearMissed { .. }
        | E::LeaseAcquired { .. }
        | E::ClaimFenced { .. }
        | E::TimerScheduled { .. }
        | E::TimerDeferred { .. }
        | E::TaskParked { .. }
        | E::InstanceCompleted { .. }
        | E::RelayPublished { .. } => emit!(debug, "sutra_sim_model::store"),
        E::RelayDelivered { .. }
        | E::RelayAcked { .. }
        | E::RelayRequeued { .. }
        | E::RelayReclaimed { .. }
        | E::RelayDeadLettered { .. } => {
            emit!(debug, "sutra_sim_model::broker")
        }
        E::Lane { .. } => emit!(trace, "sutra_sim_model::replica"),
        E::Dispatched { .. }
        | E::ClaimAttempt { .. }
        | E::Refusal { .. }
        | E::Rehydrated { .. }
        | E::StepStarted { .. }
        | E::StepEnded { .. }
        | E::ExecutionEnded { .. }
        | E::BindingChanged { .. }
        | E::SnapshotUsed { .. }
        | E::ReplicaRestarted { .. } => emit!(debug, "sutra_sim_model::replica"),
        E::ReplicaCrashed { .. }
        | E::PullWorkerCrashed { .. }
        | E::ShutdownRequested { .. }
        | E::ReplicaStopped { .. }
        | E::CallStruck { .. }
        | E::RoleCallStruck { .. }
        | E::TaskAborted { .. }
        | E::ReplicaPaused { .. }
        | E::ReplicaResumed { .. }
        | E::ClockSkewed { .. }
        | E::TimeoutSkewed { .. }
        | E::FaultInjected { .. }
        | E::SwarmSelected { .. }
        | E::Healed => emit!(debug, "sutra_sim_model::faults"),
        E::MigrationRequested { .. } | E::AdminRequestEnded { .. } | E::AdminRequestReceived { .. } => {
            emit!(debug, "sutra_sim_model::admin")
        }
        E::TaskLocked { .. } | E::TaskCompleted { .. } => emit!(debug, "sutra_sim_model::store"),
        E::InstanceStarted { .. } | E::BounceMeter { .. } => emit!(debug, "sutra_sim_model::workload"),
    }
}

/// The execution an event concerns, if any.
fn exec_of(event: &ModelEvent) -> Option<u32> {
    use ModelEvent as E;
    match event {
        E::Dispatched { exec, .. }
        | E::ClaimAttempt { exec, .. }
        | E::ClaimGranted { exec, .. }
        | E::ClaimRefused { exec, .. }
        | E::Refusal { exec, .. }
        | E::Rehydrated { exec, .. }
        | E::StepStarted { exec, .. }
        | E::StepEnded { exec, .. }
        | E::CommitAccepted { exec, .. }
        | E::CommitRejected { exec, .. }
        | E::Released { exec, .. }
        | E::ExecutionEnded { exec, .. }
        | E::MigrationRequested { exec, .. }
        | E::StoreRead { exec, .. }
        | E::MigrationCommitted { exec, .. }
        | E::CallStruck { exec, .. }
        | E::ClaimFenced { exec, .. } => Some(exec.0),
        E::RowWritten { by, .. } => by.map(|e| e.0),
        _ => None,
    }
}

//! Coverage: the sometimes-properties of DESIGN.md §5, one file each. Each names a
//! situation the faults are there to provoke; a sweep counts the seeds that reached it and
//! flags any that no seed reached — a green run that never tested the thing is not a green
//! run. Each property keeps only the books its own situation needs and reads only the
//! events it names (its per-event cost is paid in its own file); [`expected`] says which of
//! them a scenario can be expected to reach.

mod admin_409;
mod ambiguous_commit_resolved;
mod ambiguous_lease_renewal;
mod ambiguous_sweep_clear;
mod books;
mod broker_redelivered;
mod caller_struck_at_store_call;
mod cancelled_execution_released;
mod commit_retried_after_abort;
mod drain_deadline_cancel_released;
mod drained_replica_released;
mod expired_lock_taken_over;
mod fault_injected;
mod froze_retrying_commit;
mod hung_step_completed_elsewhere;
mod hung_up_migration_released;
mod late_claim_fenced;
mod late_release_after_reclaim;
mod lease_holder_froze_before_select;
mod migration_validation_error;
mod misrouted_work_bounced;
mod override_routed;
mod paused_consumer_redelivered;
mod paused_replica_resumed;
mod prefetch_window_full;
mod pull_task_completed;
mod refused_reclaim_after_stale_steal;
mod relay_back_while_copy_queued;
mod relay_refused;
mod replica_died_mid_step;
mod request_landed_after_sender_died;
mod request_landed_while_sender_frozen;
mod restarted_after_graceful_stop;
mod retried_after_claim_held;
mod same_owner_reclaim_granted;
mod skewed_replica_claimed;
mod skewed_timeout_fired;
mod slow_owner_commit_rejected;
mod step_committed;
mod step_failed;
mod sweep_cleared_dead_owner;
mod sweep_interrupted;
#[cfg(test)]
mod tests;
mod timer_deferred;
mod zombie_resumed_mid_step;

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::ModelEvent;
use crate::faults::kind::FaultKind;
use crate::ratio::Ratio;
use crate::scenario::Scenario;
use crate::view::ModelView;

/// One coverage property: its name, what it reads, where it is expected, when it is reached.
pub trait Property: Default + 'static {
    /// The property's name (`sometimes-…`).
    const NAME: &'static str;
    /// The situation, in a few words.
    const DESCRIPTION: &'static str;
    /// The event tags it reads ([`crate::event::tag`]).
    const READS: &'static [u8];
    /// True if `scenario` has the faults or load that provoke the situation.
    fn expected(scenario: &Scenario) -> bool;
    /// True if `event` completes the situation.
    fn reached(&mut self, event: &ModelEvent, view: &ModelView) -> bool;
}

/// A property as a checker.
#[derive(Default)]
struct Covered<P>(P);

impl<P: Property> Checker<ModelEvent, ModelView> for Covered<P> {
    fn interest(&self) -> u64 {
        sutra_sim_core::tag_mask(P::READS)
    }

    fn name(&self) -> &str {
        P::NAME
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Sometimes
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, view: &ModelView) -> Check {
        if self.0.reached(&event.kind, view) {
            Check::Reached
        } else {
            Check::Ok
        }
    }
}

/// A property's registration.
fn spec_of<P: Property>() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: P::NAME,
        kind: CheckerKind::Sometimes,
        description: P::DESCRIPTION,
        rules: &[],
        factory: Arc::new(|| Box::new(Covered::<P>::default()) as Box<dyn Checker<ModelEvent, ModelView>>),
    }
}

/// A property in the listing: its registration and where it is expected.
struct Listed {
    name: &'static str,
    spec: fn() -> CheckerSpec<ModelEvent, ModelView>,
    expected: fn(&Scenario) -> bool,
}

const fn listed<P: Property>() -> Listed {
    Listed { name: P::NAME, spec: spec_of::<P>, expected: P::expected }
}

/// The situation-named properties, in listing order; one per fault kind follows them.
const LISTING: [Listed; 44] = [
    listed::<relay_refused::RelayRefused>(),
    listed::<timer_deferred::TimerDeferred>(),
    listed::<admin_409::Admin409>(),
    listed::<sweep_cleared_dead_owner::SweepClearedDeadOwner>(),
    listed::<slow_owner_commit_rejected::SlowOwnerCommitRejected>(),
    listed::<misrouted_work_bounced::MisroutedWorkBounced>(),
    listed::<replica_died_mid_step::ReplicaDiedMidStep>(),
    listed::<paused_replica_resumed::PausedReplicaResumed>(),
    listed::<skewed_replica_claimed::SkewedReplicaClaimed>(),
    listed::<pull_task_completed::PullTaskCompleted>(),
    listed::<broker_redelivered::BrokerRedelivered>(),
    listed::<step_committed::StepCommitted>(),
    listed::<step_failed::StepFailed<step_failed::Validation>>(),
    listed::<step_failed::StepFailed<step_failed::Unexpected>>(),
    listed::<step_failed::StepFailed<step_failed::Panic>>(),
    listed::<refused_reclaim_after_stale_steal::RefusedReclaimAfterStaleSteal>(),
    listed::<override_routed::OverrideRouted>(),
    listed::<sweep_interrupted::SweepInterrupted>(),
    listed::<paused_consumer_redelivered::PausedConsumerRedelivered>(),
    listed::<skewed_timeout_fired::SkewedTimeoutFired>(),
    // Reads the ledger's shared books, so a checker of its own (see its file).
    Listed {
        name: prefetch_window_full::NAME,
        spec: prefetch_window_full::spec,
        expected: prefetch_window_full::expected,
    },
    listed::<ambiguous_commit_resolved::AmbiguousCommitResolved>(),
    listed::<same_owner_reclaim_granted::SameOwnerReclaimGranted>(),
    listed::<cancelled_execution_released::CancelledExecutionReleased>(),
    listed::<caller_struck_at_store_call::CallerStruckAtStoreCall>(),
    listed::<drained_replica_released::DrainedReplicaReleased>(),
    listed::<drain_deadline_cancel_released::DrainDeadlineCancelReleased>(),
    listed::<restarted_after_graceful_stop::RestartedAfterGracefulStop>(),
    listed::<commit_retried_after_abort::CommitRetriedAfterAbort>(),
    listed::<froze_retrying_commit::FrozeRetryingCommit>(),
    listed::<lease_holder_froze_before_select::LeaseHolderFrozeBeforeSelect>(),
    listed::<zombie_resumed_mid_step::ZombieResumedMidStep>(),
    listed::<relay_back_while_copy_queued::RelayBackWhileCopyQueued>(),
    listed::<expired_lock_taken_over::ExpiredLockTakenOver>(),
    listed::<hung_up_migration_released::HungUpMigrationReleased>(),
    listed::<migration_validation_error::MigrationValidationError>(),
    listed::<late_release_after_reclaim::LateReleaseAfterReclaim>(),
    listed::<ambiguous_lease_renewal::AmbiguousLeaseRenewal>(),
    listed::<ambiguous_sweep_clear::AmbiguousSweepClear>(),
    listed::<request_landed_while_sender_frozen::RequestLandedWhileSenderFrozen>(),
    listed::<request_landed_after_sender_died::RequestLandedAfterSenderDied>(),
    listed::<late_claim_fenced::LateClaimFenced>(),
    listed::<retried_after_claim_held::RetriedAfterClaimHeld>(),
    listed::<hung_step_completed_elsewhere::HungStepCompletedElsewhere>(),
];

/// Every coverage property's registration, in listing order.
pub fn specs() -> Vec<CheckerSpec<ModelEvent, ModelView>> {
    LISTING.iter().map(|p| (p.spec)()).chain(fault_injected::specs()).collect()
}

/// The coverage properties a scenario can be expected to reach: each situation needs the
/// faults or load that provoke it. A sweep flags an expected property no seed reached.
pub fn expected(scenario: &Scenario) -> Vec<&'static str> {
    let named = LISTING.iter().filter(|p| (p.expected)(scenario)).map(|p| p.name);
    named.chain(fault_injected::expected(scenario)).collect()
}

/// True if the scenario configures fault `kind`.
fn on(scenario: &Scenario, kind: FaultKind) -> bool {
    scenario.faults.configured_on(kind)
}

/// True if replicas can crash (the crash fault, or the lease holder's).
fn crashes(s: &Scenario) -> bool {
    on(s, FaultKind::ReplicaCrash) || s.faults.lease.holder_crash_per_tick != Ratio::NEVER
}

/// True if processes can pause (the pause fault, or the lease holder's).
fn pauses(s: &Scenario) -> bool {
    on(s, FaultKind::ProcessPause) || s.faults.lease.holder_pause_per_tick != Ratio::NEVER
}

/// True if operators migrate instances.
fn migrates(s: &Scenario) -> bool {
    !s.admin.migration_per_tick.is_never()
}

/// True if anything can make two claimants meet on one instance.
fn contends(s: &Scenario) -> bool {
    crashes(s)
        || pauses(s)
        || migrates(s)
        || on(s, FaultKind::Misroute)
        || on(s, FaultKind::Broker)
        || on(s, FaultKind::SlowStep)
}

/// True if most steps do not park for a pull worker (where they do, some deep situations
/// are too rare to demand of a sweep).
fn mostly_unparked(s: &Scenario) -> bool {
    let w = &s.workload;
    w.pull_weight <= w.relay_weight + w.timer_weight
}

/// True unless the scenario's sweep is a one-update sweep (no select to witness).
fn two_step_sweep(s: &Scenario) -> bool {
    s.design.sweep != crate::design::SweepShape::OneUpdate
}

/// The common imports of the property files.
mod prelude {
    pub(super) use super::Property;
    pub(super) use crate::event::{tag, ModelEvent as E};
    pub(super) use crate::scenario::Scenario;
    pub(super) use crate::view::ModelView;
}

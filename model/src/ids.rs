//! Identities of the model: instances, processes, owners, executions, deliveries, and the
//! structured codes of refusals (R7).
//!
//! Owner ids are opaque to the store and the sweeper (R14): they compare them for
//! equality and nothing else. The encoding keeps the two conventions of spec 000 apart —
//! a lane owner names one process and one lane index (R11), a migration owner carries a
//! marker no lane can produce (R15) — so no lane can ever generate an admin owner id.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A workflow instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct InstanceId(pub u32);

/// One process: a replica incarnation. A restart or a replacement is a new process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ProcessId(pub u32);

/// An execution: one attempt to resume an instance, from its claim to its exit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ExecId(pub u32);

/// A broker message (one relay), stable across redeliveries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct MessageId(pub u32);

/// The owner written into an instance row's claim. Opaque to the store and the sweeper.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct OwnerId(pub u64);

/// The marker bit that only administrative (migration) owners carry.
const ADMIN_MARKER: u64 = 1 << 63;
/// The marker bit of owner ids built from a stable replica name (`[design] owner-ids =
/// "stable-name"`): the replica's index stands where a process id would.
const STABLE_MARKER: u64 = 1 << 62;
/// Lane owner ids keep the lane index in the low 16 bits (+1, so 0 means "no lane").
const LANE_BITS: u64 = 16;

impl OwnerId {
    /// The owner id of lane `lane` of process `process`: names one process and one lane.
    pub fn lane(process: ProcessId, lane: u16) -> OwnerId {
        OwnerId((u64::from(process.0) << LANE_BITS) | (u64::from(lane) + 1))
    }

    /// The owner id of lane `lane` under the stable name of replica `replica` (a
    /// StatefulSet pod name): every process that ever runs as that replica — a restart, a
    /// replacement started while the old one is frozen — produces the same ids. The design
    /// spec 000 argues against ("an owner id names one process").
    pub fn stable(replica: u32, lane: u16) -> OwnerId {
        OwnerId(STABLE_MARKER | (u64::from(replica) << LANE_BITS) | (u64::from(lane) + 1))
    }

    /// The bare process identity, with no lane suffix (what a per-process owner would be).
    pub fn process(process: ProcessId) -> OwnerId {
        OwnerId(u64::from(process.0) << LANE_BITS)
    }

    /// A migration owner: carries the administrative marker, which no lane produces.
    pub fn migration(operation: u32) -> OwnerId {
        OwnerId(ADMIN_MARKER | u64::from(operation))
    }

    /// True for a migration owner (the administrative marker). The store and the sweeper
    /// never ask (R14); a checker of R15 does.
    pub fn is_migration(self) -> bool {
        self.0 & ADMIN_MARKER != 0
    }

    /// The owner id as a readable string, e.g. `p7#lane-1`, `p7`, `admin!migrate-3`.
    /// Only stories and the deliberately careless sweeper mutant look at this.
    pub fn display_string(self) -> String {
        format!("{self}")
    }
}

impl fmt::Display for OwnerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 & ADMIN_MARKER != 0 {
            return write!(f, "admin!migrate-{}", self.0 & !ADMIN_MARKER);
        }
        if self.0 & STABLE_MARKER != 0 {
            let replica = (self.0 & !STABLE_MARKER) >> LANE_BITS;
            let lane = (self.0 & ((1 << LANE_BITS) - 1)).saturating_sub(1);
            return write!(f, "replica-{replica}#lane-{lane}");
        }
        let process = self.0 >> LANE_BITS;
        match self.0 & ((1 << LANE_BITS) - 1) {
            0 => write!(f, "p{process}"),
            lane => write!(f, "p{process}#lane-{}", lane - 1),
        }
    }
}

impl fmt::Debug for OwnerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

/// The resume paths (R1): every one takes the claim before it rehydrates anything.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ResumePath {
    /// A correlated broker relay.
    Relay,
    /// A due timer fire.
    Timer,
    /// An administrative migration.
    Migration,
    /// A pull worker's completion, re-entering as a fresh delivery.
    PullCompletion,
}

/// Structured refusal and error codes (R7): "lost a race, retry" versus "will never work".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Code {
    /// `SUTRA.RUNTIME.RESUME.CLAIM_HELD`: lost a race for the claim; retry later.
    ResumeClaimHeld,
    /// `SUTRA.ADMIN.MIGRATE.CLAIM_HELD`: the instance is busy; the migration may be retried.
    MigrateClaimHeld,
    /// `SUTRA.RUNTIME.STEP.VALIDATION`: the step's input is invalid; the step will retry
    /// only with new input (modelled as a rare transient).
    StepValidation,
    /// `SUTRA.RUNTIME.STEP.FAILED`: an unexpected failure; retryable.
    StepFailed,
    /// `SUTRA.RUNTIME.STEP.PANIC`: the step panicked; released, then re-raised.
    StepPanic,
    // New variants go last: an event's encoding (which the fingerprint folds) names a code
    // by position.
    /// `SUTRA.ADMIN.MIGRATE.VALIDATION` (422): the migration can never be done as asked (the
    /// instance already completed); the same request will never work.
    MigrateValidation,
    /// `SUTRA.ADMIN.MIGRATE.FAILED` (500): an unexpected failure, or the claim was lost
    /// before the migration's write. The outcome is unknown to the caller (the write may
    /// have landed though its reply was lost): neither a race nor a verdict on the request.
    MigrateFailed,
}

impl Code {
    /// The code as the runtime writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::ResumeClaimHeld => "SUTRA.RUNTIME.RESUME.CLAIM_HELD",
            Code::MigrateClaimHeld => "SUTRA.ADMIN.MIGRATE.CLAIM_HELD",
            Code::StepValidation => "SUTRA.RUNTIME.STEP.VALIDATION",
            Code::StepFailed => "SUTRA.RUNTIME.STEP.FAILED",
            Code::StepPanic => "SUTRA.RUNTIME.STEP.PANIC",
            Code::MigrateValidation => "SUTRA.ADMIN.MIGRATE.VALIDATION",
            Code::MigrateFailed => "SUTRA.ADMIN.MIGRATE.FAILED",
        }
    }

    /// True for "you lost a race, try again"; false for "this attempt will not work as is".
    pub fn is_retryable_race(self) -> bool {
        matches!(self, Code::ResumeClaimHeld | Code::MigrateClaimHeld)
    }

    /// True for "this will never work": the same request must never be sent again. Only
    /// the admin surface's validation code says so; the runtime's step failures are drawn
    /// transients in this model, and a 500's outcome is unknown.
    pub fn is_permanent(self) -> bool {
        matches!(self, Code::MigrateValidation)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_lane_owner_equals_a_migration_owner() {
        for p in 0..50 {
            for lane in 0..8 {
                let l = OwnerId::lane(ProcessId(p), lane);
                for op in 0..50 {
                    assert_ne!(l, OwnerId::migration(op));
                }
                assert_ne!(l, OwnerId::process(ProcessId(p)));
            }
        }
        assert_eq!(OwnerId::lane(ProcessId(7), 1).to_string(), "p7#lane-1");
        assert_eq!(OwnerId::stable(2, 1).to_string(), "replica-2#lane-1");
        assert!(!OwnerId::stable(2, 1).is_migration());
        assert_ne!(OwnerId::stable(7, 1), OwnerId::lane(ProcessId(7), 1));
        assert_eq!(OwnerId::migration(3).to_string(), "admin!migrate-3");
        assert!(OwnerId::migration(3).is_migration());
        assert!(!OwnerId::lane(ProcessId(7), 1).is_migration());
    }
}

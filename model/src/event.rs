//! The model's typed trace events. Everything a checker judges is here: the store reports
//! the truth of every write (claims, commits, releases, sweeps), the lanes report their
//! executions from claim to exit, and the environment reports every fault it injects.
//! Events carry facts, never which mutant is on.

use serde::{Deserialize, Serialize};
use sutra_sim_core::{EventKind, SnapshotUse};

use crate::ids::{Code, ExecId, InstanceId, MessageId, OwnerId, ProcessId, ResumePath};

/// How a refusal was answered (R4–R6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Reaction {
    /// The relay was requeued for later redelivery (R4).
    Requeued,
    /// The timer fire was deferred (R5): refusal number `attempt` (1-based), after `backoff_ns`.
    Deferred {
        /// Refusals of this timer so far, including this one.
        attempt: u32,
        /// The delay until the next fire.
        backoff_ns: u64,
    },
    /// The administrative call answered 409 (R6).
    Conflict409,
}

/// How an execution ended (R9 enumerates the exits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Exit {
    /// The step committed (and the claim was released with it).
    Committed,
    /// The claim was refused; nothing was read.
    Refused,
    /// The trigger was already applied (a duplicate); released without running.
    Duplicate,
    /// The step failed validation.
    ValidationError,
    /// The step failed unexpectedly.
    UnexpectedFailure,
    /// The step panicked; released, then re-raised.
    Panic,
    /// The commit was rejected: the claim had been lost (swept or stolen as stale).
    LostClaim,
    /// A migration finished.
    Migrated,
    /// The lane refused a reentrant call (the model's own bug), and the execution gave up.
    LaneError,
}

/// The trigger a commit names: what drove the step (R25). The store records it; a checker
/// matches it against the trigger's own issue (a relay published for a version, a timer row
/// written for a version).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TriggerRef {
    /// A relay, by message id (a pull completion comes back as one).
    Message(MessageId),
    /// The instance's timer row, written for the step after version `expects`.
    TimerRow {
        /// The version the row was written for.
        expects: u64,
    },
}

/// Which kind of write the store made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WriteKind {
    /// A claim took the row.
    Claim,
    /// A step commit.
    Commit,
    /// An explicit release.
    Release,
    /// The sweeper cleared a stale claim.
    Sweep,
    /// A migration wrote its routing change.
    Migration,
}

/// Which state-lane component of a replica a lane event concerns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Component {
    /// The binding table: routing overrides and delivery tickets.
    Bindings,
}

impl Component {
    /// How many components there are.
    pub const COUNT: usize = 1;

    /// The component's position, below [`Component::COUNT`]. Exhaustive on purpose: a new
    /// component does not compile until it has a position here (and `COUNT` beside it).
    pub fn index(self) -> usize {
        match self {
            Component::Bindings => 0,
        }
    }
}

/// What a state lane did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LaneAction {
    /// Item submitted.
    Submitted(u64),
    /// Item's turn began.
    TurnStarted(u64),
    /// Item's turn ended.
    TurnEnded(u64),
    /// A reentrant call was refused at its call site.
    ReentrantRefused,
    /// A submission to a closed lane was refused.
    ClosedRefused,
}

/// One event of the Sutra model. Field names are the model's vocabulary and read the same
/// everywhere: `instance`, `exec` (execution), `owner`, `process`, `path` (resume path),
/// `holder` (who has the claim), versions as committed step counts, times in `_ms`.
#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ModelEvent {
    /// An instance was created and its first trigger published.
    InstanceStarted { instance: InstanceId, steps: u32 },
    /// An instance committed its last step.
    InstanceCompleted { instance: InstanceId },
    /// A relay for `step` was published to the broker.
    RelayPublished { instance: InstanceId, message: MessageId, step: u32 },
    /// The broker handed a relay to a replica process.
    RelayDelivered { instance: InstanceId, message: MessageId, process: ProcessId, redelivery: bool, duplicate: bool },
    /// The relay was acked and will not be delivered again.
    RelayAcked { instance: InstanceId, message: MessageId },
    /// The broker requeued the relay (a refusal or a failed attempt): it will be ready
    /// again no sooner than `delay_ns` from now (broker witness).
    RelayRequeued { instance: InstanceId, message: MessageId, delay_ns: u64 },
    /// The broker took an unacked relay back from its consumer for redelivery: the
    /// consumer died, or its ack never arrived within the ack timeout.
    RelayReclaimed { instance: InstanceId, message: MessageId, process: ProcessId },
    /// A timer row for `step` was written, due at `due_ns`.
    TimerScheduled { instance: InstanceId, step: u32, due_ns: u64 },
    /// The store moved the due time of the instance's timer row written for version
    /// `expects` to `due_ns` (store witness). `attempt` is the row's refusal count after the
    /// deferral; `task` the executor's witness of who asked. A deferral that found no
    /// matching row (already consumed by a commit) wrote nothing and emits nothing.
    TimerDeferred { instance: InstanceId, expects: u64, attempt: u32, due_ns: u64, task: Option<u64> },
    /// A work item was dispatched to an execution lane.
    Dispatched { instance: InstanceId, exec: ExecId, path: ResumePath, process: ProcessId, lane: u16, misrouted: bool },
    /// An instance parked for a pull worker: a task row was written.
    TaskParked { instance: InstanceId, step: u32 },
    /// A pull worker locked the task row of an instance.
    TaskLocked { instance: InstanceId, worker: u32 },
    /// A pull worker completed a task; its completion re-enters as a fresh relay.
    TaskCompleted { instance: InstanceId, worker: u32 },

    /// An execution asked for the claim.
    ClaimAttempt { instance: InstanceId, exec: ExecId, owner: OwnerId, path: ResumePath },
    /// The store granted the claim (store truth): `previous` owner, and whether it was
    /// taken as stale, with its age by the store's clock.
    ClaimGranted {
        instance: InstanceId,
        exec: ExecId,
        owner: OwnerId,
        process: Option<ProcessId>,
        path: ResumePath,
        previous: Option<OwnerId>,
        stale_age_ns: Option<u64>,
        /// The claim epoch this grant wrote.
        epoch: u64,
        /// The task that sent the claim (executor witness).
        task: Option<u64>,
    },
    /// The store refused the claim: `holder` has it.
    ClaimRefused {
        instance: InstanceId,
        exec: ExecId,
        owner: OwnerId,
        path: ResumePath,
        holder: OwnerId,
        task: Option<u64>,
    },
    /// The store served a read of the row (store truth): the claim the reader said it acts
    /// under, and the row's owner, epoch and version at that instant.
    StoreRead {
        instance: InstanceId,
        exec: ExecId,
        claim_owner: OwnerId,
        claim_epoch: u64,
        owner: Option<OwnerId>,
        epoch: u64,
        version: u64,
        task: Option<u64>,
    },
    /// The execution reacted to a refusal.
    Refusal { instance: InstanceId, exec: ExecId, path: ResumePath, code: Code, reaction: Reaction },
    /// The execution read the instance's row (version = committed steps).
    Rehydrated { instance: InstanceId, exec: ExecId, version: u64 },
    /// The step began.
    StepStarted { instance: InstanceId, exec: ExecId, step: u32, slow: bool },
    /// The step's code returned (or failed) with this code (`None`: success).
    StepEnded { instance: InstanceId, exec: ExecId, error: Option<Code> },
    /// The store accepted a commit (store truth): what the writer based it on, what was
    /// current, and what it wrote.
    CommitAccepted {
        instance: InstanceId,
        exec: ExecId,
        /// The writer's owner id and the epoch it named.
        owner: OwnerId,
        epoch: u64,
        /// The row's owner and epoch when the commit arrived.
        owner_before: Option<OwnerId>,
        current_epoch: u64,
        /// The trigger the commit named.
        trigger: TriggerRef,
        based_on: u64,
        version_before: u64,
        version_after: u64,
        task: Option<u64>,
    },
    /// The store rejected a commit: the writer no longer owns the row.
    CommitRejected {
        instance: InstanceId,
        exec: ExecId,
        owner: OwnerId,
        epoch: u64,
        holder: Option<OwnerId>,
        task: Option<u64>,
    },
    /// The row after a write (store truth).
    RowWritten {
        instance: InstanceId,
        write: WriteKind,
        by: Option<ExecId>,
        writer: Option<OwnerId>,
        owner: Option<OwnerId>,
        version: u64,
        /// The row's claim epoch after the write.
        epoch: u64,
        parked: bool,
    },
    /// An explicit release matched the row (`released`) or found it owned by another: the
    /// epoch the releaser named, and the row's.
    Released {
        instance: InstanceId,
        exec: ExecId,
        owner: OwnerId,
        epoch: u64,
        current_epoch: u64,
        released: bool,
        task: Option<u64>,
    },
    /// A migration's releasing write matched the row (`done`) or found it owned by another.
    MigrationCommitted {
        instance: InstanceId,
        exec: ExecId,
        owner: OwnerId,
        epoch: u64,
        current_epoch: u64,
        done: bool,
        task: Option<u64>,
    },
    /// An execution ended, by any path but process death.
    ExecutionEnded { instance: InstanceId, exec: ExecId, exit: Exit },
    /// The sweeper cleared a claim (store truth: its age by the store's clock, the cutoff
    /// it was asked to apply, and whether the caller held the sweep lease).
    Swept {
        instance: InstanceId,
        owner: OwnerId,
        /// The epoch of the claim it cleared.
        epoch: u64,
        age_ns: u64,
        by: ProcessId,
        lease_held: bool,
        task: Option<u64>,
    },
    /// A process took or renewed the sweeper lease.
    /// (`renewal`: it held the lease already.)
    LeaseAcquired { process: ProcessId, until_ns: u64, renewal: bool, task: Option<u64> },
    /// An administrative migration was requested on a replica.
    MigrationRequested { instance: InstanceId, exec: ExecId, process: ProcessId, to_lane: u16 },
    /// A replica's binding table now routes `instance` to `lane`.
    BindingChanged { process: ProcessId, instance: InstanceId, lane: Option<u16> },
    /// A decision was acted on using a value read from a versioned cell.
    SnapshotUsed { process: ProcessId, instance: InstanceId, used: SnapshotUse },
    /// A state-lane component did something.
    Lane { process: ProcessId, component: Component, action: LaneAction },

    /// A replica process was killed.
    ReplicaCrashed { replica: u32, process: ProcessId },
    /// A replica came back as a new process.
    ReplicaRestarted { replica: u32, process: ProcessId },
    /// A replica was frozen.
    ReplicaPaused { replica: u32, process: ProcessId, for_ns: u64 },
    /// A frozen replica carried on.
    ReplicaResumed { replica: u32, process: ProcessId },
    /// A replica's clock was set off the store's.
    ClockSkewed { replica: u32, offset_ms: i64 },
    /// A fault was injected (every kind reports here, besides its specific events).
    FaultInjected { fault: crate::faults::kind::FaultKind, replica: Option<u32>, detail_ns: u64 },
    /// Swarm testing chose which fault kinds are on for this seed.
    SwarmSelected { enabled: Vec<crate::faults::kind::FaultKind> },
    /// The faulty phase ended: no more faults; everything restarts and resumes.
    Healed,
    /// The claim-bounce meter at the end of the run (R13), split by path.
    BounceMeter { relay: u32, timer: u32 },
}

/// Event tags ([`EventKind::tag`]): one per variant, for checkers' interest masks.
pub mod tag {
    /// [`super::ModelEvent::InstanceStarted`].
    pub const INSTANCE_STARTED: u8 = 0;
    /// [`super::ModelEvent::InstanceCompleted`].
    pub const INSTANCE_COMPLETED: u8 = 1;
    /// [`super::ModelEvent::RelayPublished`].
    pub const RELAY_PUBLISHED: u8 = 2;
    /// [`super::ModelEvent::RelayDelivered`].
    pub const RELAY_DELIVERED: u8 = 3;
    /// [`super::ModelEvent::RelayAcked`].
    pub const RELAY_ACKED: u8 = 4;
    /// [`super::ModelEvent::RelayRequeued`].
    pub const RELAY_REQUEUED: u8 = 5;
    /// [`super::ModelEvent::RelayReclaimed`].
    pub const RELAY_RECLAIMED: u8 = 6;
    /// [`super::ModelEvent::TimerScheduled`].
    pub const TIMER_SCHEDULED: u8 = 7;
    /// [`super::ModelEvent::Dispatched`].
    pub const DISPATCHED: u8 = 8;
    /// [`super::ModelEvent::TaskParked`].
    pub const TASK_PARKED: u8 = 9;
    /// [`super::ModelEvent::TaskLocked`].
    pub const TASK_LOCKED: u8 = 10;
    /// [`super::ModelEvent::TaskCompleted`].
    pub const TASK_COMPLETED: u8 = 11;
    /// [`super::ModelEvent::ClaimAttempt`].
    pub const CLAIM_ATTEMPT: u8 = 12;
    /// [`super::ModelEvent::ClaimGranted`].
    pub const CLAIM_GRANTED: u8 = 13;
    /// [`super::ModelEvent::ClaimRefused`].
    pub const CLAIM_REFUSED: u8 = 14;
    /// [`super::ModelEvent::Refusal`].
    pub const REFUSAL: u8 = 15;
    /// [`super::ModelEvent::Rehydrated`].
    pub const REHYDRATED: u8 = 16;
    /// [`super::ModelEvent::StepStarted`].
    pub const STEP_STARTED: u8 = 17;
    /// [`super::ModelEvent::StepEnded`].
    pub const STEP_ENDED: u8 = 18;
    /// [`super::ModelEvent::CommitAccepted`].
    pub const COMMIT_ACCEPTED: u8 = 19;
    /// [`super::ModelEvent::CommitRejected`].
    pub const COMMIT_REJECTED: u8 = 20;
    /// [`super::ModelEvent::RowWritten`].
    pub const ROW_WRITTEN: u8 = 21;
    /// [`super::ModelEvent::Released`].
    pub const RELEASED: u8 = 22;
    /// [`super::ModelEvent::ExecutionEnded`].
    pub const EXECUTION_ENDED: u8 = 23;
    /// [`super::ModelEvent::Swept`].
    pub const SWEPT: u8 = 24;
    /// [`super::ModelEvent::LeaseAcquired`].
    pub const LEASE_ACQUIRED: u8 = 25;
    /// [`super::ModelEvent::MigrationRequested`].
    pub const MIGRATION_REQUESTED: u8 = 26;
    /// [`super::ModelEvent::BindingChanged`].
    pub const BINDING_CHANGED: u8 = 27;
    /// [`super::ModelEvent::SnapshotUsed`].
    pub const SNAPSHOT_USED: u8 = 28;
    /// [`super::ModelEvent::Lane`].
    pub const LANE: u8 = 29;
    /// [`super::ModelEvent::ReplicaCrashed`].
    pub const REPLICA_CRASHED: u8 = 30;
    /// [`super::ModelEvent::ReplicaRestarted`].
    pub const REPLICA_RESTARTED: u8 = 31;
    /// [`super::ModelEvent::ReplicaPaused`].
    pub const REPLICA_PAUSED: u8 = 32;
    /// [`super::ModelEvent::ReplicaResumed`].
    pub const REPLICA_RESUMED: u8 = 33;
    /// [`super::ModelEvent::ClockSkewed`].
    pub const CLOCK_SKEWED: u8 = 34;
    /// [`super::ModelEvent::FaultInjected`].
    pub const FAULT_INJECTED: u8 = 35;
    /// [`super::ModelEvent::SwarmSelected`].
    pub const SWARM_SELECTED: u8 = 36;
    /// [`super::ModelEvent::Healed`].
    pub const HEALED: u8 = 37;
    /// [`super::ModelEvent::BounceMeter`].
    pub const BOUNCE_METER: u8 = 38;
    /// [`super::ModelEvent::StoreRead`].
    pub const STORE_READ: u8 = 39;
    /// [`super::ModelEvent::MigrationCommitted`].
    pub const MIGRATION_COMMITTED: u8 = 40;
    /// [`super::ModelEvent::TimerDeferred`].
    pub const TIMER_DEFERRED: u8 = 41;
}

impl EventKind for ModelEvent {
    #[inline]
    fn log(&self) {
        // One load and compare when nobody listens (the usual run): nothing else is paid.
        if tracing::level_enabled!(tracing::Level::DEBUG) {
            crate::log::record(self);
        }
    }

    fn name(&self) -> &'static str {
        match self {
            ModelEvent::InstanceStarted { .. } => "instance-started",
            ModelEvent::InstanceCompleted { .. } => "instance-completed",
            ModelEvent::RelayPublished { .. } => "relay-published",
            ModelEvent::RelayDelivered { .. } => "relay-delivered",
            ModelEvent::RelayAcked { .. } => "relay-acked",
            ModelEvent::RelayRequeued { .. } => "relay-requeued",
            ModelEvent::RelayReclaimed { .. } => "relay-reclaimed",
            ModelEvent::TimerScheduled { .. } => "timer-scheduled",
            ModelEvent::TimerDeferred { .. } => "timer-deferred",
            ModelEvent::Dispatched { .. } => "dispatched",
            ModelEvent::TaskParked { .. } => "task-parked",
            ModelEvent::TaskLocked { .. } => "task-locked",
            ModelEvent::TaskCompleted { .. } => "task-completed",
            ModelEvent::ClaimAttempt { .. } => "claim-attempt",
            ModelEvent::ClaimGranted { .. } => "claim-granted",
            ModelEvent::ClaimRefused { .. } => "claim-refused",
            ModelEvent::Refusal { .. } => "refusal",
            ModelEvent::Rehydrated { .. } => "rehydrated",
            ModelEvent::StepStarted { .. } => "step-started",
            ModelEvent::StepEnded { .. } => "step-ended",
            ModelEvent::CommitAccepted { .. } => "commit-accepted",
            ModelEvent::CommitRejected { .. } => "commit-rejected",
            ModelEvent::RowWritten { .. } => "row-written",
            ModelEvent::Released { .. } => "released",
            ModelEvent::ExecutionEnded { .. } => "execution-ended",
            ModelEvent::Swept { .. } => "swept",
            ModelEvent::StoreRead { .. } => "store-read",
            ModelEvent::MigrationCommitted { .. } => "migration-committed",
            ModelEvent::LeaseAcquired { .. } => "lease-acquired",
            ModelEvent::MigrationRequested { .. } => "migration-requested",
            ModelEvent::BindingChanged { .. } => "binding-changed",
            ModelEvent::SnapshotUsed { .. } => "snapshot-used",
            ModelEvent::Lane { .. } => "lane",
            ModelEvent::ReplicaCrashed { .. } => "replica-crashed",
            ModelEvent::ReplicaRestarted { .. } => "replica-restarted",
            ModelEvent::ReplicaPaused { .. } => "replica-paused",
            ModelEvent::ReplicaResumed { .. } => "replica-resumed",
            ModelEvent::ClockSkewed { .. } => "clock-skewed",
            ModelEvent::FaultInjected { .. } => "fault-injected",
            ModelEvent::SwarmSelected { .. } => "swarm-selected",
            ModelEvent::Healed => "healed",
            ModelEvent::BounceMeter { .. } => "bounce-meter",
        }
    }

    fn instance(&self) -> Option<u64> {
        use ModelEvent::*;
        match self {
            InstanceStarted { instance, .. }
            | InstanceCompleted { instance }
            | RelayPublished { instance, .. }
            | RelayDelivered { instance, .. }
            | RelayAcked { instance, .. }
            | RelayRequeued { instance, .. }
            | RelayReclaimed { instance, .. }
            | TimerScheduled { instance, .. }
            | TimerDeferred { instance, .. }
            | Dispatched { instance, .. }
            | TaskParked { instance, .. }
            | TaskLocked { instance, .. }
            | TaskCompleted { instance, .. }
            | ClaimAttempt { instance, .. }
            | ClaimGranted { instance, .. }
            | ClaimRefused { instance, .. }
            | Refusal { instance, .. }
            | Rehydrated { instance, .. }
            | StepStarted { instance, .. }
            | StepEnded { instance, .. }
            | CommitAccepted { instance, .. }
            | CommitRejected { instance, .. }
            | RowWritten { instance, .. }
            | Released { instance, .. }
            | ExecutionEnded { instance, .. }
            | Swept { instance, .. }
            | StoreRead { instance, .. }
            | MigrationCommitted { instance, .. }
            | MigrationRequested { instance, .. }
            | BindingChanged { instance, .. }
            | SnapshotUsed { instance, .. } => Some(u64::from(instance.0)),
            _ => None,
        }
    }

    fn lane(&self) -> Option<u32> {
        match self {
            ModelEvent::Dispatched { lane, .. } => Some(u32::from(*lane)),
            _ => None,
        }
    }

    fn tag(&self) -> u8 {
        match self {
            ModelEvent::InstanceStarted { .. } => tag::INSTANCE_STARTED,
            ModelEvent::InstanceCompleted { .. } => tag::INSTANCE_COMPLETED,
            ModelEvent::RelayPublished { .. } => tag::RELAY_PUBLISHED,
            ModelEvent::RelayDelivered { .. } => tag::RELAY_DELIVERED,
            ModelEvent::RelayAcked { .. } => tag::RELAY_ACKED,
            ModelEvent::RelayRequeued { .. } => tag::RELAY_REQUEUED,
            ModelEvent::RelayReclaimed { .. } => tag::RELAY_RECLAIMED,
            ModelEvent::TimerScheduled { .. } => tag::TIMER_SCHEDULED,
            ModelEvent::TimerDeferred { .. } => tag::TIMER_DEFERRED,
            ModelEvent::Dispatched { .. } => tag::DISPATCHED,
            ModelEvent::TaskParked { .. } => tag::TASK_PARKED,
            ModelEvent::TaskLocked { .. } => tag::TASK_LOCKED,
            ModelEvent::TaskCompleted { .. } => tag::TASK_COMPLETED,
            ModelEvent::ClaimAttempt { .. } => tag::CLAIM_ATTEMPT,
            ModelEvent::ClaimGranted { .. } => tag::CLAIM_GRANTED,
            ModelEvent::ClaimRefused { .. } => tag::CLAIM_REFUSED,
            ModelEvent::Refusal { .. } => tag::REFUSAL,
            ModelEvent::Rehydrated { .. } => tag::REHYDRATED,
            ModelEvent::StepStarted { .. } => tag::STEP_STARTED,
            ModelEvent::StepEnded { .. } => tag::STEP_ENDED,
            ModelEvent::CommitAccepted { .. } => tag::COMMIT_ACCEPTED,
            ModelEvent::CommitRejected { .. } => tag::COMMIT_REJECTED,
            ModelEvent::RowWritten { .. } => tag::ROW_WRITTEN,
            ModelEvent::Released { .. } => tag::RELEASED,
            ModelEvent::ExecutionEnded { .. } => tag::EXECUTION_ENDED,
            ModelEvent::Swept { .. } => tag::SWEPT,
            ModelEvent::StoreRead { .. } => tag::STORE_READ,
            ModelEvent::MigrationCommitted { .. } => tag::MIGRATION_COMMITTED,
            ModelEvent::LeaseAcquired { .. } => tag::LEASE_ACQUIRED,
            ModelEvent::MigrationRequested { .. } => tag::MIGRATION_REQUESTED,
            ModelEvent::BindingChanged { .. } => tag::BINDING_CHANGED,
            ModelEvent::SnapshotUsed { .. } => tag::SNAPSHOT_USED,
            ModelEvent::Lane { .. } => tag::LANE,
            ModelEvent::ReplicaCrashed { .. } => tag::REPLICA_CRASHED,
            ModelEvent::ReplicaRestarted { .. } => tag::REPLICA_RESTARTED,
            ModelEvent::ReplicaPaused { .. } => tag::REPLICA_PAUSED,
            ModelEvent::ReplicaResumed { .. } => tag::REPLICA_RESUMED,
            ModelEvent::ClockSkewed { .. } => tag::CLOCK_SKEWED,
            ModelEvent::FaultInjected { .. } => tag::FAULT_INJECTED,
            ModelEvent::SwarmSelected { .. } => tag::SWARM_SELECTED,
            ModelEvent::Healed => tag::HEALED,
            ModelEvent::BounceMeter { .. } => tag::BOUNCE_METER,
        }
    }
}

impl ModelEvent {
    /// The execution the event belongs to, if any.
    pub fn exec(&self) -> Option<ExecId> {
        use ModelEvent::*;
        match self {
            Dispatched { exec, .. }
            | ClaimAttempt { exec, .. }
            | ClaimGranted { exec, .. }
            | ClaimRefused { exec, .. }
            | Refusal { exec, .. }
            | Rehydrated { exec, .. }
            | StepStarted { exec, .. }
            | StepEnded { exec, .. }
            | CommitAccepted { exec, .. }
            | CommitRejected { exec, .. }
            | Released { exec, .. }
            | ExecutionEnded { exec, .. }
            | MigrationRequested { exec, .. } => Some(*exec),
            RowWritten { by, .. } => *by,
            _ => None,
        }
    }
}

/// A time or span of `ns` nanoseconds as milliseconds for people: `30000ms`, or with the
/// fraction when there is one (`30000.0004ms`). Events and checkers keep nanoseconds and
/// compare those; only messages round-trip through this.
pub fn millis_text(ns: u64) -> String {
    let (whole, frac) = (ns / 1_000_000, ns % 1_000_000);
    if frac == 0 {
        format!("{whole}ms")
    } else {
        let digits = format!("{frac:06}");
        format!("{whole}.{}ms", digits.trim_end_matches('0'))
    }
}

//! The model's typed trace events. Everything a checker judges is here: the store reports
//! the truth of every write (claims, commits, releases, sweeps), the lanes report their
//! executions from claim to exit, and the environment reports every fault it injects.
//! Events carry facts, never which mutant is on.
//!
//! Not every event is equally believable: [`ModelEvent::source`] says who emits each kind —
//! a [`Witness`] (the store, the broker, the executor and its environment) or the code
//! under test telling its own story ([`Source::Narrative`]), which a bug can falsify.
//! Built-in safety and liveness checkers read witnesses only (issue #12), and a run's
//! exported history (`--history`, `docs/history.md`) holds witness events only.

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
    /// The execution was cancelled while its process lived (its task aborted, its step
    /// past the per-step timeout, or its replica's drain deadline passed), and released on
    /// the way out.
    Cancelled,
    /// The work was queued for a lane of a replica that began shutting down: handed back
    /// untouched (relay requeued, timer fire deferred) before anything was claimed.
    HandedBack,
}

/// The store calls made over the faulty request/reply boundary: an execution lane's, an
/// administrative migration's, and a role's (the sweeper's, the timer poller's, a pull
/// worker's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum StoreCall {
    /// The claim's conditional update.
    Claim,
    /// A read of the row (rehydration, or resolving an ambiguous commit).
    Read,
    /// The step commit.
    Commit,
    /// An explicit release.
    Release,
    /// A migration's releasing write (its routing change, released in one transaction).
    MigrationWrite,
    /// The sweeper's lease acquisition or renewal.
    Lease,
    /// The one-statement sweep.
    Sweep,
    /// The select of a two-step sweep.
    SweepSelect,
    /// The clear of a two-step sweep.
    SweepClear,
    /// The timer poller's pick of due timers.
    TimerPick,
    /// A timer fire's deferral.
    TimerDefer,
    /// A pull worker's lock of a task row.
    TaskLock,
    /// A pull worker's completion of a task.
    TaskComplete,
}

/// What struck a store call at its boundary (the `store-replies` fault).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CallFault {
    /// The request was lost: the store applied nothing.
    RequestLost,
    /// The reply was lost after the store applied the call.
    ReplyLost,
    /// The caller's process froze just before sending the request.
    PausedBefore,
    /// The caller's process froze just after the reply arrived.
    PausedAfter,
    /// The caller's process died just before sending the request.
    CrashedBefore,
    /// The caller's process died just after the reply arrived.
    CrashedAfter,
    /// The request was delayed in flight: the client gives up on it as lost, and it lands
    /// later (`LateLanded`).
    RequestDelayed,
    /// A delayed request reached the store, after its client had given up on it (the
    /// store then applies it, unless it already applied a copy of the same request).
    LateLanded,
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

/// What an administrative request's handler answered its client, as the replica's HTTP
/// server saw the response go out (or found the client gone).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AdminStatus {
    /// 200: the instance was migrated.
    Migrated,
    /// 409 `SUTRA.ADMIN.MIGRATE.CLAIM_HELD`: the claim was refused (R6).
    Conflict,
    /// 422: the request failed validation (the instance already completed).
    Invalid,
    /// 500: an unexpected failure, or the claim was lost before the migration's write.
    Failed,
    /// 499: the client hung up before the answer; the handler was dropped at its await
    /// point and its exit path ran.
    HungUp,
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
/// `holder` (who has the claim), versions as committed step counts, times and spans in `_ns`.
#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ModelEvent {
    /// An instance was created and its first trigger published.
    InstanceStarted { instance: InstanceId, steps: u32 },
    /// An instance committed its last step.
    InstanceCompleted { instance: InstanceId },
    /// A relay for `step` was published to the broker.
    RelayPublished { instance: InstanceId, message: MessageId, step: u32 },
    /// The broker handed a relay to a replica process. `delivery` names this one copy
    /// (the broker's delivery tag): the ack, requeue or takeback that settles it, and the
    /// refusal of a claim made for it, name it too (optional for readers: `None` in a
    /// history that does not record deliveries).
    RelayDelivered {
        instance: InstanceId,
        message: MessageId,
        process: ProcessId,
        redelivery: bool,
        duplicate: bool,
        #[serde(default)]
        delivery: Option<u32>,
    },
    /// The relay was acked and will not be delivered again (`delivery`: the copy acked).
    RelayAcked {
        instance: InstanceId,
        message: MessageId,
        #[serde(default)]
        delivery: Option<u32>,
    },
    /// The broker requeued the relay (a refusal or a failed attempt): it will be ready
    /// again no sooner than `delay_ns` from now (broker witness; `delivery`: the copy
    /// requeued).
    RelayRequeued {
        instance: InstanceId,
        message: MessageId,
        delay_ns: u64,
        #[serde(default)]
        delivery: Option<u32>,
    },
    /// The broker took an unacked relay back from its consumer for redelivery: the
    /// consumer died, or its ack never arrived within the ack timeout, or (`silent`) the
    /// consumer was alive but sent nothing — paused — past the broker's liveness timeout.
    /// `delivery`: the copy taken back.
    RelayReclaimed {
        instance: InstanceId,
        message: MessageId,
        process: ProcessId,
        silent: bool,
        #[serde(default)]
        delivery: Option<u32>,
    },
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
        /// The process the claimant named (as a grant's `process`).
        #[serde(default)]
        process: Option<ProcessId>,
        /// The broker delivery the claim was made for, as the request named it (relay and
        /// pull-completion paths): the copy this refusal concerns, to be requeued (R4).
        #[serde(default)]
        delivery: Option<u32>,
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
    /// The first statement of a two-step sweep, a read: `stale` claims were older than the
    /// sweeper's cutoff at the store's instant (`lease_held`: whether `by` held an unexpired
    /// lease then; the select itself does not ask). Their clears follow as statements of
    /// their own.
    SweepSelected { by: ProcessId, stale: u32, lease_held: bool, task: Option<u64> },
    /// A two-step sweep's clear of the claim of `epoch` it had selected matched nothing: the
    /// re-check found the claim re-granted, released or young again, or the lease lapsed.
    SweepClearMissed { instance: InstanceId, by: ProcessId, epoch: u64, task: Option<u64> },
    /// A process took or renewed the sweeper lease.
    /// (`renewal`: it held the lease already.)
    LeaseAcquired { process: ProcessId, until_ns: u64, renewal: bool, task: Option<u64> },
    /// An administrative migration was requested on a replica.
    MigrationRequested { instance: InstanceId, exec: ExecId, process: ProcessId, to_lane: u16 },
    /// A replica's binding table now routes `instance` to `lane`.
    BindingChanged { process: ProcessId, instance: InstanceId, lane: Option<u16> },
    /// A decision was acted on using a value read from a versioned cell.
    SnapshotUsed { process: ProcessId, instance: InstanceId, used: SnapshotUse },
    /// A state-lane component did something. `task` is the executor's witness of the task
    /// that did it: the submitter of a `Submitted` item, the lane's worker for a turn.
    Lane { process: ProcessId, component: Component, action: LaneAction, task: Option<u64> },

    /// The environment struck a store call of a lane or a migration (the network lost its
    /// request or reply, or the caller froze or died at its boundary); `task` is the calling
    /// task.
    CallStruck { instance: InstanceId, exec: ExecId, call: StoreCall, fault: CallFault, task: Option<u64> },
    /// The runtime aborted the task of a replica's execution lane while the process lived
    /// (the `cancel` fault); `task` names the aborted task.
    TaskAborted { replica: u32, process: ProcessId, lane: u16, task: u64 },
    /// A replica process was killed.
    ReplicaCrashed { replica: u32, process: ProcessId },
    /// The process of pull worker `worker` was killed (the environment's witness, as for a
    /// replica): whatever it was working on stops, and its task lock runs out.
    PullWorkerCrashed { worker: u32 },
    /// A replica came back as a new process.
    ReplicaRestarted { replica: u32, process: ProcessId },
    /// A replica was frozen.
    ReplicaPaused { replica: u32, process: ProcessId, for_ns: u64 },
    /// A frozen replica carried on.
    ReplicaResumed { replica: u32, process: ProcessId },
    /// A replica's clock was set off the store's.
    ClockSkewed { replica: u32, offset_ms: i64 },
    /// A periodic timer of `process`, set for `asked_ns` by the process's own clock, fired
    /// after `took_ns` of simulated (store) time: early or late because the clock is
    /// skewed (executor witness; reported once each way per process and role).
    TimeoutSkewed { process: ProcessId, asked_ns: u64, took_ns: u64 },
    /// A fault was injected (every kind reports here, besides its specific events). `task`
    /// is the executor's witness of the task it was injected into: for a delay that task
    /// must apply (timer jitter), the one that must wait.
    FaultInjected { fault: crate::faults::kind::FaultKind, replica: Option<u32>, detail_ns: u64, task: Option<u64> },
    /// Swarm testing chose which fault kinds are on for this seed.
    SwarmSelected { enabled: Vec<crate::faults::kind::FaultKind> },
    /// The faulty phase ended: no more faults; everything restarts and resumes.
    Healed,
    /// The claim-bounce meter at the end of the run (R13), split by path, as the harness
    /// reads the runtime's exported counter.
    BounceMeter { relay: u32, timer: u32 },
    // New variants go last: an event's postcard encoding (which the fingerprint folds)
    // names its variant by position.
    /// The environment asked a replica process to shut down gracefully (an orchestrator's
    /// SIGTERM, the `cancel` fault): drain within `drain_ns`, then stop.
    ShutdownRequested { replica: u32, process: ProcessId, drain_ns: u64 },
    /// A replica process exited by itself after a shutdown request: not a crash — it had
    /// every chance to run its exit paths. It restarts later as a new process.
    ReplicaStopped { replica: u32, process: ProcessId },
    /// The handler task `task` of an administrative request on `process` ended (executor
    /// witness: the replica's server saw it finish and what it answered, or found the client
    /// gone). Nothing of that request runs after this. `code` is the structured code the
    /// answer carried (R7; `None` for a 200 and for a client that hung up, and in a history
    /// that does not record codes).
    AdminRequestEnded {
        process: ProcessId,
        task: u64,
        instance: InstanceId,
        status: AdminStatus,
        #[serde(default)]
        code: Option<Code>,
    },
    /// The consumer dead-lettered a delivery: settled for good, to the dead-letter queue,
    /// with the code it gave as the reason (broker witness: the dead-letter queue records
    /// the delivery and its reason header). R7: only "this will never work" belongs there.
    RelayDeadLettered {
        instance: InstanceId,
        message: MessageId,
        #[serde(default)]
        delivery: Option<u32>,
        code: Code,
    },
    // New variants go last: the fingerprint serialises the variant's index.
    /// The environment struck a store call of a role (the sweeper's, the timer poller's, a
    /// pull worker's): the network lost its request or its reply. `for_instance`: the instance
    /// the call names, if one; `task` is the calling task.
    RoleCallStruck { call: StoreCall, fault: CallFault, for_instance: Option<InstanceId>, task: Option<u64> },
    /// The store refused a numbered claim by the claim fence: `owner`'s claim `number`
    /// landed after the store had taken `owner`'s claim `seen` (a higher number), and
    /// wrote nothing (`crate::claim_fence`). `task` sent it.
    ClaimFenced { instance: InstanceId, exec: ExecId, owner: OwnerId, number: u64, seen: u64, task: Option<u64> },
    /// The admin server of `process` received a migration request and started its handler
    /// task `task` (executor witness: the server's access log, before any handler code runs).
    /// `client` is the caller as the server authenticated it; `request` the request id it
    /// sent (the same on every attempt of one migration, an idempotency key), `attempt` the
    /// attempt number it sent (1 for the first); `instance` and `to_lane` what it asked for.
    AdminRequestReceived {
        process: ProcessId,
        task: u64,
        client: u32,
        request: u32,
        instance: InstanceId,
        to_lane: u16,
        attempt: u32,
    },
}

/// A component whose events a checker may believe: it reports what it did, not what the
/// code under test says about itself (issue #12, DESIGN.md §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Witness {
    /// The store: every read, grant, refusal, commit, rejection, release, sweep, lease
    /// grant and renewal, timer-row, task-row and outbox write, at the store's time.
    Store,
    /// The broker: deliveries, acks, requeues and reclaims of relays, by message id.
    Broker,
    /// The executor and the environment it runs: node crashes, pauses, resumptions and
    /// restarts, clock skews, fault injections, the workload's requests, the run's phases,
    /// and the turns of the simulator's state-lane primitive.
    Executor,
}

impl Witness {
    /// `store`, `broker` or `executor`.
    pub fn as_str(self) -> &'static str {
        match self {
            Witness::Store => "store",
            Witness::Broker => "broker",
            Witness::Executor => "executor",
        }
    }
}

/// Who emits an event: a [`Witness`], or the code under test telling its own story.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    /// A witness: the store, the broker or the executor.
    Witness(Witness),
    /// A self-report of the code under test (its lanes, its operator, its binding table).
    /// Stories and timelines show these; no built-in safety or liveness checker's verdict
    /// may depend on one, since a bug can make the code misreport itself.
    Narrative,
}

impl Source {
    /// `store`, `broker`, `executor` or `narrative`.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Witness(w) => w.as_str(),
            Source::Narrative => "narrative",
        }
    }

    /// True for a witness.
    pub fn is_witness(self) -> bool {
        matches!(self, Source::Witness(_))
    }
}

impl ModelEvent {
    /// Who emits this event. Exhaustive on purpose: a new variant does not compile until it
    /// is classified here.
    pub fn source(&self) -> Source {
        use ModelEvent::*;
        use Witness::*;
        match self {
            // The store's own writes and answers (the relay outbox is the store's: a step's
            // next relay is published with its commit; the first one with the instance row).
            InstanceCompleted { .. }
            | RelayPublished { .. }
            | TimerScheduled { .. }
            | TaskParked { .. }
            | TaskLocked { .. }
            | TaskCompleted { .. }
            | TimerDeferred { .. }
            | ClaimGranted { .. }
            | ClaimRefused { .. }
            | StoreRead { .. }
            | CommitAccepted { .. }
            | CommitRejected { .. }
            | RowWritten { .. }
            | Released { .. }
            | MigrationCommitted { .. }
            | Swept { .. }
            | SweepSelected { .. }
            | SweepClearMissed { .. }
            | ClaimFenced { .. }
            | LeaseAcquired { .. } => Source::Witness(Store),
            RelayDelivered { .. }
            | RelayAcked { .. }
            | RelayRequeued { .. }
            | RelayReclaimed { .. }
            | RelayDeadLettered { .. } => Source::Witness(Broker),
            // The environment: what the harness did to the world and asked of it. The
            // workload (the harness's client) creates the instances; the state-lane
            // primitive is the simulator's (`sutra_sim_core::StateLane`), and its observer
            // reports submissions and turns as the executor sees them, like task starts
            // and ends — not what the model says about its lanes.
            InstanceStarted { .. }
            | Lane { .. }
            | CallStruck { .. }
            | RoleCallStruck { .. }
            | TaskAborted { .. }
            | ReplicaCrashed { .. }
            | PullWorkerCrashed { .. }
            | ShutdownRequested { .. }
            | ReplicaStopped { .. }
            | AdminRequestEnded { .. }
            | AdminRequestReceived { .. }
            | ReplicaRestarted { .. }
            | ReplicaPaused { .. }
            | ReplicaResumed { .. }
            | ClockSkewed { .. }
            | TimeoutSkewed { .. }
            | FaultInjected { .. }
            | SwarmSelected { .. }
            | Healed
            // The harness's reading of the runtime's exported meter (a scrape): the number
            // R13 makes the rollout's observable, judged against the store's refusals.
            | BounceMeter { .. } => Source::Witness(Executor),
            // The code under test about itself.
            Dispatched { .. }
            | ClaimAttempt { .. }
            | Refusal { .. }
            | Rehydrated { .. }
            | StepStarted { .. }
            | StepEnded { .. }
            | ExecutionEnded { .. }
            | MigrationRequested { .. }
            | BindingChanged { .. }
            | SnapshotUsed { .. } => Source::Narrative,
        }
    }

    /// An event with tag `tag` (its fields are placeholders), or `None` if no event has it:
    /// how [`tag::name`] and [`tag::source`] name a tag with the variant's own
    /// [`EventKind::name`] and [`ModelEvent::source`]. A test checks that every variant has
    /// one here, under its own tag.
    pub fn example(tag: u8) -> Option<ModelEvent> {
        use crate::faults::kind::FaultKind;
        use ModelEvent::*;
        let (instance, exec, message, process) = (InstanceId(0), ExecId(0), MessageId(0), ProcessId(0));
        let (owner, path, code) = (OwnerId(0), ResumePath::Relay, Code::ResumeClaimHeld);
        let fault = FaultKind::ALL[0];
        let used = SnapshotUse { cell: sutra_sim_core::CellId(0), read_version: 0, current_version: 0, settled: true };
        Some(match tag {
            tag::INSTANCE_STARTED => InstanceStarted { instance, steps: 0 },
            tag::INSTANCE_COMPLETED => InstanceCompleted { instance },
            tag::RELAY_PUBLISHED => RelayPublished { instance, message, step: 0 },
            tag::RELAY_DELIVERED => {
                RelayDelivered { instance, message, process, redelivery: false, duplicate: false, delivery: Some(1) }
            }
            tag::RELAY_ACKED => RelayAcked { instance, message, delivery: Some(1) },
            tag::RELAY_REQUEUED => RelayRequeued { instance, message, delay_ns: 0, delivery: Some(1) },
            tag::RELAY_RECLAIMED => RelayReclaimed { instance, message, process, silent: false, delivery: Some(1) },
            tag::TIMER_SCHEDULED => TimerScheduled { instance, step: 0, due_ns: 0 },
            tag::DISPATCHED => Dispatched { instance, exec, path, process, lane: 0, misrouted: false },
            tag::TASK_PARKED => TaskParked { instance, step: 0 },
            tag::TASK_LOCKED => TaskLocked { instance, worker: 0 },
            tag::TASK_COMPLETED => TaskCompleted { instance, worker: 0 },
            tag::CLAIM_ATTEMPT => ClaimAttempt { instance, exec, owner, path },
            tag::CLAIM_GRANTED => ClaimGranted {
                instance,
                exec,
                owner,
                process: None,
                path,
                previous: None,
                stale_age_ns: None,
                epoch: 0,
                task: None,
            },
            tag::CLAIM_REFUSED => ClaimRefused {
                instance,
                exec,
                owner,
                path,
                holder: owner,
                task: None,
                process: Some(process),
                delivery: Some(1),
            },
            tag::REFUSAL => Refusal { instance, exec, path, code, reaction: Reaction::Requeued },
            tag::REHYDRATED => Rehydrated { instance, exec, version: 0 },
            tag::STEP_STARTED => StepStarted { instance, exec, step: 0, slow: false },
            tag::STEP_ENDED => StepEnded { instance, exec, error: None },
            tag::COMMIT_ACCEPTED => CommitAccepted {
                instance,
                exec,
                owner,
                epoch: 0,
                owner_before: None,
                current_epoch: 0,
                trigger: TriggerRef::TimerRow { expects: 0 },
                based_on: 0,
                version_before: 0,
                version_after: 0,
                task: None,
            },
            tag::COMMIT_REJECTED => CommitRejected { instance, exec, owner, epoch: 0, holder: None, task: None },
            tag::ROW_WRITTEN => RowWritten {
                instance,
                write: WriteKind::Commit,
                by: None,
                writer: None,
                owner: None,
                version: 0,
                epoch: 0,
                parked: false,
            },
            tag::RELEASED => {
                Released { instance, exec, owner, epoch: 0, current_epoch: 0, released: false, task: None }
            }
            tag::EXECUTION_ENDED => ExecutionEnded { instance, exec, exit: Exit::Committed },
            tag::SWEPT => Swept { instance, owner, epoch: 0, age_ns: 0, by: process, lease_held: false, task: None },
            tag::LEASE_ACQUIRED => LeaseAcquired { process, until_ns: 0, renewal: false, task: None },
            tag::MIGRATION_REQUESTED => MigrationRequested { instance, exec, process, to_lane: 0 },
            tag::BINDING_CHANGED => BindingChanged { process, instance, lane: None },
            tag::SNAPSHOT_USED => SnapshotUsed { process, instance, used },
            tag::LANE => Lane { process, component: Component::Bindings, action: LaneAction::Submitted(0), task: None },
            tag::REPLICA_CRASHED => ReplicaCrashed { replica: 0, process },
            tag::PULL_WORKER_CRASHED => PullWorkerCrashed { worker: 0 },
            tag::REPLICA_RESTARTED => ReplicaRestarted { replica: 0, process },
            tag::REPLICA_PAUSED => ReplicaPaused { replica: 0, process, for_ns: 0 },
            tag::REPLICA_RESUMED => ReplicaResumed { replica: 0, process },
            tag::CLOCK_SKEWED => ClockSkewed { replica: 0, offset_ms: 0 },
            tag::TIMEOUT_SKEWED => TimeoutSkewed { process, asked_ns: 0, took_ns: 0 },
            tag::FAULT_INJECTED => FaultInjected { fault, replica: None, detail_ns: 0, task: None },
            tag::SWARM_SELECTED => SwarmSelected { enabled: Vec::new() },
            tag::HEALED => Healed,
            tag::BOUNCE_METER => BounceMeter { relay: 0, timer: 0 },
            tag::STORE_READ => StoreRead {
                instance,
                exec,
                claim_owner: owner,
                claim_epoch: 0,
                owner: None,
                epoch: 0,
                version: 0,
                task: None,
            },
            tag::MIGRATION_COMMITTED => {
                MigrationCommitted { instance, exec, owner, epoch: 0, current_epoch: 0, done: false, task: None }
            }
            tag::TIMER_DEFERRED => TimerDeferred { instance, expects: 0, attempt: 1, due_ns: 0, task: None },
            tag::SWEEP_SELECTED => SweepSelected { by: process, stale: 0, lease_held: false, task: None },
            tag::SWEEP_CLEAR_MISSED => SweepClearMissed { instance, by: process, epoch: 0, task: None },
            tag::CALL_STRUCK => {
                CallStruck { instance, exec, call: StoreCall::Commit, fault: CallFault::ReplyLost, task: None }
            }
            tag::ROLE_CALL_STRUCK => {
                RoleCallStruck { call: StoreCall::Lease, fault: CallFault::ReplyLost, for_instance: None, task: None }
            }
            tag::TASK_ABORTED => TaskAborted { replica: 0, process, lane: 0, task: 0 },
            tag::SHUTDOWN_REQUESTED => ShutdownRequested { replica: 0, process, drain_ns: 0 },
            tag::REPLICA_STOPPED => ReplicaStopped { replica: 0, process },
            tag::ADMIN_REQUEST_ENDED => {
                AdminRequestEnded { process, task: 0, instance, status: AdminStatus::Migrated, code: None }
            }
            tag::RELAY_DEAD_LETTERED => RelayDeadLettered { instance, message, delivery: Some(1), code },
            tag::CLAIM_FENCED => ClaimFenced { instance, exec, owner, number: 1, seen: 2, task: None },
            tag::ADMIN_REQUEST_RECEIVED => {
                AdminRequestReceived { process, task: 0, client: 0, request: 0, instance, to_lane: 0, attempt: 1 }
            }
            _ => return None,
        })
    }
}

/// Event tags ([`EventKind::tag`]): one per variant, for checkers' interest masks.
pub mod tag {
    /// How many tags there are: every tag is below this, and every number below it is a tag.
    pub const COUNT: u8 = 55;

    /// The kebab-case name of the events with tag `tag` (as [`sutra_sim_core::EventKind::name`]
    /// gives it), or `None` if no event has that tag.
    pub fn name(tag: u8) -> Option<&'static str> {
        use sutra_sim_core::EventKind;
        super::ModelEvent::example(tag).map(|e| e.name())
    }

    /// Who emits the events with tag `tag` ([`super::ModelEvent::source`]), or `None` if no
    /// event has that tag.
    pub fn source(tag: u8) -> Option<super::Source> {
        super::ModelEvent::example(tag).map(|e| e.source())
    }

    /// The tags set in an interest mask ([`sutra_sim_core::Checker::interest`]), in tag
    /// order; bits that name no event are left out.
    pub fn in_mask(mask: u64) -> Vec<u8> {
        (0..COUNT).filter(|t| mask & (1u64 << t) != 0).collect()
    }

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
    /// [`super::ModelEvent::SweepSelected`].
    pub const SWEEP_SELECTED: u8 = 42;
    /// [`super::ModelEvent::SweepClearMissed`].
    pub const SWEEP_CLEAR_MISSED: u8 = 43;
    /// [`super::ModelEvent::TimeoutSkewed`].
    pub const TIMEOUT_SKEWED: u8 = 44;
    /// [`super::ModelEvent::CallStruck`].
    pub const CALL_STRUCK: u8 = 45;
    /// [`super::ModelEvent::TaskAborted`].
    pub const TASK_ABORTED: u8 = 46;
    /// [`super::ModelEvent::ShutdownRequested`].
    pub const SHUTDOWN_REQUESTED: u8 = 47;
    /// [`super::ModelEvent::ReplicaStopped`].
    pub const REPLICA_STOPPED: u8 = 48;
    /// [`super::ModelEvent::AdminRequestEnded`].
    pub const ADMIN_REQUEST_ENDED: u8 = 49;
    /// [`super::ModelEvent::RelayDeadLettered`].
    pub const RELAY_DEAD_LETTERED: u8 = 50;
    /// [`super::ModelEvent::PullWorkerCrashed`].
    pub const PULL_WORKER_CRASHED: u8 = 51;
    /// [`super::ModelEvent::RoleCallStruck`].
    pub const ROLE_CALL_STRUCK: u8 = 52;
    /// [`super::ModelEvent::ClaimFenced`].
    pub const CLAIM_FENCED: u8 = 53;
    /// [`super::ModelEvent::AdminRequestReceived`].
    pub const ADMIN_REQUEST_RECEIVED: u8 = 54;
}

impl EventKind for ModelEvent {
    /// A replica's crash and its graceful stop, and a pull worker's crash, witness the end of
    /// the process on the node: the executor asserts every kill of a node is witnessed by
    /// one of them.
    const NODE_END_TAGS: u64 =
        sutra_sim_core::tag_mask(&[tag::REPLICA_CRASHED, tag::REPLICA_STOPPED, tag::PULL_WORKER_CRASHED]);

    #[inline]
    fn log(&self) {
        // One load and compare when nobody listens (the usual run): nothing else is paid.
        if tracing::level_enabled!(tracing::Level::DEBUG) {
            crate::log::record(self);
        }
    }

    /// Folded by hand (`event_fold.rs`): postcard's bytes without serde's calls per field.
    #[inline(always)]
    fn fold_fingerprint(&self, out: &mut sutra_sim_core::WordFolder) {
        sutra_sim_core::FoldPostcard::fold_postcard(self, out);
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
            ModelEvent::SweepSelected { .. } => "sweep-selected",
            ModelEvent::SweepClearMissed { .. } => "sweep-clear-missed",
            ModelEvent::StoreRead { .. } => "store-read",
            ModelEvent::MigrationCommitted { .. } => "migration-committed",
            ModelEvent::LeaseAcquired { .. } => "lease-acquired",
            ModelEvent::MigrationRequested { .. } => "migration-requested",
            ModelEvent::BindingChanged { .. } => "binding-changed",
            ModelEvent::SnapshotUsed { .. } => "snapshot-used",
            ModelEvent::Lane { .. } => "lane",
            ModelEvent::CallStruck { .. } => "call-struck",
            ModelEvent::RoleCallStruck { .. } => "role-call-struck",
            ModelEvent::ClaimFenced { .. } => "claim-fenced",
            ModelEvent::AdminRequestReceived { .. } => "admin-request-received",
            ModelEvent::TaskAborted { .. } => "task-aborted",
            ModelEvent::ReplicaCrashed { .. } => "replica-crashed",
            ModelEvent::PullWorkerCrashed { .. } => "pull-worker-crashed",
            ModelEvent::ShutdownRequested { .. } => "shutdown-requested",
            ModelEvent::ReplicaStopped { .. } => "replica-stopped",
            ModelEvent::AdminRequestEnded { .. } => "admin-request-ended",
            ModelEvent::RelayDeadLettered { .. } => "relay-dead-lettered",
            ModelEvent::ReplicaRestarted { .. } => "replica-restarted",
            ModelEvent::ReplicaPaused { .. } => "replica-paused",
            ModelEvent::ReplicaResumed { .. } => "replica-resumed",
            ModelEvent::ClockSkewed { .. } => "clock-skewed",
            ModelEvent::TimeoutSkewed { .. } => "timeout-skewed",
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
            | RelayDeadLettered { instance, .. }
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
            | SweepClearMissed { instance, .. }
            | StoreRead { instance, .. }
            | MigrationCommitted { instance, .. }
            | MigrationRequested { instance, .. }
            | BindingChanged { instance, .. }
            | SnapshotUsed { instance, .. }
            | CallStruck { instance, .. }
            | ClaimFenced { instance, .. }
            | AdminRequestEnded { instance, .. }
            | AdminRequestReceived { instance, .. } => Some(u64::from(instance.0)),
            RoleCallStruck { for_instance, .. } => for_instance.map(|i| u64::from(i.0)),
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
            ModelEvent::SweepSelected { .. } => tag::SWEEP_SELECTED,
            ModelEvent::SweepClearMissed { .. } => tag::SWEEP_CLEAR_MISSED,
            ModelEvent::StoreRead { .. } => tag::STORE_READ,
            ModelEvent::MigrationCommitted { .. } => tag::MIGRATION_COMMITTED,
            ModelEvent::LeaseAcquired { .. } => tag::LEASE_ACQUIRED,
            ModelEvent::MigrationRequested { .. } => tag::MIGRATION_REQUESTED,
            ModelEvent::BindingChanged { .. } => tag::BINDING_CHANGED,
            ModelEvent::SnapshotUsed { .. } => tag::SNAPSHOT_USED,
            ModelEvent::Lane { .. } => tag::LANE,
            ModelEvent::CallStruck { .. } => tag::CALL_STRUCK,
            ModelEvent::RoleCallStruck { .. } => tag::ROLE_CALL_STRUCK,
            ModelEvent::ClaimFenced { .. } => tag::CLAIM_FENCED,
            ModelEvent::AdminRequestReceived { .. } => tag::ADMIN_REQUEST_RECEIVED,
            ModelEvent::TaskAborted { .. } => tag::TASK_ABORTED,
            ModelEvent::ReplicaCrashed { .. } => tag::REPLICA_CRASHED,
            ModelEvent::PullWorkerCrashed { .. } => tag::PULL_WORKER_CRASHED,
            ModelEvent::ShutdownRequested { .. } => tag::SHUTDOWN_REQUESTED,
            ModelEvent::ReplicaStopped { .. } => tag::REPLICA_STOPPED,
            ModelEvent::AdminRequestEnded { .. } => tag::ADMIN_REQUEST_ENDED,
            ModelEvent::RelayDeadLettered { .. } => tag::RELAY_DEAD_LETTERED,
            ModelEvent::ReplicaRestarted { .. } => tag::REPLICA_RESTARTED,
            ModelEvent::ReplicaPaused { .. } => tag::REPLICA_PAUSED,
            ModelEvent::ReplicaResumed { .. } => tag::REPLICA_RESUMED,
            ModelEvent::ClockSkewed { .. } => tag::CLOCK_SKEWED,
            ModelEvent::TimeoutSkewed { .. } => tag::TIMEOUT_SKEWED,
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
            | CallStruck { exec, .. }
            | ClaimFenced { exec, .. }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The names of `ModelEvent`'s variants as its derived `Deserialize` declares them: a
    /// deserializer that answers nothing but records the list it is handed.
    fn variant_names() -> Vec<&'static str> {
        struct Capture(std::cell::Cell<&'static [&'static str]>);
        #[derive(Debug)]
        struct Stop;
        impl std::fmt::Display for Stop {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("stop")
            }
        }
        impl std::error::Error for Stop {}
        impl serde::de::Error for Stop {
            fn custom<T: std::fmt::Display>(_: T) -> Self {
                Stop
            }
        }
        impl<'de> serde::Deserializer<'de> for &Capture {
            type Error = Stop;
            fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
                Err(Stop)
            }
            fn deserialize_enum<V: serde::de::Visitor<'de>>(
                self,
                _: &'static str,
                variants: &'static [&'static str],
                _: V,
            ) -> Result<V::Value, Stop> {
                self.0.set(variants);
                Err(Stop)
            }
            serde::forward_to_deserialize_any! {
                bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
                unit_struct newtype_struct seq tuple tuple_struct map struct identifier ignored_any
            }
        }
        let capture = Capture(std::cell::Cell::new(&[]));
        let _ = ModelEvent::deserialize(&capture);
        capture.0.get().to_vec()
    }

    /// The name of an event's variant (its `Debug` form starts with it, as serde's does).
    fn variant_of(e: &ModelEvent) -> String {
        format!("{e:?}").split([' ', '{', '(']).next().unwrap().to_string()
    }

    #[test]
    fn every_tag_below_count_has_an_example_under_that_tag_and_none_above() {
        for t in 0..tag::COUNT {
            let e = ModelEvent::example(t).unwrap_or_else(|| panic!("tag {t} has no example"));
            assert_eq!(e.tag(), t, "the example for tag {t} is {e:?}");
        }
        for t in tag::COUNT..=u8::MAX {
            assert!(ModelEvent::example(t).is_none(), "tag {t} is not below tag::COUNT");
        }
    }

    #[test]
    fn every_variant_has_an_example_so_every_variant_has_a_named_classified_tag() {
        let variants = variant_names();
        assert_eq!(variants.len(), usize::from(tag::COUNT), "tag::COUNT is the number of variants");
        let examples: Vec<String> = (0..tag::COUNT).map(|t| variant_of(&ModelEvent::example(t).unwrap())).collect();
        for v in variants {
            assert!(examples.iter().any(|e| e == v), "variant {v} has no example (ModelEvent::example)");
        }
    }

    #[test]
    fn tag_names_are_unique_kebab_case() {
        let names: Vec<&str> = (0..tag::COUNT).map(|t| tag::name(t).unwrap()).collect();
        for (i, n) in names.iter().enumerate() {
            assert!(n.chars().all(|c| c.is_ascii_lowercase() || c == '-'), "{n} is not kebab-case");
            assert!(!names[..i].contains(n), "{n} names two tags");
        }
        assert_eq!(tag::name(tag::CLAIM_GRANTED), Some("claim-granted"));
        assert_eq!(tag::name(tag::COUNT), None);
    }

    #[test]
    fn the_self_reports_of_issue_12_are_narrative_and_the_rest_are_witnesses() {
        let narrative: Vec<&str> =
            (0..tag::COUNT).filter(|t| !tag::source(*t).unwrap().is_witness()).map(|t| tag::name(t).unwrap()).collect();
        assert_eq!(
            narrative,
            [
                "dispatched",
                "claim-attempt",
                "refusal",
                "rehydrated",
                "step-started",
                "step-ended",
                "execution-ended",
                "migration-requested",
                "binding-changed",
                "snapshot-used",
            ]
        );
        assert_eq!(tag::source(tag::COMMIT_ACCEPTED), Some(Source::Witness(Witness::Store)));
        assert_eq!(tag::source(tag::RELAY_REQUEUED), Some(Source::Witness(Witness::Broker)));
        assert_eq!(tag::source(tag::REPLICA_CRASHED), Some(Source::Witness(Witness::Executor)));
        assert_eq!(tag::source(tag::REPLICA_STOPPED), Some(Source::Witness(Witness::Executor)));
        assert_eq!(tag::source(tag::SHUTDOWN_REQUESTED), Some(Source::Witness(Witness::Executor)));
        assert_eq!(tag::source(tag::LANE), Some(Source::Witness(Witness::Executor)));
    }
}

//! Coverage: the sometimes-properties of DESIGN.md §5. Each names a situation the faults
//! are there to provoke; a sweep counts the seeds that reached it and flags any that no
//! seed reached — a green run that never tested the thing is not a green run.

use std::collections::BTreeMap;
use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::dense::{DenseMap, DenseSet};
use crate::event::{CallFault, Exit, ModelEvent, StoreCall};
use crate::faults::kind::FaultKind;
use crate::ids::{Code, ExecId, InstanceId, OwnerId, ProcessId, ResumePath};
use crate::scenario::Scenario;
use crate::view::ModelView;

/// The situations, in listing order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Situation {
    /// A refused relay was requeued.
    RelayRefused,
    /// A refused timer fire was deferred.
    TimerDeferred,
    /// A migration was answered 409.
    Admin409,
    /// The sweeper cleared a claim whose owner's process had died.
    SweepClearedDeadOwner,
    /// A live-but-slow owner's commit was rejected.
    SlowOwnerCommitRejected,
    /// Mis-routed work bounced off the claim.
    MisroutedWorkBounced,
    /// A replica died while one of its executions was mid-step.
    ReplicaDiedMidStep,
    /// A paused replica carried on.
    PausedReplicaResumed,
    /// A replica with a skewed clock took a claim.
    SkewedReplicaClaimed,
    /// A pull worker completed a task.
    PullTaskCompleted,
    /// The broker redelivered a relay.
    BrokerRedelivered,
    /// A step committed (store witness).
    StepCommitted,
    /// A step ended in this error: validation, unexpected failure or panic.
    StepFailed(Code),
    /// After a stale steal, the owner it was stolen from asked again and was refused.
    RefusedReclaimAfterStaleSteal,
    /// Relay work for an instance a migration had rebound was claimed by the override's lane.
    OverrideRouted,
    /// A two-step sweep was interrupted between its select and its clears: the sweeping
    /// process paused, or another process took the lease, in between.
    SweepInterrupted,
    /// The broker took a paused (alive, silent) consumer's relay back, and redelivered it.
    PausedConsumerRedelivered,
    /// A replica's periodic timer fired early or late in store time: its clock is skewed.
    SkewedTimeoutFired,
    /// A consumer held as many unsettled deliveries as its prefetch window allows (broker
    /// witnesses): flow control bound.
    PrefetchWindowFull,
    /// A commit whose reply was lost was resolved as committed (its execution ended committed).
    AmbiguousCommitResolved,
    /// The store granted a claim to the owner already holding it (R10, R21).
    SameOwnerReclaimGranted,
    /// An execution cancelled while its process lived released its claim on the way out.
    CancelledExecutionReleased,
    /// A caller's process froze or died just before a store request or just after a reply.
    CallerStruckAtStoreCall,
    /// A replica shutting down gracefully had a claim released during its drain (a step
    /// committed with its release, or an exit path released).
    DrainedReplicaReleased,
    /// A replica's drain deadline cancelled an execution still running, and the cancelled
    /// execution's exit path released its claim before the process stopped.
    DrainDeadlineCancelReleased,
    /// A replica that stopped gracefully came back as a new process.
    RestartedAfterGracefulStop,
    /// A step's commit was aborted by the store and the client sent it again (R19's retry).
    CommitRetriedAfterAbort,
    /// A process froze while one of its commits was being retried after a store abort:
    /// its claim may be swept before the retry lands (R19).
    FrozeRetryingCommit,
    /// A lease holder froze between its lease grant and its sweep's select: it may wake
    /// with the lease lapsed (R18).
    LeaseHolderFrozeBeforeSelect,
    /// A replaced process (a zombie) resumed while one of its executions was mid-step: its
    /// lane is busy while the broker takes its deliveries back (R4).
    ZombieResumedMidStep,
    /// A relay the broker took back from a process was delivered to that process again
    /// while a copy of it still waited in one of its lanes (R4: two copies, one process).
    RelayBackWhileCopyQueued,
    /// A fault of this kind was injected.
    Fault(FaultKind),
}

const SITUATIONS: [(Situation, &str, &str); 33] = [
    (Situation::RelayRefused, "sometimes-relay-refused", "a refused relay was requeued"),
    (Situation::TimerDeferred, "sometimes-timer-deferred", "a refused timer fire was deferred"),
    (Situation::Admin409, "sometimes-admin-409", "a migration was answered 409"),
    (
        Situation::SweepClearedDeadOwner,
        "sometimes-sweep-cleared-dead-owner",
        "the sweeper cleared a dead owner's claim",
    ),
    (
        Situation::SlowOwnerCommitRejected,
        "sometimes-slow-owner-commit-rejected",
        "a live-but-slow owner's commit was rejected",
    ),
    (Situation::MisroutedWorkBounced, "sometimes-misrouted-work-bounced", "mis-routed work bounced off the claim"),
    (Situation::ReplicaDiedMidStep, "sometimes-replica-died-mid-step", "a replica died mid-step"),
    (Situation::PausedReplicaResumed, "sometimes-paused-replica-resumed", "a paused replica resumed"),
    (Situation::SkewedReplicaClaimed, "sometimes-skewed-replica-claimed", "a replica with a skewed clock took a claim"),
    (Situation::PullTaskCompleted, "sometimes-pull-task-completed", "a pull worker completed a task"),
    (Situation::BrokerRedelivered, "sometimes-broker-redelivered", "the broker redelivered a relay"),
    (Situation::StepCommitted, "sometimes-step-committed", "a step exited by committing"),
    (
        Situation::StepFailed(Code::StepValidation),
        "sometimes-step-validation-error",
        "a step exited with a validation error",
    ),
    (
        Situation::StepFailed(Code::StepFailed),
        "sometimes-step-unexpected-failure",
        "a step exited with an unexpected failure",
    ),
    (Situation::StepFailed(Code::StepPanic), "sometimes-step-panic", "a step exited by panicking"),
    (
        Situation::RefusedReclaimAfterStaleSteal,
        "sometimes-refused-reclaim-after-stale-steal",
        "the owner a stale claim was stolen from asked again and was refused",
    ),
    (
        Situation::OverrideRouted,
        "sometimes-override-routed",
        "relay work for a rebound instance was claimed by the override's lane",
    ),
    (
        Situation::SweepInterrupted,
        "sometimes-sweep-interrupted-between-steps",
        "a two-step sweep was interrupted between its steps (a pause or a lease loss)",
    ),
    (
        Situation::PausedConsumerRedelivered,
        "sometimes-paused-consumer-redelivered",
        "a paused consumer's unacked relay was taken back and redelivered",
    ),
    (
        Situation::SkewedTimeoutFired,
        "sometimes-skewed-timeout-fired",
        "a skewed replica's timer fired early or late in store time",
    ),
    (
        Situation::PrefetchWindowFull,
        "sometimes-prefetch-window-full",
        "a consumer held a full prefetch window of unsettled deliveries",
    ),
    (
        Situation::AmbiguousCommitResolved,
        "sometimes-ambiguous-commit-resolved",
        "a commit whose reply was lost was recognised as committed",
    ),
    (
        Situation::SameOwnerReclaimGranted,
        "sometimes-same-owner-reclaim-granted",
        "a claim was granted re-entrantly to the owner already holding it",
    ),
    (
        Situation::CancelledExecutionReleased,
        "sometimes-cancelled-execution-released",
        "an execution cancelled while its process lived released its claim",
    ),
    (
        Situation::CallerStruckAtStoreCall,
        "sometimes-caller-struck-at-store-call",
        "a process froze or died just before a store request or just after its reply",
    ),
    (
        Situation::DrainedReplicaReleased,
        "sometimes-drained-replica-released",
        "a replica shutting down gracefully had a claim released during its drain",
    ),
    (
        Situation::DrainDeadlineCancelReleased,
        "sometimes-drain-deadline-cancel-released",
        "a drain deadline cancelled a running execution, whose exit path then released its claim",
    ),
    (
        Situation::RestartedAfterGracefulStop,
        "sometimes-restarted-after-graceful-stop",
        "a replica that stopped gracefully restarted as a new process",
    ),
    (
        Situation::CommitRetriedAfterAbort,
        "sometimes-commit-retried-after-abort",
        "a step's commit was aborted by the store and sent again",
    ),
    (
        Situation::FrozeRetryingCommit,
        "sometimes-froze-retrying-commit",
        "a process froze while a commit of its was being retried after a store abort",
    ),
    (
        Situation::LeaseHolderFrozeBeforeSelect,
        "sometimes-lease-holder-froze-before-select",
        "a lease holder froze between its lease grant and its sweep's select",
    ),
    (
        Situation::ZombieResumedMidStep,
        "sometimes-zombie-resumed-mid-step",
        "a replaced process resumed while one of its executions was mid-step",
    ),
    (
        Situation::RelayBackWhileCopyQueued,
        "sometimes-relay-back-while-copy-queued",
        "a relay taken back from a process was delivered to it again while a copy waited in its lane",
    ),
];

/// One sometimes-property and the little state it needs.
pub struct Coverage {
    situation: Situation,
    name: &'static str,
    dead: DenseSet<ProcessId>,
    owner_process: BTreeMap<OwnerId, ProcessId>,
    in_step: DenseMap<ExecId, ProcessId>,
    misrouted: DenseSet<ExecId>,
    replica_process: DenseMap<u32, ProcessId>,
    skewed: DenseSet<u32>,
    /// Instances with a refused claim on the situation's path.
    refused: DenseSet<InstanceId>,
    /// Stale steals: instance → the owner the claim was taken from.
    stolen_from: DenseMap<InstanceId, OwnerId>,
    /// Migration overrides: (process, instance) → the lane the table now routes to.
    overrides: BTreeMap<(ProcessId, InstanceId), u16>,
    /// Processes between a two-step sweep's select (that found something) and its clears.
    mid_sweep: DenseSet<ProcessId>,
    /// Relays taken back from a silent (paused) consumer, not yet redelivered.
    taken_from_silent: DenseSet<crate::ids::MessageId>,
    /// Unsettled deliveries per consumer, booked as `prefetch-window` books them.
    window: super::prefetch_window::PrefetchWindow,
    /// Executions marked on the way to the situation (a lost commit reply, a release).
    marked: DenseSet<ExecId>,
    /// Processes asked to shut down that have not stopped (or died) yet.
    draining: DenseSet<ProcessId>,
    /// Draining processes whose drain deadline (or another abort) cancelled a task.
    cut: DenseSet<ProcessId>,
    /// Replicas whose last process stopped gracefully.
    stopped: DenseSet<u32>,
    /// The execution each lane task last read a row for (store witnesses carry the task),
    /// by the task's slot, with the task's whole number: a slot is reused only after its
    /// task ended, and a task ended can no longer have a call aborted.
    task_exec: DenseMap<u32, (u64, ExecId)>,
    /// Executions whose step ended without error: their next store call is the commit.
    committing: DenseSet<ExecId>,
    /// Processes currently paused, by replica.
    paused_of: DenseMap<u32, ProcessId>,
    /// Processes replaced while paused: zombies.
    zombies: DenseSet<ProcessId>,
    /// Relays taken back, and from whom.
    taken_back: DenseMap<crate::ids::MessageId, ProcessId>,
    /// Work dispatched to a lane and not yet taken by it: execution → (process, instance).
    waiting: DenseMap<ExecId, (ProcessId, InstanceId)>,
}

/// The task-table slot of a witness's task number (its low half; the high half is the
/// slot's generation, see `TaskId::number`).
fn task_slot(task: u64) -> u32 {
    task as u32
}

/// One property per fault kind, from the fault table: the kind was injected.
fn fault_situations() -> impl Iterator<Item = (Situation, &'static str, &'static str)> {
    FaultKind::ALL.iter().map(|&kind| {
        let d = kind.descriptor();
        (Situation::Fault(kind), d.coverage, d.coverage_description)
    })
}

/// Every coverage property's registration.
pub fn specs() -> Vec<CheckerSpec<ModelEvent, ModelView>> {
    SITUATIONS
        .iter()
        .copied()
        .chain(fault_situations())
        .map(|(situation, name, description)| CheckerSpec {
            name,
            kind: CheckerKind::Sometimes,
            description,
            rules: &[],
            factory: Arc::new(move || {
                Box::new(Coverage::new(situation, name)) as Box<dyn Checker<ModelEvent, ModelView>>
            }),
        })
        .collect()
}

impl Coverage {
    /// A fresh property for `situation`.
    pub fn new(situation: Situation, name: &'static str) -> Coverage {
        Coverage {
            situation,
            name,
            dead: DenseSet::new(),
            owner_process: BTreeMap::new(),
            in_step: DenseMap::new(),
            misrouted: DenseSet::new(),
            replica_process: DenseMap::new(),
            skewed: DenseSet::new(),
            refused: DenseSet::new(),
            stolen_from: DenseMap::new(),
            overrides: BTreeMap::new(),
            mid_sweep: DenseSet::new(),
            taken_from_silent: DenseSet::new(),
            window: Default::default(),
            marked: DenseSet::new(),
            draining: DenseSet::new(),
            cut: DenseSet::new(),
            stopped: DenseSet::new(),
            task_exec: DenseMap::new(),
            committing: DenseSet::new(),
            paused_of: DenseMap::new(),
            zombies: DenseSet::new(),
            taken_back: DenseMap::new(),
            waiting: DenseMap::new(),
        }
    }

    /// True if `owner` was granted a claim by a process that is draining now.
    fn owner_draining(&self, owner: &OwnerId) -> bool {
        self.owner_process.get(owner).is_some_and(|p| self.draining.contains(*p))
    }

    /// True if `kind` completes the situation. The match is on the situation first, then
    /// on the event: one jump each, where a match on the pair tested event kinds one after
    /// another for most situations (this runs for every event a property listens to).
    fn reached(&mut self, kind: &ModelEvent) -> bool {
        use ModelEvent as E;
        match self.situation {
            // Witnessed: the store's refusal, then the broker's requeue or the store's deferral.
            Situation::RelayRefused => match kind {
                E::ClaimRefused { instance, path: ResumePath::Relay | ResumePath::PullCompletion, .. } => {
                    self.refused.insert(*instance);
                    false
                }
                E::RelayRequeued { instance, .. } => self.refused.contains(*instance),
                _ => false,
            },
            Situation::TimerDeferred => match kind {
                E::ClaimRefused { instance, path: ResumePath::Timer, .. } => {
                    self.refused.insert(*instance);
                    false
                }
                E::TimerDeferred { instance, .. } => self.refused.contains(*instance),
                _ => false,
            },
            Situation::Admin409 => matches!(kind, E::ClaimRefused { path: ResumePath::Migration, .. }),
            Situation::SweepClearedDeadOwner => match kind {
                E::ClaimGranted { owner, process: Some(p), .. } => {
                    self.owner_process.insert(*owner, *p);
                    false
                }
                E::ReplicaCrashed { process, .. } => {
                    self.dead.insert(*process);
                    false
                }
                E::Swept { owner, .. } => self.owner_process.get(owner).is_some_and(|p| self.dead.contains(*p)),
                _ => false,
            },
            Situation::SlowOwnerCommitRejected => matches!(kind, E::CommitRejected { .. }),
            Situation::MisroutedWorkBounced => match kind {
                E::Dispatched { exec, misrouted: true, .. } => {
                    self.misrouted.insert(*exec);
                    false
                }
                E::ClaimRefused { exec, .. } => self.misrouted.contains(*exec),
                _ => false,
            },
            Situation::ReplicaDiedMidStep => match kind {
                E::Dispatched { exec, process, .. } => {
                    self.in_step.insert(*exec, *process);
                    false
                }
                E::StepEnded { exec, .. } => {
                    self.in_step.remove(*exec);
                    false
                }
                E::ReplicaCrashed { process, .. } => self.in_step.values().any(|p| p == process),
                _ => false,
            },
            Situation::PausedReplicaResumed => matches!(kind, E::ReplicaResumed { .. }),
            Situation::SkewedReplicaClaimed => match kind {
                E::ClockSkewed { replica, .. } => {
                    self.skewed.insert(*replica);
                    false
                }
                E::ReplicaRestarted { replica, process } => {
                    self.replica_process.insert(*replica, *process);
                    false
                }
                E::ClaimGranted { process: Some(p), .. } => {
                    // Process ids are handed out in boot order, replica i's first process is i+1.
                    let replica = self
                        .replica_process
                        .iter()
                        .find(|(_, q)| *q == p)
                        .map(|(r, _)| r)
                        .unwrap_or(p.0.saturating_sub(1));
                    self.skewed.contains(replica)
                }
                _ => false,
            },
            Situation::PullTaskCompleted => matches!(kind, E::TaskCompleted { .. }),
            Situation::BrokerRedelivered => matches!(kind, E::RelayDelivered { redelivery: true, .. }),
            Situation::StepCommitted => matches!(kind, E::CommitAccepted { .. }),
            // Narrative: why a step failed is the step's own knowledge; the store only sees
            // the release that follows, the same for every failure kind.
            Situation::StepFailed(code) => matches!(kind, E::StepEnded { error: Some(e), .. } if code == *e),
            Situation::RefusedReclaimAfterStaleSteal => match kind {
                E::ClaimGranted { instance, owner, previous: Some(previous), stale_age_ns: Some(_), .. }
                    if previous != owner =>
                {
                    self.stolen_from.insert(*instance, *previous);
                    false
                }
                E::ClaimRefused { instance, owner, .. } => self.stolen_from.get(*instance) == Some(owner),
                _ => false,
            },
            // Narrative for the override (the table's change is replica-local), witnessed for
            // the claim: the store records the owner, and a lane's owner names its lane.
            Situation::OverrideRouted => match kind {
                E::BindingChanged { process, instance, lane } => {
                    match lane {
                        Some(l) => self.overrides.insert((*process, *instance), *l),
                        None => self.overrides.remove(&(*process, *instance)),
                    };
                    false
                }
                E::ClaimGranted { instance, owner, process: Some(p), path: ResumePath::Relay, .. } => {
                    self.overrides.get(&(*p, *instance)).is_some_and(|l| *owner == OwnerId::lane(*p, *l))
                }
                _ => false,
            },
            // Witnessed: the store's select and clears, the executor's pause, the store's
            // lease grants.
            Situation::SweepInterrupted => match kind {
                E::SweepSelected { by, stale, .. } => {
                    if *stale > 0 {
                        self.mid_sweep.insert(*by);
                    }
                    false
                }
                E::Swept { by, .. } | E::SweepClearMissed { by, .. } | E::ReplicaCrashed { process: by, .. } => {
                    self.mid_sweep.remove(*by);
                    false
                }
                E::ReplicaPaused { process, .. } => self.mid_sweep.contains(*process),
                E::LeaseAcquired { process, .. } => self.mid_sweep.iter().any(|p| p != *process),
                _ => false,
            },
            Situation::PausedConsumerRedelivered => match kind {
                E::RelayReclaimed { message, silent: true, .. } => {
                    self.taken_from_silent.insert(*message);
                    false
                }
                E::RelayDelivered { message, redelivery: true, .. } => self.taken_from_silent.contains(*message),
                _ => false,
            },
            Situation::SkewedTimeoutFired => matches!(kind, E::TimeoutSkewed { .. }),
            // Booked by `on_event` through the prefetch window's own bookkeeping.
            Situation::PrefetchWindowFull => false,
            // Witnessed loss (the environment), narrative end: only the execution knows how
            // it resolved what it never heard.
            Situation::AmbiguousCommitResolved => match kind {
                E::CallStruck { exec, call: StoreCall::Commit, fault: CallFault::ReplyLost, .. } => {
                    self.marked.insert(*exec);
                    false
                }
                E::ExecutionEnded { exec, exit: Exit::Committed, .. } => self.marked.contains(*exec),
                _ => false,
            },
            Situation::SameOwnerReclaimGranted => {
                matches!(kind, E::ClaimGranted { owner, previous: Some(previous), .. } if previous == owner)
            }
            Situation::CancelledExecutionReleased => match kind {
                E::Released { exec, released: true, .. } => {
                    self.marked.insert(*exec);
                    false
                }
                E::ExecutionEnded { exec, exit: Exit::Cancelled, .. } => self.marked.contains(*exec),
                _ => false,
            },
            Situation::CallerStruckAtStoreCall => {
                matches!(kind, E::CallStruck { fault, .. } if !matches!(fault, CallFault::RequestLost | CallFault::ReplyLost))
            }
            // Witnessed: the environment's shutdown request and stop, the executor's abort,
            // the store's grants, commits and releases.
            Situation::DrainedReplicaReleased | Situation::DrainDeadlineCancelReleased => match kind {
                E::ClaimGranted { owner, process: Some(p), .. } => {
                    self.owner_process.insert(*owner, *p);
                    false
                }
                E::ShutdownRequested { process, .. } => {
                    self.draining.insert(*process);
                    false
                }
                E::ReplicaStopped { process, .. } | E::ReplicaCrashed { process, .. } => {
                    self.draining.remove(*process);
                    self.cut.remove(*process);
                    false
                }
                E::Released { owner, released: true, .. } => {
                    if self.situation == Situation::DrainedReplicaReleased {
                        self.owner_draining(owner)
                    } else {
                        self.owner_process.get(owner).is_some_and(|p| self.cut.contains(*p))
                    }
                }
                E::CommitAccepted { owner, .. } if self.situation == Situation::DrainedReplicaReleased => {
                    self.owner_draining(owner)
                }
                E::TaskAborted { process, .. } if self.situation == Situation::DrainDeadlineCancelReleased => {
                    if self.draining.contains(*process) {
                        self.cut.insert(*process);
                    }
                    false
                }
                _ => false,
            },
            Situation::RestartedAfterGracefulStop => match kind {
                E::ReplicaStopped { replica, .. } => {
                    self.stopped.insert(*replica);
                    false
                }
                E::ReplicaCrashed { replica, .. } => {
                    self.stopped.remove(*replica);
                    false
                }
                E::ReplicaRestarted { replica, .. } => self.stopped.remove(*replica),
                _ => false,
            },
            // Witnessed: the store's read names the lane task, and the abort is reported from
            // that task; narrative: the step's end says the next call is the commit.
            Situation::CommitRetriedAfterAbort | Situation::FrozeRetryingCommit => match kind {
                E::StoreRead { exec, task: Some(t), .. } => {
                    self.task_exec.insert(task_slot(*t), (*t, *exec));
                    false
                }
                E::Dispatched { exec, process, .. } => {
                    self.in_step.insert(*exec, *process);
                    false
                }
                E::StepEnded { exec, error: None, .. } => {
                    self.committing.insert(*exec);
                    false
                }
                E::FaultInjected { fault: FaultKind::Store, detail_ns: 0, task: Some(t), .. } => {
                    match self.task_exec.get(task_slot(*t)) {
                        Some(&(number, exec)) if number == *t && self.committing.contains(exec) => {
                            self.marked.insert(exec);
                            self.situation == Situation::CommitRetriedAfterAbort
                        }
                        _ => false,
                    }
                }
                E::CommitAccepted { exec, .. } | E::CommitRejected { exec, .. } | E::ExecutionEnded { exec, .. } => {
                    self.committing.remove(*exec);
                    self.marked.remove(*exec);
                    self.in_step.remove(*exec);
                    false
                }
                E::ReplicaPaused { process, .. } if self.situation == Situation::FrozeRetryingCommit => {
                    self.marked.iter().any(|exec| self.in_step.get(exec) == Some(process))
                }
                _ => false,
            },
            // Witnessed: the store's lease grant and select, the executor's pause. Only a
            // two-step sweep has a select to witness the end of the window.
            Situation::LeaseHolderFrozeBeforeSelect => match kind {
                E::LeaseAcquired { process, .. } => {
                    self.mid_sweep.insert(*process);
                    false
                }
                E::SweepSelected { by: process, .. } | E::ReplicaCrashed { process, .. } => {
                    self.mid_sweep.remove(*process);
                    false
                }
                E::ReplicaPaused { process, .. } => self.mid_sweep.contains(*process),
                _ => false,
            },
            // Witnessed: the executor's pause, restart and resume; narrative: the step's
            // start and end (only the lane knows it is mid-step).
            Situation::ZombieResumedMidStep => match kind {
                E::ReplicaPaused { replica, process, .. } => {
                    self.paused_of.insert(*replica, *process);
                    false
                }
                E::ReplicaRestarted { replica, .. } => {
                    if let Some(p) = self.paused_of.remove(*replica) {
                        self.zombies.insert(p);
                    }
                    false
                }
                E::ReplicaCrashed { replica, process } => {
                    if self.paused_of.get(*replica) == Some(process) {
                        self.paused_of.remove(*replica);
                    }
                    self.zombies.remove(*process);
                    false
                }
                E::Dispatched { exec, process, .. } => {
                    self.in_step.insert(*exec, *process);
                    false
                }
                E::StepStarted { exec, .. } => {
                    self.marked.insert(*exec);
                    false
                }
                E::StepEnded { exec, .. } => {
                    self.marked.remove(*exec);
                    self.in_step.remove(*exec);
                    false
                }
                E::ReplicaResumed { replica, process } => {
                    if self.paused_of.get(*replica) == Some(process) {
                        self.paused_of.remove(*replica);
                    }
                    self.zombies.contains(*process)
                        && self.marked.iter().any(|exec| self.in_step.get(exec) == Some(process))
                }
                _ => false,
            },
            // Witnessed: the broker's take-back and delivery; narrative: the lane queue (only
            // the replica knows what waits in it).
            Situation::RelayBackWhileCopyQueued => match kind {
                E::Dispatched { instance, exec, process, .. } => {
                    self.waiting.insert(*exec, (*process, *instance));
                    false
                }
                E::ClaimAttempt { exec, .. } | E::ExecutionEnded { exec, .. } => {
                    self.waiting.remove(*exec);
                    false
                }
                E::RelayReclaimed { message, process, .. } => {
                    self.taken_back.insert(*message, *process);
                    false
                }
                E::RelayDelivered { instance, message, process, .. } => {
                    self.taken_back.remove(*message) == Some(*process)
                        && self.waiting.values().any(|w| *w == (*process, *instance))
                }
                _ => false,
            },
            Situation::Fault(fault) => matches!(kind, E::FaultInjected { fault: f, .. } if *f == fault),
        }
    }
}

impl Checker<ModelEvent, ModelView> for Coverage {
    fn interest(&self) -> u64 {
        use crate::event::tag::*;
        let tags: &[u8] = match self.situation {
            Situation::RelayRefused => &[CLAIM_REFUSED, RELAY_REQUEUED],
            Situation::TimerDeferred => &[CLAIM_REFUSED, TIMER_DEFERRED],
            Situation::Admin409 => &[CLAIM_REFUSED],
            Situation::SweepClearedDeadOwner => &[CLAIM_GRANTED, REPLICA_CRASHED, SWEPT],
            Situation::SlowOwnerCommitRejected => &[COMMIT_REJECTED],
            Situation::MisroutedWorkBounced => &[DISPATCHED, CLAIM_REFUSED],
            Situation::ReplicaDiedMidStep => &[DISPATCHED, STEP_ENDED, REPLICA_CRASHED],
            Situation::PausedReplicaResumed => &[REPLICA_RESUMED],
            Situation::SkewedReplicaClaimed => &[CLOCK_SKEWED, REPLICA_RESTARTED, CLAIM_GRANTED],
            Situation::PullTaskCompleted => &[TASK_COMPLETED],
            Situation::BrokerRedelivered => &[RELAY_DELIVERED],
            Situation::StepCommitted => &[COMMIT_ACCEPTED],
            Situation::StepFailed(_) => &[STEP_ENDED],
            Situation::RefusedReclaimAfterStaleSteal => &[CLAIM_GRANTED, CLAIM_REFUSED],
            Situation::OverrideRouted => &[BINDING_CHANGED, CLAIM_GRANTED],
            Situation::SweepInterrupted => {
                &[SWEEP_SELECTED, SWEPT, SWEEP_CLEAR_MISSED, REPLICA_CRASHED, REPLICA_PAUSED, LEASE_ACQUIRED]
            }
            Situation::PausedConsumerRedelivered => &[RELAY_RECLAIMED, RELAY_DELIVERED],
            Situation::SkewedTimeoutFired => &[TIMEOUT_SKEWED],
            Situation::PrefetchWindowFull => &[RELAY_DELIVERED, RELAY_ACKED, RELAY_REQUEUED, RELAY_RECLAIMED],
            Situation::AmbiguousCommitResolved => &[CALL_STRUCK, EXECUTION_ENDED],
            Situation::SameOwnerReclaimGranted => &[CLAIM_GRANTED],
            Situation::CancelledExecutionReleased => &[RELEASED, EXECUTION_ENDED],
            Situation::CallerStruckAtStoreCall => &[CALL_STRUCK],
            Situation::DrainedReplicaReleased => {
                &[CLAIM_GRANTED, SHUTDOWN_REQUESTED, REPLICA_STOPPED, REPLICA_CRASHED, RELEASED, COMMIT_ACCEPTED]
            }
            Situation::DrainDeadlineCancelReleased => {
                &[CLAIM_GRANTED, SHUTDOWN_REQUESTED, REPLICA_STOPPED, REPLICA_CRASHED, TASK_ABORTED, RELEASED]
            }
            Situation::RestartedAfterGracefulStop => &[REPLICA_STOPPED, REPLICA_CRASHED, REPLICA_RESTARTED],
            // Not `DISPATCHED`: the lane a step runs in matters only to the freeze below.
            Situation::CommitRetriedAfterAbort => {
                &[STORE_READ, STEP_ENDED, FAULT_INJECTED, COMMIT_ACCEPTED, COMMIT_REJECTED, EXECUTION_ENDED]
            }
            Situation::FrozeRetryingCommit => &[
                STORE_READ,
                DISPATCHED,
                STEP_ENDED,
                FAULT_INJECTED,
                COMMIT_ACCEPTED,
                COMMIT_REJECTED,
                EXECUTION_ENDED,
                REPLICA_PAUSED,
            ],
            Situation::LeaseHolderFrozeBeforeSelect => {
                &[LEASE_ACQUIRED, SWEEP_SELECTED, REPLICA_CRASHED, REPLICA_PAUSED]
            }
            Situation::ZombieResumedMidStep => &[
                REPLICA_PAUSED,
                REPLICA_RESTARTED,
                REPLICA_CRASHED,
                REPLICA_RESUMED,
                DISPATCHED,
                STEP_STARTED,
                STEP_ENDED,
            ],
            Situation::RelayBackWhileCopyQueued => {
                &[DISPATCHED, CLAIM_ATTEMPT, EXECUTION_ENDED, RELAY_RECLAIMED, RELAY_DELIVERED]
            }
            Situation::Fault(_) => &[FAULT_INJECTED],
        };
        sutra_sim_core::tag_mask(tags)
    }

    fn name(&self) -> &str {
        self.name
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Sometimes
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, view: &ModelView) -> Check {
        let reached = match self.situation {
            Situation::PrefetchWindowFull => {
                let held = self.window.observe(&event.kind).map(|(_, _, held)| held);
                held.is_some_and(|h| h >= view.scenario().topology.prefetch)
            }
            // A one-update sweep witnesses nothing when it clears nothing: no end of window.
            Situation::LeaseHolderFrozeBeforeSelect
                if view.scenario().design.sweep == crate::design::SweepShape::OneUpdate =>
            {
                false
            }
            _ => self.reached(&event.kind),
        };
        if reached {
            Check::Reached
        } else {
            Check::Ok
        }
    }
}

/// The coverage properties a scenario can be expected to reach: each situation needs the
/// faults or load that provoke it. A sweep flags an expected property no seed reached.
pub fn expected(scenario: &Scenario) -> Vec<&'static str> {
    let f = &scenario.faults;
    let w = &scenario.workload;
    let on = |k| f.configured_on(k);
    let crash = on(FaultKind::ReplicaCrash) || f.lease.holder_crash_per_tick != crate::ratio::Ratio::NEVER;
    let pause = on(FaultKind::ProcessPause) || f.lease.holder_pause_per_tick != crate::ratio::Ratio::NEVER;
    let migration = !scenario.admin.migration_per_tick.is_never();
    let contention =
        crash || pause || migration || on(FaultKind::Misroute) || on(FaultKind::Broker) || on(FaultKind::SlowStep);
    let mut names = Vec::new();
    for (situation, name, _) in SITUATIONS.iter().copied().chain(fault_situations()) {
        let expected = match situation {
            Situation::RelayRefused => contention,
            // A timer fire only meets a held claim when something else holds the instance
            // at its due time: in practice, an operator's migration.
            Situation::TimerDeferred => migration && w.timer_weight > 0,
            Situation::Admin409 => migration,
            Situation::SweepClearedDeadOwner => crash,
            Situation::SlowOwnerCommitRejected => on(FaultKind::SlowStep) || pause,
            // Mis-routed work only bounces if the right lane holds the instance meanwhile: a
            // duplicate delivery or a migration must be racing it.
            Situation::MisroutedWorkBounced => on(FaultKind::Misroute) && (on(FaultKind::Broker) || migration),
            Situation::ReplicaDiedMidStep => crash,
            Situation::PausedReplicaResumed => pause,
            Situation::SkewedReplicaClaimed => !f.clock_skew.offset_max.is_zero() || f.clock_skew.drift_ppm_max > 0,
            Situation::PullTaskCompleted => w.pull_weight > 0,
            Situation::BrokerRedelivered => crash || contention,
            Situation::StepCommitted => true,
            Situation::StepFailed(Code::StepValidation) => !w.validation_error.is_never(),
            Situation::StepFailed(Code::StepFailed) => !w.unexpected_failure.is_never(),
            Situation::StepFailed(Code::StepPanic) => !w.panic.is_never(),
            Situation::StepFailed(_) => false,
            // A stale steal needs an owner outliving the claim timeout while alive (slow
            // step, pause); its refused re-claim needs the old owner's lane to get the
            // instance's work again while the thief holds it. In 2,000-seed sweeps only
            // scenarios with migrations as well reach it (slow-steps and process-pause alone
            // never do: the stolen-from lane's retry comes after the thief has committed).
            // Where most steps park for a pull worker (pull-workers: 2 seeds in 10,000) it is
            // too rare to demand of a sweep.
            Situation::RefusedReclaimAfterStaleSteal => {
                (on(FaultKind::SlowStep) || pause) && migration && w.pull_weight <= w.relay_weight + w.timer_weight
            }
            Situation::OverrideRouted => migration && w.relay_weight > 0,
            // A tick-drawn pause almost never falls between a sweep's statements; the
            // lease fault's mid-sweep pause puts one there. Needs stale claims to select.
            Situation::SweepInterrupted => {
                scenario.design.sweep != crate::design::SweepShape::OneUpdate
                    && !f.lease.holder_pause_mid_sweep.is_never()
                    && (crash || pause || on(FaultKind::SlowStep))
            }
            // A paused consumer holds unacked relays only if relays flow to it.
            Situation::PausedConsumerRedelivered => {
                on(FaultKind::ProcessPause) && !f.broker.paused_consumer_timeout.is_zero() && w.relay_weight > 0
            }
            // Any skew a replica's timers can notice: drift, or a step while they are pending.
            // (A constant offset alone changes no span.)
            Situation::SkewedTimeoutFired => {
                f.clock_skew.drift_ppm_max > 0
                    || (!f.clock_skew.step_max.is_zero() && !f.clock_skew.step_per_tick.is_never())
            }
            // A window fills when relays for one replica arrive faster than its lanes settle
            // them: with the default window of 8 no built-in scenario ever gets there (at
            // most 5 unsettled in sweeps); process-pause runs with a window of 2 so that flow
            // control is exercised, and checked, somewhere.
            Situation::PrefetchWindowFull => scenario.topology.prefetch <= 2 && w.relay_weight > 0,
            // A lost reply on a commit, or on a grant whose claim is then sent again.
            Situation::AmbiguousCommitResolved | Situation::SameOwnerReclaimGranted => {
                !f.store_replies.reply_lost_per_call.is_never()
            }
            Situation::CancelledExecutionReleased => on(FaultKind::Cancel),
            Situation::CallerStruckAtStoreCall => {
                !f.store_replies.boundary_pause_per_call.is_never()
                    || !f.store_replies.boundary_crash_per_call.is_never()
            }
            Situation::DrainedReplicaReleased | Situation::RestartedAfterGracefulStop => {
                !f.cancel.shutdown_per_tick.is_never()
            }
            // The deadline cuts an execution only if some step can outlast it.
            Situation::DrainDeadlineCancelReleased => {
                !f.cancel.shutdown_per_tick.is_never() && f.cancel.drain_timeout < w.step_duration_max
            }
            Situation::CommitRetriedAfterAbort => !f.store.abort_per_call.is_never(),
            // Needs a pause to fall within a retried commit's backoff: 10-24 seeds in 3,000
            // of smoke, swarm and real-world; where most steps park for a pull worker
            // (pull-workers: 4 in 3,000) it is too rare to demand of a sweep.
            Situation::FrozeRetryingCommit => {
                !f.store.abort_per_call.is_never() && pause && w.pull_weight <= w.relay_weight + w.timer_weight
            }
            Situation::LeaseHolderFrozeBeforeSelect => {
                pause && scenario.design.sweep != crate::design::SweepShape::OneUpdate
            }
            Situation::ZombieResumedMidStep => on(FaultKind::ProcessPause) && !f.process_pause.replacement.is_never(),
            Situation::RelayBackWhileCopyQueued => {
                on(FaultKind::ProcessPause) && !f.process_pause.replacement.is_never() && w.relay_weight > 0
            }
            Situation::Fault(kind) => on(kind),
        };
        if expected {
            names.push(name);
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::feed;

    /// A hand-made history that reaches `situation`.
    fn history_reaching(situation: Situation) -> Vec<ModelEvent> {
        use crate::ids::MessageId;
        use ModelEvent as E;
        let i = InstanceId(0);
        let e = ExecId(1);
        let p = ProcessId(1);
        let owner = OwnerId::lane(p, 0);
        let grant = E::ClaimGranted {
            instance: i,
            exec: e,
            owner,
            process: Some(p),
            path: ResumePath::Relay,
            previous: None,
            stale_age_ns: None,
            epoch: 1,
            task: None,
        };
        let refused =
            |path| E::ClaimRefused { instance: i, exec: e, owner, path, holder: OwnerId::lane(p, 1), task: None };
        let dispatched =
            |misrouted| E::Dispatched { instance: i, exec: e, path: ResumePath::Relay, process: p, lane: 0, misrouted };
        match situation {
            Situation::RelayRefused => vec![
                refused(ResumePath::Relay),
                E::RelayRequeued { instance: i, message: MessageId(1), delay_ns: 500_000_000 },
            ],
            Situation::TimerDeferred => vec![
                refused(ResumePath::Timer),
                E::TimerDeferred { instance: i, expects: 1, attempt: 1, due_ns: 100_000_000, task: None },
            ],
            Situation::Admin409 => vec![refused(ResumePath::Migration)],
            Situation::SweepClearedDeadOwner => vec![
                grant,
                E::ReplicaCrashed { replica: 0, process: p },
                E::Swept {
                    instance: i,
                    owner,
                    age_ns: 31_000_000_000,
                    by: ProcessId(2),
                    lease_held: true,
                    epoch: 1,
                    task: None,
                },
            ],
            Situation::SlowOwnerCommitRejected => {
                vec![E::CommitRejected { instance: i, exec: e, owner, holder: None, epoch: 1, task: None }]
            }
            Situation::MisroutedWorkBounced => vec![
                dispatched(true),
                E::ClaimRefused {
                    instance: i,
                    exec: e,
                    owner,
                    path: ResumePath::Relay,
                    holder: OwnerId::lane(p, 1),
                    task: None,
                },
            ],
            Situation::ReplicaDiedMidStep => vec![dispatched(false), E::ReplicaCrashed { replica: 0, process: p }],
            Situation::PausedReplicaResumed => vec![E::ReplicaResumed { replica: 0, process: p }],
            Situation::SkewedReplicaClaimed => vec![E::ClockSkewed { replica: 0, offset_ms: 500 }, grant],
            Situation::PullTaskCompleted => vec![E::TaskCompleted { instance: i, worker: 0 }],
            Situation::BrokerRedelivered => vec![E::RelayDelivered {
                instance: i,
                message: MessageId(1),
                process: p,
                redelivery: true,
                duplicate: false,
            }],
            Situation::StepCommitted => vec![E::CommitAccepted {
                instance: i,
                exec: e,
                owner,
                epoch: 1,
                owner_before: Some(owner),
                current_epoch: 1,
                trigger: crate::event::TriggerRef::Message(MessageId(1)),
                based_on: 0,
                version_before: 0,
                version_after: 1,
                task: None,
            }],
            Situation::StepFailed(code) => vec![E::StepEnded { instance: i, exec: e, error: Some(code) }],
            Situation::RefusedReclaimAfterStaleSteal => vec![
                E::ClaimGranted {
                    instance: i,
                    exec: ExecId(2),
                    owner: OwnerId::lane(ProcessId(2), 0),
                    process: Some(ProcessId(2)),
                    path: ResumePath::Relay,
                    previous: Some(owner),
                    stale_age_ns: Some(31_000_000_000),
                    epoch: 2,
                    task: None,
                },
                E::ClaimRefused {
                    instance: i,
                    exec: ExecId(3),
                    owner,
                    path: ResumePath::Relay,
                    holder: OwnerId::lane(ProcessId(2), 0),
                    task: None,
                },
            ],
            Situation::OverrideRouted => vec![E::BindingChanged { process: p, instance: i, lane: Some(0) }, grant],
            Situation::SweepInterrupted => vec![
                E::SweepSelected { by: p, stale: 1, lease_held: true, task: None },
                E::ReplicaPaused { replica: 0, process: p, for_ns: 20_000_000_000 },
            ],
            Situation::PausedConsumerRedelivered => vec![
                E::RelayReclaimed { instance: i, message: MessageId(1), process: p, silent: true },
                E::RelayDelivered {
                    instance: i,
                    message: MessageId(1),
                    process: ProcessId(2),
                    redelivery: true,
                    duplicate: false,
                },
            ],
            Situation::SkewedTimeoutFired => {
                vec![E::TimeoutSkewed { process: p, asked_ns: 250_000_000, took_ns: 249_950_000 }]
            }
            // The test view is smoke's: a window of 8, filled by 8 unsettled deliveries.
            Situation::PrefetchWindowFull => (0..8)
                .map(|m| E::RelayDelivered {
                    instance: i,
                    message: MessageId(m),
                    process: p,
                    redelivery: false,
                    duplicate: false,
                })
                .collect(),
            Situation::AmbiguousCommitResolved => vec![E::CallStruck {
                instance: i,
                exec: e,
                call: StoreCall::Commit,
                fault: CallFault::ReplyLost,
                task: None,
            }],
            Situation::SameOwnerReclaimGranted => {
                vec![E::ClaimGranted {
                    instance: i,
                    exec: e,
                    owner,
                    process: Some(p),
                    path: ResumePath::Relay,
                    previous: Some(owner),
                    stale_age_ns: None,
                    epoch: 2,
                    task: None,
                }]
            }
            Situation::CancelledExecutionReleased => vec![
                E::Released { instance: i, exec: e, owner, epoch: 1, current_epoch: 1, released: true, task: None },
                E::ExecutionEnded { instance: i, exec: e, exit: Exit::Cancelled },
            ],
            Situation::CallerStruckAtStoreCall => vec![E::CallStruck {
                instance: i,
                exec: e,
                call: StoreCall::Read,
                fault: CallFault::PausedAfter,
                task: None,
            }],
            Situation::DrainedReplicaReleased => vec![
                grant,
                E::ShutdownRequested { replica: 0, process: p, drain_ns: 150_000_000 },
                E::Released { instance: i, exec: e, owner, epoch: 1, current_epoch: 1, released: true, task: None },
            ],
            Situation::DrainDeadlineCancelReleased => vec![
                grant,
                E::ShutdownRequested { replica: 0, process: p, drain_ns: 150_000_000 },
                E::TaskAborted { replica: 0, process: p, lane: 0, task: 7 },
                E::Released { instance: i, exec: e, owner, epoch: 1, current_epoch: 1, released: true, task: None },
            ],
            Situation::RestartedAfterGracefulStop => vec![
                E::ReplicaStopped { replica: 0, process: p },
                E::ReplicaRestarted { replica: 0, process: ProcessId(2) },
            ],
            Situation::CommitRetriedAfterAbort => aborted_commit(e, p).into_iter().map(|(_, ev)| ev).collect(),
            Situation::FrozeRetryingCommit => aborted_commit(e, p)
                .into_iter()
                .map(|(_, ev)| ev)
                .chain([E::ReplicaPaused { replica: 0, process: p, for_ns: 40_000_000_000 }])
                .collect(),
            Situation::LeaseHolderFrozeBeforeSelect => vec![
                E::LeaseAcquired { process: p, until_ns: 15_000_000_000, renewal: true, task: None },
                E::ReplicaPaused { replica: 0, process: p, for_ns: 20_000_000_000 },
            ],
            Situation::ZombieResumedMidStep => vec![
                dispatched(false),
                E::StepStarted { instance: i, exec: e, step: 1, slow: true },
                E::ReplicaPaused { replica: 0, process: p, for_ns: 20_000_000_000 },
                E::ReplicaRestarted { replica: 0, process: ProcessId(2) },
                E::ReplicaResumed { replica: 0, process: p },
            ],
            Situation::RelayBackWhileCopyQueued => vec![
                dispatched(false),
                E::RelayReclaimed { instance: i, message: MessageId(1), process: p, silent: false },
                E::RelayDelivered {
                    instance: i,
                    message: MessageId(1),
                    process: p,
                    redelivery: true,
                    duplicate: false,
                },
            ],
            Situation::Fault(fault) => vec![E::FaultInjected { fault, replica: None, detail_ns: 0, task: None }],
        }
        .into_iter()
        .chain([E::ExecutionEnded { instance: i, exec: e, exit: Exit::Committed }])
        .collect()
    }

    /// Execution `exec` of process `p` reads its row as lane task 7, ends its step, and its
    /// commit's first attempt is aborted by the store (a `Store` fault of no duration, from
    /// the same task). Events numbered for [`feed`].
    fn aborted_commit(exec: ExecId, p: ProcessId) -> Vec<(u64, ModelEvent)> {
        use ModelEvent as E;
        let i = InstanceId(0);
        let owner = OwnerId::lane(p, 0);
        vec![
            E::Dispatched { instance: i, exec, path: ResumePath::Relay, process: p, lane: 0, misrouted: false },
            E::StoreRead {
                instance: i,
                exec,
                claim_owner: owner,
                claim_epoch: 1,
                owner: Some(owner),
                epoch: 1,
                version: 0,
                task: Some(7),
            },
            E::StepEnded { instance: i, exec, error: None },
            E::FaultInjected { fault: FaultKind::Store, replica: None, detail_ns: 0, task: Some(7) },
        ]
        .into_iter()
        .map(|e| (1, e))
        .collect()
    }

    #[test]
    fn a_commit_retry_is_an_abort_after_a_clean_step_of_the_aborted_task_only() {
        use ModelEvent as E;
        let (e, p) = (ExecId(1), ProcessId(1));
        let run = |situation, events: Vec<(u64, E)>| feed(&mut Coverage::new(situation, "x"), events);
        assert_eq!(run(Situation::CommitRetriedAfterAbort, aborted_commit(e, p)), Check::Reached);
        // The abort of another task's call, or of a call before the step ended (the claim,
        // the read, a release after a failed step), is no commit retry.
        let mut other_task = aborted_commit(e, p);
        other_task[3].1 = E::FaultInjected { fault: FaultKind::Store, replica: None, detail_ns: 0, task: Some(8) };
        assert_eq!(run(Situation::CommitRetriedAfterAbort, other_task), Check::Ok);
        let mut failed_step = aborted_commit(e, p);
        failed_step[2].1 = E::StepEnded { instance: InstanceId(0), exec: e, error: Some(Code::StepFailed) };
        assert_eq!(run(Situation::CommitRetriedAfterAbort, failed_step), Check::Ok);
        // A latency spike (a store fault with a duration) is no abort.
        let mut spike = aborted_commit(e, p);
        spike[3].1 = E::FaultInjected { fault: FaultKind::Store, replica: None, detail_ns: 9, task: Some(7) };
        assert_eq!(run(Situation::CommitRetriedAfterAbort, spike), Check::Ok);
    }

    #[test]
    fn a_freeze_counts_while_the_retried_commit_is_pending_on_the_frozen_process_only() {
        use ModelEvent as E;
        let (e, p) = (ExecId(1), ProcessId(1));
        let paused = |process| (2, E::ReplicaPaused { replica: 0, process, for_ns: 1 });
        let run = |events: Vec<(u64, E)>| feed(&mut Coverage::new(Situation::FrozeRetryingCommit, "x"), events);
        let mut frozen = aborted_commit(e, p);
        frozen.push(paused(p));
        assert_eq!(run(frozen), Check::Reached);
        let mut elsewhere = aborted_commit(e, p);
        elsewhere.push(paused(ProcessId(2)));
        assert_eq!(run(elsewhere), Check::Ok);
        let mut settled = aborted_commit(e, p);
        settled.push((2, E::ExecutionEnded { instance: InstanceId(0), exec: e, exit: Exit::Committed }));
        settled.push(paused(p));
        assert_eq!(run(settled), Check::Ok);
    }

    #[test]
    fn a_lease_holder_freeze_counts_between_its_grant_and_its_select_only() {
        use ModelEvent as E;
        let p = ProcessId(1);
        let granted = E::LeaseAcquired { process: p, until_ns: 15_000_000_000, renewal: false, task: None };
        let selected = E::SweepSelected { by: p, stale: 0, lease_held: true, task: None };
        let paused = |process| E::ReplicaPaused { replica: 0, process, for_ns: 20_000_000_000 };
        let run = |events: Vec<E>| {
            let mut c = Coverage::new(Situation::LeaseHolderFrozeBeforeSelect, "x");
            feed(&mut c, events.into_iter().map(|e| (1, e)).collect())
        };
        assert_eq!(run(vec![granted.clone(), paused(p)]), Check::Reached);
        assert_eq!(run(vec![granted.clone(), paused(ProcessId(2))]), Check::Ok);
        assert_eq!(run(vec![granted, selected, paused(p)]), Check::Ok);
    }

    #[test]
    fn only_a_replaced_process_resuming_mid_step_is_a_zombie_resumed_mid_step() {
        use ModelEvent as E;
        let (i, e, p) = (InstanceId(0), ExecId(1), ProcessId(1));
        let dispatched =
            E::Dispatched { instance: i, exec: e, path: ResumePath::Relay, process: p, lane: 0, misrouted: false };
        let started = E::StepStarted { instance: i, exec: e, step: 1, slow: true };
        let paused = E::ReplicaPaused { replica: 0, process: p, for_ns: 20_000_000_000 };
        let replaced = E::ReplicaRestarted { replica: 0, process: ProcessId(2) };
        let resumed = E::ReplicaResumed { replica: 0, process: p };
        let ended = E::StepEnded { instance: i, exec: e, error: None };
        let run = |events: Vec<E>| {
            let mut c = Coverage::new(Situation::ZombieResumedMidStep, "x");
            feed(&mut c, events.into_iter().map(|e| (1, e)).collect())
        };
        let all = vec![dispatched.clone(), started.clone(), paused.clone(), replaced.clone(), resumed.clone()];
        assert_eq!(run(all), Check::Reached);
        // Not replaced: an ordinary pause.
        assert_eq!(run(vec![dispatched.clone(), started.clone(), paused.clone(), resumed.clone()]), Check::Ok);
        // Replaced, but the step had ended: the lanes are idle.
        assert_eq!(run(vec![dispatched, started, ended, paused, replaced, resumed]), Check::Ok);
    }

    #[test]
    fn a_relay_back_counts_only_at_the_process_it_was_taken_from_with_a_copy_still_waiting() {
        use crate::ids::MessageId;
        use ModelEvent as E;
        let (i, e, p, m) = (InstanceId(0), ExecId(1), ProcessId(1), MessageId(1));
        let dispatched =
            E::Dispatched { instance: i, exec: e, path: ResumePath::Relay, process: p, lane: 0, misrouted: false };
        let taken = E::RelayReclaimed { instance: i, message: m, process: p, silent: false };
        let to = |process| E::RelayDelivered { instance: i, message: m, process, redelivery: true, duplicate: false };
        let taken_by_lane =
            E::ClaimAttempt { instance: i, exec: e, owner: OwnerId::lane(p, 0), path: ResumePath::Relay };
        let run = |events: Vec<E>| {
            let mut c = Coverage::new(Situation::RelayBackWhileCopyQueued, "x");
            feed(&mut c, events.into_iter().map(|e| (1, e)).collect())
        };
        assert_eq!(run(vec![dispatched.clone(), taken.clone(), to(p)]), Check::Reached);
        assert_eq!(run(vec![dispatched.clone(), taken.clone(), to(ProcessId(2))]), Check::Ok);
        assert_eq!(run(vec![dispatched.clone(), taken_by_lane, taken.clone(), to(p)]), Check::Ok);
        assert_eq!(run(vec![dispatched, to(p)]), Check::Ok);
    }

    #[test]
    fn every_situation_is_reached_by_its_history_and_only_by_it() {
        let all: Vec<(Situation, &str)> =
            SITUATIONS.iter().copied().chain(fault_situations()).map(|(s, n, _)| (s, n)).collect();
        for &(situation, name) in &all {
            let history: Vec<(u64, ModelEvent)> = history_reaching(situation).into_iter().map(|e| (1, e)).collect();
            assert_eq!(feed(&mut Coverage::new(situation, name), history.clone()), Check::Reached, "{name}");
            // A plain successful step reaches nothing.
            let quiet = vec![(1, ModelEvent::InstanceCompleted { instance: InstanceId(0) })];
            assert_eq!(feed(&mut Coverage::new(situation, name), quiet), Check::Ok, "{name}");
        }
    }

    #[test]
    fn a_dead_owners_sweep_is_reached_and_a_live_ones_is_not() {
        let owner = OwnerId::lane(ProcessId(3), 1);
        let grant = ModelEvent::ClaimGranted {
            instance: InstanceId(0),
            exec: ExecId(1),
            owner,
            process: Some(ProcessId(3)),
            path: ResumePath::Relay,
            previous: None,
            stale_age_ns: None,
            epoch: 1,
            task: None,
        };
        let swept = ModelEvent::Swept {
            instance: InstanceId(0),
            owner,
            age_ns: 31_000_000_000,
            by: ProcessId(1),
            lease_held: true,
            epoch: 1,
            task: None,
        };
        let crash = ModelEvent::ReplicaCrashed { replica: 2, process: ProcessId(3) };
        let mut c = Coverage::new(Situation::SweepClearedDeadOwner, "x");
        assert_eq!(feed(&mut c, vec![(1, grant.clone()), (2, crash), (3, swept.clone())]), Check::Reached);
        let mut c = Coverage::new(Situation::SweepClearedDeadOwner, "x");
        assert_eq!(feed(&mut c, vec![(1, grant), (3, swept)]), Check::Ok);
    }

    #[test]
    fn a_sweep_is_interrupted_by_a_pause_or_a_lease_loss_between_its_select_and_its_clears_only() {
        use ModelEvent as E;
        let (p, q) = (ProcessId(1), ProcessId(2));
        let selected = |stale| E::SweepSelected { by: p, stale, lease_held: true, task: None };
        let paused = E::ReplicaPaused { replica: 0, process: p, for_ns: 1 };
        let other_lease = E::LeaseAcquired { process: q, until_ns: 99, renewal: false, task: None };
        let missed = E::SweepClearMissed { instance: InstanceId(0), by: p, epoch: 1, task: None };
        let run = |events: Vec<E>| {
            let mut c = Coverage::new(Situation::SweepInterrupted, "x");
            feed(&mut c, events.into_iter().map(|e| (1, e)).collect())
        };
        assert_eq!(run(vec![selected(2), other_lease.clone()]), Check::Reached);
        assert_eq!(run(vec![selected(2), paused.clone()]), Check::Reached);
        // Nothing selected, or the clears already made: no window to interrupt.
        assert_eq!(run(vec![selected(0), paused.clone()]), Check::Ok);
        assert_eq!(run(vec![selected(2), missed, paused, other_lease]), Check::Ok);
    }

    #[test]
    fn a_window_short_of_full_or_emptied_by_acks_is_not_reached() {
        let delivered = |m| ModelEvent::RelayDelivered {
            instance: InstanceId(0),
            message: crate::ids::MessageId(m),
            process: ProcessId(1),
            redelivery: false,
            duplicate: false,
        };
        let acked = |m| ModelEvent::RelayAcked { instance: InstanceId(0), message: crate::ids::MessageId(m) };
        let seven: Vec<(u64, ModelEvent)> = (0..7).map(|m| (1, delivered(m))).collect();
        let mut c = Coverage::new(Situation::PrefetchWindowFull, "x");
        assert_eq!(feed(&mut c, seven.clone()), Check::Ok);
        let mut settled = seven;
        settled.push((2, acked(0)));
        settled.push((3, delivered(7)));
        let mut c = Coverage::new(Situation::PrefetchWindowFull, "x");
        assert_eq!(feed(&mut c, settled), Check::Ok);
    }

    #[test]
    fn a_release_counts_for_a_drain_only_between_the_shutdown_request_and_the_stop() {
        use ModelEvent as E;
        let p = ProcessId(1);
        let owner = OwnerId::lane(p, 0);
        let grant = E::ClaimGranted {
            instance: InstanceId(0),
            exec: ExecId(1),
            owner,
            process: Some(p),
            path: ResumePath::Relay,
            previous: None,
            stale_age_ns: None,
            epoch: 1,
            task: None,
        };
        let released = E::Released {
            instance: InstanceId(0),
            exec: ExecId(1),
            owner,
            epoch: 1,
            current_epoch: 1,
            released: true,
            task: None,
        };
        let requested = E::ShutdownRequested { replica: 0, process: p, drain_ns: 1 };
        let aborted = E::TaskAborted { replica: 0, process: p, lane: 0, task: 7 };
        let stopped = E::ReplicaStopped { replica: 0, process: p };
        let run = |situation, events: Vec<E>| {
            let mut c = Coverage::new(situation, "x");
            feed(&mut c, events.into_iter().map(|e| (1, e)).collect())
        };
        // No shutdown: an ordinary release.
        assert_eq!(run(Situation::DrainedReplicaReleased, vec![grant.clone(), released.clone()]), Check::Ok);
        // After the stop: too late to be the drain's.
        let late = vec![grant.clone(), requested.clone(), stopped.clone(), released.clone()];
        assert_eq!(run(Situation::DrainedReplicaReleased, late), Check::Ok);
        // An abort outside a drain is the task-abort fault's, not the deadline's.
        let plain_abort = vec![grant.clone(), aborted.clone(), released.clone()];
        assert_eq!(run(Situation::DrainDeadlineCancelReleased, plain_abort), Check::Ok);
        // A restart after a crash is no restart after a graceful stop.
        let crashed = vec![
            E::ReplicaStopped { replica: 0, process: p },
            E::ReplicaRestarted { replica: 0, process: ProcessId(2) },
            E::ReplicaCrashed { replica: 0, process: ProcessId(2) },
            E::ReplicaRestarted { replica: 0, process: ProcessId(3) },
        ];
        let mut c = Coverage::new(Situation::RestartedAfterGracefulStop, "x");
        let verdicts: Vec<Check> = crashed.into_iter().map(|e| feed(&mut c, vec![(1, e)])).collect();
        assert_eq!(verdicts, [Check::Ok, Check::Reached, Check::Ok, Check::Ok]);
    }

    #[test]
    fn every_situation_has_a_distinct_name() {
        let names: std::collections::BTreeSet<&str> = SITUATIONS.iter().map(|s| s.1).collect();
        assert_eq!(names.len(), SITUATIONS.len());
    }
}

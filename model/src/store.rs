//! The store: the authoritative clock and the rows of instances, timers, tasks and the
//! sweeper lease.
//!
//! Every operation is one atomic transaction applied at the store's instant, between a
//! request latency and a response latency: a caller killed before the request arrives
//! changes nothing; one killed after it learns nothing. Over the faulty boundary a request
//! travels on the wire, on a task of the world's: a caller frozen meanwhile does not hold
//! it back (see [`Store::request_on_the_wire`] for what is not modelled). The claim (R2, R10) is a single
//! conditional update that refuses instead of waiting; the commit writes the step and
//! releases in the same transaction, conditional on still owning the row (R8, R19); a
//! refused or rejected operation writes nothing. The store reports the truth of every
//! write as a trace event, which is what the checkers judge.
//!
//! The sweep comes in the shapes real code has (`[design] sweep`): one conditional update,
//! or a select of the stale ids followed by one clear per id — two statements, between
//! which the sweeper can pause and its lease lapse. Each statement is its own transaction
//! and its own witness (`SweepSelected`, a read; `Swept` or `SweepClearMissed`, the clear).

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use sutra_sim_core::executor::{self, sleep};
use sutra_sim_core::sync::{oneshot, Notify};
use sutra_sim_core::{NodeId, NodeStatus, SimTime, Tracer};

use crate::broker::{Broker, Relay};
use crate::claim_fence::ClaimFence;
use crate::dense::DenseSet;
use crate::event::{ModelEvent, StoreCall, TriggerRef, WriteKind};
use crate::faults::store::{Refusal, RequestFate, StoreFaults};
use crate::ids::{ExecId, InstanceId, OwnerId, ProcessId, ResumePath};
use crate::request_log::{RequestKey, RequestLog};
use crate::sender::{applying_sent, sender, sent_now, Sent};
use crate::spec::{RETRY_ATTEMPTS_MAX, RETRY_BACKOFF_BASE, RETRY_BACKOFF_MAX};
use crate::streams;
use crate::work_left::WorkLeft;

/// What an instance waits for before its next step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Trigger {
    /// A relay through the broker.
    Relay,
    /// A timer row.
    Timer,
    /// A task row for a pull worker; its completion comes back as a relay.
    Pull,
}

/// An instance's row.
#[derive(Clone, Debug)]
pub struct InstanceRow {
    /// Who holds the claim, if anyone.
    pub owner: Option<OwnerId>,
    /// When the claim was taken, by the store's clock.
    pub claimed_at: SimTime,
    /// Committed steps so far. Invariant: only a commit changes it.
    pub version: u64,
    /// The claim epoch (fencing token): raised by every grant, re-entrant ones included, so
    /// each grant is told apart from every other. Invariant: only a grant changes it, and
    /// it only grows.
    pub epoch: u64,
    /// The step history: `committed_under[v]` is the claim epoch under which the step
    /// taking version v to v+1 was committed. Invariant: one entry per committed step, only
    /// a commit appends, nothing rewrites an entry.
    pub committed_under: Vec<u64>,
    /// Waiting on a pull worker's task.
    pub parked: bool,
    /// Steps in all.
    pub steps: u32,
    /// What each step waits for: `plan[v]` triggers the step that takes version v to v+1.
    pub plan: Vec<Trigger>,
}

impl InstanceRow {
    /// True once every step committed.
    pub fn completed(&self) -> bool {
        self.version >= u64::from(self.steps)
    }
}

pub use crate::task_rows::{TaskRow, TaskRows};
pub use crate::timer_rows::{TimerRow, TimerRows};

/// Everything the store holds. Read-only to checkers through the model view.
#[derive(Default)]
pub struct StoreState {
    /// Instance rows by id (ids are 0..n).
    pub instances: Vec<InstanceRow>,
    /// Timer rows by instance (at most one pending trigger per instance), indexed by due.
    pub timers: TimerRows,
    /// Task rows by instance, indexed by when each can be locked.
    pub tasks: TaskRows,
    /// The sweeper lease: holder and expiry.
    pub lease: Option<(ProcessId, SimTime)>,
    /// The work left (steps not committed, claims held), kept from the rows the store
    /// writes, so the driver can tell progress from a stall in O(1).
    pub work: WorkLeft,
    /// The first difference between the model's store and the SQL engine in a
    /// differential run (`store-divergence` reads it); `None` otherwise.
    pub divergence: Option<crate::sql_store::differential::Divergence>,
    /// The instances whose row holds a claim. What a sweep selects
    /// from, as a database's index on the claim would be: a 6,000-instance world's sweeper
    /// scanned 6,000 rows a round, 14% of that world's time. Invariant: exactly the rows
    /// whose owner is set, kept by [`StoreState::row_written`] after every write.
    claimed: DenseSet<InstanceId>,
}

impl StoreState {
    /// After every write to `instance`'s rows: the claim index follows the row
    /// ([`StoreState::claimed`]), and (debug and test builds) the invariants the store keeps
    /// whatever its clients do are asserted: the plan has one trigger per step, the version
    /// never passes the last step, a claim was never taken in the future, a completed
    /// instance has no trigger row left, and a parked instance's pull task row exists.
    fn row_written(&mut self, instance: InstanceId, now: SimTime) {
        match self.instances[instance.0 as usize].owner {
            Some(_) => self.claimed.insert(instance),
            None => self.claimed.remove(instance),
        };
        if cfg!(debug_assertions) {
            self.assert_rows(instance, now);
        }
    }

    /// The instances whose row holds a claim, in ascending id order; in
    /// debug and test builds checked against every row (where a sweep reads the index, so
    /// that a write that skipped [`StoreState::row_written`] shows).
    fn claimed_checked(&self) -> Vec<usize> {
        let indexed: Vec<usize> = self.claimed.iter().map(|id| id.0 as usize).collect();
        if cfg!(debug_assertions) {
            let held: Vec<usize> = (0..self.instances.len()).filter(|&i| self.instances[i].owner.is_some()).collect();
            assert_eq!(indexed, held, "the claim index follows the rows");
        }
        indexed
    }

    /// The invariants of `instance`'s rows (see [`StoreState::row_written`]).
    fn assert_rows(&self, instance: InstanceId, now: SimTime) {
        let row = &self.instances[instance.0 as usize];
        assert_eq!(row.plan.len(), row.steps as usize, "instance {}: one trigger per step", instance.0);
        assert!(
            row.version <= u64::from(row.steps),
            "instance {}: version {} past its last step",
            instance.0,
            row.version
        );
        assert!(row.owner.is_none() || row.claimed_at <= now, "instance {}: claimed in the future", instance.0);
        if row.completed() {
            assert!(self.timers.get(instance).is_none(), "instance {}: completed with a timer row", instance.0);
            assert!(self.tasks.get(instance).is_none(), "instance {}: completed with a task row", instance.0);
        }
        if row.parked {
            assert!(self.tasks.get(instance).is_some(), "instance {}: parked without a task row", instance.0);
        }
    }
}

/// The answer to a claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimResult {
    /// The claim is ours, under this epoch.
    Granted {
        /// The epoch the grant wrote; later calls under this claim name it.
        epoch: u64,
    },
    /// `holder` has it; nothing was written.
    Refused {
        /// The current holder.
        holder: OwnerId,
    },
}

/// How a commit is conditioned and what it leaves behind.
#[derive(Clone, Copy, Debug)]
pub struct CommitSpec {
    /// The version the step was computed from.
    pub based_on: u64,
    /// Require the writer to own the row (R19).
    pub conditional: bool,
    /// Release the claim in the same transaction (R8).
    pub release: bool,
    /// The trigger that drove the step, named in the commit (R25).
    pub trigger: TriggerRef,
}

/// The claim a call acts under: the owner id and the epoch its grant wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Claim {
    /// The owner id the claim was taken under.
    pub owner: OwnerId,
    /// The epoch of the grant.
    pub epoch: u64,
}

/// What a call over the faulty request/reply boundary came back with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply<T> {
    /// The store's answer arrived.
    Answered(T),
    /// No answer within the client's timeout: the request or the reply was lost. The call
    /// may or may not have been applied.
    TimedOut,
}

impl<T> Reply<T> {
    /// The answer of a call made over the reliable path, which always arrives.
    fn reliable(self) -> T {
        match self {
            Reply::Answered(answer) => answer,
            Reply::TimedOut => unreachable!("a reliable store call never times out"),
        }
    }
}

/// A lane's call over the faulty boundary: which call, for which instance and execution
/// (what the environment's witness of a lost request or reply names).
#[derive(Clone, Copy, Debug)]
struct Wire {
    call: StoreCall,
    instance: InstanceId,
    exec: ExecId,
}

/// One of the store's calls by an execution lane, as a request: what the environment's
/// witnesses call it on the wire, and how the store applies it in one transaction once it
/// took the request. Every call goes through one request/answer wrapper
/// ([`Store::exchange`]), reliable or over the faulty boundary: a store engine answers the
/// same requests.
trait Call: 'static {
    /// The answer the caller gets.
    type Answer: Clone + 'static;
    /// What the boundary's witnesses call it.
    const WIRE: StoreCall;
    /// The instance and execution the call is for.
    fn names(&self) -> (InstanceId, ExecId);
    /// Applies the call; `aborted` is how many of the client's attempts the store aborted
    /// before it took this one.
    fn apply(self, store: &Store, aborted: u32) -> Self::Answer;
    /// The key every copy of this logical request carries, when the store applies it once
    /// whatever the number of copies ([`crate::request_log`]); `None`: each copy is applied
    /// (a claim, a read — and such a request is never delayed past its client's timeout).
    fn key(&self) -> Option<RequestKey> {
        None
    }
    /// The owner and the claimant's number of a numbered claim, which the store fences on
    /// ([`crate::claim_fence`]); `None` for every other call.
    fn number(&self) -> Option<(OwnerId, u64)> {
        None
    }
}

/// What a lane's claim request says besides whose claim it is.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClaimAsked {
    /// The claimant's own clock, sent for the store to judge staleness by: the careless
    /// API of the `client-clock-staleness` mutant (`None`: the store's clock).
    pub client_now: Option<SimTime>,
    /// The broker delivery the claim is made for (relay and pull-completion paths): the
    /// store records it on a refusal, so the refusal names the copy to be requeued (R4).
    pub delivery: Option<u32>,
    /// The claimant's number for this claim among its owner's claims: the store refuses a
    /// claim numbered below one it has taken from the same owner ([`crate::claim_fence`]).
    /// `None`: an unnumbered claim, never fenced.
    pub number: Option<u64>,
}

/// R2's claim (see [`Store::claim_judged_at`]).
struct ClaimCall {
    instance: InstanceId,
    exec: ExecId,
    owner: OwnerId,
    process: Option<ProcessId>,
    path: ResumePath,
    client_now: Option<SimTime>,
    /// The broker delivery the claim is made for, if any (named by a refusal).
    delivery: Option<u32>,
    /// The claimant's number for it, if it numbers its claims (see [`ClaimAsked`]).
    number: Option<u64>,
}

impl Call for ClaimCall {
    type Answer = ClaimResult;
    const WIRE: StoreCall = StoreCall::Claim;

    fn names(&self) -> (InstanceId, ExecId) {
        (self.instance, self.exec)
    }

    fn number(&self) -> Option<(OwnerId, u64)> {
        Some((self.owner, self.number?))
    }

    fn apply(self, store: &Store, _aborted: u32) -> ClaimResult {
        let ClaimCall { instance, exec, owner, process, path, client_now, delivery, .. } = self;
        if store.sql_runs_alone() {
            return crate::sql_store::apply::claim(store, instance, exec, owner, process, path, client_now, delivery);
        }
        let result = {
            let mut s = store.state.borrow_mut();
            let now = executor::now();
            let row = &mut s.instances[instance.0 as usize];
            let age = client_now.unwrap_or(now).since(row.claimed_at);
            let other = |holder: OwnerId| holder != owner || store.refuses_own_owner;
            let stale = row.owner.is_some_and(other) && age > store.claim_timeout;
            match row.owner {
                Some(holder) if other(holder) && !stale => ClaimResult::Refused { holder },
                previous => {
                    row.owner = Some(owner);
                    row.claimed_at = now;
                    row.epoch += 1;
                    let (version, parked, epoch) = (row.version, row.parked, row.epoch);
                    s.row_written(instance, now);
                    drop(s);
                    store.tracer.emit(ModelEvent::ClaimGranted {
                        instance,
                        exec,
                        owner,
                        process,
                        path,
                        previous,
                        stale_age_ns: stale.then_some(sutra_sim_core::time::duration_nanos(age)),
                        epoch,
                        task: sender(),
                    });
                    store.witness_row(ModelEvent::RowWritten {
                        instance,
                        write: WriteKind::Claim,
                        by: Some(exec),
                        writer: Some(owner),
                        owner: Some(owner),
                        version,
                        epoch,
                        parked,
                    });
                    ClaimResult::Granted { epoch }
                }
            }
        };
        if let ClaimResult::Refused { holder } = result {
            store.tracer.emit(ModelEvent::ClaimRefused {
                instance,
                exec,
                owner,
                path,
                holder,
                task: sender(),
                process,
                delivery,
            });
        }
        if store.shadowed() {
            crate::sql_store::differential::claim(store, instance, owner, client_now, result);
        }
        result
    }
}

/// A read of the row (see [`Store::read`]).
struct ReadCall {
    instance: InstanceId,
    exec: ExecId,
    claim: Claim,
}

impl Call for ReadCall {
    type Answer = (u64, bool);
    const WIRE: StoreCall = StoreCall::Read;

    fn names(&self) -> (InstanceId, ExecId) {
        (self.instance, self.exec)
    }

    fn apply(self, store: &Store, _aborted: u32) -> (u64, bool) {
        let ReadCall { instance, exec, claim } = self;
        if store.sql_runs_alone() {
            return crate::sql_store::apply::read(store, instance, exec, claim);
        }
        let (version, completed, owner, epoch) = {
            let s = store.state.borrow();
            let r = &s.instances[instance.0 as usize];
            (r.version, r.completed(), r.owner, r.epoch)
        };
        store.tracer.emit(ModelEvent::StoreRead {
            instance,
            exec,
            claim_owner: claim.owner,
            claim_epoch: claim.epoch,
            owner,
            epoch,
            version,
            task: sender(),
        });
        if store.shadowed() {
            crate::sql_store::differential::read(store, instance, (version, completed));
        }
        (version, completed)
    }
}

/// The step commit (see [`Store::commit`]).
struct CommitCall {
    instance: InstanceId,
    exec: ExecId,
    claim: Claim,
    spec: CommitSpec,
    timer_delay: Duration,
}

impl Call for CommitCall {
    type Answer = Result<Option<Trigger>, Option<OwnerId>>;
    const WIRE: StoreCall = StoreCall::Commit;

    fn names(&self) -> (InstanceId, ExecId) {
        (self.instance, self.exec)
    }

    fn key(&self) -> Option<RequestKey> {
        Some(request_key(Self::WIRE, self.instance, self.exec, self.claim, self.spec.based_on))
    }

    fn apply(self, store: &Store, aborted: u32) -> Self::Answer {
        let CommitCall { instance, exec, claim, spec, timer_delay } = self;
        if store.sql_runs_alone() {
            return crate::sql_store::apply::commit(store, instance, exec, claim, spec, timer_delay, aborted);
        }
        let owner = claim.owner;
        // The careless retry: "the transaction that aborted may have got as far as releasing
        // our claim", so the statement sent again also matches a row nobody owns.
        let free_row_is_ours = store.retry_accepts_free_row && aborted > 0;
        let outcome = {
            let mut s = store.state.borrow_mut();
            let now = executor::now();
            let row = &mut s.instances[instance.0 as usize];
            let owned = row.owner == Some(owner) || (free_row_is_ours && row.owner.is_none());
            if spec.conditional && !owned {
                Err(row.owner)
            } else {
                let (owner_before, current_epoch) = (row.owner, row.epoch);
                let version_before = row.version;
                assert!(spec.based_on < u64::from(row.steps), "a commit past the last step of instance {}", instance.0);
                row.version = spec.based_on + 1;
                // A commit based on an older version rewrites history (only careless code
                // commits so); the history keeps the latest writer of each step.
                row.committed_under.truncate(spec.based_on as usize);
                row.committed_under.push(claim.epoch);
                if spec.release {
                    row.owner = None;
                }
                let next = (!row.completed()).then(|| row.plan[row.version as usize]);
                row.parked = next == Some(Trigger::Pull);
                let (version, parked, owner_after) = (row.version, row.parked, row.owner);
                // The step consumed its trigger's row; the next one is written here.
                s.timers.remove(instance);
                s.tasks.remove(instance);
                match next {
                    Some(Trigger::Timer) => {
                        let due = now.add(timer_delay);
                        s.timers.insert(instance, TimerRow { instance, expects: version, due, attempt: 0 });
                    }
                    Some(Trigger::Pull) => {
                        s.tasks.insert(instance, TaskRow { instance, expects: version, locked: None });
                    }
                    _ => {}
                }
                s.row_written(instance, now);
                drop(s);
                if matches!(next, Some(Trigger::Timer | Trigger::Pull)) {
                    store.rows_written.notify();
                }
                store.tracer.emit(ModelEvent::CommitAccepted {
                    instance,
                    exec,
                    owner,
                    epoch: claim.epoch,
                    owner_before,
                    current_epoch,
                    trigger: spec.trigger,
                    based_on: spec.based_on,
                    version_before,
                    version_after: version,
                    task: sender(),
                });
                store.witness_row(ModelEvent::RowWritten {
                    instance,
                    write: WriteKind::Commit,
                    by: Some(exec),
                    writer: Some(owner),
                    owner: owner_after,
                    version,
                    epoch: current_epoch,
                    parked,
                });
                match next {
                    Some(Trigger::Timer) => store.tracer.emit(ModelEvent::TimerScheduled {
                        instance,
                        step: version as u32 + 1,
                        due_ns: now.add(timer_delay).as_nanos(),
                    }),
                    Some(Trigger::Pull) => {
                        store.tracer.emit(ModelEvent::TaskParked { instance, step: version as u32 + 1 })
                    }
                    Some(Trigger::Relay) => store.publish_from_outbox(instance, version, ResumePath::Relay),
                    None => store.tracer.emit(ModelEvent::InstanceCompleted { instance }),
                }
                Ok(next)
            }
        };
        if let Err(holder) = outcome {
            store.tracer.emit(ModelEvent::CommitRejected {
                instance,
                exec,
                owner,
                epoch: claim.epoch,
                holder,
                task: sender(),
            });
        }
        if store.shadowed() {
            let due = executor::now().add(timer_delay);
            crate::sql_store::differential::commit(store, instance, owner, claim.epoch, spec, due, aborted, &outcome);
        }
        outcome
    }
}

/// A release of the claim (see [`Store::release`]).
struct ReleaseCall {
    instance: InstanceId,
    exec: ExecId,
    claim: Claim,
    /// Which attempt this copy is, as its key names it: 0 for every copy of a correct
    /// client's release (one logical request); the attempt number for the careless client
    /// of the `release-resent-as-new-request` mutant.
    copy: u32,
}

impl Call for ReleaseCall {
    type Answer = bool;
    const WIRE: StoreCall = StoreCall::Release;

    fn names(&self) -> (InstanceId, ExecId) {
        (self.instance, self.exec)
    }

    fn key(&self) -> Option<RequestKey> {
        Some(request_key(Self::WIRE, self.instance, self.exec, self.claim, u64::from(self.copy)))
    }

    fn apply(self, store: &Store, _aborted: u32) -> bool {
        let ReleaseCall { instance, exec, claim, .. } = self;
        let (released, current_epoch) = store.release_now(instance, exec, claim.owner, WriteKind::Release);
        store.tracer.emit(ModelEvent::Released {
            instance,
            exec,
            owner: claim.owner,
            epoch: claim.epoch,
            current_epoch,
            released,
            task: sender(),
        });
        released
    }
}

/// A read of which epoch committed a step (see [`Store::committed_under`]).
struct CommittedUnderCall {
    instance: InstanceId,
    exec: ExecId,
    claim: Claim,
    based_on: u64,
}

impl Call for CommittedUnderCall {
    type Answer = Option<u64>;
    const WIRE: StoreCall = StoreCall::Read;

    fn names(&self) -> (InstanceId, ExecId) {
        (self.instance, self.exec)
    }

    fn apply(self, store: &Store, _aborted: u32) -> Option<u64> {
        let CommittedUnderCall { instance, exec, claim, based_on } = self;
        if store.sql_runs_alone() {
            return crate::sql_store::apply::committed_under(store, instance, exec, claim, based_on);
        }
        let (committed, owner, epoch, version) = {
            let s = store.state.borrow();
            let r = &s.instances[instance.0 as usize];
            (r.committed_under.get(based_on as usize).copied(), r.owner, r.epoch, r.version)
        };
        store.tracer.emit(ModelEvent::StoreRead {
            instance,
            exec,
            claim_owner: claim.owner,
            claim_epoch: claim.epoch,
            owner,
            epoch,
            version,
            task: sender(),
        });
        if store.shadowed() {
            crate::sql_store::differential::committed_under(store, instance, based_on, committed);
        }
        committed
    }
}

/// A migration's releasing write (see [`Store::migrate_commit`]).
struct MigrateCommitCall {
    instance: InstanceId,
    exec: ExecId,
    claim: Claim,
}

impl Call for MigrateCommitCall {
    type Answer = bool;
    const WIRE: StoreCall = StoreCall::MigrationWrite;

    fn names(&self) -> (InstanceId, ExecId) {
        (self.instance, self.exec)
    }

    fn apply(self, store: &Store, _aborted: u32) -> bool {
        let MigrateCommitCall { instance, exec, claim } = self;
        let (done, current_epoch) = store.release_now(instance, exec, claim.owner, WriteKind::Migration);
        store.tracer.emit(ModelEvent::MigrationCommitted {
            instance,
            exec,
            owner: claim.owner,
            epoch: claim.epoch,
            current_epoch,
            done,
            task: sender(),
        });
        done
    }
}

/// The key of one logical request.
fn request_key(call: StoreCall, instance: InstanceId, exec: ExecId, claim: Claim, detail: u64) -> RequestKey {
    RequestKey { call: call as u8, instance: instance.0, exec: exec.0, epoch: claim.epoch, detail }
}

/// True if a request on the wire sent from incarnation `incarnation` of `node`, whose
/// sending task was dropped before it landed (see [`Store::request_on_the_wire`]), still
/// lands: always if its sender was aborted; if its process was killed, when a draw says the
/// bytes had left the machine. Drawn only on this path, so no other run's draws move.
fn orphan_lands(node: NodeId, incarnation: u32) -> bool {
    let killed = executor::node_status(node) == NodeStatus::Dead || executor::incarnation(node) != incarnation;
    !killed || executor::choose_in(streams::WIRE, 2) == 1
}

/// Held by a task while it has a request on the wire: cleared when the task is dropped
/// (killed or aborted), not when it is frozen.
#[derive(Default)]
struct SenderAlive(Rc<std::cell::Cell<bool>>);

impl SenderAlive {
    /// A reading of whether the sender still exists.
    fn watch(&self) -> Rc<std::cell::Cell<bool>> {
        self.0.set(true);
        self.0.clone()
    }
}

impl Drop for SenderAlive {
    fn drop(&mut self) {
        self.0.set(false);
    }
}

/// Which claims a sweep clears.
#[derive(Clone, Copy, Debug)]
pub enum SweepCutoff {
    /// Older than the claim timeout by the store's clock (R18).
    StoreAge,
    /// Taken before this instant, as computed by the caller (a careless sweeper).
    TakenBefore(SimTime),
}

/// True if `by` holds an unexpired sweeper lease at `now`.
fn lease_held_by(s: &StoreState, by: ProcessId, now: SimTime) -> bool {
    matches!(s.lease, Some((holder, expiry)) if holder == by && expiry > now)
}

/// A pure predicate on owner ids a careless sweeper applies (R14 says there is none).
pub type OwnerFilter = fn(OwnerId) -> bool;

/// The store handle shared by every component.
#[derive(Clone)]
pub struct Store {
    pub(crate) state: Rc<RefCell<StoreState>>,
    pub(crate) tracer: Tracer<ModelEvent>,
    /// The transactional outbox's destination: a relay written by a commit is published
    /// by the store itself, so a writer that dies after committing loses nothing.
    broker: Broker,
    faults: StoreFaults,
    /// Notified whenever a timer or task row is written, so idle pollers need not poll.
    pub(crate) rows_written: Notify,
    relay_delay_max: Duration,
    latency_max_ms: u32,
    pub(crate) claim_timeout: Duration,
    /// The careless client of the `commit-retry-accepts-free-row` mutant: a retried commit
    /// goes out with its ownership condition widened to "ours, or free".
    pub(crate) retry_accepts_free_row: bool,
    /// The careless claim predicate of the `claim-refuses-own-owner` mutant: free or
    /// stale only, the same owner's re-claim refused.
    pub(crate) refuses_own_owner: bool,
    /// The SQL engine (`[store] engine = "sqlite"`), which then runs every operation; the
    /// in-memory rows become a mirror of what its statements returned.
    sql: Option<Rc<RefCell<crate::sql_store::SqlEngine>>>,
    /// The SQL engine only follows the model's store, comparing (`differential`).
    differential: bool,
    /// The idempotency table in front of either engine: keyed requests applied once.
    requests: RequestLog,
    /// The claim fence in front of either engine: a numbered claim older than its owner's
    /// newest is refused.
    fence: ClaimFence,
}

impl Store {
    /// An empty store.
    pub fn new(
        tracer: Tracer<ModelEvent>,
        broker: Broker,
        faults: StoreFaults,
        relay_delay_max: Duration,
        latency_max: Duration,
        claim_timeout: Duration,
    ) -> Store {
        Store {
            state: Rc::new(RefCell::new(StoreState::default())),
            tracer,
            broker,
            faults,
            rows_written: Notify::new(),
            relay_delay_max,
            latency_max_ms: u32::try_from(latency_max.as_millis()).unwrap_or(u32::MAX),
            claim_timeout,
            retry_accepts_free_row: false,
            refuses_own_owner: false,
            sql: None,
            differential: false,
            requests: RequestLog::default(),
            fence: ClaimFence::default(),
        }
    }

    /// This store running every operation on `engine` (`[store] engine = "sqlite"`).
    pub fn with_sql_engine(mut self, engine: crate::sql_store::SqlEngine) -> Store {
        self.sql = Some(Rc::new(RefCell::new(engine)));
        self
    }

    /// This store answering as the model, with `engine` running every operation beside it
    /// in lockstep (`[store] engine = "differential"`).
    pub fn with_sql_shadow(mut self, engine: crate::sql_store::SqlEngine) -> Store {
        self.sql = Some(Rc::new(RefCell::new(engine)));
        self.differential = true;
        self
    }

    /// The SQL engine, if one runs the store.
    pub(crate) fn sql(&self) -> Option<&Rc<RefCell<crate::sql_store::SqlEngine>>> {
        self.sql.as_ref()
    }

    /// True when the SQL engine runs the store's operations.
    pub(crate) fn sql_runs_alone(&self) -> bool {
        self.sql.is_some() && !self.differential
    }

    /// True when the SQL engine follows the model's store in lockstep (`differential`).
    pub(crate) fn shadowed(&self) -> bool {
        self.differential
    }

    /// Mirrors into the in-memory row what a statement returned for `instance`'s row.
    pub(crate) fn mirror_row(&self, instance: InstanceId, change: impl FnOnce(&mut InstanceRow)) {
        let mut s = self.state.borrow_mut();
        change(&mut s.instances[instance.0 as usize]);
        s.row_written(instance, executor::now());
    }

    /// Mirrors an accepted commit's transaction: the row, the step history, the consumed
    /// trigger rows and the next one.
    pub(crate) fn mirror_commit(
        &self,
        instance: InstanceId,
        based_on: u64,
        epoch: u64,
        c: &crate::sql_store::ops::Committed,
        due: SimTime,
    ) {
        let mut s = self.state.borrow_mut();
        let row = &mut s.instances[instance.0 as usize];
        row.version = c.version;
        row.owner = c.owner;
        row.parked = c.parked;
        row.committed_under.truncate(based_on as usize);
        row.committed_under.push(epoch);
        s.timers.remove(instance);
        s.tasks.remove(instance);
        match c.next {
            Some(Trigger::Timer) => {
                s.timers.insert(instance, TimerRow { instance, expects: c.version, due, attempt: 0 });
            }
            Some(Trigger::Pull) => {
                s.tasks.insert(instance, TaskRow { instance, expects: c.version, locked: None });
            }
            _ => {}
        }
        s.row_written(instance, executor::now());
        drop(s);
        if matches!(c.next, Some(Trigger::Timer | Trigger::Pull)) {
            self.rows_written.notify();
        }
    }

    /// This store with the careless claim predicate of the `claim-refuses-own-owner`
    /// mutant when `careless` (a held row is granted only when stale, whoever asks).
    pub fn with_claim_refusing_own_owner(mut self, careless: bool) -> Store {
        self.refuses_own_owner = careless;
        self
    }

    /// This store's client with the careless commit retry of the
    /// `commit-retry-accepts-free-row` mutant when `careless` (a retried commit is also
    /// accepted on a free row).
    pub fn with_careless_commit_retry(mut self, careless: bool) -> Store {
        self.retry_accepts_free_row = careless;
        self
    }

    /// Read access for views and checkers.
    pub fn state(&self) -> Rc<RefCell<StoreState>> {
        self.state.clone()
    }

    /// The store's faults.
    pub fn faults(&self) -> &StoreFaults {
        &self.faults
    }

    /// One-way network latency to or from the store, with the occasional spike.
    async fn latency(&self) {
        let d = self.latency_draw();
        if !d.is_zero() {
            // Time in flight, not a timer of the caller: no node's clock measures it.
            executor::elapse(d).await;
        }
    }

    /// How long one trip to or from the store takes this time.
    fn latency_draw(&self) -> Duration {
        let ms = executor::choose_in(streams::STORE, self.latency_max_ms + 1);
        Duration::from_millis(u64::from(ms)) + self.faults.spike()
    }

    /// The request half of a call, by a client that retries calls the store refused
    /// (aborted, or unavailable) with capped exponential backoff. A refused call wrote
    /// nothing, so retrying is safe. Returns when the store accepts the call, with the
    /// number of earlier attempts whose transaction aborted.
    async fn request(&self) -> u32 {
        let mut backoff = RETRY_BACKOFF_BASE;
        let mut aborted = 0;
        for _ in 0..RETRY_ATTEMPTS_MAX {
            self.latency().await;
            match self.faults.refusal() {
                None => return aborted,
                Some(Refusal::Aborted) => aborted += 1,
                Some(Refusal::Unavailable) => {}
            }
            self.latency().await;
            sleep(backoff).await;
            backoff = (backoff * 2).min(RETRY_BACKOFF_MAX);
        }
        // Scenario validation keeps unavailability below the retry horizon and aborts are
        // rare draws: reaching this is a model bug, reported as a crash with the seed.
        panic!("the store refused {RETRY_ATTEMPTS_MAX} calls in a row, past the retry horizon");
    }

    /// The request half of a call over the faulty boundary, on the wire rather than on its
    /// sender: each attempt travels, and is taken or refused by the store, on a task of the
    /// world's, so a request that was sent lands whatever its sender does meanwhile — a
    /// frozen sender hears the answer once it resumes, a dead one never. `take` runs in the
    /// store's transaction once an attempt is taken, with the number of the client's
    /// earlier attempts the store aborted. The client's retries of a refused attempt are
    /// its own: its backoff waits on the sender.
    ///
    /// A request whose sender's task is dropped while it is in flight still lands, as a
    /// database applies a statement whose client went away after sending it — when the
    /// runtime aborted the task (its connection lives on), always; when the process was
    /// killed, only if the bytes had left the machine before its connections died (a draw).
    /// That holds for every client: a lane's, an administrative request's and a role's
    /// (lease, sweep, timer, pull). The correct runtime makes a late claim harmless by the
    /// claim fence ([`crate::claim_fence`]); a keyed request is applied once whatever its
    /// copies do; a role's late lease, clear, pick or lock is conditional on the row as the
    /// store finds it, and what it takes for a dead process runs out like any lease. A
    /// checker judging that a dead process never acts again (`exited-stays-exited`) allows
    /// the store to witness such a request within one trip of the wire after the death.
    async fn request_on_the_wire<T, F>(&self, take: F) -> T
    where
        T: 'static,
        F: FnOnce(&Store, u32) -> T + 'static,
    {
        let mut take = take;
        let mut backoff = RETRY_BACKOFF_BASE;
        let mut aborted = 0;
        let sender = SenderAlive::default();
        let node = executor::current_node();
        let incarnation = executor::incarnation(node);
        for _ in 0..RETRY_ATTEMPTS_MAX {
            let (answered, answer) = oneshot();
            let (store, sent, alive) = (self.clone(), sent_now(), sender.watch());
            executor::spawn_daemon_on(NodeId::WORLD, "store:request", async move {
                // The faults met on the way are reported as the sender's.
                let in_flight = applying_sent(sent, || store.latency_draw());
                if !in_flight.is_zero() {
                    executor::elapse(in_flight).await;
                }
                if !alive.get() && !orphan_lands(node, incarnation) {
                    return;
                }
                let outcome = applying_sent(sent, || match store.faults.refusal() {
                    None => Ok(take(&store, aborted)),
                    Some(refusal) => Err((refusal, take)),
                });
                answered.send(outcome);
            });
            match answer.await.expect("the wire's task always answers") {
                Ok(taken) => return taken,
                Err((refusal, back)) => {
                    take = back;
                    aborted += u32::from(refusal == Refusal::Aborted);
                }
            }
            self.latency().await;
            sleep(backoff).await;
            backoff = (backoff * 2).min(RETRY_BACKOFF_MAX);
        }
        panic!("the store refused {RETRY_ATTEMPTS_MAX} calls in a row, past the retry horizon");
    }

    /// A lane's request at the store: its fate drawn (lost, delayed, or arriving), and
    /// applied once if it arrives. `None`: the client hears nothing.
    fn arrive<C: Call>(&self, w: Wire, call: C, aborted: u32, keyed: bool) -> Option<C::Answer> {
        match self.faults.request_fate(w.call, w.instance, w.exec, keyed) {
            RequestFate::Arrives => self.take(call, aborted),
            RequestFate::Lost => None,
            RequestFate::Delayed(after) => {
                self.land_late(w, call, aborted, after);
                None
            }
        }
    }

    /// Lands a delayed copy of `call` `after` from now, by the store's clock, whatever its
    /// sender does meanwhile: time in flight runs on no node's clock, and a frozen or dead
    /// sender does not hold it back.
    fn land_late<C: Call>(&self, w: Wire, call: C, aborted: u32, after: Duration) {
        let (store, task) = (self.clone(), sender());
        executor::spawn_daemon_on(NodeId::WORLD, "store:late-copy", async move {
            executor::elapse(after).await;
            store.faults.landed_late(w.call, w.instance, w.exec, task);
            let late = Sent { task: None, clock: executor::local_now() };
            let _ = applying_sent(late, || store.take(call, aborted));
        });
    }

    /// Takes a lane's request that reached the store: a numbered claim older than its
    /// owner's newest is refused by the fence, writing nothing (`None`: its client, if one
    /// still listens, hears nothing); any other request is applied once.
    fn take<C: Call>(&self, call: C, aborted: u32) -> Option<C::Answer> {
        if let Some((owner, number)) = call.number() {
            if let Err(seen) = self.fence.admit(owner, number) {
                let (instance, exec) = call.names();
                self.tracer.emit(ModelEvent::ClaimFenced { instance, exec, owner, number, seen, task: sender() });
                return None;
            }
        }
        Some(self.apply_once(call, aborted))
    }

    /// Applies `call` in one transaction, once per logical request: a copy of a keyed
    /// request the store already applied gets the first copy's answer and writes nothing.
    fn apply_once<C: Call>(&self, call: C, aborted: u32) -> C::Answer {
        let Some(key) = call.key() else {
            return call.apply(self, aborted);
        };
        if let Some(answer) = self.requests.answered::<C::Answer>(key) {
            return answer;
        }
        let answer = call.apply(self, aborted);
        self.requests.record(key, answer.clone());
        answer
    }

    /// The reply half of a call applied by the store: a lossy call's reply may be lost
    /// (the client waits out its timeout, not knowing it was applied), and the caller may
    /// be struck just after the reply arrives.
    async fn answer<T>(&self, wire: Option<Wire>, answer: T) -> Reply<T> {
        let Some(w) = wire else {
            self.latency().await;
            return Reply::Answered(answer);
        };
        if self.faults.reply_lost(w.call, w.instance, w.exec) {
            sleep(self.faults.client_timeout()).await;
            return Reply::TimedOut;
        }
        self.latency().await;
        self.faults.at_boundary(w.call, w.instance, w.exec, false).await;
        Reply::Answered(answer)
    }

    /// Adds an instance row (setup only; no latency).
    pub fn create_instance(&self, plan: Vec<Trigger>) -> InstanceId {
        let mut s = self.state.borrow_mut();
        let id = InstanceId(s.instances.len() as u32);
        let steps = plan.len() as u32;
        s.instances.push(InstanceRow {
            owner: None,
            claimed_at: SimTime::ZERO,
            version: 0,
            epoch: 0,
            committed_under: Vec::new(),
            parked: false,
            steps,
            plan,
        });
        s.work.observe(&ModelEvent::InstanceStarted { instance: id, steps });
        drop(s);
        if let Some(sql) = &self.sql {
            sql.borrow().create_instance(id, &self.state.borrow().instances[id.0 as usize].plan);
        }
        id
    }

    /// Emits a row-written witness, and counts it in the work left.
    pub(crate) fn witness_row(&self, event: ModelEvent) {
        self.state.borrow_mut().work.observe(&event);
        self.tracer.emit(event);
    }

    /// R2: take the claim if the row is free, stale by the store's clock, or held by the
    /// same owner (R10); otherwise match nothing and refuse.
    pub async fn claim(
        &self,
        instance: InstanceId,
        exec: ExecId,
        owner: OwnerId,
        process: Option<ProcessId>,
        path: ResumePath,
    ) -> ClaimResult {
        self.claim_judged_at(instance, exec, owner, process, path, None).await
    }

    /// [`Store::claim`], judging the held claim's age at `client_now` when the request
    /// supplies one — the careless API of the `client-clock-staleness` mutant, where the
    /// claimant's clock decides staleness instead of the store's (breaks R2). `None` is the
    /// store's own clock.
    pub async fn claim_judged_at(
        &self,
        instance: InstanceId,
        exec: ExecId,
        owner: OwnerId,
        process: Option<ProcessId>,
        path: ResumePath,
        client_now: Option<SimTime>,
    ) -> ClaimResult {
        self.call(ClaimCall { instance, exec, owner, process, path, client_now, delivery: None, number: None }).await
    }

    /// [`Store::claim_judged_at`] over the faulty request/reply boundary of an execution
    /// lane's calls (the `store-replies` fault): `TimedOut` if the request or its reply was
    /// lost — the grant may or may not have been written.
    pub async fn claim_over_wire(
        &self,
        instance: InstanceId,
        exec: ExecId,
        owner: OwnerId,
        process: Option<ProcessId>,
        path: ResumePath,
        asked: ClaimAsked,
    ) -> Reply<ClaimResult> {
        let ClaimAsked { client_now, delivery, number } = asked;
        self.call_over_wire(ClaimCall { instance, exec, owner, process, path, client_now, delivery, number }).await
    }

    /// Reads the row's committed version and whether the instance completed, for `exec`
    /// acting under `claim` (which the store records, and does not check: a read changes
    /// nothing).
    pub async fn read(&self, instance: InstanceId, exec: ExecId, claim: Claim) -> (u64, bool) {
        self.call(ReadCall { instance, exec, claim }).await
    }

    /// [`Store::read`] over the faulty boundary of a lane's calls.
    pub async fn read_over_wire(&self, instance: InstanceId, exec: ExecId, claim: Claim) -> Reply<(u64, bool)> {
        self.call_over_wire(ReadCall { instance, exec, claim }).await
    }

    /// The step commit: writes version `based_on + 1`, the next trigger's row, and (if
    /// `release`) clears the claim, all in one transaction. Rejected, writing nothing, if
    /// `conditional` and the writer no longer owns the row. Returns the next trigger to
    /// publish (the caller's outbox), or the holder that made it fail.
    pub async fn commit(
        &self,
        instance: InstanceId,
        exec: ExecId,
        claim: Claim,
        spec: CommitSpec,
        timer_delay: Duration,
    ) -> Result<Option<Trigger>, Option<OwnerId>> {
        self.call(CommitCall { instance, exec, claim, spec, timer_delay }).await
    }

    /// [`Store::commit`] over the faulty boundary of a lane's calls: `TimedOut` is an
    /// ambiguous outcome — the commit may have been applied (see [`Store::committed_under`]).
    pub async fn commit_over_wire(
        &self,
        instance: InstanceId,
        exec: ExecId,
        claim: Claim,
        spec: CommitSpec,
        timer_delay: Duration,
    ) -> Reply<Result<Option<Trigger>, Option<OwnerId>>> {
        self.call_over_wire(CommitCall { instance, exec, claim, spec, timer_delay }).await
    }

    /// Releases the claim if `owner` still holds it. Returns whether it matched.
    pub async fn release(&self, instance: InstanceId, exec: ExecId, claim: Claim) -> bool {
        self.call(ReleaseCall { instance, exec, claim, copy: 0 }).await
    }

    /// [`Store::release`] over the faulty boundary of a lane's calls. A release is safe to
    /// repeat: it matches only while the row still shows the releaser's owner id.
    pub async fn release_over_wire(&self, instance: InstanceId, exec: ExecId, claim: Claim) -> Reply<bool> {
        self.release_copy_over_wire(instance, exec, claim, 0).await
    }

    /// [`Store::release_over_wire`] naming attempt `copy` in the request's key: 0 for every
    /// copy of one release; anything else makes this copy a request of its own, which the
    /// store applies even after it applied another copy (the careless client of the
    /// `release-resent-as-new-request` mutant).
    pub async fn release_copy_over_wire(
        &self,
        instance: InstanceId,
        exec: ExecId,
        claim: Claim,
        copy: u32,
    ) -> Reply<bool> {
        self.call_over_wire(ReleaseCall { instance, exec, claim, copy }).await
    }

    /// Reads which claim epoch committed the step taking `instance` from version `based_on`
    /// to the next (`None`: not committed yet), for `exec` acting under `claim` — how a
    /// client resolves a commit whose reply it never got: the step history tells its own
    /// epoch from anybody else's. A read over the lane's faulty boundary: it changes
    /// nothing, and is witnessed like one.
    pub async fn committed_under(
        &self,
        instance: InstanceId,
        exec: ExecId,
        claim: Claim,
        based_on: u64,
    ) -> Reply<Option<u64>> {
        self.call_over_wire(CommittedUnderCall { instance, exec, claim, based_on }).await
    }

    /// One call over the reliable path, which always answers.
    async fn call<C: Call>(&self, call: C) -> C::Answer {
        self.exchange(None, call).await.reliable()
    }

    /// One call over the faulty request/reply boundary of a lane's calls.
    async fn call_over_wire<C: Call>(&self, call: C) -> Reply<C::Answer> {
        let (instance, exec) = call.names();
        self.exchange(Some(Wire { call: C::WIRE, instance, exec }), call).await
    }

    /// The request, the transaction and the reply of one call: the request half and its
    /// faults, the call applied in one transaction once the store took it, then the reply
    /// half and its faults. Over the faulty boundary the request travels on the wire (see
    /// [`Store::request_on_the_wire`]) once the scenario strikes the boundary at all; a
    /// delayed request lands later on its own, its client having given up on it by then.
    async fn exchange<C: Call>(&self, wire: Option<Wire>, call: C) -> Reply<C::Answer> {
        let Some(w) = wire else {
            let aborted = self.request().await;
            let answer = self.apply_once(call, aborted);
            return self.answer(None, answer).await;
        };
        let keyed = call.key().is_some();
        self.faults.at_boundary(w.call, w.instance, w.exec, true).await;
        let landed = if self.faults.on_the_wire() {
            self.request_on_the_wire(move |store, aborted| store.arrive(w, call, aborted, keyed)).await
        } else {
            let aborted = self.request().await;
            self.arrive(w, call, aborted, keyed)
        };
        match landed {
            Some(answer) => self.answer(wire, answer).await,
            None => {
                sleep(self.faults.client_timeout()).await;
                Reply::TimedOut
            }
        }
    }

    /// One call of a role's (the sweeper's, the timer poller's, a pull worker's) over the
    /// same faulty boundary as a lane's: its request may be lost (nothing applied) or its
    /// reply lost (applied, unknown to the caller) — `TimedOut` either way, after the
    /// client's timeout. A role's requests carry no idempotency key, so none is delayed
    /// past its client's timeout. `instance`: the instance the call names, if one.
    async fn role_exchange<T, F>(&self, call: StoreCall, instance: Option<InstanceId>, transaction: F) -> Reply<T>
    where
        T: 'static,
        F: FnOnce(&Store) -> T + 'static,
    {
        let landed = if self.faults.on_the_wire() {
            let arrives =
                move |store: &Store, _| store.faults.role_request_arrives(call, instance).then(|| transaction(store));
            self.request_on_the_wire(arrives).await
        } else {
            self.request().await;
            Some(transaction(self))
        };
        let Some(answer) = landed.filter(|_| !self.faults.role_reply_lost(call, instance)) else {
            sleep(self.faults.client_timeout()).await;
            return Reply::TimedOut;
        };
        self.latency().await;
        Reply::Answered(answer)
    }

    /// A migration's write: conditional on ownership, records the routing change and
    /// releases in one transaction.
    pub async fn migrate_commit(&self, instance: InstanceId, exec: ExecId, claim: Claim) -> bool {
        self.call(MigrateCommitCall { instance, exec, claim }).await
    }

    /// [`Store::migrate_commit`] over the faulty boundary of an administrative request's
    /// calls: `TimedOut` is an ambiguous outcome — the write may have landed (and released).
    pub async fn migrate_commit_over_wire(&self, instance: InstanceId, exec: ExecId, claim: Claim) -> Reply<bool> {
        self.call_over_wire(MigrateCommitCall { instance, exec, claim }).await
    }

    /// The transaction of a release (or a migration's releasing write): clears the claim
    /// if `owner` holds it, reporting the row. Returns whether it matched, and the row's
    /// epoch.
    fn release_now(&self, instance: InstanceId, exec: ExecId, owner: OwnerId, write: WriteKind) -> (bool, u64) {
        if self.sql_runs_alone() {
            return crate::sql_store::apply::release(self, instance, exec, owner, write);
        }
        let (matched, version, parked, epoch) = {
            let mut s = self.state.borrow_mut();
            let row = &mut s.instances[instance.0 as usize];
            let matched = row.owner == Some(owner);
            if matched {
                row.owner = None;
            }
            let written = (matched, row.version, row.parked, row.epoch);
            s.row_written(instance, executor::now());
            written
        };
        if matched {
            self.witness_row(ModelEvent::RowWritten {
                instance,
                write,
                by: Some(exec),
                writer: Some(owner),
                owner: None,
                version,
                epoch,
                parked,
            });
        }
        if self.shadowed() {
            let statement = if write == WriteKind::Migration { "migrate_commit" } else { "release" };
            crate::sql_store::differential::release(self, statement, instance, owner, (matched, epoch));
        }
        (matched, epoch)
    }

    /// Takes or renews the sweeper lease for `process` ([`Store::acquire_lease_now`]), over
    /// the faulty boundary: `TimedOut` — the lease may or may not be `process`'s now.
    pub async fn acquire_lease(&self, process: ProcessId, duration: Duration) -> Reply<bool> {
        let store = self.clone();
        self.role_exchange(StoreCall::Lease, None, move |_| store.acquire_lease_now(process, duration)).await
    }

    /// The one-statement sweep ([`Store::sweep_now`]) over the faulty boundary: `TimedOut`
    /// — it may or may not have cleared claims.
    pub async fn sweep(
        &self,
        by: ProcessId,
        cutoff: SweepCutoff,
        require_lease: bool,
        filter: Option<OwnerFilter>,
    ) -> Reply<u32> {
        let store = self.clone();
        self.role_exchange(StoreCall::Sweep, None, move |_| store.sweep_now(by, cutoff, require_lease, filter)).await
    }

    /// The select of a two-step sweep ([`Store::select_stale_now`]) over the faulty boundary.
    pub async fn select_stale(
        &self,
        by: ProcessId,
        cutoff: SweepCutoff,
        filter: Option<OwnerFilter>,
    ) -> Reply<Vec<(InstanceId, u64)>> {
        let store = self.clone();
        self.role_exchange(StoreCall::SweepSelect, None, move |_| store.select_stale_now(by, cutoff, filter)).await
    }

    /// The clear of a two-step sweep ([`Store::clear_stale_now`]) over the faulty boundary:
    /// `TimedOut` — the claim may or may not have been cleared.
    pub async fn clear_stale(
        &self,
        by: ProcessId,
        instance: InstanceId,
        epoch: u64,
        cutoff: SweepCutoff,
        require_lease: bool,
        recheck: bool,
    ) -> Reply<bool> {
        let store = self.clone();
        let clear = move |_: &Store| store.clear_stale_now(by, instance, epoch, cutoff, require_lease, recheck);
        self.role_exchange(StoreCall::SweepClear, Some(instance), clear).await
    }

    /// Picks due timers ([`Store::pick_due_timers_now`]) over the faulty boundary:
    /// `TimedOut` — some may have been picked, and come due again after their fire lease.
    pub async fn pick_due_timers(&self, fire_lease: Duration, limit: usize) -> Reply<Vec<TimerRow>> {
        let store = self.clone();
        self.role_exchange(StoreCall::TimerPick, None, move |_| store.pick_due_timers_now(fire_lease, limit)).await
    }

    /// Defers a timer ([`Store::defer_timer_now`]) over the faulty boundary: `TimedOut` —
    /// the row may or may not have been deferred.
    pub async fn defer_timer(
        &self,
        instance: InstanceId,
        expects: u64,
        refused: bool,
        backoff: impl FnOnce(u32) -> Duration + 'static,
    ) -> Reply<Option<(u32, Duration)>> {
        let store = self.clone();
        let defer = move |_: &Store| store.defer_timer_now(instance, expects, refused, backoff);
        self.role_exchange(StoreCall::TimerDefer, Some(instance), defer).await
    }

    /// Locks a task row for `worker` ([`Store::lock_task_now`]) over the faulty boundary:
    /// `TimedOut` — a row may be locked for the worker, which does not know it.
    pub async fn lock_task(&self, worker: u32, duration: Duration) -> Reply<Option<TaskRow>> {
        let store = self.clone();
        self.role_exchange(StoreCall::TaskLock, None, move |_| store.lock_task_now(worker, duration)).await
    }

    /// Completes a locked task ([`Store::complete_task_now`]) over the faulty boundary:
    /// `TimedOut` — the completion's relay may or may not have been published.
    pub async fn complete_task(&self, worker: u32, instance: InstanceId, expects: u64) -> Reply<bool> {
        let store = self.clone();
        let complete = move |_: &Store| store.complete_task_now(worker, instance, expects);
        self.role_exchange(StoreCall::TaskComplete, Some(instance), complete).await
    }

    /// Takes or renews the sweeper lease for `process` if it is free, expired, or already
    /// `process`'s. Returns whether `process` holds it now.
    fn acquire_lease_now(&self, process: ProcessId, duration: Duration) -> bool {
        let now = executor::now();
        let until = now.add(duration);
        let (held, fresh) = if self.sql_runs_alone() {
            crate::sql_store::apply::acquire_lease(self, process, until)
        } else {
            let mut s = self.state.borrow_mut();
            match s.lease {
                Some((holder, expiry)) if holder != process && expiry > now => (false, false),
                previous => {
                    s.lease = Some((process, until));
                    (true, !matches!(previous, Some((holder, expiry)) if holder == process && expiry > now))
                }
            }
        };
        // Grants and renewals alike: a checker of lease exclusivity needs every expiry.
        if held {
            self.tracer.emit(ModelEvent::LeaseAcquired {
                process,
                until_ns: until.as_nanos(),
                renewal: !fresh,
                task: sender(),
            });
        }
        if self.shadowed() {
            crate::sql_store::differential::acquire_lease(self, process, until, held);
        }
        held
    }

    /// Clears claims by age (R18). With `require_lease`, nothing happens unless `by` holds
    /// an unexpired lease at the store's instant (the sweep and the lease check are one
    /// transaction). Each cleared claim is reported with its true age and whether the
    /// caller held the lease.
    fn sweep_now(&self, by: ProcessId, cutoff: SweepCutoff, require_lease: bool, filter: Option<OwnerFilter>) -> u32 {
        if self.sql_runs_alone() {
            let cleared = crate::sql_store::apply::sweep(self, by, cutoff, require_lease, filter);
            return cleared;
        }
        let now = executor::now();
        let mut cleared = Vec::new();
        {
            let mut s = self.state.borrow_mut();
            let lease_held = lease_held_by(&s, by, now);
            if lease_held || !require_lease {
                let claim_timeout = self.claim_timeout;
                for i in s.claimed_checked() {
                    let row = &mut s.instances[i];
                    let Some(owner) = row.owner else { continue };
                    let old_enough = match cutoff {
                        SweepCutoff::StoreAge => now.since(row.claimed_at) > claim_timeout,
                        SweepCutoff::TakenBefore(t) => row.claimed_at < t,
                    };
                    if old_enough && filter.is_none_or(|f| f(owner)) {
                        row.owner = None;
                        // Full precision: the checker compares it with the timeout.
                        let age = sutra_sim_core::time::duration_nanos(now.since(row.claimed_at));
                        cleared.push((
                            InstanceId(i as u32),
                            owner,
                            age,
                            row.version,
                            row.epoch,
                            row.parked,
                            lease_held,
                        ));
                    }
                }
            }
            for &(instance, ..) in &cleared {
                s.row_written(instance, now);
            }
        }
        for &(instance, owner, age_ns, version, epoch, parked, lease_held) in &cleared {
            self.emit_swept(instance, owner, epoch, age_ns, by, lease_held, version, parked);
        }
        if self.shadowed() {
            let swept = cleared.iter().map(|c| (c.0, c.4)).collect();
            crate::sql_store::differential::sweep(
                self,
                by,
                cutoff,
                crate::sql_store::differential::sweep_careless(cutoff, require_lease, filter),
                swept,
            );
        }
        cleared.len() as u32
    }

    /// The first statement of a two-step sweep (a read): the claims older than `cutoff` at
    /// the store's instant that `filter` keeps, each with the epoch it was selected at.
    /// Changes nothing; the lease is not asked (it was checked by a statement of its own,
    /// and is reported for the story).
    fn select_stale_now(
        &self,
        by: ProcessId,
        cutoff: SweepCutoff,
        filter: Option<OwnerFilter>,
    ) -> Vec<(InstanceId, u64)> {
        if self.sql_runs_alone() {
            let stale = crate::sql_store::apply::select_stale(self, by, cutoff, filter);
            return stale;
        }
        let now = executor::now();
        let (stale, lease_held) = {
            let s = self.state.borrow();
            let stale: Vec<(InstanceId, u64)> = s
                .claimed_checked()
                .into_iter()
                .map(|i| (i, &s.instances[i]))
                .filter(|(_, row)| {
                    row.owner.is_some_and(|owner| {
                        self.older_than_cutoff(row, cutoff, now) && filter.is_none_or(|f| f(owner))
                    })
                })
                .map(|(i, row)| (InstanceId(i as u32), row.epoch))
                .collect();
            (stale, lease_held_by(&s, by, now))
        };
        self.tracer.emit(ModelEvent::SweepSelected { by, stale: stale.len() as u32, lease_held, task: sender() });
        if self.shadowed() {
            crate::sql_store::differential::select_stale(
                self,
                cutoff,
                crate::sql_store::differential::select_careless(cutoff, filter),
                &stale,
            );
        }
        stale
    }

    /// The second statement of a two-step sweep: clears `instance`'s claim, selected at
    /// `epoch`. With `recheck` (the correct shape) the update is conditional: the row still
    /// holds the claim of that epoch, it is still older than `cutoff` at this statement's
    /// instant, and (with `require_lease`) `by` still holds an unexpired lease — otherwise
    /// it matches nothing. Without `recheck` it clears whatever claim the row holds now.
    /// Returns whether it cleared a claim.
    fn clear_stale_now(
        &self,
        by: ProcessId,
        instance: InstanceId,
        epoch: u64,
        cutoff: SweepCutoff,
        require_lease: bool,
        recheck: bool,
    ) -> bool {
        if self.sql_runs_alone() {
            let cleared =
                crate::sql_store::apply::clear_stale(self, by, instance, epoch, cutoff, require_lease, recheck);
            return cleared;
        }
        let now = executor::now();
        let cleared = {
            let mut s = self.state.borrow_mut();
            let lease_held = lease_held_by(&s, by, now);
            let row = &s.instances[instance.0 as usize];
            let matches = row.owner.is_some()
                && (!recheck
                    || (row.epoch == epoch
                        && self.older_than_cutoff(row, cutoff, now)
                        && (lease_held || !require_lease)));
            let cleared = matches.then(|| {
                let row = &mut s.instances[instance.0 as usize];
                let owner = row.owner.take().expect("a matching row is owned");
                let age = sutra_sim_core::time::duration_nanos(now.since(row.claimed_at));
                (owner, age, row.version, row.epoch, row.parked, lease_held)
            });
            s.row_written(instance, now);
            cleared
        };
        match cleared {
            Some((owner, age_ns, version, epoch, parked, lease_held)) => {
                self.emit_swept(instance, owner, epoch, age_ns, by, lease_held, version, parked)
            }
            None => self.tracer.emit(ModelEvent::SweepClearMissed { instance, by, epoch, task: sender() }),
        }
        if self.shadowed() {
            let careless = crate::sql_store::differential::clear_careless(cutoff, require_lease, recheck);
            crate::sql_store::differential::clear_stale(self, by, instance, epoch, cutoff, careless, cleared.is_some());
        }
        cleared.is_some()
    }

    /// Witnesses a sweep clearing `instance`'s claim: the sweep itself and the row it wrote.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn emit_swept(
        &self,
        instance: InstanceId,
        owner: OwnerId,
        epoch: u64,
        age_ns: u64,
        by: ProcessId,
        lease_held: bool,
        version: u64,
        parked: bool,
    ) {
        self.tracer.emit(ModelEvent::Swept { instance, owner, epoch, age_ns, by, lease_held, task: sender() });
        self.witness_row(ModelEvent::RowWritten {
            instance,
            write: WriteKind::Sweep,
            by: None,
            writer: None,
            owner: None,
            version,
            epoch,
            parked,
        });
    }

    /// True if `row`'s claim is older than `cutoff` at `now`.
    fn older_than_cutoff(&self, row: &InstanceRow, cutoff: SweepCutoff, now: SimTime) -> bool {
        match cutoff {
            SweepCutoff::StoreAge => now.since(row.claimed_at) > self.claim_timeout,
            SweepCutoff::TakenBefore(t) => row.claimed_at < t,
        }
    }

    /// The earliest instant at which a timer row is due, if any row exists.
    ///
    /// A simulation shortcut, not a store call: a poll that finds nothing due changes
    /// nothing, so pollers skip the ticks at which nothing can be due instead of paying
    /// for empty round trips. Every poll that could find work is still made for real.
    pub fn earliest_timer_due(&self) -> Option<SimTime> {
        self.state.borrow().timers.earliest_due()
    }

    /// The earliest instant at which a task row can be locked (now, if one is unlocked),
    /// if any row exists. The same shortcut as [`Store::earliest_timer_due`].
    pub fn earliest_task_lockable(&self) -> Option<SimTime> {
        self.state.borrow().tasks.earliest_lockable()
    }

    /// For a poller that polls every `interval`: true if a poll now could find work
    /// (`earliest` is due). Otherwise sleeps — until the last tick before `earliest`, or
    /// until a timer or task row is written — and returns false: poll again next tick.
    pub async fn idle_until_work(&self, earliest: Option<SimTime>, interval: Duration) -> bool {
        let now = executor::now();
        let written = std::pin::pin!(self.rows_written.notified());
        match earliest {
            Some(at) if at <= now => true,
            None => {
                written.await;
                false
            }
            Some(at) => {
                let skipped = at.since(now).as_nanos() / interval.as_nanos().max(1);
                if skipped > 0 {
                    let nap = std::pin::pin!(sleep(interval * u32::try_from(skipped).unwrap_or(u32::MAX)));
                    futures::future::select(nap, written).await;
                }
                false
            }
        }
    }

    /// Due timers, each hidden from other pollers for `fire_lease` (at-least-once firing:
    /// a poller that dies lets the timer come due again).
    fn pick_due_timers_now(&self, fire_lease: Duration, limit: usize) -> Vec<TimerRow> {
        if self.sql_runs_alone() {
            let picked = crate::sql_store::apply::pick_due_timers(self, fire_lease, limit);
            return picked;
        }
        let now = executor::now();
        let picked: Vec<TimerRow> = {
            let mut s = self.state.borrow_mut();
            let due = s.timers.due_at(now, limit);
            let mut picked = Vec::with_capacity(due.len());
            for instance in due {
                s.timers.update(instance, |row| {
                    picked.push(*row);
                    row.due = now.add(fire_lease);
                });
            }
            picked
        };
        if self.shadowed() {
            crate::sql_store::differential::pick_due_timers(self, fire_lease, limit, &picked);
        }
        picked
    }

    /// Defers a timer still pending for `expects`, counting a refusal if `refused`, by the
    /// delay `backoff` computes from the row's refusal count after this deferral — read and
    /// written in one transaction, so two racing deferrals never compute from the same
    /// count. Returns the count and the delay, `None` if no row matched (a commit consumed
    /// it meanwhile: nothing is written and nothing witnessed).
    fn defer_timer_now(
        &self,
        instance: InstanceId,
        expects: u64,
        refused: bool,
        backoff: impl FnOnce(u32) -> Duration,
    ) -> Option<(u32, Duration)> {
        if self.sql_runs_alone() {
            let deferred = crate::sql_store::apply::defer_timer(self, instance, expects, refused, backoff);
            return deferred;
        }
        let now = executor::now();
        let deferred = {
            let mut s = self.state.borrow_mut();
            match s.timers.get(instance) {
                Some(row) if row.expects == expects => {
                    self.rows_written.notify();
                    s.timers.update(instance, |row| {
                        if refused {
                            row.attempt += 1;
                        }
                        let delay = backoff(row.attempt);
                        row.due = now.add(delay);
                        (row.attempt, row.due, delay)
                    })
                }
                _ => None,
            }
        };
        if let Some((attempt, due, _)) = deferred {
            self.tracer.emit(ModelEvent::TimerDeferred {
                instance,
                expects,
                attempt,
                due_ns: due.as_nanos(),
                task: sender(),
            });
        }
        if self.shadowed() {
            let answer = deferred.map(|(attempt, _, delay)| (attempt, delay));
            crate::sql_store::differential::defer_timer(self, instance, expects, refused, answer);
        }
        deferred.map(|(attempt, _, delay)| (attempt, delay))
    }

    /// Locks the first unlocked (or lock-expired) task row for `worker`.
    fn lock_task_now(&self, worker: u32, duration: Duration) -> Option<TaskRow> {
        if self.sql_runs_alone() {
            let task = crate::sql_store::apply::lock_task(self, worker, duration);
            return task;
        }
        let now = executor::now();
        let task = {
            let mut s = self.state.borrow_mut();
            let row = s.tasks.first_lockable(now).and_then(|instance| s.tasks.get(instance).copied());
            row.map(|row| {
                let locked = TaskRow { locked: Some((worker, now.add(duration))), ..row };
                s.tasks.insert(row.instance, locked);
                locked
            })
        };
        if let Some(t) = &task {
            self.tracer.emit(ModelEvent::TaskLocked { instance: t.instance, worker });
        }
        if self.shadowed() {
            crate::sql_store::differential::lock_task(self, worker, duration, task);
        }
        task
    }

    /// Completes a locked task: if `worker` still holds the lock, the completion is
    /// published as a fresh relay in the same transaction (R17).
    fn complete_task_now(&self, worker: u32, instance: InstanceId, expects: u64) -> bool {
        if self.sql_runs_alone() {
            let done = crate::sql_store::apply::complete_task(self, worker, instance, expects);
            return done;
        }
        let now = executor::now();
        let done = {
            let s = self.state.borrow();
            match s.tasks.get(instance) {
                // The row stays until the step commits. Should the completion be lost (the
                // worker dies before publishing), the lock expires and another worker
                // repeats the task: at-least-once, and the duplicate relay is harmless.
                Some(t) if t.expects == expects && t.locked.is_some_and(|(w, until)| w == worker && until > now) => {
                    true
                }
                _ => false,
            }
        };
        if done {
            self.tracer.emit(ModelEvent::TaskCompleted { instance, worker });
            self.publish_from_outbox(instance, expects, ResumePath::PullCompletion);
        }
        if self.shadowed() {
            crate::sql_store::differential::complete_task(self, worker, instance, expects, done);
        }
        done
    }

    /// Publishes an instance's creation message (the relay of its first step) through the
    /// outbox, witnessed like every other relay.
    pub fn publish_first_relay(&self, instance: InstanceId) {
        assert_eq!(
            self.state.borrow().instances[instance.0 as usize].version,
            0,
            "a first relay of a started instance"
        );
        if self.sql_runs_alone() {
            return crate::sql_store::apply::publish_first_relay(self, instance);
        }
        if self.shadowed() {
            crate::sql_store::differential::publish_first_relay(self, instance);
        }
        self.publish_from_outbox(instance, 0, ResumePath::Relay);
    }

    /// Publishes the relay a transaction wrote to the outbox.
    pub(crate) fn publish_from_outbox(&self, instance: InstanceId, expects: u64, path: ResumePath) {
        let relay = Relay { message: self.broker.new_message(), instance, expects, path };
        self.tracer.emit(ModelEvent::RelayPublished { instance, message: relay.message, step: expects as u32 + 1 });
        self.broker.publish(relay, crate::streams::millis_up_to(crate::streams::BROKER, self.relay_delay_max));
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::future::Future;
    use std::pin::Pin;

    use sutra_sim_core::{simulate, RunConfig};

    use super::*;
    use crate::ctx::{Config, Context};
    use crate::ids::ResumePath;
    use crate::scenario::Scenario;

    const P1: ProcessId = ProcessId(1);
    const P2: ProcessId = ProcessId(2);

    type Body = Box<dyn FnOnce(Store) -> Pin<Box<dyn Future<Output = ()>>>>;

    /// Runs `body` against a store of one relay-driven instance (claim timeout 30s, latency
    /// at most 4ms, no faults) and returns the store's events.
    fn with_store(body: Body) -> Vec<ModelEvent> {
        let mut scenario = Scenario::built_in("quiet").unwrap();
        scenario.faults = Default::default();
        let trace = Rc::new(RefCell::new(Vec::new()));
        let seen = trace.clone();
        let mut config = RunConfig::seeded(0);
        config.keep_trace = true;
        let out = simulate(&config, Vec::new(), move |tracer: &Tracer<ModelEvent>| {
            let config = Rc::new(Config { faults: scenario.faults.clone(), scenario: scenario.clone() });
            let ctx = Rc::new(Context::new(config, None, tracer.clone()));
            let broker = Broker::new(tracer.clone(), 8, crate::faults::broker::BrokerFaults::new(ctx.clone()));
            let store = Store::new(
                tracer.clone(),
                broker,
                StoreFaults::new(ctx),
                Duration::ZERO,
                Duration::from_millis(4),
                Duration::from_secs(30),
            );
            store.create_instance(vec![Trigger::Relay, Trigger::Relay]);
            executor::spawn("test", body(store));
        });
        // An assertion failing inside the simulated task ends the run as a crash.
        assert!(out.verdict.is_pass(), "{}", out.verdict);
        seen.borrow_mut().extend(out.trace.into_iter().map(|e| e.kind));
        let events = trace.borrow().clone();
        events
    }

    #[test]
    fn a_request_on_the_wire_lands_while_its_sender_is_frozen() {
        // The boundary is struck (a reply-loss rate that never fires in this short run):
        // requests travel on the wire. A replica sends a claim (up to 1 s in flight) and is
        // frozen for a minute right after; it lands within the latency, not once it resumes.
        let mut scenario = Scenario::built_in("quiet").unwrap();
        scenario.faults = Default::default();
        scenario.faults.store_replies.reply_lost_per_call = crate::ratio::Ratio::parse("1/1000000000").unwrap();
        let mut config = RunConfig::seeded(0);
        config.keep_trace = true;
        let out = simulate(&config, Vec::new(), move |tracer: &Tracer<ModelEvent>| {
            let config = Rc::new(Config { faults: scenario.faults.clone(), scenario: scenario.clone() });
            let ctx = Rc::new(Context::new(config, None, tracer.clone()));
            let broker = Broker::new(tracer.clone(), 8, crate::faults::broker::BrokerFaults::new(ctx.clone()));
            let faults = StoreFaults::new(ctx);
            let latency = Duration::from_secs(1);
            let store = Store::new(tracer.clone(), broker, faults, Duration::ZERO, latency, Duration::from_secs(30));
            store.create_instance(vec![Trigger::Relay]);
            let node = executor::add_node("replica-0", None);
            executor::spawn_on(node, "lane", async move {
                let (owner, asked) = (OwnerId::lane(P1, 0), ClaimAsked::default());
                let _ =
                    store.claim_over_wire(InstanceId(0), ExecId(1), owner, Some(P1), ResumePath::Relay, asked).await;
            });
            executor::spawn("freezer", async move {
                // The lane sends its request first, and it is in flight a microsecond later.
                sleep(Duration::from_micros(1)).await;
                executor::pause(node);
                sleep(Duration::from_secs(60)).await;
                executor::resume(node);
            });
        });
        assert!(out.verdict.is_pass(), "{}", out.verdict);
        let grants: Vec<SimTime> =
            out.trace.iter().filter(|e| matches!(e.kind, ModelEvent::ClaimGranted { .. })).map(|e| e.time).collect();
        assert_eq!(grants.len(), 1, "one grant");
        let landed = grants[0];
        assert!(landed > SimTime::ZERO, "the claim was not in flight when its sender froze");
        assert!(
            landed < SimTime::ZERO.add(Duration::from_secs(2)),
            "the claim landed at {landed:?}, once its sender resumed"
        );
    }

    /// A lane on a replica node sending its claims over the wire (1 s of latency at most,
    /// every reply arriving), on a store whose row 0 is free; `body` runs on the node, and
    /// `world` beside it. Returns the trace with times, and the row's owner at the end.
    fn on_the_wire(
        seed: u64,
        body: impl FnOnce(Store, NodeId) -> Pin<Box<dyn Future<Output = ()>>> + 'static,
        world: impl FnOnce(Store, NodeId, Tracer<ModelEvent>) -> Pin<Box<dyn Future<Output = ()>>> + 'static,
    ) -> (Vec<(SimTime, ModelEvent)>, Option<OwnerId>) {
        let mut scenario = Scenario::built_in("quiet").unwrap();
        scenario.faults = Default::default();
        scenario.faults.store_replies.reply_lost_per_call = crate::ratio::Ratio::parse("1/1000000000").unwrap();
        let mut config = RunConfig::seeded(seed);
        config.keep_trace = true;
        let last_owner = Rc::new(std::cell::Cell::new(None));
        let seen = last_owner.clone();
        let out = simulate(&config, Vec::new(), move |tracer: &Tracer<ModelEvent>| {
            let config = Rc::new(Config { faults: scenario.faults.clone(), scenario: scenario.clone() });
            let ctx = Rc::new(Context::new(config, None, tracer.clone()));
            let broker = Broker::new(tracer.clone(), 8, crate::faults::broker::BrokerFaults::new(ctx.clone()));
            let faults = StoreFaults::new(ctx);
            let latency = Duration::from_secs(1);
            let store = Store::new(tracer.clone(), broker, faults, Duration::ZERO, latency, Duration::from_secs(30));
            store.create_instance(vec![Trigger::Relay]);
            let node = executor::add_node("replica-0", None);
            executor::spawn_on(node, "lane", body(store.clone(), node));
            let at_end = store.clone();
            let world = world(store, node, tracer.clone());
            executor::spawn("world", async move {
                world.await;
                seen.set(at_end.state().borrow().instances[0].owner);
            });
        });
        assert!(out.verdict.is_pass(), "{}", out.verdict);
        (out.trace.into_iter().map(|e| (e.time, e.kind)).collect(), last_owner.get())
    }

    /// Claims `instance` 0 for `exec` under `owner`, numbered `number`, until answered.
    async fn claim_until_answered(store: &Store, exec: u32, owner: OwnerId, number: Option<u64>) -> ClaimResult {
        let asked = ClaimAsked { number, ..ClaimAsked::default() };
        loop {
            let reply = store.claim_over_wire(InstanceId(0), ExecId(exec), owner, Some(P1), ResumePath::Relay, asked);
            if let Reply::Answered(result) = reply.await {
                return result;
            }
        }
    }

    /// A lane's worker sends claim 1 of `owner` and is aborted a microsecond later; the
    /// lane's next worker runs the exit path — claims again (execution 2) and releases.
    /// `numbered`: the lane numbers its claims (the correct client).
    fn aborted_claim_then_exit_path(seed: u64, numbered: bool) -> (Vec<(SimTime, ModelEvent)>, Option<OwnerId>) {
        let owner = OwnerId::lane(P1, 0);
        let lane = move |store: Store, _| -> Pin<Box<dyn Future<Output = ()>>> {
            Box::pin(async move {
                let numbers = crate::claim_fence::ClaimNumbers::of(P1);
                let number = |n: &crate::claim_fence::ClaimNumbers| numbered.then(|| n.next());
                {
                    let first = std::pin::pin!(claim_until_answered(&store, 1, owner, number(&numbers)));
                    let abort = std::pin::pin!(sleep(Duration::from_micros(1)));
                    // The runtime aborts the worker: its claim future is dropped mid-flight.
                    futures::future::select(first, abort).await;
                }
                if let ClaimResult::Granted { epoch } = claim_until_answered(&store, 2, owner, number(&numbers)).await {
                    while store.release_over_wire(InstanceId(0), ExecId(2), Claim { owner, epoch }).await
                        == Reply::TimedOut
                    {}
                }
            })
        };
        on_the_wire(seed, lane, |_, _, _| Box::pin(sleep(Duration::from_secs(10))))
    }

    /// True if the store answered or fenced a claim of execution `exec` (it landed).
    fn landed(trace: &[(SimTime, ModelEvent)], exec: u32) -> bool {
        trace.iter().any(|(_, e)| {
            matches!(e, ModelEvent::ClaimGranted { exec: x, .. } | ModelEvent::ClaimFenced { exec: x, .. }
                if x.0 == exec)
        })
    }

    #[test]
    fn an_aborted_lanes_claim_lands_and_the_fence_refuses_it_after_the_exit_paths_claim() {
        let mut fenced = 0;
        for seed in 0..24 {
            let (trace, owner) = aborted_claim_then_exit_path(seed, true);
            // It lands: a database applies a statement whose client went away.
            assert!(landed(&trace, 1), "seed {seed}: the aborted worker's claim never reached the store");
            assert_eq!(owner, None, "seed {seed}: the row is left claimed after the exit path released");
            let grants = grants(&trace);
            assert_eq!(grants.last(), Some(&2), "seed {seed}: a grant landed over the exit path's claim: {grants:?}");
            fenced += usize::from(
                trace.iter().any(|(_, e)| matches!(e, ModelEvent::ClaimFenced { exec, .. } if exec.0 == 1)),
            );
        }
        assert!(fenced > 0, "in no seed did the aborted claim land after the exit path's");
    }

    /// The executions granted the claim, in order.
    fn grants(trace: &[(SimTime, ModelEvent)]) -> Vec<u32> {
        trace
            .iter()
            .filter_map(|(_, e)| match e {
                ModelEvent::ClaimGranted { exec, .. } => Some(exec.0),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn an_unnumbered_late_claim_is_granted_over_the_exit_paths_claim() {
        // The client of the `claims-not-numbered` mutant: nothing to fence on.
        let over =
            (0..24).filter(|&seed| grants(&aborted_claim_then_exit_path(seed, false).0).last() == Some(&1)).count();
        assert!(over > 0, "the late claim never landed after the exit path's");
    }

    #[test]
    fn a_killed_processs_claim_may_land_for_an_owner_no_later_incarnation_uses() {
        let dead = OwnerId::lane(P1, 0);
        assert_ne!(dead, OwnerId::lane(P2, 0), "a restarted process (a new process id) has owner ids of its own");
        let (mut landed_dead, mut lost) = (0, 0);
        for seed in 0..24 {
            let lane = move |store: Store, _| -> Pin<Box<dyn Future<Output = ()>>> {
                Box::pin(async move {
                    let number = crate::claim_fence::ClaimNumbers::of(P1).next();
                    claim_until_answered(&store, 1, dead, Some(number)).await;
                })
            };
            let world = |store: Store, node, tracer: Tracer<ModelEvent>| -> Pin<Box<dyn Future<Output = ()>>> {
                Box::pin(async move {
                    sleep(Duration::from_micros(1)).await;
                    executor::kill(node);
                    tracer.emit_on(node, ModelEvent::ReplicaCrashed { replica: 0, process: P1 });
                    sleep(Duration::from_secs(2)).await;
                    // The next incarnation's lane: refused while the dead claim is young,
                    // granted as stale once it is older than the claim timeout.
                    let next = OwnerId::lane(P2, 0);
                    let first = store.claim(InstanceId(0), ExecId(2), next, Some(P2), ResumePath::Relay).await;
                    if matches!(first, ClaimResult::Refused { .. }) {
                        sleep(Duration::from_secs(31)).await;
                        let again = store.claim(InstanceId(0), ExecId(3), next, Some(P2), ResumePath::Relay).await;
                        assert!(
                            matches!(again, ClaimResult::Granted { .. }),
                            "the dead owner's claim held past its timeout"
                        );
                    }
                })
            };
            let (trace, owner) = on_the_wire(seed, lane, world);
            let crashed_at = trace.iter().find(|(_, e)| matches!(e, ModelEvent::ReplicaCrashed { .. })).unwrap().0;
            let dead_grant = trace
                .iter()
                .any(|(t, e)| *t > crashed_at && matches!(e, ModelEvent::ClaimGranted { owner, .. } if *owner == dead));
            landed_dead += usize::from(dead_grant);
            lost += usize::from(!landed(&trace, 1));
            assert_eq!(owner, Some(OwnerId::lane(P2, 0)), "seed {seed}: the next incarnation never got the instance");
        }
        assert!(landed_dead > 0, "no killed process's claim landed after its death");
        assert!(lost > 0, "every killed process's claim landed: the connection never died with it");
    }

    #[test]
    fn a_killed_processs_lease_call_on_the_wire_may_land_after_its_death_within_the_latency() {
        // A role's call crosses the same boundary as a lane's: the sweeper's lease request,
        // sent a microsecond before its process is killed, lands when its bytes had left.
        let (mut landed_dead, mut lost) = (0, 0);
        for seed in 0..24 {
            let sweeper = move |store: Store, _| -> Pin<Box<dyn Future<Output = ()>>> {
                Box::pin(async move {
                    let _ = store.acquire_lease(P1, Duration::from_secs(10)).await;
                })
            };
            let world = |_store: Store, node, tracer: Tracer<ModelEvent>| -> Pin<Box<dyn Future<Output = ()>>> {
                Box::pin(async move {
                    sleep(Duration::from_micros(1)).await;
                    executor::kill(node);
                    tracer.emit_on(node, ModelEvent::ReplicaCrashed { replica: 0, process: P1 });
                    sleep(Duration::from_secs(5)).await;
                })
            };
            let (trace, _) = on_the_wire(seed, sweeper, world);
            let crashed_at = trace.iter().find(|(_, e)| matches!(e, ModelEvent::ReplicaCrashed { .. })).unwrap().0;
            let leased =
                trace.iter().find(|(_, e)| matches!(e, ModelEvent::LeaseAcquired { process, .. } if *process == P1));
            match leased {
                Some((at, _)) => {
                    assert!(*at > crashed_at, "seed {seed}: the lease landed before the death, not on the wire");
                    assert!(*at <= crashed_at.add(Duration::from_secs(1)), "seed {seed}: landed past the latency");
                    landed_dead += 1;
                }
                None => lost += 1,
            }
        }
        assert!(landed_dead > 0, "no killed process's lease call landed after its death");
        assert!(lost > 0, "every killed process's lease call landed: the connection never died with it");
    }

    fn claim(store: &Store, owner: OwnerId) -> impl Future<Output = ClaimResult> + '_ {
        store.claim(InstanceId(0), ExecId(1), owner, None, ResumePath::Relay)
    }

    #[test]
    fn a_rechecking_clear_leaves_alone_a_claim_re_granted_after_the_select() {
        let events = with_store(Box::new(|store| {
            Box::pin(async move {
                claim(&store, OwnerId::lane(ProcessId(9), 0)).await;
                sleep(Duration::from_secs(31)).await;
                assert!(store.acquire_lease(P1, Duration::from_secs(15)).await.reliable());
                let stale = store.select_stale(P1, SweepCutoff::StoreAge, None).await.reliable();
                assert_eq!(stale, vec![(InstanceId(0), 1)]);
                // Between the two statements, the stale claim is taken over (epoch 2).
                assert!(matches!(claim(&store, OwnerId::lane(P2, 0)).await, ClaimResult::Granted { epoch: 2 }));
                assert!(!store.clear_stale(P1, InstanceId(0), 1, SweepCutoff::StoreAge, true, true).await.reliable());
                assert_eq!(store.state().borrow().instances[0].owner, Some(OwnerId::lane(P2, 0)));
            })
        }));
        assert!(events.iter().any(|e| matches!(e, ModelEvent::SweepSelected { stale: 1, lease_held: true, .. })));
        assert!(events.iter().any(|e| matches!(e, ModelEvent::SweepClearMissed { epoch: 1, .. })));
        assert!(!events.iter().any(|e| matches!(e, ModelEvent::Swept { .. })));
    }

    #[test]
    fn an_unchecked_clear_clears_the_claim_re_granted_after_the_select() {
        let events = with_store(Box::new(|store| {
            Box::pin(async move {
                claim(&store, OwnerId::lane(ProcessId(9), 0)).await;
                sleep(Duration::from_secs(31)).await;
                let stale = store.select_stale(P1, SweepCutoff::StoreAge, None).await.reliable();
                claim(&store, OwnerId::lane(P2, 0)).await;
                assert!(store
                    .clear_stale(P1, InstanceId(0), stale[0].1, SweepCutoff::StoreAge, true, false)
                    .await
                    .reliable());
                assert_eq!(store.state().borrow().instances[0].owner, None);
            })
        }));
        // The store reports the truth: the claim it cleared is the young one, of epoch 2.
        let swept = events.iter().find(|e| matches!(e, ModelEvent::Swept { .. })).expect("a sweep");
        assert!(
            matches!(swept, ModelEvent::Swept { epoch: 2, lease_held: false, age_ns, .. } if *age_ns < 30_000_000_000),
            "{swept:?}"
        );
    }

    #[test]
    fn a_rechecking_clear_matches_nothing_once_the_lease_lapsed() {
        let events = with_store(Box::new(|store| {
            Box::pin(async move {
                claim(&store, OwnerId::lane(ProcessId(9), 0)).await;
                sleep(Duration::from_secs(31)).await;
                assert!(store.acquire_lease(P1, Duration::from_secs(15)).await.reliable());
                let stale = store.select_stale(P1, SweepCutoff::StoreAge, None).await.reliable();
                sleep(Duration::from_secs(16)).await;
                assert!(!store
                    .clear_stale(P1, InstanceId(0), stale[0].1, SweepCutoff::StoreAge, true, true)
                    .await
                    .reliable());
                assert!(store.acquire_lease(P1, Duration::from_secs(15)).await.reliable());
                assert!(store
                    .clear_stale(P1, InstanceId(0), stale[0].1, SweepCutoff::StoreAge, true, true)
                    .await
                    .reliable());
            })
        }));
        assert_eq!(events.iter().filter(|e| matches!(e, ModelEvent::Swept { lease_held: true, .. })).count(), 1);
    }

    /// A release's delayed first copy (epoch 1) lands after the release was sent again and
    /// answered, and after the same owner claimed the instance again (epoch 2).
    fn late_release_after_reclaim(retry_copy: u32) -> (Option<OwnerId>, Vec<ModelEvent>) {
        let owner = OwnerId::lane(P1, 0);
        let after = Rc::new(RefCell::new(None));
        let seen = after.clone();
        let events = with_store(Box::new(move |store| {
            Box::pin(async move {
                let first = Claim { owner, epoch: 1 };
                assert!(matches!(claim(&store, owner).await, ClaimResult::Granted { epoch: 1 }));
                let wire = Wire { call: StoreCall::Release, instance: InstanceId(0), exec: ExecId(1) };
                let delayed = ReleaseCall { instance: InstanceId(0), exec: ExecId(1), claim: first, copy: 0 };
                store.land_late(wire, delayed, 0, Duration::from_secs(5));
                let retry = ReleaseCall { instance: InstanceId(0), exec: ExecId(1), claim: first, copy: retry_copy };
                assert!(store.call(retry).await, "the resent release is answered");
                let again = store.claim(InstanceId(0), ExecId(2), owner, None, ResumePath::Relay).await;
                assert!(matches!(again, ClaimResult::Granted { epoch: 2 }));
                sleep(Duration::from_secs(6)).await;
                *seen.borrow_mut() = Some(store.state().borrow().instances[0].owner);
            })
        }));
        let owner_after = after.borrow().expect("the body ran");
        (owner_after, events)
    }

    #[test]
    fn a_late_copy_of_a_release_already_applied_is_dropped_and_leaves_the_newer_claim() {
        let (owner, events) = late_release_after_reclaim(0);
        assert_eq!(owner, Some(OwnerId::lane(P1, 0)), "the second claim survives the late copy");
        let released = events.iter().filter(|e| matches!(e, ModelEvent::Released { .. })).count();
        assert_eq!(released, 1, "one release applied: {events:?}");
    }

    #[test]
    fn a_late_copy_under_a_key_of_its_own_clears_the_newer_claim_of_the_same_owner() {
        // The owner-keyed ABA, as the careless client (a fresh key per resend) meets it.
        let (owner, events) = late_release_after_reclaim(1);
        assert_eq!(owner, None);
        assert!(events
            .iter()
            .any(|e| matches!(e, ModelEvent::Released { epoch: 1, current_epoch: 2, released: true, .. })));
    }
}

//! One execution lane: take work, claim, rehydrate, run the step, commit with release —
//! or release on every other exit (R1, R3–R5, R8–R9, R17, R19).
//!
//! The owner id is lane-scoped and names one process (R11), so "same owner ⇒ same lane ⇒
//! already serialised" holds: this loop runs one execution at a time. Every exit that does
//! not commit releases explicitly, the panic path included (re-raised afterwards, which
//! the lane's supervisor answers by carrying on with the next item).
//!
//! Exits without process death (the `cancel` fault): the runtime may abort a lane's
//! worker task at any await point, or a step may outlive the per-step timeout (a slow
//! step, or a hung one that would never return: [`crate::faults::hung_step`]). A
//! destructor cannot await, so nothing is released "on drop": the lane keeps an explicit
//! record of its execution in flight ([`InFlight`]), and the supervisor hands it to the next
//! worker, whose first act is that execution's awaited exit path — resolve a commit that
//! may have landed, release, hand the trigger back — before it takes new work.
//!
//! A graceful shutdown ([`super::shutdown`]) stops a lane from taking new work; its
//! execution in flight runs on until the drain deadline, and is then cancelled like an
//! aborted one — the next worker runs its awaited exit path.
//!
//! The store is reached over a faulty request/reply boundary (the `store-replies` fault):
//! a call may time out with its outcome unknown. A claim, read or release is simply sent
//! again (a repeated claim is the same owner's re-entrant grant, R10/R21; a repeated release
//! matches only the releaser's own claim). A commit is never assumed failed: the client
//! reads the step history and recognises its own epoch, and only a commit that did not land
//! is sent again — so a step is applied once and never reported failed after it committed.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;
use std::time::Duration;

use sutra_sim_core::executor::{self, sleep};
use sutra_sim_core::sync::{oneshot, Notify, Queue, Sender};
use sutra_sim_core::TaskId;
use tracing::Instrument;

use crate::broker::{Broker, Relay};
use crate::ctx::Context;
use crate::design::{ClaimSpan, OwnerIds};
use crate::event::{Exit, ModelEvent, Reaction, TriggerRef};
use crate::ids::{Code, ExecId, InstanceId, MessageId, OwnerId, ProcessId, ResumePath};
use crate::mutant::Mutant;
use crate::replica::bindings::{Bindings, Ticket};
use crate::routing::Routing;
use crate::spec::RETRY_ATTEMPTS_MAX;
use crate::store::{Claim, ClaimAsked, ClaimResult, CommitSpec, Reply, Store, Trigger};
use crate::streams;

pub use crate::spec::LANE_BACKLOG_MAX;
/// Most in-place claim retries of the careless wait-on-held-claim code, so it cannot spin forever.
const WAIT_RETRIES_MAX: u32 = 1_000;

/// Where a work item came from.
#[derive(Clone, Copy, Debug)]
pub enum Source {
    /// A broker delivery, to be acked or requeued.
    Relay {
        /// The relay.
        relay: Relay,
        /// The delivery tag.
        tag: u32,
        /// The binding table's ticket for this delivery.
        ticket: Ticket,
    },
    /// A timer row, to be consumed by the commit or deferred.
    Timer,
}

/// One unit of work for an execution lane.
#[derive(Clone, Copy, Debug)]
pub struct Work {
    /// The execution this work becomes.
    pub exec: ExecId,
    /// The instance to resume.
    pub instance: InstanceId,
    /// The committed version the step expects.
    pub expects: u64,
    /// The resume path.
    pub path: ResumePath,
    /// Where it came from.
    pub source: Source,
    /// Sent to this lane although the instance's route names another.
    pub misrouted: bool,
}

impl Work {
    /// The broker delivery this work came from, if it came from one.
    pub fn delivery(&self) -> Option<u32> {
        match self.source {
            Source::Relay { tag, .. } => Some(tag),
            Source::Timer => None,
        }
    }
}

/// The messages waiting in a process's lane queues (dispatched, not yet taken by their
/// lane): kept only by the careless consumer of the `queued-copy-acked` mutant, which
/// acks any other delivery of one of them unseen.
pub type InHand = Rc<RefCell<BTreeSet<MessageId>>>;

/// An execution lane's inbox, and the handle by which the runtime aborts its worker.
#[derive(Clone, Default)]
pub struct LaneInbox {
    /// Waiting work, oldest first.
    pub queue: Queue<Work>,
    /// Notified whenever the lane takes an item (room for backpressured senders).
    pub space: Notify,
    /// The execution in flight on the lane, if any: what its exit path needs.
    pub in_flight: Rc<RefCell<Option<InFlight>>>,
    /// The current worker task and the switch that aborts it.
    worker: Rc<RefCell<Option<Worker>>>,
}

/// A lane's running worker task and the switch that aborts it.
type Worker = (TaskId, Sender<()>);

/// The lane's record of its execution in flight — the explicit state an awaited exit path
/// runs from, since a dropped future's destructor cannot await. Updated only between
/// awaits, so an abort at any await point finds it consistent.
#[derive(Clone, Copy, Debug)]
pub struct InFlight {
    /// The work item.
    pub work: Work,
    /// A claim request was sent: the store may have granted it though no answer arrived.
    pub claiming: bool,
    /// The claim the execution holds, once granted.
    pub claim: Option<Claim>,
    /// The claim was refused (the trigger's deferral counts it).
    pub refused: bool,
    /// A commit was sent and not yet answered: the request itself, so that an exit path
    /// can send it again as the same request and hear its definite outcome.
    pub committing: Option<SentCommit>,
    /// The trigger was acked, requeued or deferred: nothing left to hand back.
    pub settled: bool,
    /// A claim an exit path took again under an execution of its own (see
    /// [`ExecutionLane::cancelled_exit`]): a later exit path, if that one is aborted too,
    /// releases it under the same execution — the same request as any copy still in flight.
    pub exit_claim: Option<(ExecId, Claim)>,
}

/// A commit request as sent: what sending it again as the same request needs.
#[derive(Clone, Copy, Debug)]
pub struct SentCommit {
    /// How it is conditioned, and the version it is based on.
    pub spec: CommitSpec,
    /// The delay of the next timer row it writes.
    pub timer_delay: Duration,
}

impl LaneInbox {
    /// Aborts the lane's worker task if it has an execution in flight; returns the aborted
    /// task. The execution's exit path runs in the lane's next worker.
    pub fn abort(&self) -> Option<TaskId> {
        if self.in_flight.borrow().is_none() {
            return None;
        }
        let (task, abort) = self.worker.borrow_mut().take()?;
        abort.send(());
        Some(task)
    }

    fn update(&self, change: impl FnOnce(&mut InFlight)) {
        if let Some(f) = self.in_flight.borrow_mut().as_mut() {
            change(f);
        }
    }
}

impl LaneInbox {
    /// Waits until the lane has room, then queues `work`. Once the lane's process is
    /// shutting down nothing is started from the queue and all of it is handed back, so a
    /// sender no longer waits for room (it would wait for a lane that takes nothing).
    pub async fn send(&self, work: Work, shutdown: &super::shutdown::Shutdown) {
        while self.queue.len() >= LANE_BACKLOG_MAX && !shutdown.requested() {
            self.space.notified().await;
        }
        self.queue.push(work);
    }
}

/// What an execution lane needs.
pub struct ExecutionLane {
    /// The run's context.
    pub ctx: Rc<Context>,
    /// The store.
    pub store: Store,
    /// The broker (acks and requeues).
    pub broker: Broker,
    /// Instance-hash routing (the routing-as-mutex mutant trusts it).
    pub routing: Rc<Routing>,
    /// The process the lane belongs to.
    pub process: ProcessId,
    /// The replica identity the process runs as (its stable name, under
    /// `[design] owner-ids = "stable-name"`).
    pub replica: u32,
    /// The lane index.
    pub lane: u16,
    /// The replica's binding table.
    pub bindings: Bindings,
    /// The inbox.
    pub inbox: LaneInbox,
    /// The numbering of the lane's claims, which the store fences on
    /// ([`crate::claim_fence`]): shared by the lane's successive workers.
    pub claims: crate::claim_fence::ClaimNumbers,
    /// The messages queued for the process's lanes (the `queued-copy-acked` mutant's).
    pub in_hand: InHand,
    /// The process's shutdown switch: once requested, the lane takes no new work.
    pub shutdown: Rc<super::shutdown::Shutdown>,
}

impl ExecutionLane {
    /// The lane's supervisor: runs one worker task at a time, forever (until the process
    /// dies). A worker runs executions one at a time until the runtime aborts it; the next
    /// worker first finishes the aborted execution's exit path. Only the supervisor's
    /// waiting for the old worker to end before it starts the next keeps "same owner ⇒ same
    /// lane ⇒ already serialised" (R11, R20) true across an abort.
    pub async fn run(self) {
        let lane = Rc::new(self);
        if !lane.ctx.faults().cancel.aborts_workers() {
            // Nothing aborts workers in this seed: the lane's task is its only worker, and
            // pays nothing for the supervision it does not need.
            return lane.work().await;
        }
        let node = executor::current_node();
        loop {
            let (abort, aborted) = oneshot::<()>();
            let (ended, worker_ended) = oneshot::<()>();
            let worker = lane.clone();
            let task = executor::spawn_daemon_on(node, format!("lane-{}", lane.lane), async move {
                // The abort is polled first: an aborted worker takes no further step.
                let work = std::pin::pin!(worker.work());
                futures::future::select(aborted, work).await;
                ended.send(());
            });
            *lane.inbox.worker.borrow_mut() = Some((task, abort));
            let _ = worker_ended.await;
        }
    }

    /// A worker: first the exit path of an execution a previous worker left in flight,
    /// then one execution at a time.
    async fn work(self: Rc<Self>) {
        let left = *self.inbox.in_flight.borrow();
        if let Some(in_flight) = left {
            self.cancelled_exit(in_flight).await;
        }
        loop {
            // A process shutting down takes no new work: its handler hands the queue back.
            let Some(work) = self.shutdown.unless_requested(self.inbox.queue.pop()).await else {
                return futures::future::pending().await;
            };
            self.inbox.space.notify();
            if let Source::Relay { relay, .. } = work.source {
                if self.ctx.mutant_is(Mutant::QueuedCopyAcked) {
                    self.in_hand.borrow_mut().remove(&relay.message);
                }
            }
            *self.inbox.in_flight.borrow_mut() = Some(InFlight {
                work,
                claiming: false,
                claim: None,
                refused: false,
                committing: None,
                settled: false,
                exit_claim: None,
            });
            if tracing::level_enabled!(tracing::Level::DEBUG) {
                // A span per execution: its log records name the lane, execution and instance.
                let span = tracing::debug_span!(
                    target: "sutra_sim_model::replica",
                    "execution",
                    lane = self.lane,
                    exec = work.exec.0,
                    instance = work.instance.0
                );
                self.execute(work).instrument(span).await;
            } else {
                self.execute(work).await;
            }
        }
    }

    /// The awaited exit path of an execution whose worker was aborted: a commit it may have
    /// landed is resolved from the step history; otherwise whatever claim it may hold is
    /// released and its trigger handed back. The careless `no-release-on-cancel` lane has
    /// no such record to run from: the dropped future is simply gone.
    async fn cancelled_exit(&self, f: InFlight) {
        let work = f.work;
        if self.ctx.mutant_is(Mutant::NoReleaseOnCancel) {
            *self.inbox.in_flight.borrow_mut() = None;
            self.shutdown.note_change();
            return;
        }
        let (mut exec, mut claim, mut refused) = (work.exec, f.claim, f.refused);
        if let Some((taken_by, taken)) = f.exit_claim {
            // An earlier exit path took the claim again and was aborted in turn: its release
            // may be in flight, so it is sent again as that same request.
            (exec, claim) = (taken_by, Some(taken));
        } else if claim.is_none() && f.claiming {
            // A grant may have been written though its answer never arrived: claim again —
            // the same owner's re-claim is granted re-entrantly (R10, R21) — and release
            // that. A new execution asks: the aborted one never heard an answer to give up on.
            exec = self.ctx.new_exec();
            let again = Work { exec, ..work };
            self.ctx.emit(ModelEvent::ClaimAttempt {
                instance: work.instance,
                exec,
                owner: self.owner(),
                path: work.path,
            });
            match self.claim(&again, self.owner(), None).await {
                ClaimResult::Granted { epoch } => {
                    let taken = Claim { owner: self.owner(), epoch };
                    claim = Some(taken);
                    self.inbox.update(|f| f.exit_claim = Some((exec, taken)));
                }
                ClaimResult::Refused { .. } => {
                    // A bounce like any other: the R13 meter counts every refusal a lane hears.
                    self.count_bounce(work.path);
                    refused = true;
                }
            }
        }
        // A commit sent and never answered may still be in flight: reading the step history
        // cannot rule out a copy landing after the read. Sent again as the same request, it
        // is applied once — now, or already — and its answer is the definite outcome.
        let committed = match (f.committing, claim) {
            (Some(sent), Some(claim)) => self.commit_again(work.instance, exec, claim, sent).await,
            _ => false,
        };
        if let Some(claim) = claim.filter(|_| !committed) {
            self.release(work.instance, exec, claim).await;
        }
        if !f.settled {
            self.inbox.update(|f| f.settled = true);
            if committed {
                self.consume(&work);
            } else {
                self.retry_later(&work, refused).await;
            }
        }
        self.end(&work, if committed { Exit::Committed } else { Exit::Cancelled }).await;
    }

    /// Sends a commit again as the same request until answered; true if it was accepted.
    async fn commit_again(&self, instance: InstanceId, exec: ExecId, claim: Claim, sent: SentCommit) -> bool {
        for _ in 0..RETRY_ATTEMPTS_MAX {
            let reply = self.store.commit_over_wire(instance, exec, claim, sent.spec, sent.timer_delay).await;
            if let Reply::Answered(outcome) = reply {
                return outcome.is_ok();
            }
        }
        panic!("{RETRY_ATTEMPTS_MAX} commits in a row went unanswered");
    }

    /// True if the step based on `based_on` was committed under `claim`'s epoch, from the
    /// step history (read again until an answer arrives).
    async fn committed(&self, instance: InstanceId, exec: ExecId, claim: Claim, based_on: u64) -> bool {
        for _ in 0..RETRY_ATTEMPTS_MAX {
            if let Reply::Answered(epoch) = self.store.committed_under(instance, exec, claim, based_on).await {
                return epoch == Some(claim.epoch);
            }
        }
        panic!("{RETRY_ATTEMPTS_MAX} reads of the step history in a row went unanswered");
    }

    /// The lane's owner id: per process incarnation and lane (R11), unless the mutant
    /// drops the lane or the design uses the replica's stable name.
    fn owner(&self) -> OwnerId {
        if self.ctx.mutant_is(Mutant::PerProcessOwner) {
            return OwnerId::process(self.process);
        }
        match self.ctx.scenario().design.owner_ids {
            OwnerIds::PerIncarnation => OwnerId::lane(self.process, self.lane),
            OwnerIds::StableName => OwnerId::stable(self.replica, self.lane),
        }
    }

    async fn execute(&self, work: Work) {
        let w = self;
        let (instance, exec, path) = (work.instance, work.exec, work.path);
        let owner = self.owner();
        if w.ctx.mutant_is(Mutant::AckBeforeCommit) {
            if let Source::Relay { tag, .. } = work.source {
                w.broker.ack(tag);
            }
        }
        // The careless shortcut: "the hash routed it here, so it is ours".
        let trust_routing = w.ctx.mutant_is(Mutant::RoutingAsMutex) && self.lane == w.routing.home_lane(instance);
        // Epoch 0 names no grant: what code that skipped the claim acts under.
        let mut claim = Claim { owner, epoch: 0 };
        if !trust_routing {
            w.ctx.emit(ModelEvent::ClaimAttempt { instance, exec, owner, path });
            let mut retries = 0;
            loop {
                // The careless client sends its own clock for the store to judge staleness by.
                let client_now = w.ctx.mutant_is(Mutant::ClientClockStaleness).then(executor::local_now);
                self.inbox.update(|f| f.claiming = true);
                match self.claim(&work, owner, client_now).await {
                    ClaimResult::Granted { epoch } => {
                        claim.epoch = epoch;
                        self.inbox.update(|f| f.claim = Some(claim));
                        break;
                    }
                    ClaimResult::Refused { .. }
                        if w.ctx.mutant_is(Mutant::WaitOnHeldClaim) && retries < WAIT_RETRIES_MAX =>
                    {
                        retries += 1;
                        sleep(Duration::from_millis(100)).await;
                        w.ctx.emit(ModelEvent::ClaimAttempt { instance, exec, owner, path });
                    }
                    ClaimResult::Refused { .. } => {
                        self.count_bounce(path);
                        self.inbox.update(|f| {
                            f.claiming = false;
                            f.refused = true;
                            f.settled = true;
                        });
                        let reaction = self.retry_later(&work, true).await;
                        w.ctx.emit(ModelEvent::Refusal { instance, exec, path, code: Code::ResumeClaimHeld, reaction });
                        self.end(&work, Exit::Refused).await;
                        return;
                    }
                }
            }
        }
        let (version, completed) = self.read(instance, exec, claim).await;
        w.ctx.emit(ModelEvent::Rehydrated { instance, exec, version });
        // The duplicate guard (R25): a trigger drives only the step it was issued for. The
        // careless lane runs the current step for any trigger of an unfinished instance.
        let stale_trigger = version != work.expects && !w.ctx.mutant_is(Mutant::DuplicateAdvancesStep);
        if stale_trigger || completed {
            // Already applied (a duplicate, or a step someone else finished): release and drop.
            self.release(instance, exec, claim).await;
            self.inbox.update(|f| f.settled = true);
            self.consume(&work);
            self.end(&work, Exit::Duplicate).await;
            return;
        }
        let (duration, slow) = crate::faults::slow_step::step_duration(&w.ctx);
        w.ctx.emit(ModelEvent::StepStarted { instance, exec, step: version as u32 + 1, slow });
        // A hung step never returns: only the per-step timeout ends it (the gate draws a
        // hang only where one is in force).
        let hung = crate::faults::hung_step::hangs(&w.ctx);
        let step_timeout = w.ctx.faults().cancel.step_timeout;
        if hung || (!step_timeout.is_zero() && duration > step_timeout) {
            // The per-step timeout cancels the step at its await point; the process lives,
            // so the exit path releases, awaited, like every other exit that does not commit.
            self.work_for(step_timeout, &work, &mut claim).await;
            w.ctx.report(crate::faults::FaultKind::Cancel, None, step_timeout);
            self.release(instance, exec, claim).await;
            self.inbox.update(|f| f.settled = true);
            self.retry_later(&work, false).await;
            self.end(&work, Exit::Cancelled).await;
            return;
        }
        // The step's work takes simulated time; the node's clock does not speed it up.
        self.work_for(duration, &work, &mut claim).await;
        let error = self.draw_step_error();
        w.ctx.emit(ModelEvent::StepEnded { instance, exec, error });
        match error {
            Some(code) => {
                let skip_release = match code {
                    Code::StepPanic => w.ctx.mutant_is(Mutant::NoReleaseOnPanic),
                    _ => w.ctx.mutant_is(Mutant::NoReleaseOnError),
                };
                if !skip_release {
                    self.release(instance, exec, claim).await;
                }
                self.inbox.update(|f| f.settled = true);
                self.retry_later(&work, false).await;
                let exit = match code {
                    Code::StepValidation => Exit::ValidationError,
                    Code::StepPanic => Exit::Panic,
                    _ => Exit::UnexpectedFailure,
                };
                self.end(&work, exit).await;
            }
            None => self.commit(&work, claim, version).await,
        }
    }

    async fn commit(&self, work: &Work, claim: Claim, version: u64) {
        let owner = claim.owner;
        let w = self;
        let (instance, exec) = (work.instance, work.exec);
        let next = w.store.state().borrow().instances[instance.0 as usize].plan.get(version as usize + 1).copied();
        let trigger = match work.source {
            Source::Relay { relay, .. } => TriggerRef::Message(relay.message),
            Source::Timer => TriggerRef::TimerRow { expects: work.expects },
        };
        let mut spec = CommitSpec { based_on: version, conditional: true, release: true, trigger };
        if w.ctx.mutant_is(Mutant::ReleaseBeforeCommit) {
            // "Release first, then write": the write can no longer be conditional on owning.
            self.release(instance, exec, claim).await;
            spec = CommitSpec { conditional: false, release: false, ..spec };
        } else if w.ctx.mutant_is(Mutant::ReleaseAfterCommit) {
            spec.release = false;
        } else if w.ctx.mutant_is(Mutant::UnconditionalCommit) {
            spec.conditional = false;
        }
        // The heartbeat design: the claim spans the parked pull task, kept alive by renewals.
        let hold_across_park =
            next == Some(Trigger::Pull) && w.ctx.scenario().design.claim_span == ClaimSpan::HeartbeatAcrossPark;
        if hold_across_park {
            spec.release = false;
        }
        let timer_delay = streams::millis_up_to(streams::WORKLOAD, w.ctx.scenario().workload.timer_delay_max);
        self.inbox.update(|f| f.committing = Some(SentCommit { spec, timer_delay }));
        let outcome = loop {
            match w.store.commit_over_wire(instance, exec, claim, spec, timer_delay).await {
                Reply::Answered(outcome) => break outcome.map(|_| ()).map_err(|_| ()),
                // "No answer" is not "failed": the careless lane reports the step failed,
                // releasing and handing its trigger back, though the commit may have landed.
                Reply::TimedOut if w.ctx.mutant_is(Mutant::AmbiguousCommitAsFailure) => {
                    self.release(instance, exec, claim).await;
                    self.inbox.update(|f| f.settled = true);
                    self.retry_later(work, false).await;
                    self.end(work, Exit::UnexpectedFailure).await;
                    return;
                }
                // Ambiguous: the step history says whether it landed under our epoch. If
                // not, nothing was applied, and the commit — conditional on still owning
                // the row — is sent again.
                Reply::TimedOut => {
                    if self.committed(instance, exec, claim, version).await {
                        break Ok(());
                    }
                }
            }
        };
        self.inbox.update(|f| {
            f.committing = None;
            f.claim = None;
            f.claiming = false;
        });
        match outcome {
            Ok(()) => {
                if w.ctx.mutant_is(Mutant::ReleaseAfterCommit) {
                    self.release(instance, exec, claim).await;
                }
                if w.ctx.mutant_is(Mutant::ParkedKeepsClaim) && next == Some(Trigger::Pull) {
                    // "Hold the instance for the worker": claimed again right after parking.
                    w.store.claim(instance, exec, owner, Some(self.process), work.path).await;
                }
                if hold_across_park {
                    self.spawn_heartbeat(instance, exec, owner, work.path);
                }
                self.inbox.update(|f| f.settled = true);
                self.consume(work);
                self.end(work, Exit::Committed).await;
            }
            Err(()) => {
                // R19: our claim was swept or taken as stale, so this write is void. The
                // step may or may not have been done by someone else: hand the trigger
                // back; a redelivery finds out (and drops it as a duplicate if done).
                self.inbox.update(|f| f.settled = true);
                self.retry_later(work, false).await;
                self.end(work, Exit::LostClaim).await;
            }
        }
    }

    /// The heartbeat of a claim held across a parked pull task (`[design] claim-span =
    /// "heartbeat-across-park"`, the design spec 000 "Heartbeats: deliberately not wired"
    /// argues against): a task of the process renews the claim by a same-owner re-claim
    /// every third of the claim timeout, while the row is still parked and still ours. It
    /// dies with the process; the completion's execution releases with its commit.
    fn spawn_heartbeat(&self, instance: InstanceId, exec: ExecId, owner: OwnerId, path: ResumePath) {
        let (store, process) = (self.store.clone(), self.process);
        let every = self.ctx.scenario().timeouts.claim_timeout / 3;
        executor::spawn("heartbeat", async move {
            loop {
                sleep(every).await;
                let still_ours = {
                    let state = store.state();
                    let s = state.borrow();
                    let row = &s.instances[instance.0 as usize];
                    row.parked && row.owner == Some(owner)
                };
                if !still_ours {
                    return;
                }
                store.claim(instance, exec, owner, Some(process), path).await;
            }
        });
    }

    /// The step's work, for `span` of simulated time. Under the mid-step heartbeat design
    /// (`[design] claim-span = "heartbeat-mid-step"`, the design spec 000 "Heartbeats:
    /// deliberately not wired" argues against) the execution renews its claim meanwhile,
    /// so `claim` ends up naming the epoch of the last renewal.
    async fn work_for(&self, span: Duration, work: &Work, claim: &mut Claim) {
        if self.ctx.scenario().design.claim_span != ClaimSpan::HeartbeatMidStep {
            executor::elapse(span).await;
            return;
        }
        let renewed = std::cell::Cell::new(*claim);
        {
            let step = std::pin::pin!(executor::elapse(span));
            let beat = std::pin::pin!(self.beat_while_the_step_runs(work, &renewed));
            futures::future::select(step, beat).await;
        }
        *claim = renewed.get();
    }

    /// The mid-step heartbeat: every third of the claim timeout, a same-owner re-claim that
    /// renews the claim's age (R21) — while the row is still ours; once it is not, the
    /// heartbeat stops and the step runs on. It ends with the step (or its cancellation).
    async fn beat_while_the_step_runs(&self, work: &Work, renewed: &std::cell::Cell<Claim>) {
        let every = self.ctx.scenario().timeouts.claim_timeout / 3;
        loop {
            sleep(every).await;
            let owner = renewed.get().owner;
            let still_ours = self.store.state().borrow().instances[work.instance.0 as usize].owner == Some(owner);
            if !still_ours {
                return futures::future::pending().await;
            }
            let result = self.store.claim(work.instance, work.exec, owner, Some(self.process), work.path).await;
            if let ClaimResult::Granted { epoch } = result {
                let claim = Claim { owner, epoch };
                renewed.set(claim);
                self.inbox.update(|f| f.claim = Some(claim));
            }
        }
    }

    /// Claims over the faulty boundary: an unanswered claim is sent again — if the first
    /// was granted, the repeat is the same owner's re-entrant grant (R10, R21), not
    /// contention.
    ///
    /// Each claim sent is numbered ([`crate::claim_fence`]), so the store refuses one that
    /// lands after a newer claim of the lane — an aborted worker's, after its exit path's.
    /// The careless `claims-not-numbered` client sends them bare.
    async fn claim(&self, work: &Work, owner: OwnerId, client_now: Option<sutra_sim_core::SimTime>) -> ClaimResult {
        let (instance, exec, path) = (work.instance, work.exec, work.path);
        // Under stable-name owner ids an owner id spans incarnations, and a counter that
        // fences across them would have to outlive the process: that design's lane (a
        // variant spec 000 argues against) sends its claims bare, as it always did.
        let numbered = !self.ctx.mutant_is(Mutant::ClaimsNotNumbered)
            && self.ctx.scenario().design.owner_ids == OwnerIds::PerIncarnation;
        for _ in 0..RETRY_ATTEMPTS_MAX {
            let number = numbered.then(|| self.claims.next());
            let asked = ClaimAsked { client_now, delivery: work.delivery(), number };
            let reply = self.store.claim_over_wire(instance, exec, owner, Some(self.process), path, asked).await;
            if let Reply::Answered(result) = reply {
                return result;
            }
        }
        panic!("{RETRY_ATTEMPTS_MAX} claims in a row went unanswered");
    }

    /// Reads the row over the faulty boundary (a read is safe to repeat).
    async fn read(&self, instance: InstanceId, exec: ExecId, claim: Claim) -> (u64, bool) {
        for _ in 0..RETRY_ATTEMPTS_MAX {
            if let Reply::Answered(row) = self.store.read_over_wire(instance, exec, claim).await {
                return row;
            }
        }
        panic!("{RETRY_ATTEMPTS_MAX} reads in a row went unanswered");
    }

    fn draw_step_error(&self) -> Option<Code> {
        let wl = &self.ctx.scenario().workload;
        if wl.validation_error.draw(streams::STEPS) {
            Some(Code::StepValidation)
        } else if wl.unexpected_failure.draw(streams::STEPS) {
            Some(Code::StepFailed)
        } else if wl.panic.draw(streams::STEPS) {
            Some(Code::StepPanic)
        } else {
            None
        }
    }

    async fn release(&self, instance: InstanceId, exec: ExecId, claim: Claim) {
        if self.ctx.mutant_is(Mutant::ReleaseInSpawnedTask) {
            // "A guard's drop cannot await": the release goes to a task of its own, and the
            // lane moves on — its next claim of the same instance can land first.
            let store = self.store.clone();
            executor::spawn("release", async move {
                store.release(instance, exec, claim).await;
            });
            return;
        }
        // Over the faulty boundary, sent again until answered: a repeated release matches
        // only while the row still shows our owner id, so it never clears anyone else's —
        // and the store applies one release once, so a late copy never clears our own
        // next claim of the instance either.
        // Every copy is one request to the store (one key): a delayed copy landing after
        // another was applied is a duplicate, and writes nothing. The careless client keys
        // each attempt anew.
        let fresh_keys = self.ctx.mutant_is(Mutant::ReleaseResentAsNewRequest);
        for attempt in 0..RETRY_ATTEMPTS_MAX {
            let copy = if fresh_keys { attempt } else { 0 };
            if let Reply::Answered(_) = self.store.release_copy_over_wire(instance, exec, claim, copy).await {
                self.inbox.update(|f| {
                    f.claim = None;
                    f.claiming = false;
                });
                return;
            }
        }
        panic!("{RETRY_ATTEMPTS_MAX} releases in a row went unanswered");
    }

    /// The trigger is done with: ack the relay (a timer row was consumed by the commit).
    fn consume(&self, work: &Work) {
        if let Source::Relay { tag, .. } = work.source {
            self.broker.ack(tag);
        }
    }

    /// Counts a refusal the lane heard on the R13 meter. The careless meter of the
    /// `meter-counts-give-backs` mutant counts where triggers are handed back instead.
    fn count_bounce(&self, path: ResumePath) {
        if !self.ctx.mutant_is(Mutant::MeterCountsGiveBacks) {
            self.ctx.count_bounce(path);
        }
    }

    /// Gives the trigger back for a later attempt (see [`give_back`]).
    async fn retry_later(&self, work: &Work, refused: bool) -> Reaction {
        give_back(&self.ctx, &self.store, &self.broker, work, refused).await
    }

    async fn end(&self, work: &Work, exit: Exit) {
        *self.inbox.in_flight.borrow_mut() = None;
        self.shutdown.note_change();
        if let Source::Relay { tag, .. } = work.source {
            // A dead binding lane (the process is going away) has nothing left to forget.
            let _ = self.bindings.finish(tag).await;
        }
        self.ctx.emit(ModelEvent::ExecutionEnded { instance: work.instance, exec: work.exec, exit });
    }
}

/// Gives a trigger back for a later attempt: requeue a relay (R4), defer a timer with
/// capped exponential backoff and jitter (R5). `refused` counts towards the backoff. A lane
/// does it on every exit that does not consume the trigger; a process shutting down does it
/// for work queued and not started.
pub async fn give_back(ctx: &Context, store: &Store, broker: &Broker, work: &Work, refused: bool) -> Reaction {
    if ctx.mutant_is(Mutant::MeterCountsGiveBacks) {
        // "A bounce is a trigger handed back": failed, cancelled and handed-back work counts too.
        ctx.count_bounce(work.path);
    }
    match work.source {
        Source::Relay { relay, tag, .. } if refused && ctx.mutant_is(Mutant::RefusedRelayRepublished) => {
            // "Try again right away": the refused relay is acked and published anew,
            // to be delivered at once and claimed again — a busy loop against the holder.
            broker.ack(tag);
            broker.publish(relay, Duration::ZERO);
            Reaction::Requeued
        }
        Source::Relay { tag, .. } if refused && ctx.mutant_is(Mutant::RefusalSleepsBeforeRequeue) => {
            // "Back off before handing it back": the lane sleeps, holding the delivery.
            sleep(ctx.scenario().timeouts.timer_backoff_base).await;
            broker.requeue(tag, ctx.scenario().timeouts.requeue_delay);
            Reaction::Requeued
        }
        Source::Relay { tag, .. } if refused => {
            let careless = ctx.mutant_is(Mutant::ClaimHeldDeadLettered);
            match super::error_mapping::disposition(Code::ResumeClaimHeld, careless) {
                super::error_mapping::Disposition::Requeue => {
                    broker.requeue(tag, ctx.scenario().timeouts.requeue_delay);
                }
                super::error_mapping::Disposition::DeadLetter => broker.dead_letter(tag, Code::ResumeClaimHeld),
            }
            Reaction::Requeued
        }
        Source::Relay { tag, .. } => {
            broker.requeue(tag, ctx.scenario().timeouts.requeue_delay);
            Reaction::Requeued
        }
        Source::Timer => defer_fire(ctx, store, work, refused).await,
    }
}

/// Gives a timer fire back: defers its row with capped exponential backoff and jitter, so
/// a poller fires it again later. `refused` counts towards the backoff.
pub async fn defer_fire(ctx: &Context, store: &Store, work: &Work, refused: bool) -> Reaction {
    let t = &ctx.scenario().timeouts;
    let (base, max) = (t.timer_backoff_base, t.timer_backoff_max);
    let no_backoff = ctx.mutant_is(Mutant::TimerDeferNoBackoff);
    // The count is the row's, inside the store's deferring transaction: a
    // count read beforehand can be stale when two fires of one row race.
    let deferred = store
        .defer_timer(work.instance, work.expects, refused, move |attempt| {
            if no_backoff {
                Duration::ZERO
            } else {
                backoff(base, max, attempt.max(1)) + streams::millis_up_to(streams::TIMERS, base)
            }
        })
        .await;
    // A deferral whose reply was lost may or may not have moved the row: either way the row
    // fires again — at its deferred time, or when the fire lease of its pick runs out.
    let (attempt, delay) = match deferred {
        Reply::Answered(Some(answer)) => answer,
        Reply::Answered(None) | Reply::TimedOut => (0, Duration::ZERO),
    };
    Reaction::Deferred { attempt, backoff_ns: sutra_sim_core::time::duration_nanos(delay) }
}

/// Capped exponential backoff: `base * 2^(attempt-1)`, at most `max`. Doubled step by
/// step up to the cap (a few dozen steps at most, from 1 ns to a day): a factor capped at
/// 2^30 stopped a 1 ns base at about 1 s, below a larger cap.
fn backoff(base: Duration, max: Duration, attempt: u32) -> Duration {
    let mut delay = base.min(max);
    for _ in 1..attempt {
        if delay >= max {
            break;
        }
        delay = delay.saturating_mul(2).min(max);
    }
    delay
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timer_backoff_keeps_doubling_up_to_its_cap_from_a_tiny_base() {
        let (base, cap) = (Duration::from_nanos(1), Duration::from_secs(5));
        assert_eq!(backoff(base, cap, 1), base);
        assert_eq!(backoff(base, cap, 32), Duration::from_nanos(1 << 31));
        assert_eq!(backoff(base, cap, 40), cap);
        assert_eq!(backoff(Duration::from_millis(100), cap, u32::MAX), cap);
    }
}

//! Administrative migration: at random times an operator asks a replica's admin API to move
//! an instance to another lane. The migration claims under a distinct owner that no lane can
//! produce (R15); a refusal answers 409 `SUTRA.ADMIN.MIGRATE.CLAIM_HELD` having read and
//! written nothing (R6); a granted one rewrites the replica's binding table and releases
//! with its write.
//!
//! The admin path is judged like a lane (issue #23): each request runs in a handler task of
//! the replica process that serves it, the store's grant names that process, and the
//! process's server witnesses the handler's end (`AdminRequestEnded`) — so `exits-release`
//! and `live-leak` see a migration that returns holding its claim. It has the exits real
//! handlers have, each of which releases (R9): a validation error (the instance already
//! completed), an unexpected failure, a lost claim, and a client that hangs up — the
//! server then drops the handler's future at its await point, and, since a destructor
//! cannot await, an explicit exit path runs from the handler's record of what it holds.
//! Its store calls cross the same faulty request/reply boundary as a lane's: a call that
//! gets no answer is sent again (a repeated claim is the same owner's re-entrant grant, a
//! repeated release or migration write matches only the migration's own claim). A graceful
//! shutdown waits for the requests in flight, as a server drains its connections.
//!
//! The operator and its admin client ([`crate::admin_client`]) send the requests and act on
//! each answer's structured code (R7). The server witnesses every request it
//! receives (`AdminRequestReceived`: client, request id, attempt) and the answer it gives
//! (`AdminRequestEnded`: status and code): `codes-acted-on` judges the client from those.

use std::cell::RefCell;
use std::rc::Rc;

use sutra_sim_core::executor;
use sutra_sim_core::sync::{oneshot, Receiver};
use sutra_sim_core::{NodeId, NodeStatus};

use crate::event::{AdminStatus, Exit, ModelEvent, Reaction};
use crate::ids::{Code, ExecId, InstanceId, OwnerId, ResumePath};
use crate::mutant::Mutant;
use crate::replica::ReplicaSurface;
use crate::spec::RETRY_ATTEMPTS_MAX;
use crate::store::{Claim, ClaimAsked, ClaimResult, Reply};
use crate::streams;
use crate::world::World;

/// One granted request in this many fails unexpectedly after its read (a 500).
const UNEXPECTED_FAILURE_ONE_IN: u32 = 16;

/// A migration request as the client sends it: the same on every attempt.
#[derive(Clone, Copy, Debug)]
pub struct Order {
    /// The client sending it.
    pub client: u32,
    /// Its request id: the same on every attempt.
    pub request: u32,
    /// The instance to migrate.
    pub instance: InstanceId,
    /// The lane to move it to.
    pub to_lane: u16,
}

/// A replica process's admin server, as a client finds it.
#[derive(Clone)]
pub struct Server {
    node: NodeId,
    surface: Rc<ReplicaSurface>,
}

/// What the server answered: the status and the structured code (R7) of its response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The response's status.
    pub status: AdminStatus,
    /// Its structured code, if it carries one.
    pub code: Option<Code>,
}

impl Answer {
    /// The answer the handler's outcome makes: every refusal or error carries its code.
    fn of(status: AdminStatus) -> Answer {
        let code = match status {
            AdminStatus::Migrated | AdminStatus::HungUp => None,
            AdminStatus::Conflict => Some(Code::MigrateClaimHeld),
            AdminStatus::Invalid => Some(Code::MigrateValidation),
            AdminStatus::Failed => Some(Code::MigrateFailed),
        };
        Answer { status, code }
    }
}

impl Server {
    /// The admin server of replica `replica`'s current process, if that process has booted,
    /// lives (a frozen one too: a request waits in its socket) and is not shutting down.
    pub fn of(world: &World, replica: u32) -> Option<Server> {
        let slots = world.cluster.slots.borrow();
        let slot = slots.get(replica as usize)?;
        let server = Server { node: slot.node, surface: slot.surface.clone()? };
        (server.surface.process == slot.process).then_some(server).filter(|s| s.serves(world))
    }

    /// True if the process runs now (not frozen): where the operator sends a new order.
    pub fn running(&self) -> bool {
        executor::node_status(self.node) == NodeStatus::Alive
    }

    /// True while this process still serves its admin API: it is some replica's current
    /// process, not dead, and not shutting down.
    pub fn serves(&self, world: &World) -> bool {
        executor::node_status(self.node) != NodeStatus::Dead
            && !self.surface.shutdown.requested()
            && world.cluster.slots.borrow().iter().any(|slot| slot.process == self.surface.process)
    }

    /// Sends `sent` to this server: a handler task starts on the process's node (when it
    /// runs: a frozen process starts it on waking). The answer comes back on the returned
    /// receiver, which is dropped unanswered if the process dies first. `hung_up` fires if
    /// the client hangs up.
    pub fn send(&self, world: &Rc<World>, sent: Sent, hung_up: Receiver<()>) -> Receiver<Answer> {
        let (answer, answered) = oneshot::<Answer>();
        if executor::node_status(self.node) == NodeStatus::Dead {
            // Died since the client found it: the connection is refused, with no answer.
            return answered;
        }
        // Taken now, so a shutdown requested before the handler first runs still waits for it.
        let in_flight = self.surface.shutdown.role();
        let (w, surface) = (world.clone(), self.surface.clone());
        executor::spawn_daemon_on(self.node, "admin:migrate", async move {
            let _in_flight = in_flight;
            let task = executor::current_task().map_or(0, |t| t.number());
            let (process, instance) = (surface.process, sent.order.instance);
            let Order { client, request, to_lane, .. } = sent.order;
            let attempt = sent.attempt;
            w.ctx.emit(ModelEvent::AdminRequestReceived { process, task, client, request, instance, to_lane, attempt });
            let status = handle(&w, &surface, sent.order, hung_up).await;
            let answered = Answer::of(status);
            w.ctx.emit(ModelEvent::AdminRequestEnded { process, task, instance, status, code: answered.code });
            answer.send(answered);
        });
        answered
    }
}

/// One attempt of an order, as the client sends it.
#[derive(Clone, Copy, Debug)]
pub struct Sent {
    /// What the operator ordered.
    pub order: Order,
    /// The attempt number (1 for the first).
    pub attempt: u32,
}

/// Serves one request: runs its handler until it answers or the client hangs up.
async fn handle(w: &Rc<World>, surface: &ReplicaSurface, order: Order, hung_up: Receiver<()>) -> AdminStatus {
    let request = Request::new(w, surface, order.instance, order.to_lane);
    // A client that never hangs up drops its end unused: that is no hang-up.
    let hung_up = std::pin::pin!(async move {
        if hung_up.await.is_err() {
            futures::future::pending::<()>().await;
        }
    });
    let handler = Box::pin(request.migrate());
    // Bound to a name so that the select's temporaries, which borrow `request`, end first.
    let status = match futures::future::select(hung_up, handler).await {
        futures::future::Either::Right((status, _)) => status,
        futures::future::Either::Left((_, handler)) => {
            // The server drops the handler at its await point; nothing of it runs again.
            drop(handler);
            request.hung_up_exit().await;
            AdminStatus::HungUp
        }
    };
    status
}

/// What a migration holds, kept between awaits so that the exit path of a dropped handler
/// knows what to release.
#[derive(Clone, Copy, Debug, Default)]
struct Held {
    /// A claim request was sent: the store may have granted it though no answer arrived.
    claiming: bool,
    /// The claim, once granted and until released or written away.
    claim: Option<Claim>,
}

/// One administrative request being served.
struct Request<'a> {
    world: &'a Rc<World>,
    surface: &'a ReplicaSurface,
    instance: InstanceId,
    to_lane: u16,
    exec: ExecId,
    owner: OwnerId,
    held: RefCell<Held>,
    /// The numbering of the request's claims, which the store fences on
    /// ([`crate::claim_fence`]): the exit path of a dropped handler numbers above the claim
    /// it may have left in flight. `None`: the careless handler borrowing a lane's owner
    /// id has no numbering of that lane's, and sends its claims bare.
    claims: Option<crate::claim_fence::ClaimNumbers>,
}

impl<'a> Request<'a> {
    fn new(world: &'a Rc<World>, surface: &'a ReplicaSurface, instance: InstanceId, to_lane: u16) -> Request<'a> {
        let owner = if world.ctx.mutant_is(Mutant::MigrateWithLaneOwner) {
            // The careless version: "the lane that runs it is the natural owner".
            OwnerId::lane(surface.process, world.routing.home_lane(instance))
        } else {
            OwnerId::migration(world.ctx.new_operation())
        };
        let exec = world.ctx.new_exec();
        let claims = owner.is_migration().then(|| crate::claim_fence::ClaimNumbers::of(surface.process));
        Request { world, surface, instance, to_lane, exec, owner, held: RefCell::new(Held::default()), claims }
    }

    fn claim_of(&self, epoch: u64) -> Claim {
        Claim { owner: self.owner, epoch }
    }

    fn end(&self, exit: Exit) {
        self.world.ctx.emit(ModelEvent::ExecutionEnded { instance: self.instance, exec: self.exec, exit });
    }

    /// The handler: claim, read, validate, rebind, write — releasing on every exit that does
    /// not write (R9).
    async fn migrate(&self) -> AdminStatus {
        let (world, instance, exec) = (self.world, self.instance, self.exec);
        let path = ResumePath::Migration;
        world.ctx.emit(ModelEvent::MigrationRequested {
            instance,
            exec,
            process: self.surface.process,
            to_lane: self.to_lane,
        });
        // The careless order: "point the table at the new lane, then take the instance".
        let rebind_first = world.ctx.mutant_is(Mutant::MigrationRebindsBeforeClaim);
        if rebind_first && self.surface.bindings.rebind(instance, self.to_lane).await.is_err() {
            self.end(Exit::LaneError);
            return AdminStatus::Failed;
        }
        world.ctx.emit(ModelEvent::ClaimAttempt { instance, exec, owner: self.owner, path });
        let claim = match self.claim(exec).await {
            ClaimResult::Refused { .. } => {
                world.ctx.emit(ModelEvent::Refusal {
                    instance,
                    exec,
                    path,
                    code: Code::MigrateClaimHeld,
                    reaction: Reaction::Conflict409,
                });
                self.end(Exit::Refused);
                return AdminStatus::Conflict;
            }
            ClaimResult::Granted { epoch } => self.claim_of(epoch),
        };
        let (version, completed) = self.read(claim).await;
        world.ctx.emit(ModelEvent::Rehydrated { instance, exec, version });
        if completed {
            // "A completed instance cannot be migrated": a validation error after the claim.
            if !world.ctx.mutant_is(Mutant::MigrationExitKeepsClaim) {
                self.release(self.exec, claim).await;
            }
            self.end(Exit::ValidationError);
            return AdminStatus::Invalid;
        }
        if executor::choose_in(streams::ADMIN, UNEXPECTED_FAILURE_ONE_IN) == 1 {
            self.release(self.exec, claim).await;
            self.end(Exit::UnexpectedFailure);
            return AdminStatus::Failed;
        }
        if !rebind_first && self.rebind(claim).await.is_err() {
            self.release(self.exec, claim).await;
            self.end(Exit::LaneError);
            return AdminStatus::Failed;
        }
        if !self.write(claim).await {
            self.end(Exit::LostClaim);
            return AdminStatus::Failed;
        }
        self.end(Exit::Migrated);
        AdminStatus::Migrated
    }

    /// Rewrites the binding table. The careless `store-read-in-turn` table reads the row
    /// again from inside its turn first.
    async fn rebind(&self, claim: Claim) -> Result<(), sutra_sim_core::lane::LaneError> {
        let bindings = &self.surface.bindings;
        if !self.world.ctx.mutant_is(Mutant::StoreReadInTurn) {
            return bindings.rebind(self.instance, self.to_lane).await;
        }
        let (store, instance, exec) = (self.world.store.clone(), self.instance, self.exec);
        let still_live = async move { !store.read(instance, exec, claim).await.1 };
        bindings.rebind_if(instance, self.to_lane, still_live).await
    }

    /// The exit path of a handler its server dropped because the client hung up: whatever
    /// claim it may hold is released, awaited. The careless `migration-exit-keeps-claim`
    /// handler has nothing that runs after the drop.
    async fn hung_up_exit(&self) {
        let held = *self.held.borrow();
        if self.world.ctx.mutant_is(Mutant::MigrationExitKeepsClaim) {
            return;
        }
        let mut claim = held.claim;
        let mut exec = self.exec;
        if claim.is_none() && held.claiming {
            // A grant may have been written though its answer never arrived: claim again —
            // the same owner's re-claim is granted re-entrantly (R10) — and release that. A
            // new execution asks: the dropped one never heard an answer to give up on.
            exec = self.world.ctx.new_exec();
            let (instance, owner) = (self.instance, self.owner);
            self.world.ctx.emit(ModelEvent::ClaimAttempt { instance, exec, owner, path: ResumePath::Migration });
            if let ClaimResult::Granted { epoch } = self.claim(exec).await {
                claim = Some(self.claim_of(epoch));
            }
        }
        if let Some(claim) = claim {
            self.release(exec, claim).await;
        }
        self.end(Exit::Cancelled);
    }

    /// Claims over the faulty boundary for `exec`, sent again until answered.
    async fn claim(&self, exec: ExecId) -> ClaimResult {
        let (instance, owner) = (self.instance, self.owner);
        let process = Some(self.surface.process);
        self.held.borrow_mut().claiming = true;
        for _ in 0..RETRY_ATTEMPTS_MAX {
            let number = self.claims.as_ref().map(crate::claim_fence::ClaimNumbers::next);
            let asked = ClaimAsked { client_now: None, delivery: None, number };
            let reply =
                self.world.store.claim_over_wire(instance, exec, owner, process, ResumePath::Migration, asked).await;
            if let Reply::Answered(result) = reply {
                let mut held = self.held.borrow_mut();
                held.claiming = false;
                if let ClaimResult::Granted { epoch } = result {
                    held.claim = Some(self.claim_of(epoch));
                }
                return result;
            }
        }
        panic!("{RETRY_ATTEMPTS_MAX} migration claims in a row went unanswered");
    }

    /// Reads the row over the faulty boundary (a read is safe to repeat).
    async fn read(&self, claim: Claim) -> (u64, bool) {
        for _ in 0..RETRY_ATTEMPTS_MAX {
            if let Reply::Answered(row) = self.world.store.read_over_wire(self.instance, self.exec, claim).await {
                return row;
            }
        }
        panic!("{RETRY_ATTEMPTS_MAX} migration reads in a row went unanswered");
    }

    /// Releases over the faulty boundary, sent again until answered: a repeated release
    /// matches only while the row still shows the migration's owner id.
    async fn release(&self, exec: ExecId, claim: Claim) {
        for _ in 0..RETRY_ATTEMPTS_MAX {
            if let Reply::Answered(_) = self.world.store.release_over_wire(self.instance, exec, claim).await {
                self.held.borrow_mut().claim = None;
                return;
            }
        }
        panic!("{RETRY_ATTEMPTS_MAX} migration releases in a row went unanswered");
    }

    /// The migration's releasing write over the faulty boundary, sent again until answered.
    /// True if some attempt matched: a repeat after a lost reply finds the row no longer
    /// ours and answers false, though the first landed — the store's `MigrationCommitted`
    /// witness tells; the handler then answers 500, as its client cannot know better.
    async fn write(&self, claim: Claim) -> bool {
        for _ in 0..RETRY_ATTEMPTS_MAX {
            if let Reply::Answered(done) =
                self.world.store.migrate_commit_over_wire(self.instance, self.exec, claim).await
            {
                self.held.borrow_mut().claim = None;
                return done;
            }
        }
        panic!("{RETRY_ATTEMPTS_MAX} migration writes in a row went unanswered");
    }
}

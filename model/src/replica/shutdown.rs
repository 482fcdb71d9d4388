//! Graceful shutdown (drain, then stop): what a replica process does when its orchestrator
//! asks it to go (a SIGTERM — the `cancel` fault's third shape). A process that stops this
//! way had every chance to run its exit paths, so — unlike a crash — it leaves no claim for
//! the sweeper (R9, R22): the sweep is the backstop for a process that is not around.
//!
//! The sequence:
//! 1. The process stops taking new work. Its consumer stops receiving, its timer poller
//!    and sweeper stop at their next wait (a round already under way finishes); each
//!    role reports when it stopped. The sweep lease is left to expire: spec 000 makes the
//!    lease the role's one exclusion and gives it an expiry for a holder that goes away, and
//!    the store has no statement for giving it up early.
//! 2. Work queued for its lanes but not started is handed back at once, the way every exit
//!    that does not consume its trigger gives it back — a relay requeued (after the
//!    requeue delay), a timer fire deferred (with backoff) — so another replica takes it:
//!    routing is affinity only (R12), the claim decides who runs. Senders stop waiting for
//!    room in a queue nothing is taken from any more.
//! 3. Executions in flight are given until the drain deadline (`drain_timeout`, by the
//!    process's own clock) to finish. Any still running then is cancelled — its worker
//!    task aborted — and takes the same explicit, awaited exit path as every other
//!    cancellation: a destructor cannot await, so nothing is released on drop.
//! 4. Once every lane is idle, the process exits; the orchestrator sees it stop (the
//!    `ReplicaStopped` witness) and starts a new incarnation later.
//!
//! The careless shape (`shutdown-skips-drain-release`): at the deadline the process simply
//! exits, and executions still in flight are dropped with it, claims and all.

use std::cell::Cell;
use std::future::Future;
use std::rc::Rc;
use std::time::Duration;

use sutra_sim_core::executor::{self, sleep};
use sutra_sim_core::sync::{Notify, Sender};

use super::cluster::ReplicaSurface;
use super::execution::{give_back, Source};
use crate::broker::Broker;
use crate::ctx::Context;
use crate::event::{Exit, ModelEvent};
use crate::mutant::Mutant;
use crate::store::Store;

/// A process's shutdown switch and the little bookkeeping its drain waits on. Every role
/// of the process holds it; it starts off, and once requested stays requested.
#[derive(Default)]
pub struct Shutdown {
    /// False where no shutdown can be requested in this seed: the roles' waits then pay
    /// nothing for a request that never comes.
    possible: bool,
    /// Set once by the shutdown request. Invariant: never unset, and only if `possible`.
    requested: Cell<bool>,
    /// Wakes the roles waiting at their stop points when the request comes.
    signal: Notify,
    /// Roles (consumer, timer poller, sweeper) that have not stopped yet.
    roles_running: Cell<u32>,
    /// Notified when a role stopped or a lane's execution ended during the shutdown.
    changed: Notify,
}

/// A role's registration: dropping it (the role returned, or its process died) counts
/// the role as stopped.
pub struct RoleGuard(Rc<Shutdown>);

impl Drop for RoleGuard {
    fn drop(&mut self) {
        self.0.roles_running.set(self.0.roles_running.get().saturating_sub(1));
        self.0.changed.notify();
    }
}

impl Shutdown {
    /// A switch that can be requested only if `possible` (graceful shutdowns are on).
    pub fn new(possible: bool) -> Shutdown {
        Shutdown { possible, ..Shutdown::default() }
    }

    /// True once the process was asked to shut down.
    pub fn requested(&self) -> bool {
        self.requested.get()
    }

    /// Registers a role that must stop before the process exits.
    pub fn role(self: &Rc<Self>) -> RoleGuard {
        self.roles_running.set(self.roles_running.get() + 1);
        RoleGuard(self.clone())
    }

    /// Runs `work` unless the shutdown is (or becomes) requested first: `None` then, and
    /// `work` is dropped at its await point. The request is looked at first, so a role
    /// never starts a wait it would have to abandon.
    pub async fn unless_requested<T>(&self, work: impl Future<Output = T>) -> Option<T> {
        if !self.possible {
            return Some(work.await);
        }
        let stop = std::pin::pin!(self.wait());
        let work = std::pin::pin!(work);
        match futures::future::select(stop, work).await {
            futures::future::Either::Left(_) => None,
            futures::future::Either::Right((value, _)) => Some(value),
        }
    }

    /// Completes once the shutdown is requested.
    async fn wait(&self) {
        while !self.requested.get() {
            self.signal.notified().await;
        }
    }

    /// Says that something the drain waits on changed (a lane went idle).
    pub fn note_change(&self) {
        if self.requested.get() {
            self.changed.notify();
        }
    }

    fn request(&self) {
        assert!(self.possible, "a shutdown is requested only where graceful shutdowns are on");
        self.requested.set(true);
        self.signal.notify();
    }
}

/// What the shutdown handler talks to: the run's context, the store and the broker (to
/// hand queued work back), and the process's surface (its lanes and bindings).
pub struct Handler {
    /// The run's context.
    pub ctx: Rc<Context>,
    /// The store (a queued timer fire is handed back by deferring its row).
    pub store: Store,
    /// The broker (a queued relay is handed back by requeueing it).
    pub broker: Broker,
    /// The process shutting down.
    pub surface: Rc<ReplicaSurface>,
    /// The replica identity it runs as.
    pub replica: u32,
}

impl Handler {
    /// The process's shutdown: stop taking work, hand queued work back, drain within
    /// `drain_timeout`, cancel what is left (each cancelled execution runs its awaited exit
    /// path), then exit — tell the orchestrator through `exited`, and end the process.
    /// Runs as a task of the process: a crash or a pause meanwhile takes it along.
    pub async fn run(self, drain_timeout: Duration, exited: Sender<()>) {
        let shutdown = self.surface.shutdown.clone();
        shutdown.request();
        self.hand_back_queued().await;
        while shutdown.roles_running.get() > 0 {
            shutdown.changed.notified().await;
        }
        // A role that was mid-dispatch when it stopped may have queued one more item.
        self.hand_back_queued().await;
        let drained = {
            let mut deadline = std::pin::pin!(sleep(drain_timeout));
            loop {
                if self.idle() {
                    break true;
                }
                let changed = std::pin::pin!(shutdown.changed.notified());
                if let futures::future::Either::Right(_) = futures::future::select(changed, deadline.as_mut()).await {
                    break self.idle();
                }
            }
        };
        if !drained && !self.ctx.mutant_is(Mutant::ShutdownSkipsDrainRelease) {
            // The deadline: cancel what still runs. Each lane's next worker runs the
            // cancelled execution's exit path, which the process waits for.
            for (lane, inbox) in self.surface.lanes.iter().enumerate() {
                if let Some(task) = inbox.abort() {
                    self.ctx.emit(ModelEvent::TaskAborted {
                        replica: self.replica,
                        process: self.surface.process,
                        lane: lane as u16,
                        task: task.number(),
                    });
                }
            }
            while !self.idle() {
                shutdown.changed.notified().await;
            }
        }
        self.hand_back_queued().await;
        exited.send(());
        // The process exits: its remaining tasks (idle lanes, the binding lane) end with it.
        executor::kill(executor::current_node());
    }

    /// True if no lane has an execution in flight.
    fn idle(&self) -> bool {
        self.surface.lanes.iter().all(|inbox| inbox.in_flight.borrow().is_none())
    }

    /// Hands back every work item queued for the process's lanes and not started: a relay
    /// is requeued for another consumer, a timer fire deferred so another poller fires it.
    async fn hand_back_queued(&self) {
        for inbox in &self.surface.lanes {
            while let Some(work) = inbox.queue.try_pop() {
                inbox.space.notify();
                give_back(&self.ctx, &self.store, &self.broker, &work, false).await;
                if let Source::Relay { tag, .. } = work.source {
                    let _ = self.surface.bindings.finish(tag).await;
                }
                self.ctx.emit(ModelEvent::ExecutionEnded {
                    instance: work.instance,
                    exec: work.exec,
                    exit: Exit::HandedBack,
                });
            }
        }
    }
}

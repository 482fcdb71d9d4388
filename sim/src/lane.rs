//! The state lane of spec 003 (§5, §7): the execution unit a component uses to own its
//! mutable state.
//!
//! Guarantees (rules L1–L6, L10):
//! - **one turn at a time** (L1): a lane runs its work items one after another on its own
//!   worker task; the next item starts only after the previous one finished;
//! - **FIFO** (L2): items run in the order they were submitted, no front-of-queue insertion;
//! - **non-reentrant** (L3): code already on a lane's turn that tries to enter the same lane
//!   gets [`LaneError::Reentrant`] right at the call site — never a hang; so does code on
//!   another lane's turn that this lane's current turn is waiting for (A → B → A);
//! - **plain owned collections** (L4): the state `S` is an ordinary value behind the lane,
//!   touched only from a turn ([`StateLane::with`] refuses off-turn access);
//! - `run` / `try_post` / `close` contracts (L5), `current` / `is_on_lane` (L6); a `close`
//!   from the lane's own turn is refused like a reentrant `run`, since waiting for the drain
//!   there waits for that very turn;
//! - **completion boundary** (L10): a caller's continuation runs in the caller's own task,
//!   after the turn has ended and the lane marker is released; work started from a turn
//!   with [`StateLane::start_detached`] does not inherit the lane.
//!
//! The lane marker lives on the task executing the turn. The executor knows which task
//! holds each lane's turn and which lane each task waits on, so a reentrant wait that
//! slipped past the check (a broken lane) shows up as a wait-for cycle: a Hang naming the
//! lane, never a silent stall. A lane whose node died (its worker task dropped) refuses
//! everything and drops what was queued, so its callers get [`LaneError::Aborted`] rather
//! than waiting for a worker that will never come back.
//!
//! [`LaneFlaws`] deliberately break single guarantees. They exist so that the tests of the
//! lane (spec 003 §8) and the model's mutants can show that a broken lane is caught.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::rc::{Rc, Weak};

use crate::executor::{self, LaneKey, TaskId};
use crate::sync::{oneshot, Notify};

type Work = Pin<Box<dyn Future<Output = ()>>>;

/// Most items a lane may hold queued; more is a runaway producer.
pub const LANE_QUEUE_MAX: usize = 1 << 16;

/// Why a lane refused or failed a submission.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LaneError {
    /// The caller is already on this lane's turn (spec 003 §5): raised at the call site.
    Reentrant {
        /// The lane that was re-entered.
        lane: String,
    },
    /// The lane is closed and accepts nothing.
    Closed {
        /// The closed lane.
        lane: String,
    },
    /// The item was dropped before it completed, or cannot run at all: the node running the
    /// lane's worker died.
    Aborted {
        /// The lane.
        lane: String,
    },
}

impl fmt::Display for LaneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LaneError::Reentrant { lane } => write!(f, "reentrant call on state lane {lane}: already on its turn"),
            LaneError::Closed { lane } => write!(f, "state lane {lane} is closed"),
            LaneError::Aborted { lane } => write!(f, "work on state lane {lane} was dropped: the lane's node died"),
        }
    }
}

impl std::error::Error for LaneError {}

/// What a lane reports to an observer (the model turns these into trace events).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneEvent {
    /// Item `item` was accepted.
    Submitted {
        /// Submission number, from 0.
        item: u64,
    },
    /// Item `item` began its turn.
    TurnStarted {
        /// Submission number.
        item: u64,
    },
    /// Item `item` finished its turn.
    TurnEnded {
        /// Submission number.
        item: u64,
    },
    /// A reentrant call was refused at its call site.
    ReentrantRefused,
    /// A submission was refused because the lane is closed.
    ClosedRefused,
}

/// Deliberately broken lane behaviours, each breaking one guarantee. All off by default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaneFlaws {
    /// Skip the reentrancy check: a reentrant call queues behind its own turn (L3).
    pub skip_reentrancy_check: bool,
    /// Run newest items first (L2).
    pub lifo: bool,
    /// Keep accepting work after close (L5).
    pub accept_after_close: bool,
    /// Give work started with `start_detached` the lane marker of the turn that started it (L10).
    pub inherit_marker: bool,
    /// Deliver completions as if the continuation ran inline, inside the lane scope (L10).
    pub complete_inside_turn: bool,
    /// Start each item as soon as it arrives, so turns interleave at their awaits (L1).
    pub concurrent_turns: bool,
}

/// Receives lane events.
pub type LaneObserver = Rc<dyn Fn(LaneEvent)>;

struct Inner<S> {
    key: LaneKey,
    name: Rc<str>,
    state: RefCell<S>,
    queue: RefCell<VecDeque<(u64, Work)>>,
    submitted: Cell<u64>,
    /// Invariant: once true, never false again.
    closed: Cell<bool>,
    /// True while the worker executes an item.
    busy: Cell<bool>,
    /// Set when the worker task is dropped (its node died): nothing will run the queue again.
    /// Invariant: once true, never false again, and the queue stays empty.
    worker_gone: Cell<bool>,
    wake_worker: Notify,
    drained: Notify,
    flaws: LaneFlaws,
    observer: RefCell<Option<LaneObserver>>,
}

/// A state lane owning a value of type `S`. Cloning gives another handle to the same lane.
pub struct StateLane<S> {
    inner: Rc<Inner<S>>,
}

impl<S> Clone for StateLane<S> {
    fn clone(&self) -> Self {
        StateLane { inner: self.inner.clone() }
    }
}

/// The identity of a lane, as [`StateLane::current`] reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaneId {
    /// The lane's name.
    pub name: Rc<str>,
    key: LaneKey,
}

impl<S: 'static> StateLane<S> {
    /// A lane named `name` owning `state`, with its worker on the current task's node.
    pub fn new(name: impl Into<Rc<str>>, state: S) -> Self {
        Self::with_flaws(name, state, LaneFlaws::default())
    }

    /// A lane with deliberate flaws, for testing the tests.
    pub fn with_flaws(name: impl Into<Rc<str>>, state: S, flaws: LaneFlaws) -> Self {
        let name: Rc<str> = name.into();
        let key = executor::register_lane(name.clone());
        let inner = Rc::new(Inner {
            key,
            name: name.clone(),
            state: RefCell::new(state),
            queue: RefCell::new(VecDeque::new()),
            submitted: Cell::new(0),
            closed: Cell::new(false),
            busy: Cell::new(false),
            worker_gone: Cell::new(false),
            wake_worker: Notify::new(),
            drained: Notify::new(),
            flaws,
            observer: RefCell::new(None),
        });
        let worker = Rc::downgrade(&inner);
        executor::spawn_daemon_on(executor::current_node(), format!("lane:{name}"), async move {
            Self::work_loop(worker).await;
        });
        StateLane { inner }
    }

    async fn work_loop(lane: Weak<Inner<S>>) {
        let _worker = Worker { lane: lane.clone() };
        loop {
            let next = {
                let Some(inner) = lane.upgrade() else { return };
                let item = inner.queue.borrow_mut().pop_front();
                match item {
                    Some(item) => Ok((inner.clone(), item)),
                    None => {
                        inner.drained.notify();
                        Err(inner.wake_worker.clone())
                    }
                }
            };
            match next {
                Err(wake) => wake.notified().await,
                Ok((inner, (item, work))) => {
                    if inner.flaws.concurrent_turns {
                        let name = format!("lane:{}:item{item}", inner.name);
                        let observer = inner.observer.borrow().clone();
                        executor::spawn_daemon_on(executor::current_node(), name, async move {
                            if let Some(o) = &observer {
                                o(LaneEvent::TurnStarted { item });
                            }
                            work.await;
                            if let Some(o) = &observer {
                                o(LaneEvent::TurnEnded { item });
                            }
                        });
                        continue;
                    }
                    let me = executor::current_task();
                    executor::set_turn(inner.key, me);
                    inner.busy.set(true);
                    inner.notify(LaneEvent::TurnStarted { item });
                    work.await;
                    inner.notify(LaneEvent::TurnEnded { item });
                    inner.busy.set(false);
                    executor::set_turn(inner.key, None);
                }
            }
        }
    }

    /// Runs `work` in one turn of this lane and returns its result (spec 003 `run`).
    ///
    /// The reentrancy check happens here, at the call site: a caller already on this lane's
    /// turn gets `Err(Reentrant)` from the returned future at once. A closed lane gives
    /// `Err(Closed)` at once, and a lane whose node died `Err(Aborted)`. The result reaches
    /// the caller's task after the turn ended.
    pub fn run<T: 'static>(
        &self,
        work: impl Future<Output = T> + 'static,
    ) -> impl Future<Output = Result<T, LaneError>> + 'static {
        let inner = self.inner.clone();
        let refused = if inner.flaws.skip_reentrancy_check { Ok(()) } else { self.throw_if_reentrant() };
        let receiver = refused.and_then(|()| {
            let (tx, rx) = oneshot();
            self.submit(Box::pin(async move {
                let value = work.await;
                tx.send(value);
            }))
            .map(|()| rx)
        });
        async move {
            let rx = receiver?;
            let waiting = WaitingOnLane::start(inner.key);
            let result = rx.await;
            drop(waiting);
            if inner.flaws.complete_inside_turn {
                if let Some(me) = executor::current_task() {
                    executor::leak_marker(me, Some(inner.key));
                }
            }
            result.map_err(|_| LaneError::Aborted { lane: inner.name.to_string() })
        }
    }

    /// Runs a synchronous closure on the state in one turn: the common case of reading the
    /// state and settling a decision.
    pub fn run_with<T: 'static>(
        &self,
        work: impl FnOnce(&mut S) -> T + 'static,
    ) -> impl Future<Output = Result<T, LaneError>> + 'static {
        let lane = self.clone();
        self.run(async move { lane.with(work) })
    }

    /// Enqueues `work` without waiting for it (spec 003 `tryPost`); false if the lane is
    /// closed or its node died. Posting from the lane's own turn is allowed: it does not
    /// wait, so it cannot wait for itself.
    pub fn try_post(&self, work: impl Future<Output = ()> + 'static) -> bool {
        self.submit(Box::pin(work)).is_ok()
    }

    fn submit(&self, work: Work) -> Result<(), LaneError> {
        let inner = &self.inner;
        if inner.worker_gone.get() {
            return Err(LaneError::Aborted { lane: inner.name.to_string() });
        }
        if inner.closed.get() && !inner.flaws.accept_after_close {
            inner.notify(LaneEvent::ClosedRefused);
            return Err(LaneError::Closed { lane: inner.name.to_string() });
        }
        let item = inner.submitted.get();
        inner.submitted.set(item + 1);
        {
            let mut queue = inner.queue.borrow_mut();
            assert!(
                queue.len() < LANE_QUEUE_MAX,
                "state lane {} has more than {LANE_QUEUE_MAX} queued items",
                inner.name
            );
            if inner.flaws.lifo {
                queue.push_front((item, work));
            } else {
                queue.push_back((item, work));
            }
        }
        inner.notify(LaneEvent::Submitted { item });
        inner.wake_worker.notify();
        Ok(())
    }

    /// Raises the reentrancy error here if the caller is on this lane's turn (spec 003
    /// `throwIfReentrant`) — or on the turn of another lane that this lane's current turn is
    /// waiting for, directly or through further lanes' turns (A's turn calls B, whose turn
    /// calls A): entering would wait for a turn that waits for the caller, the same self-wait
    /// as a direct reentrant call, so it is refused here rather than left to hang.
    pub fn throw_if_reentrant(&self) -> Result<(), LaneError> {
        if self.is_on_lane() || executor::turn_waits_on_current_task(self.inner.key) {
            self.inner.notify(LaneEvent::ReentrantRefused);
            Err(LaneError::Reentrant { lane: self.inner.name.to_string() })
        } else {
            Ok(())
        }
    }

    /// True if the caller is executing this lane's turn (spec 003 `isOnLane`).
    pub fn is_on_lane(&self) -> bool {
        executor::current_lane() == Some(self.inner.key)
    }

    /// The lane whose turn the caller is executing, if any (spec 003 `current`).
    pub fn current() -> Option<LaneId> {
        executor::current_lane().map(|key| LaneId { name: executor::lane_name(key), key })
    }

    /// True if this lane is the one `id` names.
    pub fn is(&self, id: &LaneId) -> bool {
        id.key == self.inner.key
    }

    /// Stops accepting work and completes once everything accepted has run (spec 003 `close`).
    ///
    /// Called from this lane's own turn, it is refused at the call site with
    /// `Err(Reentrant)` and closes nothing: waiting for the lane to drain from inside one of
    /// its turns waits for that very turn (spec 003 §7), the same self-wait as a reentrant
    /// `run`.
    pub fn close(&self) -> impl Future<Output = Result<(), LaneError>> + 'static {
        let inner = self.inner.clone();
        let refused = if inner.flaws.skip_reentrancy_check { Ok(()) } else { self.throw_if_reentrant() };
        if refused.is_ok() {
            inner.closed.set(true);
            inner.wake_worker.notify();
        }
        async move {
            refused?;
            let mut waiting = None;
            loop {
                if inner.queue.borrow().is_empty() && !inner.busy.get() {
                    return Ok(());
                }
                waiting.get_or_insert_with(|| WaitingOnLane::start(inner.key));
                inner.drained.notified().await;
            }
        }
    }

    /// True once `close` was called.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.get()
    }

    /// Touches the state. Only from this lane's turn: off-turn access is a bug in the
    /// component and panics with the lane's name (a crash verdict in a run).
    pub fn with<R>(&self, f: impl FnOnce(&mut S) -> R) -> R {
        assert!(
            self.is_on_lane() || self.inner.flaws.concurrent_turns,
            "state of lane {} touched outside its turn",
            self.inner.name
        );
        f(&mut self.inner.state.borrow_mut())
    }

    /// Reads the state from outside the simulated world's tasks (checkers, tests, views).
    /// Never use it to make a decision inside the model.
    pub fn inspect<R>(&self, f: impl FnOnce(&S) -> R) -> R {
        f(&self.inner.state.borrow())
    }

    /// Starts long-running work from a turn without handing it the lane (spec 003 §6 kind
    /// ②): the work runs in a task of its own, whose synchronous prefix runs later, after
    /// the current turn — so it can enter this lane normally once the turn has ended.
    pub fn start_detached(&self, name: impl Into<executor::TaskName>, work: impl Future<Output = ()> + 'static) {
        let task = executor::spawn(name, work);
        if self.inner.flaws.inherit_marker {
            executor::leak_marker(task, executor::current_lane());
        }
    }

    /// Sets the observer told about submissions, turns and refusals.
    pub fn set_observer(&self, observer: LaneObserver) {
        *self.inner.observer.borrow_mut() = Some(observer);
    }

    /// The lane's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }
}

/// Lives exactly as long as the lane's worker task. When that task is dropped with its node,
/// nothing will run the queue again: the lane then refuses new work, and the queued items are
/// dropped so that each waiting caller gets `Aborted` instead of waiting forever.
struct Worker<S> {
    lane: Weak<Inner<S>>,
}

impl<S> Drop for Worker<S> {
    fn drop(&mut self) {
        let Some(inner) = self.lane.upgrade() else { return };
        inner.worker_gone.set(true);
        inner.busy.set(false);
        // Dropped outside the borrow: an item's destructor wakes its caller and may touch
        // the lane.
        let queued = std::mem::take(&mut *inner.queue.borrow_mut());
        drop(queued);
        inner.drained.notify();
    }
}

/// Marks the current task as waiting on a lane, for the executor's wait-for cycle check,
/// for exactly as long as the wait lasts. A wait abandoned midway (its future dropped by a
/// timeout or a select) clears the mark too: a stale mark would make a later, innocent wait
/// on this task's turn look like a cycle, and end a sound run as a hang.
struct WaitingOnLane {
    task: Option<TaskId>,
}

impl WaitingOnLane {
    fn start(lane: LaneKey) -> WaitingOnLane {
        executor::set_waiting_on_lane(Some(lane));
        WaitingOnLane { task: executor::current_task() }
    }
}

impl Drop for WaitingOnLane {
    fn drop(&mut self) {
        // Only the waiting task's own poll can clear its mark. A future dropped with its
        // killed task, or after the world ended, has no task left to carry a mark.
        if self.task.is_some() && executor::in_simulation() && executor::current_task() == self.task {
            executor::set_waiting_on_lane(None);
        }
    }
}

impl<S> Inner<S> {
    fn notify(&self, event: LaneEvent) {
        let observer = self.observer.borrow().clone();
        if let Some(o) = observer {
            o(event);
        }
    }
}

#[cfg(test)]
mod tests {
    //! The lane's own edges that spec 003 §8 does not list (those are `tests/state_lane.rs`):
    //! closing from a turn, abandoned waits, and a lane whose node died.

    use std::cell::RefCell;
    use std::pin::pin;
    use std::rc::Rc;
    use std::task::Poll;
    use std::time::Duration;

    use super::*;
    use crate::checker::Checker;
    use crate::executor::{sleep, spawn, spawn_on};
    use crate::node::NodeId;
    use crate::run::{simulate, RunConfig};
    use crate::verdict::Verdict;

    #[derive(Clone, Debug, serde::Serialize)]
    enum Quiet {}

    impl crate::trace::EventKind for Quiet {
        fn name(&self) -> &'static str {
            match *self {}
        }
    }

    fn run_world(setup: impl FnOnce()) -> Verdict {
        simulate(&RunConfig::seeded(7), Vec::<Box<dyn Checker<Quiet, ()>>>::new(), |_| setup()).verdict
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn closing_a_lane_from_its_own_turn_is_refused_at_the_call_site() {
        let seen = Rc::new(RefCell::new(None));
        let seen_in = seen.clone();
        let verdict = run_world(move || {
            let lane = StateLane::new("self-closing", ());
            spawn("caller", async move {
                let turn_lane = lane.clone();
                let inside = lane.run(async move { turn_lane.close().await }).await;
                let closed_by_the_refusal = lane.is_closed();
                let outside = lane.close().await;
                *seen_in.borrow_mut() = Some((inside, closed_by_the_refusal, outside));
            });
        });
        assert_eq!(verdict, Verdict::Pass, "a close awaited inside its own turn must not hang");
        let refused = Err(LaneError::Reentrant { lane: "self-closing".into() });
        assert_eq!(*seen.borrow(), Some((Ok(refused), false, Ok(()))));
    }

    #[test]
    fn an_abandoned_wait_leaves_no_mark_that_fakes_a_cycle() {
        let entered = Rc::new(RefCell::new(None));
        let entered_in = entered.clone();
        let verdict = run_world(move || {
            let a = StateLane::new("a", ());
            let b = StateLane::new("b", ());
            let (a2, b2, b3) = (a.clone(), b.clone(), b.clone());
            spawn("holds-b", async move {
                let _ = b.run(sleep(ms(5))).await;
            });
            spawn("turn-on-a", async move {
                sleep(ms(1)).await;
                let _ = a
                    .run(async move {
                        // Waits on b while b is busy and gives up after one poll, dropping
                        // the wait, as a timeout would.
                        {
                            let mut wait = pin!(b2.run(async {}));
                            std::future::poll_fn(|cx| {
                                assert!(wait.as_mut().poll(cx).is_pending(), "b is busy");
                                Poll::Ready(())
                            })
                            .await;
                        }
                        // Still on a's turn, waiting on nothing of b's any more.
                        sleep(ms(20)).await;
                    })
                    .await;
            });
            spawn("b-enters-a", async move {
                sleep(ms(2)).await;
                let result = b3.run(async move { a2.run(async {}).await }).await;
                *entered_in.borrow_mut() = Some(result);
            });
        });
        assert_eq!(verdict, Verdict::Pass, "b's turn waiting on a is no cycle: a's turn waits on nothing");
        assert_eq!(*entered.borrow(), Some(Ok(Ok(()))));
    }

    #[test]
    fn callers_queued_on_a_lane_whose_node_died_are_aborted_not_left_waiting() {
        let results = Rc::new(RefCell::new(Vec::new()));
        let results_in = results.clone();
        let verdict = run_world(move || {
            let replica = executor::add_node("replica", None);
            spawn_on(replica, "owner", async move {
                let lane = StateLane::new("replica-state", ());
                for caller in 0..2u64 {
                    let (lane, results) = (lane.clone(), results_in.clone());
                    spawn_on(NodeId::WORLD, format!("caller{caller}"), async move {
                        let result = lane.run(sleep(ms(10))).await;
                        results.borrow_mut().push((caller, "queued or running", result));
                        if caller == 1 {
                            // Every later submission is refused at once as well.
                            let after = lane.run(async {}).await;
                            results.borrow_mut().push((caller, "after", after));
                            assert!(!lane.try_post(async {}), "a lane whose node died accepts nothing");
                            let close = lane.close().await;
                            results.borrow_mut().push((caller, "close", close));
                        }
                    });
                }
            });
            spawn("killer", async move {
                sleep(ms(5)).await;
                executor::kill(replica);
            });
        });
        assert_eq!(verdict, Verdict::Pass);
        let aborted = Err(LaneError::Aborted { lane: "replica-state".into() });
        let mut results = results.borrow().clone();
        results.sort_by_key(|(caller, what, _)| (*caller, *what));
        let expected = vec![
            (0, "queued or running", aborted.clone()),
            (1, "after", aborted.clone()),
            (1, "close", Ok(())),
            (1, "queued or running", aborted),
        ];
        assert_eq!(results, expected);
    }
}

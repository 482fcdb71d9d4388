//! The ambient API of the simulated world: the free functions model code calls ([`now`],
//! [`choose`], [`spawn`], [`sleep`], …) and the thread-local that leads them to the world
//! entered on this thread.
//!
//! The world is ambient rather than passed around because model code is written like
//! ordinary async code, which reaches its runtime the same way. There is exactly one world
//! per thread at a time, so parallel sweeps run one executor per thread. The thread-local
//! is a bare pointer (one load, no lazy-init check, no second `RefCell`): every poll
//! reads it.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::entropy::Stream;
use crate::ids::{TaskId, TaskName};
use crate::node::NodeId;
use crate::time::SimTime;

use super::honesty::SleepOrigin;
use super::state::{BoxFuture, State};

/// The `tracing` target of the executor's log records (node faults, task spawns and ends),
/// whichever file emits them, so that a filter such as `sutra_sim_core::executor=debug`
/// selects them all.
pub const LOG_TARGET: &str = "sutra_sim_core::executor";

thread_local! {
    /// The entered world's state, or null when none is entered.
    ///
    /// Invariant: non-null only while the [`EnterGuard`] that set it is alive. The guard
    /// owns an `Rc` of the state and nulls this pointer before releasing it, so a non-null
    /// pointer always points at live state. A plain `Cell` of a pointer has no destructor,
    /// so reading it costs one load: no lazy registration check, no `RefCell` flag.
    static CURRENT: Cell<*const RefCell<State>> = const { Cell::new(std::ptr::null()) };
}

/// Restores the thread's executor slot when dropped; returned by
/// [`Executor::enter`](super::Executor::enter).
pub struct EnterGuard {
    /// Keeps the state alive for as long as [`CURRENT`] points at it.
    state: Rc<RefCell<State>>,
}

impl Drop for EnterGuard {
    fn drop(&mut self) {
        debug_assert!(std::ptr::eq(CURRENT.get(), Rc::as_ptr(&self.state)), "guards drop in the order entered");
        // Null the pointer first: dropping the state (after this body, with `self.state`)
        // may drop futures that touch the thread-local, and they must find no world.
        CURRENT.set(std::ptr::null());
    }
}

/// Installs `state` as the thread's simulated world until the guard drops.
///
/// Panics if another world is already entered on this thread.
pub(super) fn enter(state: &Rc<RefCell<State>>) -> EnterGuard {
    assert!(CURRENT.get().is_null(), "an executor is already entered on this thread");
    CURRENT.set(Rc::as_ptr(state));
    EnterGuard { state: state.clone() }
}

/// Runs `f` on the entered world's state, or answers `None` if no world is entered. For
/// the waker and the log, which must tolerate a world that is gone.
#[inline]
pub(super) fn with_entered<R>(f: impl FnOnce(&RefCell<State>) -> R) -> Option<R> {
    let state = CURRENT.get();
    if state.is_null() {
        return None;
    }
    // SAFETY: non-null means an EnterGuard owning this state is alive (see `CURRENT`), and
    // every `f` here is executor code that never drops a guard, so it stays alive for `f`.
    Some(f(unsafe { &*state }))
}

/// Runs `f` on the entered world's state. Panics if no world is entered.
#[inline]
pub(super) fn with_state<R>(f: impl FnOnce(&mut State) -> R) -> R {
    let state = CURRENT.get();
    assert!(!state.is_null(), "no simulated world is entered on this thread");
    // SAFETY: non-null means an EnterGuard owning this state is alive (see `CURRENT`), and
    // every `f` here is executor code that never drops a guard, so it stays alive for `f`.
    let state = unsafe { &*state };
    f(&mut state.borrow_mut())
}

/// True if a simulated world is entered on this thread.
pub fn in_simulation() -> bool {
    !CURRENT.get().is_null()
}

/// The current simulated time and the name of the current task's node, if a world is
/// entered and not in the middle of an executor call. For log records, which may be
/// emitted from anywhere, so this never panics: it answers `None` instead.
pub(crate) fn peek_stamp() -> Option<(SimTime, Rc<str>)> {
    with_entered(|state| {
        let state = state.try_borrow().ok()?;
        let node = state.current_node();
        Some((state.now, state.nodes[node.0 as usize].name.clone()))
    })
    .flatten()
}

/// The current simulated time.
pub fn now() -> SimTime {
    with_state(|s| s.now)
}

/// The current task's node's local clock reading (offset and drift applied).
pub fn local_now() -> SimTime {
    with_state(|s| s.nodes[s.current_node().0 as usize].clock.local(s.now))
}

/// `node`'s local clock reading now.
pub fn node_now(node: NodeId) -> SimTime {
    with_state(|s| s.nodes[node.0 as usize].clock.local(s.now))
}

/// A value in `[0, n)` from the model stream of the run's entropy; 0 is the simplest.
pub fn choose(n: u32) -> u32 {
    with_state(|s| s.entropy.choose_in(Stream::MODEL, n))
}

/// A value in `[0, n)` from the given stream; 0 is the simplest.
pub fn choose_in(stream: Stream, n: u32) -> u32 {
    with_state(|s| s.entropy.choose_in(stream, n))
}

/// True with probability `numerator / denominator`; false is the simpler answer.
pub fn chance_in(stream: Stream, numerator: u32, denominator: u32) -> bool {
    with_state(|s| s.entropy.chance_in(stream, numerator, denominator))
}

/// As [`chance_in`], never boosted (see [`crate::Entropy::chance_in_exact`]).
pub fn chance_in_exact(stream: Stream, numerator: u32, denominator: u32) -> bool {
    with_state(|s| s.entropy.chance_in_exact(stream, numerator, denominator))
}

/// Records mark `id` of `kind` at the current tape position, if the entered run collects
/// marks; nothing outside a world. Out of line: the judge calls it on a sometimes-checker's
/// first hit, a rare path that must not weigh on the loop that judges every event.
#[inline(never)]
pub(crate) fn record_mark(id: u64, kind: crate::marks::MarkKind) {
    with_entered(|state| {
        let mut s = state.borrow_mut();
        let position = s.entropy.draws();
        if let Some(log) = s.marks.as_mut() {
            log.hit(id, kind, position);
        }
    });
}

/// True if a world is entered and its run collects marks.
#[inline]
pub(crate) fn marking() -> bool {
    with_entered(|state| state.borrow().marks.is_some()).unwrap_or(false)
}

/// The task being polled, if any.
pub fn current_task() -> Option<TaskId> {
    with_state(|s| s.current)
}

/// The node of the task being polled (the world node outside any task).
pub fn current_node() -> NodeId {
    with_state(|s| s.current_node())
}

/// The current time and the current task's node, in one look at the world (the trace
/// stamps every event with both).
pub fn stamp() -> (SimTime, NodeId) {
    with_state(|s| (s.now, s.current_node()))
}

/// Spawns a task on the current task's node; it keeps the run alive until it ends.
pub fn spawn(name: impl Into<TaskName>, future: impl Future<Output = ()> + 'static) -> TaskId {
    let node = current_node();
    spawn_on(node, name, future)
}

/// Spawns a task on `node`; it keeps the run alive until it ends.
pub fn spawn_on(node: NodeId, name: impl Into<TaskName>, future: impl Future<Output = ()> + 'static) -> TaskId {
    // Boxed before the state's closure takes it, so the closure captures a pointer: a
    // future captured by value is copied into the closure and again into its box, and a
    // lane's or a handler's future is kilobytes.
    let future: BoxFuture = Box::pin(future);
    let id = with_state(|s| s.spawn(node, name.into(), false, future));
    log_spawn(id, false);
    id
}

/// Spawns a daemon on `node`: a periodic role that does not keep the run alive and is not
/// named in a hang (the sweeper, a timer poller, a fault injector).
pub fn spawn_daemon_on(node: NodeId, name: impl Into<TaskName>, future: impl Future<Output = ()> + 'static) -> TaskId {
    let future: BoxFuture = Box::pin(future);
    let id = with_state(|s| s.spawn(node, name.into(), true, future));
    log_spawn(id, true);
    id
}

/// A trace-level record of a spawn. Emitted outside the state's borrow, so that a
/// subscriber may look at the world; with no subscriber listening, the macro's level and
/// callsite checks skip the lookup of the task's name altogether.
#[inline]
fn log_spawn(id: TaskId, daemon: bool) {
    tracing::trace!(target: LOG_TARGET, node = %task_node_name(id), task = %task_name(id), daemon, "task spawned");
}

/// The name of task `id`'s node, for log records (empty once the task has ended).
pub(super) fn task_node_name(id: TaskId) -> Rc<str> {
    with_state(|s| s.task(id).map(|t| s.nodes[t.node.0 as usize].name.clone()).unwrap_or_else(|| Rc::from("")))
}

/// The name of task `id`, for log records (empty once the task has ended).
pub(super) fn task_name(id: TaskId) -> TaskName {
    with_state(|s| s.task(id).map(|t| t.name.clone()).unwrap_or(TaskName::Static("")))
}

/// Ends the run at the next step, as finished (the checkers' end-of-run phase follows).
pub fn finish() {
    with_state(|s| s.finished = true)
}

/// A future that completes once `duration` has passed on the current task's node's clock.
///
/// On a node whose clock reads simulated time (the usual case) that is `now() + duration`.
/// On a skewed node it is when the node's own clock has advanced by `duration`: a fast
/// clock ends the sleep early in simulated (store, global) time, a slow one late, and a
/// step of the clock while it sleeps moves its end (see [`super::set_clock`]) — as a real
/// process's timers follow its own clock.
#[inline]
pub fn sleep(duration: Duration) -> Sleep {
    with_state(|s| {
        let node = s.current_node();
        let n = &s.nodes[node.0 as usize];
        let clock = n.clock;
        let length = crate::time::duration_nanos(duration);
        let origin = SleepOrigin::new(n, s.now, length);
        #[cfg(test)]
        let length = if s.lies.halved_sleeps { length / 2 } else { length - s.lies.sleeps_early_ns.min(length) };
        if clock.is_exact() {
            // `s.now.add(duration)`, without converting the duration a second time.
            let deadline = SimTime(s.now.0.saturating_add(length));
            return Sleep { deadline, local: i128::from(deadline.0), node: Some(node), registered: false, origin };
        }
        // Measured on the unclamped reading: a clock behind simulated time (reading
        // negative) still runs, so the sleep lasts its length by that clock.
        let reading = clock.reading(s.now);
        #[cfg(test)]
        let reading = if s.lies.clamped_clock_sleeps { i128::from(clock.local(s.now).0) } else { reading };
        let local = reading + i128::from(length);
        // The simulated deadline is measured at the first poll.
        Sleep { deadline: s.now, local, node: Some(node), registered: false, origin }
    })
}

/// A future that completes once `duration` of simulated time has passed, whatever the
/// current node's clock reads: a span that no process measures — work being done, a
/// message in flight — where [`sleep`] is a process's own timer.
pub fn elapse(duration: Duration) -> Sleep {
    sleep_until(now().add(duration))
}

/// A future that completes at simulated instant `deadline`, whatever any node's clock
/// reads (the environment's schedule, not a process's timer).
pub fn sleep_until(deadline: SimTime) -> Sleep {
    let origin = SleepOrigin::UNCHECKED;
    Sleep { deadline, local: i128::from(deadline.0), node: None, registered: false, origin }
}

/// A node's list of sleepers is cleared of ended tasks when it grows this long (a node
/// runs a few dozen tasks at most; ended ones linger only until the next clock change).
const LOCAL_SLEEPERS_PRUNE_AT: usize = 256;

/// Completes at its deadline. Registers its timer on first poll; a spurious wake re-checks.
#[must_use = "futures do nothing unless awaited"]
pub struct Sleep {
    /// The simulated instant the sleep ends, as last measured (the timer set, if any).
    deadline: SimTime,
    /// The deadline by the clock that rules: `node`'s unclamped reading (nanoseconds,
    /// negative while a clock behind simulated time has not reached zero), or simulated
    /// time if none.
    local: i128,
    /// The node whose clock the sleep follows; `None` for an instant of simulated time.
    node: Option<NodeId>,
    registered: bool,
    /// Where a sleep by a node's clock began, to assert that it keeps its length.
    origin: SleepOrigin,
}

impl Future for Sleep {
    type Output = ();

    #[inline]
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        // One look at the world measures the sleep and, if it is not due, sets its timer.
        with_state(|s| {
            let (due, deadline, exact) = this.measure(s);
            if due {
                return Poll::Ready(());
            }
            if !this.registered || deadline != this.deadline {
                register_timer(s, deadline, if exact { None } else { this.node });
                this.deadline = deadline;
                this.registered = true;
            }
            Poll::Pending
        })
    }
}

impl Sleep {
    /// Due? And if not, when, in simulated time — measured now, since the node's clock may
    /// have been set since the timer was — and whether that instant is exact (no skewed
    /// clock to follow).
    #[inline(always)]
    fn measure(&self, s: &State) -> (bool, SimTime, bool) {
        let local = self.local;
        match self.node {
            None => (i128::from(s.now.0) >= local, SimTime(local as u64), true),
            Some(node) => {
                let n = &s.nodes[node.0 as usize];
                let clock = n.clock;
                let measured = if clock.is_exact() {
                    // A sleep set on a skewed clock whose node became exact since keeps its
                    // reading as the deadline: an exact clock reads simulated time.
                    let deadline = SimTime(local.clamp(0, i128::from(u64::MAX)) as u64);
                    (s.now >= deadline, deadline, true)
                } else {
                    skewed_deadline(clock, s.now, local)
                };
                // The environment's promise: the sleep keeps its length by the clock.
                if measured.0 {
                    self.origin.check_end(s.now, n);
                } else {
                    self.origin.check_deadline(measured.1, n);
                }
                measured
            }
        }
    }
}

/// Due, deadline and exactness of a sleep by a skewed clock. Out of line: off the usual path.
#[inline(never)]
fn skewed_deadline(clock: crate::node::NodeClock, now: SimTime, local: i128) -> (bool, SimTime, bool) {
    if clock.reading(now) >= local {
        return (true, now, false);
    }
    (false, clock.sim_at_reading(local), false)
}

/// Sets a timer for the current task, and if it follows the skewed clock of `node`, lists
/// the task among the node's sleepers (to be woken when that clock changes). Inside the
/// poll's own look at the world: as a call of its own, it took the thread-local and the
/// borrow a second time, for a quarter of its cost.
#[inline(always)]
fn register_timer(s: &mut State, deadline: SimTime, node: Option<NodeId>) {
    let id = s.current.expect("sleep polled outside a task");
    debug_assert!(deadline > s.now, "a due sleep registers no timer");
    s.timers.push(deadline, id);
    if let Some(node) = node {
        list_sleeper(s, node, id);
    }
}

/// Lists task `id` among `node`'s sleepers, once. Out of line: only sleeps on a skewed
/// clock come here.
#[inline(never)]
fn list_sleeper(s: &mut State, node: NodeId, id: TaskId) {
    let State { slots, nodes, .. } = s;
    let sleepers = &mut nodes[node.0 as usize].local_sleepers;
    if !sleepers.contains(&id) {
        if sleepers.len() >= LOCAL_SLEEPERS_PRUNE_AT {
            sleepers.retain(|&t| super::tasks::task_in(slots, t).is_some());
        }
        sleepers.push(id);
    }
}

/// Yields once: the task goes to the back of the ready list and the strategy picks again.
pub fn yield_now() -> YieldNow {
    YieldNow { yielded: false }
}

/// Completes on its second poll, after re-queuing itself once.
#[must_use = "futures do nothing unless awaited"]
pub struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checker::Checker;
    use crate::node::NodeClock;
    use crate::run::{simulate, RunConfig};

    /// A skewed node lists its sleepers, to wake them when its clock changes: once the list
    /// is long, the ended ones are dropped from it, however many tasks came and went.
    #[test]
    fn a_skewed_nodes_list_of_sleepers_stays_bounded_as_tasks_come_and_go() {
        let longest = Rc::new(Cell::new(0));
        let seen = longest.clone();
        simulate(&RunConfig::seeded(1), Vec::<Box<dyn Checker<crate::bench::BareTick, ()>>>::new(), move |_| {
            let node = crate::executor::add_node("skewed", None);
            crate::executor::set_clock(node, NodeClock { offset_ns: 0, drift_ppm: 100 });
            // A crowd longer than the list's pruning length, all at once; then a thousand
            // sleepers one after another.
            for _ in 0..300 {
                spawn_on(node, "crowd", async { sleep(Duration::from_millis(1)).await });
            }
            spawn_on(node, "driver", async move {
                sleep(Duration::from_millis(2)).await;
                for _ in 0..1_000 {
                    spawn_on(node, "passer", async { sleep(Duration::from_micros(1)).await });
                    sleep(Duration::from_micros(2)).await;
                    let listed = with_state(|s| s.nodes[node.0 as usize].local_sleepers.len());
                    seen.set(seen.get().max(listed));
                }
            });
        });
        assert!(longest.get() <= LOCAL_SLEEPERS_PRUNE_AT + 1, "{} sleepers listed", longest.get());
    }
}

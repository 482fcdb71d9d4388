//! The single-threaded executor of the simulated world.
//!
//! Tasks are futures owned by nodes. The executor keeps a ready list (in the order tasks
//! became ready) and a timer queue ordered by (deadline, registration order). It polls one
//! ready task at a time, chosen by the run's [`Strategy`]; when nothing is ready, virtual
//! time jumps to the earliest timer. No thread, no wall clock, no OS randomness: the same
//! entropy gives the same sequence of polls.
//!
//! Model code reaches the executor through free functions ([`spawn`], [`sleep`], [`now`],
//! [`choose`], [`kill`], …) that use the executor installed on this thread by
//! [`Executor::enter`]; this is the ambient context of the simulated world, exactly one
//! per thread at a time, so parallel sweeps run one executor per thread.
//!
//! Wakers carry only a task id (slot and generation) and reach the executor through the
//! same thread-local, so waking allocates nothing and a waker of a finished or killed task
//! is harmlessly ignored.
//!
//! The poll loop is the hot path of every sweep (DESIGN §12), so the thread-local is a bare
//! pointer (one load, no lazy-init check, no second `RefCell`), the ready list takes its
//! oldest task without shifting the rest (`ready.rs`), and the timer queue registers a
//! timer without a comparison chain (`timer.rs`).

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};
use std::time::Duration;

use crate::entropy::{Entropy, Stream};
use crate::node::{BootFn, Node, NodeClock, NodeId, NodeStatus};
use crate::ready::ReadyList;
use crate::strategy::{Scheduler, Strategy, StrategyConfig};
use crate::time::SimTime;
use crate::timer::TimerQueue;

/// Upper bound on live tasks at once; more is a runaway spawn loop.
pub const TASKS_MAX: usize = 1 << 20;
/// Upper bound on nodes in one run.
pub const NODES_MAX: usize = 1 << 12;
/// Upper bound on state lanes registered in one run.
pub const LANES_MAX: usize = 1 << 12;

type BoxFuture = Pin<Box<dyn Future<Output = ()>>>;

/// Identifies a task: a slot in the task table and the generation of that slot, so that a
/// stale id (a finished or killed task whose slot was reused) never reaches a new task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TaskId {
    slot: u32,
    generation: u32,
}

impl TaskId {
    /// The slot in the task table (reused after the task ends).
    pub fn slot(self) -> u32 {
        self.slot
    }

    fn pack(self) -> usize {
        ((self.generation as usize) << 32) | self.slot as usize
    }

    fn unpack(bits: usize) -> TaskId {
        TaskId { slot: bits as u32, generation: (bits >> 32) as u32 }
    }

    /// A placeholder id in spare storage; never given to a task (slot `u32::MAX` is past
    /// [`TASKS_MAX`]).
    pub(crate) const FILLER: TaskId = TaskId { slot: u32::MAX, generation: u32::MAX };

    #[cfg(test)]
    pub(crate) fn for_test(slot: u32) -> TaskId {
        TaskId { slot, generation: 0 }
    }
}

/// Identifies a state lane registered with the executor (for hang detection).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LaneKey(pub(crate) u32);

/// A task's name, for hangs and timelines. Most names are literals, which are kept as
/// they are: spawning a task under a literal name allocates nothing for the name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskName {
    /// A literal.
    Static(&'static str),
    /// A name built at run time.
    Shared(Rc<str>),
}

impl std::ops::Deref for TaskName {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            TaskName::Static(name) => name,
            TaskName::Shared(name) => name,
        }
    }
}

impl std::fmt::Display for TaskName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self)
    }
}

impl From<&'static str> for TaskName {
    fn from(name: &'static str) -> Self {
        TaskName::Static(name)
    }
}

impl From<String> for TaskName {
    fn from(name: String) -> Self {
        TaskName::Shared(name.into())
    }
}

impl From<Rc<str>> for TaskName {
    fn from(name: Rc<str>) -> Self {
        TaskName::Shared(name)
    }
}

struct Task {
    future: Option<BoxFuture>,
    node: NodeId,
    name: TaskName,
    /// Daemons (periodic roles) do not keep a run alive and are not named in hangs.
    daemon: bool,
    /// Invariant: true iff the task id is in `ready` or in its node's `held` list.
    queued: bool,
    /// The state lane whose turn this task is executing, if any (the lane marker).
    on_lane: Option<LaneKey>,
    /// The lane this task is waiting to enter or waiting on, for wait-for cycle detection.
    waiting_on_lane: Option<LaneKey>,
}

struct Slot {
    generation: u32,
    task: Option<Task>,
}

/// Bookkeeping for one registered state lane.
pub(crate) struct LaneInfo {
    pub(crate) name: Rc<str>,
    pub(crate) turn_holder: Option<TaskId>,
    pub(crate) turn_started: SimTime,
}

struct State {
    now: SimTime,
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Ready tasks of alive nodes, in the order they became ready (front = oldest, which
    /// is index 0 for the strategy).
    ready: ReadyList,
    /// Earliest deadline first, ties in registration order.
    /// Invariant: every deadline is later than `now` (a due sleep never registers).
    timers: TimerQueue,
    nodes: Vec<Node>,
    entropy: Entropy,
    strategy: Scheduler,
    current: Option<TaskId>,
    /// Count of live non-daemon tasks; the run is finished when it reaches zero.
    live_work: usize,
    polls: u64,
    lanes: Vec<LaneInfo>,
    /// The lanes whose turn is held right now, in the order their turns began (so the
    /// first is the oldest turn, and the stall check after each advance reads one entry).
    /// Invariant: exactly the lanes with a `turn_holder`, ordered by `turn_started`.
    held_lanes: Vec<LaneKey>,
    /// A hang found by a lane (wait-for cycle), reported at the next step.
    hang: Option<(String, Vec<String>)>,
    /// Set by [`finish`]: end the run now, as finished.
    finished: bool,
}

/// What one call to [`Executor::step`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Polled one task.
    Polled,
    /// Nothing was ready; time advanced to the next timer and woke its tasks.
    Advanced,
    /// No non-daemon work is left, or the model called [`finish`].
    Finished,
    /// Work is outstanding but nothing is ready and no timer is set, or a lane found a
    /// wait-for cycle: the message and the stuck tasks.
    Stuck(String, Vec<String>),
}

/// The executor of one run. Create it, [`enter`](Executor::enter) it on this thread, set
/// the world up with the free functions, then [`step`](Executor::step) until done.
pub struct Executor {
    state: Rc<RefCell<State>>,
}

thread_local! {
    /// The entered world's state, or null when none is entered.
    ///
    /// Invariant: non-null only while the [`EnterGuard`] that set it is alive. The guard
    /// owns an `Rc` of the state and nulls this pointer before releasing it, so a non-null
    /// pointer always points at live state. A plain `Cell` of a pointer has no destructor,
    /// so reading it costs one load: no lazy registration check, no `RefCell` flag.
    static CURRENT: Cell<*const RefCell<State>> = const { Cell::new(std::ptr::null()) };
}

/// Restores the thread's executor slot when dropped; returned by [`Executor::enter`].
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

impl Executor {
    /// A new executor drawing from `entropy` and scheduling with `strategy`. Node 0, the
    /// world node, exists from the start.
    pub fn new(mut entropy: Entropy, strategy: StrategyConfig) -> Executor {
        let strategy = strategy.scheduler(&mut entropy);
        let world = Node {
            name: Rc::from("world"),
            incarnation: 0,
            status: NodeStatus::Alive,
            clock: NodeClock::default(),
            boot: None,
            held: Vec::new(),
        };
        let state = State {
            now: SimTime::ZERO,
            slots: Vec::with_capacity(256),
            free: Vec::new(),
            ready: ReadyList::with_capacity(256),
            timers: TimerQueue::default(),
            nodes: vec![world],
            entropy,
            strategy,
            current: None,
            live_work: 0,
            polls: 0,
            lanes: Vec::new(),
            held_lanes: Vec::new(),
            hang: None,
            finished: false,
        };
        Executor { state: Rc::new(RefCell::new(state)) }
    }

    /// Installs this executor as the thread's simulated world until the guard drops.
    ///
    /// Panics if another executor is already entered on this thread.
    pub fn enter(&self) -> EnterGuard {
        assert!(CURRENT.get().is_null(), "an executor is already entered on this thread");
        CURRENT.set(Rc::as_ptr(&self.state));
        EnterGuard { state: self.state.clone() }
    }

    /// Runs one scheduling step: poll one ready task, or advance time to the next timer.
    pub fn step(&self) -> Step {
        let (id, mut future) = {
            let mut s = self.state.borrow_mut();
            if s.hang.is_some() || s.finished || s.live_work == 0 || s.ready.is_empty() {
                return s.step_without_poll();
            }
            let State { ready, strategy, entropy, .. } = &mut *s;
            // One ready task is a forced choice: no draw, and the strategy's step count
            // does not move.
            let index = if ready.len() == 1 { 0 } else { strategy.pick(ready.as_slice(), entropy) };
            debug_assert!(index < ready.len(), "strategy picked outside the ready list");
            let id = ready.remove(index);
            let task = s.task_mut(id).expect("ready tasks are alive");
            task.queued = false;
            let future = task.future.take().expect("a ready task is not being polled");
            s.current = Some(id);
            s.polls += 1;
            (id, future)
        };
        // Dropping one of our wakers does nothing; not dropping it saves a call through the
        // vtable on every poll.
        let waker = std::mem::ManuallyDrop::new(waker_for(id));
        let mut cx = Context::from_waker(&waker);
        let poll = future.as_mut().poll(&mut cx);
        let leftover = {
            let mut s = self.state.borrow_mut();
            s.current = None;
            match poll {
                Poll::Ready(()) => {
                    s.remove_task(id);
                    Some(future)
                }
                Poll::Pending => match s.task_mut(id) {
                    Some(task) => {
                        task.future = Some(future);
                        None
                    }
                    // Killed during its own poll: drop it below, outside the borrow.
                    None => Some(future),
                },
            }
        };
        drop(leftover);
        Step::Polled
    }

    /// The current simulated time.
    pub fn now(&self) -> SimTime {
        self.state.borrow().now
    }

    /// Number of polls so far.
    pub fn polls(&self) -> u64 {
        self.state.borrow().polls
    }

    /// The tape of all draws so far (schedule and model).
    pub fn tape(&self) -> crate::entropy::Tape {
        self.state.borrow().entropy.tape()
    }

    /// The tape of all draws so far, moved out instead of copied: for the end of a run.
    /// The executor records nothing after this; [`Executor::tape`] then starts empty.
    pub fn take_tape(&self) -> crate::entropy::Tape {
        self.state.borrow_mut().entropy.take_tape()
    }

    /// For a replayed run: (tape entries read, tape length).
    pub fn replay_position(&self) -> Option<(usize, usize)> {
        self.state.borrow().entropy.replay_position()
    }

    /// Lanes whose current turn started before `now - bound`: (lane name, task name).
    pub fn stalled_turns(&self, bound: Duration) -> Vec<(String, String)> {
        let s = self.state.borrow();
        let oldest = s.held_lanes.first().map(|key| s.lanes[key.0 as usize].turn_started);
        if oldest.is_none_or(|started| s.now.since(started) <= bound) {
            return Vec::new();
        }
        let mut stalled: Vec<_> = s
            .held_lanes
            .iter()
            .map(|key| (key, &s.lanes[key.0 as usize]))
            .filter_map(|(key, lane)| {
                let holder = lane.turn_holder?;
                (s.now.since(lane.turn_started) > bound).then(|| (*key, lane.name.to_string(), s.describe(holder)))
            })
            .collect();
        // Reported in registration order, whatever order the turns began in.
        stalled.sort_by_key(|(key, _, _)| *key);
        stalled.into_iter().map(|(_, lane, task)| (lane, task)).collect()
    }

    /// Drops every task, outside any borrow. Runs when the executor is dropped too.
    pub fn shutdown(&self) {
        let futures: Vec<BoxFuture> = {
            let mut s = self.state.borrow_mut();
            s.ready.clear();
            s.timers.clear();
            s.slots.iter_mut().filter_map(|slot| slot.task.take().and_then(|t| t.future)).collect()
        };
        drop(futures);
    }
}

impl Drop for Executor {
    fn drop(&mut self) {
        // Futures may hold handles that call back into the executor when dropped.
        if let Ok(s) = self.state.try_borrow() {
            drop(s);
            self.shutdown();
        }
    }
}

/// The live task `id` names in `slots`, if any. A free function over the one field, so that
/// callers can hold other fields of the state at the same time.
#[inline]
fn task_in(slots: &[Slot], id: TaskId) -> Option<&Task> {
    let slot = slots.get(id.slot as usize)?;
    if slot.generation != id.generation {
        return None;
    }
    slot.task.as_ref()
}

/// Queues task `id` if it is alive and not queued yet: on the ready list, or on its node's
/// held list while the node is paused. Over the fields it needs, so that the timer loop can
/// wake tasks while it walks the timer queue. Inlined: it runs once per fired timer.
#[inline(always)]
fn wake_in(slots: &mut [Slot], nodes: &mut [Node], ready: &mut ReadyList, id: TaskId) {
    let Some(slot) = slots.get_mut(id.slot as usize) else { return };
    if slot.generation != id.generation {
        return;
    }
    let Some(task) = slot.task.as_mut() else { return };
    if task.queued {
        return;
    }
    task.queued = true;
    let node = &mut nodes[task.node.0 as usize];
    match node.status {
        NodeStatus::Alive => ready.push_back(id),
        NodeStatus::Paused => node.held.push(id),
        NodeStatus::Dead => unreachable!("a dead node has no tasks"),
    }
}

impl State {
    /// A step that polls nothing: report a hang found by a lane, end the run, or advance
    /// time (or find that nothing can run). Out of line, off the poll path.
    #[cold]
    fn step_without_poll(&mut self) -> Step {
        if let Some((message, stuck)) = self.hang.take() {
            return Step::Stuck(message, stuck);
        }
        if self.finished || self.live_work == 0 {
            return Step::Finished;
        }
        debug_assert!(self.ready.is_empty(), "called only when there is nothing to poll");
        if self.fire_next_timers() {
            Step::Advanced
        } else {
            self.stuck()
        }
    }

    #[inline]
    fn task_mut(&mut self, id: TaskId) -> Option<&mut Task> {
        let slot = self.slots.get_mut(id.slot as usize)?;
        if slot.generation != id.generation {
            return None;
        }
        slot.task.as_mut()
    }

    #[inline]
    fn task(&self, id: TaskId) -> Option<&Task> {
        task_in(&self.slots, id)
    }

    fn describe(&self, id: TaskId) -> String {
        match self.task(id) {
            Some(t) => {
                let node = &self.nodes[t.node.0 as usize];
                let paused = if node.status == NodeStatus::Paused { " (node paused)" } else { "" };
                format!("{}/{}{}", node.name, t.name, paused)
            }
            None => format!("<ended task {}>", id.slot),
        }
    }

    /// Frees the task's slot; the caller drops the future outside the borrow.
    fn remove_task(&mut self, id: TaskId) -> Option<Task> {
        let slot = self.slots.get_mut(id.slot as usize)?;
        if slot.generation != id.generation {
            return None;
        }
        let task = slot.task.take()?;
        slot.generation = slot.generation.wrapping_add(1);
        self.free.push(id.slot);
        if task.queued {
            // It woke itself during its last poll and then ended (or was killed while
            // queued): its id must not stay queued, or a later pick would find no task.
            self.ready.retain(|&queued| queued != id);
            self.nodes[task.node.0 as usize].held.retain(|&queued| queued != id);
        }
        if !task.daemon {
            self.live_work -= 1;
        }
        let lanes = &mut self.lanes;
        self.held_lanes.retain(|key| {
            let lane = &mut lanes[key.0 as usize];
            let held_by_me = lane.turn_holder == Some(id);
            if held_by_me {
                lane.turn_holder = None;
            }
            !held_by_me
        });
        Some(task)
    }

    fn spawn(&mut self, node: NodeId, name: TaskName, daemon: bool, future: BoxFuture) -> TaskId {
        let n = &self.nodes[node.0 as usize];
        assert!(n.status != NodeStatus::Dead, "spawn on dead node {}", n.name);
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                assert!(self.slots.len() < TASKS_MAX, "more than {TASKS_MAX} live tasks");
                self.slots.push(Slot { generation: 0, task: None });
                (self.slots.len() - 1) as u32
            }
        };
        let generation = self.slots[slot as usize].generation;
        let id = TaskId { slot, generation };
        self.slots[slot as usize].task = Some(Task {
            future: Some(future),
            node,
            name,
            daemon,
            queued: false,
            on_lane: None,
            waiting_on_lane: None,
        });
        if !daemon {
            self.live_work += 1;
        }
        let State { strategy, entropy, .. } = self;
        strategy.on_spawn(id, entropy);
        self.wake(id);
        id
    }

    /// Queues the task if it is alive and not queued yet.
    #[inline]
    fn wake(&mut self, id: TaskId) {
        wake_in(&mut self.slots, &mut self.nodes, &mut self.ready, id);
    }

    /// Advances time to the earliest timer and wakes every task due then. False if no timer.
    ///
    /// A deadline whose timers all belong to ended tasks (killed with their node, or
    /// finished before their sleep was due) is no timer at all: it is skipped without moving
    /// time. Otherwise a dead task's long sleep would push time forward for nothing, and
    /// could turn a hang (nothing left that can run) into a spent time budget.
    fn fire_next_timers(&mut self) -> bool {
        while let Some(deadline) = self.timers.take_earliest() {
            let State { timers, slots, nodes, ready, now, .. } = self;
            if timers.due().any(|id| task_in(slots, id).is_some()) {
                debug_assert!(deadline > *now, "timers never lie in the past");
                *now = deadline;
                for id in timers.due() {
                    wake_in(slots, nodes, ready, id);
                }
                timers.release_due();
                return true;
            }
            timers.release_due();
        }
        // Only dead timers were left, and the queue may have moved past `now`: start it
        // again from `now`, so that later timers are measured from the present.
        self.timers.restart_at(self.now);
        false
    }

    fn stuck(&self) -> Step {
        let stuck: Vec<String> = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, slot)| {
                let t = slot.task.as_ref()?;
                (!t.daemon).then(|| self.describe(TaskId { slot: i as u32, generation: slot.generation }))
            })
            .collect();
        Step::Stuck(format!("{} task(s) wait with nothing ready and no timer set", stuck.len()), stuck)
    }
}

// ---------------------------------------------------------------------------------------
// The waker: a task id and the thread-local executor.

static VTABLE: RawWakerVTable = RawWakerVTable::new(waker_clone, waker_wake, waker_wake, waker_drop);

fn waker_for(id: TaskId) -> Waker {
    // SAFETY: the data is a plain integer and the vtable functions never dereference it.
    unsafe { Waker::from_raw(RawWaker::new(id.pack() as *const (), &VTABLE)) }
}

fn waker_clone(data: *const ()) -> RawWaker {
    RawWaker::new(data, &VTABLE)
}

fn waker_wake(data: *const ()) {
    let id = TaskId::unpack(data as usize);
    let state = CURRENT.get();
    if state.is_null() {
        // The world is gone (a future dropped after the run woke a waiter): nothing to do.
        return;
    }
    // SAFETY: non-null means an EnterGuard owning this state is alive (see `CURRENT`).
    unsafe { &*state }.borrow_mut().wake(id);
}

fn waker_drop(_: *const ()) {}

// ---------------------------------------------------------------------------------------
// The ambient API of the simulated world.

#[inline]
fn with_state<R>(f: impl FnOnce(&mut State) -> R) -> R {
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

/// The current simulated time.
pub fn now() -> SimTime {
    with_state(|s| s.now)
}

/// The current task's node's local clock reading (offset and drift applied).
pub fn local_now() -> SimTime {
    with_state(|s| {
        let node = s.current.and_then(|id| s.task(id)).map(|t| t.node).unwrap_or(NodeId::WORLD);
        s.nodes[node.0 as usize].clock.local(s.now)
    })
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

/// The task being polled, if any.
pub fn current_task() -> Option<TaskId> {
    with_state(|s| s.current)
}

/// The node of the task being polled (the world node outside any task).
pub fn current_node() -> NodeId {
    with_state(|s| s.current.and_then(|id| s.task(id)).map(|t| t.node).unwrap_or(NodeId::WORLD))
}

/// The current time and the current task's node, in one look at the world (the trace
/// stamps every event with both).
pub fn stamp() -> (SimTime, NodeId) {
    with_state(|s| (s.now, s.current.and_then(|id| s.task(id)).map(|t| t.node).unwrap_or(NodeId::WORLD)))
}

/// Spawns a task on the current task's node; it keeps the run alive until it ends.
pub fn spawn(name: impl Into<TaskName>, future: impl Future<Output = ()> + 'static) -> TaskId {
    let node = current_node();
    spawn_on(node, name, future)
}

/// Spawns a task on `node`; it keeps the run alive until it ends.
pub fn spawn_on(node: NodeId, name: impl Into<TaskName>, future: impl Future<Output = ()> + 'static) -> TaskId {
    with_state(|s| s.spawn(node, name.into(), false, Box::pin(future)))
}

/// Spawns a daemon on `node`: a periodic role that does not keep the run alive and is not
/// named in a hang (the sweeper, a timer poller, a fault injector).
pub fn spawn_daemon_on(node: NodeId, name: impl Into<TaskName>, future: impl Future<Output = ()> + 'static) -> TaskId {
    with_state(|s| s.spawn(node, name.into(), true, Box::pin(future)))
}

/// Ends the run at the next step, as finished (the checkers' end-of-run phase follows).
pub fn finish() {
    with_state(|s| s.finished = true)
}

/// A future that completes at `now() + duration`.
pub fn sleep(duration: Duration) -> Sleep {
    Sleep { deadline: now().add(duration), registered: false }
}

/// A future that completes at `deadline`.
pub fn sleep_until(deadline: SimTime) -> Sleep {
    Sleep { deadline, registered: false }
}

/// Completes at its deadline. Registers its timer on first poll; a spurious wake re-checks.
#[must_use = "futures do nothing unless awaited"]
pub struct Sleep {
    deadline: SimTime,
    registered: bool,
}

impl Future for Sleep {
    type Output = ();

    #[inline]
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        let deadline = self.deadline;
        if with_state(|s| s.now >= deadline) {
            return Poll::Ready(());
        }
        if !self.registered {
            register_timer(deadline);
            self.registered = true;
        }
        Poll::Pending
    }
}

/// Sets a timer for the current task. Out of line: the check before it is inlined into
/// every `.await` on a sleep, and should stay small there.
#[inline(never)]
fn register_timer(deadline: SimTime) {
    with_state(|s| {
        let id = s.current.expect("sleep polled outside a task");
        s.timers.push(deadline, id);
    })
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

// --- nodes ---------------------------------------------------------------------------------

/// Adds a node (alive, incarnation 0, true clock). Its boot function, if given, runs now
/// and again at every restart; it spawns the node's tasks.
pub fn add_node(name: impl Into<Rc<str>>, boot: Option<BootFn>) -> NodeId {
    let id = with_state(|s| {
        assert!(s.nodes.len() < NODES_MAX, "more than {NODES_MAX} nodes");
        s.nodes.push(Node {
            name: name.into(),
            incarnation: 0,
            status: NodeStatus::Alive,
            clock: NodeClock::default(),
            boot: boot.clone(),
            held: Vec::new(),
        });
        NodeId((s.nodes.len() - 1) as u32)
    });
    if let Some(boot) = boot {
        boot(id);
    }
    id
}

/// The node's name.
pub fn node_name(node: NodeId) -> Rc<str> {
    with_state(|s| s.nodes[node.0 as usize].name.clone())
}

/// Every node's name so far, indexed by [`NodeId`] (the world node first). For stories and
/// timelines, which name nodes after the run.
pub fn node_names() -> Vec<Rc<str>> {
    with_state(|s| s.nodes.iter().map(|n| n.name.clone()).collect())
}

/// The node's status.
pub fn node_status(node: NodeId) -> NodeStatus {
    with_state(|s| s.nodes[node.0 as usize].status)
}

/// The node's incarnation: 0 at creation, +1 at every restart.
pub fn incarnation(node: NodeId) -> u32 {
    with_state(|s| s.nodes[node.0 as usize].incarnation)
}

/// Sets the node's clock offset and drift (clock-skew faults).
pub fn set_clock(node: NodeId, clock: NodeClock) {
    with_state(|s| s.nodes[node.0 as usize].clock = clock)
}

/// The node's clock parameters.
pub fn clock(node: NodeId) -> NodeClock {
    with_state(|s| s.nodes[node.0 as usize].clock)
}

/// Kills the node: every task of it is dropped at once and no exit path runs. Killing the
/// node of the running task takes effect for that task at its next await. Killing a dead
/// node does nothing; the world node cannot be killed.
pub fn kill(node: NodeId) {
    assert!(node != NodeId::WORLD, "the world node cannot be killed");
    let dropped: Vec<Task> = with_state(|s| {
        let n = &mut s.nodes[node.0 as usize];
        if n.status == NodeStatus::Dead {
            return Vec::new();
        }
        n.status = NodeStatus::Dead;
        n.held.clear();
        let ids: Vec<TaskId> = s
            .slots
            .iter()
            .enumerate()
            .filter(|(_, slot)| slot.task.as_ref().is_some_and(|t| t.node == node))
            .map(|(i, slot)| TaskId { slot: i as u32, generation: slot.generation })
            .collect();
        s.ready.retain(|id| !ids.contains(id));
        for &id in &ids {
            // Taken off the ready list (and `held`) above, all at once.
            s.task_mut(id).expect("listed just above").queued = false;
        }
        ids.into_iter().filter_map(|id| s.remove_task(id)).collect()
    });
    drop(dropped);
}

/// Restarts a dead node as a new incarnation (its clock kept) and runs its boot function.
pub fn restart(node: NodeId) {
    let boot = with_state(|s| {
        let n = &mut s.nodes[node.0 as usize];
        assert!(n.status == NodeStatus::Dead, "restart of node {} which is not dead", n.name);
        n.status = NodeStatus::Alive;
        n.incarnation += 1;
        n.boot.clone()
    });
    if let Some(boot) = boot {
        boot(node);
    }
}

/// Freezes the node: its tasks are not polled and its timers are held until [`resume`].
pub fn pause(node: NodeId) {
    assert!(node != NodeId::WORLD, "the world node cannot be paused");
    with_state(|s| {
        if s.nodes[node.0 as usize].status != NodeStatus::Alive {
            return;
        }
        let (mine, others): (Vec<TaskId>, Vec<TaskId>) =
            s.ready.as_slice().iter().partition(|id| s.task(**id).is_some_and(|t| t.node == node));
        s.ready.clear();
        s.ready.extend(others);
        let n = &mut s.nodes[node.0 as usize];
        n.status = NodeStatus::Paused;
        n.held = mine;
    })
}

/// Unfreezes a paused node: tasks woken meanwhile become ready, in wake order.
pub fn resume(node: NodeId) {
    with_state(|s| {
        let n = &mut s.nodes[node.0 as usize];
        if n.status != NodeStatus::Paused {
            return;
        }
        n.status = NodeStatus::Alive;
        let held = std::mem::take(&mut n.held);
        s.ready.extend(held);
    })
}

// --- lane bookkeeping (used by `lane.rs`) ------------------------------------------------

/// Registers a state lane for hang detection.
pub(crate) fn register_lane(name: Rc<str>) -> LaneKey {
    with_state(|s| {
        assert!(s.lanes.len() < LANES_MAX, "more than {LANES_MAX} state lanes");
        s.lanes.push(LaneInfo { name, turn_holder: None, turn_started: SimTime::ZERO });
        LaneKey((s.lanes.len() - 1) as u32)
    })
}

/// The lane whose turn the current task is executing.
pub(crate) fn current_lane() -> Option<LaneKey> {
    with_state(|s| s.current.and_then(|id| s.task(id)).and_then(|t| t.on_lane))
}

/// Marks the current task as executing a turn of `lane` (or none).
pub(crate) fn set_turn(lane: LaneKey, holder: Option<TaskId>) {
    with_state(|s| {
        let now = s.now;
        let was_held = s.lanes[lane.0 as usize].turn_holder.is_some();
        if let Some(old) = s.lanes[lane.0 as usize].turn_holder.take() {
            if let Some(t) = s.task_mut(old) {
                t.on_lane = None;
            }
        }
        if let Some(id) = holder {
            if let Some(t) = s.task_mut(id) {
                t.on_lane = Some(lane);
            }
        }
        let info = &mut s.lanes[lane.0 as usize];
        info.turn_holder = holder;
        info.turn_started = now;
        if was_held {
            s.held_lanes.retain(|&key| key != lane);
        }
        if holder.is_some() {
            // The turn (re)starts now: it is the newest.
            s.held_lanes.push(lane);
        }
    })
}

/// Gives `task` the marker of `lane` without making it the turn holder (a broken lane
/// that lets its marker leak to other tasks, for tests).
pub(crate) fn leak_marker(task: TaskId, lane: Option<LaneKey>) {
    with_state(|s| {
        if let Some(t) = s.task_mut(task) {
            t.on_lane = lane;
        }
    })
}

/// Records that the current task waits on `lane` (or nothing). If that closes a wait-for
/// cycle among lane turns, the run ends as a hang naming the cycle.
pub(crate) fn set_waiting_on_lane(lane: Option<LaneKey>) {
    with_state(|s| {
        let Some(me) = s.current else { return };
        if let Some(t) = s.task_mut(me) {
            t.waiting_on_lane = lane;
        }
        let Some(start) = lane else { return };
        // Follow holder -> the lane it waits on; reaching `me` again is a cycle. Names are
        // only gathered once a cycle is found, so the common case allocates nothing.
        let mut lane = start;
        let mut hops = 0;
        loop {
            let Some(holder) = s.lanes[lane.0 as usize].turn_holder else { return };
            if holder == me {
                break;
            }
            match s.task(holder).and_then(|t| t.waiting_on_lane) {
                Some(next) if hops < s.lanes.len() => {
                    lane = next;
                    hops += 1;
                }
                _ => return,
            }
        }
        let mut chain = vec![s.lanes[start.0 as usize].name.to_string()];
        let mut lane = start;
        for _ in 0..hops {
            let holder = s.lanes[lane.0 as usize].turn_holder.expect("walked above");
            lane = s.task(holder).and_then(|t| t.waiting_on_lane).expect("walked above");
            chain.push(s.lanes[lane.0 as usize].name.to_string());
        }
        let message = format!("wait-for cycle between lane turns: {}", chain.join(" -> "));
        let stuck = vec![s.describe(me)];
        s.hang = Some((message, stuck));
    })
}

/// The name of a lane.
pub(crate) fn lane_name(lane: LaneKey) -> Rc<str> {
    with_state(|s| s.lanes[lane.0 as usize].name.clone())
}

//! The run loop: [`Executor`], which owns one world and steps it, one poll or one jump of
//! time at a time.
//!
//! Each step either polls one ready task, chosen by the run's strategy (a forced choice
//! when only one is ready, so no draw), or, when nothing is ready, jumps virtual time to
//! the earliest timer and wakes its tasks. This is the hot path of every sweep
//! (DESIGN §12): the ready list takes its oldest task without shifting the rest
//! (`ready.rs`), the timer queue registers a timer without a comparison chain
//! (`timer.rs`), and everything that is not a poll is out of line.

use std::cell::RefCell;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::entropy::{Entropy, Tape};
use crate::ids::TaskId;
use crate::node::NodeId;
use crate::strategy::{Strategy, StrategyConfig};
use crate::time::SimTime;

use super::ambient::LOG_TARGET;
use super::ambient::{self, EnterGuard};
use super::state::{BoxFuture, State};
use super::tasks::wake_in;
use super::wakers::waker_for;

/// What one call to [`Executor::step`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Polled one task.
    Polled,
    /// Nothing was ready; time advanced to the next timer and woke its tasks.
    Advanced,
    /// No non-daemon work is left, or the model called [`finish`](super::finish).
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

impl Executor {
    /// A new executor drawing from `entropy` and scheduling with `strategy`. Node 0, the
    /// world node, exists from the start.
    pub fn new(entropy: Entropy, strategy: StrategyConfig) -> Executor {
        Executor { state: Rc::new(RefCell::new(State::new(entropy, strategy))) }
    }

    /// Installs this executor as the thread's simulated world until the guard drops.
    ///
    /// Panics if another executor is already entered on this thread.
    pub fn enter(&self) -> EnterGuard {
        ambient::enter(&self.state)
    }

    /// Runs one scheduling step: poll one ready task, or advance time to the next timer.
    pub fn step(&self) -> Step {
        let (id, mut future) = {
            let mut s = self.state.borrow_mut();
            if s.hang.is_some() || s.finished || s.live_work == 0 || s.ready.is_empty() {
                return s.step_without_poll();
            }
            if s.entropy.draws() >= s.switch_at {
                s.switch_strategy();
            }
            let State { ready, strategy, entropy, .. } = &mut *s;
            // One ready task is a forced choice: no draw, and the strategy's step count
            // does not move.
            let index = if ready.len() == 1 { 0 } else { strategy.pick(ready.as_slice(), entropy) };
            debug_assert!(index < ready.len(), "strategy picked outside the ready list");
            let id = ready.remove(index);
            debug_assert!(s.current.is_none(), "one task is polled at a time");
            let task = s.task_mut(id).expect("ready tasks are alive");
            debug_assert!(task.queued, "a task on the ready list is marked queued");
            task.queued = false;
            let future = task.future.take().expect("a ready task is not being polled");
            let node = task.node;
            // The environment's promise: a paused node runs nothing until resumed.
            super::honesty::check_polled_node(&s, id, node);
            s.current = Some(id);
            s.current_node = node;
            s.polls += 1;
            (id, future)
        };
        // Dropping one of our wakers does nothing; not dropping it saves a call through the
        // vtable on every poll.
        let waker = std::mem::ManuallyDrop::new(waker_for(id));
        let mut cx = Context::from_waker(&waker);
        let poll = future.as_mut().poll(&mut cx);
        if poll.is_ready() {
            log_task_end(id);
        }
        let leftover = {
            let mut s = self.state.borrow_mut();
            s.current = None;
            s.current_node = NodeId::WORLD;
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

    /// The tape of all draws so far, moved out instead of copied: for the end of a run.
    /// The executor records nothing after this.
    pub fn take_tape(&self) -> Tape {
        self.state.borrow_mut().entropy.take_tape()
    }

    /// Starts collecting coverage marks ([`crate::marks`]); off by default.
    pub fn collect_marks(&self) {
        self.state.borrow_mut().marks = Some(Box::new(crate::marks::MarkLog::new()));
    }

    /// The marks collected so far, moved out (empty unless [`Executor::collect_marks`]).
    pub fn take_marks(&self) -> Vec<crate::marks::Mark> {
        self.state.borrow_mut().marks.as_mut().map(|log| std::mem::take(&mut log.marks)).unwrap_or_default()
    }

    /// For a replayed run: (tape entries read, tape length).
    pub fn replay_position(&self) -> Option<(usize, usize)> {
        self.state.borrow().entropy.replay_position()
    }

    /// True if some lane's current turn started before `now - bound`: whether
    /// [`Executor::stalled_turns`] would name any, without building the list.
    #[inline]
    pub fn turn_held_past(&self, bound: Duration) -> bool {
        self.state.borrow().turn_held_past(bound)
    }

    /// Lanes whose current turn started before `now - bound`: (lane name, task name).
    pub fn stalled_turns(&self, bound: Duration) -> Vec<(String, String)> {
        self.state.borrow().stalled_turns(bound)
    }

    /// Drops every task, outside any borrow. Runs when the executor is dropped too.
    pub fn shutdown(&self) {
        let futures: Vec<BoxFuture> = {
            let mut s = self.state.borrow_mut();
            s.ready.clear();
            s.timers.clear();
            // A poll that panicked left its task current; the task goes now.
            s.current_node = NodeId::WORLD;
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

/// A trace-level record of a task that ended by itself (a killed node's tasks are counted
/// in its kill record instead). Emitted between the poll and the task's removal, when the
/// task is still the current one and the state is not borrowed, so that a subscriber can
/// stamp it. Out of line: it runs once per task, not once per poll.
#[inline(never)]
fn log_task_end(id: TaskId) {
    tracing::trace!(target: LOG_TARGET, node = %ambient::task_node_name(id), task = %ambient::task_name(id), "task ended");
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
            // The environment's promise: every kill of the instant just left was witnessed
            // (its events were judged after the poll that made them).
            super::honesty::check_kills_witnessed(self);
            Step::Advanced
        } else {
            self.stuck()
        }
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
            // One walk wakes the live tasks and finds whether there were any: waking a
            // task reads nothing of the time, and waking an ended one does nothing.
            let mut live = false;
            for id in timers.due() {
                live |= wake_in(slots, nodes, ready, id);
            }
            timers.release_due();
            if live {
                debug_assert!(deadline > *now, "timers never lie in the past");
                *now = deadline;
                return true;
            }
        }
        // Only dead timers were left, and the queue may have moved past `now`: start it
        // again from `now`, so that later timers are measured from the present.
        self.timers.restart_at(self.now);
        false
    }

    /// A hang: every live non-daemon task, named.
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
        debug_assert!(stuck.len() == self.live_work, "live work counts every live non-daemon task");
        Step::Stuck(format!("{} task(s) wait with nothing ready and no timer set", stuck.len()), stuck)
    }
}

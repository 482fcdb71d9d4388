//! Environment honesty: the executor asserts the promises the simulated environment makes
//! to the model, where it keeps them.
//!
//! The fault injector has lied before — a node killed with no crash witness, a clock behind
//! simulated time freezing every timer on its node — and only a downstream checker noticed,
//! by luck. A checker judges the model; nothing judged the environment. So the executor
//! answers for itself:
//!
//! - **A kill is witnessed.** Every kill of a node is followed, before simulated time moves
//!   on, by an event that witnesses the end of the process on that node (a crash, a stop),
//!   for a model that declares such events ([`crate::EventKind::NODE_END_TAGS`]): without
//!   one, every checker that reasons about a process's end is blind to it.
//! - **A sleep keeps its length.** A sleep of `d` by a node's clock falls due within
//!   `(d + S) / (1 − m)` of simulated time and not before `(d − S) / (1 + m)`, where `m` is
//!   the largest rate error the clock ever had and `S` the sum of the clock's steps since
//!   the sleep began (a step back delays a sleep by at most its size, a step forward ends
//!   it early by at most its size), give or take the few nanoseconds the clock's integer
//!   arithmetic rounds ([`ROUNDING_NS`]). A pause of the node delays the sleep's end, but
//!   not its deadline, so it needs no allowance here.
//! - **A paused node runs nothing.** No task of a node that is not alive is polled.
//!
//! A broken promise is a framework bug, never a model bug: it panics with a message that
//! says so ([`BROKEN_PROMISE`]), which the runner reports as a crash verdict with the seed,
//! like every other assertion of the executor. The checks sit off the hot path: a sleep on
//! an exact clock passes them with one comparison, a kill costs a push, and the events are
//! looked at only by tag.
//!
//! Tests plant each lie ([`Lies`], test builds only) and see it caught.

use crate::ids::TaskId;
use crate::node::{Node, NodeId, NodeStatus};
use crate::time::{format_duration, SimTime};

use super::ambient::with_state;
use super::state::State;

/// How every broken promise of the environment begins, so that a report tells a framework
/// bug from a model that panicked.
pub const BROKEN_PROMISE: &str = "framework bug: the simulated environment broke its promise";

/// The nanoseconds a sleep's bounds allow for rounding: a clock's reading truncates its
/// drift term, once at each end of a span and once per step.
const ROUNDING_NS: u64 = 4;

/// Parts per million.
const PPM: u128 = 1_000_000;

/// Panics with the broken promise `what`.
#[cold]
#[inline(never)]
fn broken(what: String) -> ! {
    panic!("{BROKEN_PROMISE}: {what}")
}

/// Where a sleep by a node's clock began, to hold its deadline and its end to the bounds.
#[derive(Clone, Copy, Debug)]
pub(super) struct SleepOrigin {
    /// The simulated instant the sleep began.
    start: SimTime,
    /// Its length by the node's clock, in nanoseconds.
    length: u64,
    /// The node's [`Node::clock_steps_ns`] when it began.
    steps_before: u64,
}

impl SleepOrigin {
    /// The origin of a sleep until an instant of simulated time, which no clock measures
    /// and nothing checks.
    pub(super) const UNCHECKED: SleepOrigin = SleepOrigin { start: SimTime::ZERO, length: 0, steps_before: 0 };

    /// A sleep of `length` nanoseconds on `node`, beginning at `now`.
    #[inline]
    pub(super) fn new(node: &Node, now: SimTime, length: u64) -> SleepOrigin {
        SleepOrigin { start: now, length, steps_before: node.clock_steps_ns }
    }

    /// When the sleep would end by a clock that reads simulated time.
    #[inline]
    fn nominal_end(&self) -> u64 {
        self.start.0.saturating_add(self.length)
    }

    /// The shortest and longest simulated spans the sleep may last on `node` as it is now.
    fn bounds(&self, node: &Node) -> (u64, u64) {
        let steps = u128::from(node.clock_steps_ns.saturating_sub(self.steps_before));
        let drift = u128::from(node.drift_max_ppm);
        let length = u128::from(self.length);
        let rounding = u128::from(ROUNDING_NS);
        let shortest = length.saturating_sub(steps + rounding) * PPM / (PPM + drift);
        // A clock that runs forwards has drift below 1,000,000 ppm (`set_clock` asserts it).
        let slowest_rate = PPM - drift.min(PPM - 1);
        let longest = ((length + steps + rounding) * PPM).div_ceil(slowest_rate);
        (saturate(shortest), saturate(longest))
    }

    /// Asserts that a timer for this sleep at `deadline` lies within its bounds.
    #[inline]
    pub(super) fn check_deadline(&self, deadline: SimTime, node: &Node) {
        if deadline.0 > self.nominal_end() {
            self.check_late(deadline, node);
        }
    }

    /// Asserts that the sleep ending at `now` lasted at least its shortest span.
    #[inline]
    pub(super) fn check_end(&self, now: SimTime, node: &Node) {
        if now.0 < self.nominal_end() {
            self.check_early(now, node);
        }
    }

    #[cold]
    #[inline(never)]
    fn check_late(&self, deadline: SimTime, node: &Node) {
        let (_, longest) = self.bounds(node);
        let span = deadline.0.saturating_sub(self.start.0);
        if span > longest {
            broken(format!(
                "a sleep of {} on node {} begun at {} was set to fall due at {}, after {} of simulated time, longer \
                 than the {} its clock allows (drift up to {} ppm, clock steps of {} since it began)",
                nanos(self.length),
                node.name,
                self.start,
                deadline,
                nanos(span),
                nanos(longest),
                node.drift_max_ppm,
                nanos(node.clock_steps_ns.saturating_sub(self.steps_before)),
            ));
        }
    }

    #[cold]
    #[inline(never)]
    fn check_early(&self, now: SimTime, node: &Node) {
        let (shortest, _) = self.bounds(node);
        let span = now.0.saturating_sub(self.start.0);
        if span < shortest {
            broken(format!(
                "a sleep of {} on node {} begun at {} ended at {}, after {} of simulated time, shorter than the {} \
                 its clock allows (drift up to {} ppm, clock steps of {} since it began)",
                nanos(self.length),
                node.name,
                self.start,
                now,
                nanos(span),
                nanos(shortest),
                node.drift_max_ppm,
                nanos(node.clock_steps_ns.saturating_sub(self.steps_before)),
            ));
        }
    }
}

/// A span of nanoseconds, written like a scenario's durations.
fn nanos(n: u64) -> String {
    format_duration(std::time::Duration::from_nanos(n))
}

fn saturate(n: u128) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// Accounts for a change of `node`'s clock at `now` from `old` to `new`: the jump of its
/// reading joins the node's steps, the new drift its largest.
pub(super) fn clock_changed(node: &mut Node, now: SimTime, old: crate::node::NodeClock, new: crate::node::NodeClock) {
    let jump = (new.reading(now) - old.reading(now)).unsigned_abs();
    node.clock_steps_ns = node.clock_steps_ns.saturating_add(u64::try_from(jump).unwrap_or(u64::MAX));
    node.drift_max_ppm = node.drift_max_ppm.max(new.drift_ppm.unsigned_abs());
}

/// Asserts that task `id`, about to be polled, belongs to an alive node.
#[inline]
pub(super) fn check_polled_node(s: &State, id: TaskId, node: NodeId) {
    if s.nodes[node.0 as usize].status != NodeStatus::Alive {
        polled_off_an_alive_node(s, id);
    }
}

#[cold]
#[inline(never)]
fn polled_off_an_alive_node(s: &State, id: TaskId) -> ! {
    broken(format!("task {} was polled while its node is not alive (at {})", s.describe(id), s.now))
}

/// Notes that `node` was killed now, to be witnessed before time moves on (only when the
/// run's model witnesses kills: [`expect_kill_witnesses`]).
pub(super) fn kill_recorded(s: &mut State, node: NodeId) {
    if s.kill_witnesses {
        s.unwitnessed_kills.push((node, s.now));
    }
}

/// From now on, every kill must be witnessed by an event that [`witness_node_end`] reports.
pub(crate) fn expect_kill_witnesses() {
    with_state(|s| s.kill_witnesses = true);
}

/// An event witnessed the end of the process on `node`: it accounts for that node's oldest
/// kill not yet witnessed, if any.
pub(crate) fn witness_node_end(node: NodeId) {
    with_state(|s| {
        if let Some(i) = s.unwitnessed_kills.iter().position(|&(killed, _)| killed == node) {
            s.unwitnessed_kills.remove(i);
        }
    });
}

/// Asserts that every kill of an instant before now was witnessed. Asked by the executor
/// itself each time it moves time on, where it holds the state already: from the runner,
/// the same look cost a call and a borrow of the world on every advance (0.45% of a smoke
/// sweep's instructions), nearly always to find no kill at all.
#[inline]
pub(super) fn check_kills_witnessed(s: &State) {
    if !s.unwitnessed_kills.is_empty() {
        check_listed_kills_witnessed(s);
    }
}

#[cold]
#[inline(never)]
fn check_listed_kills_witnessed(s: &State) {
    if let Some(&(node, at)) = s.unwitnessed_kills.iter().find(|(_, at)| *at < s.now) {
        broken(format!(
            "node {} was killed at {} and no crash or stop of the process on it was witnessed before time moved on \
             to {}",
            s.nodes[node.0 as usize].name, at, s.now
        ));
    }
}

/// Lies a test can plant in the environment, each breaking one promise, to see it caught.
#[cfg(test)]
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Lies {
    /// Sleeps on a skewed clock measure their length from its clamped reading (the old
    /// bug: a clock behind simulated time reads 0, so every sleep waits for it to get there).
    pub(super) clamped_clock_sleeps: bool,
    /// A pause leaves the node's ready tasks on the ready list, to run while it is paused.
    pub(super) pause_leaves_ready: bool,
    /// A sleep falls due after half its length.
    pub(super) halved_sleeps: bool,
    /// A sleep falls due this many nanoseconds before its length.
    pub(super) sleeps_early_ns: u64,
}

/// Plants `lies` in the entered world.
#[cfg(test)]
pub(super) fn plant(lies: Lies) {
    with_state(|s| s.lies = lies);
}

#[cfg(test)]
mod tests;

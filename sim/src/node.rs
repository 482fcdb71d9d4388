//! Nodes: the processes of the simulated world (a replica, a pull worker, the broker).
//!
//! A node owns tasks and a local clock. It can be killed (every task dropped at once, no
//! exit path runs), restarted (a new incarnation runs the node's boot function), paused
//! (its tasks are not polled and its timers are held) and resumed. The local clock is the
//! simulated time seen through the node's offset and drift, so clock-skew faults are data.

use std::rc::Rc;

use serde::{Deserialize, Serialize};

use crate::time::SimTime;

/// Identifies a node for the lifetime of a run (across incarnations).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The world node: the environment (fault injectors, drivers). Never killed or paused.
    pub const WORLD: NodeId = NodeId(0);
}

/// Whether a node's tasks run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum NodeStatus {
    /// Running normally.
    Alive,
    /// Frozen: not polled, timers held, resumes where it was.
    Paused,
    /// Killed: its tasks were dropped; only a restart brings it back.
    Dead,
}

/// A node's view of time: `local = sim + offset + sim * drift_ppm / 1e6`. Its reading
/// ([`NodeClock::local`]) is never negative — a clock behind simulated time reads 0 early
/// in the run — but the clock still runs from the start: the node's timers measure their
/// spans on the unclamped reading ([`NodeClock::reading`]), so a sleep on a clock behind
/// simulated time lasts its length instead of waiting for the clock to reach zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeClock {
    /// Constant offset from simulated time, in nanoseconds (may be negative).
    pub offset_ns: i64,
    /// Rate error in parts per million (positive runs fast).
    pub drift_ppm: i32,
}

impl NodeClock {
    /// The clock of a node with no skew: its reading is simulated time.
    pub const EXACT: NodeClock = NodeClock { offset_ns: 0, drift_ppm: 0 };

    /// True if the clock reads simulated time exactly (the usual node: sleeps on it need
    /// no conversion).
    #[inline]
    pub fn is_exact(&self) -> bool {
        self.offset_ns == 0 && self.drift_ppm == 0
    }

    /// The earliest simulated instant at which this clock reads `local` or later (the
    /// instant a local deadline falls due). `SimTime(u64::MAX)` if it never does.
    ///
    /// The clock must run forwards (`drift_ppm > -1_000_000`), which makes its reading
    /// monotone, so the answer is found by inverting the formula and correcting its
    /// rounding by a step or two ([`NodeClock::sim_at_reading`]).
    pub fn sim_at(&self, local: SimTime) -> SimTime {
        if self.is_exact() {
            return local;
        }
        // The reading is clamped at 0: a deadline of 0 is read from the start.
        if local == SimTime::ZERO {
            return SimTime::ZERO;
        }
        self.sim_at_reading(i128::from(local.0))
    }

    /// The earliest simulated instant at which the unclamped reading ([`NodeClock::reading`])
    /// is `reading` or more: when a timer measured on this clock falls due.
    /// `SimTime(u64::MAX)` if it never does.
    pub fn sim_at_reading(&self, reading: i128) -> SimTime {
        assert!(self.drift_ppm > -1_000_000, "a clock with drift {} ppm does not run forwards", self.drift_ppm);
        if self.reading(SimTime::ZERO) >= reading {
            return SimTime::ZERO;
        }
        let rate = 1_000_000 + i128::from(self.drift_ppm);
        let guess = divide((reading - i128::from(self.offset_ns)) * 1_000_000, rate);
        let mut t = guess.clamp(0, i128::from(u64::MAX)) as u64;
        // Rounding leaves the guess at most a few nanoseconds off, either way.
        while self.reading(SimTime(t)) < reading {
            if t == u64::MAX {
                return SimTime(u64::MAX);
            }
            t += 1;
        }
        while t > 0 && self.reading(SimTime(t - 1)) >= reading {
            t -= 1;
        }
        SimTime(t)
    }

    /// The local reading at simulated instant `now`, clamped at 0 (a clock behind simulated
    /// time reads 0 early in the run).
    #[inline]
    pub fn local(&self, now: SimTime) -> SimTime {
        if self.is_exact() {
            return now;
        }
        SimTime(self.reading(now).clamp(0, i128::from(u64::MAX)) as u64)
    }

    /// The unclamped reading at simulated instant `now`, in nanoseconds: negative early in
    /// the run on a clock behind simulated time. It never decreases and advances with `now`
    /// from the start (the clock runs forwards), which is what a timer measured on the clock
    /// needs: a clamped reading stands still at 0, and would stretch every sleep taken
    /// meanwhile until the clock reached zero.
    #[inline]
    pub fn reading(&self, now: SimTime) -> i128 {
        let sim = i128::from(now.0);
        sim + i128::from(self.offset_ns) + drift_term(now.0, self.drift_ppm)
    }
}

/// `sim * drift_ppm / 1e6`, truncated toward zero. Every sleep on a skewed clock reads it a
/// few times, and a 128-bit division is a call into the compiler's runtime (a tenth of
/// the instructions a sleep costs), so the product is divided in 64 bits whenever it fits
/// there — always, for a run shorter than 25 simulated hours at the largest drift the
/// scenarios accept (10%) — which truncates alike and gives the same answer.
#[inline]
fn drift_term(sim: u64, drift_ppm: i32) -> i128 {
    match i64::try_from(sim).ok().and_then(|sim| sim.checked_mul(i64::from(drift_ppm))) {
        Some(product) => i128::from(product / 1_000_000),
        None => i128::from(sim) * i128::from(drift_ppm) / 1_000_000,
    }
}

/// `numerator / denominator`, truncated toward zero, in 64 bits when both fit (as
/// [`drift_term`], for the same reason).
#[inline]
fn divide(numerator: i128, denominator: i128) -> i128 {
    match (i64::try_from(numerator), i64::try_from(denominator)) {
        (Ok(n), Ok(d)) if d != 0 && !(n == i64::MIN && d == -1) => i128::from(n / d),
        _ => numerator / denominator,
    }
}

/// The function that starts a node's tasks, run at creation and at every restart.
pub type BootFn = Rc<dyn Fn(NodeId)>;

pub(crate) struct Node {
    pub(crate) name: Rc<str>,
    /// Invariant: incremented exactly once per restart; never decreases.
    pub(crate) incarnation: u32,
    pub(crate) status: NodeStatus,
    pub(crate) clock: NodeClock,
    pub(crate) boot: Option<BootFn>,
    /// Tasks woken while the node was paused, in wake order; empty unless paused.
    pub(crate) held: Vec<crate::ids::TaskId>,
    /// Tasks that set a timer by this node's clock since its clock last changed: woken
    /// when it changes, to measure their deadlines again (a step forward ends them early).
    /// Some may have stopped sleeping meanwhile; they get a spurious wake, which every
    /// future tolerates.
    pub(crate) local_sleepers: Vec<crate::ids::TaskId>,
    /// The sum of every step of this node's clock so far (the jump of its reading at each
    /// [`crate::executor::set_clock`], either way), in nanoseconds, saturating: what a sleep
    /// on the node may be moved by (`executor/honesty.rs`). Never decreases.
    pub(crate) clock_steps_ns: u64,
    /// The largest rate error this node's clock ever had, in ppm either way: the slowest
    /// and fastest a sleep on it may run. Never decreases.
    pub(crate) drift_max_ppm: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_applies_offset_and_drift() {
        let c = NodeClock { offset_ns: 5_000, drift_ppm: 1_000 };
        assert_eq!(c.local(SimTime(1_000_000)), SimTime(1_000_000 + 5_000 + 1_000));
        let behind = NodeClock { offset_ns: -10, drift_ppm: 0 };
        assert_eq!(behind.local(SimTime(3)), SimTime(0));
        // The reading under the clamp still runs.
        assert_eq!(behind.reading(SimTime(3)), -7);
        assert_eq!(behind.reading(SimTime(4)), -6);
    }

    #[test]
    fn the_64_bit_drift_term_and_division_agree_with_128_bits() {
        let sims = [0u64, 1, 999_999, 1_000_001, 12_345_678_901, i64::MAX as u64 / 7, i64::MAX as u64, u64::MAX];
        let drifts = [0i32, 1, -1, 200, -200, 999_999, -999_999, i32::MAX, i32::MIN];
        for sim in sims {
            for drift in drifts {
                let wide = i128::from(sim) * i128::from(drift) / 1_000_000;
                assert_eq!(super::drift_term(sim, drift), wide, "{sim} x {drift}");
            }
        }
        let numerators =
            [0i128, 7, -7, 1_000_000, -12_000_000_000_000_000, i128::from(i64::MAX) + 1, i128::from(i64::MIN)];
        for n in numerators {
            for d in [1i128, -1, 3, 1_000_200, 999_800, 1, i128::from(i64::MAX) + 5] {
                assert_eq!(super::divide(n, d), n / d, "{n} / {d}");
            }
        }
    }

    #[test]
    fn sim_at_reading_finds_a_negative_reading_of_a_clock_behind_simulated_time() {
        let behind = NodeClock { offset_ns: -12_000_000_000, drift_ppm: -200 };
        for reading in [-11_999_999_999i128, -11_000_000_000, -1, 0, 1, 1_000_000_000] {
            let at = behind.sim_at_reading(reading);
            assert!(behind.reading(at) >= reading, "{reading}");
            assert!(at.0 == 0 || behind.reading(SimTime(at.0 - 1)) < reading, "{reading}");
        }
        // Already read at the start: due at once.
        assert_eq!(behind.sim_at_reading(-12_000_000_000), SimTime::ZERO);
        // A deadline of 0 by the clamped reading is read from the start, as before.
        assert_eq!(behind.sim_at(SimTime::ZERO), SimTime::ZERO);
    }

    #[test]
    fn sim_at_is_the_earliest_instant_the_clock_reads_a_local_deadline() {
        let clocks = [
            NodeClock::EXACT,
            NodeClock { offset_ns: 12_000_000_000, drift_ppm: 200 },
            NodeClock { offset_ns: -12_000_000_000, drift_ppm: -200 },
            NodeClock { offset_ns: 7, drift_ppm: -1 },
            NodeClock { offset_ns: -3, drift_ppm: 999 },
        ];
        for clock in clocks {
            for local in [0u64, 1, 999, 1_000_000, 250_000_000, 12_000_000_001, 3_600_000_000_000] {
                let at = clock.sim_at(SimTime(local));
                assert!(clock.local(at) >= SimTime(local), "{clock:?} {local}");
                assert!(at.0 == 0 || clock.local(SimTime(at.0 - 1)) < SimTime(local), "{clock:?} {local}");
            }
        }
    }

    /// A clock at a quarter of simulated time reads each value for four nanoseconds: a
    /// timer is due at the first of them, up to the last reading before the end of time.
    #[test]
    fn a_slow_clock_is_due_at_the_first_instant_it_reads_a_deadline() {
        let quarter = NodeClock { offset_ns: 0, drift_ppm: -750_000 };
        let last = quarter.reading(SimTime(u64::MAX));
        for reading in (1..100).chain([last - 1, last]) {
            let at = quarter.sim_at_reading(reading);
            assert!(quarter.reading(at) >= reading, "{reading}");
            assert!(quarter.reading(SimTime(at.0 - 1)) < reading, "{reading}: due at {at:?}, later than it reads so");
        }
        assert_eq!(quarter.sim_at_reading(last + 1), SimTime(u64::MAX), "never read: never due");
    }

    #[test]
    fn a_fast_clock_reaches_a_local_deadline_early_and_a_slow_one_late() {
        let fast = NodeClock { offset_ns: 0, drift_ppm: 100 };
        let slow = NodeClock { offset_ns: 0, drift_ppm: -100 };
        let deadline = SimTime(1_000_000_000);
        assert!(fast.sim_at(deadline) < deadline);
        assert!(slow.sim_at(deadline) > deadline);
    }
}

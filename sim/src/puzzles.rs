//! The exploration benchmarks: small programs on the simulator core whose bug sits behind
//! a chain of rare events, so that a plain sweep pays the product of their probabilities.
//!
//! - the **maze**: three locks, each behind two gates that open with probability 0.3; a run
//!   that opens all six reaches the treasure (a brute-force chance of (0.3²)³ ≈ 7.3·10⁻⁴);
//! - the **dungeon**: five floors, each behind a key found with probability 0.2
//!   (0.2⁵ = 3.2·10⁻⁴).
//!
//! Each gate passed is a sometimes-property, so exploration sees a mark at each; reaching
//! the end is a violation of an always-checker. A run gives up at the first closed gate,
//! and between gates the program wanders (random sleeps and a second task), so tape
//! positions are not trivial. These are the moonpool benchmarks of issue #14, kept as
//! tests and measured by `sutra-sim bench --explore`.

use std::time::Duration;

use crate::checker::{Check, Checker, CheckerKind};
use crate::entropy::Stream;
use crate::executor::{self, sleep};
use crate::explore::{explore, ExploreConfig, RunSpec, RunSummary};
use crate::run::{simulate, EntropyMode, Outcome, RunConfig};
use crate::trace::{Event, EventKind};

/// A benchmark puzzle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Puzzle {
    /// Three locks of two gates at 3/10 each.
    Maze,
    /// Five floors of one key at 2/10 each.
    Dungeon,
}

impl Puzzle {
    /// Both, in report order.
    pub const ALL: [Puzzle; 2] = [Puzzle::Maze, Puzzle::Dungeon];

    /// `maze` or `dungeon`.
    pub fn name(self) -> &'static str {
        match self {
            Puzzle::Maze => "maze",
            Puzzle::Dungeon => "dungeon",
        }
    }

    /// The gates in order, each as (numerator, denominator) of its chance.
    fn gates(self) -> Vec<(u32, u32)> {
        match self {
            Puzzle::Maze => vec![(3, 10); 6],
            Puzzle::Dungeon => vec![(2, 10); 5],
        }
    }

    /// The expected runs of a brute-force search: 1 / (product of the gates' chances).
    pub fn brute_force_runs(self) -> f64 {
        self.gates().iter().map(|&(n, d)| f64::from(d) / f64::from(n)).product()
    }

    /// Runs the puzzle once.
    pub fn run(self, entropy: EntropyMode, marks: bool) -> Outcome<Step> {
        let config = RunConfig { entropy, marks, ..RunConfig::seeded(0) };
        let gates = self.gates();
        let checkers: Vec<Box<dyn Checker<Step, ()>>> = (0..gates.len())
            .map(|g| Box::new(Gate(g as u32, format!("{}-gate-{g}", self.name()))) as Box<dyn Checker<Step, ()>>)
            .chain(std::iter::once(Box::new(Treasure) as Box<dyn Checker<Step, ()>>))
            .collect();
        simulate(&config, checkers, move |tracer| {
            let tracer = tracer.clone();
            // A wanderer: more draws between the gates, as a real program would make.
            executor::spawn("wanderer", async {
                for _ in 0..3 {
                    sleep(Duration::from_millis(u64::from(executor::choose(50)))).await;
                }
            });
            executor::spawn("seeker", async move {
                for (g, &(n, d)) in gates.iter().enumerate() {
                    sleep(Duration::from_millis(1 + u64::from(executor::choose(20)))).await;
                    if !executor::chance_in(Stream::MODEL, n, d) {
                        return;
                    }
                    tracer.emit(Step::Passed(g as u32));
                }
                tracer.emit(Step::Treasure);
            });
        })
    }
}

/// What a puzzle run does that its checkers see.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Step {
    /// Gate `n` (from 0) was passed.
    Passed(u32),
    /// The end was reached: the bug.
    Treasure,
}

impl EventKind for Step {
    fn name(&self) -> &'static str {
        match self {
            Step::Passed(_) => "passed",
            Step::Treasure => "treasure",
        }
    }
}

/// Sometimes: gate `.0` was passed.
struct Gate(u32, String);

impl Checker<Step, ()> for Gate {
    fn name(&self) -> &str {
        &self.1
    }
    fn kind(&self) -> CheckerKind {
        CheckerKind::Sometimes
    }
    fn on_event(&mut self, event: &Event<Step>, _: &()) -> Check {
        if event.kind == Step::Passed(self.0) {
            Check::Reached
        } else {
            Check::Ok
        }
    }
}

/// Always: the end is never reached (the planted bug).
struct Treasure;

impl Checker<Step, ()> for Treasure {
    fn name(&self) -> &str {
        "no-treasure"
    }
    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }
    fn on_event(&mut self, event: &Event<Step>, _: &()) -> Check {
        if event.kind == Step::Treasure {
            Check::Fail("the treasure was reached".into())
        } else {
            Check::Ok
        }
    }
}

/// Runs of a plain sweep from seed `start` until the first failure: its 1-based place, or
/// `None` if none of `max` seeds failed.
pub fn sweep_runs_to_failure(puzzle: Puzzle, start: u64, max: u64) -> Option<u64> {
    (0..max).find(|&k| !puzzle.run(EntropyMode::Seed(start.wrapping_add(k)), false).verdict.is_pass()).map(|k| k + 1)
}

/// Runs of an exploration from seed `start` until the first failure, or `None` within `max`.
pub fn explore_runs_to_failure(puzzle: Puzzle, start: u64, max: u64, jobs: usize) -> Option<u64> {
    let config = ExploreConfig { runs: max, start, stop_at_first_failure: true, ..ExploreConfig::default() };
    let run = |spec: &RunSpec| {
        let out = puzzle.run(spec.entropy.clone(), true);
        (RunSummary { failed: !out.verdict.is_pass(), marks: out.marks, tape: out.tape }, ())
    };
    explore(&config, jobs, &run, &mut |_, _, _| {}, &|| false).first_failure
}

/// The start seed of the `i`-th start of a benchmark: spread out, so that explorations of
/// different starts share no fresh seeds.
pub fn start_seed(i: u64) -> u64 {
    i.wrapping_mul(1_000_003)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_treasure_is_named_as_reports_print_it() {
        assert_eq!((Step::Passed(1).name(), Step::Treasure.name()), ("passed", "treasure"));
        assert_eq!(Treasure.name(), "no-treasure");
        assert_eq!(Puzzle::ALL.map(Puzzle::name), ["maze", "dungeon"]);
    }

    #[test]
    fn a_puzzle_run_fails_only_past_its_last_gate_and_marks_each_gate() {
        // Seeds until one passes the first gate: its marks include that gate's first hit.
        let out = (0..100).map(|s| Puzzle::Maze.run(EntropyMode::Seed(s), true)).find(|o| !o.reached.is_empty());
        let out = out.expect("a seed in 100 passes a gate of 3/10");
        assert!(out.verdict.is_pass());
        assert!(out.marks.iter().any(|m| m.kind == crate::marks::MarkKind::Sometimes));
        assert!((Puzzle::Maze.brute_force_runs() - 1372.0).abs() < 1.0);
        assert!((Puzzle::Dungeon.brute_force_runs() - 3125.0).abs() < 1.0);
    }

    #[test]
    fn exploration_reaches_the_bottom_of_the_maze_and_the_dungeon_in_few_runs() {
        // A few starts only (the test suite stays fast); `bench --explore` takes the median of 21.
        for puzzle in Puzzle::ALL {
            let limit = (puzzle.brute_force_runs() / 10.0) as u64;
            let mut runs: Vec<u64> = (0..5)
                .map(|i| explore_runs_to_failure(puzzle, start_seed(i), 4 * limit, 1).unwrap_or(u64::MAX))
                .collect();
            runs.sort_unstable();
            assert!(
                runs[2] <= limit,
                "{}: explore's median {} runs, more than {limit}: {runs:?}",
                puzzle.name(),
                runs[2]
            );
        }
    }

    #[test]
    fn exploration_is_the_same_on_one_thread_and_on_two() {
        let config = ExploreConfig { runs: 120, start: 7, ..ExploreConfig::default() };
        let go = |jobs| {
            let run = |spec: &RunSpec| {
                let out = Puzzle::Dungeon.run(spec.entropy.clone(), true);
                (RunSummary { failed: !out.verdict.is_pass(), marks: out.marks, tape: out.tape }, out.fingerprint)
            };
            let mut fingerprints = Vec::new();
            let stats = explore(&config, jobs, &run, &mut |spec, _, f| fingerprints.push((spec.seed, f)), &|| false);
            (stats, fingerprints)
        };
        assert_eq!(go(1), go(2));
    }

    #[test]
    fn a_child_found_by_exploration_replays_from_its_tape_alone() {
        let config = ExploreConfig { runs: 2_000, start: 1, stop_at_first_failure: true, ..ExploreConfig::default() };
        let mut found = None;
        let run = |spec: &RunSpec| {
            let out = Puzzle::Maze.run(spec.entropy.clone(), true);
            let summary =
                RunSummary { failed: !out.verdict.is_pass(), marks: out.marks.clone(), tape: out.tape.clone() };
            (summary, out)
        };
        explore(
            &config,
            1,
            &run,
            &mut |spec, _, out| {
                if !out.verdict.is_pass() && found.is_none() {
                    found = Some((spec.clone(), out));
                }
            },
            &|| false,
        );
        let (spec, out) = found.expect("exploration finds the treasure within 2,000 runs");
        assert!(spec.parent.is_some(), "the find is a child, grown from a branch point");
        let again = Puzzle::Maze.run(EntropyMode::Tape(out.tape.clone()), false);
        assert_eq!(again.verdict, out.verdict);
        assert_eq!(again.fingerprint, out.fingerprint);
    }
}

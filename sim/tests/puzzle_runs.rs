//! The exploration benchmark's own numbers (`sutra-sim bench --explore` reports them): runs
//! to the first failure, from a given start seed and within a given budget of runs.
//!
//! Written for the framework's mutation run (docs/mutation-testing.md, "The framework"):
//! a careless change to `sim/src/puzzles.rs` that ignored the budget or the start seed
//! passed every test before.

use sutra_sim_core::puzzles::{explore_runs_to_failure, start_seed, sweep_runs_to_failure, Puzzle};
use sutra_sim_core::{EntropyMode, Tape};

#[test]
fn an_exploration_never_reports_a_failure_past_its_budget_of_runs() {
    for puzzle in Puzzle::ALL {
        for i in 0..3 {
            for max in [1, 3, 10] {
                if let Some(runs) = explore_runs_to_failure(puzzle, start_seed(i), max, 1) {
                    assert!(runs <= max, "{}: a failure at run {runs} of at most {max}", puzzle.name());
                }
            }
        }
    }
}

#[test]
fn an_exploration_starting_at_a_failing_seed_fails_at_its_first_run() {
    // A sweep finds a seed whose plain run reaches the maze's treasure; an exploration
    // whose first fresh run is that seed fails at once.
    let runs = sweep_runs_to_failure(Puzzle::Maze, 1, 20_000).expect("a maze seed in 20,000 reaches the treasure");
    let failing = 1 + runs - 1;
    assert_eq!(sweep_runs_to_failure(Puzzle::Maze, failing, 1), Some(1));
    assert_eq!(explore_runs_to_failure(Puzzle::Maze, failing, 5, 1), Some(1));
}

#[test]
fn each_gate_is_reached_by_its_own_passing_and_the_gates_passed_are_a_prefix() {
    // A run that passes k gates emits k events; exactly the first k gates' properties are
    // reached, each by the event of its own gate.
    let mut partial = 0;
    for puzzle in Puzzle::ALL {
        for seed in 0..300 {
            let out = puzzle.run(EntropyMode::Seed(seed), false);
            let passed = if out.verdict.is_pass() { out.events } else { out.events - 1 };
            let expected: Vec<String> = (0..passed).map(|g| format!("{}-gate-{g}", puzzle.name())).collect();
            let mut reached = out.reached.clone();
            reached.sort_by_key(|name| name.rsplit('-').next().and_then(|g| g.parse::<u64>().ok()));
            assert_eq!(reached, expected, "{} seed {seed}", puzzle.name());
            partial += u32::from(passed > 0 && out.verdict.is_pass());
        }
    }
    assert!(partial > 0, "some run passed a gate and stopped at a later one");
}

#[test]
fn the_simplest_run_waits_a_millisecond_before_its_first_gate_and_stops_there() {
    // Every draw the simplest: no wandering, the shortest wait (1 ms, never 0: a gate is
    // always a step later in time), and the first gate stays closed.
    for puzzle in Puzzle::ALL {
        let out = puzzle.run(EntropyMode::Tape(Tape::default()), false);
        assert!(out.verdict.is_pass(), "{}", out.verdict);
        assert_eq!(out.events, 0);
        assert_eq!(out.sim_time.as_nanos(), 1_000_000, "{}", puzzle.name());
    }
}

#[test]
fn an_exploration_whose_runs_all_pass_reports_no_failure() {
    let start = start_seed(0);
    assert_eq!(sweep_runs_to_failure(Puzzle::Maze, start, 1), None, "the start seed's own run passes");
    assert_eq!(explore_runs_to_failure(Puzzle::Maze, start, 1, 1), None);
}

#[test]
fn the_starts_of_a_benchmark_are_far_enough_apart_to_share_no_fresh_seed() {
    // A benchmark's exploration from one start makes far fewer than a million fresh runs.
    for i in 0..21 {
        assert!(start_seed(i + 1) - start_seed(i) >= 1_000_000, "starts {i} and {}", i + 1);
    }
}

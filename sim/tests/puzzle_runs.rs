//! The exploration benchmark's own numbers (`sutra-sim bench --explore` reports them): runs
//! to the first failure, from a given start seed and within a given budget of runs.
//!
//! Written for the framework's mutation run (docs/mutation-testing.md, "The framework"):
//! a careless change to `sim/src/puzzles.rs` that ignored the budget or the start seed
//! passed every test before.

use sutra_sim_core::puzzles::{explore_runs_to_failure, start_seed, sweep_runs_to_failure, Puzzle};

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

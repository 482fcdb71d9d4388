//! Pull workers fail (issue #23): the `pull-workers` scenario kills and freezes pull workers
//! mid-task, so a task lock expires and another worker takes the task over — the store's
//! re-lock of an expired task runs — and the correct model stays clean through it (a late
//! completion of a worker whose lock expired advances nothing: `one-trigger-one-step`).

use sutra_sim_model::{run, RunOptions, Scenario};

/// Seeds searched for a takeover; a few dozen suffice at the scenario's rates.
const SEEDS: u64 = 200;

#[test]
fn an_expired_task_lock_is_taken_over_and_the_correct_model_stays_clean() {
    let scenario = Scenario::built_in("pull-workers").unwrap();
    let mut took_over = Vec::new();
    for seed in 0..SEEDS {
        let out = run(&scenario, &RunOptions::seeded(seed));
        assert!(out.verdict.is_pass(), "pull-workers seed {seed}: {:?}", out.verdict);
        if out.reached.iter().any(|p| p == "sometimes-expired-lock-taken-over") {
            took_over.push(seed);
        }
    }
    assert!(!took_over.is_empty(), "no seed of {SEEDS} took an expired task lock over: pull workers never fail");
}

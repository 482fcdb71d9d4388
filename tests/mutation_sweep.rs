//! The test that mutation testing runs: every built-in scenario over a fixed seed range,
//! with every built-in checker. On the correct model it passes; on a mutant of a protocol
//! component it should fail, and it prints one `SUTRA-MUTATION-VERDICT` line saying how, so
//! `scripts/mutation-score.py` can tell a mutant caught by a checker (a violation) from one
//! caught only by a crash, a hang or a budget overrun — which proves much less.
//!
//! Ignored in the normal test run (it is a sweep, not a unit test); `cargo mutants` runs it
//! with `--include-ignored` (see `docs/mutation-testing.md`). `SUTRA_SIM_MUTATION_SEEDS`
//! sets the seeds per scenario (default 1,000).

use std::sync::atomic::AtomicBool;

use sutra_sim::plugin::CheckerSet;
use sutra_sim::sweep::{self, SweepPlan};
use sutra_sim_model::Scenario;

/// Seeds per scenario unless `SUTRA_SIM_MUTATION_SEEDS` says otherwise.
const SEEDS_DEFAULT: u64 = 1_000;

#[test]
#[ignore = "mutation testing's sweep: run by cargo mutants (docs/mutation-testing.md)"]
fn every_scenario_is_clean_over_the_mutation_seed_range() {
    let count = std::env::var("SUTRA_SIM_MUTATION_SEEDS")
        .ok()
        .map(|v| v.parse().expect("SUTRA_SIM_MUTATION_SEEDS is a number of seeds"))
        .unwrap_or(SEEDS_DEFAULT);
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    let plan = SweepPlan {
        scenarios: Scenario::all_built_in(),
        start: 0,
        count,
        shard: None,
        mutant: None,
        strategy: None,
        jobs,
        time_budget: None,
        checkers: CheckerSet::built_in(),
    };
    let (tally, _) = sweep::run(&plan, &AtomicBool::new(false), &|_, _| {});
    let Some(first) = tally.failing.first() else {
        println!("SUTRA-MUTATION-VERDICT pass seeds={}", tally.seeds_run);
        return;
    };
    let failing: u64 = tally.failing_by_checker.values().sum();
    let by: Vec<String> = tally.failing_by_checker.iter().map(|(c, n)| format!("{c}={n}")).collect();
    println!(
        "SUTRA-MUTATION-VERDICT {} checker={} seeds={} failing={failing} by={}",
        first.verdict.class(),
        first.verdict.checker().unwrap_or("-"),
        tally.seeds_run,
        by.join(",")
    );
    panic!(
        "{failing} of {} seeds failed; first: {} seed {}: {}",
        tally.seeds_run, plan.scenarios[first.scenario].name, first.seed, first.verdict
    );
}

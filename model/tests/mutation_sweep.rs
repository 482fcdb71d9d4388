//! The test that mutation testing runs: every built-in scenario over a fixed seed range,
//! with every built-in checker. On the correct model it passes; on a mutant of a protocol
//! component it should fail, and it prints one `SUTRA-MUTATION-VERDICT` line saying how, so
//! `scripts/mutation-score.py` can tell a mutant caught by a checker (a violation) from one
//! caught only by a crash, a hang or a budget overrun — which proves much less.
//!
//! Ignored in the normal test run (it is a sweep, not a unit test); `cargo mutants` runs it
//! with `--include-ignored` (see `docs/mutation-testing.md`). `SUTRA_SIM_MUTATION_SEEDS`
//! sets the seeds per scenario (default 1,000).

use std::collections::BTreeMap;

use sutra_sim_model::{run, RunOptions, Scenario};

/// Seeds per scenario unless `SUTRA_SIM_MUTATION_SEEDS` says otherwise.
const SEEDS_DEFAULT: u64 = 1_000;

/// How one run ended: its verdict class and checker (or class again), and where.
type Failure = (String, String, String, u64);

/// Runs `seeds` of every built-in scenario on `threads` threads; the failures in seed
/// order, whatever the thread count.
fn sweep(seeds: u64, threads: u64) -> (u64, Vec<Failure>) {
    let scenarios = Scenario::all_built_in();
    let work: Vec<(usize, u64)> = (0..scenarios.len()).flat_map(|s| (0..seeds).map(move |seed| (s, seed))).collect();
    let mut failures: Vec<(usize, Failure)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (work, scenarios) = (&work, &scenarios);
                scope.spawn(move || {
                    let mut found = Vec::new();
                    for (i, &(s, seed)) in work.iter().enumerate().skip(t as usize).step_by(threads as usize) {
                        let verdict = run(&scenarios[s], &RunOptions::seeded(seed)).verdict;
                        if !verdict.is_pass() {
                            let checker = verdict.checker().unwrap_or(verdict.class()).to_string();
                            found.push((i, (verdict.class().to_string(), checker, scenarios[s].name.clone(), seed)));
                        }
                    }
                    found
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("a sweep thread panicked outside a run")).collect()
    });
    failures.sort_by_key(|(i, _)| *i);
    (work.len() as u64, failures.into_iter().map(|(_, f)| f).collect())
}

#[test]
#[ignore = "mutation testing's sweep: run by cargo mutants (docs/mutation-testing.md)"]
fn every_scenario_is_clean_over_the_mutation_seed_range() {
    let seeds = std::env::var("SUTRA_SIM_MUTATION_SEEDS")
        .ok()
        .map(|v| v.parse().expect("SUTRA_SIM_MUTATION_SEEDS is a number of seeds"))
        .unwrap_or(SEEDS_DEFAULT);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    let (runs, failures) = sweep(seeds, threads);
    let Some((class, checker, scenario, seed)) = failures.first() else {
        println!("SUTRA-MUTATION-VERDICT pass seeds={runs}");
        return;
    };
    let mut by: BTreeMap<&str, u64> = BTreeMap::new();
    for (_, c, _, _) in &failures {
        *by.entry(c.as_str()).or_default() += 1;
    }
    let by: Vec<String> = by.iter().map(|(c, n)| format!("{c}={n}")).collect();
    println!(
        "SUTRA-MUTATION-VERDICT {class} checker={checker} seeds={runs} failing={} by={}",
        failures.len(),
        by.join(",")
    );
    panic!("{} of {runs} runs failed; first: {scenario} seed {seed}: {class} {checker}", failures.len());
}

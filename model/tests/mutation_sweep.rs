//! The test that mutation testing runs: every built-in scenario over a fixed seed range,
//! with every built-in checker. On the correct model it passes; on a mutant of a protocol
//! component it should fail, and it prints one `SUTRA-MUTATION-VERDICT` line saying how, so
//! `scripts/mutation-score.py` can tell a mutant caught by a checker (a violation) from one
//! caught only by a crash, a hang or a budget overrun — which proves much less. A coverage
//! property the scenario must reach that no seed reached is a failure too (class
//! `coverage`): a mutant that silently stops exercising a path shows as a path gone dark.
//!
//! Ignored in the normal test run (it is a sweep, not a unit test); `cargo mutants` runs it
//! with `--include-ignored` (see `docs/mutation-testing.md`). `SUTRA_SIM_MUTATION_SEEDS`
//! sets the seeds per scenario (default 1,000).

use std::collections::{BTreeMap, BTreeSet};

use sutra_sim_model::checkers::coverage;
use sutra_sim_model::{run, RunOptions, Scenario};

/// Seeds per scenario unless `SUTRA_SIM_MUTATION_SEEDS` says otherwise.
const SEEDS_DEFAULT: u64 = 1_000;

/// How one run ended: its verdict class and checker (or class again), and where.
type Failure = (String, String, String, u64);

/// What one sweep thread found: its failures by work index, and what each scenario reached.
type ThreadFindings = (Vec<(usize, Failure)>, Vec<BTreeSet<String>>);

/// The coverage properties each scenario must reach (`coverage::expected`) that none of its
/// seeds reached: a path gone dark, as a failure of class `coverage` (seed: the count run).
fn dark_paths(scenarios: &[Scenario], reached: &[BTreeSet<String>], seeds: u64) -> Vec<Failure> {
    let mut dark = Vec::new();
    for (scenario, reached) in scenarios.iter().zip(reached) {
        for name in coverage::expected(scenario) {
            if !reached.contains(name) {
                dark.push(("coverage".to_string(), name.to_string(), scenario.name.clone(), seeds));
            }
        }
    }
    dark
}

/// Runs `seeds` of every built-in scenario on `threads` threads; the failures in seed
/// order, whatever the thread count.
fn sweep(seeds: u64, threads: u64) -> (u64, Vec<Failure>) {
    let (runs, mut failures, reached) = sweep_runs(seeds, threads);
    failures.extend(dark_paths(&Scenario::all_built_in(), &reached, seeds));
    (runs, failures)
}

/// The runs of [`sweep`]: failures in seed order, and what each scenario's seeds reached.
fn sweep_runs(seeds: u64, threads: u64) -> (u64, Vec<Failure>, Vec<BTreeSet<String>>) {
    let scenarios = Scenario::all_built_in();
    let work: Vec<(usize, u64)> = (0..scenarios.len()).flat_map(|s| (0..seeds).map(move |seed| (s, seed))).collect();
    let mut per_thread: Vec<ThreadFindings> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (work, scenarios) = (&work, &scenarios);
                scope.spawn(move || {
                    let mut found = Vec::new();
                    let mut reached = vec![BTreeSet::new(); scenarios.len()];
                    for (i, &(s, seed)) in work.iter().enumerate().skip(t as usize).step_by(threads as usize) {
                        let out = run(&scenarios[s], &RunOptions::seeded(seed));
                        reached[s].extend(out.reached.iter().cloned());
                        let verdict = out.verdict;
                        if !verdict.is_pass() {
                            let checker = verdict.checker().unwrap_or(verdict.class()).to_string();
                            found.push((i, (verdict.class().to_string(), checker, scenarios[s].name.clone(), seed)));
                        }
                    }
                    (found, reached)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a sweep thread panicked outside a run")).collect::<Vec<_>>()
    });
    let mut reached = vec![BTreeSet::new(); scenarios.len()];
    let mut failures: Vec<(usize, Failure)> = Vec::new();
    for (found, seen) in per_thread.drain(..) {
        failures.extend(found);
        for (all, these) in reached.iter_mut().zip(seen) {
            all.extend(these);
        }
    }
    failures.sort_by_key(|(i, _)| *i);
    (work.len() as u64, failures.into_iter().map(|(_, f)| f).collect(), reached)
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
    let Some(first) = failures.first() else {
        println!("SUTRA-MUTATION-VERDICT pass seeds={runs}");
        return;
    };
    // The verdict names the first violation a checker reported, if any did: a mutant that
    // crashes most seeds but breaks a judged rule in others is caught by a checker, not
    // "only by a crash". A dark path is the verdict only when no run failed (paths go dark
    // trivially when every seed crashes). The first failure of all is printed beside it.
    let judged = failures.iter().find(|(class, ..)| class == "violation");
    let (class, checker, scenario, seed) = judged.unwrap_or(first);
    let mut by: BTreeMap<&str, u64> = BTreeMap::new();
    for (_, c, _, _) in &failures {
        *by.entry(c.as_str()).or_default() += 1;
    }
    let by: Vec<String> = by.iter().map(|(c, n)| format!("{c}={n}")).collect();
    println!(
        "SUTRA-MUTATION-VERDICT {class} checker={checker} seeds={runs} failing={} by={} first={}:{}@{}:{}",
        failures.len(),
        by.join(","),
        first.0,
        first.1,
        first.2,
        first.3
    );
    panic!("{} of {runs} runs failed; first: {scenario} seed {seed}: {class} {checker}", failures.len());
}

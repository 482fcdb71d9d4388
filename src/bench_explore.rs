//! The exploration benchmarks (`sutra-sim bench --explore`): runs to reach a bug by a plain
//! sweep and by exploration, medians over [`START_SEEDS`] start seeds, measured in the same
//! run with the same code.
//!
//! - `maze` and `dungeon`: the puzzles of [`sutra_sim_core::puzzles`], whose brute-force
//!   expectation is known (1/p);
//! - `mutant`: runs to kill each mutant by its expected checker, in the first built-in
//!   scenario in which a sweep kills it (the one `sutra-sim mutants` would report), judged
//!   like [`sutra_sim_model::run_for_kill`]. Exploration's runs also carry the coverage
//!   checkers (sometimes-properties judge nothing; they give it marks to grow from).
//!   Deep mutants (`MutantInfo::deep`) are flagged `deep` and measured the same way, in
//!   the scenario [`DEEP_BENCH_SCENARIOS`] names for each.
//!
//! Also the signature figure: distinct abstract-state signatures reached in a number of
//! runs of a scenario, sweep against exploration.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde::Serialize;
use sutra_sim_core::explore::{explore, ExploreConfig, RunSpec, RunSummary};
use sutra_sim_core::puzzles::{self, Puzzle};
use sutra_sim_core::{EntropyMode, MarkKind};
use sutra_sim_model::mutant::MutantInfo;
use sutra_sim_model::{RunOptions, Scenario};

/// Start seeds per benchmark; each figure is the median over them.
pub const START_SEEDS: usize = 21;

/// Most runs one puzzle search may take (a sweep of the dungeon expects 3,125).
pub const PUZZLE_RUNS_MAX: u64 = 40_000;

/// Most runs one mutant search may take.
pub const MUTANT_RUNS_MAX: u64 = 3_000;

/// Seeds of each built-in scenario tried, from 0, to find the one that kills a mutant.
pub const SCENARIO_PROBE_SEEDS: u64 = 300;

/// Where each *deep* mutant (issue #14: a bug that needs two or more rare events together;
/// `MutantInfo::deep`) is benchmarked: a built-in scenario in which its plain-sweep median
/// is at least 1,000 seeds (`examples/seeds_to_kill.rs`, 21 starts, on the model with the
/// slot fix: commit-retry 1,232 in pull-workers — smoke, swarm and real-world kill it in
/// 350–630; sweep-trusts-renewal 5,977 in swarm; queued-copy-acked over 6,000 in
/// process-pause, 19 of 21 starts surviving 6,000 — smoke 333, pull-workers 565, swarm
/// 11, where duplicates and replacements are common). A deep mutant seldom dies in the
/// first few hundred seeds of any scenario, so probing for one would pick a scenario by
/// luck.
pub const DEEP_BENCH_SCENARIOS: &[(&str, &str)] = &[
    ("commit-retry-accepts-free-row", "pull-workers"),
    ("sweep-trusts-renewal", "swarm"),
    ("queued-copy-acked", "process-pause"),
];

/// Most runs a search for a deep mutant's kill may take (its sweep median is in the
/// thousands, queued-copy-acked's in process-pause in the tens of thousands: 30,000 left
/// that median unmeasured, over half the starts finding nothing).
pub const DEEP_RUNS_MAX: u64 = 100_000;

/// One benchmark's figures (DESIGN.md §10, `bench --explore --json`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Benchmark {
    /// The puzzle's or the mutant's name.
    pub name: String,
    /// `maze`, `dungeon` or `mutant`.
    pub kind: &'static str,
    /// 1/p where p is known (the puzzles), else `None`.
    pub brute_force_runs: Option<f64>,
    /// Median runs to the bug of a plain sweep; `None` if over half the starts found nothing.
    pub sweep_runs_median: Option<f64>,
    /// Median runs to the bug of exploration; `None` likewise.
    pub explore_runs_median: Option<f64>,
    /// Start seeds measured.
    pub start_seeds: usize,
    /// For a mutant: the scenario it was measured in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    /// For a mutant: a deep one (`MutantInfo::deep`).
    pub deep: bool,
}

/// The median of runs-to-bug figures, a search that found nothing counting as the largest.
pub fn median(mut runs: Vec<Option<u64>>) -> Option<f64> {
    if runs.is_empty() {
        return None;
    }
    runs.sort_by_key(|r| r.unwrap_or(u64::MAX));
    let n = runs.len();
    let mid = |i: usize| runs[i].map(|r| r as f64);
    if n % 2 == 1 {
        mid(n / 2)
    } else {
        Some((mid(n / 2 - 1)? + mid(n / 2)?) / 2.0)
    }
}

/// Runs `search(start_index)` for each start on `jobs` threads; results in start order.
fn per_start<T: Send>(starts: usize, jobs: usize, search: &(dyn Fn(u64) -> T + Sync)) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<T>>> = Mutex::new((0..starts).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, starts.max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= starts {
                    return;
                }
                let r = search(i as u64);
                out.lock().expect("no worker panics while holding the lock")[i] = Some(r);
            });
        }
    });
    out.into_inner().expect("workers are done").into_iter().map(|r| r.expect("every start ran")).collect()
}

/// The maze or dungeon benchmark.
pub fn puzzle_benchmark(puzzle: Puzzle, starts: usize, jobs: usize) -> Benchmark {
    let figures = per_start(starts, jobs, &|i| {
        let start = puzzles::start_seed(i);
        (
            puzzles::sweep_runs_to_failure(puzzle, start, PUZZLE_RUNS_MAX),
            puzzles::explore_runs_to_failure(puzzle, start, PUZZLE_RUNS_MAX, 1),
        )
    });
    let (sweep, explored): (Vec<_>, Vec<_>) = figures.into_iter().unzip();
    Benchmark {
        name: puzzle.name().to_string(),
        kind: puzzle.name(),
        brute_force_runs: Some(puzzle.brute_force_runs()),
        sweep_runs_median: median(sweep),
        explore_runs_median: median(explored),
        start_seeds: starts,
        scenario: None,
        deep: false,
    }
}

/// The first built-in scenario in which a sweep from seed 0 kills `info`'s mutant within
/// [`SCENARIO_PROBE_SEEDS`] seeds.
pub fn scenario_for(info: &MutantInfo) -> Option<Scenario> {
    if let Some((_, name)) = DEEP_BENCH_SCENARIOS.iter().find(|(m, _)| *m == info.name) {
        return Scenario::built_in(name).ok();
    }
    Scenario::all_built_in().into_iter().find(|scenario| {
        (0..SCENARIO_PROBE_SEEDS).any(|seed| {
            sutra_sim_model::run_for_kill(scenario, seed, info).is_ok_and(|out| info.killed_by(&out.verdict))
        })
    })
}

/// Runs of a sweep from seed `start` until `info`'s mutant is killed, or `None` within `max`.
pub fn sweep_runs_to_kill(scenario: &Scenario, info: &MutantInfo, start: u64, max: u64) -> Option<u64> {
    (0..max)
        .find(|&k| {
            sutra_sim_model::run_for_kill(scenario, start.wrapping_add(k), info)
                .is_ok_and(|out| info.killed_by(&out.verdict))
        })
        .map(|k| k + 1)
}

/// Runs of an exploration from seed `start` until `info`'s mutant is killed, or `None`.
pub fn explore_runs_to_kill(scenario: &Scenario, info: &MutantInfo, start: u64, max: u64, jobs: usize) -> Option<u64> {
    let config = ExploreConfig { runs: max, start, ..ExploreConfig::default() };
    explore_runs_to_kill_with(scenario, info, config, jobs)
}

/// Runs of an exploration under `config` (its `runs`, `start` and energies) until `info`'s
/// mutant is killed, or `None`. Exploration's runs also carry the coverage checkers: their
/// first hits are the sometimes-marks it grows from.
pub fn explore_runs_to_kill_with(
    scenario: &Scenario,
    info: &MutantInfo,
    config: ExploreConfig,
    jobs: usize,
) -> Option<u64> {
    let config = ExploreConfig { stop_at_first_failure: true, strategy: scenario.strategy(), ..config };
    let registry = sutra_sim_model::checkers::registry();
    let coverage = sutra_sim_model::checkers::coverage_names();
    let run = |spec: &RunSpec| {
        let mut checkers = sutra_sim_model::kill_checkers(info).expect("the mutant's checkers are registered");
        checkers.extend(registry.build(&coverage).expect("coverage checkers are registered"));
        let options = RunOptions {
            entropy: spec.entropy.clone(),
            ..RunOptions::for_seed(spec.seed, Some(spec.strategy), Some(info.mutant))
        };
        let out = sutra_sim_model::run_marked(scenario, &options, checkers);
        (RunSummary { failed: info.killed_by(&out.verdict), marks: out.marks, tape: out.tape }, ())
    };
    explore(&config, jobs, &run, &mut |_, _, _| {}, &|| false).first_failure
}

/// The kill benchmark of `info`'s mutant, or `None` if no built-in scenario kills it.
pub fn mutant_benchmark(info: &MutantInfo, starts: usize, jobs: usize) -> Option<Benchmark> {
    let scenario = scenario_for(info)?;
    let max = if info.deep { DEEP_RUNS_MAX } else { MUTANT_RUNS_MAX };
    let figures = per_start(starts, jobs, &|i| {
        let start = puzzles::start_seed(i);
        (sweep_runs_to_kill(&scenario, info, start, max), explore_runs_to_kill(&scenario, info, start, max, 1))
    });
    let (sweep, explored): (Vec<_>, Vec<_>) = figures.into_iter().unzip();
    Some(Benchmark {
        name: info.name.to_string(),
        kind: "mutant",
        brute_force_runs: None,
        sweep_runs_median: median(sweep),
        explore_runs_median: median(explored),
        start_seeds: starts,
        scenario: Some(scenario.name.clone()),
        deep: info.deep,
    })
}

/// Distinct abstract-state signatures (state marks) reached in `runs` runs of `scenario`
/// from seed 0: by a plain sweep (every run fresh) and by exploration. Same runner, same
/// marks; only the choice of runs differs.
pub fn distinct_signatures(scenario: &Scenario, runs: u64, jobs: usize) -> (u64, u64) {
    let explored = ExploreConfig { runs, ..ExploreConfig::default() };
    let swept = ExploreConfig { fresh_per_generation: explored.generation, ..explored.clone() };
    (signatures_reached(scenario, swept, jobs), signatures_reached(scenario, explored, jobs))
}

/// Distinct abstract-state signatures (state marks) reached by an exploration of
/// `scenario` under `config` (its `runs`, `start`, energies and shares).
pub fn signatures_reached(scenario: &Scenario, config: ExploreConfig, jobs: usize) -> u64 {
    let checkers = crate::plugin::CheckerSet::built_in();
    let factories = checkers.factories_for(scenario).expect("built-in scenarios resolve");
    let run = |spec: &RunSpec| {
        let options =
            RunOptions { entropy: spec.entropy.clone(), ..RunOptions::for_seed(spec.seed, Some(spec.strategy), None) };
        let out = sutra_sim_model::run_marked(scenario, &options, factories.iter().map(|f| f()).collect());
        (RunSummary { failed: !out.verdict.is_pass(), marks: out.marks, tape: out.tape }, ())
    };
    let config = ExploreConfig { strategy: scenario.strategy(), ..config };
    let mut seen = std::collections::BTreeSet::new();
    explore(
        &config,
        jobs,
        &run,
        &mut |_, summary, _| {
            seen.extend(summary.marks.iter().filter(|m| m.kind == MarkKind::State).map(|m| m.slot));
        },
        &|| false,
    );
    seen.len() as u64
}

/// Checks that a plain sweep through the explorer runs seeds `start..start + runs`, like
/// `sweep` does (the basis of every sweep-against-exploration figure).
pub fn sweep_plan_is_plain(start: u64, runs: u64) -> bool {
    let config = ExploreConfig { runs, start, fresh_per_generation: 8, generation: 8, ..ExploreConfig::default() };
    let mut seeds = Vec::new();
    let run = |spec: &RunSpec| {
        let out = Puzzle::Maze.run(spec.entropy.clone(), true);
        (RunSummary { failed: false, marks: out.marks, tape: out.tape }, ())
    };
    explore(
        &config,
        1,
        &run,
        &mut |spec, _, _| seeds.push((spec.seed, matches!(spec.entropy, EntropyMode::Seed(_)))),
        &|| false,
    );
    seeds == (start..start + runs).map(|s| (s, true)).collect::<Vec<_>>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_counts_a_search_that_found_nothing_as_the_largest() {
        assert_eq!(median(vec![Some(3), None, Some(1)]), Some(3.0));
        assert_eq!(median(vec![None, None, Some(1)]), None);
        assert_eq!(median(vec![Some(2), Some(4)]), Some(3.0));
    }

    #[test]
    fn every_deep_mutant_has_a_built_in_bench_scenario_and_only_deep_ones_do() {
        for info in sutra_sim_model::MUTANTS.iter() {
            let listed = DEEP_BENCH_SCENARIOS.iter().find(|(m, _)| *m == info.name);
            assert_eq!(listed.is_some(), info.deep, "{}", info.name);
            if let Some((_, scenario)) = listed {
                assert!(Scenario::built_in(scenario).is_ok(), "{scenario}");
            }
        }
    }

    #[test]
    fn a_sweep_through_the_explorer_runs_consecutive_fresh_seeds() {
        assert!(sweep_plan_is_plain(5, 40));
    }
}

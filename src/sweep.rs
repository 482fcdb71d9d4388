//! Sweeps: many seeds of one or more scenarios, on `jobs` threads, each seed its own
//! simulated world on its own thread. Results are collected by seed, so a sweep's report
//! is the same for any number of jobs; `--shard I/N` takes every N-th seed from I, so N CI
//! jobs cover one range without overlap.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sutra_sim_core::{EntropyMode, StrategyConfig, Verdict};
use sutra_sim_model::{Mutant, RunOptions, Scenario};

use crate::plugin::CheckerSet;
use crate::report::{Failure, SweepReport};

/// Most seeds one sweep may be asked for.
pub const SEEDS_MAX: u64 = 1 << 40;
/// Most worker threads.
pub const JOBS_MAX: usize = 256;

/// What to sweep.
#[derive(Clone, Debug)]
pub struct SweepPlan {
    /// The scenarios, in order.
    pub scenarios: Vec<Scenario>,
    /// First seed.
    pub start: u64,
    /// Seeds per scenario (before sharding).
    pub count: u64,
    /// `(index, of)`: take the seeds whose offset from `start` is `index` modulo `of`.
    pub shard: Option<(u64, u64)>,
    /// Mutant to switch on.
    pub mutant: Option<Mutant>,
    /// Strategy override.
    pub strategy: Option<StrategyConfig>,
    /// Worker threads.
    pub jobs: usize,
    /// Stop taking new seeds after this long.
    pub time_budget: Option<Duration>,
    /// The checkers that judge each seed: built-in, user-registered, and the choice by name.
    /// Resolve the scenarios against it first ([`CheckerSet::check_scenarios`]).
    pub checkers: CheckerSet,
}

/// The result of one seed.
#[derive(Clone, Debug)]
pub struct SeedResult {
    /// Index into the plan's scenarios.
    pub scenario: usize,
    /// The seed.
    pub seed: u64,
    /// How it ended.
    pub verdict: Verdict,
    /// Events judged.
    pub events: u64,
    /// The trace fingerprint.
    pub fingerprint: u64,
    /// Coverage properties reached.
    pub reached: Vec<String>,
}

impl SweepPlan {
    /// The (scenario, seed) pairs this plan covers, in order.
    pub fn items(&self) -> Vec<(usize, u64)> {
        let (index, of) = self.shard.unwrap_or((0, 1));
        (0..self.scenarios.len())
            .flat_map(|s| (0..self.count).filter(move |o| o % of == index).map(move |o| (s, self.start + o)))
            .collect()
    }

    /// The command that replays one seed of this plan.
    pub fn replay_command(&self, scenario: &Scenario, seed: u64) -> String {
        let mut cmd = format!("sutra-sim run --scenario {} --seed {seed}", scenario.name);
        if let Some(m) = self.mutant {
            cmd.push_str(&format!(" --mutant {}", m.name()));
        }
        if let Some(s) = self.strategy {
            cmd.push_str(&format!(" --strategy {}", s.label()));
        }
        self.checkers.replay_command(&cmd, &scenario.name, seed, self.mutant)
    }
}

/// Runs one seed of `scenario`.
pub fn run_seed(
    scenario: &Scenario,
    seed: u64,
    mutant: Option<Mutant>,
    strategy: Option<StrategyConfig>,
) -> SeedResult {
    let options = RunOptions::for_seed(seed, strategy, mutant);
    SeedResult::of(seed, sutra_sim_model::run(scenario, &options))
}

/// Runs one seed of `scenario`, judged by `checkers`.
///
/// # Panics
///
/// If `checkers` cannot resolve the scenario's checker names: sweeps check their scenarios
/// with [`CheckerSet::check_scenarios`] before the first seed.
pub fn run_seed_with(
    checkers: &CheckerSet,
    scenario: &Scenario,
    seed: u64,
    mutant: Option<Mutant>,
    strategy: Option<StrategyConfig>,
) -> SeedResult {
    let options = RunOptions::for_seed(seed, strategy, mutant);
    let out = checkers.run(scenario, &options).unwrap_or_else(|e| panic!("checkers resolved before the sweep: {e}"));
    SeedResult::of(seed, out)
}

impl SeedResult {
    /// The result of `seed` from its run's outcome (scenario index 0 until the sweep sets it).
    fn of(seed: u64, out: sutra_sim_core::Outcome<sutra_sim_model::ModelEvent>) -> SeedResult {
        SeedResult {
            scenario: 0,
            seed,
            verdict: out.verdict,
            events: out.events,
            fingerprint: out.fingerprint,
            reached: out.reached,
        }
    }
}

/// Runs the plan. `stop` ends it early (a signal); `progress(done, failing)` is called
/// after each seed. Returns the results in plan order (only seeds that ran) and whether it
/// stopped early.
pub fn run(plan: &SweepPlan, stop: &AtomicBool, progress: &(dyn Fn(u64, u64) + Sync)) -> (Vec<SeedResult>, bool) {
    // Checker names resolve once per scenario, not once per seed.
    let factories: Vec<_> = plan
        .scenarios
        .iter()
        .map(|s| plan.checkers.factories_for(s).unwrap_or_else(|e| panic!("checkers resolved before the sweep: {e}")))
        .collect();
    let items = plan.items();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let failing = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<SeedResult>>> = Mutex::new(vec![None; items.len()]);
    let started = Instant::now();
    let stopped = AtomicBool::new(false);
    let jobs = plan.jobs.clamp(1, JOBS_MAX);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                if stop.load(Ordering::Relaxed) || plan.time_budget.is_some_and(|b| started.elapsed() >= b) {
                    stopped.store(true, Ordering::Relaxed);
                    return;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(s, seed)) = items.get(i) else { return };
                let checkers = factories[s].iter().map(|f| f()).collect();
                let options = RunOptions {
                    entropy: EntropyMode::Seed(seed),
                    strategy: plan.strategy,
                    mutant: plan.mutant,
                    keep_trace: false,
                };
                let mut result =
                    SeedResult::of(seed, sutra_sim_model::run_with(&plan.scenarios[s], &options, checkers));
                result.scenario = s;
                if !result.verdict.is_pass() {
                    failing.fetch_add(1, Ordering::Relaxed);
                }
                results.lock().expect("no worker panics while holding the lock")[i] = Some(result);
                let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                progress(d as u64, failing.load(Ordering::Relaxed) as u64);
            });
        }
    });
    let results: Vec<SeedResult> = results.into_inner().expect("workers are done").into_iter().flatten().collect();
    let early = stopped.load(Ordering::Relaxed) && results.len() < items.len();
    (results, early)
}

/// Builds the report of a sweep's results.
pub fn report(plan: &SweepPlan, results: &[SeedResult], wall: Duration, stopped_early: bool) -> SweepReport {
    // Only the properties some swept scenario is expected to reach are counted, so that a
    // zero means "never reached where it should have been", not "not applicable"; and only
    // those the plan's checkers run, user-registered ones included.
    let mut coverage: BTreeMap<String, u64> =
        plan.checkers.coverage_names(&plan.scenarios).into_iter().map(|n| (n, 0)).collect();
    let mut failures = Vec::new();
    let mut events = 0;
    for r in results {
        events += r.events;
        for name in &r.reached {
            if let Some(n) = coverage.get_mut(name) {
                *n += 1;
            }
        }
        if !r.verdict.is_pass() {
            let scenario = &plan.scenarios[r.scenario];
            failures.push(Failure {
                scenario: scenario.name.clone(),
                seed: r.seed,
                verdict: r.verdict.class().to_string(),
                checker: r.verdict.checker().unwrap_or("").to_string(),
                message: r.verdict.message(),
                reproducer: None,
                replay: plan.replay_command(scenario, r.seed),
            });
        }
    }
    let mut report = SweepReport {
        version: crate::VERSION.to_string(),
        scenarios: plan.scenarios.iter().map(|s| s.name.clone()).collect(),
        mutant: plan.mutant.map(|m| m.name().to_string()),
        seeds_run: results.len() as u64,
        violations: 0,
        hangs: 0,
        budget_overruns: 0,
        crashes: 0,
        failures,
        coverage,
        unreached: Vec::new(),
        events,
        wall_seconds: wall.as_secs_f64(),
        seeds_per_second: 0.0,
        events_per_second: 0.0,
        stopped_early,
    };
    report.finish();
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(jobs: usize, shard: Option<(u64, u64)>) -> SweepPlan {
        SweepPlan {
            scenarios: vec![Scenario::built_in("smoke").unwrap()],
            start: 10,
            count: 24,
            shard,
            mutant: Some(Mutant::NoReleaseOnError),
            strategy: None,
            jobs,
            time_budget: None,
            checkers: CheckerSet::built_in(),
        }
    }

    fn fingerprints(p: &SweepPlan) -> Vec<(u64, u64, String)> {
        let (results, early) = run(p, &AtomicBool::new(false), &|_, _| {});
        assert!(!early);
        results.into_iter().map(|r| (r.seed, r.fingerprint, r.verdict.class().to_string())).collect()
    }

    #[test]
    fn two_jobs_give_exactly_the_results_of_one() {
        assert_eq!(fingerprints(&plan(1, None)), fingerprints(&plan(2, None)));
    }

    #[test]
    fn three_shards_merged_equal_the_unsharded_report() {
        let stop = AtomicBool::new(false);
        let whole = {
            let p = plan(1, None);
            let (results, _) = run(&p, &stop, &|_, _| {});
            report(&p, &results, Duration::from_secs(1), false)
        };
        let shards: Vec<SweepReport> = (0..3)
            .map(|i| {
                let p = plan(1, Some((i, 3)));
                let (results, _) = run(&p, &stop, &|_, _| {});
                report(&p, &results, Duration::from_secs(1), false)
            })
            .collect();
        let merged = SweepReport::merge(&shards).unwrap();
        assert_eq!(merged.seeds_run, whole.seeds_run);
        assert_eq!(merged.failures, whole.failures);
        assert_eq!(merged.coverage, whole.coverage);
        assert_eq!(merged.events, whole.events);
        assert_eq!(merged.unreached, whole.unreached);
    }

    #[test]
    fn shards_partition_the_seeds() {
        let mut all: Vec<u64> =
            (0..3).flat_map(|i| plan(1, Some((i, 3))).items().into_iter().map(|(_, s)| s)).collect();
        all.sort();
        assert_eq!(all, (10..34).collect::<Vec<_>>());
    }
}

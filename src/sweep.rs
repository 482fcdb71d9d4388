//! Sweeps: many seeds of one or more scenarios, on `jobs` threads, each seed its own
//! simulated world on its own thread. Results are tallied as seeds finish (counts, the
//! failing seeds, an order-free digest), so a night of millions of seeds holds no record
//! per seed, and the report is the same for any number of jobs; `--shard I/N` takes every
//! N-th seed from I, so N CI jobs cover one range without overlap.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sutra_sim_core::{StrategyConfig, Verdict};
use sutra_sim_model::{Mutant, RunOptions, Scenario};

use crate::plugin::{CheckerFactory, CheckerSet, ModelEvent, ModelView};
use crate::report::{Failure, ScenarioSource, SweepReport, FAILURES_KEPT_PER_CHECKER};

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
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// If the seed was re-checked for determinism and ran differently the second time:
    /// the first divergence. A failure whatever the verdict says.
    pub divergence: Option<String>,
    /// For a run grown by exploration (a branch of an earlier run): its whole tape and its
    /// strategy, which replay it where its seed alone would not.
    pub grown: Option<GrownRun>,
}

/// What replays a run grown by exploration: a child replays its parent's prefix first, and
/// may have switched strategy at its branch point, so its seed alone does not replay it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct GrownRun {
    /// The run's whole tape.
    pub tape: sutra_sim_core::Tape,
    /// The strategy it scheduled with, switch included.
    pub strategy: sutra_sim_core::StrategyConfig,
}

/// The failing "checker" of a seed that ran differently when run again.
pub const DETERMINISM: &str = "determinism";

impl SeedResult {
    /// True if the seed did not pass: a failing verdict, or a divergence.
    pub fn is_failure(&self) -> bool {
        !self.verdict.is_pass() || self.divergence.is_some()
    }

    /// What failed: [`DETERMINISM`] for a divergence, else the verdict's checker (or class).
    pub fn failing_checker(&self) -> Option<&str> {
        if self.divergence.is_some() {
            Some(DETERMINISM)
        } else {
            self.verdict.checker()
        }
    }
}

impl SweepPlan {
    /// Seeds per scenario after sharding.
    fn seeds_per_scenario(&self) -> u64 {
        let (index, of) = self.shard.unwrap_or((0, 1));
        self.count.saturating_sub(index).div_ceil(of)
    }

    /// How many (scenario, seed) pairs this plan covers.
    pub fn item_count(&self) -> u64 {
        self.seeds_per_scenario() * self.scenarios.len() as u64
    }

    /// The `i`-th (scenario, seed) pair of this plan, in plan order: seeds ascending, and
    /// for each seed every scenario in turn. Interleaved so that a sweep cut short by
    /// `--time-budget` or a signal has covered every scenario alike, rather than the first
    /// scenarios fully and the last not at all.
    pub fn item(&self, i: u64) -> Option<(usize, u64)> {
        if i >= self.item_count() {
            return None;
        }
        let scenarios = self.scenarios.len() as u64;
        let (index, of) = self.shard.unwrap_or((0, 1));
        Some(((i % scenarios) as usize, self.start + index + (i / scenarios) * of))
    }

    /// Every (scenario, seed) pair this plan covers, in order (for small plans and tests;
    /// a sweep walks them with [`SweepPlan::item`]).
    pub fn items(&self) -> Vec<(usize, u64)> {
        (0..self.item_count()).filter_map(|i| self.item(i)).collect()
    }

    /// The command that replays one seed of this plan, naming the scenario by name (a
    /// sweep of a scenario file names the file instead: [`SweepPlan::replay_command_for`]).
    pub fn replay_command(&self, scenario: &Scenario, seed: u64) -> String {
        self.replay_command_for(&scenario.name, &scenario.name, seed, false)
    }

    /// The command that replays one seed of this plan with `--scenario SCENARIO_ARG` (a
    /// built-in name or a file path), the scenario being named `name`; with
    /// `--check-determinism` for a seed that ran differently when re-checked.
    pub fn replay_command_for(&self, scenario_arg: &str, name: &str, seed: u64, determinism: bool) -> String {
        let mut base = crate::replay::run_command(scenario_arg, seed, self.mutant, self.strategy);
        if determinism {
            base.push_str(" --check-determinism");
        }
        self.checkers.replay_command(&base, name, seed, self.mutant)
    }
}

/// Runs seeds of one scenario as a sweep runs them: judged by the built-in checkers the
/// scenario selects, less the coverage properties it cannot be expected to reach
/// ([`CheckerSet::sweep_factories_for`]), resolved once (benchmarks use it, so that they
/// measure what a sweep does per seed).
pub struct SeedRunner<'a> {
    scenario: &'a Scenario,
    factories: Vec<CheckerFactory<ModelEvent, ModelView>>,
}

impl<'a> SeedRunner<'a> {
    /// A runner for `scenario`.
    ///
    /// # Panics
    ///
    /// If the scenario names a checker that is not built in: scenarios are resolved when
    /// they are loaded ([`crate::scenario_arg::resolve`]).
    pub fn new(scenario: &'a Scenario) -> SeedRunner<'a> {
        let factories = CheckerSet::built_in()
            .sweep_factories_for(scenario)
            .unwrap_or_else(|e| panic!("scenarios are resolved when loaded: {e}"));
        SeedRunner { scenario, factories }
    }

    /// Runs `seed` with the scenario's own strategy and no mutant.
    pub fn run(&self, seed: u64) -> SeedResult {
        let options = RunOptions::for_seed(seed, None, None);
        let checkers = self.factories.iter().map(|f| f()).collect();
        SeedResult::of(seed, sutra_sim_model::run_with(self.scenario, &options, checkers))
    }
}

impl SeedResult {
    /// The result of `seed` from its run's outcome (scenario index 0 until the sweep sets it).
    pub(crate) fn of(seed: u64, out: sutra_sim_core::Outcome<sutra_sim_model::ModelEvent>) -> SeedResult {
        SeedResult {
            scenario: 0,
            seed,
            verdict: out.verdict,
            events: out.events,
            fingerprint: out.fingerprint,
            reached: out.reached,
            divergence: None,
            grown: None,
        }
    }
}

/// What a sweep found, tallied as seeds finish: a sweep of millions of seeds keeps counts
/// and its failing seeds, never a record per seed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SweepTally {
    /// Seeds that ran.
    pub seeds_run: u64,
    /// Events judged over all seeds.
    pub events: u64,
    /// For each coverage property some seed reached, the seeds that reached it.
    pub reached: BTreeMap<String, u64>,
    /// The seeds that did not pass, in plan order: the first
    /// [`FAILURES_KEPT_PER_CHECKER`] of each checker (the counts are exact).
    pub failing: Vec<SeedResult>,
    /// Seeds that did not pass, by failing checker (or verdict class for hangs, budget
    /// overruns and crashes): exact, whatever was kept in `failing`.
    pub failing_by_checker: BTreeMap<String, u64>,
    /// A digest of every seed's scenario, seed, verdict class and fingerprint, independent
    /// of the order seeds finished in: equal digests mean the same runs, whatever `--jobs`.
    pub digest: u64,
    /// The share of seeds re-run to check determinism, parts per million (0: none).
    pub recheck_ppm: u32,
    /// Seeds re-run to check determinism.
    pub rechecked: u64,
}

impl SweepTally {
    /// Seeds that did not pass, whether kept in `failing` or not.
    pub fn failing_count(&self) -> u64 {
        self.failing_by_checker.values().sum()
    }

    /// Counts `result`; a failure is kept if its checker has fewer than
    /// [`FAILURES_KEPT_PER_CHECKER`] kept so far. Returns whether it was kept.
    pub(crate) fn add(&mut self, result: SeedResult) -> bool {
        let kept = self.count(&result);
        if kept {
            self.failing.push(result);
        }
        kept
    }

    /// Counts `result` (not keeping it); true if it is a failure that should be kept.
    fn count(&mut self, result: &SeedResult) -> bool {
        self.seeds_run += 1;
        self.events += result.events;
        for name in &result.reached {
            match self.reached.get_mut(name.as_str()) {
                Some(n) => *n += 1,
                None => {
                    self.reached.insert(name.clone(), 1);
                }
            }
        }
        // A wrapping sum of well-mixed terms: the same multiset of runs gives the same sum.
        let mut f = sutra_sim_core::trace::Fingerprint::default();
        f.write_u64(result.scenario as u64);
        f.write_u64(result.seed);
        f.write_u64(result.fingerprint);
        f.write(result.verdict.class().as_bytes());
        self.digest = self.digest.wrapping_add(f.value());
        match result.failing_checker() {
            None => false,
            Some(checker) => {
                let n = self.failing_by_checker.entry(checker.to_string()).or_insert(0);
                *n += 1;
                *n <= FAILURES_KEPT_PER_CHECKER as u64
            }
        }
    }

    fn merge(&mut self, other: SweepTally) {
        self.seeds_run += other.seeds_run;
        self.events += other.events;
        for (name, n) in other.reached {
            *self.reached.entry(name).or_insert(0) += n;
        }
        for (checker, n) in other.failing_by_checker {
            *self.failing_by_checker.entry(checker).or_insert(0) += n;
        }
        self.failing.extend(other.failing);
        self.digest = self.digest.wrapping_add(other.digest);
        self.rechecked += other.rechecked;
    }
}

/// Runs the plan. `stop` ends it early (a signal); `progress(done, failing)` is called
/// after each seed. Returns the tally of the seeds that ran and whether it stopped early.
pub fn run(plan: &SweepPlan, stop: &AtomicBool, progress: &(dyn Fn(u64, u64) + Sync)) -> (SweepTally, bool) {
    run_checked(plan, 0, stop, progress)
}

/// As [`run`], and re-checks the determinism of a share of the seeds, `recheck_ppm` parts
/// per million ([`crate::determinism::chosen`]): a seed that runs differently when run
/// again is a failure of its own ([`DETERMINISM`]).
pub fn run_checked(
    plan: &SweepPlan,
    recheck_ppm: u32,
    stop: &AtomicBool,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> (SweepTally, bool) {
    // Checker names resolve once per scenario, not once per seed.
    let factories: Vec<_> = plan
        .scenarios
        .iter()
        .map(|s| {
            plan.checkers.sweep_factories_for(s).unwrap_or_else(|e| panic!("checkers resolved before the sweep: {e}"))
        })
        .collect();
    let total = plan.item_count();
    let next = AtomicU64::new(0);
    let done = AtomicUsize::new(0);
    let failing = AtomicUsize::new(0);
    // Each worker tallies its own seeds; failing seeds carry their plan position so that
    // the merged list is in plan order.
    let tallies: Mutex<Vec<(SweepTally, Vec<u64>)>> = Mutex::new(Vec::new());
    let started = Instant::now();
    let stopped = AtomicBool::new(false);
    let jobs = plan.jobs.clamp(1, JOBS_MAX);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                let mut tally = SweepTally::default();
                let mut failing_at = Vec::new();
                loop {
                    if stop.load(Ordering::Relaxed) || plan.time_budget.is_some_and(|b| started.elapsed() >= b) {
                        stopped.store(true, Ordering::Relaxed);
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((s, seed)) = plan.item(i) else { break };
                    let checkers = factories[s].iter().map(|f| f()).collect();
                    let options = RunOptions::for_seed(seed, plan.strategy, plan.mutant);
                    let mut result =
                        SeedResult::of(seed, sutra_sim_model::run_with(&plan.scenarios[s], &options, checkers));
                    result.scenario = s;
                    let scenario = &plan.scenarios[s];
                    if crate::determinism::chosen(&scenario.name, seed, recheck_ppm) {
                        tally.rechecked += 1;
                        let checked = crate::determinism::check(&plan.checkers, scenario, &options)
                            .unwrap_or_else(|e| panic!("checkers resolved before the sweep: {e}"));
                        result.divergence = checked.err().map(|d| d.to_string());
                    }
                    if result.is_failure() {
                        failing.fetch_add(1, Ordering::Relaxed);
                    }
                    if tally.add(result) {
                        failing_at.push(i);
                    }
                    let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                    progress(d as u64, failing.load(Ordering::Relaxed) as u64);
                }
                tallies.lock().expect("no worker panics while holding the lock").push((tally, failing_at));
            });
        }
    });
    let mut merged = SweepTally { recheck_ppm, ..SweepTally::default() };
    let mut positions = Vec::new();
    for (tally, at) in tallies.into_inner().expect("workers are done") {
        positions.extend(at);
        merged.merge(tally);
    }
    let mut ordered: Vec<(u64, SeedResult)> = positions.into_iter().zip(merged.failing).collect();
    ordered.sort_by_key(|(i, _)| *i);
    // Each worker kept the first of each checker among its own seeds, which include the
    // first of each checker overall: keeping the first again, in plan order, gives the
    // same list for any number of jobs.
    let mut kept: BTreeMap<String, usize> = BTreeMap::new();
    merged.failing = ordered
        .into_iter()
        .map(|(_, r)| r)
        .filter(|r| {
            let n = kept.entry(r.failing_checker().unwrap_or("").to_string()).or_insert(0);
            *n += 1;
            *n <= FAILURES_KEPT_PER_CHECKER
        })
        .collect();
    let early = stopped.load(Ordering::Relaxed) && merged.seeds_run < total;
    (merged, early)
}

/// A hash of the complete scenario (its canonical TOML), for reports.
pub fn scenario_hash(scenario: &Scenario) -> u64 {
    let mut f = sutra_sim_core::trace::Fingerprint::default();
    f.write(scenario.to_toml().as_bytes());
    f.value()
}

/// A fingerprint of the model: a hash of the source that decides a run (the simulator,
/// the model, the minimiser, the tool, the built-in scenarios, `Cargo.lock`), folded by
/// `build.rs` once per build. Any change to the model or a checker changes it, so reports
/// of different models do not merge; it costs a run nothing (it was the trace
/// fingerprints of two seeds of every built-in scenario, about 50 M instructions in every
/// process that wrote a report).
pub fn model_hash() -> u64 {
    u64::from_str_radix(env!("SUTRA_SIM_MODEL_HASH"), 16).expect("build.rs writes 16 hex digits")
}

/// The coverage map of a sweep: for every coverage property the plan counts
/// ([`CheckerSet::coverage_names`]), the seeds that reached it — zeros included. Only the
/// properties some swept scenario is expected to reach are counted, so that a zero means
/// "never reached where it should have been", not "not applicable"; and only those the
/// plan's checkers run, user-registered ones included. Sweeps and `SimTest` both use it.
pub fn coverage(plan: &SweepPlan, tally: &SweepTally) -> BTreeMap<String, u64> {
    plan.checkers
        .coverage_names(&plan.scenarios)
        .into_iter()
        .map(|name| {
            let seeds = tally.reached.get(&name).copied().unwrap_or(0);
            (name, seeds)
        })
        .collect()
}

/// Builds the report of a sweep's results.
pub fn report(plan: &SweepPlan, tally: &SweepTally, wall: Duration, stopped_early: bool) -> SweepReport {
    // Only the properties some swept scenario is expected to reach are counted, so that a
    // zero means "never reached where it should have been", not "not applicable"; and only
    // those the plan's checkers run, user-registered ones included.
    let coverage = coverage(plan, tally);
    let failures = tally
        .failing
        .iter()
        .map(|r| {
            let scenario = &plan.scenarios[r.scenario];
            match &r.divergence {
                Some(divergence) => Failure {
                    scenario: scenario.name.clone(),
                    seed: r.seed,
                    verdict: "nondeterminism".to_string(),
                    checker: DETERMINISM.to_string(),
                    message: format!("the seed ran differently when run again: {divergence}"),
                    reproducer: None,
                    replay: plan.replay_command_for(&scenario.name, &scenario.name, r.seed, true),
                    grown: None,
                },
                None => Failure {
                    scenario: scenario.name.clone(),
                    seed: r.seed,
                    verdict: r.verdict.class().to_string(),
                    checker: r.verdict.checker().unwrap_or("").to_string(),
                    message: r.verdict.message(),
                    reproducer: None,
                    replay: plan.replay_command(scenario, r.seed),
                    grown: r.grown.clone(),
                },
            }
        })
        .collect();
    let scenario_sources = plan
        .scenarios
        .iter()
        .map(|s| ScenarioSource {
            name: s.name.clone(),
            file: None,
            hash: format!("{:016x}", scenario_hash(s)),
            checkers: plan.checkers.names_for(s).unwrap_or_default(),
        })
        .collect();
    let mut report = SweepReport {
        version: crate::VERSION.to_string(),
        model_hash: format!("{:016x}", model_hash()),
        scenarios: plan.scenarios.iter().map(|s| s.name.clone()).collect(),
        scenario_sources,
        start: plan.start,
        count: plan.count,
        shard: plan.shard.map(|(i, n)| format!("{i}/{n}")),
        strategy: plan.strategy.map(|s| s.label()),
        merged_shards: Vec::new(),
        missing_shards: Vec::new(),
        mutant: plan.mutant.map(|m| m.name().to_string()),
        check_determinism_rate: f64::from(tally.recheck_ppm) / f64::from(crate::determinism::PPM),
        determinism_rechecked: tally.rechecked,
        seeds_run: tally.seeds_run,
        violations: 0,
        hangs: 0,
        budget_overruns: 0,
        crashes: 0,
        failures,
        failures_by_checker: tally.failing_by_checker.clone(),
        failures_left_out: 0,
        coverage,
        unreached: Vec::new(),
        events: tally.events,
        wall_seconds: wall.as_secs_f64(),
        seeds_per_second: 0.0,
        events_per_second: 0.0,
        stopped_early,
        exploration: None,
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

    fn tally(p: &SweepPlan) -> SweepTally {
        let (tally, early) = run(p, &AtomicBool::new(false), &|_, _| {});
        assert!(!early);
        tally
    }

    #[test]
    fn two_jobs_give_exactly_the_results_of_one() {
        let (one, two) = (tally(&plan(1, None)), tally(&plan(2, None)));
        assert_eq!(one, two);
        assert_eq!(one.seeds_run, 24);
        assert!(!one.failing.is_empty(), "the mutant is caught, so the failing list is compared too");
        assert!(one.failing.windows(2).all(|w| w[0].seed < w[1].seed), "failing seeds come in plan order");
    }

    #[test]
    fn the_digest_tells_different_runs_apart() {
        let mut other = plan(1, None);
        other.start += 1;
        assert_ne!(tally(&plan(1, None)).digest, tally(&other).digest);
    }

    #[test]
    fn items_are_computed_in_plan_order_for_any_shard() {
        for shard in [None, Some((0, 1)), Some((0, 5)), Some((4, 5)), Some((2, 7)), Some((30, 31))] {
            let mut p = plan(1, shard);
            p.scenarios.push(Scenario::built_in("migration").unwrap());
            let (index, of) = shard.unwrap_or((0, 1));
            let expected: Vec<(usize, u64)> =
                (0..p.count).filter(|o| o % of == index).flat_map(|o| (0..2).map(move |s| (s, p.start + o))).collect();
            assert_eq!(p.items(), expected, "shard {shard:?}");
            assert_eq!(p.item_count(), expected.len() as u64);
            assert_eq!(p.item(p.item_count()), None);
        }
    }

    #[test]
    fn three_shards_merged_equal_the_unsharded_report() {
        let stop = AtomicBool::new(false);
        let whole = {
            let p = plan(1, None);
            let (tally, _) = run(&p, &stop, &|_, _| {});
            report(&p, &tally, Duration::from_secs(1), false)
        };
        let shards: Vec<SweepReport> = (0..3)
            .map(|i| {
                let p = plan(1, Some((i, 3)));
                let (tally, _) = run(&p, &stop, &|_, _| {});
                report(&p, &tally, Duration::from_secs(1), false)
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

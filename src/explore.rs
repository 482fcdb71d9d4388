//! Exploration of the model (`sutra-sim explore`, `sweep --explore`): a sweep that grows
//! the runs that reached something rare ([`sutra_sim_core::explore`]) instead of starting
//! every seed from zero.
//!
//! It is a sweep in everything but the choice of runs: the same plan ([`SweepPlan`]: its
//! `count` is the run budget per scenario, its `start` the first fresh seed), the same
//! tally, report, coverage, failure list, shrinking and reproducer saving. A run grown
//! from a branch point carries its whole tape in its result, so its reproducer replays
//! from the file alone. The report adds what the exploration did
//! ([`ExplorationReport`]): marks reached, branch points, children per mark, and the runs
//! to the first failure.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use sutra_sim_core::explore::{explore, ExploreConfig, ExploreStats, RunSpec, RunSummary};
use sutra_sim_core::{EntropyMode, MarkKind};
use sutra_sim_model::RunOptions;

use crate::sweep::{GrownRun, SeedResult, SweepPlan, SweepTally};

/// What an exploration did, per scenario, for the report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExplorationReport {
    /// One entry per explored scenario, in plan order.
    pub scenarios: Vec<ScenarioExploration>,
}

/// What the exploration of one scenario did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScenarioExploration {
    /// The scenario.
    pub scenario: String,
    /// Runs made.
    pub runs: u64,
    /// Of which fresh seeds (the others are branches of earlier runs).
    pub fresh_runs: u64,
    /// Of which children that switched strategy at a branch point (`--switch-percent`).
    #[serde(default)]
    pub switched_runs: u64,
    /// Of which children whose rare chances were boosted past their branch point
    /// (`--boost`, `--boost-percent`).
    #[serde(default)]
    pub boosted_runs: u64,
    /// Generations processed.
    pub generations: u64,
    /// Distinct coverage marks (bitmap slots) reached by any run.
    pub marks_reached: u64,
    /// Of which first hits of sometimes-properties.
    pub sometimes_marks: u64,
    /// Branch points made (one per new mark of a passing run).
    pub branch_points: u64,
    /// Branch points that got at least one child.
    pub branched: u64,
    /// Children per branch point: how many points got each number of children.
    pub children_per_mark: BTreeMap<u32, u64>,
    /// Children of the first hits of sometimes-properties, in all.
    pub children_of_sometimes_marks: u64,
    /// The 1-based place of the first failing run in exploration order, if any failed.
    pub runs_to_first_failure: Option<u64>,
}

impl ScenarioExploration {
    fn of(scenario: &str, stats: &ExploreStats) -> ScenarioExploration {
        let mut children_per_mark = BTreeMap::new();
        for p in &stats.points {
            *children_per_mark.entry(p.children).or_insert(0) += 1;
        }
        ScenarioExploration {
            scenario: scenario.to_string(),
            runs: stats.runs,
            fresh_runs: stats.fresh_runs,
            switched_runs: stats.switched_runs,
            boosted_runs: stats.boosted_runs,
            generations: stats.generations,
            marks_reached: stats.marks_reached,
            sometimes_marks: stats.sometimes_reached,
            branch_points: stats.points.len() as u64,
            branched: stats.branched_points() as u64,
            children_per_mark,
            children_of_sometimes_marks: stats
                .points
                .iter()
                .filter(|p| p.kind == MarkKind::Sometimes)
                .map(|p| u64::from(p.children))
                .sum(),
            runs_to_first_failure: stats.first_failure,
        }
    }
}

impl ExplorationReport {
    /// The lines the sweep summary adds for an exploration.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        for s in &self.scenarios {
            out.push_str(&format!(
                "  explored {}: {} runs ({} fresh, {} boosted, {} switched strategy) in {} generations; {} marks ({} sometimes), {} branch points ({} branched, {} children of sometimes-marks); first failure {}\n",
                s.scenario,
                s.runs,
                s.fresh_runs,
                s.boosted_runs,
                s.switched_runs,
                s.generations,
                s.marks_reached,
                s.sometimes_marks,
                s.branch_points,
                s.branched,
                s.children_of_sometimes_marks,
                s.runs_to_first_failure.map_or("none".to_string(), |n| format!("at run {n}")),
            ));
        }
        out
    }
}

/// The exploration settings for a plan: the plan's count is the run budget, its start the
/// first fresh seed; the rest are the explorer's defaults.
pub fn config_for(plan: &SweepPlan) -> ExploreConfig {
    ExploreConfig { runs: plan.count, start: plan.start, ..ExploreConfig::default() }
}

/// Explores every scenario of `plan` in turn with `config` (its `runs` per scenario),
/// tallying like a sweep; a time budget is shared out evenly over the scenarios, each
/// taking what the ones before it left. `stop` ends it between generations; `progress(done, failing)`
/// is called after each generation. Returns the tally, what the exploration did, and
/// whether it stopped early. The same for any `plan.jobs`.
pub fn run(
    plan: &SweepPlan,
    config: &ExploreConfig,
    stop: &AtomicBool,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> (SweepTally, ExplorationReport, bool) {
    let started = Instant::now();
    let mut tally = SweepTally::default();
    let mut report = ExplorationReport { scenarios: Vec::new() };
    let done = AtomicU64::new(0);
    let early = std::cell::Cell::new(false);
    for (s, scenario) in plan.scenarios.iter().enumerate() {
        let factories =
            plan.checkers.factories_for(scenario).unwrap_or_else(|e| panic!("checkers resolved before the sweep: {e}"));
        // Fresh runs schedule as the sweep's would; children may switch (`switch_percent`).
        let config = ExploreConfig { strategy: plan.strategy.unwrap_or_else(|| scenario.strategy()), ..config.clone() };
        let run_one = |spec: &RunSpec| {
            let checkers = factories.iter().map(|f| f()).collect();
            let options = RunOptions {
                entropy: spec.entropy.clone(),
                ..RunOptions::for_seed(spec.seed, Some(spec.strategy), plan.mutant)
            };
            let out = sutra_sim_model::run_marked(scenario, &options, checkers);
            let summary =
                RunSummary { marks: out.marks.clone(), tape: out.tape.clone(), failed: !out.verdict.is_pass() };
            let mut result = SeedResult::of(spec.seed, out);
            result.scenario = s;
            if matches!(spec.entropy, EntropyMode::Branch { .. }) {
                result.grown = Some(GrownRun { tape: summary.tape.clone(), strategy: spec.strategy });
            }
            (summary, result)
        };
        // A time budget is shared out over the scenarios: scenario `s` ends by its share's
        // end (what an earlier one left unspent carries over), so the first scenario of
        // `--scenario all` cannot eat a nightly's whole budget.
        let share_end = plan.time_budget.map(|b| b.mul_f64((s + 1) as f64 / plan.scenarios.len() as f64));
        let over = || {
            let over = stop.load(Ordering::Relaxed) || share_end.is_some_and(|end| started.elapsed() >= end);
            early.set(early.get() | over);
            over
        };
        let mut failing = tally.failing_count();
        let stats = explore(
            &config,
            plan.jobs,
            &run_one,
            &mut |_, _, result| {
                if result.is_failure() {
                    failing += 1;
                }
                tally.add(result);
                let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                progress(d, failing);
            },
            &over,
        );
        report.scenarios.push(ScenarioExploration::of(&scenario.name, &stats));
        if stop.load(Ordering::Relaxed) {
            break;
        }
    }
    (tally, report, early.get())
}

/// The command that re-runs an exploration and saves its failures: a grown run has no
/// seed that replays it alone, only its reproducer.
pub fn rerun_command(plan: &SweepPlan, config: &ExploreConfig, scenario_arg: &str) -> String {
    let mut command =
        format!("sutra-sim explore --scenario {scenario_arg} --runs {} --start {}", plan.count, plan.start);
    if let Some(m) = plan.mutant {
        command.push_str(&format!(" --mutant {}", m.name()));
    }
    if let Some(s) = plan.strategy {
        command.push_str(&format!(" --strategy {}", s.label()));
    }
    if config.switch_percent != ExploreConfig::default().switch_percent {
        command.push_str(&format!(" --switch-percent {}", config.switch_percent));
    }
    let default = ExploreConfig::default();
    if config.boost != default.boost {
        command.push_str(&format!(" --boost {}", config.boost));
    }
    if (config.boost_percent, config.boost_percent_settled) != (default.boost_percent, default.boost_percent_settled) {
        command.push_str(&format!(" --boost-percent {}", config.boost_percent));
    }
    command.push_str(" --save-failures DIR");
    command
}

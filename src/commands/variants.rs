//! `sutra-sim variants`: the design-decision matrix (DESIGN.md §7). Every variant of
//! `sutra_sim_model::variant::VARIANTS` runs on every scenario: a safe one must be clean
//! on every seed (judged by every checker), an unsafe one must be caught by the checker
//! the spec's argument predicts (judged by that checker alone, as a mutant's kill search
//! is: another checker, a crash or a budget overrun does not count). The first failure of
//! each variant is shrunk and saved as a reproducer, so the answer to "may we do X?" comes
//! with a run that shows why not.
//!
//! Seeds to the first failure count runs in scenario order, seed by seed (as `mutants`
//! counts them). Safe variants that run the same design share one sweep.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use serde_json::json;
use sutra_sim::plugin::CheckerSet;
use sutra_sim::reproducer::Reproducer;
use sutra_sim::save_failures::SHRINK_BUDGET_PER_FAILURE;
use sutra_sim::shrinking::{shrink_failure, FailingRun};
use sutra_sim::sweep::{self, SeedResult, SweepPlan};
use sutra_sim::{scenario_arg, VERSION};
use sutra_sim_core::{EntropyMode, Verdict};
use sutra_sim_model::variant::{Expected, Setting, VariantInfo};
use sutra_sim_model::Scenario;
use sutra_sim_shrink::Limits;

use super::*;

/// Seeds of one scenario an unsafe variant's search runs at a time (in parallel): the
/// search stops after the batch in which the expected checker first caught it.
const SEARCH_BATCH: u64 = 256;

/// What a variant's row observes when no scenario run configures the fault its argument
/// turns on ([`VariantInfo::exercised_only_by`]).
const NOT_EXERCISED: &str = "not exercised";

/// How `variants` was asked to run.
pub struct VariantsArgs {
    /// Built-in scenario name, a scenario file, or `all`.
    pub scenario: String,
    /// Seeds per scenario.
    pub count: u64,
    /// Worker threads.
    pub jobs: usize,
    /// Where reproducers go.
    pub save_dir: PathBuf,
    /// Shrink first failures before saving them.
    pub shrink: bool,
    /// Print one JSON document.
    pub json: bool,
}

/// The first failure of one variant's runs.
#[derive(Clone)]
struct FirstFailure {
    /// Index of its scenario in the resolved list.
    scenario: usize,
    seed: u64,
    verdict: Verdict,
    /// Runs made up to and including it, in scenario order.
    seeds_to_fail: u64,
}

/// What running one variant found.
#[derive(Clone)]
struct Observed {
    failure: Option<FirstFailure>,
}

pub fn variants(args: VariantsArgs) -> Outcome {
    let scenarios = scenario_arg::resolve(&args.scenario).map_err(|e| Usage(e.0))?;
    if args.count == 0 {
        return Err(Usage("--count must be at least 1".into()));
    }
    // Before the first variant runs: a save directory that cannot be made would throw the
    // whole matrix away at its first unsafe variant.
    check_save_dir(&args.save_dir, &[])?;
    let mut lost = LostOutputs::default();
    let mut rows = Vec::new();
    let mut all_as_expected = true;
    // Safe variants of one design run the same model: one sweep serves them all.
    let mut safe_runs: Vec<(Setting, Observed)> = Vec::new();
    // With the SQL store engine (`--store sqlite`), the SQL choices run too.
    let sql = scenarios.iter().any(|s| s.store.engine.runs_sql());
    for info in sutra_sim_model::variant::all(sql) {
        let observed = match info.expected {
            Expected::Safe => match safe_runs.iter().find(|(s, _)| *s == info.setting) {
                Some((_, o)) => o.clone(),
                None => {
                    let o = sweep_safe(info, &scenarios, args.count, args.jobs);
                    safe_runs.push((info.setting, o.clone()));
                    o
                }
            },
            Expected::Unsafe(_) => search_unsafe(info, &scenarios, args.count, args.jobs),
        };
        // A variant whose argument turns on a fault none of the scenarios configures ran
        // as the spec's design does there: not exercised, which is not "safe".
        let needs = info.exercised_only_by();
        let exercised = needs.is_none_or(|kind| scenarios.iter().any(|s| s.faults.configured_on(kind)));
        let observed_text = match (&observed.failure, exercised) {
            (Some(_), _) => "unsafe",
            (None, false) => NOT_EXERCISED,
            (None, true) => "safe",
        };
        let as_expected = observed_text == info.expected.as_str() || observed_text == NOT_EXERCISED;
        all_as_expected &= as_expected;
        let reproducer = match &observed.failure {
            Some(f) => match save_reproducer(info, &scenarios[f.scenario], f, &args.save_dir, args.shrink) {
                Ok(path) => Some(path),
                Err(e) => {
                    lost.keep(Err(e));
                    None
                }
            },
            None => None,
        };
        let failure = observed.failure.as_ref();
        let expected_checker = match info.expected {
            Expected::Safe => None,
            Expected::Unsafe(c) => Some(c),
        };
        rows.push(json!({
            "name": info.name,
            "spec": info.spec,
            "description": info.description,
            "expected": info.expected.as_str(),
            "expected_checker": expected_checker,
            "observed": observed_text,
            "needs": needs.map(|kind| kind.name()),
            "as_expected": as_expected,
            "checker": failure.and_then(|f| f.verdict.checker().map(str::to_string)),
            "message": failure.map(|f| f.verdict.message()),
            "scenario": failure.map(|f| scenarios[f.scenario].name.clone()),
            "seed": failure.map(|f| f.seed),
            "seeds_to_fail": failure.map(|f| f.seeds_to_fail),
            "reproducer": reproducer,
        }));
    }
    let doc = json!({
        "version": VERSION,
        "scenarios": scenarios.iter().map(|s| s.name.clone()).collect::<Vec<_>>(),
        "count": args.count,
        "variants": rows,
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&doc).expect("reports serialise"));
    } else {
        print_matrix(&rows, args.count, scenarios.len());
    }
    Ok(lost.exit(if all_as_expected { ExitCode::SUCCESS } else { ExitCode::from(1) }))
}

/// The matrix as a table, one variant a line, columns as wide as their widest cell.
fn print_matrix(rows: &[serde_json::Value], count: u64, scenarios: usize) {
    let text = |row: &serde_json::Value, key: &str| match &row[key] {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) => n.to_string(),
        _ => "-".to_string(),
    };
    let mut cells = vec![["variant", "spec 000 section", "expected", "observed", "checker", "seeds", "reproducer"]
        .map(str::to_string)
        .to_vec()];
    for row in rows {
        let mut observed = text(row, "observed");
        if row["as_expected"] != json!(true) {
            observed.push_str(" (NOT AS EXPECTED)");
        }
        cells.push(vec![
            text(row, "name"),
            text(row, "spec"),
            text(row, "expected"),
            observed,
            text(row, "checker"),
            text(row, "seeds_to_fail"),
            text(row, "reproducer"),
        ]);
    }
    let widths: Vec<usize> = (0..7).map(|c| cells.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    for row in &cells {
        let line: Vec<String> = row.iter().enumerate().map(|(c, cell)| format!("{cell:<w$}", w = widths[c])).collect();
        println!("{}", line.join("  ").trim_end());
    }
    println!("{} variant(s), {count} seed(s) of each of {scenarios} scenario(s)", rows.len());
}

/// The plan that runs `info` on `scenarios`, seeds `start..start + count`, judged by
/// `checkers`.
fn plan_for(
    info: &VariantInfo,
    scenarios: &[Scenario],
    start: u64,
    count: u64,
    jobs: usize,
    checkers: CheckerSet,
) -> SweepPlan {
    let applied: Vec<(Scenario, Option<sutra_sim_model::Mutant>)> = scenarios.iter().map(|s| info.apply(s)).collect();
    let mutant = applied.first().and_then(|(_, m)| *m);
    SweepPlan {
        scenarios: applied.into_iter().map(|(s, _)| s).collect(),
        start,
        count,
        shard: None,
        mutant,
        strategy: None,
        jobs,
        time_budget: None,
        checkers,
    }
}

/// The checkers that judge `info`: every one for a safe variant, the expected ones alone
/// for an unsafe one.
fn checkers_for(info: &VariantInfo) -> CheckerSet {
    match info.expected {
        Expected::Safe => CheckerSet::built_in(),
        Expected::Unsafe(_) => CheckerSet::built_in()
            .only(info.expected.checkers())
            .expect("a variant's expected checkers are registered (tested)"),
    }
}

/// The earliest failure (in scenario order, then seed) among `failing` that `counts`.
fn earliest(failing: &[SeedResult], count: u64, counts: impl Fn(&SeedResult) -> bool) -> Option<FirstFailure> {
    failing.iter().filter(|r| counts(r)).min_by_key(|r| (r.scenario, r.seed)).map(|r| FirstFailure {
        scenario: r.scenario,
        seed: r.seed,
        verdict: r.verdict.clone(),
        seeds_to_fail: r.scenario as u64 * count + r.seed + 1,
    })
}

/// Runs a safe variant on every seed of every scenario: any failure makes it unsafe.
fn sweep_safe(info: &VariantInfo, scenarios: &[Scenario], count: u64, jobs: usize) -> Observed {
    let plan = plan_for(info, scenarios, 0, count, jobs, checkers_for(info));
    let (tally, _) = sweep::run(&plan, &AtomicBool::new(false), &|_, _| {});
    Observed { failure: earliest(&tally.failing, count, |_| true) }
}

/// Searches for the first seed on which an unsafe variant's expected checker catches it,
/// a batch of seeds of one scenario at a time.
fn search_unsafe(info: &VariantInfo, scenarios: &[Scenario], count: u64, jobs: usize) -> Observed {
    let caught = |r: &SeedResult| match &r.verdict {
        Verdict::Pass | Verdict::Crash { .. } | Verdict::BudgetExceeded { .. } => false,
        other => other.checker().is_some_and(|c| info.expects(c)),
    };
    let needs = info.exercised_only_by();
    let mut searched = 0;
    for (index, scenario) in scenarios.iter().enumerate() {
        // Where the fault its argument turns on is off, it runs as the spec's design does.
        if needs.is_some_and(|kind| !scenario.faults.configured_on(kind)) {
            continue;
        }
        searched += 1;
        let mut start = 0;
        while start < count {
            let batch = SEARCH_BATCH.min(count - start);
            let plan = plan_for(info, std::slice::from_ref(scenario), start, batch, jobs, checkers_for(info));
            let (tally, _) = sweep::run(&plan, &AtomicBool::new(false), &|_, _| {});
            if let Some(mut first) = earliest(&tally.failing, count, caught) {
                first.scenario = index;
                first.seeds_to_fail = (searched - 1) * count + first.seed + 1;
                return Observed { failure: Some(first) };
            }
            start += batch;
        }
    }
    Observed { failure: None }
}

/// Shrinks (or records) `info`'s first failure and saves it in `dir`; returns the path.
fn save_reproducer(
    info: &VariantInfo,
    scenario: &Scenario,
    failure: &FirstFailure,
    dir: &Path,
    shrink: bool,
) -> Result<String, String> {
    let (applied, mutant) = info.apply(scenario);
    let run = FailingRun::from_seed(applied, failure.seed, mutant, None).with_checkers(checkers_for(info));
    let shrunk = if shrink {
        shrink_failure(&run, Limits { time_budget: SHRINK_BUDGET_PER_FAILURE, ..Limits::default() }).ok()
    } else {
        None
    };
    let reproducer = match shrunk {
        Some(s) => s.reproducer,
        None => {
            let outcome = run
                .run(&run.scenario, EntropyMode::Seed(run.seed), false)
                .map_err(|e| format!("variant {}: {e}", info.name))?;
            let note = format!(
                "{} seed {}: variant {} ({}), found by sutra-sim {} variants; saved as recorded",
                scenario.name, failure.seed, info.name, info.description, VERSION
            );
            Reproducer::record(&run.recorded_scenario(&run.scenario), run.seed, run.strategy, mutant, &outcome, note)
        }
    };
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let stem = format!("variant-{}-{}-seed-{}", info.name, scenario.name, failure.seed);
    reproducer.save_in(dir, &stem).map(|p| p.display().to_string()).map_err(|e| e.0)
}

//! `sutra-sim mutants`: the kill matrix: every known-bad variant caught by the checker
//! expected to catch it (a crash, a budget overrun or another checker is not a kill), the
//! correct model clean.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use serde_json::json;
use sutra_sim::files::write_atomically;
use sutra_sim::plugin::CheckerSet;
use sutra_sim::sweep::{self, SweepPlan};
use sutra_sim::{scenario_arg, VERSION};
use sutra_sim_model::MUTANTS;

use super::*;

pub fn mutants(scenario_arg: &str, count: u64, jobs: usize, report_path: Option<PathBuf>, json: bool) -> Outcome {
    let scenarios = scenario_arg::resolve(scenario_arg).map_err(|e| Usage(e.0))?;
    if count == 0 {
        return Err(Usage("--count must be at least 1".into()));
    }
    check_outputs(&scenario_input(scenario_arg), &[("--report", report_path.as_ref())])?;
    let mut rows = Vec::new();
    let mut all_killed = true;
    for info in MUTANTS.iter() {
        let started = Instant::now();
        let search = first_kill(info, &scenarios, count);
        let wall_ms = started.elapsed().as_millis() as u64;
        let kill = search.kill.as_ref();
        all_killed &= kill.is_some();
        if !json {
            match (kill, &search.error) {
                (Some(k), _) => println!(
                    "killed   {:<30} by {:<34} after {:>5} seed(s), {wall_ms:>6} ms  ({} seed {})",
                    info.name,
                    k.verdict.checker().unwrap_or(""),
                    search.tried,
                    k.scenario,
                    k.seed
                ),
                (None, Some(error)) => println!("SURVIVED {:<30} {error}", info.name),
                (None, None) => println!(
                    "SURVIVED {:<30} {} seed(s), {wall_ms} ms; expected {} ({} other failure(s) are not kills)",
                    info.name, search.tried, info.caught_by, search.not_kills
                ),
            }
        }
        rows.push(json!({
            "name": info.name,
            "rules": info.rules,
            "deep": info.deep,
            "killed": kill.is_some(),
            "checker": kill.and_then(|k| k.verdict.checker().map(str::to_string)),
            "expected_checker": info.caught_by,
            "as_expected": kill.is_some(),
            "message": kill.map(|k| k.verdict.message()),
            "scenario": kill.map(|k| k.scenario.clone()),
            "seed": kill.map(|k| k.seed),
            "seeds_to_kill": kill.map(|_| search.tried),
            "other_failures": search.not_kills,
            "error": search.error,
            "wall_ms": wall_ms,
        }));
    }
    let plan = SweepPlan {
        scenarios,
        start: 0,
        count,
        shard: None,
        mutant: None,
        strategy: None,
        jobs,
        time_budget: None,
        checkers: CheckerSet::built_in(),
    };
    let started = Instant::now();
    let (results, _) = sweep::run(&plan, &AtomicBool::new(false), &|_, _| {});
    let correct = sweep::report(&plan, &results, started.elapsed(), false);
    let doc = json!({
        "version": VERSION,
        "mutants": rows,
        "correct_seeds": correct.seeds_run,
        "correct_violations": correct.violations,
        "correct_failures": correct.failures,
    });
    let mut lost = LostOutputs::default();
    if let Some(path) = &report_path {
        let text = serde_json::to_string_pretty(&doc).expect("reports serialise");
        lost.keep(written(path, write_atomically(path, text.as_bytes())));
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&doc).expect("reports serialise"));
    } else {
        println!("correct model: {} seed(s), {} failing", correct.seeds_run, correct.violations);
        for f in correct.failures.iter().take(5) {
            println!("  {} seed {}: {}: {}\n    replay: {}", f.scenario, f.seed, f.checker, f.message, f.replay);
        }
    }
    Ok(lost.exit(if all_killed && correct.violations == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) }))
}

/// A mutant's kill: the run that its expected checker failed.
struct Kill {
    scenario: String,
    seed: u64,
    verdict: sutra_sim_core::Verdict,
}

/// What a search for a mutant's kill found.
struct KillSearch {
    /// The first kill by an expected checker, if any.
    kill: Option<Kill>,
    /// Runs made, the killing one included.
    tried: u64,
    /// Runs that failed otherwise (a crash, a budget overrun, an unexpected hang): not kills.
    not_kills: u64,
    /// Why no search could run (an expected checker is not registered).
    error: Option<String>,
}

/// Runs seeds `0..count` of each scenario with `info`'s mutant on, judged only by the
/// checkers expected to catch it (DESIGN.md §7: a crash, a budget overrun or another
/// checker is not a kill), until one kills it. Judging by the expected checkers alone
/// keeps the search from stopping at a seed where another checker spoke first, and costs
/// no more than a run with every checker.
fn first_kill(
    info: &sutra_sim_model::mutant::MutantInfo,
    scenarios: &[sutra_sim_model::Scenario],
    count: u64,
) -> KillSearch {
    let mut search = KillSearch { kill: None, tried: 0, not_kills: 0, error: None };
    for scenario in scenarios {
        for seed in 0..count {
            let outcome = match sutra_sim_model::run_for_kill(scenario, seed, info) {
                Ok(outcome) => outcome,
                Err(e) => {
                    search.error = Some(e);
                    return search;
                }
            };
            search.tried += 1;
            if info.killed_by(&outcome.verdict) {
                search.kill = Some(Kill { scenario: scenario.name.clone(), seed, verdict: outcome.verdict });
                return search;
            }
            if !outcome.verdict.is_pass() {
                search.not_kills += 1;
            }
        }
    }
    search
}

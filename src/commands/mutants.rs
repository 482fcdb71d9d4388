//! `sutra-sim mutants`: the kill matrix: every known-bad variant caught, the correct model clean.

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
    check_outputs(&[("--report", report_path.as_ref())])?;
    let mut rows = Vec::new();
    let mut all_killed = true;
    for info in MUTANTS.iter() {
        let started = Instant::now();
        let mut tried = 0u64;
        let mut kill = None;
        'search: for scenario in &scenarios {
            for seed in 0..count {
                tried += 1;
                let r = sweep::run_seed(scenario, seed, Some(info.mutant), None);
                if !r.verdict.is_pass() {
                    kill = Some((scenario.name.clone(), seed, r.verdict));
                    break 'search;
                }
            }
        }
        let wall_ms = started.elapsed().as_millis() as u64;
        all_killed &= kill.is_some();
        if !json {
            match &kill {
                Some((s, seed, v)) => println!(
                    "killed   {:<26} by {:<22} after {tried:>5} seed(s), {wall_ms:>6} ms  ({s} seed {seed})",
                    info.name,
                    v.checker().unwrap_or("")
                ),
                None => {
                    println!("SURVIVED {:<26} {tried} seed(s), {wall_ms} ms; expected {}", info.name, info.caught_by)
                }
            }
        }
        rows.push(json!({
            "name": info.name,
            "rules": info.rules,
            "killed": kill.is_some(),
            "checker": kill.as_ref().and_then(|(_, _, v)| v.checker().map(str::to_string)),
            "expected_checker": info.caught_by,
            "as_expected": kill.as_ref().and_then(|(_, _, v)| v.checker()).is_some_and(|c| info.expects(c)),
            "message": kill.as_ref().map(|(_, _, v)| v.message()),
            "scenario": kill.as_ref().map(|(s, _, _)| s.clone()),
            "seed": kill.as_ref().map(|(_, seed, _)| *seed),
            "seeds_to_kill": kill.as_ref().map(|_| tried),
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
    if let Some(path) = &report_path {
        let text = serde_json::to_string_pretty(&doc).expect("reports serialise");
        write_atomically(path, text.as_bytes()).map_err(|e| Usage(format!("cannot write {}: {e}", path.display())))?;
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&doc).expect("reports serialise"));
    } else {
        println!("correct model: {} seed(s), {} failing", correct.seeds_run, correct.violations);
        for f in correct.failures.iter().take(5) {
            println!("  {} seed {}: {}: {}\n    replay: {}", f.scenario, f.seed, f.checker, f.message, f.replay);
        }
    }
    Ok(if all_killed && correct.violations == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

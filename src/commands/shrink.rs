//! `sutra-sim shrink`: a failing run — a reproducer, or a scenario, seed and mutant — made
//! as small as it goes, saved as a reproducer, with the before/after figures of DESIGN.md
//! §10. The exit code follows the shrunk run's verdict, like `run` and `replay`: 1, since it
//! fails; a run that passes has nothing to shrink and is bad input (exit 2).

use std::path::{Path, PathBuf};

use serde_json::json;
use sutra_sim::plugin::CheckerSet;
use sutra_sim::replay::replay;
use sutra_sim::replay::replay_file_command as replay_command;
use sutra_sim::reproducer::Reproducer;
use sutra_sim::scenario_arg;
use sutra_sim::shrinking::{shrink_failure, FailingRun};
use sutra_sim_core::parse_duration;
use sutra_sim_shrink::Limits;

use super::*;

pub struct ShrinkArgs {
    pub file: Option<PathBuf>,
    pub scenario: Option<String>,
    pub seed: Option<u64>,
    pub mutant: Option<String>,
    pub output: Option<PathBuf>,
    pub time_budget: Option<String>,
    pub json: bool,
}

pub fn shrink(a: ShrinkArgs) -> Outcome {
    let mut limits = Limits::default();
    if let Some(text) = &a.time_budget {
        limits.time_budget = parse_duration(text).map_err(|e| Usage(format!("--time-budget: {e}")))?;
    }
    let mut inputs = a.scenario.as_deref().map(scenario_input).unwrap_or_default();
    inputs.extend(a.file.as_deref().map(|f| ("the reproducer", f)));
    check_outputs(&inputs, &[("-o", a.output.as_ref())])?;
    let (run, default_output) = match (&a.file, &a.scenario, a.seed) {
        (Some(file), None, None) => {
            if a.mutant.is_some() {
                return Err(Usage("--mutant goes with --scenario and --seed; a reproducer names its own".into()));
            }
            let reproducer = Reproducer::load(file).map_err(|e| Usage(e.0))?;
            let replayed = replay(&reproducer, &CheckerSet::built_in(), false)
                .map_err(|e| Usage(format!("{}: {e}", file.display())))?;
            let run = if replayed.reproduced() {
                FailingRun::from_reproducer(&reproducer)
            } else {
                // A stale tape no longer drives the model the recorded way: start again
                // from the seed, in the scenario it first failed in.
                eprintln!("note: {} is stale; shrinking its seed's run instead", file.display());
                let scenario = reproducer.seed_scenario().clone();
                FailingRun::from_seed(scenario, reproducer.seed, reproducer.mutant, Some(reproducer.strategy))
            };
            (run, beside(file, "shrunk"))
        }
        (None, Some(scenario), Some(seed)) => {
            let resolved = scenario_arg::resolve_one(scenario).map_err(|e| Usage(e.0))?;
            let mutant = parse_mutant(a.mutant.clone())?;
            let stem = sutra_sim::reproducer::file_stem(&resolved.name, seed, mutant);
            (FailingRun::from_seed(resolved, seed, mutant, None), PathBuf::from(format!("{stem}.toml")))
        }
        _ => return Err(Usage("shrink takes a reproducer FILE, or --scenario S --seed N [--mutant M]".into())),
    };
    let result = shrink_failure(&run, limits).map_err(Usage)?;
    let saved = match &a.output {
        // An explicit path is never overwritten by a different reproducer.
        Some(path) => result.reproducer.save(path).map(|_| path.clone()),
        None => {
            let dir = default_output.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            let stem = default_output.file_stem().and_then(|s| s.to_str()).unwrap_or("shrunk");
            result.reproducer.save_in(dir, stem)
        }
    };
    let path = match saved {
        Ok(path) => path,
        // The shrink is done and its result is lost: say what it was, and exit 3.
        Err(e) => {
            if !a.json {
                println!("{}", result.reproducer.expected.describe());
            }
            let mut lost = LostOutputs::default();
            lost.keep(Err(e.0));
            return Ok(lost.exit(ExitCode::from(1)));
        }
    };
    let wall_ms = result.wall.as_millis() as u64;
    if a.json {
        let doc = json!({
            "reproducer": path.display().to_string(),
            "checker": result.checker,
            "events_before": result.events_before,
            "events_after": result.events_after,
            "tape_before": result.tape_before,
            "tape_after": result.tape_after,
            "faults_before": result.faults_before,
            "faults_after": result.faults_after,
            "wall_ms": wall_ms,
            "verdict": result.reproducer.expected.verdict,
            "message": result.reproducer.expected.message,
            "fingerprint": format!("{:016x}", result.reproducer.fingerprint),
            "scenario_changes": result.knob_changes,
            "runs": result.oracle_calls,
            "stopped_by": result.stop.as_str(),
            "replay": replay_command(&path),
        });
        println!("{doc}");
    } else {
        println!("{}", result.reproducer.expected.describe());
        println!(
            "shrunk: {} → {} events, {} → {} draws, {} → {} faults, in {wall_ms} ms ({} runs, stopped by {})",
            result.events_before,
            result.events_after,
            result.tape_before,
            result.tape_after,
            result.faults_before,
            result.faults_after,
            result.oracle_calls,
            result.stop.as_str()
        );
        if !result.knob_changes.is_empty() {
            println!("scenario: {}", result.knob_changes.join(", "));
        }
        println!("saved {}", path.display());
        println!("replay: {}", replay_command(&path));
    }
    Ok(ExitCode::from(1))
}

/// `DIR/STEM.SUFFIX.toml` beside `file`.
fn beside(file: &Path, suffix: &str) -> PathBuf {
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("reproducer");
    file.with_file_name(format!("{stem}.{suffix}.toml"))
}

//! `sutra-sim replay FILE`: rerun a reproducer exactly, say whether the recorded run came
//! back, and tell the story of its failing instance.
//!
//! Exit codes follow the verdict, like `run`: 0 if the reproducer reproduced and records a
//! pass, 1 if it reproduced a failure. A stale reproducer (its tape no longer gives the
//! recorded run) exits 1 whatever its fallback shows — it can vouch for nothing until it is
//! re-recorded. A file that is not a valid reproducer exits 2.

use std::path::PathBuf;

use serde_json::json;
use sutra_sim::plugin::CheckerSet;
use sutra_sim::replay::{replay as replay_reproducer, Reproduction};
use sutra_sim::replay::{replay_file_command as replay_command, run_command};
use sutra_sim::reproducer::Reproducer;
use sutra_sim::story;

use super::*;

/// The outputs `replay` may write besides its report.
pub struct ReplayOutputs {
    /// A Perfetto timeline.
    pub perfetto: Option<PathBuf>,
    /// The run's witness events as JSON Lines ([`sutra_sim::history`]).
    pub history: Option<PathBuf>,
}

pub fn replay(file: &std::path::Path, trace: bool, outputs: ReplayOutputs, log: bool, json: bool) -> Outcome {
    let ReplayOutputs { perfetto, history } = outputs;
    let reproducer = Reproducer::load(file).map_err(|e| Usage(e.0))?;
    check_outputs(&[("the reproducer", file)], &[("--perfetto", perfetto.as_ref()), ("--history", history.as_ref())])?;
    let replayed = logged(log, || replay_reproducer(&reproducer, &CheckerSet::built_in(), true))?.map_err(|e| {
        Usage(format!(
            "{}: {e} (a reproducer of your own checkers replays in your program: sutra_sim::replay)",
            file.display()
        ))
    })?;
    let out = &replayed.outcome;
    let mut lost = LostOutputs::default();
    if let Some(path) = &perfetto {
        let title = format!("{} (seed {})", file.display(), reproducer.seed);
        lost.keep(written(path, sutra_sim::perfetto::write(out, reproducer.scenario.topology.lanes, &title, path)));
    }
    let timeline = perfetto.as_ref().filter(|_| lost.is_empty());
    if let Some(path) = &history {
        let info = sutra_sim::history::RunInfo {
            scenario: &reproducer.scenario,
            seed: reproducer.seed,
            mutant: reproducer.mutant.map(|m| m.name()),
            strategy: reproducer.strategy.label(),
        };
        lost.keep(written(path, sutra_sim::history::write(&info, out, path)));
    }
    let told = story::tell(out);
    let command = replay_command(file);
    let fallback_command = seed_command(&reproducer);
    if json {
        let mut doc = outcome_json(out);
        let extra = json!({
            "status": if replayed.reproduced() { "reproduced" } else { "stale" },
            "expected": reproducer.expected,
            "expected_fingerprint": format!("{:016x}", reproducer.fingerprint),
            "scenario": reproducer.scenario.name,
            "seed": reproducer.seed,
            "mutant": reproducer.mutant.map(|m| m.name()),
            "strategy": reproducer.strategy.label(),
            "framework": reproducer.framework,
            "note": reproducer.note,
            "story": told.lines,
            "replay": command,
        });
        if let serde_json::Value::Object(extra) = extra {
            doc.extend(extra);
        }
        if let Reproduction::Stale { differences, fallback } = &replayed.reproduction {
            doc.insert("differences".into(), json!(differences));
            doc.insert(
                "fallback".into(),
                json!({
                    "verdict": fallback.verdict.class(),
                    "checker": fallback.verdict.checker(),
                    "message": fallback.verdict.message(),
                    "fingerprint": format!("{:016x}", fallback.fingerprint),
                    "command": fallback_command,
                }),
            );
        }
        if trace {
            doc.insert("trace".into(), json!(story::trace_lines(out)));
        }
        if let Some(path) = timeline {
            doc.insert("perfetto".into(), json!(path.display().to_string()));
        }
        if let Some(path) = &history {
            doc.insert("history".into(), json!(path.display().to_string()));
        }
        println!("{}", serde_json::to_string_pretty(&doc).expect("documents serialise"));
    } else {
        if trace {
            for line in story::trace_lines(out) {
                println!("{line}");
            }
            println!();
        }
        match &replayed.reproduction {
            Reproduction::Reproduced => println!("REPRODUCED: {}", out.verdict),
            Reproduction::Stale { differences, fallback } => {
                println!(
                    "STALE: the tape no longer gives the recorded run (recorded by sutra-sim {}; the model, a checker or the file's scenario changed since):",
                    reproducer.framework
                );
                for d in differences {
                    println!("  {d}");
                }
                println!("the tape now gives: {}", out.verdict);
                println!("fallback, the seed re-run ({fallback_command}): {}", fallback.verdict);
                println!("re-record it from its seed: sutra-sim shrink {} -o NEW_FILE", file.display());
            }
        }
        println!(
            "fingerprint {:016x}, {} events, {} simulated, tape of {} draws",
            out.fingerprint,
            out.events,
            story::seconds(out.sim_time),
            reproducer.tape.len()
        );
        println!("note: {}", reproducer.note);
        println!();
        print!("{told}");
        if let Some(path) = timeline {
            println!("\ntimeline written to {} (open it in https://ui.perfetto.dev)", path.display());
        }
        if !out.verdict.is_pass() || !replayed.reproduced() {
            println!("\nreplay: {command}");
        }
    }
    Ok(lost.exit(if replayed.reproduced() { exit_for(&out.verdict) } else { ExitCode::from(1) }))
}

/// The `run` command that reruns the reproducer's seed, when its scenario is a built-in
/// one with that name; otherwise a description (the scenario exists only in the file).
fn seed_command(r: &Reproducer) -> String {
    let scenario = r.seed_scenario();
    let built_in = sutra_sim_model::Scenario::built_in(&scenario.name).ok().as_ref() == Some(scenario);
    if built_in {
        run_command(&scenario.name, r.seed, r.mutant, Some(r.strategy))
    } else {
        format!("seed {} in the file's own {} scenario", r.seed, scenario.name)
    }
}

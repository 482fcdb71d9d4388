//! `sutra-sim run`: one seed of one scenario, its verdict and fingerprint.

use std::path::PathBuf;

use serde_json::json;
use sutra_sim::plugin::CheckerSet;
use sutra_sim::scenario_arg;
use sutra_sim_core::EntropyMode;
use sutra_sim_model::RunOptions;

use super::*;

pub fn run(
    scenario_arg: &str,
    seed: u64,
    mutant: Option<String>,
    strategy: Option<String>,
    perfetto: Option<PathBuf>,
    (only, skip): (Vec<String>, Vec<String>),
    json: bool,
) -> Outcome {
    let scenario = scenario_arg::resolve_one(scenario_arg).map_err(|e| Usage(e.0))?;
    check_outputs(&[("--perfetto", perfetto.as_ref())])?;
    let checkers = CheckerSet::built_in().only(only).and_then(|c| c.skip(skip)).map_err(|e| Usage(e.0))?;
    let judges = checkers.build_for(&scenario).map_err(|e| Usage(e.0))?;
    let mutant = parse_mutant(mutant)?;
    let strategy = parse_strategy(strategy)?;
    let options = RunOptions { entropy: EntropyMode::Seed(seed), strategy, mutant, keep_trace: perfetto.is_some() };
    let out = sutra_sim_model::run_with(&scenario, &options, judges);
    if let Some(path) = &perfetto {
        let title = format!("{} seed {seed}", scenario.name);
        sutra_sim::perfetto::write(&out, scenario.topology.lanes, &title, path)
            .map_err(|e| Usage(format!("cannot write {}: {e}", path.display())))?;
    }
    let replay =
        checkers.replay_command(&replay_command(scenario_arg, seed, mutant, strategy), &scenario.name, seed, mutant);
    if json {
        let mut doc = outcome_json(&out);
        let extra = json!({
            "scenario": scenario.name,
            "seed": seed,
            "mutant": mutant.map(|m| m.name()),
            "strategy": strategy.unwrap_or_else(|| scenario.strategy()).label(),
            "tape_len": out.tape.len(),
            "replay": replay,
        });
        if let serde_json::Value::Object(extra) = extra {
            doc.extend(extra);
        }
        println!("{}", serde_json::Value::Object(doc));
    } else {
        println!("{}", out.verdict);
        println!(
            "fingerprint {:016x}, {} events, {} simulated, tape of {} draws",
            out.fingerprint,
            out.events,
            out.sim_time,
            out.tape.len()
        );
        if !out.verdict.is_pass() {
            println!("replay: {replay}");
        }
    }
    Ok(exit_for(&out.verdict))
}

//! `sutra-sim run`: one seed of one scenario, its verdict and fingerprint.

use std::path::PathBuf;

use serde_json::json;
use sutra_sim::plugin::CheckerSet;
use sutra_sim::scenario_arg;
use sutra_sim_core::EntropyMode;
use sutra_sim_model::RunOptions;

use super::*;

/// The arguments of `sutra-sim run`.
#[derive(clap::Args)]
pub struct RunArgs {
    /// Built-in scenario name or path to a scenario TOML file.
    #[arg(long, default_value = "smoke")]
    pub scenario: String,
    /// The seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Switch on a known-bad variant of the model.
    #[arg(long)]
    pub mutant: Option<String>,
    /// Override the scenario's strategy: random, pct, pct:DEPTH, pct:DEPTH:HORIZON.
    #[arg(long)]
    pub strategy: Option<String>,
    /// Write a Perfetto/Chrome trace-event timeline.
    #[arg(long)]
    pub perfetto: Option<PathBuf>,
    /// Write every witness event of the run (store, broker, executor), pass or fail, as
    /// JSON Lines after a header line; the schema is docs/history.md.
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,
    /// Run only this checker (repeatable); by default the scenario's checkers, or all.
    #[arg(long = "checker", value_name = "NAME")]
    pub checker: Vec<String>,
    /// Do not run this checker (repeatable).
    #[arg(long = "skip-checker", value_name = "NAME")]
    pub skip_checker: Vec<String>,
    /// Write the run's log to stderr: every event as a `tracing` record stamped with
    /// simulated time and node, filtered by `RUST_LOG`-style directives taken from
    /// `RUST_LOG` (default `debug`, all of it).
    #[arg(long)]
    pub log: bool,
    /// Run the seed twice more and fail (exit 1) if the runs differ, naming the first
    /// divergent event.
    #[arg(long)]
    pub check_determinism: bool,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
}

/// Runs one seed and prints (or, with `--json`, prints as one document) its verdict.
pub fn run(args: RunArgs) -> Outcome {
    let RunArgs {
        scenario: scenario_arg,
        seed,
        mutant,
        strategy,
        perfetto,
        history,
        checker: only,
        skip_checker: skip,
        log,
        check_determinism,
        json,
    } = args;
    let scenario_arg = scenario_arg.as_str();
    let scenario = scenario_arg::resolve_one(scenario_arg).map_err(|e| Usage(e.0))?;
    check_outputs(
        &scenario_input(scenario_arg),
        &[("--perfetto", perfetto.as_ref()), ("--history", history.as_ref())],
    )?;
    let checkers = CheckerSet::built_in().only(only).and_then(|c| c.skip(skip)).map_err(|e| Usage(e.0))?;
    let judges = checkers.build_for(&scenario).map_err(|e| Usage(e.0))?;
    let mutant = parse_mutant(mutant)?;
    let strategy = parse_strategy(strategy)?;
    let options = RunOptions {
        entropy: EntropyMode::Seed(seed),
        strategy,
        mutant,
        keep_trace: perfetto.is_some() || history.is_some(),
    };
    let out = logged(log, || sutra_sim_model::run_with(&scenario, &options, judges))?;
    // Twice more, each with fresh checkers and a fresh world: the first event where the two
    // runs part is where a wall clock, a HashMap's order or a static leaked in.
    let divergence = if check_determinism {
        sutra_sim::determinism::check(&checkers, &scenario, &options).map_err(|e| Usage(e.0))?.err()
    } else {
        None
    };
    let mut lost = LostOutputs::default();
    if let Some(path) = &perfetto {
        let title = format!("{} seed {seed}", scenario.name);
        lost.keep(written(path, sutra_sim::perfetto::write(&out, scenario.topology.lanes, &title, path)));
    }
    if let Some(path) = &history {
        let info = sutra_sim::history::RunInfo {
            scenario: &scenario,
            seed,
            mutant: mutant.map(|m| m.name()),
            strategy: strategy.unwrap_or_else(|| scenario.strategy()).label(),
        };
        lost.keep(written(path, sutra_sim::history::write(&info, &out, path)));
    }
    let mut replay = checkers.replay_command(
        &sutra_sim::replay::run_command(scenario_arg, seed, mutant, strategy),
        &scenario.name,
        seed,
        mutant,
    );
    if divergence.is_some() {
        replay.push_str(" --check-determinism");
    }
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
        if check_determinism {
            doc.insert(
                "determinism".into(),
                json!({"same": divergence.is_none(), "divergence": divergence.as_ref().map(|d| d.to_string())}),
            );
        }
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
        match (&divergence, check_determinism) {
            (Some(d), _) => println!("NONDETERMINISM: the seed ran differently when run again: {d}"),
            (None, true) => println!("determinism: the seed ran the same twice more"),
            (None, false) => {}
        }
        if !out.verdict.is_pass() || divergence.is_some() {
            println!("replay: {replay}");
        }
    }
    Ok(lost.exit(if divergence.is_some() { ExitCode::from(1) } else { exit_for(&out.verdict) }))
}

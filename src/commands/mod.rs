//! The subcommands, one file each, and what they share: the usage error (exit 2), the
//! replay command line, parsing of mutants and strategies.

pub mod bench;
pub mod check;
pub mod list;
pub mod merge;
pub mod mutants;
pub mod replay;
pub mod run;
pub mod shrink;
pub mod signals;
pub mod sweep;
pub mod variants;

use std::path::PathBuf;
use std::process::ExitCode;

use sutra_sim::files::{check_writable, same_file, write_atomically};
use sutra_sim::report::SweepReport;

use sutra_sim_core::{StrategyConfig, Verdict};
use sutra_sim_model::Mutant;

/// A command's failure from bad usage or bad input: printed as one line, exit 2.
pub struct Usage(pub String);

/// What a command returns.
pub type Outcome = Result<ExitCode, Usage>;

/// Runs `f`, writing its simulated run's log to stderr when `log` is set, filtered by the
/// `RUST_LOG` directives (default `debug`: every record of the model and the simulator).
/// A filter that does not parse is bad usage.
pub fn logged<R>(log: bool, f: impl FnOnce() -> R) -> Result<R, Usage> {
    if !log {
        return Ok(f());
    }
    let directives = std::env::var("RUST_LOG").unwrap_or_else(|_| "debug".to_string());
    let filter: sutra_sim_core::log::LogFilter = directives.parse().map_err(|e| Usage(format!("RUST_LOG: {e}")))?;
    Ok(sutra_sim_core::log::with_log(&filter, std::io::stderr(), f).0)
}

pub fn parse_mutant(name: Option<String>) -> Result<Option<Mutant>, Usage> {
    name.map(|n| Mutant::parse(&n).map_err(Usage)).transpose()
}

pub fn parse_strategy(text: Option<String>) -> Result<Option<StrategyConfig>, Usage> {
    text.map(|t| StrategyConfig::parse(&t).map_err(Usage)).transpose()
}

pub fn exit_for(verdict: &Verdict) -> ExitCode {
    if verdict.is_pass() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Checks every output file a command was given, before it does any work: each must be
/// writable ([`check_writable`]) and no two may be the same file. `outputs` pairs each
/// option's name with its value.
pub fn check_outputs(outputs: &[(&str, Option<&PathBuf>)]) -> Result<(), Usage> {
    let given: Vec<(&str, &PathBuf)> = outputs.iter().filter_map(|(flag, p)| p.map(|p| (*flag, p))).collect();
    for (i, (flag, path)) in given.iter().enumerate() {
        check_writable(path).map_err(|e| Usage(format!("{flag} {e}")))?;
        if let Some((other, _)) = given[..i].iter().find(|(_, p)| same_file(p, path)) {
            return Err(Usage(format!("{other} and {flag} name the same file {}: give each its own", path.display())));
        }
    }
    Ok(())
}

/// Writes a sweep report as JSON and/or JUnit XML, atomically.
pub fn write_report_files(report: &SweepReport, json: Option<&PathBuf>, junit: Option<&PathBuf>) -> Result<(), Usage> {
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(report).expect("reports serialise");
        write_atomically(path, text.as_bytes()).map_err(|e| Usage(format!("cannot write {}: {e}", path.display())))?;
    }
    if let Some(path) = junit {
        write_atomically(path, report.junit().as_bytes())
            .map_err(|e| Usage(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}

/// The fields of DESIGN.md §10's `run --json` that describe an outcome; `run` and `replay`
/// both start their documents from these.
pub fn outcome_json(
    out: &sutra_sim_core::Outcome<sutra_sim_model::ModelEvent>,
) -> serde_json::Map<String, serde_json::Value> {
    let doc = serde_json::json!({
        "verdict": out.verdict.class(),
        "checker": out.verdict.checker(),
        "message": out.verdict.message(),
        "fingerprint": format!("{:016x}", out.fingerprint),
        "events": out.events,
        "sim_time_ms": out.sim_time.as_millis(),
    });
    match doc {
        serde_json::Value::Object(map) => map,
        _ => unreachable!("a json! object literal is an object"),
    }
}

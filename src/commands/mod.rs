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

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sutra_sim::files::{check_directory_writable, check_writable, is_device, is_within, same_file, write_atomically};
use sutra_sim::report::SweepReport;

use sutra_sim_core::{StrategyConfig, Verdict};
use sutra_sim_model::Mutant;

/// A command's failure from bad usage or bad input: printed as one line, exit 2.
pub struct Usage(pub String);

/// What a command returns.
pub type Outcome = Result<ExitCode, Usage>;

/// The exit code of a command that did its work — a sweep that ran, a shrink that shrank —
/// and then could not write some output it was asked for. Not 2, which promises that
/// nothing was written (here some outputs may have been); not 1 or 0, which would let a
/// nightly take an incomplete set of artifacts for a complete red or green run. The
/// summary on stdout still gives the verdict, and stderr names every output lost.
pub const EXIT_OUTPUT_LOST: u8 = 3;

/// The outputs a command could not write after doing its work; each error is printed
/// when it happens, and [`LostOutputs::exit`] turns any into [`EXIT_OUTPUT_LOST`].
#[derive(Default)]
pub struct LostOutputs(Vec<String>);

impl LostOutputs {
    /// Notes a write's result, printing its error at once.
    pub fn keep(&mut self, result: Result<(), String>) {
        if let Err(e) = result {
            eprintln!("error: {e}");
            self.0.push(e);
        }
    }

    /// True if nothing was lost.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `code` if every output was written; otherwise [`EXIT_OUTPUT_LOST`], after one loud
    /// last line on stderr.
    pub fn exit(self, code: ExitCode) -> ExitCode {
        if self.0.is_empty() {
            return code;
        }
        eprintln!(
            "error: OUTPUT LOST: {} output(s) could not be written (above); the verdict printed stands, but the outputs named are missing or incomplete (exit {EXIT_OUTPUT_LOST})",
            self.0.len()
        );
        ExitCode::from(EXIT_OUTPUT_LOST)
    }
}

/// A write's error as the line [`LostOutputs`] prints.
pub fn written(path: &Path, result: std::io::Result<()>) -> Result<(), String> {
    result.map_err(|e| format!("cannot write {}: {e}", path.display()))
}

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
/// writable ([`check_writable`]), no two may be the same file, and none may be one of the
/// `inputs` (the same file through links too, [`same_file`]): `sweep --scenario sc.toml
/// --report sc.toml` would replace the scenario with its report. Both lists pair each
/// option's name (or what a positional argument is) with its value. A character device is
/// written into, never replaced, so it may be named more than once.
pub fn check_outputs(inputs: &[(&str, &Path)], outputs: &[(&str, Option<&PathBuf>)]) -> Result<(), Usage> {
    let given: Vec<(&str, &PathBuf)> = outputs.iter().filter_map(|(flag, p)| p.map(|p| (*flag, p))).collect();
    for (i, (flag, path)) in given.iter().enumerate() {
        check_writable(path).map_err(|e| Usage(format!("{flag} {e}")))?;
        if is_device(path) {
            continue;
        }
        if let Some((what, input)) = inputs.iter().find(|(_, input)| same_file(input, path)) {
            return Err(Usage(format!(
                "{flag} {} is the same file as {what} {}: writing it would destroy an input; give another path",
                path.display(),
                input.display()
            )));
        }
        if let Some((other, _)) = given[..i].iter().find(|(_, p)| same_file(p, path)) {
            return Err(Usage(format!("{other} and {flag} name the same file {}: give each its own", path.display())));
        }
    }
    Ok(())
}

/// Checks a directory reproducers will be saved in (`--save-failures DIR`), before any
/// work: it can be created or written ([`check_directory_writable`]), and no output file is
/// the directory or inside it — a report among the reproducers would be uploaded, listed
/// and replayed as one of them, or take a reproducer's name.
pub fn check_save_dir(dir: &Path, outputs: &[(&str, Option<&PathBuf>)]) -> Result<(), Usage> {
    for (flag, path) in outputs.iter().filter_map(|(flag, p)| p.map(|p| (*flag, p))) {
        if is_within(path, dir) {
            return Err(Usage(format!(
                "{flag} {} is inside --save-failures {}: the save directory holds reproducers only; write the report elsewhere",
                path.display(),
                dir.display()
            )));
        }
    }
    check_directory_writable(dir).map_err(|e| Usage(format!("--save-failures {e}")))
}

/// The `--scenario` value as an input file, if it names one.
pub fn scenario_input(value: &str) -> Vec<(&'static str, &Path)> {
    sutra_sim::scenario_arg::file_of(value).map(|f| ("--scenario", Path::new(f))).into_iter().collect()
}

/// Writes a sweep report as JSON and/or JUnit XML, atomically.
pub fn write_report_files(report: &SweepReport, json: Option<&PathBuf>, junit: Option<&PathBuf>) -> Result<(), String> {
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(report).expect("reports serialise");
        written(path, write_atomically(path, text.as_bytes()))?;
    }
    if let Some(path) = junit {
        written(path, write_atomically(path, report.junit().as_bytes()))?;
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

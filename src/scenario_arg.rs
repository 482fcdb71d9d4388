//! Resolving `--scenario` arguments: a built-in name, `all`, or a path to a TOML file.

use std::path::Path;

use sutra_sim_model::scenario::{ScenarioError, BUILT_IN};
use sutra_sim_model::sql_store::StoreEngine;
use sutra_sim_model::Scenario;

use crate::plugin::CheckerSet;

/// Most bytes a scenario file may hold (1 MiB; the built-in ones are about 2 KiB): a
/// scenario of unknown size (`/dev/zero`, a FIFO) is read only this far, then refused.
pub const SCENARIO_BYTES_MAX: u64 = 1 << 20;

/// Resolves one `--scenario` value to scenarios: `all` gives every built-in one; a value
/// ending in `.toml` or containing a path separator is read as a file; anything else is a
/// built-in name. The checkers a scenario names (`run.checkers`) must be built-in ones —
/// the command line knows no others — and an unknown one is refused here, at load time,
/// with the known ones listed. A program with its own checkers uses [`resolve_with`].
pub fn resolve(value: &str) -> Result<Vec<Scenario>, ScenarioError> {
    resolve_with(value, &CheckerSet::built_in())
}

/// As [`resolve`], resolving the scenarios' checker names against `checkers`.
pub fn resolve_with(value: &str, checkers: &CheckerSet) -> Result<Vec<Scenario>, ScenarioError> {
    let scenarios = load(value)?;
    checkers.check_scenarios(&scenarios).map_err(|e| ScenarioError(format!("{}: {e}", origin(value))))?;
    Ok(scenarios)
}

/// Where a `--scenario` value's text comes from, for error messages.
fn origin(value: &str) -> String {
    if is_file(value) {
        value.to_string()
    } else if value == "all" {
        "scenarios/".to_string()
    } else {
        format!("scenarios/{value}.toml")
    }
}

/// The file a `--scenario` value names, if it names one (rather than a built-in scenario
/// or `all`).
pub fn file_of(value: &str) -> Option<&str> {
    is_file(value).then_some(value)
}

fn is_file(value: &str) -> bool {
    value.ends_with(".toml") || value.contains('/') || value.contains(std::path::MAIN_SEPARATOR)
}

/// Reads the scenarios a `--scenario` value names without resolving their checker names:
/// for a program that registers checkers after loading (resolve them with
/// [`CheckerSet::check_scenarios`] before running).
pub fn load(value: &str) -> Result<Vec<Scenario>, ScenarioError> {
    let mut scenarios = load_as_written(value)?;
    if let Some(o) = STORE_OVERRIDE.get() {
        for scenario in &mut scenarios {
            o.apply(scenario).map_err(|e| ScenarioError(format!("{}: {e}", origin(value))))?;
        }
    }
    Ok(scenarios)
}

/// The store engine and statements file the command line chose (`--store`, `--sql`),
/// applied to every scenario a `--scenario` value loads.
#[derive(Clone, Debug, Default)]
pub struct StoreOverride {
    /// `--store`.
    pub engine: Option<StoreEngine>,
    /// `--sql`: the file's name and text.
    pub sql: Option<(String, String)>,
}

impl StoreOverride {
    /// `scenario` with the command line's engine and statements, checked.
    pub fn apply(&self, scenario: &mut Scenario) -> Result<(), String> {
        if let Some((name, text)) = &self.sql {
            scenario.store.sql = Some(name.clone());
            scenario.store.sql_text = Some(text.clone());
            scenario.store.layer()?;
            if scenario.store.engine == StoreEngine::Model {
                scenario.store.engine = StoreEngine::Sqlite;
            }
        }
        if let Some(engine) = self.engine {
            scenario.store.engine = engine;
        }
        scenario.store.validate()
    }
}

static STORE_OVERRIDE: std::sync::OnceLock<StoreOverride> = std::sync::OnceLock::new();

/// Sets the command line's store choice, once, before any scenario loads.
pub fn set_store_override(o: StoreOverride) {
    STORE_OVERRIDE.set(o).expect("the store override is set once");
}

/// The command line's `--store` and `--sql`, as they belong in a replay line (empty if
/// neither was given).
pub fn store_flags() -> String {
    let Some(o) = STORE_OVERRIDE.get() else { return String::new() };
    let mut flags = String::new();
    if let Some(engine) = o.engine {
        flags.push_str(&format!(" --store {}", engine.name()));
    }
    if let Some((name, _)) = &o.sql {
        flags.push_str(&format!(" --sql {}", crate::replay::shell_word(name)));
    }
    flags
}

/// [`load`] without the command line's store choice.
fn load_as_written(value: &str) -> Result<Vec<Scenario>, ScenarioError> {
    if value == "all" {
        return Ok(Scenario::all_built_in());
    }
    if is_file(value) {
        let text = crate::files::read_text_bounded(
            Path::new(value),
            SCENARIO_BYTES_MAX,
            "scenario file",
            "SCENARIO_BYTES_MAX",
        )
        .map_err(|e| ScenarioError(format!("cannot read scenario file {e}")))?;
        return Ok(vec![Scenario::from_toml(&text, value)?]);
    }
    Ok(vec![Scenario::built_in(value)?])
}

/// Resolves a value that must name exactly one scenario.
pub fn resolve_one(value: &str) -> Result<Scenario, ScenarioError> {
    if value == "all" {
        return Err(ScenarioError("this command runs one scenario; `all` is for sweep and mutants".into()));
    }
    Ok(resolve(value)?.remove(0))
}

/// Names of the built-in scenarios.
pub fn built_in_names() -> Vec<&'static str> {
    BUILT_IN.iter().map(|(n, _)| *n).collect()
}

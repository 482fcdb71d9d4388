//! Resolving `--scenario` arguments: a built-in name, `all`, or a path to a TOML file.

use std::path::Path;

use sutra_sim_model::scenario::{ScenarioError, BUILT_IN};
use sutra_sim_model::Scenario;

/// Resolves one `--scenario` value to scenarios: `all` gives every built-in one; a value
/// ending in `.toml` or containing a path separator is read as a file; anything else is a
/// built-in name.
pub fn resolve(value: &str) -> Result<Vec<Scenario>, ScenarioError> {
    if value == "all" {
        return Ok(Scenario::all_built_in());
    }
    if value.ends_with(".toml") || value.contains('/') || value.contains(std::path::MAIN_SEPARATOR) {
        let text = std::fs::read_to_string(Path::new(value))
            .map_err(|e| ScenarioError(format!("cannot read scenario file {value}: {e}")))?;
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

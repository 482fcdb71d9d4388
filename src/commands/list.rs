//! `sutra-sim list`: scenarios, checkers, faults and mutants.

use std::process::ExitCode;

use serde_json::json;
use sutra_sim_model::{checkers, Scenario, MUTANTS};

use super::*;

pub fn list(what: &str, json: bool) -> Outcome {
    let rows: Vec<serde_json::Value> = match what {
        "scenarios" => {
            Scenario::all_built_in().iter().map(|s| json!({"name": s.name, "description": s.description})).collect()
        }
        "checkers" => checkers::registry()
            .specs()
            .map(|s| json!({"name": s.name, "kind": s.kind.as_str(), "rules": s.rules, "description": s.description}))
            .collect(),
        "faults" => sutra_sim_model::faults::FaultKind::ALL
            .iter()
            .map(|k| json!({"name": k.name(), "description": k.description()}))
            .collect(),
        "mutants" => MUTANTS
            .iter()
            .map(|m| json!({"name": m.name, "rules": m.rules, "caught_by": m.caught_by, "description": m.description}))
            .collect(),
        _ => unreachable!("clap checks the value"),
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&rows).expect("lists serialise"));
        return Ok(ExitCode::SUCCESS);
    }
    for row in &rows {
        let name = row["name"].as_str().unwrap_or("");
        let detail = match what {
            "checkers" => format!(
                "{:<10} {:<28} {}",
                row["kind"].as_str().unwrap_or(""),
                rules_text(&row["rules"]),
                row["description"].as_str().unwrap_or("")
            ),
            "mutants" => format!(
                "breaks {:<8} caught by {:<22} {}",
                row["rules"].as_str().unwrap_or(""),
                row["caught_by"].as_str().unwrap_or(""),
                row["description"].as_str().unwrap_or("")
            ),
            _ => row["description"].as_str().unwrap_or("").to_string(),
        };
        println!("{name:<38} {detail}");
    }
    Ok(ExitCode::SUCCESS)
}

pub fn rules_text(v: &serde_json::Value) -> String {
    v.as_array().map(|a| a.iter().filter_map(|r| r.as_str()).collect::<Vec<_>>().join(",")).unwrap_or_default()
}

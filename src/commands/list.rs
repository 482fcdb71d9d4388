//! `sutra-sim list`: scenarios, checkers, faults, mutants and variants.

use std::process::ExitCode;

use serde_json::json;
use sutra_sim_model::{checkers, Scenario, MUTANTS};

use super::*;

pub fn list(what: &str, json: bool) -> Outcome {
    let rows: Vec<serde_json::Value> = match what {
        "scenarios" => {
            Scenario::all_built_in().iter().map(|s| json!({"name": s.name, "description": s.description})).collect()
        }
        // What each checker reads and who emits it: a verdict rests on witnesses only when
        // none of its inputs is a narrative (self-report) event.
        "checkers" => checkers::registry()
            .specs()
            .map(|s| {
                let inputs = checkers::inputs(s);
                let reads: Vec<serde_json::Value> = inputs
                    .iter()
                    .map(|i| json!({"event": i.name, "tag": i.tag, "emitter": i.source.as_str()}))
                    .collect();
                json!({
                    "name": s.name,
                    "kind": s.kind.as_str(),
                    "rules": s.rules,
                    "description": s.description,
                    "reads": reads,
                    "witnesses_only": inputs.iter().all(|i| i.source.is_witness()),
                })
            })
            .collect(),
        "faults" => sutra_sim_model::faults::FaultKind::ALL
            .iter()
            .map(|k| json!({"name": k.name(), "description": k.description()}))
            .collect(),
        "mutants" => MUTANTS
            .iter()
            .map(|m| json!({"name": m.name, "rules": m.rules, "caught_by": m.caught_by, "deep": m.deep, "description": m.description}))
            .collect(),
        // With `--store sqlite` (or `--sql`), the SQL choices that `variants` then runs too.
        "variants" => sutra_sim_model::variant::all(!sutra_sim::scenario_arg::store_flags().is_empty())
            .map(|v| {
                let caught_by = match v.expected {
                    sutra_sim_model::variant::Expected::Safe => None,
                    sutra_sim_model::variant::Expected::Unsafe(c) => Some(c),
                };
                json!({
                    "name": v.name,
                    "spec": v.spec,
                    "expected": v.expected.as_str(),
                    "caught_by": caught_by,
                    "description": v.description,
                })
            })
            .collect(),
        _ => unreachable!("clap checks the value"),
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&rows).expect("lists serialise"));
        return Ok(ExitCode::SUCCESS);
    }
    // Columns as wide as their widest cell, so no column runs into the next.
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            let text = |key: &str| row[key].as_str().unwrap_or("").to_string();
            match what {
                "checkers" => vec![text("name"), text("kind"), rules_text(&row["rules"]), text("description")],
                "mutants" => vec![
                    text("name"),
                    format!("breaks {}", text("rules")),
                    format!("caught by {}", text("caught_by")),
                    // Deep mutants need rare events together (DESIGN.md §7, issue #14).
                    if row["deep"].as_bool() == Some(true) { "deep".to_string() } else { String::new() },
                    text("description"),
                ],
                "variants" => vec![
                    text("name"),
                    text("expected"),
                    match row["caught_by"].as_str() {
                        Some(c) => format!("caught by {c}"),
                        None => String::new(),
                    },
                    format!("spec 000: {}", text("spec")),
                    text("description"),
                ],
                _ => vec![text("name"), text("description")],
            }
        })
        .collect();
    let columns = cells.first().map_or(0, Vec::len);
    let widths: Vec<usize> =
        (0..columns).map(|c| cells.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    for row in &cells {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c + 1 == columns {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<width$}  ", width = widths[c]));
            }
        }
        println!("{}", line.trim_end());
    }
    Ok(ExitCode::SUCCESS)
}

pub fn rules_text(v: &serde_json::Value) -> String {
    v.as_array().map(|a| a.iter().filter_map(|r| r.as_str()).collect::<Vec<_>>().join(",")).unwrap_or_default()
}

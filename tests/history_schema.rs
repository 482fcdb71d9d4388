//! `docs/history.schema.json` describes what `run --history` writes: every line of real
//! runs' histories validates against it. The validator is the small subset of JSON Schema
//! the file uses (`oneOf`, `type`, `required`, `properties`, `const`, `enum`, `minimum`,
//! `items`), written here rather than pulled in as a crate: it is forty lines, and the
//! schema is ours to keep inside that subset.

use serde_json::Value;
use sutra_sim::history::{render, RunInfo};
use sutra_sim::plugin::CheckerSet;
use sutra_sim_model::{RunOptions, Scenario};

fn type_ok(name: &str, v: &Value) -> bool {
    match name {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "integer" => v.is_u64() || v.is_i64(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        other => panic!("the schema uses type {other}, which this validator does not know"),
    }
}

/// Why `v` does not validate against `schema`, if it does not.
fn invalid(schema: &Value, v: &Value) -> Option<String> {
    if let Some(options) = schema.get("oneOf").and_then(Value::as_array) {
        let fits = options.iter().filter(|o| invalid(o, v).is_none()).count();
        return (fits != 1).then(|| format!("fits {fits} of oneOf: {v}"));
    }
    match schema.get("type") {
        Some(Value::String(t)) if !type_ok(t, v) => return Some(format!("not {t}: {v}")),
        Some(Value::Array(ts)) if !ts.iter().any(|t| type_ok(t.as_str().unwrap(), v)) => {
            return Some(format!("not any of {ts:?}: {v}"))
        }
        _ => {}
    }
    if let Some(c) = schema.get("const") {
        if c != v {
            return Some(format!("{v} is not {c}"));
        }
    }
    if let Some(Value::Array(e)) = schema.get("enum") {
        if !e.contains(v) {
            return Some(format!("{v} not in {e:?}"));
        }
    }
    if let (Some(min), Some(n)) = (schema.get("minimum").and_then(Value::as_f64), v.as_f64()) {
        if n < min {
            return Some(format!("{n} below {min}"));
        }
    }
    for key in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
        if v.get(key.as_str().unwrap()).is_none() {
            return Some(format!("no {key}"));
        }
    }
    if let (Some(Value::Object(props)), Some(obj)) = (schema.get("properties"), v.as_object()) {
        for (key, sub) in props {
            if let Some(why) = obj.get(key).and_then(|x| invalid(sub, x)) {
                return Some(format!("{key}: {why}"));
            }
        }
    }
    if let (Some(items), Some(arr)) = (schema.get("items"), v.as_array()) {
        return arr.iter().find_map(|x| invalid(items, x));
    }
    None
}

#[test]
fn every_line_run_history_writes_validates_against_the_schema_and_every_kind_is_listed() {
    let schema: Value = serde_json::from_str(include_str!("../docs/history.schema.json")).unwrap();
    let mut known: Vec<String> =
        schema["oneOf"][1]["knownKinds"].as_array().unwrap().iter().map(|k| k.as_str().unwrap().to_string()).collect();
    let mut kinds = sutra_sim::history::witness_kinds();
    known.sort();
    kinds.sort();
    assert_eq!(known, kinds, "the schema lists every witness kind");
    for (name, seed) in [("smoke", 0), ("swarm", 1), ("real-world", 2), ("pull-workers", 3)] {
        let scenario = Scenario::built_in(name).unwrap();
        let outcome = CheckerSet::built_in()
            .run(&scenario, &RunOptions { keep_trace: true, ..RunOptions::seeded(seed) })
            .unwrap();
        let info = RunInfo { scenario: &scenario, seed, mutant: None, strategy: "random".into() };
        for (i, line) in render(&info, &outcome).lines().enumerate() {
            let v: Value = serde_json::from_str(line).unwrap();
            if let Some(why) = invalid(&schema, &v) {
                panic!("{name} seed {seed} line {}: {why}", i + 1);
            }
        }
    }
    // The validator refuses what the schema forbids.
    let bad: Value =
        serde_json::from_str(r#"{"seq":-1,"time_ns":0,"node":"n","kind":"swept","witness":"store"}"#).unwrap();
    assert!(invalid(&schema, &bad).is_some());
    let bad: Value =
        serde_json::from_str(r#"{"seq":1,"time_ns":0,"node":"n","kind":"swept","witness":"narrative"}"#).unwrap();
    assert!(invalid(&schema, &bad).is_some());
}

//! A run's history (`--history`, docs/history.md) and who the checkers believe (issue #12):
//! the file round-trips, holds witness events only, is re-checkable from the file alone by
//! `examples/history_check.rs`, and is never written to a bad path; `list checkers --json`
//! names each checker's input events and their emitters.

use std::path::Path;

use serde_json::Value;
use sutra_sim::history;
use sutra_sim::model::event::tag;
use sutra_sim::model::{ModelEvent, Mutant, RunOptions, Scenario};
use sutra_sim::plugin::CheckerSet;

mod common;
use common::{s, sutra_sim};

/// A scratch directory of this file's own for test `name`.
fn scratch(name: &str) -> common::Scratch {
    common::scratch("history", name)
}

#[path = "../examples/history_check.rs"]
#[allow(dead_code)] // the example's `main` is not used here
mod example;

/// The kebab names of the narrative (self-report) event kinds.
fn narrative_names() -> Vec<&'static str> {
    (0..tag::COUNT).filter(|t| !tag::source(*t).unwrap().is_witness()).map(|t| tag::name(t).unwrap()).collect()
}

/// Runs `scenario` seed `seed` with `mutant` through the command line with `--json
/// --history`; the exit code, the run's JSON document and the history file's text.
fn run_with_history(dir: &Path, scenario: &str, seed: u64, mutant: Option<&str>) -> (i32, Value, String) {
    let file = dir.join(format!("{scenario}-{seed}.jsonl"));
    let seed_text = seed.to_string();
    let mut args = vec!["run", "--scenario", scenario, "--seed", &seed_text, "--json", "--history", s(&file)];
    if let Some(m) = mutant {
        args.extend(["--mutant", m]);
    }
    let (code, out, err) = sutra_sim(&args);
    assert!(code == 0 || code == 1, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    (code, doc, std::fs::read_to_string(&file).unwrap())
}

#[test]
fn a_failing_mutant_runs_history_round_trips_and_is_re_checked_from_the_file_alone() {
    let dir = scratch("mutant");
    // The first smoke seed the built-in checkers fail with release-before-commit (the
    // releasing write lands before the commit, which the store then takes from nobody's
    // claim). Searched, so the test outlives changes to which seed fails.
    let (seed, doc, text) = (0..40)
        .map(|seed| (seed, run_with_history(&dir, "smoke", seed, Some("release-before-commit"))))
        .find(|(_, (code, _, _))| *code == 1)
        .map(|(seed, (_, doc, text))| (seed, doc, text))
        .expect("release-before-commit fails some smoke seed below 40");

    // The header says which run it is and how it ended, as `run --json` does.
    let parsed = history::parse(&text).unwrap();
    let header = &parsed.header;
    assert_eq!((header.history.as_str(), header.version), ("sutra-sim", 1));
    assert_eq!((header.scenario.as_str(), header.seed), ("smoke", seed));
    assert_eq!(header.mutant.as_deref(), Some("release-before-commit"));
    assert_eq!(header.verdict, doc["verdict"].as_str().unwrap());
    assert_eq!(header.checker.as_deref(), doc["checker"].as_str());
    assert_eq!(header.fingerprint, doc["fingerprint"].as_str().unwrap());
    assert_eq!(header.events, doc["events"].as_u64().unwrap());
    assert_eq!(header.witness_events, parsed.events.len() as u64);

    // Every line is a witness event, in order, and names a node of the run.
    let narrative = narrative_names();
    let mut last = None;
    for line in &parsed.events {
        let kind = line["kind"].as_str().unwrap();
        assert!(!narrative.contains(&kind), "a narrative event in the history: {kind}");
        assert!(["store", "broker", "executor"].contains(&line["witness"].as_str().unwrap()));
        assert!(header.nodes.iter().any(|n| line["node"] == n.as_str()));
        let seq = line["seq"].as_u64().unwrap();
        assert!(seq < header.events && last.is_none_or(|l| l < seq));
        last = Some(seq);
    }

    // The same run in process: each witness event of its trace is a line, field for field.
    let scenario = Scenario::built_in("smoke").unwrap();
    let mutant = Mutant::parse("release-before-commit").unwrap();
    let options = RunOptions { keep_trace: true, ..RunOptions::for_seed(seed, None, Some(mutant)) };
    let outcome = CheckerSet::built_in().run(&scenario, &options).ok().unwrap();
    let witnesses: Vec<_> = outcome.trace.iter().filter(|e| e.kind.source().is_witness()).collect();
    assert_eq!(witnesses.len(), parsed.events.len());
    for (event, line) in witnesses.iter().zip(&parsed.events) {
        assert_eq!(line["seq"].as_u64(), Some(event.seq));
        assert_eq!(line["time_ns"].as_u64(), Some(event.time.as_nanos()));
        if let Value::Object(outer) = serde_json::to_value(&event.kind).unwrap() {
            let variant = outer.keys().next().unwrap().clone();
            // Back to the event: the line's fields under the variant's name deserialise
            // to the event the run emitted.
            let fields: serde_json::Map<String, Value> = line
                .iter()
                .filter(|(k, _)| !history::LINE_KEYS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let back: ModelEvent = serde_json::from_value(serde_json::json!({ variant: fields })).unwrap();
            assert_eq!(&back, &event.kind);
        }
    }

    // Anyone's checker, from the file alone: a commit accepted from nobody's claim.
    let report = example::check(&text).unwrap();
    let breach = report.breach.expect("the re-check finds the commit the mutant let through");
    assert!(breach.contains("claim was held by nobody"), "{breach}");
}

#[test]
fn the_correct_model_passes_the_independent_re_check() {
    let dir = scratch("correct");
    for scenario in ["smoke", "process-pause", "slow-steps"] {
        for seed in 0..3 {
            let (code, _, text) = run_with_history(&dir, scenario, seed, None);
            assert_eq!(code, 0);
            let report = example::check(&text).unwrap();
            assert!(report.commits > 0 && report.breach.is_none(), "{scenario} seed {seed}: {report:?}");
        }
    }
}

#[test]
fn a_history_that_passed_the_checkers_you_ran_can_still_be_caught_by_your_own_checker() {
    // Run with one built-in checker that does not judge ownership (linear-history): the
    // release-before-commit runs pass it, and their histories still show each commit taken
    // from nobody's claim — a rule anyone can check from the file after the fact.
    let dir = scratch("passing-mutant");
    let caught = (0..10)
        .filter(|seed| {
            let file = dir.join(format!("narrow-{seed}.jsonl"));
            let seed = seed.to_string();
            let (code, _, err) = sutra_sim(&[
                "run",
                "--seed",
                &seed,
                "--mutant",
                "release-before-commit",
                "--checker",
                "linear-history",
                "--history",
                s(&file),
            ]);
            assert!(code == 0 || code == 1, "{err}");
            code == 0 && example::check(&std::fs::read_to_string(&file).unwrap()).unwrap().breach.is_some()
        })
        .count();
    assert!(caught > 0, "no release-before-commit seed in 0..10 passed linear-history and was caught from its history");
}

#[test]
fn a_bad_history_path_exits_2_before_the_run_and_writes_nothing() {
    let dir = scratch("bad-path");
    let missing = dir.join("no-such-dir").join("h.jsonl");
    let (code, out, err) = sutra_sim(&["run", "--seed", "0", "--history", s(&missing)]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("--history"), "{err}");
    assert!(out.is_empty(), "the run did not start: {out}");
    // A directory is not a file to replace.
    let (code, _, err) = sutra_sim(&["run", "--seed", "0", "--history", s(&dir)]);
    assert_eq!(code, 2, "{err}");
    // The same file for two outputs.
    let both = dir.join("both.json");
    let (code, _, err) = sutra_sim(&["run", "--seed", "0", "--perfetto", s(&both), "--history", s(&both)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("same file"), "{err}");
    assert!(!both.exists());
    let reproducer = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/per-process-owner.toml");
    let (code, _, err) = sutra_sim(&["replay", s(&reproducer), "--history", s(&missing)]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "nothing written");
}

#[test]
fn replay_writes_the_history_of_the_replayed_run() {
    let dir = scratch("replay");
    let reproducer = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/per-process-owner.toml");
    let file = dir.join("replay.jsonl");
    let (code, out, err) = sutra_sim(&["replay", s(&reproducer), "--json", "--history", s(&file)]);
    // 1 either way: the reproducer's failure came back, or it is stale on a changed model.
    assert_eq!(code, 1, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let parsed = history::parse(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(parsed.header.fingerprint, doc["fingerprint"].as_str().unwrap());
    assert_eq!(parsed.header.mutant.as_deref(), Some("per-process-owner"));
    assert_eq!(parsed.header.events, doc["events"].as_u64().unwrap());
    assert_eq!(doc["history"], s(&file));
    assert_eq!(parsed.header.witness_events, parsed.events.len() as u64);
}

#[test]
fn list_checkers_json_names_each_input_event_and_who_emits_it() {
    let (code, out, _) = sutra_sim(&["list", "checkers", "--json"]);
    assert_eq!(code, 0);
    let rows: Vec<Value> = serde_json::from_str(&out).unwrap();
    let narrative = narrative_names();
    for row in &rows {
        let reads = row["reads"].as_array().unwrap();
        for input in reads {
            let (event, emitter) = (input["event"].as_str().unwrap(), input["emitter"].as_str().unwrap());
            assert_eq!(tag::name(input["tag"].as_u64().unwrap() as u8), Some(event));
            assert_eq!(emitter == "narrative", narrative.contains(&event), "{event} by {emitter}");
        }
        let witnesses_only = reads.iter().all(|i| i["emitter"] != "narrative");
        assert_eq!(row["witnesses_only"], witnesses_only, "{row}");
    }
    let linear = rows.iter().find(|r| r["name"] == "linear-history").unwrap();
    assert_eq!(linear["reads"], serde_json::json!([{"event": "commit-accepted", "tag": 19, "emitter": "store"}]));
    assert_eq!(linear["witnesses_only"], true);
}

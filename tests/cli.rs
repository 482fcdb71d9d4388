//! The command line as users and CI drive it: exit codes, JSON fields, bad input.

use std::process::Command;

mod common;
use common::sutra_sim;

#[test]
fn run_json_has_the_contract_fields_and_is_deterministic() {
    let (code, first, _) = sutra_sim(&["run", "--seed", "7", "--json"]);
    assert_eq!(code, 0);
    let doc: serde_json::Value = serde_json::from_str(&first).unwrap();
    for field in ["verdict", "checker", "message", "fingerprint", "events", "sim_time_ms"] {
        assert!(doc.get(field).is_some(), "missing {field} in {first}");
    }
    assert_eq!(doc["verdict"], "pass");
    let (_, second, _) = sutra_sim(&["run", "--seed", "7", "--json"]);
    assert_eq!(first, second);
}

#[test]
fn a_caught_mutant_exits_1_and_prints_the_replay_command() {
    let (code, out, _) = sutra_sim(&["run", "--seed", "0", "--mutant", "release-after-commit"]);
    assert_eq!(code, 1);
    assert!(out.contains("release-with-commit"), "{out}");
    assert!(out.contains("replay: sutra-sim run --scenario smoke --seed 0 --mutant release-after-commit"), "{out}");
}

#[test]
fn bad_input_is_one_line_naming_it_and_exit_2() {
    for (args, needle) in [
        (vec!["frobnicate"], "frobnicate"),
        (vec!["run", "--frob"], "--frob"),
        (vec!["run", "--scenario", "atlantis"], "atlantis"),
        (vec!["run", "--mutant", "gremlin"], "gremlin"),
        (vec!["run", "--strategy", "chaos"], "chaos"),
        (vec!["sweep", "--shard", "3/3"], "3/3"),
        (vec!["sweep", "--time-budget=-5s"], "negative"),
        (vec!["run", "--scenario", "no/such/file.toml"], "no/such/file.toml"),
    ] {
        let (code, _, err) = sutra_sim(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn a_malformed_scenario_file_names_file_line_and_key_and_writes_nothing() {
    let dir = common::scratch("cli", "malformed");
    let file = dir.join("bad.toml");
    std::fs::write(&file, "name = \"bad\"\ndescription = \"x\"\n[topology]\nreplicaz = 2\n").unwrap();
    let report = dir.join("report.json");
    let (code, _, err) = sutra_sim(&[
        "sweep",
        "--scenario",
        file.to_str().unwrap(),
        "--count",
        "3",
        "--report",
        report.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("bad.toml:4") && err.contains("replicaz"), "{err}");
    assert!(!report.exists());
}

#[test]
fn list_mutants_names_every_mutant() {
    let (code, out, _) = sutra_sim(&["list", "mutants", "--json"]);
    assert_eq!(code, 0);
    let rows: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    assert_eq!(rows.len(), sutra_sim_model::MUTANTS.len());
    assert_eq!(
        rows.len(),
        41,
        "the nineteen of DESIGN.md §7, the six of issue #12, three of issue #13, the three deep ones of #14 and the ten of issue #23"
    );
    let deep: Vec<&str> = rows.iter().filter(|r| r["deep"] == true).map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(deep, ["commit-retry-accepts-free-row", "sweep-trusts-renewal", "queued-copy-acked"]);
}

#[test]
fn sweep_reports_are_identical_for_one_and_two_jobs() {
    let dir = common::scratch("cli", "jobs");
    let read = |jobs: &str| {
        let path = dir.join(format!("r{jobs}.json"));
        let (code, _, _) = sutra_sim(&[
            "sweep",
            "--count",
            "30",
            "--jobs",
            jobs,
            "--mutant",
            "no-release-on-error",
            "--report",
            path.to_str().unwrap(),
        ]);
        assert_eq!(code, 1);
        let mut doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for timing in ["wall_seconds", "seeds_per_second", "events_per_second"] {
            doc[timing] = serde_json::Value::Null;
        }
        doc
    };
    assert_eq!(read("1"), read("2"));
}

#[test]
fn malformed_scenarios_unknown_keys_and_negative_durations_exit_2_and_write_nothing() {
    let dir = common::scratch("cli", "bad");
    for (name, text, needle) in [
        ("malformed.toml", "name = \"m\"\ndescription = \"x\"\n[topology\nreplicas = 2\n", "malformed.toml:3"),
        (
            "unknown-key.toml",
            "name = \"u\"\ndescription = \"x\"\n[faults.store]\nabort_per_cal = \"1/2\"\n",
            "abort_per_cal",
        ),
        ("negative.toml", "name = \"n\"\ndescription = \"x\"\n[timeouts]\nsweep_interval = \"-5s\"\n", "negative"),
    ] {
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        let report = dir.join(format!("{name}.json"));
        let junit = dir.join(format!("{name}.xml"));
        let (code, out, err) = sutra_sim(&[
            "sweep",
            "--scenario",
            file.to_str().unwrap(),
            "--count",
            "2",
            "--report",
            report.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
        ]);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(err.contains(needle), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: one line: {err}");
        assert!(out.is_empty() && !report.exists() && !junit.exists(), "{name} wrote something");
    }
}

#[test]
fn sweep_help_says_what_count_means_under_shard_and_what_save_failures_saves() {
    let (code, out, _) = sutra_sim(&["sweep", "--help"]);
    assert_eq!(code, 0);
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("still the size of the whole range, not of this shard"), "{out}");
    assert!(flat.contains("first one per distinct failing checker"), "{out}");
    assert!(flat.contains("the first 16 are shrunk"), "{out}");
}

#[test]
fn run_sweep_and_shrink_name_a_failing_seed_alike() {
    let dir = common::scratch("cli", "alike");
    let saves = dir.join("saves");
    let (code, out, _) = sutra_sim(&[
        "sweep",
        "--count",
        "3",
        "--mutant",
        "no-release-on-error",
        "--checker",
        "exits-release",
        "--no-shrink",
        "--save-failures",
        saves.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(code, 1, "{out}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let failure = &doc["failures"][0];
    let seed = failure["seed"].as_u64().unwrap();
    // The sweep's file and `shrink`'s default output share one name.
    let saved = std::path::Path::new(failure["reproducer"].as_str().unwrap()).file_name().unwrap().to_owned();
    assert_eq!(saved.to_str().unwrap(), format!("smoke-seed-{seed}-no-release-on-error.toml"));
    let out = Command::new(env!("CARGO_BIN_EXE_sutra-sim"))
        .current_dir(&dir)
        .args(["shrink", "--scenario", "smoke", "--seed", &seed.to_string(), "--mutant", "no-release-on-error"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(dir.join(&saved).exists(), "{}", String::from_utf8_lossy(&out.stdout));
    // `run` prints the replay line a sweep prints for the same seed (without a saved file).
    let (_, swept, _) = sutra_sim(&[
        "sweep",
        "--count",
        "3",
        "--mutant",
        "no-release-on-error",
        "--checker",
        "exits-release",
        "--json",
    ]);
    let swept: serde_json::Value = serde_json::from_str(&swept).unwrap();
    let line = swept["failures"][0]["replay"].as_str().unwrap().to_string();
    let args: Vec<&str> = line.split(' ').skip(1).collect();
    let (code, out, _) = sutra_sim(&args);
    assert_eq!(code, 1, "{line}");
    assert!(out.contains(&format!("replay: {line}\n")), "{line}\n{out}");
}

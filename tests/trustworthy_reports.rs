//! Reports a nightly can trust (issue #15): they say what was swept, `merge` joins only
//! the shards of one sweep, replay lines replay what failed, seed ranges never wrap, a
//! closed stdout ends the program quietly, and reproducers are byte-stable.

use std::path::Path;
use std::process::{Command, Stdio};

mod common;
use common::sutra_sim_in;

/// A scratch directory of this file's own for test `name`.
fn scratch(name: &str) -> common::Scratch {
    common::scratch("trust", name)
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_report_says_what_was_swept() {
    let dir = scratch("describe");
    let smoke = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/smoke.toml")).unwrap();
    std::fs::write(dir.join("mine.toml"), smoke).unwrap();
    let (code, _, err) = sutra_sim_in(
        &dir,
        &["sweep", "--scenario", "mine.toml", "--start", "7", "--count", "9", "--shard", "1/2", "--report", "r.json"],
    );
    assert_eq!(code, 0, "{err}");
    let doc = json(&dir.join("r.json"));
    assert_eq!(doc["start"], 7);
    assert_eq!(doc["count"], 9);
    assert_eq!(doc["shard"], "1/2");
    assert_eq!(doc["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(doc["model_hash"].as_str().unwrap().len(), 16);
    let source = &doc["scenario_sources"][0];
    assert_eq!(source["name"], "smoke");
    assert_eq!(source["file"], "mine.toml");
    assert_eq!(source["hash"].as_str().unwrap().len(), 16);
    assert!(source["checkers"].as_array().unwrap().iter().any(|c| c == "no-double-resume"));
}

#[test]
fn merge_refuses_a_shard_given_twice_and_reports_a_missing_one() {
    let dir = scratch("merge");
    for i in 0..3 {
        let (code, _, err) = sutra_sim_in(
            &dir,
            &["sweep", "--count", "12", "--shard", &format!("{i}/3"), "--report", &format!("r{i}.json")],
        );
        assert_eq!(code, 0, "{err}");
    }
    let (code, out, err) = sutra_sim_in(&dir, &["merge", "r0.json", "r0.json", "-o", "m.json"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("given twice"), "{err}");
    assert!(!dir.join("m.json").exists());
    let (code, out, _) = sutra_sim_in(&dir, &["merge", "r0.json", "r2.json", "-o", "m.json"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with("INCOMPLETE") && out.contains("1/3"), "{out}");
    assert_eq!(json(&dir.join("m.json"))["missing_shards"][0], "1/3");
    let (code, out, _) = sutra_sim_in(&dir, &["merge", "r0.json", "r1.json", "r2.json", "-o", "all.json"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(json(&dir.join("all.json"))["seeds_run"], 12);
    // A shard of another range does not merge.
    let (code, _, err) = sutra_sim_in(&dir, &["sweep", "--count", "13", "--shard", "1/3", "--report", "other.json"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = sutra_sim_in(&dir, &["merge", "r0.json", "other.json", "-o", "m2.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("seed range"), "{err}");
}

#[test]
fn a_replay_line_of_a_scenario_file_names_the_file_and_fails_again() {
    let dir = scratch("file-replay");
    // A scenario file named like a built-in one, but a different scenario.
    let smoke = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/smoke.toml")).unwrap();
    let mine = smoke.replace("instances = 6", "instances = 7");
    assert_ne!(mine, smoke);
    std::fs::write(dir.join("my smoke.toml"), mine).unwrap();
    let (code, out, err) = sutra_sim_in(
        &dir,
        &["sweep", "--scenario", "my smoke.toml", "--count", "40", "--mutant", "no-release-on-error", "--json"],
    );
    assert_eq!(code, 1, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let replay = doc["failures"][0]["replay"].as_str().unwrap();
    assert!(replay.starts_with("sutra-sim run --scenario 'my smoke.toml' --seed "), "{replay}");
    // Pasted into a shell where `sutra-sim` is this binary, it fails again.
    let bin = Path::new(env!("CARGO_BIN_EXE_sutra-sim")).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let status = Command::new("sh").arg("-c").arg(replay).current_dir(&dir).env("PATH", path).status().unwrap();
    assert_eq!(status.code(), Some(1), "{replay}");
}

#[test]
fn a_seed_range_that_would_wrap_is_refused() {
    let dir = scratch("wrap");
    let (code, out, err) =
        sutra_sim_in(&dir, &["sweep", "--start", &(u64::MAX - 1).to_string(), "--count", "3", "--report", "r.json"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("wrap"), "{err}");
    assert!(!dir.join("r.json").exists());
    let (code, _, err) = sutra_sim_in(&dir, &["sweep", "--start", &(u64::MAX - 1).to_string(), "--count", "2"]);
    assert_eq!(code, 0, "the last two seeds are a valid range: {err}");
}

#[test]
fn a_closed_stdout_ends_the_program_quietly() {
    for args in [vec!["list", "checkers"], vec!["sweep", "--count", "20", "--mutant", "no-release-on-error"]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sutra-sim"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(101), "{args:?}: {err}");
        assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{args:?}: {err}");
    }
}

#[test]
fn the_same_failure_shrunk_twice_writes_the_same_bytes() {
    let dir = scratch("stable");
    for name in ["a.toml", "b.toml"] {
        let (code, _, err) = sutra_sim_in(
            &dir,
            &["shrink", "--scenario", "smoke", "--seed", "3", "--mutant", "sweeper-unleased", "-o", name],
        );
        assert_eq!(code, 1, "{err}");
    }
    assert_eq!(std::fs::read(dir.join("a.toml")).unwrap(), std::fs::read(dir.join("b.toml")).unwrap());
    // Not by luck: the note holds no wall-clock time (it used to end "…, 0.1s)").
    let text = std::fs::read_to_string(dir.join("a.toml")).unwrap();
    let note = text.lines().find(|l| l.starts_with("note = ")).unwrap();
    let timed = note
        .as_bytes()
        .windows(4)
        .any(|w| w[0].is_ascii_digit() && w[1] == b'.' && w[2].is_ascii_digit() && w[3] == b's');
    assert!(!timed, "{note}");
}

#[test]
fn an_edited_scenario_inside_a_reproducer_is_stale_not_corrupt() {
    let dir = scratch("edited");
    let (code, _, err) = sutra_sim_in(
        &dir,
        &["shrink", "--scenario", "smoke", "--seed", "3", "--mutant", "sweeper-unleased", "-o", "r.toml"],
    );
    assert_eq!(code, 1, "{err}");
    let text = std::fs::read_to_string(dir.join("r.toml")).unwrap();
    let start = text.find("[scenario.topology]").unwrap();
    let at = start + text[start..].find("replicas = ").unwrap();
    let end = at + text[at..].find('\n').unwrap();
    let edited = format!("{}replicas = 4{}", &text[..at], &text[end..]);
    std::fs::write(dir.join("edited.toml"), edited).unwrap();
    let (code, out, err) = sutra_sim_in(&dir, &["replay", "edited.toml"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.starts_with("STALE"), "{out}{err}");
    assert!(!err.contains("checksum"), "{err}");
}

#[test]
fn merged_shards_list_the_failures_one_sweep_lists_once_the_cap_applies() {
    let dir = scratch("merge-cap");
    let sweep = ["sweep", "--scenario", "all", "--count", "40", "--mutant", "no-release-on-error", "--jobs", "2"];
    let (code, _, err) = sutra_sim_in(&dir, &[&sweep[..], &["--report", "whole.json"]].concat());
    assert_eq!(code, 1, "{err}");
    let mut merge = vec!["merge".to_string()];
    for i in 0..4 {
        let report = format!("shard-{i}.json");
        let shard = format!("{i}/4");
        let (code, _, err) = sutra_sim_in(&dir, &[&sweep[..], &["--shard", &shard, "--report", &report]].concat());
        assert_eq!(code, 1, "{err}");
        merge.push(report);
    }
    merge.extend(["-o".to_string(), "merged.json".to_string()]);
    let (code, out, err) = sutra_sim_in(&dir, &merge.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 1, "{out}{err}");
    let (whole, merged) = (json(&dir.join("whole.json")), json(&dir.join("merged.json")));
    assert!(whole["failures_left_out"].as_u64().unwrap() > 0, "the cap applies: {}", whole["failures_by_checker"]);
    assert_eq!(merged["failures_by_checker"], whole["failures_by_checker"]);
    assert_eq!(merged["failures_left_out"], whole["failures_left_out"]);
    let seeds = |doc: &serde_json::Value| -> Vec<String> {
        doc["failures"].as_array().unwrap().iter().map(|f| format!("{} {}", f["scenario"], f["seed"])).collect()
    };
    assert_eq!(seeds(&merged), seeds(&whole), "the merge lists other failures than the sweep");
    assert_eq!(merged["failures"], whole["failures"]);
}

#[test]
fn a_report_says_whether_determinism_was_checked_at_what_rate_and_merge_keeps_it() {
    let dir = scratch("determinism");
    let rechecked = (0..60).filter(|&seed| sutra_sim::determinism::chosen("smoke", seed, 100_000)).count() as u64;
    assert!(rechecked > 0, "some seed is re-checked at 10%");
    let checked = ["sweep", "--count", "60", "--check-determinism", "10%"];
    let (code, out, err) = sutra_sim_in(&dir, &[&checked[..], &["--report", "r.json", "--junit", "j.xml"]].concat());
    assert_eq!(code, 0, "{err}");
    let doc = json(&dir.join("r.json"));
    assert_eq!(doc["check_determinism_rate"], 0.1);
    assert_eq!(doc["determinism_rechecked"], rechecked);
    assert!(out.contains(&format!("determinism: {rechecked} seed(s) re-run (10%)")), "{out}");
    let junit = std::fs::read_to_string(dir.join("j.xml")).unwrap();
    assert!(junit.contains("<property name=\"check_determinism_rate\" value=\"0.1\"/>"), "{junit}");
    assert!(junit.contains(&format!("<property name=\"determinism_rechecked\" value=\"{rechecked}\"/>")), "{junit}");
    let (code, _, err) = sutra_sim_in(&dir, &["sweep", "--count", "60", "--report", "plain.json"]);
    assert_eq!(code, 0, "{err}");
    let plain = json(&dir.join("plain.json"));
    assert_eq!(
        (plain["check_determinism_rate"].as_f64(), plain["determinism_rechecked"].as_u64()),
        (Some(0.0), Some(0))
    );
    // Shards carry it, and merge adds the counts and refuses shards checked at other rates.
    for (i, rate) in [(0, "10%"), (1, "10%"), (2, "1%")] {
        let shard = format!("{}/2", i % 2);
        let report = format!("s{i}.json");
        let args = ["sweep", "--count", "60", "--check-determinism", rate, "--shard", &shard, "--report", &report];
        assert_eq!(sutra_sim_in(&dir, &args).0, 0);
    }
    let (code, out, err) = sutra_sim_in(&dir, &["merge", "s0.json", "s1.json", "-o", "m.json"]);
    assert_eq!(code, 0, "{out}{err}");
    let merged = json(&dir.join("m.json"));
    assert_eq!(merged["check_determinism_rate"], 0.1);
    assert_eq!(merged["determinism_rechecked"], rechecked);
    let (code, out, err) = sutra_sim_in(&dir, &["merge", "s0.json", "s2.json", "-o", "m2.json"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("determinism"), "{err}");
}

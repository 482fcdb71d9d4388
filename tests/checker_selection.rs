//! Choosing checkers by name on the command line and in scenario files: `--checker`,
//! `--skip-checker`, `[run] checkers = [...]`. Unknown names are refused before anything
//! runs, in one line that lists the known ones, with exit 2.

mod common;

use std::process::Command;

fn sutra_sim(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sutra-sim")).args(args).output().expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn assert_refused_listing_the_known_checkers(args: &[&str], needle: &str) {
    let (code, out, err) = sutra_sim(args);
    assert_eq!(code, 2, "{args:?}: {err}");
    assert!(out.is_empty(), "{args:?} printed {out}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
    assert!(err.contains("known checkers: ") && err.contains("no-double-resume"), "{args:?}: {err}");
}

#[test]
fn an_unknown_checker_on_the_command_line_is_one_line_listing_the_known_ones_and_exit_2() {
    assert_refused_listing_the_known_checkers(&["run", "--checker", "no-double-resum"], "\"no-double-resum\"");
    assert_refused_listing_the_known_checkers(&["run", "--skip-checker", "gremlin"], "\"gremlin\"");
    assert_refused_listing_the_known_checkers(&["sweep", "--count", "1", "--checker", "gremlin"], "\"gremlin\"");
    assert_refused_listing_the_known_checkers(&["sweep", "--count", "1", "--skip-checker", "gremlin"], "\"gremlin\"");
}

#[test]
fn an_unknown_checker_in_a_scenario_file_is_refused_at_load_time_and_nothing_is_written() {
    let dir = common::scratch("checker-selection", "typo");
    let file = dir.join("typo.toml");
    std::fs::write(
        &file,
        "name = \"typo\"\ndescription = \"x\"\n[run]\ncheckers = [\"no-double-resume\", \"exits-relase\"]\n",
    )
    .unwrap();
    let report = dir.join("report.json");
    let file = file.to_str().unwrap();
    let report_arg = report.to_str().unwrap();
    for args in [vec!["run", "--scenario", file], vec!["sweep", "--scenario", file, "--report", report_arg]] {
        let (code, _, err) = sutra_sim(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(file) && err.contains("\"exits-relase\"") && err.contains("exits-release"), "{err}");
    }
    assert!(!report.exists(), "a refused sweep wrote its report");
}

#[test]
fn skipping_a_checker_lets_the_next_one_report_and_the_replay_command_keeps_the_choice() {
    let (code, out, _) = sutra_sim(&["run", "--seed", "0", "--mutant", "release-after-commit"]);
    assert_eq!(code, 1);
    assert!(out.contains("violation of release-with-commit"), "{out}");
    let (code, out, _) =
        sutra_sim(&["run", "--seed", "0", "--mutant", "release-after-commit", "--skip-checker", "release-with-commit"]);
    assert_eq!(code, 1);
    assert!(!out.contains("violation of release-with-commit"), "{out}");
    assert!(out.contains("--skip-checker release-with-commit"), "the replay must skip it too: {out}");
    // Only the chosen checkers judge: the one that catches this mutant is not among them.
    let (code, out, _) =
        sutra_sim(&["run", "--seed", "0", "--mutant", "release-after-commit", "--checker", "linear-history"]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_sweep_counts_only_the_coverage_properties_it_runs() {
    let (code, out, err) = sutra_sim(&[
        "sweep",
        "--count",
        "10",
        "--checker",
        "no-double-resume",
        "--checker",
        "sometimes-relay-refused",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let counted: Vec<&String> = report["coverage"].as_object().unwrap().keys().collect();
    assert_eq!(counted, vec!["sometimes-relay-refused"], "{out}");
}

#[test]
fn skipping_every_selected_checker_is_refused_not_a_vacuous_pass() {
    let (code, _, err) = sutra_sim(&["run", "--checker", "exits-release", "--skip-checker", "exits-release"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no checker left to run"), "{err}");
}

//! The README, as a new user reads it, still holds: its walk-through code is
//! `examples/migration_owner.rs`, the outputs it shows are what that code prints, and the
//! `sutra-sim` commands it shows run and say what it says they say.
//!
//! When this fails after a change, regenerate the README's sample outputs from real runs
//! (the failure message prints what the run gave) rather than editing this test.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use sutra_sim::plugin::{CheckerSet, Mutant};
use sutra_sim::sweep::{self, SweepPlan};
use sutra_sim::testing::SimTest;

mod common;
use common::sutra_sim_in;

/// A scratch directory of this file's own for test `name`.
fn scratch(name: &str) -> common::Scratch {
    common::scratch("readme", name)
}

#[allow(dead_code)]
#[path = "../examples/migration_owner.rs"]
mod migration_owner;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).unwrap()
}

/// The README's section that starts with `heading`.
fn section(text: &str, heading: &str) -> String {
    let start = text.find(heading).unwrap_or_else(|| panic!("README has no {heading:?}"));
    let rest = &text[start + heading.len()..];
    let end = rest.find("\n## ").unwrap_or(rest.len());
    rest[..end].to_string()
}

/// The fenced blocks of `language` in `text`.
fn blocks(text: &str, language: &str) -> Vec<String> {
    let fence = format!("```{language}\n");
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(&fence) {
        let body = &rest[at + fence.len()..];
        let end = body.find("```").expect("a closed fence");
        out.push(body[..end].to_string());
        rest = &body[end + 3..];
    }
    out
}

#[test]
fn the_walk_through_code_is_the_example_file() {
    let walk = section(&readme(), "## Write your own invariant");
    let example = std::fs::read_to_string(root().join("examples/migration_owner.rs")).unwrap();
    let code = blocks(&walk, "rust");
    assert_eq!(code.len(), 3, "the walk-through shows the file in three pieces");
    for block in code {
        let block = block.strip_prefix("// examples/migration_owner.rs\n").unwrap_or(&block);
        assert!(example.contains(block), "examples/migration_owner.rs lacks this README block:\n{block}");
    }
}

#[test]
fn the_walk_through_failure_is_what_simtest_prints() {
    let walk = section(&readme(), "## Write your own invariant");
    let shown = blocks(&walk, "text").into_iter().next().expect("the walk-through shows a failure");
    let failure = SimTest::scenario("migration")
        .seeds(0..20)
        .checker(migration_owner::migration_owner_is_distinct())
        .only_checkers(["migration-owner-is-distinct"])
        .mutant(Mutant::MigrateWithLaneOwner)
        .try_run()
        .unwrap_err()
        .to_string();
    // Every line but the replay command, which names the test that ran (here, this one).
    let (got, got_replay) = failure.trim_end().rsplit_once('\n').unwrap();
    let (want, want_replay) = shown.trim_end().rsplit_once('\n').unwrap();
    assert_eq!(got, want, "the README shows another failure; this run printed:\n{failure}");
    let seed = got.lines().next().unwrap().split("seed ").nth(1).unwrap().split(',').next().unwrap();
    assert_eq!(
        want_replay.trim(),
        format!("SUTRA_SIM_SEED={seed} cargo test -p sutra-sim --example migration_owner -- tests::catches_a_migration_under_a_lane_owner --exact"),
        "this run's replay line: {got_replay}"
    );
}

/// The summary's first line and per-checker counts for the walk-through's sweep.
fn walk_through_sweep(mutant: Option<Mutant>) -> String {
    let checkers = CheckerSet::built_in()
        .with(migration_owner::migration_owner_is_distinct())
        .only(["migration-owner-is-distinct"])
        .unwrap();
    let scenarios = sutra_sim::scenario_arg::resolve_with("all", &checkers).unwrap();
    let plan = SweepPlan {
        scenarios,
        start: 0,
        count: 200,
        shard: None,
        mutant,
        strategy: None,
        jobs: 2,
        time_budget: None,
        checkers,
    };
    let (results, early) = sweep::run(&plan, &AtomicBool::new(false), &|_, _| {});
    sweep::report(&plan, &results, Duration::from_secs(1), early).summary()
}

#[test]
fn the_walk_through_sweep_prints_what_the_readme_says() {
    let walk = section(&readme(), "## Write your own invariant");
    let commands = blocks(&walk, "sh").join("");
    let claim = |flag: &str| -> Vec<String> {
        let line = commands
            .lines()
            .find(|l| l.contains("--example migration_owner") && l.contains(flag))
            .unwrap_or_else(|| panic!("no sweep line with {flag:?}"));
        line.split('#').nth(1).unwrap().split('…').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
    };
    for (mutant, flag) in [(None, "# GREEN"), (Some(Mutant::MigrateWithLaneOwner), "migrate-with-lane-owner")] {
        let summary = walk_through_sweep(mutant);
        for piece in claim(flag) {
            assert!(summary.contains(&piece), "the README claims {piece:?}; the sweep printed:\n{summary}");
        }
    }
}

#[test]
fn the_replay_example_and_the_shrink_walk_through_run_as_shown() {
    let text = readme();
    let dir = scratch("shrink");
    // "Replaying a seed": the example replay line fails with exit 1 and prints its own replay line.
    let replay_line = "sutra-sim run --scenario smoke --seed 358 --mutant sweeper-parses-owner";
    assert!(text.contains(replay_line));
    let args: Vec<&str> = replay_line.split(' ').skip(1).collect();
    let (code, out, _) = sutra_sim_in(&dir, &args);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(&format!("replay: {replay_line}")), "{out}");
    // "Shrinking and replaying a failure", line by line.
    let shrinking = section(&text, "## Shrinking and replaying a failure");
    let lines: Vec<String> = blocks(&shrinking, "sh")
        .concat()
        .lines()
        .map(|l| l.split('#').next().unwrap().trim().to_string())
        .filter(|l| l.starts_with("sutra-sim "))
        .collect();
    assert_eq!(lines.len(), 4, "{lines:?}");
    for (line, code_wanted, needle) in [
        (&lines[0], 1, "saved ppo.toml"),
        (&lines[1], 1, "REPRODUCED"),
        (&lines[2], 1, "REPRODUCED"),
        (&lines[3], 1, "timeline written to ppo.json"),
    ] {
        let args: Vec<&str> = line.split_whitespace().skip(1).collect();
        let (code, out, err) = sutra_sim_in(&dir, &args);
        assert_eq!(code, code_wanted, "{line}: {out}{err}");
        assert!(out.contains(needle), "{line}: {out}");
    }
}

#[test]
fn every_flag_the_readme_shows_is_one_the_command_takes() {
    let text = readme();
    for block in blocks(&text, "sh") {
        for line in block.lines() {
            let line = line.split('#').next().unwrap().trim();
            let Some(rest) = line.strip_prefix("sutra-sim ") else { continue };
            let mut words = rest.split_whitespace();
            let command = words.next().unwrap();
            let (_, help, _) = sutra_sim_in(root(), &[command, "--help"]);
            for flag in words.filter(|w| w.starts_with("--")) {
                let flag = flag.split('=').next().unwrap();
                assert!(help.contains(flag), "`{line}`: `sutra-sim {command}` takes no {flag}");
            }
        }
    }
}

//! Exploration as users drive it: the same runs and report for any number of jobs, and a
//! failure found in a grown run (a branch of an earlier run) saved as an ordinary
//! reproducer that shrinks and replays from its file alone.

use std::sync::atomic::AtomicBool;

use sutra_sim::explore;
use sutra_sim::plugin::CheckerSet;
use sutra_sim::replay::{replay, Reproduction};
use sutra_sim::reproducer::Reproducer;
use sutra_sim::save_failures::{save_failures, SaveFailures};
use sutra_sim::sweep::{self, SweepPlan};
use sutra_sim_core::explore::ExploreConfig;
use sutra_sim_model::{Mutant, RunOptions, Scenario};

mod common;

fn plan(runs: u64, jobs: usize, mutant: Option<Mutant>) -> SweepPlan {
    SweepPlan {
        scenarios: vec![Scenario::built_in("smoke").unwrap()],
        start: 3,
        count: runs,
        shard: None,
        mutant,
        strategy: None,
        jobs,
        time_budget: None,
        checkers: CheckerSet::built_in(),
    }
}

/// Saves the report's first failure shrunk into `dir`, loads the file, checks it was shrunk
/// and replays from the file alone; returns its path and contents.
fn saved_shrunk_and_replayed(
    p: &SweepPlan,
    report: &mut sutra_sim::report::SweepReport,
    dir: &std::path::Path,
) -> (String, Reproducer) {
    let stop = AtomicBool::new(false);
    let options = SaveFailures { dir: dir.to_path_buf(), shrink: true, jobs: 1, max: 1, deadline: None };
    save_failures(p, report, &options, &stop).expect("the directory is writable");
    let path = report.failures[0].reproducer.clone().expect("the failure was saved");
    let reproducer = Reproducer::load(std::path::Path::new(&path)).expect("the saved file loads");
    assert!(reproducer.note.contains("shrunk by"), "it was shrunk: {}", reproducer.note);
    let replayed = replay(&reproducer, &CheckerSet::built_in(), false).expect("it replays");
    assert!(matches!(replayed.reproduction, Reproduction::Reproduced), "it replays from the file alone");
    assert_eq!(replayed.outcome.verdict.checker(), Some(report.failures[0].checker.as_str()));
    (path, reproducer)
}

#[test]
fn an_exploration_is_the_same_on_one_thread_and_on_two() {
    let stop = AtomicBool::new(false);
    let one = explore::run(&plan(48, 1, None), &explore::config_for(&plan(48, 1, None)), &stop, &|_, _| {});
    let two = explore::run(&plan(48, 2, None), &explore::config_for(&plan(48, 2, None)), &stop, &|_, _| {});
    assert_eq!(one, two);
    let (tally, report, early) = one;
    assert!(!early);
    assert_eq!(tally.seeds_run, 48);
    let smoke = &report.scenarios[0];
    assert!(smoke.branched > 0 && smoke.fresh_runs < 48, "it grew some runs: {smoke:?}");
    assert_eq!(smoke.switched_runs, 0, "strategies mix only on request");
}

#[test]
fn an_exploration_that_settles_is_the_same_on_one_thread_and_on_two() {
    // Settled after 16 runs, so the settled rules (independent rarity, the above-mean
    // bonus) plan most of the 64 runs.
    let stop = AtomicBool::new(false);
    let config = |jobs| ExploreConfig { settle_after_runs: 16, ..explore::config_for(&plan(64, jobs, None)) };
    let one = explore::run(&plan(64, 1, None), &config(1), &stop, &|_, _| {});
    let two = explore::run(&plan(64, 2, None), &config(2), &stop, &|_, _| {});
    assert_eq!(one, two);
    assert!(one.1.scenarios[0].branched > 0, "it grew some runs: {:?}", one.1.scenarios[0]);
}

#[test]
fn a_failure_of_a_grown_run_is_a_reproducer_that_shrinks_and_replays_from_its_file_alone() {
    let stop = AtomicBool::new(false);
    let p = plan(96, 2, Some(Mutant::NoReleaseOnError));
    let (tally, exploration, _) = explore::run(&p, &explore::config_for(&p), &stop, &|_, _| {});
    assert!(exploration.scenarios[0].runs_to_first_failure.is_some());
    let mut report = sweep::report(&p, &tally, std::time::Duration::from_secs(1), false);
    // Keep only failures of grown runs: those whose seed alone does not replay them.
    report.failures.retain(|f| f.grown.is_some());
    report.failures.truncate(1);
    assert_eq!(report.failures.len(), 1, "a grown run failed among 96 runs of no-release-on-error");
    let dir = common::scratch("explore", "grown-failure");
    let (path, _) = saved_shrunk_and_replayed(&p, &mut report, &dir);
    let (code, _, _) = common::sutra_sim(&["replay", &path]);
    assert_eq!(code, 1, "replaying the file fails again");
}

#[test]
fn the_explore_command_reports_what_it_grew_and_names_the_way_back_to_a_grown_failure() {
    let (code, out, err) = common::sutra_sim(&[
        "explore",
        "--scenario",
        "smoke",
        "--runs",
        "24",
        "--jobs",
        "2",
        "--mutant",
        "no-release-on-error",
        "--json",
    ]);
    assert_eq!(code, 1, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["seeds_run"], 24);
    let e = &report["exploration"]["scenarios"][0];
    assert!(e["marks_reached"].as_u64().unwrap() > 0);
    assert!(e["runs_to_first_failure"].as_u64().is_some());
    let (code, _, err) = common::sutra_sim(&["explore", "--scenario", "smoke", "--runs", "8", "--shard", "0/2"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_failure_of_a_child_that_switched_strategy_replays_from_its_file_with_the_switch() {
    let stop = AtomicBool::new(false);
    let p = plan(96, 2, Some(Mutant::NoReleaseOnError));
    let config = ExploreConfig { switch_percent: 100, ..explore::config_for(&p) };
    let (tally, exploration, _) = explore::run(&p, &config, &stop, &|_, _| {});
    let alone = plan(96, 1, Some(Mutant::NoReleaseOnError));
    assert_eq!(explore::run(&alone, &config, &stop, &|_, _| {}), (tally.clone(), exploration.clone(), false));
    let e = &exploration.scenarios[0];
    assert!(e.switched_runs > 0 && e.switched_runs <= e.runs - e.fresh_runs, "{e:?}");
    let mut report = sweep::report(&p, &tally, std::time::Duration::from_secs(1), false);
    report.failures.retain(|f| f.grown.as_ref().is_some_and(|g| g.strategy.switch().is_some()));
    report.failures.truncate(1);
    assert_eq!(report.failures.len(), 1, "a child that switched to PCT failed among 96 runs");
    // The switch matters: the same tape under the first strategy alone is another run.
    let grown = report.failures[0].grown.clone().unwrap();
    let under = |strategy| {
        let options = RunOptions {
            entropy: sutra_sim_core::EntropyMode::Tape(grown.tape.clone()),
            ..RunOptions::for_seed(0, Some(strategy), p.mutant)
        };
        sutra_sim_model::run_with(&p.scenarios[0], &options, Vec::new()).fingerprint
    };
    assert_ne!(under(grown.strategy), under(grown.strategy.first()));
    let dir = common::scratch("explore", "switched-failure");
    let (_, reproducer) = saved_shrunk_and_replayed(&p, &mut report, &dir);
    assert!(reproducer.strategy.label().starts_with("random>pct:3:auto@"), "{}", reproducer.strategy.label());
    let (code, _, err) =
        common::sutra_sim(&["explore", "--scenario", "smoke", "--runs", "8", "--switch-percent", "101"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = common::sutra_sim(&["sweep", "--scenario", "smoke", "--count", "8", "--switch-percent", "10"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_failure_of_a_boosted_child_replays_from_its_file_with_no_word_of_the_boost() {
    let stop = AtomicBool::new(false);
    let p = plan(96, 2, Some(Mutant::NoReleaseOnError));
    let config = ExploreConfig { boost_percent: 100, boost: 8, boost_after_runs: 0, ..explore::config_for(&p) };
    let (tally, exploration, _) = explore::run(&p, &config, &stop, &|_, _| {});
    let alone = plan(96, 1, Some(Mutant::NoReleaseOnError));
    assert_eq!(explore::run(&alone, &config, &stop, &|_, _| {}), (tally.clone(), exploration.clone(), false));
    let e = &exploration.scenarios[0];
    assert_eq!(e.boosted_runs, e.runs - e.fresh_runs, "every child is boosted: {e:?}");
    let mut report = sweep::report(&p, &tally, std::time::Duration::from_secs(1), false);
    report.failures.retain(|f| f.grown.is_some());
    report.failures.truncate(1);
    assert_eq!(report.failures.len(), 1, "a boosted child failed among 96 runs");
    let dir = common::scratch("explore", "boosted-failure");
    saved_shrunk_and_replayed(&p, &mut report, &dir);
    for bad in [
        &["explore", "--scenario", "smoke", "--runs", "8", "--boost", "0"][..],
        &["explore", "--scenario", "smoke", "--runs", "8", "--boost-percent", "101"],
        &["sweep", "--scenario", "smoke", "--count", "8", "--boost", "4"],
        &["sweep", "--scenario", "smoke", "--count", "8", "--boost-percent", "10"],
    ] {
        let (code, _, err) = common::sutra_sim(bad);
        assert_eq!(code, 2, "{bad:?}: {err}");
    }
}

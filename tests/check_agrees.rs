//! The same verdicts from the history as from the simulation (issue 24 item 4): each run's
//! history, written as `run --history` writes it, judged by `sutra-sim check`'s entry point
//! alone, must give the verdict the run gave — by the same checker, with the same message,
//! at the same event. A difference is a checker that needs more than the history.
//!
//! The suite runs every built-in scenario under the correct model, every mutant and every
//! unsafe variant, one seed each; `CHECK_AGREES_SEEDS=N cargo test --release --test
//! check_agrees -- --ignored` runs N seeds of each by hand.

use sutra_sim::history::{render, RunInfo};
use sutra_sim::plugin::CheckerSet;
use sutra_sim_core::{EntropyMode, Verdict};
use sutra_sim_model::variant::{Setting, VARIANTS};
use sutra_sim_model::{Mutant, RunOptions, Scenario, MUTANTS};

/// How a run and its re-check compared.
#[derive(Debug, Default)]
struct Tally {
    runs: u64,
    agreed_pass: u64,
    agreed_violation: u64,
    /// Runs the simulator stopped (hang, budget, crash): check judged the events up to there.
    cut_by_simulator: u64,
    /// Violations by a checker `check` cannot run (binding tables): the history is judged
    /// clean up to the cut, and that checker is listed as unable. Each is run again
    /// without those checkers, and that run must agree too (counted in the other fields).
    by_unable_checker: u64,
    disagreements: Vec<String>,
}

/// The (scenario, mutant) pairs: the correct model, every mutant and every unsafe variant
/// (a variant is a design or a mutant on the spec's design).
fn settings(scenario: &Scenario) -> Vec<(Scenario, Option<Mutant>, String)> {
    let mut out = vec![(scenario.clone(), None, "correct".to_string())];
    for m in MUTANTS.iter() {
        out.push((scenario.clone(), Some(m.mutant), m.name.to_string()));
    }
    for v in VARIANTS.iter().filter(|v| v.expected.as_str() == "unsafe") {
        if let Setting::Design(_) = v.setting {
            let (s, mutant) = v.apply(scenario);
            out.push((s, mutant, v.name.to_string()));
        }
    }
    out
}

fn compare(scenario: &Scenario, seed: u64, mutant: Option<Mutant>, label: &str, tally: &mut Tally) {
    compare_with(&CheckerSet::built_in(), scenario, seed, mutant, label, tally);
}

/// As [`compare`], judged by `set`. A violation by a checker `check` cannot run is run
/// again without the checkers `check` cannot run: the rest must agree on that run too.
fn compare_with(
    set: &CheckerSet,
    scenario: &Scenario,
    seed: u64,
    mutant: Option<Mutant>,
    label: &str,
    tally: &mut Tally,
) {
    let options = RunOptions { entropy: EntropyMode::Seed(seed), strategy: None, mutant, keep_trace: true };
    let outcome = set.run(scenario, &options).unwrap();
    let info = RunInfo { scenario, seed, mutant: mutant.map(|m| m.name()), strategy: scenario.strategy().label() };
    let text = render(&info, &outcome);
    let report = set.check_history_text("run.jsonl", &text, None).unwrap();
    tally.runs += 1;
    let what = format!("{} seed {seed} {label}", scenario.name);
    let unable = |c: &str| report.unable.iter().any(|u| u.name == c);
    match &outcome.verdict {
        Verdict::Pass if report.verdict.is_pass() && report.cut.is_none() => tally.agreed_pass += 1,
        Verdict::Violation { checker, .. } if unable(checker) && report.verdict.is_pass() => {
            tally.by_unable_checker += 1;
            let without = CheckerSet::built_in().skip(sutra_sim::check::LIVE_STATE_READERS).unwrap();
            compare_with(&without, scenario, seed, mutant, &format!("{label} without live-state checkers"), tally);
        }
        Verdict::Violation { .. }
            if report.verdict == outcome.verdict && report.failing_seq == outcome.failing_event =>
        {
            tally.agreed_violation += 1
        }
        Verdict::Hang { .. } | Verdict::BudgetExceeded { .. } | Verdict::Crash { .. }
            if report.verdict.is_pass() && report.cut.is_some() =>
        {
            tally.cut_by_simulator += 1
        }
        _ => tally.disagreements.push(format!(
            "{what}: run {} at {:?}, check {} at {:?} (cut: {:?})",
            outcome.verdict, outcome.failing_event, report.verdict, report.failing_seq, report.cut
        )),
    }
}

fn sweep(seeds: u64) -> Tally {
    let mut tally = Tally::default();
    for scenario in Scenario::all_built_in() {
        for (s, mutant, label) in settings(&scenario) {
            for seed in 0..seeds {
                compare(&s, seed, mutant, &label, &mut tally);
            }
        }
    }
    tally
}

#[test]
fn check_gives_the_verdict_run_gave_on_every_scenario_mutant_and_unsafe_variant() {
    let tally = sweep(1);
    eprintln!("{tally:?}");
    assert!(
        tally.disagreements.is_empty(),
        "{} disagreements:\n{}",
        tally.disagreements.len(),
        tally.disagreements.join("\n")
    );
    assert!(tally.agreed_violation > 0 && tally.agreed_pass > 0, "{tally:?}");
}

#[test]
#[ignore = "by hand: CHECK_AGREES_SEEDS=N cargo test --release --test check_agrees -- --ignored"]
fn check_agrees_by_hand() {
    let seeds = std::env::var("CHECK_AGREES_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(30);
    let tally = sweep(seeds);
    eprintln!(
        "runs {} pass {} violation {} cut-by-simulator {} by-unable-checker {} disagreements {}",
        tally.runs,
        tally.agreed_pass,
        tally.agreed_violation,
        tally.cut_by_simulator,
        tally.by_unable_checker,
        tally.disagreements.len()
    );
    assert!(tally.disagreements.is_empty(), "{}", tally.disagreements.join("\n"));
}

#[test]
fn check_flags_the_mid_step_heartbeat_from_the_history_by_claim_tenure_as_the_run_did() {
    // hung-steps seed 4: the heartbeat keeps a hung step's claim alive past the bound. The
    // bound comes from the header's scenario (claim timeout, longest step) alone.
    let info = sutra_sim_model::variant::parse("mid-step-heartbeat").unwrap();
    let (scenario, mutant) = info.apply(&Scenario::built_in("hung-steps").unwrap());
    let only = CheckerSet::built_in().only(["claim-tenure"]).unwrap();
    let mut tally = Tally::default();
    compare_with(&only, &scenario, 4, mutant, info.name, &mut tally);
    assert!(tally.disagreements.is_empty(), "{:?}", tally.disagreements);
    assert_eq!(tally.agreed_violation, 1, "{tally:?}");
}

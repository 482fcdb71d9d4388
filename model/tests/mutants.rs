//! Every mutant is caught by the checker DESIGN.md §7 expects, within a fixed seed budget —
//! and the correct model passes the same seeds. Checkers never know which mutant is on.
//! A crash, a budget overrun or another checker's violation is not a kill: each mutant's
//! seeds are judged by its expected checkers alone ([`run_for_kill`]).

use sutra_sim_model::checkers;
use sutra_sim_model::mutant::MutantInfo;
use sutra_sim_model::{run_for_kill, Mutant, Scenario, MUTANTS};

/// Seeds tried per scenario for a mutant before the test gives up on it.
const SEED_BUDGET: u64 = 400;

/// Mutants whose expected checker is registered under its name but judges the old way until
/// issue #12's rewrite of it merges (`no-double-resume` on epochs, `refusal-contract` on
/// broker witnesses): skipped here meanwhile, judged by `mutant_witnesses.rs`. The
/// integrator empties this list after merging.
const AWAITING_CHECKER_REWRITE: &[&str] = &[];

/// The first (scenario, seed) where `info`'s expected checker kills it; `Err` if none of
/// its expected checkers is registered.
fn first_kill(info: &MutantInfo) -> Result<Option<(String, u64)>, String> {
    for scenario in Scenario::all_built_in() {
        for seed in 0..SEED_BUDGET {
            let out = run_for_kill(&scenario, seed, info)?;
            if info.killed_by(&out.verdict) {
                return Ok(Some((scenario.name.clone(), seed)));
            }
        }
    }
    Ok(None)
}

/// Every mutant at an index of `parity` (0 even, 1 odd) in [`MUTANTS`] is caught; the two
/// halves are two tests, so the harness judges them on both cores.
fn mutants_of_parity_are_caught(parity: usize) {
    let mut report = Vec::new();
    let mut waiting = Vec::new();
    for info in MUTANTS.iter().skip(parity).step_by(2) {
        if info.deep {
            // A deep mutant needs ~1,000+ seeds: searched by `sutra-sim mutants`, checked
            // here at its known kill (`deep_mutants_are_killed_at_their_known_seeds`).
            continue;
        }
        if AWAITING_CHECKER_REWRITE.contains(&info.name) {
            waiting.push(format!("{} waits for the rewrite of {}", info.name, info.caught_by));
            continue;
        }
        match first_kill(info) {
            Ok(Some((scenario, seed))) => {
                println!("{:<32} killed by {} ({scenario} seed {seed})", info.name, info.caught_by)
            }
            Ok(None) => report.push(format!("{} survived {SEED_BUDGET} seeds of every scenario", info.name)),
            // Issue #12's checkers are written on other branches; until they merge, a mutant
            // that only they can catch is listed here and judged by `mutant_witnesses.rs`.
            Err(e) => waiting.push(e),
        }
    }
    for e in &waiting {
        println!("not judged yet: {e}");
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
}

#[test]
fn every_mutant_at_an_even_index_is_caught_by_its_expected_checker_within_the_seed_budget() {
    mutants_of_parity_are_caught(0);
}

#[test]
fn every_mutant_at_an_odd_index_is_caught_by_its_expected_checker_within_the_seed_budget() {
    mutants_of_parity_are_caught(1);
}

#[test]
fn every_expected_checker_is_registered() {
    let registry = checkers::registry();
    for info in MUTANTS.iter() {
        for name in info.expected_checkers() {
            assert!(registry.get(name).is_ok(), "{} expects {name:?}, which is not a registered checker", info.name);
        }
    }
}

#[test]
fn a_crash_a_budget_overrun_or_another_checker_is_not_a_kill() {
    use sutra_sim_core::{Budget, Verdict};
    let info = Mutant::ReleaseAfterCommit.info();
    let other = Verdict::Violation { checker: "no-double-resume".into(), message: String::new() };
    let expected = Verdict::Violation { checker: "release-with-commit".into(), message: String::new() };
    let crash = Verdict::Crash { message: "boom".into() };
    let budget = Verdict::BudgetExceeded { budget: Budget::Events, message: String::new() };
    assert!(info.killed_by(&expected));
    for v in [other, crash, budget, Verdict::Pass] {
        assert!(!info.killed_by(&v), "{v:?} counted as a kill");
    }
    assert!(Mutant::ReentrantCallUndetected.info().expects("hang"));
}

#[test]
fn every_mutant_name_parses_back() {
    for info in MUTANTS.iter() {
        assert_eq!(Mutant::parse(info.name).unwrap(), info.mutant);
        assert_eq!(info.mutant.name(), info.name);
    }
    assert!(Mutant::parse("no-such-mutant").unwrap_err().contains("per-process-owner"));
}

/// Each deep mutant's first kill as `sutra-sim mutants --scenario all --count 2000` finds
/// it (scenarios in built-in order, seeds from 0): checked directly, not searched for —
/// a deep mutant needs ~1,000+ seeds of a plain sweep, too many for a unit test. If a
/// change to the model moves these runs, find the new first kill with
/// `sutra-sim mutants --count 2000 --json` (its `scenario` and `seed`) and update the row.
const DEEP_KILLS: &[(Mutant, &str, u64)] = &[
    (Mutant::CommitRetryAcceptsFreeRow, "swarm", 707),
    (Mutant::SweepTrustsRenewal, "smoke", 884),
    (Mutant::QueuedCopyAcked, "smoke", 306),
];

#[test]
fn every_deep_mutant_has_a_known_kill() {
    for info in MUTANTS.iter().filter(|m| m.deep) {
        assert!(DEEP_KILLS.iter().any(|(m, ..)| *m == info.mutant), "{} has no known kill in DEEP_KILLS", info.name);
    }
    for (mutant, ..) in DEEP_KILLS {
        assert!(mutant.info().deep, "{} is listed in DEEP_KILLS but not marked deep", mutant.name());
    }
}

#[test]
fn deep_mutants_are_killed_at_their_known_seeds_and_the_correct_model_passes_them() {
    for &(mutant, scenario, seed) in DEEP_KILLS {
        let info = mutant.info();
        let scenario = Scenario::built_in(scenario).unwrap();
        let out = run_for_kill(&scenario, seed, info).unwrap();
        assert!(
            info.killed_by(&out.verdict),
            "{} is no longer killed by {} at {} seed {seed}: {:?}",
            info.name,
            info.caught_by,
            scenario.name,
            out.verdict
        );
        let correct = sutra_sim_model::run(&scenario, &sutra_sim_model::RunOptions::seeded(seed));
        assert!(
            correct.verdict.is_pass(),
            "the correct model fails {} seed {seed}: {:?}",
            scenario.name,
            correct.verdict
        );
    }
}

/// Spec 000's tuning trade (issue #23, item 5): the owner-blind commit — the reference
/// runtime's shape before its fix — is what a short claim timeout makes dangerous. In
/// `short-claim-timeout`, where steps outlast their claims and are stolen all the time, it
/// dies on nearly every seed; in `smoke`, only where a rare slow step or pause lets a steal
/// happen. (`sweep --mutant unconditional-commit --count 2000`: 1,954 of 2,000 seeds of
/// short-claim-timeout fail, 278 of 2,000 of smoke.)
#[test]
fn the_owner_blind_commit_dies_on_most_seeds_of_a_short_claim_timeout() {
    let info = Mutant::UnconditionalCommit.info();
    let kills = |name: &str| {
        let scenario = Scenario::built_in(name).unwrap();
        (0..40).filter(|&seed| info.killed_by(&run_for_kill(&scenario, seed, info).unwrap().verdict)).count()
    };
    let (short, smoke) = (kills("short-claim-timeout"), kills("smoke"));
    assert!(short >= 36, "short-claim-timeout: {short} of 40");
    assert!(smoke < short / 2, "smoke: {smoke} of 40, short-claim-timeout {short}");
}

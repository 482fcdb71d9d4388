//! Every mutant is caught, by the checker DESIGN.md expects, within a fixed seed budget —
//! and the correct model passes the same seeds. Checkers never know which mutant is on.

use sutra_sim_model::{run, Mutant, RunOptions, Scenario, MUTANTS};

/// Seeds tried per mutant before the test gives up on it.
const SEED_BUDGET: u64 = 400;

fn first_kill(mutant: Mutant) -> Option<(String, u64, String)> {
    for scenario in Scenario::all_built_in() {
        for seed in 0..SEED_BUDGET {
            let mut options = RunOptions::seeded(seed);
            options.mutant = Some(mutant);
            let out = run(&scenario, &options);
            if !out.verdict.is_pass() {
                return Some((scenario.name.clone(), seed, out.verdict.checker().unwrap_or("").to_string()));
            }
        }
    }
    None
}

#[test]
fn every_mutant_is_caught_by_its_expected_checker_within_the_seed_budget() {
    let mut report = Vec::new();
    for info in MUTANTS.iter() {
        match first_kill(info.mutant) {
            Some((scenario, seed, checker)) => {
                println!("{:<28} killed by {checker} ({scenario} seed {seed})", info.name);
                if !info.expects(&checker) {
                    report.push(format!("{} was caught by {checker}, expected {}", info.name, info.caught_by));
                }
            }
            None => report.push(format!("{} survived {SEED_BUDGET} seeds of every scenario", info.name)),
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
}

#[test]
fn every_mutant_name_parses_back() {
    for info in MUTANTS.iter() {
        assert_eq!(Mutant::parse(info.name).unwrap(), info.mutant);
        assert_eq!(info.mutant.name(), info.name);
    }
    assert!(Mutant::parse("no-such-mutant").unwrap_err().contains("per-process-owner"));
}

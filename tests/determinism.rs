//! Determinism of the whole: the same seed gives the same fingerprint, different seeds give
//! different runs, and a recorded tape replays to the same fingerprint.

use std::collections::BTreeSet;

use sutra_sim_core::EntropyMode;
use sutra_sim_model::{run, RunOptions, Scenario};

#[test]
fn a_thousand_seeds_give_at_least_990_distinct_fingerprints() {
    let scenario = Scenario::built_in("smoke").unwrap();
    let fingerprints: BTreeSet<u64> =
        (0..1000).map(|seed| run(&scenario, &RunOptions::seeded(seed)).fingerprint).collect();
    println!("{} distinct fingerprints of 1000 seeds", fingerprints.len());
    assert!(fingerprints.len() >= 990, "only {} distinct fingerprints", fingerprints.len());
}

#[test]
fn every_scenario_replays_its_own_tape_to_the_same_fingerprint() {
    for scenario in Scenario::all_built_in() {
        for seed in [3, 11] {
            let original = run(&scenario, &RunOptions::seeded(seed));
            let mut replay = RunOptions::seeded(0);
            replay.entropy = EntropyMode::Tape(original.tape.clone());
            let again = run(&scenario, &replay);
            assert_eq!(again.fingerprint, original.fingerprint, "{} seed {seed}", scenario.name);
            assert_eq!(again.verdict, original.verdict);
        }
    }
}

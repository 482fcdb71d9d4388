//! The correct model stays green on a fixed seed range of every built-in scenario, and its
//! runs are deterministic.

use sutra_sim_model::{run, RunOptions, Scenario};

#[test]
fn the_correct_model_is_clean_on_a_fixed_seed_range() {
    for scenario in Scenario::all_built_in() {
        for seed in 0..30 {
            let out = run(&scenario, &RunOptions::seeded(seed));
            assert!(
                out.verdict.is_pass(),
                "{} seed {seed}: {} (replay: sutra-sim run --scenario {} --seed {seed})",
                scenario.name,
                out.verdict,
                scenario.name
            );
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_fingerprint() {
    let scenario = Scenario::built_in("smoke").unwrap();
    for seed in [1, 7, 99] {
        let a = run(&scenario, &RunOptions::seeded(seed));
        let b = run(&scenario, &RunOptions::seeded(seed));
        assert_eq!(a.fingerprint, b.fingerprint);
        assert_eq!(a.events, b.events);
    }
}

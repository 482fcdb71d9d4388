//! A boosted run's tape replays it (explore's children are boosted, and replayed from their
//! tapes alone), whatever chances the model asks — a chance of zero included.
//!
//! Written for the framework's mutation run (docs/mutation-testing.md, "The framework"):
//! a careless change that let a chance of zero be boosted passed every test before.

use sutra_sim_core::{Entropy, Stream, Tape};

/// The answers of one run of a model that asks a chance of zero, a rare chance and three
/// choices, in that order, five times over.
fn answers(entropy: &mut Entropy) -> Vec<u32> {
    let mut seen = Vec::new();
    for _ in 0..5 {
        seen.push(u32::from(entropy.chance_in(Stream::MODEL, 0, 10)));
        seen.push(u32::from(entropy.chance_in(Stream::MODEL, 1, 10)));
        for _ in 0..3 {
            seen.push(entropy.choose_in(Stream::MODEL, 1_000));
        }
    }
    seen
}

#[test]
fn a_boosted_run_that_asks_a_chance_of_zero_replays_from_its_tape() {
    for seed in 0..20 {
        let mut boosted = Entropy::boosted(Tape(Vec::new()), seed, 8);
        let ran = answers(&mut boosted);
        assert!(ran.iter().step_by(5).all(|&zero_chance| zero_chance == 0), "a chance of zero never comes true");
        let mut replay = Entropy::replay(boosted.tape());
        assert_eq!(answers(&mut replay), ran, "seed {seed}");
        assert_eq!(replay.replay_position(), Some((boosted.draws(), boosted.draws())), "seed {seed}: every draw read");
    }
}

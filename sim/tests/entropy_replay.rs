//! A boosted run's tape replays it (explore's children are boosted, and replayed from their
//! tapes alone), whatever chances the model asks — a chance of zero included.
//!
//! Written for the framework's mutation run (docs/mutation-testing.md, "The framework"):
//! a careless change that let a chance of zero be boosted passed every test before.

use sutra_sim_core::{Entropy, Stream, Tape};

/// The answers of one run of a model that asks a chance of zero, two rare chances and three
/// choices, in that order, five times over.
fn answers(entropy: &mut Entropy) -> Vec<u32> {
    let mut seen = Vec::new();
    for _ in 0..5 {
        seen.push(u32::from(entropy.chance_in(Stream::MODEL, 0, 10)));
        seen.push(u32::from(entropy.chance_in(Stream::MODEL, 1, 10)));
        seen.push(u32::from(entropy.chance_in(Stream::MODEL, 3, 10)));
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
        assert!(ran.iter().step_by(6).all(|&zero_chance| zero_chance == 0), "a chance of zero never comes true");
        let mut replay = Entropy::replay(boosted.tape());
        assert_eq!(answers(&mut replay), ran, "seed {seed}");
        assert_eq!(replay.replay_position(), Some((boosted.draws(), boosted.draws())), "seed {seed}: every draw read");
    }
}

/// A boost raises the odds of a rare chance only (strictly between 0 and one half): a chance
/// of one half or more is drawn exactly as in an unboosted run, so the same seed answers it
/// the same way and records the same draws (4 in 7, just above one half, too).
#[test]
fn a_boost_leaves_a_chance_of_one_half_or_more_as_it_is() {
    for seed in 0..20 {
        let mut boosted = Entropy::boosted(Tape(Vec::new()), seed, 8);
        let mut plain = Entropy::random(seed);
        let ask = |e: &mut Entropy| -> Vec<u32> {
            (0..10)
                .flat_map(|_| {
                    [(1, 2), (3, 4), (4, 7)]
                        .map(|(numerator, denominator)| u32::from(e.chance_in(Stream::MODEL, numerator, denominator)))
                })
                .collect()
        };
        assert_eq!(ask(&mut boosted), ask(&mut plain), "seed {seed}");
        assert_eq!(boosted.tape(), plain.tape(), "seed {seed}: the same draws recorded");
    }
}

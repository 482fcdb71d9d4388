//! Property tests of the shrinker itself: whatever the failure, the result still fails, is
//! never larger than the input, and is the same every time.

use proptest::prelude::*;
use sutra_sim_shrink::{shrink, Candidate, Limits, NotFailing, Stop};

/// Limits that never cut a test short by wall time, so results are comparable.
fn call_limited(calls: u64) -> Limits {
    Limits { oracle_calls_max: calls, time_budget: std::time::Duration::from_secs(3600) }
}

/// A family of "bugs" a tape and knobs may trigger, chosen by `kind`; `threshold` tunes it.
fn fails(kind: u8, threshold: u32, c: &Candidate) -> bool {
    let sum: u64 = c.tape.iter().map(|&v| u64::from(v)).sum();
    match kind % 5 {
        // Needs enough "entropy" in total.
        0 => sum >= u64::from(threshold),
        // Needs one large draw somewhere.
        1 => c.tape.iter().any(|&v| v >= threshold),
        // Needs a knob setting and some draws.
        2 => c.knobs.first().is_some_and(|&k| k >= threshold % 4) && c.tape.len() >= (threshold % 7) as usize,
        // Needs two draws in increasing order.
        3 => c.tape.windows(2).any(|w| w[0] < w[1] && w[1] >= threshold % 50),
        // Needs an exact value after a non-zero one.
        _ => c.tape.windows(2).any(|w| w[0] != 0 && w[1] == threshold % 13),
    }
}

fn candidates() -> impl Strategy<Value = Candidate> {
    (prop::collection::vec(0u32..6, 3), prop::collection::vec(prop_oneof![0u32..4, 0u32..1000], 0..120))
        .prop_map(|(knobs, tape)| Candidate::new(knobs, tape))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn the_result_still_fails_and_is_never_larger(kind in 0u8..5, threshold in 1u32..400, input in candidates()) {
        let mut property = |c: &Candidate| fails(kind, threshold, c);
        match shrink(input.clone(), &mut property, call_limited(3_000)) {
            Err(NotFailing) => prop_assert!(!fails(kind, threshold, &input)),
            Ok(shrunk) => {
                prop_assert!(fails(kind, threshold, &shrunk.candidate));
                prop_assert!(shrunk.candidate == input || shrunk.candidate.simpler_than(&input));
                prop_assert!(shrunk.oracle_calls <= 3_000);
            }
        }
    }

    #[test]
    fn shrinking_is_deterministic(kind in 0u8..5, threshold in 1u32..400, input in candidates()) {
        let mut first_property = |c: &Candidate| fails(kind, threshold, c);
        let mut second_property = |c: &Candidate| fails(kind, threshold, c);
        let first = shrink(input.clone(), &mut first_property, call_limited(2_000));
        let second = shrink(input, &mut second_property, call_limited(2_000));
        match (first, second) {
            (Ok(a), Ok(b)) => {
                prop_assert_eq!(a.candidate, b.candidate);
                prop_assert_eq!(a.oracle_calls, b.oracle_calls);
            }
            (Err(_), Err(_)) => {}
            _ => prop_assert!(false, "one run failed to start and the other did not"),
        }
    }

    #[test]
    fn a_shrink_that_ran_to_the_end_is_a_fixpoint(threshold in 1u32..400, input in candidates()) {
        let mut property = |c: &Candidate| fails(1, threshold, c);
        if let Ok(shrunk) = shrink(input, &mut property, call_limited(100_000)) {
            prop_assert_eq!(shrunk.stop, Stop::Fixpoint);
            // Shrinking the result again finds nothing simpler.
            let again = shrink(shrunk.candidate.clone(), &mut property, call_limited(100_000)).unwrap();
            prop_assert_eq!(again.candidate, shrunk.candidate);
        }
    }
}

#[test]
fn the_one_draw_that_matters_is_all_that_is_left() {
    let noise: Vec<u32> = (0..500).map(|i| (i * 7919 % 113) as u32).collect();
    let mut tape = noise.clone();
    tape.insert(321, 4242);
    let mut property = |c: &Candidate| c.tape.contains(&4242);
    let shrunk = shrink(Candidate::new(vec![], tape), &mut property, call_limited(100_000)).unwrap();
    assert_eq!(shrunk.candidate.tape, vec![4242]);
    assert_eq!(shrunk.before.tape_len, 501);
    assert_eq!(shrunk.after.tape_len, 1);
}

#[test]
fn knobs_go_down_to_the_lowest_value_that_still_fails() {
    let mut property = |c: &Candidate| c.knobs[0] >= 3 && c.knobs[1] >= 1;
    let shrunk = shrink(Candidate::new(vec![40, 9, 5], vec![1, 2, 3]), &mut property, call_limited(10_000)).unwrap();
    assert_eq!(shrunk.candidate.knobs, vec![3, 1, 0]);
    assert!(shrunk.candidate.tape.is_empty());
}

#[test]
fn single_values_are_lowered_to_the_threshold() {
    let mut property = |c: &Candidate| c.tape.len() == 3 && c.tape[1] >= 37;
    let shrunk = shrink(Candidate::new(vec![], vec![5, 900, 5]), &mut property, call_limited(10_000)).unwrap();
    assert_eq!(shrunk.candidate.tape, vec![0, 37, 0]);
}

#[test]
fn a_normalising_property_keeps_what_ran() {
    // Like a replayed run: trailing zeros are never read, so what ran is the tape without them.
    struct Trims;
    impl sutra_sim_shrink::Property for Trims {
        fn still_fails(&mut self, c: &Candidate) -> Option<sutra_sim_shrink::Ran> {
            let mut ran = c.clone();
            while ran.tape.last() == Some(&0) {
                ran.tape.pop();
            }
            ran.tape.iter().any(|&v| v > 10).then_some(sutra_sim_shrink::Ran { candidate: ran, cost: 0 })
        }
    }
    let shrunk = shrink(Candidate::new(vec![], vec![3, 50, 0, 0, 7]), &mut Trims, call_limited(10_000)).unwrap();
    assert_eq!(shrunk.candidate.tape, vec![11]);
}

#[test]
fn a_simpler_candidate_that_costs_more_than_the_input_is_not_taken() {
    // Cost: the sum of the tape. Zeroing the first draw is simpler but costlier than the input.
    struct Costly;
    impl sutra_sim_shrink::Property for Costly {
        fn still_fails(&mut self, c: &Candidate) -> Option<sutra_sim_shrink::Ran> {
            let cost = if c.tape.first() == Some(&0) { 100 } else { c.tape.iter().map(|&v| u64::from(v)).sum() };
            (c.tape.len() == 2).then(|| sutra_sim_shrink::Ran { candidate: c.clone(), cost })
        }
    }
    let shrunk = shrink(Candidate::new(vec![], vec![5, 9]), &mut Costly, call_limited(10_000)).unwrap();
    assert_eq!(shrunk.candidate.tape, vec![1, 0]);
    assert_eq!(shrunk.cost, 1);
}

#[test]
fn an_input_that_does_not_fail_is_refused() {
    let mut property = |_: &Candidate| false;
    assert_eq!(shrink(Candidate::new(vec![1], vec![1]), &mut property, Limits::default()).unwrap_err(), NotFailing);
}

#[test]
fn the_call_limit_is_respected() {
    let tape: Vec<u32> = (0..2000).map(|i| i % 97 + 1).collect();
    let mut calls = 0u64;
    let mut property = |c: &Candidate| {
        calls += 1;
        c.tape.iter().map(|&v| u64::from(v)).sum::<u64>() > 5_000
    };
    let shrunk = shrink(Candidate::new(vec![], tape), &mut property, call_limited(50)).unwrap();
    assert_eq!(shrunk.stop, Stop::OracleCalls);
    assert_eq!(shrunk.oracle_calls, 50);
    assert_eq!(calls, 50);
}

//! What a shrink reports about itself — why it stopped, how many rounds and property calls it
//! took, the sizes before and after — and that it keeps going while a round still finds
//! something simpler. `sutra-sim shrink` prints these figures; a wrong one misleads the
//! person who reads the report.
//!
//! Written for the framework's mutation run (docs/mutation-testing.md, "The framework"):
//! each test here is one that a careless change to `shrink/src/search.rs` passed before.

use sutra_sim_shrink::{shrink, Candidate, Limits, NotFailing, Sizes, Stop};

/// Limits that never cut a test short by wall time, so results are comparable.
fn call_limited(calls: u64) -> Limits {
    Limits { oracle_calls_max: calls, time_budget: std::time::Duration::from_secs(3600) }
}

fn nonzero(tape: &[u32]) -> u32 {
    tape.iter().filter(|&&v| v != 0).count() as u32
}

#[test]
fn a_knob_freed_by_a_later_pass_is_lowered_in_the_next_round() {
    // Fails while the knob is at least the number of non-zero draws: the knob pass can only
    // lower it to 3 until the tape passes clear the draws, and a second round takes it to 0.
    let mut property = |c: &Candidate| c.knobs[0] >= nonzero(&c.tape);
    let shrunk = shrink(Candidate::new(vec![5], vec![1, 1, 1]), &mut property, call_limited(10_000)).unwrap();
    assert_eq!(shrunk.candidate, Candidate::new(vec![0], vec![]));
    assert_eq!(shrunk.stop, Stop::Fixpoint);
    // Round 1 lowers the knob to 3 and clears the tape, round 2 lowers it to 0, round 3
    // finds nothing more: the fixpoint.
    assert_eq!(shrunk.rounds, 3);
}

#[test]
fn an_input_that_is_already_simplest_stops_at_a_fixpoint_after_one_round() {
    let mut property = |_: &Candidate| true;
    let shrunk = shrink(Candidate::new(vec![0], vec![]), &mut property, call_limited(10_000)).unwrap();
    assert_eq!((shrunk.stop, shrunk.rounds, shrunk.accepted), (Stop::Fixpoint, 1, 0));
}

#[test]
fn each_simpler_candidate_taken_is_counted() {
    let mut property = |_: &Candidate| true;
    let shrunk = shrink(Candidate::new(vec![1], vec![]), &mut property, call_limited(10_000)).unwrap();
    // Round 1 takes the knob to 0 (one candidate accepted); round 2 finds nothing more.
    assert_eq!((shrunk.candidate.knobs[0], shrunk.accepted, shrunk.rounds), (0, 1, 2));
}

#[test]
fn the_reported_property_calls_are_the_calls_the_property_received() {
    // Knobs to lower, so the knob pass runs, and a property with no tapes of its own: every
    // call reported is one the property saw.
    let mut calls = 0u64;
    let mut property = |c: &Candidate| {
        calls += 1;
        c.knobs.iter().sum::<u32>() >= 4 && c.tape.iter().any(|&v| v >= 10)
    };
    let shrunk = shrink(Candidate::new(vec![3, 5, 2], vec![7, 40, 3]), &mut property, call_limited(10_000)).unwrap();
    assert_eq!(shrunk.stop, Stop::Fixpoint);
    assert_eq!(shrunk.oracle_calls, calls);
}

#[test]
fn sizes_count_the_knobs_the_draws_and_the_draws_that_are_not_zero() {
    let sizes = Sizes::of(&Candidate::new(vec![2, 0], vec![0, 3, 0, 5, 0]));
    assert_eq!(sizes, Sizes { knobs: vec![2, 0], tape_len: 5, tape_nonzero: 2 });
    let mut property = |c: &Candidate| c.tape.iter().any(|&v| v >= 9);
    let shrunk = shrink(Candidate::new(vec![], vec![0, 12, 0, 4]), &mut property, call_limited(10_000)).unwrap();
    assert_eq!((shrunk.before.tape_len, shrunk.before.tape_nonzero), (4, 2));
    assert_eq!((shrunk.after.tape_len, shrunk.after.tape_nonzero), (1, 1));
}

#[test]
fn every_reason_to_stop_has_the_name_reports_print() {
    let names = [Stop::Fixpoint, Stop::OracleCalls, Stop::TimeBudget, Stop::Rounds].map(Stop::as_str);
    assert_eq!(names, ["fixpoint", "oracle-calls", "time-budget", "rounds"]);
}

#[test]
fn a_refusal_to_shrink_says_why() {
    assert_eq!(NotFailing.to_string(), "the run to shrink does not fail: nothing to shrink");
}

/// Fails with the candidate's own tape only while the knob is at least 4, and with the
/// property's own tape number 2 (of 3) at any knob: lowering the knob below 4 needs a reseed.
struct FailsReseeded;

impl sutra_sim_shrink::Property for FailsReseeded {
    fn still_fails(&mut self, c: &Candidate) -> Option<sutra_sim_shrink::Ran> {
        (c.knobs[0] >= 4 && c.tape.first() == Some(&9)).then(|| sutra_sim_shrink::Ran { candidate: c.clone(), cost: 0 })
    }

    fn reseeds(&self) -> u32 {
        3
    }

    fn still_fails_reseeded(&mut self, c: &Candidate, attempt: u32) -> Option<sutra_sim_shrink::Ran> {
        let candidate = Candidate::new(c.knobs.clone(), vec![9, 9]);
        (attempt == 2).then_some(sutra_sim_shrink::Ran { candidate, cost: 0 })
    }
}

#[test]
fn a_knob_that_fails_only_with_another_tape_is_lowered_by_a_reseeded_run() {
    let shrunk = shrink(Candidate::new(vec![6], vec![9]), &mut FailsReseeded, call_limited(10_000)).unwrap();
    assert_eq!(shrunk.candidate, Candidate::new(vec![0], vec![9, 9]));
}

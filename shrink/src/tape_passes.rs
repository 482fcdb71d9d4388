//! Shrinking the tape, Hypothesis-style. Each pass proposes edits of the best tape and
//! keeps those that still fail:
//!
//! - **truncate**: the shortest prefix that still fails, by bisection (a cut tape reads as
//!   zeros past its end, so this also switches off everything the tail decided);
//! - **delete spans**: remove runs of draws, big spans first, then smaller ones;
//! - **zero spans**: set runs of draws to 0, the simplest choice, big spans first;
//! - **lower values**: lower each remaining draw to the smallest value that still fails.
//!
//! Spans and single values are visited from the end of the tape toward its start: an edit
//! late in the tape disturbs fewer of the decisions that follow it, and an accepted edit at
//! a position leaves every earlier position where it was. On a long tape a pass visits at
//! most [`POSITIONS_PER_PASS_MAX`] positions, spread evenly.

use crate::limits::POSITIONS_PER_PASS_MAX;
use crate::search::{Property, Search};

/// Cuts the tape to the shortest prefix that still fails, by bisection.
pub(crate) fn truncate<P: Property + ?Sized>(search: &mut Search<'_, P>) {
    // Invariant: no prefix shorter than `low` was accepted; the best tape (length `high`) fails.
    let (mut low, mut high) = (0usize, search.best.tape.len());
    while low < high && !search.stopped() {
        let middle = low + (high - low) / 2;
        let prefix = search.best.tape[..middle].to_vec();
        if search.try_candidate(search.best.with_tape(prefix)) {
            high = search.best.tape.len();
        } else {
            low = middle + 1;
        }
    }
}

/// Deletes spans of draws, sizes halving from half the tape down to single draws.
pub(crate) fn delete_spans<P: Property + ?Sized>(search: &mut Search<'_, P>) {
    for_each_span(search, |tape, start, size| {
        let mut edited = Vec::with_capacity(tape.len() - size);
        edited.extend_from_slice(&tape[..start]);
        edited.extend_from_slice(&tape[start + size..]);
        Some(edited)
    });
}

/// Sets spans of draws to 0, sizes halving from half the tape down to single draws.
pub(crate) fn zero_spans<P: Property + ?Sized>(search: &mut Search<'_, P>) {
    for_each_span(search, |tape, start, size| {
        if tape[start..start + size].iter().all(|&v| v == 0) {
            return None;
        }
        let mut edited = tape.to_vec();
        edited[start..start + size].fill(0);
        Some(edited)
    });
}

/// Lowers each non-zero draw to the smallest value that still fails: 0 first, then by
/// bisection between the last value that did not fail and the one that does.
pub(crate) fn lower_each_value<P: Property + ?Sized>(search: &mut Search<'_, P>) {
    let len = search.best.tape.len();
    let stride = len.div_ceil(POSITIONS_PER_PASS_MAX).max(1);
    let mut position = len;
    while position > 0 && !search.stopped() {
        position = position.saturating_sub(stride);
        let Some(&value) = search.best.tape.get(position) else { continue };
        if value == 0 {
            continue;
        }
        let zeroed = with_value(&search.best.tape, position, 0).expect("the position is inside the tape");
        if search.try_candidate(search.best.with_tape(zeroed)) {
            continue;
        }
        // Invariant: `low` did not fail; `high` is the draw in the best tape, which fails.
        let (mut low, mut high) = (0u32, value);
        while high > low + 1 && !search.stopped() {
            let middle = low + (high - low) / 2;
            let Some(tape) = with_value(&search.best.tape, position, middle) else { break };
            if search.try_candidate(search.best.with_tape(tape)) {
                match search.best.tape.get(position) {
                    Some(&now) => high = now,
                    None => break,
                }
            } else {
                low = middle;
            }
        }
    }
}

/// The tape with the draw at `position` set to `value`, if the tape is that long.
fn with_value(tape: &[u32], position: usize, value: u32) -> Option<Vec<u32>> {
    let mut edited = tape.to_vec();
    *edited.get_mut(position)? = value;
    Some(edited)
}

/// Proposes `edit(tape, start, size)` for spans of sizes halving from half the tape's
/// length down to 1, at positions from the end of the tape toward its start.
fn for_each_span<P: Property + ?Sized>(
    search: &mut Search<'_, P>,
    mut edit: impl FnMut(&[u32], usize, usize) -> Option<Vec<u32>>,
) {
    let mut size = largest_power_of_two_at_most(search.best.tape.len() / 2);
    while size >= 1 && !search.stopped() {
        let len = search.best.tape.len();
        let stride = size.max(len.div_ceil(POSITIONS_PER_PASS_MAX));
        // Start at the last span that fits; walk toward the start of the tape.
        let mut start = len.saturating_sub(size);
        loop {
            if search.stopped() {
                return;
            }
            let tape = &search.best.tape;
            if start + size <= tape.len() {
                if let Some(edited) = edit(tape, start, size) {
                    let candidate = search.best.with_tape(edited);
                    search.try_candidate(candidate);
                }
            }
            if start == 0 {
                break;
            }
            start = start.saturating_sub(stride);
        }
        size /= 2;
    }
}

/// The largest power of two not above `n` (0 for 0).
fn largest_power_of_two_at_most(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        1 << (usize::BITS - 1 - n.leading_zeros())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidate::Candidate;

    #[test]
    fn powers_of_two_round_down() {
        assert_eq!(largest_power_of_two_at_most(0), 0);
        assert_eq!(largest_power_of_two_at_most(1), 1);
        assert_eq!(largest_power_of_two_at_most(7), 4);
        assert_eq!(largest_power_of_two_at_most(8), 8);
    }

    #[test]
    fn truncate_finds_the_shortest_failing_prefix() {
        let mut property = |c: &Candidate| c.tape.len() >= 3;
        let limits = crate::Limits { oracle_calls_max: 1_000, time_budget: std::time::Duration::from_secs(3600) };
        let mut search = Search::for_test(&mut property, Candidate::new(vec![], vec![1, 2, 3, 4, 5, 6, 7, 8]), limits);
        truncate(&mut search);
        assert_eq!(search.best.tape, vec![1, 2, 3]);
    }

    #[test]
    fn zero_spans_clears_every_span_the_failure_does_not_need() {
        let mut property = |c: &Candidate| c.tape.get(3).is_some_and(|&v| v != 0);
        let limits = crate::Limits { oracle_calls_max: 1_000, time_budget: std::time::Duration::from_secs(3600) };
        let mut search = Search::for_test(&mut property, Candidate::new(vec![], vec![1, 2, 3, 4]), limits);
        zero_spans(&mut search);
        assert_eq!(search.best.tape, vec![0, 0, 0, 4]);
    }

    #[test]
    fn spans_start_at_half_the_tape_and_walk_from_its_end() {
        // A property that never fails: every proposal is seen and none is taken.
        let mut proposed: Vec<Vec<u32>> = Vec::new();
        let mut property = |c: &Candidate| {
            proposed.push(c.tape.clone());
            false
        };
        let limits = crate::Limits { oracle_calls_max: 1_000, time_budget: std::time::Duration::from_secs(3600) };
        let best = Candidate::new(vec![], vec![1, 2, 3, 4, 5, 6, 7, 8]);
        delete_spans(&mut Search::for_test(&mut property, best, limits));
        assert_eq!(proposed[0], vec![1, 2, 3, 4], "the first span is the last half");
        assert!(proposed.iter().all(|t| t.len() >= 4), "no span is more than half the tape");
        // Sizes 4, 2, 1, each stepping a span at a time from the end: 2 + 4 + 8 proposals.
        assert_eq!(proposed.len(), 14);
    }
}

//! `sutra-sim-shrink`: the minimiser. It knows nothing of Sutra: it shrinks a failing run's
//! parameters and its entropy tape toward smaller, simpler runs that still fail the same
//! way, Hypothesis-style (delete spans, zero spans, lower single values; shortlex order).
//!
//! This crate holds the tape-level primitives; the search itself arrives with issue #5.
#![deny(missing_docs)]

/// Shortlex order on tapes: shorter first, then smaller at the first difference. A shrink
/// step is accepted only if it moves a tape down this order, so shrinking terminates.
pub fn shortlex_less(a: &[u32], b: &[u32]) -> bool {
    a.len() < b.len() || (a.len() == b.len() && a < b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorter_tapes_come_first_then_smaller_values() {
        assert!(shortlex_less(&[9, 9], &[0, 0, 0]));
        assert!(shortlex_less(&[0, 5], &[1, 0]));
        assert!(!shortlex_less(&[1, 0], &[1, 0]));
    }
}

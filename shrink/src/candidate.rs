//! What the shrinker shrinks, and the order that says which of two candidates is simpler.

/// A run to try: scenario knobs and an entropy tape.
///
/// Knobs are the caller's integer encoding of scenario parameters, each one's lowest value
/// being its simplest setting (one replica, one lane, a fault kind switched off, …). The
/// tape is the run's sequence of draws; 0 is the simplest draw, and draws past the end of
/// the tape read as 0, so a shorter tape is a simpler run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Candidate {
    /// Scenario parameters, each lower is simpler. Invariant: every candidate the
    /// shrinker compares has the same number of knobs.
    pub knobs: Vec<u32>,
    /// The entropy tape.
    pub tape: Vec<u32>,
}

impl Candidate {
    /// A candidate from its parts.
    pub fn new(knobs: Vec<u32>, tape: Vec<u32>) -> Candidate {
        Candidate { knobs, tape }
    }

    /// True if `self` is strictly simpler than `other`: smaller knobs (lexicographically),
    /// or equal knobs and a shortlex-smaller tape. This is a well-founded order (knobs are
    /// a fixed number of naturals; tapes shortlex are well-founded too), so a search that
    /// only ever moves down it stops.
    pub fn simpler_than(&self, other: &Candidate) -> bool {
        assert_eq!(self.knobs.len(), other.knobs.len(), "candidates of one search have the same knobs");
        match self.knobs.cmp(&other.knobs) {
            std::cmp::Ordering::Less => true,
            std::cmp::Ordering::Greater => false,
            std::cmp::Ordering::Equal => shortlex_less(&self.tape, &other.tape),
        }
    }

    /// The candidate with one knob set to `value`.
    pub(crate) fn with_knob(&self, index: usize, value: u32) -> Candidate {
        let mut c = self.clone();
        c.knobs[index] = value;
        c
    }

    /// The candidate with another tape.
    pub(crate) fn with_tape(&self, tape: Vec<u32>) -> Candidate {
        Candidate { knobs: self.knobs.clone(), tape }
    }
}

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

    #[test]
    fn smaller_knobs_beat_any_tape() {
        let a = Candidate::new(vec![0, 9], vec![7; 100]);
        let b = Candidate::new(vec![1, 0], vec![]);
        assert!(a.simpler_than(&b));
        assert!(!b.simpler_than(&a));
        assert!(!a.simpler_than(&a));
    }

    #[test]
    fn with_equal_knobs_the_tape_decides() {
        let a = Candidate::new(vec![2], vec![0, 1]);
        let b = Candidate::new(vec![2], vec![0, 2]);
        assert!(a.simpler_than(&b));
    }
}

//! A set of ids kept as bits, 64 ids to a word, words kept only where a member is.
//!
//! Some facts a checker must remember for as long as the history runs — "this delivery
//! was settled", "this task was aborted" — because a late witness may name the id again
//! at any time. A tree of the ids costs tens of bytes each; a long history's ids are
//! numbered from a counter (deliveries, tasks), so their words fill up and a member costs
//! about a bit. Ids scattered over the whole range (a real system's random tags) cost a
//! word each, no more than the tree did. Iteration is never offered: nothing may depend on
//! an order here.

use std::collections::BTreeMap;

/// A set of `u64` ids.
#[derive(Clone, Debug, Default)]
pub struct IdBits {
    /// Word index (id / 64) → the word's members as bits, for every word with a member but
    /// the hot one.
    words: BTreeMap<u64, u64>,
    len: usize,
    /// The word last added (its index and bits, perhaps none), kept out of the tree: ids
    /// from a counter write it again and again, and each write costs no walk of the tree.
    /// Invariant: the tree does not hold it.
    hot: Option<(u64, u64)>,
}

impl IdBits {
    /// An empty set.
    pub fn new() -> IdBits {
        IdBits::default()
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if there is no member.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Words held (the memory the set uses, in words).
    pub fn words(&self) -> usize {
        self.words.len() + usize::from(self.hot.is_some_and(|(_, bits)| bits != 0))
    }

    /// True if `id` is a member.
    pub fn contains(&self, id: u64) -> bool {
        let (word, bit) = (id / 64, 1u64 << (id % 64));
        match self.hot {
            Some((w, bits)) if w == word => bits & bit != 0,
            _ => self.words.get(&word).is_some_and(|bits| bits & bit != 0),
        }
    }

    /// Adds `id`; true if it was not a member.
    pub fn insert(&mut self, id: u64) -> bool {
        let (word, bit) = (id / 64, 1u64 << (id % 64));
        if self.hot.is_none_or(|(w, _)| w != word) {
            if let Some(bits) = self.words.get_mut(&word) {
                // A word the tree holds stays there: one walk, as ever.
                let fresh = *bits & bit == 0;
                *bits |= bit;
                self.len += usize::from(fresh);
                return fresh;
            }
            self.heat(word);
        }
        let Some((_, bits)) = &mut self.hot else { unreachable!("made hot above") };
        let fresh = *bits & bit == 0;
        *bits |= bit;
        self.len += usize::from(fresh);
        fresh
    }

    /// Removes `id`; true if it was a member.
    pub fn remove(&mut self, id: u64) -> bool {
        let (word, bit) = (id / 64, 1u64 << (id % 64));
        let bits = match &mut self.hot {
            Some((w, bits)) if *w == word => bits,
            _ => {
                let Some(bits) = self.words.get_mut(&word) else { return false };
                let present = *bits & bit != 0;
                *bits &= !bit;
                if *bits == 0 {
                    self.words.remove(&word);
                }
                self.len -= usize::from(present);
                return present;
            }
        };
        let present = *bits & bit != 0;
        *bits &= !bit;
        self.len -= usize::from(present);
        present
    }

    /// Makes `word`, which the tree does not hold, the hot word (with no member yet): the
    /// previous hot word goes to the tree if it has a member.
    fn heat(&mut self, word: u64) {
        if let Some((w, bits)) = self.hot.replace((word, 0)) {
            if bits != 0 {
                self.words.insert(w, bits);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::*;

    #[test]
    fn ids_from_a_counter_cost_about_a_bit_each() {
        let mut set = IdBits::new();
        for id in 1_000_000..2_000_000u64 {
            assert!(set.insert(id));
        }
        assert_eq!(set.len(), 1_000_000);
        assert!(set.words() <= 1_000_000 / 64 + 2, "{} words", set.words());
        assert!(set.contains(1_500_000) && !set.contains(999_999) && !set.contains(2_000_000));
    }

    proptest! {
        /// The set answers exactly as a BTreeSet would.
        #[test]
        fn id_bits_behave_like_a_btree_set(ops in proptest::collection::vec((0u8..3, 0u64..400), 0..400)) {
            let mut bits = IdBits::new();
            let mut tree = BTreeSet::new();
            for (what, raw) in ops {
                // Some ids near zero, some far apart (a word each).
                let id = if raw % 2 == 0 { raw } else { raw << 40 };
                match what {
                    0 => prop_assert_eq!(bits.insert(id), tree.insert(id)),
                    1 => prop_assert_eq!(bits.remove(id), tree.remove(&id)),
                    _ => {}
                }
                prop_assert_eq!(bits.contains(id), tree.contains(&id));
                prop_assert_eq!(bits.contains(id ^ 1), tree.contains(&(id ^ 1)));
                prop_assert_eq!(bits.len(), tree.len());
                let words: BTreeSet<u64> = tree.iter().map(|id| id / 64).collect();
                prop_assert_eq!(bits.words(), words.len());
            }
        }
    }
}

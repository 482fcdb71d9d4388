//! Coverage marks: what a run reports as it goes, for exploration to grow the runs that
//! reached something rare.
//!
//! A mark is a 64-bit id folded AFL-style into a fixed bitmap of [`MAP_SLOTS`] slots; a
//! run records each slot the first time it hits it, with the tape position (draws made so
//! far) at which it did. Replaying the tape up to that position rebuilds the world at
//! that moment exactly, which is what makes a mark a branch point (see [`crate::explore`]).
//!
//! Three sources feed the one bitmap: the judge (the first hit of each sometimes-checker),
//! the model (a coarse abstract-state signature, through [`mark`]), and user checkers
//! (through [`mark`] too). Marking is off unless the run asks for it
//! ([`RunConfig::marks`](crate::run::RunConfig::marks)); off, [`mark`] is one load and a
//! branch, and [`marking`] lets callers skip computing a signature at all.

use serde::{Deserialize, Serialize};

/// Slots of the coverage bitmap (a power of two). Large enough that a long exploration's
/// state signatures (over 100,000 distinct in 10,000 runs of `swarm`) seldom share a slot:
/// with 2¹⁶ slots the map filled up and hid most of what exploration found beyond a sweep.
/// A run that collects marks pays one bit per slot (128 KiB); one that does not, nothing.
pub const MAP_SLOTS: usize = 1 << 20;

/// Where a mark came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MarkKind {
    /// The first hit of a sometimes-checker in the run.
    Sometimes,
    /// A state signature or a user mark, through [`mark`].
    State,
}

/// One slot of the bitmap reached for the first time in a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mark {
    /// The slot, in `[0, MAP_SLOTS)`.
    pub slot: u32,
    /// The number of draws made when it was reached: the tape prefix that rebuilds the
    /// world at that moment.
    pub position: usize,
    /// Where it came from.
    pub kind: MarkKind,
}

/// The slot of a mark id: a strong 64-bit mix, top bits.
pub fn slot_of(id: u64, kind: MarkKind) -> u32 {
    let mut x = id ^ (kind as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    (x >> (64 - MAP_SLOTS.trailing_zeros())) as u32
}

/// The marks of one run: the slots hit so far, and the first hit of each in order.
#[derive(Clone, Debug)]
pub(crate) struct MarkLog {
    /// One bit per slot. Invariant: `MAP_SLOTS / 64` words.
    seen: Vec<u64>,
    /// First hits, in the order they happened.
    pub(crate) marks: Vec<Mark>,
}

impl MarkLog {
    pub(crate) fn new() -> MarkLog {
        MarkLog { seen: vec![0; MAP_SLOTS / 64], marks: Vec::new() }
    }

    /// Records `id` at tape `position` if its slot was not hit before in this run.
    pub(crate) fn hit(&mut self, id: u64, kind: MarkKind, position: usize) {
        let slot = slot_of(id, kind);
        let (word, bit) = (slot as usize / 64, 1u64 << (slot % 64));
        if self.seen[word] & bit == 0 {
            self.seen[word] |= bit;
            self.marks.push(Mark { slot, position, kind });
        }
    }
}

/// Reports a coverage mark `id` (a state signature, or anything a user checker finds
/// interesting) at the current tape position. Does nothing when the run does not collect
/// marks, or outside a simulated world.
#[inline]
pub fn mark(id: u64) {
    crate::executor::record_mark(id, MarkKind::State);
}

/// True if the entered run collects marks: callers may skip computing a signature when not.
#[inline]
pub fn marking() -> bool {
    crate::executor::marking()
}

/// A stable 64-bit id of a name (FNV-1a), for marks named by text.
pub fn name_id(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_is_recorded_once_at_its_first_position() {
        let mut log = MarkLog::new();
        log.hit(1, MarkKind::State, 3);
        log.hit(1, MarkKind::State, 9);
        log.hit(2, MarkKind::State, 9);
        assert_eq!(log.marks.len(), 2);
        assert_eq!(log.marks[0].position, 3);
        assert!(log.marks.iter().all(|m| (m.slot as usize) < MAP_SLOTS));
    }

    #[test]
    fn nearby_ids_spread_over_the_map() {
        // Signatures of neighbouring states differ in a few low bits: a weak mix would put
        // them in a handful of slots and exploration would see one state where there are many.
        let slots: std::collections::BTreeSet<u32> = (0..4096).map(|id| slot_of(id, MarkKind::State)).collect();
        assert!(slots.len() > 4000, "4,096 neighbouring ids fell in {} slots", slots.len());
        assert_ne!(slot_of(7, MarkKind::State), slot_of(7, MarkKind::Sometimes));
    }

    #[test]
    fn the_mix_is_pinned() {
        // Exploration picks its branch points by which slots are new, so the same seed
        // explores the same runs only while the mix stays the same: a change must be a choice.
        let state = [0, 1, 2, 12345].map(|id| slot_of(id, MarkKind::State));
        assert_eq!(state, [926_218, 937_367, 619_907, 720_497]);
        assert_eq!([0, 1].map(|id| slot_of(id, MarkKind::Sometimes)), [0, 354_593]);
    }

    #[test]
    fn slots_that_share_a_bit_position_in_different_words_are_both_recorded() {
        // The bitmap is words of 64 slots: a slot's word is its number over 64, its bit the
        // remainder. Two slots with the same remainder are different slots.
        let first = (0..).find(|&id| slot_of(id, MarkKind::State) >= 64).expect("some id");
        let slot = slot_of(first, MarkKind::State);
        let other = (0..)
            .find(|&id| {
                let s = slot_of(id, MarkKind::State);
                s != slot && s % 64 == slot % 64 && s / 64 != slot / 64
            })
            .expect("another id with the same bit in another word");
        let mut log = MarkLog::new();
        log.hit(first, MarkKind::State, 1);
        log.hit(other, MarkKind::State, 2);
        assert_eq!(log.marks.iter().map(|m| m.position).collect::<Vec<_>>(), vec![1, 2]);
    }

    #[test]
    fn a_name_id_is_the_names_fnv_1a_hash() {
        // FNV-1a's published test vectors: a mark named by text keeps its id across
        // versions and tools only while this is the hash.
        assert_eq!(name_id(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(name_id("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(name_id("foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn marks_are_nothing_outside_a_marking_run() {
        mark(5);
        assert!(!marking());
    }
}

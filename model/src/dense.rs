//! Maps and sets keyed by the model's dense ids.
//!
//! Instances, executions, processes and messages are numbered from 0 within a run, so a
//! vector indexed by the id does what a `BTreeMap` keyed by it did: the same ascending
//! iteration order (so nothing that iterates sees a different order, and no schedule or
//! fingerprint changes), without the tree's node walks, rebalancing and allocations.
//! Checkers and components touch these on nearly every event, which is why they exist.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use crate::ids::{ExecId, InstanceId, MessageId, ProcessId};

/// An id that is a small index, numbered densely from 0 within a run.
pub trait DenseKey: Copy {
    /// The id as an index.
    fn index(self) -> usize;
    /// The id at `index`.
    fn from_index(index: usize) -> Self;
}

macro_rules! dense_u32 {
    ($($id:ident),*) => {$(
        impl DenseKey for $id {
            #[inline]
            fn index(self) -> usize {
                self.0 as usize
            }
            #[inline]
            fn from_index(index: usize) -> Self {
                $id(index as u32)
            }
        }
    )*};
}

dense_u32!(InstanceId, ExecId, ProcessId, MessageId);

impl DenseKey for u32 {
    #[inline]
    fn index(self) -> usize {
        self as usize
    }
    #[inline]
    fn from_index(index: usize) -> Self {
        index as u32
    }
}

/// A map from a dense id to `V`, iterated in ascending id order.
///
/// Slots start at `base`: when the lowest keys are removed (a finished instance, an ended
/// execution, a settled message forgotten by its checker), the run of empty slots at the
/// front is dropped once it is at least half the slots, so a long history whose ids keep
/// growing holds memory for the ids still in use, not for every id it ever saw. Keys below
/// `base` live in a tree beside the slots (`strays`): a forgotten id re-appearing, and the
/// few entries a long history never removes (a lane left with work when its process died,
/// a delivery never settled). When the slots are mostly empty, the entries in their front
/// half move to that tree and the half is dropped, so such stragglers cost their own entry,
/// not a slot for every id after them.
pub struct DenseMap<K, V> {
    slots: Vec<Option<V>>,
    /// The key of `slots[0]`.
    base: usize,
    /// How far the front has been scanned: `slots[..lead]` hold `behind_lead` entries,
    /// usually none. An entry written behind the scan is counted rather than pulling the
    /// scan back, so a low id written and removed again and again does not rescan the
    /// empty run after it each time (a 6,000-instance world spent 21 M instructions
    /// there); the count is what tells the front empty.
    lead: usize,
    behind_lead: usize,
    /// Entries in `slots`.
    in_slots: usize,
    /// Entries whose key is below `base`.
    strays: BTreeMap<usize, V>,
    key: PhantomData<K>,
}

/// Empty front slots below which the slots are never shifted (the simulation's ids are
/// small: it never pays for a shift).
const COMPACT_MIN: usize = 4_096;

/// The slots are moved to the tree when fewer than one in this many holds an entry.
const SPARSE_RATIO: usize = 8;

impl<K, V> Default for DenseMap<K, V> {
    fn default() -> Self {
        DenseMap {
            slots: Vec::new(),
            base: 0,
            lead: 0,
            behind_lead: 0,
            in_slots: 0,
            strays: BTreeMap::new(),
            key: PhantomData,
        }
    }
}

impl<K: DenseKey, V: Clone> Clone for DenseMap<K, V> {
    fn clone(&self) -> Self {
        DenseMap {
            slots: self.slots.clone(),
            base: self.base,
            lead: self.lead,
            behind_lead: self.behind_lead,
            in_slots: self.in_slots,
            strays: self.strays.clone(),
            key: PhantomData,
        }
    }
}

impl<K: DenseKey + fmt::Debug, V: fmt::Debug> fmt::Debug for DenseMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: DenseKey, V> DenseMap<K, V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.in_slots + self.strays.len()
    }

    /// True if there is no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Slots held (the memory the map uses, in values; the tree's entries counted as one
    /// slot each).
    pub fn capacity_in_slots(&self) -> usize {
        self.slots.len() + self.strays.len()
    }

    /// The value at `key`.
    #[inline]
    pub fn get(&self, key: K) -> Option<&V> {
        let index = key.index();
        match self.slots.get(index.wrapping_sub(self.base)) {
            Some(slot) => slot.as_ref(),
            None if index < self.base => self.strays.get(&index),
            None => None,
        }
    }

    /// The value at `key`, mutably.
    #[inline]
    pub fn get_mut(&mut self, key: K) -> Option<&mut V> {
        let index = key.index();
        if index < self.base {
            return self.strays.get_mut(&index);
        }
        self.slots.get_mut(index - self.base).and_then(Option::as_mut)
    }

    /// True if `key` has a value.
    #[inline]
    pub fn contains_key(&self, key: K) -> bool {
        self.get(key).is_some()
    }

    /// The slot of `key` (not below `base`), made if need be.
    fn slot(&mut self, index: usize) -> &mut Option<V> {
        let at = index - self.base;
        if at >= self.slots.len() {
            self.slots.resize_with(at + 1, || None);
        }
        &mut self.slots[at]
    }

    /// Sets `key` to `value`, returning the value it replaced.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        let index = key.index();
        if index < self.base {
            return self.strays.insert(index, value);
        }
        let grows = index - self.base >= self.slots.len();
        let old = self.slot(index).replace(value);
        if old.is_none() {
            self.in_slots += 1;
            if index - self.base < self.lead {
                self.behind_lead += 1;
            }
        }
        if grows {
            self.spill_if_sparse();
        }
        old
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: K) -> Option<V> {
        let index = key.index();
        if index < self.base {
            return self.strays.remove(&index);
        }
        let at = index - self.base;
        let old = self.slots.get_mut(at).and_then(Option::take);
        if old.is_some() {
            self.in_slots -= 1;
            if at < self.lead {
                self.behind_lead -= 1;
            } else if at == self.lead {
                self.forget_front();
            }
        }
        old
    }

    /// Counts the empty slots at the front, and drops them once they are many, at least
    /// half of the slots and all but a few empty (the few move to the tree).
    fn forget_front(&mut self) {
        while self.slots.get(self.lead).is_some_and(Option::is_none) {
            self.lead += 1;
        }
        let mostly_empty = self.behind_lead * SPARSE_RATIO <= self.lead;
        if self.lead >= COMPACT_MIN && self.lead * 2 >= self.slots.len() && mostly_empty {
            self.drop_front(self.lead);
        }
    }

    /// Moves the entries of the first `count` slots to the tree and drops those slots.
    fn drop_front(&mut self, count: usize) {
        let base = self.base;
        for (i, slot) in self.slots.drain(..count).enumerate() {
            if let Some(v) = slot {
                self.strays.insert(base + i, v);
                self.in_slots -= 1;
            }
        }
        self.base += count;
        self.lead = 0;
        self.behind_lead = 0;
        self.forget_front_run();
    }

    /// Counts the empty slots now at the front (without dropping them).
    fn forget_front_run(&mut self) {
        while self.slots.get(self.lead).is_some_and(Option::is_none) {
            self.lead += 1;
        }
    }

    /// When the slots are many and mostly empty (entries a long history never removed,
    /// far below the ids in use), moves their front half to the tree.
    fn spill_if_sparse(&mut self) {
        if self.slots.len() >= 2 * COMPACT_MIN && self.in_slots * SPARSE_RATIO < self.slots.len() {
            self.drop_front(self.slots.len() / 2);
        }
    }

    /// The value at `key`, inserting `make()` first if there is none.
    pub fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        let index = key.index();
        if index < self.base {
            return self.strays.entry(index).or_insert_with(make);
        }
        if self.slots.get(index - self.base).is_none_or(Option::is_none) {
            self.insert(key, make());
        }
        let at = index.checked_sub(self.base);
        match at {
            Some(at) => self.slots[at].as_mut().expect("just inserted"),
            // The insert spilled the key's slot to the tree.
            None => self.strays.get_mut(&index).expect("just inserted"),
        }
    }

    /// Entries in ascending key order.
    pub fn iter(&self) -> impl Iterator<Item = (K, &V)> + '_ {
        let base = self.base;
        let strays = self.strays.iter().map(|(&i, v)| (K::from_index(i), v));
        strays.chain(
            self.slots.iter().enumerate().filter_map(move |(i, v)| v.as_ref().map(|v| (K::from_index(base + i), v))),
        )
    }

    /// Entries in ascending key order, values mutable.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (K, &mut V)> + '_ {
        let base = self.base;
        let strays = self.strays.iter_mut().map(|(&i, v)| (K::from_index(i), v));
        strays.chain(
            self.slots
                .iter_mut()
                .enumerate()
                .filter_map(move |(i, v)| v.as_mut().map(|v| (K::from_index(base + i), v))),
        )
    }

    /// Keys in ascending order.
    pub fn keys(&self) -> impl Iterator<Item = K> + '_ {
        self.iter().map(|(k, _)| k)
    }

    /// Values in ascending key order.
    pub fn values(&self) -> impl Iterator<Item = &V> + '_ {
        self.strays.values().chain(self.slots.iter().filter_map(Option::as_ref))
    }

    /// Values in ascending key order, mutable.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> + '_ {
        self.strays.values_mut().chain(self.slots.iter_mut().filter_map(Option::as_mut))
    }

    /// Keeps only the entries for which `keep` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(K, &mut V) -> bool) {
        self.strays.retain(|&i, v| keep(K::from_index(i), v));
        let base = self.base;
        for (i, slot) in self.slots.iter_mut().enumerate() {
            if let Some(v) = slot {
                if !keep(K::from_index(base + i), v) {
                    *slot = None;
                    self.in_slots -= 1;
                }
            }
        }
        self.lead = 0;
        self.behind_lead = 0;
        self.forget_front();
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        self.slots.clear();
        self.strays.clear();
        self.base = 0;
        self.lead = 0;
        self.behind_lead = 0;
        self.in_slots = 0;
    }
}

/// A set of dense ids, iterated in ascending order.
pub struct DenseSet<K> {
    words: Vec<u64>,
    len: usize,
    key: PhantomData<K>,
}

impl<K> Default for DenseSet<K> {
    fn default() -> Self {
        DenseSet { words: Vec::new(), len: 0, key: PhantomData }
    }
}

impl<K> Clone for DenseSet<K> {
    fn clone(&self) -> Self {
        DenseSet { words: self.words.clone(), len: self.len, key: PhantomData }
    }
}

impl<K: DenseKey + fmt::Debug> fmt::Debug for DenseSet<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl<K: DenseKey> DenseSet<K> {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if there is no member.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True if `key` is a member.
    #[inline]
    pub fn contains(&self, key: K) -> bool {
        let i = key.index();
        self.words.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// Adds `key`; true if it was not a member.
    pub fn insert(&mut self, key: K) -> bool {
        let i = key.index();
        if i / 64 >= self.words.len() {
            self.words.resize(i / 64 + 1, 0);
        }
        let word = &mut self.words[i / 64];
        let fresh = *word & (1 << (i % 64)) == 0;
        *word |= 1 << (i % 64);
        self.len += usize::from(fresh);
        fresh
    }

    /// Removes `key`; true if it was a member.
    pub fn remove(&mut self, key: K) -> bool {
        let i = key.index();
        let Some(word) = self.words.get_mut(i / 64) else { return false };
        let present = *word & (1 << (i % 64)) != 0;
        *word &= !(1 << (i % 64));
        self.len -= usize::from(present);
        present
    }

    /// Members in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = K> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let b = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    K::from_index(w * 64 + b)
                })
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use proptest::prelude::*;

    use super::*;

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u32, u8),
        Remove(u32),
        Upsert(u32),
        Retain(u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u32..200, any::<u8>()).prop_map(|(k, v)| Op::Insert(k, v)),
            (0u32..200).prop_map(Op::Remove),
            (0u32..200).prop_map(Op::Upsert),
            any::<u8>().prop_map(Op::Retain),
        ]
    }

    #[test]
    fn a_map_whose_lowest_ids_are_forgotten_holds_slots_for_the_ids_in_use_only() {
        let mut m: DenseMap<u32, u64> = DenseMap::new();
        for id in 0..1_000_000u32 {
            m.insert(id, u64::from(id));
            if id >= 100 {
                m.remove(id - 100);
            }
        }
        assert_eq!(m.len(), 100);
        assert!(m.capacity_in_slots() < 3 * COMPACT_MIN, "{} slots", m.capacity_in_slots());
        assert_eq!(m.keys().next(), Some(999_900));
        // A forgotten id re-appearing is a fresh entry, below the others.
        assert_eq!(m.get(5), None);
        m.insert(5, 5);
        assert_eq!(m.keys().next(), Some(5));
        assert_eq!(m.get(999_999), Some(&999_999));
    }

    /// The entries behind the scanned front are the ones counted there.
    fn front_is_counted<V>(m: &DenseMap<u32, V>) -> bool {
        let lead = m.lead.min(m.slots.len());
        m.slots[..lead].iter().filter(|s| s.is_some()).count() == m.behind_lead
    }

    #[test]
    fn a_low_id_written_behind_the_scanned_front_does_not_pull_the_scan_back() {
        let mut m: DenseMap<u32, u32> = DenseMap::new();
        for id in 0..3_000u32 {
            m.insert(id, id);
        }
        for id in 0..2_999u32 {
            m.remove(id);
        }
        assert_eq!(m.lead, 2_999, "the empty run before the last entry is scanned once");
        for _ in 0..3 {
            m.insert(3, 3);
            assert_eq!((m.lead, m.behind_lead), (2_999, 1), "counted, not rescanned");
            assert_eq!(m.keys().collect::<Vec<_>>(), [3, 2_999]);
            m.remove(3);
            assert_eq!((m.lead, m.behind_lead), (2_999, 0));
        }
        assert!(front_is_counted(&m));
    }

    #[test]
    fn entries_never_removed_do_not_keep_a_slot_for_every_id_after_them() {
        let mut m: DenseMap<u32, u64> = DenseMap::new();
        for id in 0..1_000_000u32 {
            m.insert(id, u64::from(id));
            // One id in a thousand is never removed: a lane left with work, say.
            if id >= 100 && (id - 100) % 1_000 != 0 {
                m.remove(id - 100);
            }
        }
        assert_eq!(m.len(), 100 + 1_000);
        assert!(m.capacity_in_slots() < 2 * COMPACT_MIN + 1_100, "{} slots", m.capacity_in_slots());
        assert_eq!(m.keys().take(3).collect::<Vec<_>>(), [0, 1_000, 2_000]);
        assert_eq!(m.get(500_000), Some(&500_000));
        assert_eq!(m.get(500_001), None);
        assert_eq!(m.keys().last(), Some(999_999));
    }

    proptest! {
        /// The dense map answers exactly as a BTreeMap would, iteration order included.
        #[test]
        fn dense_map_behaves_like_a_btree_map(ops in proptest::collection::vec(op(), 0..300)) {
            let mut dense: DenseMap<u32, u8> = DenseMap::new();
            let mut tree: BTreeMap<u32, u8> = BTreeMap::new();
            for op in ops {
                match op {
                    Op::Insert(k, v) => prop_assert_eq!(dense.insert(k, v), tree.insert(k, v)),
                    Op::Remove(k) => prop_assert_eq!(dense.remove(k), tree.remove(&k)),
                    Op::Upsert(k) => {
                        let d = dense.get_or_insert_with(k, || 7);
                        *d = d.wrapping_add(1);
                        let t = tree.entry(k).or_insert(7);
                        *t = t.wrapping_add(1);
                    }
                    Op::Retain(t) => {
                        dense.retain(|_, v| *v > t);
                        tree.retain(|_, v| *v > t);
                    }
                }
                prop_assert_eq!(dense.len(), tree.len());
                prop_assert!(front_is_counted(&dense));
                let a: Vec<(u32, u8)> = dense.iter().map(|(k, v)| (k, *v)).collect();
                let b: Vec<(u32, u8)> = tree.iter().map(|(k, v)| (*k, *v)).collect();
                prop_assert_eq!(a, b);
            }
        }

        /// The same with keys that keep growing and the lowest ones forgotten, so the slots
        /// shift (a small threshold is not needed: the keys span several thresholds).
        #[test]
        fn dense_map_forgets_its_front_and_still_behaves_like_a_btree_map(
            ops in proptest::collection::vec((0u32..3, 0u32..64), 0..400)
        ) {
            let mut dense: DenseMap<u32, u32> = DenseMap::new();
            let mut tree: BTreeMap<u32, u32> = BTreeMap::new();
            let mut next = 0u32;
            for (what, back) in ops {
                match what {
                    // A fresh id, far past the last, as a long history's ids grow.
                    0 => {
                        next += 100;
                        prop_assert_eq!(dense.insert(next, next), tree.insert(next, next));
                    }
                    // The lowest id forgotten.
                    1 => {
                        let low = tree.keys().next().copied();
                        if let Some(k) = low {
                            prop_assert_eq!(dense.remove(k), tree.remove(&k));
                        }
                    }
                    // A forgotten (or never seen) id re-appearing below the others.
                    _ => {
                        let k = next.saturating_sub(back * 100 + 50);
                        let d = dense.get_or_insert_with(k, || 1);
                        *d += 1;
                        *tree.entry(k).or_insert(1) += 1;
                    }
                }
                prop_assert_eq!(dense.len(), tree.len());
                prop_assert!(front_is_counted(&dense));
                let a: Vec<(u32, u32)> = dense.iter().map(|(k, v)| (k, *v)).collect();
                let b: Vec<(u32, u32)> = tree.iter().map(|(k, v)| (*k, *v)).collect();
                prop_assert_eq!(a, b);
            }
        }

        /// The dense set answers exactly as a BTreeSet would, iteration order included.
        #[test]
        fn dense_set_behaves_like_a_btree_set(ops in proptest::collection::vec((any::<bool>(), 0u32..300), 0..300)) {
            let mut dense: DenseSet<u32> = DenseSet::new();
            let mut tree: BTreeSet<u32> = BTreeSet::new();
            for (add, k) in ops {
                if add {
                    prop_assert_eq!(dense.insert(k), tree.insert(k));
                } else {
                    prop_assert_eq!(dense.remove(k), tree.remove(&k));
                }
                prop_assert_eq!(dense.contains(k), tree.contains(&k));
                prop_assert_eq!(dense.len(), tree.len());
                prop_assert_eq!(dense.iter().collect::<Vec<_>>(), tree.iter().copied().collect::<Vec<_>>());
            }
        }
    }
}

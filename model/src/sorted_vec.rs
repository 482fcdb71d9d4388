//! A map kept as a vector sorted by key, for the few entries a checker holds in flight.
//!
//! Why: a `BTreeMap` that is empty most of the time allocates its root when an entry comes
//! and frees it when the last goes, so a checker whose map holds an entry or two between
//! a witness and its answer (a refused delivery until its requeue) paid an allocation and
//! a free per entry. The vector keeps its room; iteration is in ascending key order, as
//! the tree's, so whatever a checker finds first (and names in a message) is the same.
//! Only for maps that stay small: inserting and removing shift the entries after the key.

/// A map from `K` to `V`, iterated in ascending key order.
#[derive(Clone, Debug)]
pub struct SortedVecMap<K, V> {
    /// Invariant: strictly ascending keys.
    entries: Vec<(K, V)>,
}

impl<K, V> Default for SortedVecMap<K, V> {
    fn default() -> Self {
        SortedVecMap { entries: Vec::new() }
    }
}

impl<K: Ord, V> SortedVecMap<K, V> {
    /// Where `key` is, or would be inserted.
    fn at(&self, key: &K) -> Result<usize, usize> {
        self.entries.binary_search_by(|(k, _)| k.cmp(key))
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True if there is no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Sets `key` to `value`, returning the value it replaced.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.at(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(i) => {
                self.entries.insert(i, (key, value));
                None
            }
        }
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &K) -> Option<V> {
        if self.entries.is_empty() {
            return None;
        }
        self.at(key).ok().map(|i| self.entries.remove(i).1)
    }

    /// Keeps the entries `keep` answers true for.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        self.entries.retain_mut(|(k, v)| keep(k, v));
    }

    /// The entries in ascending key order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// The values in ascending key order.
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.entries.iter().map(|(_, v)| v)
    }

    /// The values in ascending key order, mutably.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.entries.iter_mut().map(|(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// The map answers, and iterates, exactly as a BTreeMap would.
        #[test]
        fn a_sorted_vec_map_behaves_like_a_btree_map(ops in proptest::collection::vec((0u8..3, 0u32..40, any::<u8>()), 0..300)) {
            let mut map = SortedVecMap::default();
            let mut tree = BTreeMap::new();
            for (what, key, value) in ops {
                match what {
                    0 => prop_assert_eq!(map.insert(key, value), tree.insert(key, value)),
                    1 => prop_assert_eq!(map.remove(&key), tree.remove(&key)),
                    _ => {
                        map.retain(|k, v| (k + u32::from(*v)) % 3 != 0);
                        tree.retain(|k, v| (k + u32::from(*v)) % 3 != 0);
                    }
                }
                prop_assert_eq!(map.len(), tree.len());
                prop_assert!(map.iter().eq(tree.iter()));
            }
        }
    }
}

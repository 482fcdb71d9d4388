//! A map from a dense id to a record, in pages of a fixed number of ids; a page whose ids
//! went cold is frozen: kept as the few distinct records it holds and a byte per id.
//!
//! Why: a checker of a long history keeps a record per instance for as long as the history
//! runs (a zombie may act under an old epoch of an instance finished long before), and
//! finished instances leave records alike — the row released, the last version, the last
//! epoch, a handful of distinct values among a thousand ids. One growing vector of them
//! ([`crate::dense::DenseMap`]) cost about 80 bytes an id at the peak: its doubling leaves up
//! to half its slots spare, and every block a doubling freed still counts when the peak is
//! taken. Here a page holds [`PAGE`] ids at most (its slots grown in powers of two as far as
//! the highest id written, so a small world's page is small) and never shrinks; once ids [`COLD_PAGES`] pages past
//! it have been written, a page is frozen if it holds at most [`PALETTE_MAX`] distinct
//! records, and costs about a byte an id. Nothing is lost: a frozen record reads as it was
//! written, and writing one again thaws its page (or, if the record is one the page already
//! holds, just points the id at it). Records that differ id by id (a grant's time) stay in
//! plain pages: their size, and a bit, an id.
//!
//! Ids are dense and from a counter, as `DenseMap`'s: the page table has a word or two for
//! every page up to the highest id written.

use std::fmt;
use std::marker::PhantomData;

use crate::dense::DenseKey;

/// Ids per page, as a power of two.
const PAGE_BITS: usize = 10;

/// Ids per page.
pub const PAGE: usize = 1 << PAGE_BITS;

/// Distinct records a frozen page may hold (code 0 is "no record").
pub const PALETTE_MAX: usize = u8::MAX as usize;

/// Slots a plain page's values start with.
const SLOTS_MIN: usize = 8;

/// A page is frozen once an id this many pages past it has been written.
pub const COLD_PAGES: usize = 2;

/// A map from a dense id to `V`, iterated in ascending id order.
pub struct PagedMap<K, V> {
    /// Page `p` holds ids `p * PAGE ..< (p + 1) * PAGE`.
    pages: Vec<Page<V>>,
    /// Records held. Invariant: the sum of the pages' counts.
    len: usize,
    /// Plain pages written since they were last tried for freezing.
    warm: Vec<usize>,
    /// The highest page written.
    newest: usize,
    key: PhantomData<K>,
}

enum Page<V> {
    Empty,
    Plain(Box<Plain<V>>),
    Frozen(Box<Frozen<V>>),
}

/// A page with a slot per id.
struct Plain<V> {
    /// Bit `i % 64` of word `i / 64`: id `i` of the page has a record.
    present: [u64; PAGE / 64],
    /// Records by id (the default where absent), as far as the highest id written so far
    /// (grown in powers of two up to [`PAGE`]): a small world's page holds its few ids,
    /// not a thousand zeroed slots. Invariant: every present id is below its length.
    values: Vec<V>,
    /// Records held.
    count: usize,
    /// In the map's `warm` list: to be tried for freezing.
    warm: bool,
}

/// A page of at most [`PALETTE_MAX`] distinct records.
struct Frozen<V> {
    /// The distinct records (some perhaps no longer pointed at).
    palette: Vec<V>,
    /// Per id: 0 for no record, else 1 + the record's place in `palette`.
    codes: Box<[u8; PAGE]>,
    /// Records held.
    count: usize,
}

impl<V: Clone + Default> Plain<V> {
    fn new() -> Plain<V> {
        Plain { present: [0; PAGE / 64], values: Vec::new(), count: 0, warm: false }
    }

    /// The slot of `at`, the values grown to hold it if need be.
    fn slot(&mut self, at: usize) -> &mut V {
        if at >= self.values.len() {
            let len = (at + 1).next_power_of_two().clamp(SLOTS_MIN, PAGE);
            self.values.reserve_exact(len - self.values.len());
            self.values.resize(len, V::default());
        }
        &mut self.values[at]
    }
}

impl<V> Plain<V> {
    fn has(&self, at: usize) -> bool {
        self.present[at / 64] & (1 << (at % 64)) != 0
    }

    /// Marks `at` present; true if it was not.
    fn mark(&mut self, at: usize) -> bool {
        let fresh = !self.has(at);
        self.present[at / 64] |= 1 << (at % 64);
        self.count += usize::from(fresh);
        fresh
    }
}

impl<V: Default> Plain<V> {
    fn unmark(&mut self, at: usize) -> Option<V> {
        if !self.has(at) {
            return None;
        }
        self.present[at / 64] &= !(1 << (at % 64));
        self.count -= 1;
        Some(std::mem::take(&mut self.values[at]))
    }
}

impl<V: Clone + PartialEq> Frozen<V> {
    /// The page's records, if it holds few distinct ones.
    fn of(plain: &Plain<V>) -> Option<Frozen<V>> {
        let mut frozen = Frozen { palette: Vec::new(), codes: Box::new([0; PAGE]), count: plain.count };
        for at in (0..PAGE).filter(|&at| plain.has(at)) {
            frozen.codes[at] = frozen.code_of(&plain.values[at])?;
        }
        Some(frozen)
    }

    /// The code of `value`, added to the palette if there is room.
    fn code_of(&mut self, value: &V) -> Option<u8> {
        let place = match self.palette.iter().position(|v| v == value) {
            Some(place) => place,
            None if self.palette.len() < PALETTE_MAX => {
                self.palette.push(value.clone());
                self.palette.len() - 1
            }
            None => return None,
        };
        Some(u8::try_from(place + 1).expect("at most PALETTE_MAX places"))
    }

    fn get(&self, at: usize) -> Option<&V> {
        match self.codes[at] {
            0 => None,
            code => Some(&self.palette[usize::from(code) - 1]),
        }
    }
}

impl<V: Clone + Default + PartialEq> Frozen<V> {
    fn thaw(&self) -> Plain<V> {
        let mut plain = Plain::new();
        for at in 0..PAGE {
            if let Some(v) = self.get(at) {
                *plain.slot(at) = v.clone();
                plain.mark(at);
            }
        }
        plain
    }
}

impl<K, V> Default for PagedMap<K, V> {
    fn default() -> Self {
        PagedMap { pages: Vec::new(), len: 0, warm: Vec::new(), newest: 0, key: PhantomData }
    }
}

impl<K: DenseKey + fmt::Debug, V: fmt::Debug + Clone + Default + PartialEq> fmt::Debug for PagedMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

fn split(index: usize) -> (usize, usize) {
    (index >> PAGE_BITS, index & (PAGE - 1))
}

impl<K: DenseKey, V: Clone + Default + PartialEq> PagedMap<K, V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if there is no record.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Pages held plain and frozen (the memory the map uses: a plain page holds up to
    /// [`PAGE`] records, a frozen one [`PAGE`] bytes and its palette).
    pub fn pages_held(&self) -> (usize, usize) {
        let plain = self.pages.iter().filter(|p| matches!(p, Page::Plain(_))).count();
        let frozen = self.pages.iter().filter(|p| matches!(p, Page::Frozen(_))).count();
        (plain, frozen)
    }

    /// The record of `key`.
    #[inline]
    pub fn get(&self, key: K) -> Option<&V> {
        let (page, at) = split(key.index());
        match self.pages.get(page)? {
            Page::Empty => None,
            Page::Plain(p) => p.has(at).then(|| &p.values[at]),
            Page::Frozen(f) => f.get(at),
        }
    }

    /// True if `key` has a record.
    #[inline]
    pub fn contains_key(&self, key: K) -> bool {
        self.get(key).is_some()
    }

    /// The record of `key`, mutably (its page thawed if it was frozen).
    pub fn get_mut(&mut self, key: K) -> Option<&mut V> {
        let (page, at) = split(key.index());
        if self.get(key).is_none() {
            return None;
        }
        let plain = self.plain(page);
        Some(&mut plain.values[at])
    }

    /// Sets `key` to `value`, returning the record it replaced.
    #[inline]
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        let (page, at) = split(key.index());
        match self.pages.get_mut(page) {
            // Already plain, on the warm list and with a slot for `at`: `advance` and `plain`
            // would change nothing, nor would the slot grow. The common case, inline.
            Some(Page::Plain(plain)) if plain.warm && at < plain.values.len() => {
                let old = std::mem::replace(&mut plain.values[at], value);
                let fresh = plain.mark(at);
                self.len += usize::from(fresh);
                (!fresh).then_some(old)
            }
            _ => self.insert_cold(page, at, value),
        }
    }

    /// [`Self::insert`] at `at` of `page`, in any page.
    fn insert_cold(&mut self, page: usize, at: usize, value: V) -> Option<V> {
        if let Some(plain) = self.warm_plain(page) {
            // Already plain and on the warm list: `advance` and `plain` would change nothing.
            let old = std::mem::replace(plain.slot(at), value);
            let fresh = plain.mark(at);
            self.len += usize::from(fresh);
            return (!fresh).then_some(old);
        }
        if let Some(Page::Frozen(f)) = self.pages.get_mut(page) {
            if let Some(code) = f.code_of(&value) {
                let old = f.get(at).cloned();
                f.codes[at] = code;
                f.count += usize::from(old.is_none());
                self.len += usize::from(old.is_none());
                return old;
            }
        }
        self.advance(page);
        let plain = self.plain(page);
        let old = std::mem::replace(plain.slot(at), value);
        let fresh = plain.mark(at);
        self.len += usize::from(fresh);
        (!fresh).then_some(old)
    }

    /// The record of `key`, inserting `make()` first if there is none.
    #[inline]
    pub fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        let (page, at) = split(key.index());
        if self.warm_plain(page).is_some_and(|p| p.has(at)) {
            // The common case, a record written before on a warm page: one look, inline.
            let Some(Page::Plain(p)) = self.pages.get_mut(page) else { unreachable!("warm plain above") };
            return &mut p.values[at];
        }
        self.insert_with_cold(page, at, make)
    }

    /// [`Self::get_or_insert_with`] at `at` of `page`, in any page.
    fn insert_with_cold(&mut self, page: usize, at: usize, make: impl FnOnce() -> V) -> &mut V {
        self.advance(page);
        let plain = self.plain(page);
        if !plain.has(at) {
            *plain.slot(at) = make();
            plain.mark(at);
            self.len += 1;
        }
        &mut self.plain(page).values[at]
    }

    /// Removes `key`, returning its record.
    pub fn remove(&mut self, key: K) -> Option<V> {
        let (page, at) = split(key.index());
        let slot = self.pages.get_mut(page)?;
        let (old, left) = match slot {
            Page::Empty => return None,
            Page::Plain(p) => (p.unmark(at), p.count),
            Page::Frozen(f) => {
                let old = f.get(at).cloned();
                f.codes[at] = 0;
                f.count -= usize::from(old.is_some());
                (old, f.count)
            }
        };
        if left == 0 {
            *slot = Page::Empty;
        }
        self.len -= usize::from(old.is_some());
        old
    }

    /// Records in ascending key order.
    pub fn iter(&self) -> impl Iterator<Item = (K, &V)> + '_ {
        self.pages.iter().enumerate().flat_map(|(page, p)| {
            (0..PAGE).filter_map(move |at| {
                let v = match p {
                    Page::Empty => None,
                    Page::Plain(p) => p.has(at).then(|| &p.values[at]),
                    Page::Frozen(f) => f.get(at),
                }?;
                Some((K::from_index((page << PAGE_BITS) | at), v))
            })
        })
    }

    /// Page `page` if it is plain and on the warm list already: written since it was last
    /// tried for freezing, so no higher page is due to be tried either ([`Self::advance`]
    /// saw it written, and `plain` has nothing to do).
    #[inline]
    fn warm_plain(&mut self, page: usize) -> Option<&mut Plain<V>> {
        match self.pages.get_mut(page) {
            Some(Page::Plain(p)) if p.warm => Some(p),
            _ => None,
        }
    }

    /// Page `page` as a plain page (made, or thawed, if need be), on the warm list.
    fn plain(&mut self, page: usize) -> &mut Plain<V> {
        if self.pages.len() <= page {
            self.pages.resize_with(page + 1, || Page::Empty);
        }
        let slot = &mut self.pages[page];
        let thawed = match slot {
            Page::Plain(_) => None,
            Page::Empty => Some(Plain::new()),
            Page::Frozen(f) => Some(f.thaw()),
        };
        if let Some(plain) = thawed {
            *slot = Page::Plain(Box::new(plain));
        }
        let Page::Plain(p) = &mut self.pages[page] else { unreachable!("made plain above") };
        // Written (or about to be): to be tried again once cold.
        if !p.warm {
            p.warm = true;
            self.warm.push(page);
        }
        p
    }

    /// A record of `page` is about to be written: a new highest page freezes the warm pages
    /// it leaves [`COLD_PAGES`] behind.
    fn advance(&mut self, page: usize) {
        if page > self.newest {
            self.newest = page;
            self.freeze_cold();
        }
    }

    /// Tries every warm page at least [`COLD_PAGES`] below the newest: frozen if it holds few
    /// distinct records, dropped if it holds none, else left plain until written again.
    fn freeze_cold(&mut self) {
        let line = self.newest.saturating_sub(COLD_PAGES - 1);
        let (cold, warm): (Vec<usize>, Vec<usize>) = self.warm.iter().partition(|&&p| p < line);
        self.warm = warm;
        for page in cold {
            let slot = &mut self.pages[page];
            let Page::Plain(p) = slot else { continue };
            p.warm = false;
            if p.count == 0 {
                *slot = Page::Empty;
            } else if let Some(frozen) = Frozen::of(p) {
                *slot = Page::Frozen(Box::new(frozen));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    #[test]
    fn finished_records_alike_cost_about_a_byte_an_id() {
        let mut map: PagedMap<u32, (u64, Option<u64>)> = PagedMap::new();
        for id in 0..100_000u32 {
            // Live: a distinct record; finished (a few hundred ids later): one of three.
            map.insert(id, (u64::from(id), Some(u64::from(id))));
            if let Some(done) = id.checked_sub(300) {
                map.insert(done, (u64::from(done % 3), None));
            }
        }
        let (plain, frozen) = map.pages_held();
        assert!(plain <= COLD_PAGES + 1, "{plain} plain pages");
        assert_eq!(plain + frozen, 100_000 / PAGE + 1);
        assert_eq!(map.get(5), Some(&(2, None)));
        assert_eq!(map.get(99_999), Some(&(99_999, Some(99_999))));
        assert_eq!(map.len(), 100_000);
    }

    #[test]
    fn a_late_write_to_a_frozen_page_reads_back_and_the_page_freezes_again() {
        let mut map: PagedMap<u32, u64> = PagedMap::new();
        for id in 0..10 * PAGE as u32 {
            map.insert(id, 1);
        }
        assert!(matches!(map.pages[0], Page::Frozen(_)));
        // A value the page does not hold yet joins its palette.
        map.insert(3, 7);
        *map.get_mut(4).unwrap() += 1;
        assert!(matches!(map.pages[0], Page::Plain(_)), "a mutable borrow thaws the page");
        assert_eq!((map.get(3), map.get(4), map.get(5)), (Some(&7), Some(&2), Some(&1)));
        map.insert(20 * PAGE as u32, 1);
        assert!(matches!(map.pages[0], Page::Frozen(_)), "frozen again once cold");
        assert_eq!((map.get(3), map.get(4), map.get(5)), (Some(&7), Some(&2), Some(&1)));
    }

    #[test]
    fn a_small_worlds_page_holds_slots_for_its_few_ids_only() {
        // A simulation's world has a handful of instances: zeroing a thousand slots for each
        // of a dozen checkers' maps, every seed, was 5% of a smoke sweep's instructions.
        let mut map: PagedMap<u32, (u64, u64)> = PagedMap::new();
        for id in 0..6 {
            map.insert(id, (1, 2));
        }
        let Page::Plain(p) = &map.pages[0] else { panic!("a written page is plain") };
        assert_eq!(p.values.len(), SLOTS_MIN);
        *map.get_or_insert_with(300, || (3, 4)) = (5, 6);
        let Page::Plain(p) = &map.pages[0] else { panic!("a written page is plain") };
        assert_eq!(p.values.len(), 512, "grown in powers of two as far as the highest id");
        assert_eq!((map.get(5), map.get(300), map.get(299)), (Some(&(1, 2)), Some(&(5, 6)), None));
    }

    #[test]
    fn a_page_of_distinct_records_stays_plain() {
        let mut map: PagedMap<u32, u64> = PagedMap::new();
        for id in 0..10 * PAGE as u32 {
            map.insert(id, u64::from(id) * 1_000);
        }
        assert_eq!(map.pages_held(), (10, 0));
        assert_eq!(map.get(1_234), Some(&1_234_000));
    }

    proptest! {
        /// The paged map answers exactly as a BTreeMap would, iteration order included,
        /// whatever is frozen and thawed on the way.
        #[test]
        fn paged_map_behaves_like_a_btree_map(ops in proptest::collection::vec((0u8..4, 0u32..6_000, 0u64..4), 0..600)) {
            let mut paged: PagedMap<u32, u64> = PagedMap::new();
            let mut tree: BTreeMap<u32, u64> = BTreeMap::new();
            for (what, k, v) in ops {
                match what {
                    0 => prop_assert_eq!(paged.insert(k, v), tree.insert(k, v)),
                    1 => prop_assert_eq!(paged.remove(k), tree.remove(&k)),
                    2 => {
                        *paged.get_or_insert_with(k, || v) += 1;
                        *tree.entry(k).or_insert(v) += 1;
                    }
                    _ => {
                        if let Some(x) = paged.get_mut(k) {
                            *x += v;
                        }
                        if let Some(x) = tree.get_mut(&k) {
                            *x += v;
                        }
                    }
                }
                prop_assert_eq!(paged.get(k), tree.get(&k));
                prop_assert_eq!(paged.len(), tree.len());
            }
            let a: Vec<(u32, u64)> = paged.iter().map(|(k, v)| (k, *v)).collect();
            let b: Vec<(u32, u64)> = tree.iter().map(|(k, v)| (*k, *v)).collect();
            prop_assert_eq!(a, b);
        }
    }
}

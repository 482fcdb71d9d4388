//! The executor's ready list: tasks that can be polled, in the order they became ready.
//!
//! The order is part of the run's meaning — the strategy picks an index into it, and 0,
//! the simplest choice, is the oldest task — so a removal must keep the others in order
//! (no `swap_remove`). Most picks take the front (a forced choice, FIFO under a zeroed
//! tape, the highest PCT priority usually being old), so the list is a `Vec` read from a
//! moving head: taking the front is an index bump, a removal elsewhere shifts the tail,
//! and the strategy always sees one contiguous slice, with none of the wrap-around
//! bookkeeping of a ring.
//!
//! A random pick removes from a random place, so the shift has a random length. Behind
//! the live entries the buffer keeps [`PAD`] spare ones, so a short tail (the usual case)
//! moves as one fixed-size block: straight-line vector moves, no call to `memmove` and no
//! loop whose exit the CPU would mispredict.

use crate::ids::TaskId;

/// Spare entries kept behind the live ones, so that a tail this short or shorter shifts
/// as one fixed-size copy.
const PAD: usize = 16;

/// Compact once this many dead entries sit before the head, and they outnumber the live
/// ones: memory stays bounded even when the list never drains (tasks that only yield).
const DEAD_PREFIX_MAX: usize = 256;

/// What the spare entries hold; never read as a task.
const FILLER: TaskId = TaskId::FILLER;

/// Tasks ready to poll, oldest first.
pub(crate) struct ReadyList {
    /// Invariant: the live entries are `ids[head..end]`, oldest first, and
    /// `ids.len() == end + PAD` (the spare entries behind them hold anything).
    ids: Vec<TaskId>,
    head: usize,
    end: usize,
}

impl Default for ReadyList {
    fn default() -> Self {
        ReadyList::with_capacity(0)
    }
}

impl ReadyList {
    /// An empty list with room for `capacity` tasks.
    pub(crate) fn with_capacity(capacity: usize) -> ReadyList {
        let mut ids = Vec::with_capacity(capacity + PAD);
        ids.resize(PAD, FILLER);
        ReadyList { ids, head: 0, end: 0 }
    }

    /// Number of ready tasks.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.end - self.head
    }

    /// True if no task is ready.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.head == self.end
    }

    /// The ready tasks, oldest first: what a strategy picks an index into.
    #[inline]
    pub(crate) fn as_slice(&self) -> &[TaskId] {
        &self.ids[self.head..self.end]
    }

    /// Appends a task that just became ready.
    #[inline]
    pub(crate) fn push_back(&mut self, id: TaskId) {
        self.ids.push(FILLER);
        self.ids[self.end] = id;
        self.end += 1;
    }

    /// Appends tasks in the order given.
    pub(crate) fn extend(&mut self, ids: impl IntoIterator<Item = TaskId>) {
        for id in ids {
            self.push_back(id);
        }
    }

    /// Removes and returns the task at `index` (0 = oldest), keeping the others in order.
    #[inline]
    pub(crate) fn remove(&mut self, index: usize) -> TaskId {
        let len = self.len();
        assert!(index < len, "ready index {index} out of {len}");
        let at = self.head + index;
        let id = self.ids[at];
        if index == 0 {
            self.head += 1;
        } else {
            let tail = self.end - at - 1;
            if tail <= PAD {
                // Reads at most `ids[at + PAD]`, which exists: `at < end`.
                self.ids.copy_within(at + 1..at + 1 + PAD, at);
            } else {
                self.ids.copy_within(at + 1..self.end, at);
            }
            self.end -= 1;
            self.ids.pop();
        }
        if self.head == self.end {
            self.clear();
        } else if self.head >= DEAD_PREFIX_MAX && self.head * 2 >= self.end {
            self.ids.drain(..self.head);
            self.end -= self.head;
            self.head = 0;
        }
        id
    }

    /// Keeps only the tasks for which `keep` is true, in order.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&TaskId) -> bool) {
        let live: Vec<TaskId> = self.as_slice().iter().copied().filter(|id| keep(id)).collect();
        self.clear();
        self.extend(live);
    }

    /// Removes every task.
    pub(crate) fn clear(&mut self) {
        self.ids.truncate(PAD);
        self.head = 0;
        self.end = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &ReadyList) -> Vec<u32> {
        list.as_slice().iter().map(|id| id.slot()).collect()
    }

    #[test]
    fn removals_keep_the_rest_in_order() {
        let mut list = ReadyList::default();
        list.extend((0..8).map(TaskId::for_test));
        assert_eq!(list.remove(0).slot(), 0);
        assert_eq!(list.remove(1).slot(), 2);
        assert_eq!(list.remove(4).slot(), 6);
        assert_eq!(ids(&list), vec![1, 3, 4, 5, 7]);
        list.push_back(TaskId::for_test(9));
        assert_eq!(ids(&list), vec![1, 3, 4, 5, 7, 9]);
        list.retain(|id| id.slot() % 2 == 1);
        assert_eq!(ids(&list), vec![1, 3, 5, 7, 9]);
        while !list.is_empty() {
            list.remove(list.len() - 1);
        }
        assert_eq!(list.len(), 0);
    }

    #[test]
    fn removals_with_long_and_short_tails_match_a_plain_vec() {
        let mut list = ReadyList::default();
        let mut reference: Vec<u32> = Vec::new();
        let mut x = 12345u64;
        for i in 0..5_000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            if reference.len() < 40 && (x >> 40) % 3 != 0 {
                list.push_back(TaskId::for_test(i));
                reference.push(i);
            } else if !reference.is_empty() {
                let index = (x >> 20) as usize % reference.len();
                assert_eq!(list.remove(index).slot(), reference.remove(index));
            }
            assert_eq!(ids(&list), reference);
        }
    }

    #[test]
    fn a_list_that_never_drains_stays_compact() {
        // `live` tasks yielding forever in turn: the front is taken, the back refilled.
        for live in [1, 10] {
            let mut list = ReadyList::default();
            list.extend((0..live).map(TaskId::for_test));
            for i in live..10_000 {
                list.push_back(TaskId::for_test(i));
                list.remove(0);
                let bound = 2 * DEAD_PREFIX_MAX + 2 * live as usize + PAD;
                assert!(list.ids.len() <= bound, "{live} live: the dead prefix grew to {}", list.ids.len());
            }
            assert_eq!(ids(&list), (10_000 - live..10_000).collect::<Vec<_>>());
        }
    }
}

//! The executor's ready list: tasks that can be polled, in the order they became ready.
//!
//! The order is part of the run's meaning — the strategy picks an index into it, and 0,
//! the simplest choice, is the oldest task — so a removal must keep the others in order
//! (no `swap_remove`). Most picks take the front (a forced choice, FIFO under a zeroed
//! tape, the highest PCT priority usually being old), so the list is a `Vec` read from a
//! moving head: taking the front is an index bump, a removal elsewhere shifts the tail,
//! and the strategy always sees one contiguous slice, with none of the wrap-around
//! bookkeeping of a ring.

use crate::executor::TaskId;

/// Compact once this many dead entries sit before the head, and they outnumber the live
/// ones: memory stays bounded even when the list never drains (tasks that only yield).
const DEAD_PREFIX_MAX: usize = 256;

/// Tasks ready to poll, oldest first.
#[derive(Default)]
pub(crate) struct ReadyList {
    /// Invariant: the live entries are `ids[head..]`, oldest first; `head <= ids.len()`.
    ids: Vec<TaskId>,
    head: usize,
}

impl ReadyList {
    /// An empty list with room for `capacity` tasks.
    pub(crate) fn with_capacity(capacity: usize) -> ReadyList {
        ReadyList { ids: Vec::with_capacity(capacity), head: 0 }
    }

    /// Number of ready tasks.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.ids.len() - self.head
    }

    /// True if no task is ready.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.head == self.ids.len()
    }

    /// The ready tasks, oldest first: what a strategy picks an index into.
    #[inline]
    pub(crate) fn as_slice(&self) -> &[TaskId] {
        &self.ids[self.head..]
    }

    /// Appends a task that just became ready.
    #[inline]
    pub(crate) fn push_back(&mut self, id: TaskId) {
        self.ids.push(id);
    }

    /// Appends tasks in the order given.
    pub(crate) fn extend(&mut self, ids: impl IntoIterator<Item = TaskId>) {
        self.ids.extend(ids);
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
            // Close the gap from behind. A random index would make a loop's exit, or a
            // choice of the shorter side, a coin-flip branch the CPU mispredicts half the
            // time; `memmove` on a short list is a few straight-line vector moves.
            self.ids.copy_within(at + 1.., at);
            self.ids.pop();
        }
        if self.head == self.ids.len() {
            self.ids.clear();
            self.head = 0;
        } else if self.head >= DEAD_PREFIX_MAX && self.head * 2 >= self.ids.len() {
            self.ids.drain(..self.head);
            self.head = 0;
        }
        id
    }

    /// Keeps only the tasks for which `keep` is true, in order.
    pub(crate) fn retain(&mut self, keep: impl FnMut(&TaskId) -> bool) {
        self.ids.drain(..self.head);
        self.head = 0;
        self.ids.retain(keep);
    }

    /// Removes every task.
    pub(crate) fn clear(&mut self) {
        self.ids.clear();
        self.head = 0;
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
    fn a_list_that_never_drains_stays_compact() {
        // One task yielding forever behind another: the front is taken, the back refilled.
        let mut list = ReadyList::default();
        list.push_back(TaskId::for_test(0));
        for i in 1..10_000 {
            list.push_back(TaskId::for_test(i));
            list.remove(0);
            assert!(list.ids.len() <= 2 * DEAD_PREFIX_MAX + 2, "dead prefix grew to {}", list.ids.len());
        }
        assert_eq!(ids(&list), vec![9_999]);
    }
}

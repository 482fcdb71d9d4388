//! A list per task, kept only while it holds something, for the checkers that follow the
//! grants a task holds (exits-release, live-leak).
//!
//! Why: a lane task holds one grant at a time, and a task's list is dropped with its last
//! entry (so memory follows the tasks holding something, not every task of a long
//! history). A tree of vectors allocated a vector for nearly every grant and freed it when
//! the grant left its row. Here an emptied vector is kept, cleared, for the next task to
//! start a list ([`SPARE_MAX`] of them at most, and only small ones): the entries, their
//! order and when a task is dropped are exactly as before.

use std::collections::BTreeMap;

/// Emptied vectors kept for reuse, at most.
const SPARE_MAX: usize = 8;

/// A vector is kept for reuse only if it holds room for this many entries or fewer.
const SPARE_ROOM_MAX: usize = 8;

/// Task → its entries (never empty), in the order they were pushed.
#[derive(Debug)]
pub struct TaskLists<T> {
    lists: BTreeMap<u64, Vec<T>>,
    /// Empty vectors of tasks dropped, for the next list.
    spare: Vec<Vec<T>>,
}

impl<T> Default for TaskLists<T> {
    fn default() -> Self {
        TaskLists { lists: BTreeMap::new(), spare: Vec::new() }
    }
}

impl<T> TaskLists<T> {
    /// `task`'s entries, if it has any.
    pub fn get_mut(&mut self, task: u64) -> Option<&mut Vec<T>> {
        self.lists.get_mut(&task)
    }

    /// Appends `entry` to `task`'s list, starting one if need be.
    pub fn push(&mut self, task: u64, entry: T) {
        let spare = &mut self.spare;
        self.lists.entry(task).or_insert_with(|| spare.pop().unwrap_or_default()).push(entry);
    }

    /// Drops `task`'s list, keeping its vector for reuse.
    pub fn remove(&mut self, task: u64) {
        if let Some(mut list) = self.lists.remove(&task) {
            if self.spare.len() < SPARE_MAX && list.capacity() <= SPARE_ROOM_MAX {
                list.clear();
                self.spare.push(list);
            }
        }
    }

    /// Drops `task`'s list if it holds nothing any more.
    pub fn remove_if_empty(&mut self, task: u64) {
        if self.lists.get(&task).is_some_and(Vec::is_empty) {
            self.remove(task);
        }
    }

    /// True if no task holds anything.
    pub fn is_empty(&self) -> bool {
        self.lists.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_is_dropped_with_its_last_entry_and_its_vector_serves_the_next_task() {
        let mut lists = TaskLists::default();
        lists.push(1, 'a');
        lists.push(1, 'b');
        assert_eq!(lists.get_mut(1).map(|l| l.clone()), Some(vec!['a', 'b']));
        lists.get_mut(1).unwrap().clear();
        lists.remove_if_empty(1);
        assert!(lists.is_empty() && lists.get_mut(1).is_none());
        assert_eq!(lists.spare.len(), 1);
        lists.push(2, 'c');
        assert_eq!(lists.get_mut(2).map(|l| l.clone()), Some(vec!['c']), "a reused vector starts empty");
        assert!(lists.spare.is_empty());
    }
}

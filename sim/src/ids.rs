//! The names the simulator gives to tasks and state lanes: [`TaskId`], [`TaskName`] and
//! [`LaneKey`].
//!
//! They live apart from the executor because the ready list, the timer queue, the
//! scheduling strategies and the nodes all hold task ids without needing anything else of
//! the executor; with the ids here, those pieces sit below the executor instead of in an
//! import cycle with it.

use std::rc::Rc;

/// Identifies a task: a slot in the task table and the generation of that slot, so that a
/// stale id (a finished or killed task whose slot was reused) never reaches a new task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TaskId {
    /// Invariant: below [`TASKS_MAX`](crate::executor::TASKS_MAX) for a task's id; only
    /// [`TaskId::FILLER`] uses `u32::MAX`.
    pub(crate) slot: u32,
    /// The slot's generation when the task was spawned; the slot's generation moves on
    /// when the task ends, so this id then names nothing.
    pub(crate) generation: u32,
}

impl TaskId {
    /// The slot in the task table (reused after the task ends).
    pub fn slot(self) -> u32 {
        self.slot
    }

    /// A number that names this task and no other task of the run, ever (the slot and its
    /// generation): what a witness records as "the task that did it".
    pub fn number(self) -> u64 {
        (u64::from(self.generation) << 32) | u64::from(self.slot)
    }

    /// The id as one word, for a waker's data pointer.
    pub(crate) fn pack(self) -> usize {
        ((self.generation as usize) << 32) | self.slot as usize
    }

    /// The inverse of [`TaskId::pack`].
    pub(crate) fn unpack(bits: usize) -> TaskId {
        TaskId { slot: bits as u32, generation: (bits >> 32) as u32 }
    }

    /// A placeholder id in spare storage; never given to a task (slot `u32::MAX` is past
    /// [`TASKS_MAX`](crate::executor::TASKS_MAX)).
    pub(crate) const FILLER: TaskId = TaskId { slot: u32::MAX, generation: u32::MAX };

    #[cfg(test)]
    pub(crate) fn for_test(slot: u32) -> TaskId {
        TaskId { slot, generation: 0 }
    }
}

/// Identifies a state lane registered with the executor (for hang detection).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LaneKey(pub(crate) u32);

/// A task's name, for hangs and timelines. Most names are literals, which are kept as
/// they are: spawning a task under a literal name allocates nothing for the name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskName {
    /// A literal.
    Static(&'static str),
    /// A name built at run time.
    Shared(Rc<str>),
}

impl std::ops::Deref for TaskName {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            TaskName::Static(name) => name,
            TaskName::Shared(name) => name,
        }
    }
}

impl std::fmt::Display for TaskName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self)
    }
}

impl From<&'static str> for TaskName {
    fn from(name: &'static str) -> Self {
        TaskName::Static(name)
    }
}

impl From<String> for TaskName {
    fn from(name: String) -> Self {
        TaskName::Shared(name.into())
    }
}

impl From<Rc<str>> for TaskName {
    fn from(name: Rc<str>) -> Self {
        TaskName::Shared(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_id_survives_packing_into_a_word() {
        let id = TaskId { slot: 7, generation: 3 };
        assert_eq!(TaskId::unpack(id.pack()), id);
        assert_eq!(TaskId::unpack(TaskId::FILLER.pack()), TaskId::FILLER);
    }

    #[test]
    fn a_reused_slot_is_another_task_by_number() {
        // A witness names "the task that did it" by number: a task that took over a freed
        // slot must not be mistaken for the one that ended there.
        let first = TaskId { slot: 7, generation: 0 };
        let later = TaskId { slot: 7, generation: 1 };
        assert_ne!(first.number(), later.number());
        assert_eq!(later.number(), (1 << 32) | 7);
    }
}

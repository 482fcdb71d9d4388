//! The executor's timer queue: which task wakes at which simulated instant.
//!
//! Timers fire in (deadline, registration order), all timers of the earliest deadline at
//! once. Simulated time only moves forward and every new deadline lies after the last one
//! fired, so this is a *monotone* priority queue, and a radix structure fits it better than
//! a binary heap: a hierarchical timing wheel with exact order (a radix heap with radix 64,
//! after Ahuja, Mehlhorn, Orlin and Tarjan, 1990). Registering a timer is an XOR, a
//! leading-zero count and a list append, with no comparison chain. A slot usually holds a
//! single deadline (delays drawn from a small range of milliseconds land in distinct
//! slots), and then it fires as it is; otherwise its timers move down a level, at most
//! once per level.
//!
//! The slots are linked lists threaded through one arena of timer nodes, so moving a timer
//! is relinking it, and a run in steady state allocates nothing: a freed node is the next
//! one used.
//!
//! Registration order needs no sequence number. A timer's slot depends only on its
//! deadline and the last fired deadline, so the timers of one deadline always share a
//! slot; every move appends in order, so a slot stays in registration order, and the
//! earliest deadline's timers come out oldest first.

use crate::ids::TaskId;
use crate::time::SimTime;

/// Bits of the deadline per level of the wheel.
const DIGIT_BITS: u32 = 6;
/// Slots per level: one per value of a digit.
const SLOTS: usize = 1 << DIGIT_BITS;
/// Levels needed to cover a `u64` deadline.
const LEVELS: usize = (u64::BITS as usize).div_ceil(DIGIT_BITS as usize);
/// The end of a list.
const NIL: u32 = u32::MAX;
/// Most timers pending at once; more is a runaway (every live task holds at most a few).
pub(crate) const TIMERS_MAX: usize = 1 << 24;

struct Node {
    deadline: SimTime,
    task: TaskId,
    /// The next node in the same list (a slot, the due list or the free list), or `NIL`.
    next: u32,
}

/// A list of nodes, oldest first: `(head, tail)`, both `NIL` when empty.
#[derive(Clone, Copy)]
struct List {
    head: u32,
    tail: u32,
    /// The deadline of the head node, kept here so that an append can tell a mixed slot
    /// without a dependent load from the arena. Meaningless when the list is empty.
    first: SimTime,
}

impl List {
    const EMPTY: List = List { head: NIL, tail: NIL, first: SimTime::ZERO };
}

/// Timers by deadline, as a radix-64 heap over the deadline's nanoseconds.
pub(crate) struct TimerQueue {
    /// Every node ever used in this run; the free ones are linked through `free`.
    nodes: Vec<Node>,
    /// Head of the list of free nodes.
    free: u32,
    /// `LEVELS × SLOTS` lists. Invariant: a timer whose deadline first differs from `last`
    /// in digit `level` is in slot `level × SLOTS + (its digit at that level)`, and each
    /// list is in registration order.
    slots: Vec<List>,
    /// Invariant: bit `s` of `occupied[level]` is set iff that slot's list is not empty.
    occupied: [u64; LEVELS],
    /// Bit `s` of `mixed[level]` is clear only if every timer in that slot has the same
    /// deadline (a slot that is not mixed fires as it stands, without a search).
    mixed: [u64; LEVELS],
    /// Timers whose deadline equals `last`, in registration order (due now).
    due: List,
    /// The last deadline taken out (the executor's `now` once it fired).
    /// Invariant: no timer in the queue is earlier.
    last: SimTime,
}

impl Default for TimerQueue {
    fn default() -> Self {
        TimerQueue {
            nodes: Vec::new(),
            free: NIL,
            slots: vec![List::EMPTY; LEVELS * SLOTS],
            occupied: [0; LEVELS],
            mixed: [0; LEVELS],
            due: List::EMPTY,
            last: SimTime::ZERO,
        }
    }
}

impl TimerQueue {
    /// Appends node `index`, whose deadline is `deadline`, to the list where that deadline
    /// belongs now. Its `next` must be `NIL` already: the callers write it with the node's
    /// other fields, where they touch the node anyway.
    #[inline]
    fn link(&mut self, index: u32, deadline: SimTime) {
        debug_assert_eq!(self.nodes[index as usize].next, NIL, "a node is linked as a list's last");
        let differing = deadline.0 ^ self.last.0;
        let (list, level, digit) = if differing == 0 {
            (&mut self.due, LEVELS, 0)
        } else {
            let level = ((u64::BITS - 1 - differing.leading_zeros()) / DIGIT_BITS) as usize;
            let digit = (deadline.0 >> (level as u32 * DIGIT_BITS)) as usize & (SLOTS - 1);
            self.occupied[level] |= 1 << digit;
            (&mut self.slots[level * SLOTS + digit], level, digit)
        };
        if list.tail == NIL {
            list.head = index;
            list.first = deadline;
        } else {
            self.nodes[list.tail as usize].next = index;
            // Every timer equal to the first, or the slot is mixed.
            if list.first != deadline && level < LEVELS {
                self.mixed[level] |= 1 << digit;
            }
        }
        list.tail = index;
    }

    /// Registers `task` to wake at `deadline`, after every timer already set for it.
    /// `deadline` must not be earlier than the last deadline taken out.
    #[inline]
    pub(crate) fn push(&mut self, deadline: SimTime, task: TaskId) {
        assert!(deadline >= self.last, "a timer at {deadline} lies before the last fired deadline {}", self.last);
        let index = if self.free != NIL {
            let index = self.free;
            let node = &mut self.nodes[index as usize];
            self.free = node.next;
            *node = Node { deadline, task, next: NIL };
            index
        } else {
            assert!(self.nodes.len() < TIMERS_MAX, "more than {TIMERS_MAX} timers pending");
            self.nodes.push(Node { deadline, task, next: NIL });
            (self.nodes.len() - 1) as u32
        };
        self.link(index, deadline);
    }

    /// Brings every timer of the earliest deadline to the due list and returns that
    /// deadline, or `None` if no timer is set. Read them with [`TimerQueue::due`], then
    /// let them go with [`TimerQueue::release_due`] before taking the next deadline.
    pub(crate) fn take_earliest(&mut self) -> Option<SimTime> {
        assert!(self.due.head == NIL, "the previous due timers were not released");
        // The lowest occupied slot of the lowest occupied level holds the earliest
        // deadline: every timer there is earlier than any in a higher slot or level.
        let level = self.occupied.iter().position(|&bits| bits != 0)?;
        let digit = self.occupied[level].trailing_zeros() as usize;
        let bit = 1 << digit;
        self.occupied[level] &= !bit;
        let taken = std::mem::replace(&mut self.slots[level * SLOTS + digit], List::EMPTY);
        if self.mixed[level] & bit == 0 {
            // One deadline in the slot: it is the due list as it stands.
            self.last = taken.first;
            self.due = taken;
        } else {
            self.mixed[level] &= !bit;
            let mut earliest = SimTime(u64::MAX);
            let mut index = taken.head;
            while index != NIL {
                let node = &self.nodes[index as usize];
                earliest = earliest.min(node.deadline);
                index = node.next;
            }
            self.last = earliest;
            // Relative to the new `last`, these timers all belong to lower levels (the
            // earliest to the due list).
            let mut index = taken.head;
            while index != NIL {
                let node = &mut self.nodes[index as usize];
                let (next, deadline) = (node.next, node.deadline);
                node.next = NIL;
                self.link(index, deadline);
                index = next;
            }
        }
        debug_assert!(self.due.head != NIL, "the earliest deadline has timers");
        Some(self.last)
    }

    /// The tasks of the due timers, in registration order.
    #[inline]
    pub(crate) fn due(&self) -> impl Iterator<Item = TaskId> + '_ {
        let mut index = self.due.head;
        std::iter::from_fn(move || {
            let node = self.nodes.get(index as usize)?;
            debug_assert_eq!(node.deadline, self.last, "due timers are at the last deadline");
            index = node.next;
            Some(node.task)
        })
    }

    /// Frees the due timers, all at once: the whole list joins the free list.
    #[inline]
    pub(crate) fn release_due(&mut self) {
        let due = std::mem::replace(&mut self.due, List::EMPTY);
        if due.head != NIL {
            self.nodes[due.tail as usize].next = self.free;
            self.free = due.head;
        }
    }

    /// Moves the origin of an empty queue back to `now` (after skipping timers that were
    /// dead, the queue's origin may lie ahead of the executor's clock).
    pub(crate) fn restart_at(&mut self, now: SimTime) {
        assert!(self.due.head == NIL && self.occupied.iter().all(|&bits| bits == 0), "restart of a non-empty queue");
        self.mixed = [0; LEVELS];
        self.last = now;
    }

    /// Forgets every timer.
    pub(crate) fn clear(&mut self) {
        self.nodes.clear();
        self.free = NIL;
        self.slots.fill(List::EMPTY);
        self.occupied = [0; LEVELS];
        self.mixed = [0; LEVELS];
        self.due = List::EMPTY;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(slot: u32) -> TaskId {
        TaskId::for_test(slot)
    }

    fn pop(q: &mut TimerQueue) -> Option<(u64, Vec<u32>)> {
        let t = q.take_earliest()?;
        let due = q.due().map(|id| id.slot()).collect();
        q.release_due();
        Some((t.0, due))
    }

    #[test]
    fn timers_over_every_magnitude_fire_in_order_against_a_sorted_reference() {
        // Deadlines spread over all 64 bits, pushed while earlier ones fire, as a run does.
        let mut q = TimerQueue::default();
        let mut reference = std::collections::BTreeSet::new();
        let (mut state, mut now, mut next_task) = (0x2545_f491_4f6c_dd1du64, 0u64, 0u32);
        let mut random = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..2_000u32 {
            for _ in 0..3 {
                let span = random() >> (random() % 64);
                let deadline = now.saturating_add(1 + span % (u64::MAX - now).max(1));
                q.push(SimTime(deadline), task(next_task));
                reference.insert((deadline, next_task));
                next_task += 1;
            }
            if round % 2 == 0 {
                let (deadline, due) = pop(&mut q).expect("a timer is queued");
                let expected: Vec<u32> =
                    reference.iter().take_while(|(d, _)| *d == deadline).map(|&(_, t)| t).collect();
                assert_eq!(reference.first().map(|&(d, _)| d), Some(deadline), "round {round}");
                assert_eq!(due, expected, "round {round}");
                reference.retain(|&(d, _)| d != deadline);
                now = deadline;
            }
        }
    }

    #[test]
    fn a_cleared_queue_holds_no_timer_and_takes_new_ones() {
        let mut q = TimerQueue::default();
        q.push(SimTime(10), task(1));
        q.push(SimTime(1 << 40), task(2));
        q.clear();
        assert_eq!(pop(&mut q), None);
        q.push(SimTime(5), task(3));
        assert_eq!(pop(&mut q), Some((5, vec![3])));
        assert_eq!(pop(&mut q), None);
    }

    #[test]
    fn timers_fire_by_deadline_then_registration_order() {
        let mut q = TimerQueue::default();
        q.push(SimTime(20), task(1));
        q.push(SimTime(10), task(2));
        q.push(SimTime(20), task(3));
        q.push(SimTime(10), task(4));
        q.push(SimTime(u64::MAX), task(5));
        q.push(SimTime(1 << 40), task(6));
        q.push(SimTime(21), task(7));
        let fired: Vec<_> = std::iter::from_fn(|| pop(&mut q)).collect();
        assert_eq!(
            fired,
            vec![(10, vec![2, 4]), (20, vec![1, 3]), (21, vec![7]), (1 << 40, vec![6]), (u64::MAX, vec![5])]
        );
    }

    #[test]
    fn interleaved_pushes_and_pops_match_a_stable_sort_by_deadline() {
        // A tiny deterministic generator; delays cycle through colliding, near and spread.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut q = TimerQueue::default();
        let mut reference: Vec<(u64, u32)> = Vec::new();
        let mut now = 0u64;
        let mut id = 0u32;
        let mut peak = 0;
        for round in 0..3_000 {
            for _ in 0..(next() % 4) {
                let range = [16, 1 << 12, 1 << 30][round % 3];
                let deadline = now + 1 + next() % range;
                q.push(SimTime(deadline), task(id));
                reference.push((deadline, id));
                id += 1;
            }
            peak = peak.max(reference.len());
            match pop(&mut q) {
                Some((t, due)) => {
                    reference.sort_by_key(|&(d, _)| d);
                    let expected: Vec<u32> = reference.iter().take_while(|&&(d, _)| d == t).map(|&(_, i)| i).collect();
                    reference.drain(..expected.len());
                    assert_eq!(due, expected);
                    assert!(t > now);
                    now = t;
                }
                None => assert!(reference.is_empty()),
            }
        }
        // Freed nodes are reused: the arena never holds more than the peak of pending timers.
        assert_eq!(q.nodes.len(), peak);
    }
}

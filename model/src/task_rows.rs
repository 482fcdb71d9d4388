//! The store's pull-task rows, indexed by when each can next be locked as well as by
//! instance. Every pull worker asks, on every poll, for the earliest instant a row can be
//! locked and for the first lockable row; a scan of every row per poll made a world of
//! thousands of parked instances pay per poll for its size rather than for its work (the
//! pull worker's loop was 12% of a 6,000-instance pull world's cycles). The index answers
//! both in the log of the rows, with the same rows in the same order as the scan did.

use std::collections::BTreeSet;

use sutra_sim_core::SimTime;

use crate::dense::DenseMap;
use crate::ids::InstanceId;

/// A pending pull task: an instance parked until a worker completes its work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskRow {
    /// The instance.
    pub instance: InstanceId,
    /// The version the completion's step expects.
    pub expects: u64,
    /// The worker holding the lock, and until when.
    pub locked: Option<(u32, SimTime)>,
}

/// Task rows by instance (at most one per instance).
#[derive(Default)]
pub struct TaskRows {
    rows: DenseMap<InstanceId, TaskRow>,
    /// Invariant: exactly the instances of the rows in `rows` with no lock.
    unlocked: BTreeSet<InstanceId>,
    /// Invariant: exactly `(until, instance)` for every row in `rows` locked until `until`.
    locked: BTreeSet<(SimTime, InstanceId)>,
}

impl TaskRows {
    /// The row of `instance`.
    pub fn get(&self, instance: InstanceId) -> Option<&TaskRow> {
        self.rows.get(instance)
    }

    /// Writes the row of `instance`, returning the one it replaced.
    pub fn insert(&mut self, instance: InstanceId, row: TaskRow) -> Option<TaskRow> {
        let old = self.remove(instance);
        match row.locked {
            None => self.unlocked.insert(instance),
            Some((_, until)) => self.locked.insert((until, instance)),
        };
        self.rows.insert(instance, row);
        old
    }

    /// Deletes the row of `instance`, returning it.
    pub fn remove(&mut self, instance: InstanceId) -> Option<TaskRow> {
        let old = self.rows.remove(instance)?;
        let indexed = match old.locked {
            None => self.unlocked.remove(&instance),
            Some((_, until)) => self.locked.remove(&(until, instance)),
        };
        debug_assert!(indexed, "task row of instance {} missing from the lock index", instance.0);
        Some(old)
    }

    /// The earliest instant at which some row can be locked: `SimTime::ZERO` if a row is
    /// unlocked, else the earliest lock expiry; `None` without rows.
    pub fn earliest_lockable(&self) -> Option<SimTime> {
        if !self.unlocked.is_empty() {
            return Some(SimTime::ZERO);
        }
        self.locked.first().map(|(until, _)| *until)
    }

    /// The lowest instance whose row is unlocked or whose lock expired by `now`. Expired
    /// locks are few (a worker that died or froze holding one), so walking them is cheap.
    pub fn first_lockable(&self, now: SimTime) -> Option<InstanceId> {
        let expired = self.locked.iter().take_while(|(until, _)| *until <= now).map(|(_, i)| *i);
        self.unlocked.first().copied().into_iter().chain(expired).min_by_key(|i| i.0)
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True if there is no row.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The rows in instance order.
    pub fn values(&self) -> impl Iterator<Item = &TaskRow> + '_ {
        self.rows.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000)
    }

    fn row(instance: u32, locked_until_ms: Option<u64>) -> TaskRow {
        TaskRow { instance: InstanceId(instance), expects: 1, locked: locked_until_ms.map(|until| (0, ms(until))) }
    }

    /// What the store computed before the index: a scan of every row in instance order.
    fn scanned(rows: &TaskRows, now: SimTime) -> (Option<SimTime>, Option<InstanceId>) {
        let earliest = rows.values().map(|t| t.locked.map_or(SimTime::ZERO, |(_, until)| until)).min();
        let first = rows.values().find(|t| t.locked.is_none_or(|(_, until)| until <= now)).map(|t| t.instance);
        (earliest, first)
    }

    #[test]
    fn the_first_lockable_row_is_the_lowest_instance_unlocked_or_expired() {
        let mut rows = TaskRows::default();
        for (instance, until) in [(5, None), (1, Some(30)), (3, Some(20)), (2, Some(99))] {
            rows.insert(InstanceId(instance), row(instance, until));
        }
        assert_eq!(rows.first_lockable(ms(10)), Some(InstanceId(5)));
        assert_eq!(rows.first_lockable(ms(20)), Some(InstanceId(3)));
        assert_eq!(rows.first_lockable(ms(30)), Some(InstanceId(1)));
        assert_eq!(rows.earliest_lockable(), Some(SimTime::ZERO));
        rows.remove(InstanceId(5));
        assert_eq!(rows.earliest_lockable(), Some(ms(20)));
        assert_eq!(rows.first_lockable(ms(19)), None);
    }

    /// The index answers what a scan of every row answers, through locks, relocks and
    /// removals in any order.
    #[test]
    fn the_index_answers_as_a_scan_of_every_row_does() {
        let mut rows = TaskRows::default();
        let mut state = 7u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            state >> 33
        };
        for step in 0..4000u64 {
            let instance = (next() % 40) as u32;
            match next() % 4 {
                0 => {
                    rows.remove(InstanceId(instance));
                }
                1 => {
                    rows.insert(InstanceId(instance), row(instance, None));
                }
                _ => {
                    rows.insert(InstanceId(instance), row(instance, Some(next() % 200)));
                }
            }
            let now = ms(step % 200);
            assert_eq!((rows.earliest_lockable(), rows.first_lockable(now)), scanned(&rows, now), "step {step}");
        }
        assert!(rows.len() <= 40 && rows.is_empty() == (rows.len() == 0));
    }
}

//! The store's timer rows, indexed by due time as well as by instance. Every replica's
//! poller asks for the earliest due row and for the rows due now on every poll; a scan of
//! every pending row per poll made a world of thousands of instances pay per poll for its
//! size rather than for its work. The index answers both in the log of the rows pending.

use std::collections::BTreeSet;

use sutra_sim_core::SimTime;

use crate::dense::DenseMap;
use crate::ids::InstanceId;

/// A pending timer: fire the step expecting `expects` when due.
#[derive(Clone, Copy, Debug)]
pub struct TimerRow {
    /// The instance.
    pub instance: InstanceId,
    /// The version the fired step expects to find.
    pub expects: u64,
    /// When it is next due.
    pub due: SimTime,
    /// Refusals so far.
    pub attempt: u32,
}

/// Timer rows by instance (at most one pending trigger per instance).
#[derive(Default)]
pub struct TimerRows {
    rows: DenseMap<InstanceId, TimerRow>,
    /// Invariant: exactly `(row.due, instance)` for every row in `rows`.
    by_due: BTreeSet<(SimTime, InstanceId)>,
}

impl TimerRows {
    /// The row of `instance`.
    pub fn get(&self, instance: InstanceId) -> Option<&TimerRow> {
        self.rows.get(instance)
    }

    /// Writes the row of `instance`, returning the one it replaced.
    pub fn insert(&mut self, instance: InstanceId, row: TimerRow) -> Option<TimerRow> {
        let old = self.remove(instance);
        self.by_due.insert((row.due, instance));
        self.rows.insert(instance, row);
        old
    }

    /// Deletes the row of `instance`, returning it.
    pub fn remove(&mut self, instance: InstanceId) -> Option<TimerRow> {
        let old = self.rows.remove(instance)?;
        let indexed = self.by_due.remove(&(old.due, instance));
        debug_assert!(indexed, "timer row of instance {} missing from the due index", instance.0);
        Some(old)
    }

    /// Changes the row of `instance` by `change` (its due time included), if there is one.
    pub fn update<R>(&mut self, instance: InstanceId, change: impl FnOnce(&mut TimerRow) -> R) -> Option<R> {
        let mut row = self.remove(instance)?;
        let answer = change(&mut row);
        self.insert(instance, row);
        Some(answer)
    }

    /// The earliest due time of any row.
    pub fn earliest_due(&self) -> Option<SimTime> {
        self.by_due.first().map(|(due, _)| *due)
    }

    /// The instances whose row is due at `now`, in instance order, at most `limit` of them.
    pub fn due_at(&self, now: SimTime, limit: usize) -> Vec<InstanceId> {
        let mut due: Vec<InstanceId> = self.by_due.iter().take_while(|(at, _)| *at <= now).map(|(_, i)| *i).collect();
        due.sort_unstable_by_key(|i| i.0);
        due.truncate(limit);
        due
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True if there is no row.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(instance: u32, due_ms: u64) -> TimerRow {
        TimerRow { instance: InstanceId(instance), expects: 1, due: SimTime(due_ms * 1_000_000), attempt: 0 }
    }

    #[test]
    fn rows_due_come_in_instance_order_up_to_the_limit_whatever_their_due_order() {
        let mut rows = TimerRows::default();
        for (instance, due_ms) in [(5, 10), (1, 30), (3, 20), (2, 99)] {
            rows.insert(InstanceId(instance), row(instance, due_ms));
        }
        let now = SimTime(30 * 1_000_000);
        assert_eq!(rows.due_at(now, 8), [InstanceId(1), InstanceId(3), InstanceId(5)]);
        assert_eq!(rows.due_at(now, 2), [InstanceId(1), InstanceId(3)]);
        assert_eq!(rows.earliest_due(), Some(SimTime(10 * 1_000_000)));
    }

    #[test]
    fn the_due_index_follows_every_update_insert_and_removal() {
        let mut rows = TimerRows::default();
        rows.insert(InstanceId(0), row(0, 10));
        rows.insert(InstanceId(1), row(1, 20));
        rows.update(InstanceId(0), |r| r.due = SimTime(50 * 1_000_000));
        assert_eq!(rows.earliest_due(), Some(SimTime(20 * 1_000_000)));
        rows.insert(InstanceId(1), row(1, 60));
        assert_eq!(rows.earliest_due(), Some(SimTime(50 * 1_000_000)));
        assert!(rows.remove(InstanceId(0)).is_some());
        assert_eq!(rows.due_at(SimTime(55 * 1_000_000), 8), []);
        assert_eq!(rows.len(), 1);
        assert!(rows.update(InstanceId(7), |_| ()).is_none());
    }
}

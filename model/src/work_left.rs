//! The work left in a run, as the store witnesses it: every step not yet committed, plus
//! every claim still held. Liveness is judged on it as *progress*, not as a deadline for all
//! of the work: a deadline derived from timeouts alone fails the correct model as soon as a
//! scenario queues more work behind a resource (one pull worker, one lane) than the built-in
//! ones do, while a stall is a stall at any size.
//!
//! Why a new low is progress: a grant raises the work left by one (a claim is held), a
//! release or a sweep lowers it by one, and a commit lowers it by two (a step done, its
//! claim released with it). So the work left can only set a new low when a step commits or
//! a claim is let go for good — and it can set one at most as many times as it started
//! high. A livelock (claim, refuse or release, claim again) never sets a new low, so it is
//! judged like a stall, and the judgement needs no deadline for the whole workload.

use sutra_sim_core::SimTime;

use crate::event::ModelEvent;
use crate::ids::{InstanceId, OwnerId};
use crate::paged::PagedMap;

/// One instance's row, as far as the work left goes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Row {
    steps: u32,
    /// Committed steps. Invariant: `version <= steps` for rows the store wrote.
    version: u64,
    owner: Option<OwnerId>,
}

impl Row {
    fn work(&self) -> u64 {
        u64::from(self.steps).saturating_sub(self.version) + u64::from(self.owner.is_some())
    }
}

/// The work left, kept up to date from `InstanceStarted` and `RowWritten` witnesses in
/// O(1) per event. Invariant: `total` is the sum of every row's work.
#[derive(Debug, Default)]
pub struct WorkLeft {
    /// Rows by instance id (the store numbers instances 0..n as it creates them). Finished
    /// rows are alike (every step committed, no claim): a [`PagedMap`] keeps them in a byte
    /// an instance.
    rows: PagedMap<InstanceId, Row>,
    total: u64,
}

impl WorkLeft {
    /// Takes in an event; true if it changed the work left. Other events are ignored.
    pub fn observe(&mut self, event: &ModelEvent) -> bool {
        match *event {
            ModelEvent::InstanceStarted { instance, steps } => {
                self.put(instance, Row { steps, version: 0, owner: None });
                true
            }
            ModelEvent::RowWritten { instance, owner, version, .. } => {
                let Some(row) = self.rows.get(instance) else {
                    // A row written for an instance never witnessed as started is not work
                    // this tracker can count (it judges what it saw start).
                    return false;
                };
                let steps = row.steps;
                self.put(instance, Row { steps, version, owner });
                true
            }
            _ => false,
        }
    }

    fn put(&mut self, instance: InstanceId, row: Row) {
        if let Some(old) = self.rows.insert(instance, row) {
            self.total -= old.work();
        }
        self.total += row.work();
    }

    /// Steps not yet committed plus claims held.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Instances that have steps left, with their committed version, in id order.
    pub fn incomplete(&self) -> impl Iterator<Item = (InstanceId, u64)> + '_ {
        self.rows().filter(|(_, r)| r.version < u64::from(r.steps)).map(|(i, r)| (i, r.version))
    }

    /// Claims still held, with their owner, in instance order.
    pub fn held(&self) -> impl Iterator<Item = (InstanceId, OwnerId)> + '_ {
        self.rows().filter_map(|(i, r)| r.owner.map(|o| (i, o)))
    }

    fn rows(&self) -> impl Iterator<Item = (InstanceId, &Row)> + '_ {
        self.rows.iter()
    }
}

/// Watches the work left for progress from the moment judging began (the heal): the last
/// time it set a new low.
#[derive(Clone, Copy, Debug)]
pub struct ProgressWatch {
    low: u64,
    /// When the work left last set a new low (or judging began).
    pub last_progress: SimTime,
}

impl ProgressWatch {
    /// Begins watching at `now`, with `work` left.
    pub fn new(work: u64, now: SimTime) -> ProgressWatch {
        ProgressWatch { low: work, last_progress: now }
    }

    /// Takes in the work left at `now`.
    pub fn observe(&mut self, work: u64, now: SimTime) {
        if work < self.low {
            self.low = work;
            self.last_progress = now;
        }
    }

    /// True if work is left and none of it progressed for longer than `bound` by `now`.
    pub fn stalled(&self, work: u64, now: SimTime, bound: std::time::Duration) -> bool {
        work > 0 && now.since(self.last_progress) > bound
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::WriteKind;
    use crate::ids::ProcessId;
    use std::time::Duration;

    fn written(instance: u32, version: u64, owner: Option<OwnerId>) -> ModelEvent {
        ModelEvent::RowWritten {
            instance: InstanceId(instance),
            write: WriteKind::Claim,
            by: None,
            writer: None,
            owner,
            version,
            epoch: 1,
            parked: false,
        }
    }

    #[test]
    fn a_commit_is_a_new_low_and_a_claim_and_release_are_not() {
        let owner = OwnerId::lane(ProcessId(1), 0);
        let mut work = WorkLeft::default();
        work.observe(&ModelEvent::InstanceStarted { instance: InstanceId(0), steps: 2 });
        work.observe(&ModelEvent::InstanceStarted { instance: InstanceId(1), steps: 1 });
        assert_eq!(work.total(), 3);
        let mut watch = ProgressWatch::new(work.total(), SimTime::ZERO);
        // Claim, then release without committing: back where it was, no progress.
        work.observe(&written(0, 0, Some(owner)));
        assert_eq!(work.total(), 4);
        work.observe(&written(0, 0, None));
        watch.observe(work.total(), SimTime(5));
        assert_eq!(watch.last_progress, SimTime::ZERO);
        // Claim and commit: a step done and the claim released, a new low.
        work.observe(&written(0, 0, Some(owner)));
        work.observe(&written(0, 1, None));
        watch.observe(work.total(), SimTime(9));
        assert_eq!((work.total(), watch.last_progress), (2, SimTime(9)));
        assert_eq!(work.incomplete().collect::<Vec<_>>(), vec![(InstanceId(0), 1), (InstanceId(1), 0)]);
    }

    #[test]
    fn a_stall_is_work_left_with_no_new_low_for_longer_than_the_bound() {
        let watch = ProgressWatch::new(3, SimTime::ZERO);
        let bound = Duration::from_secs(10);
        assert!(!watch.stalled(3, SimTime(10_000_000_000), bound));
        assert!(watch.stalled(3, SimTime(10_000_000_001), bound));
        assert!(!watch.stalled(0, SimTime(20_000_000_000), bound), "no work left is no stall");
    }

    #[test]
    fn held_claims_are_work_and_are_listed() {
        let owner = OwnerId::lane(ProcessId(2), 1);
        let mut work = WorkLeft::default();
        work.observe(&ModelEvent::InstanceStarted { instance: InstanceId(0), steps: 1 });
        work.observe(&written(0, 1, Some(owner)));
        assert_eq!(work.total(), 1);
        assert_eq!(work.held().collect::<Vec<_>>(), vec![(InstanceId(0), owner)]);
        assert_eq!(work.incomplete().count(), 0);
    }
}

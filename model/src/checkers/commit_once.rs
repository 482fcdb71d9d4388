//! commit-once (always; R8, R9, R25): a step is applied once, and an execution whose commit
//! the store accepted never acts on that claim again as if the step had failed.
//!
//! Judged from the store's witnesses alone. Every accepted commit names the epoch of the
//! claim it was made under and the version it wrote, so:
//! - two accepted commits writing one version of an instance are one step applied twice;
//! - two accepted commits under one epoch are one execution committing twice;
//! - a release, or another commit, under an epoch whose commit was already accepted is an
//!   execution that did not know its commit landed and took its step for failed — what a
//!   client does that treats an unanswered commit (a lost reply) as a failure: it runs the
//!   failure exit (release, hand the trigger back) for a step that committed.
//!
//! Reads are not judged: re-reading the row is exactly how a correct client resolves an
//! ambiguous commit. A real bug that would still pass: a client that takes an ambiguous
//! commit for failed and only hands its trigger back, sending nothing more under that
//! epoch — the trigger's redelivery finds the step done (R25), and no store witness names
//! the old epoch again.
//!
//! **What it keeps, compactly.** A zombie may act under any epoch of an instance long
//! finished, so each instance's accepted commits are kept for the whole history — as one
//! record: the versions written as "1 to n" (a correct history writes them in order) with
//! any written apart from that run listed beside it, and the epochs of its commits in a
//! short list. About 60 bytes a finished instance of three steps, where a tree entry per
//! version and per epoch took three times that. Kept in a [`PagedMap`]: the records of
//! finished instances are alike (three steps, epochs 1 to 3), and a page of them costs
//! about a byte an instance.

use crate::paged::PagedMap;
use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::ModelEvent;
use crate::ids::InstanceId;
use crate::view::ModelView;

/// What the store accepted so far.
#[derive(Default)]
pub struct CommitOnce {
    /// Each instance's accepted commits.
    commits: PagedMap<InstanceId, Commits>,
}

/// One instance's accepted commits.
#[derive(Clone, Debug, Default, PartialEq)]
struct Commits {
    /// Versions 1 to `versions_upto` were all written by accepted commits.
    versions_upto: u64,
    /// Versions written above `versions_upto + 1`, not yet joined to the run (none in a
    /// history whose commits write their versions in order).
    versions_apart: Vec<u64>,
    /// Epochs of its accepted commits: claims that a commit ended.
    epochs: Vec<u64>,
}

impl Commits {
    /// Records that `version` was written; false if it had been already.
    fn write(&mut self, version: u64) -> bool {
        if (1..=self.versions_upto).contains(&version) || self.versions_apart.contains(&version) {
            return false;
        }
        if version != self.versions_upto + 1 {
            self.versions_apart.push(version);
            return true;
        }
        self.versions_upto = version;
        while let Some(at) = self.versions_apart.iter().position(|&v| v == self.versions_upto + 1) {
            self.versions_apart.swap_remove(at);
            self.versions_upto += 1;
        }
        true
    }
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "commit-once",
        kind: CheckerKind::Always,
        description:
            "each step is applied once; a claim whose commit was accepted is never released or committed under again",
        rules: &["R8", "R9", "R25"],
        factory: Arc::new(|| Box::new(CommitOnce::default())),
    }
}

impl CommitOnce {
    fn after_commit(&self, instance: InstanceId, epoch: u64, what: &str) -> Check {
        if self.commits.get(instance).is_some_and(|c| c.epochs.contains(&epoch)) {
            return Check::Fail(format!(
                "a {what} of instance {} under epoch {epoch}, whose commit the store had already accepted: the execution took a step that committed for failed",
                instance.0
            ));
        }
        Check::Ok
    }
}

impl Checker<ModelEvent, ModelView> for CommitOnce {
    fn interest(&self) -> u64 {
        use crate::event::tag;
        sutra_sim_core::tag_mask(&[tag::COMMIT_ACCEPTED, tag::COMMIT_REJECTED, tag::RELEASED])
    }

    fn name(&self) -> &str {
        "commit-once"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, _view: &ModelView) -> Check {
        match &event.kind {
            ModelEvent::CommitAccepted { instance, epoch, version_after, .. } => {
                if let Check::Fail(m) = self.after_commit(*instance, *epoch, "second commit") {
                    return Check::Fail(m);
                }
                let commits = self.commits.get_or_insert_with(*instance, Commits::default);
                if !commits.write(*version_after) {
                    return Check::Fail(format!(
                        "version {version_after} of instance {} written by a second accepted commit: one step applied twice",
                        instance.0
                    ));
                }
                commits.epochs.push(*epoch);
                Check::Ok
            }
            ModelEvent::CommitRejected { instance, epoch, .. } => self.after_commit(*instance, *epoch, "commit"),
            ModelEvent::Released { instance, epoch, .. } => self.after_commit(*instance, *epoch, "release"),
            _ => Check::Ok,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed};
    use crate::event::TriggerRef;
    use crate::ids::{ExecId, OwnerId, ProcessId};

    fn owner() -> OwnerId {
        OwnerId::lane(ProcessId(1), 0)
    }

    fn accepted(epoch: u64, based_on: u64) -> ModelEvent {
        ModelEvent::CommitAccepted {
            instance: InstanceId(0),
            exec: ExecId(1),
            owner: owner(),
            epoch,
            owner_before: Some(owner()),
            current_epoch: epoch,
            trigger: TriggerRef::TimerRow { expects: based_on },
            based_on,
            version_before: based_on,
            version_after: based_on + 1,
            task: Some(7),
        }
    }

    fn released(epoch: u64) -> ModelEvent {
        ModelEvent::Released {
            instance: InstanceId(0),
            exec: ExecId(1),
            owner: owner(),
            epoch,
            current_epoch: epoch,
            released: false,
            task: Some(7),
        }
    }

    #[test]
    fn steps_committed_once_each_pass() {
        let history = vec![(1, accepted(1, 0)), (2, released(2)), (3, accepted(3, 1))];
        assert_eq!(feed(&mut CommitOnce::default(), history), Check::Ok);
    }

    #[test]
    fn a_release_under_an_epoch_whose_commit_was_accepted_fails() {
        // The reply of the commit was lost; the client took the step for failed.
        let history = vec![(1, accepted(1, 0)), (2, released(1))];
        assert!(fails(&feed(&mut CommitOnce::default(), history)));
    }

    #[test]
    fn a_second_commit_under_a_committed_epoch_fails_even_when_rejected() {
        let rejected = ModelEvent::CommitRejected {
            instance: InstanceId(0),
            exec: ExecId(1),
            owner: owner(),
            epoch: 1,
            holder: None,
            task: Some(7),
        };
        assert!(fails(&feed(&mut CommitOnce::default(), vec![(1, accepted(1, 0)), (2, rejected)])));
    }

    #[test]
    fn one_version_written_by_two_accepted_commits_fails() {
        let history = vec![(1, accepted(1, 0)), (2, accepted(2, 0))];
        assert!(fails(&feed(&mut CommitOnce::default(), history)));
    }

    #[test]
    fn another_instance_s_epochs_are_its_own() {
        let other = ModelEvent::Released {
            instance: InstanceId(1),
            exec: ExecId(2),
            owner: owner(),
            epoch: 1,
            current_epoch: 1,
            released: true,
            task: Some(7),
        };
        assert_eq!(feed(&mut CommitOnce::default(), vec![(1, accepted(1, 0)), (2, other)]), Check::Ok);
    }

    proptest::proptest! {
        /// The compact record of written versions answers as the set of them did, in any
        /// order of writes.
        #[test]
        fn the_versions_record_answers_as_a_set(writes in proptest::collection::vec(0u64..12, 0..40)) {
            let mut record = Commits::default();
            let mut set = std::collections::BTreeSet::new();
            for v in writes {
                proptest::prop_assert_eq!(record.write(v), set.insert(v));
            }
        }
    }

    /// A finished instance's commits are still judged long after: a zombie releasing under
    /// an epoch whose commit was accepted, a commit writing a version again.
    #[test]
    fn a_zombie_of_a_long_finished_instance_is_still_flagged() {
        let of = |id: u32, mut e: ModelEvent| {
            if let ModelEvent::CommitAccepted { instance, .. } | ModelEvent::Released { instance, .. } = &mut e {
                *instance = InstanceId(id);
            }
            e
        };
        let mut h = Vec::new();
        for i in 0..5_000 {
            h.push((1, of(i, accepted(1, 0))));
            h.push((2, of(i, accepted(3, 1))));
            h.push((3, of(i, accepted(4, 2))));
        }
        let mut zombie = h.clone();
        zombie.push((9, of(7, released(3))));
        assert!(fails(&feed(&mut CommitOnce::default(), zombie)));
        let mut again = h.clone();
        again.push((9, of(7, accepted(6, 1))));
        assert!(fails(&feed(&mut CommitOnce::default(), again)));
        let mut fine = h;
        fine.push((9, of(7, released(2))));
        assert_eq!(feed(&mut CommitOnce::default(), fine), Check::Ok);
    }
}

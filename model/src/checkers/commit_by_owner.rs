//! commit-by-owner (always; R19, R8): every commit the store accepted was made by the holder
//! of the current claim epoch, and based on the current version — whether or not anyone
//! else holds a claim at that instant.
//!
//! `no-stale-snapshot` only sees a commit whose base is stale, and the old
//! `no-double-resume` only a commit made while *another* execution held a claim; a writer
//! that lost its claim to a sweep (row free) and commits on the unchanged version passed
//! both. Here the writer must be the owner *and* the epoch it names must be the row's.
//! Both sides are judged twice: from the store's own report on the commit
//! (`owner_before`, `current_epoch`, `version_before`) and from the checker's bookkeeping of
//! earlier witnesses (grants and row writes), so a store report that disagrees with the
//! row's history is caught too.
//!
//! A real bug that would still pass: a commit that writes the right version under the
//! right claim but with the wrong contents (the step's effects are not in the events).
//!
//! The rows are kept for the whole history in a [`PagedMap`]: a finished instance's row
//! (released, its last epoch and version) is like its neighbours', about a byte each.

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::ModelEvent;
use crate::ids::{InstanceId, OwnerId};
use crate::paged::PagedMap;
use crate::view::ModelView;

/// One instance's row as the witnesses built it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Row {
    epoch: u64,
    owner: Option<OwnerId>,
    version: u64,
}

/// The checker's state: each row, from grants and row writes.
#[derive(Default)]
pub struct CommitByOwner {
    rows: PagedMap<InstanceId, Row>,
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "commit-by-owner",
        kind: CheckerKind::Always,
        description: "every accepted commit was made by the holder of the current epoch, based on the current version",
        rules: &["R19", "R8"],
        factory: Arc::new(|| Box::new(CommitByOwner::default())),
    }
}

fn owner_text(o: Option<OwnerId>) -> String {
    o.map_or_else(|| "nobody".to_string(), |o| o.to_string())
}

impl Checker<ModelEvent, ModelView> for CommitByOwner {
    fn interest(&self) -> u64 {
        use crate::event::tag;
        sutra_sim_core::tag_mask(&[tag::CLAIM_GRANTED, tag::ROW_WRITTEN, tag::COMMIT_ACCEPTED])
    }

    fn name(&self) -> &str {
        "commit-by-owner"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, _view: &ModelView) -> Check {
        match &event.kind {
            ModelEvent::ClaimGranted { instance, owner, epoch, .. } => {
                let row = self.rows.get_or_insert_with(*instance, Row::default);
                row.epoch = *epoch;
                row.owner = Some(*owner);
            }
            ModelEvent::RowWritten { instance, owner, version, .. } => {
                let row = self.rows.get_or_insert_with(*instance, Row::default);
                row.owner = *owner;
                row.version = *version;
            }
            ModelEvent::CommitAccepted {
                instance,
                owner,
                epoch,
                owner_before,
                current_epoch,
                based_on,
                version_before,
                ..
            } => {
                let row = self.rows.get(*instance).copied().unwrap_or_default();
                let i = instance.0;
                if *owner_before != Some(*owner) || row.owner != Some(*owner) {
                    return Check::Fail(format!(
                        "the store accepted a commit of instance {i} by {owner}, but the row was held by {} (store) / {} (witnessed)",
                        owner_text(*owner_before),
                        owner_text(row.owner)
                    ));
                }
                if *epoch != *current_epoch || *epoch != row.epoch {
                    return Check::Fail(format!(
                        "the store accepted a commit of instance {i} by {owner} under epoch {epoch}, but the current epoch is {current_epoch} (store) / {} (witnessed)",
                        row.epoch
                    ));
                }
                if *based_on != *version_before || *based_on != row.version {
                    return Check::Fail(format!(
                        "the store accepted a commit of instance {i} by {owner} based on version {based_on}, but the row is at {version_before} (store) / {} (witnessed)",
                        row.version
                    ));
                }
            }
            _ => {}
        }
        Check::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed};
    use crate::event::{ModelEvent as E, TriggerRef, WriteKind};
    use crate::ids::{ExecId, MessageId, ProcessId, ResumePath};

    const I: InstanceId = InstanceId(0);

    fn grant(owner: OwnerId, epoch: u64) -> E {
        E::ClaimGranted {
            instance: I,
            exec: ExecId(epoch as u32),
            owner,
            process: Some(ProcessId(1)),
            path: ResumePath::Relay,
            previous: None,
            stale_age_ns: None,
            epoch,
            task: None,
        }
    }

    fn written(owner: Option<OwnerId>, version: u64, epoch: u64) -> E {
        E::RowWritten {
            instance: I,
            write: WriteKind::Sweep,
            by: None,
            writer: None,
            owner,
            version,
            epoch,
            parked: false,
        }
    }

    fn commit(
        owner: OwnerId,
        epoch: u64,
        owner_before: Option<OwnerId>,
        current_epoch: u64,
        based_on: u64,
        version_before: u64,
    ) -> E {
        E::CommitAccepted {
            instance: I,
            exec: ExecId(1),
            owner,
            epoch,
            owner_before,
            current_epoch,
            trigger: TriggerRef::Message(MessageId(0)),
            based_on,
            version_before,
            version_after: based_on + 1,
            task: None,
        }
    }

    #[test]
    fn fires_on_a_commit_accepted_after_the_claim_was_swept() {
        // Nobody else holds a claim: the old checkers saw nothing wrong here.
        let a = OwnerId::lane(ProcessId(1), 0);
        let history = vec![(1, grant(a, 1)), (40_000, written(None, 0, 1)), (40_001, commit(a, 1, None, 1, 0, 0))];
        assert!(fails(&feed(&mut CommitByOwner::default(), history)));
    }

    #[test]
    fn fires_on_a_commit_under_a_superseded_epoch_of_the_same_owner() {
        let a = OwnerId::process(ProcessId(1));
        let history = vec![(1, grant(a, 1)), (2, grant(a, 2)), (3, commit(a, 1, Some(a), 2, 0, 0))];
        assert!(fails(&feed(&mut CommitByOwner::default(), history)));
    }

    #[test]
    fn fires_on_a_commit_based_on_an_old_version() {
        let a = OwnerId::lane(ProcessId(1), 0);
        let history = vec![(1, written(None, 3, 0)), (2, grant(a, 1)), (3, commit(a, 1, Some(a), 1, 2, 3))];
        assert!(fails(&feed(&mut CommitByOwner::default(), history)));
    }

    #[test]
    fn fires_when_the_store_report_disagrees_with_the_witnessed_row() {
        let a = OwnerId::lane(ProcessId(1), 0);
        let b = OwnerId::lane(ProcessId(2), 0);
        // The store claims `a` held epoch 1, but the witnessed grants gave epoch 2 to `b`.
        let history = vec![(1, grant(a, 1)), (2, grant(b, 2)), (3, commit(a, 1, Some(a), 1, 0, 0))];
        assert!(fails(&feed(&mut CommitByOwner::default(), history)));
    }

    #[test]
    fn accepts_the_holders_commit_on_the_current_version() {
        let a = OwnerId::lane(ProcessId(1), 0);
        let history = vec![(1, grant(a, 1)), (2, commit(a, 1, Some(a), 1, 0, 0)), (2, written(None, 1, 1))];
        assert_eq!(feed(&mut CommitByOwner::default(), history), Check::Ok);
    }
}

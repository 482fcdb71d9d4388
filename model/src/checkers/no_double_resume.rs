//! no-double-resume (always; R1, R2, R10–R12, R15), judged by claim epochs: two executions
//! never both act — read, commit, release, migration write — under valid claims of one
//! instance.
//!
//! Every grant raises the row's epoch (re-entrant ones included), so at any instant at
//! most one claim of an instance is current: the epoch of its last grant, while the row is
//! still owned. The checker follows the epoch and the owner from the store's own witnesses
//! (`ClaimGranted`, `RowWritten`) and judges every act by the claim it names:
//! - a claim naming epoch 0, or an epoch the store never granted to that owner, is acting
//!   without a claim (R1);
//! - a write the store *accepted* (commit, release, migration write) under an epoch that is
//!   no longer current means someone else took a newer claim while this execution still
//!   acted: the store's owner-only condition let it through because both claims were under
//!   one owner id (R11), or the write was not conditional at all;
//! - a read under an epoch superseded *within the same owner's unbroken tenure* is the same
//!   owner acting in two places (a re-entrant grant went to someone else);
//! - a re-entrant grant (the row already ours) sent by a different task than the one that
//!   holds the current epoch is one owner id on two lanes: the double resume R11 forbids —
//!   unless the executor witnessed that holder task aborted (`TaskAborted`): then the
//!   sender is the lane's next worker, serialised after it.
//!
//! A read under a claim lost to a stale steal or a sweep is allowed: the live-but-slow
//! owner's read changes nothing, and its write is what R19 stops (judged above, and by
//! `commit-by-owner`). Narrative events (`Rehydrated`, `ExecutionEnded`) are not read.
//!
//! **What it forgets.** Every grant is kept (instance, epoch → owner) to judge an act's
//! claim (R1) — until the instance completes (`InstanceCompleted`: its last step is
//! committed). Then the grants of every epoch below the row's current one are dropped and
//! the row remembers only that they were granted (`forgotten_below`). Why no verdict
//! changes in substance (spec 000): after completion no step is left to resume, so what
//! can still come under a pre-completion epoch is a stale execution waking up.
//! - Its *write* (commit, release, migration write) under an epoch below the current one is
//!   flagged as before — two executions acted — without the grant: only the wording of a
//!   write under a forged old epoch changes (R1's "never granted" becomes "not current").
//! - The *current* epoch's grant is kept, so an act under it is judged exactly as before.
//! - A *read* under a superseded epoch is judged by tenure as before (the same owner acting
//!   in two places). What is lost is R1 for a read naming an old epoch the store never
//!   granted to that owner, of a completed instance: a read changes nothing, and nothing
//!   can then be written to the finished row without a commit after completion that
//!   `commit-by-owner` and `commit-once` see.
//! Grants after completion (duplicate triggers claiming the finished row) are kept again
//! like any other. A history without `instance-completed` forgets nothing. The current
//! epoch's grant of a completed instance moves from the tree to a [`PagedMap`] slot (8
//! bytes, against some 50 for a tree entry), and the rows to pages whose finished records,
//! alike, cost about a byte an instance.
//!
//! A real bug that would still pass: a stale reader that never writes to the store but
//! acts elsewhere on what it read (say, sends an external effect from a step whose commit
//! is then rejected) — no store witness shows the effect.

use std::collections::BTreeMap;
use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::ModelEvent;
use crate::ids::{InstanceId, OwnerId};
use crate::paged::PagedMap;
use crate::view::ModelView;

/// What the store's witnesses say about one instance's row.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Row {
    /// The row's epoch: that of its last grant (0: never granted).
    epoch: u64,
    /// The row's owner after its last write.
    owner: Option<OwnerId>,
    /// The task that sent the grant of `epoch`.
    task: Option<u64>,
    /// The first epoch of the current owner's unbroken tenure: the grant that took the row
    /// from another owner or from nobody. Later re-entrant grants keep it.
    tenure_from: u64,
    /// The grants of epochs below this were forgotten when the instance completed: they
    /// were granted, to whom is no longer known.
    forgotten_below: u64,
}

/// The checker's state.
#[derive(Default)]
pub struct NoDoubleResume {
    rows: PagedMap<InstanceId, Row>,
    /// Every grant witnessed: (instance, epoch) → the owner it went to — but the grant of a
    /// completed instance's current epoch, moved to `completed_grants`.
    grants: BTreeMap<(InstanceId, u64), OwnerId>,
    /// The owner (its number) of the grant of epoch `forgotten_below` of a completed
    /// instance: a tree entry cost some 50 bytes an instance for the whole history, a slot
    /// of a [`PagedMap`] costs 8.
    completed_grants: PagedMap<InstanceId, u64>,
    /// Tasks the executor witnessed aborted.
    aborted: crate::id_bits::IdBits,
    /// Answers of [`NoDoubleResume::granted`] lately, to answer an act under the grant just
    /// made in one look.
    recent: RecentGrants,
}

/// A few (instance, epoch) → owner answers of `granted`, one slot per instance's hash. A
/// grant writes its own answer through; forgetting an instance's superseded grants (the
/// only other change to what `granted` answers) empties the instance's slot.
#[derive(Default)]
struct RecentGrants {
    slots: [Option<(InstanceId, u64, OwnerId)>; RecentGrants::SLOTS],
}

impl RecentGrants {
    const SLOTS: usize = 16;

    fn slot(instance: InstanceId) -> usize {
        instance.0 as usize % Self::SLOTS
    }

    fn get(&self, instance: InstanceId, epoch: u64) -> Option<OwnerId> {
        match self.slots[Self::slot(instance)] {
            Some((i, e, owner)) if i == instance && e == epoch => Some(owner),
            _ => None,
        }
    }

    fn note(&mut self, instance: InstanceId, epoch: u64, owner: OwnerId) {
        self.slots[Self::slot(instance)] = Some((instance, epoch, owner));
    }

    fn forget(&mut self, instance: InstanceId) {
        let slot = &mut self.slots[Self::slot(instance)];
        if slot.is_some_and(|(i, _, _)| i == instance) {
            *slot = None;
        }
    }
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "no-double-resume",
        kind: CheckerKind::Always,
        description:
            "two executions never both act (read, commit, release, migrate) under valid claims of one instance",
        rules: &["R1", "R2", "R10", "R11", "R12", "R15"],
        factory: Arc::new(|| Box::new(NoDoubleResume::default())),
    }
}

/// Which act a store witness reports.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Act {
    Read,
    Commit,
    Release,
    Migration,
}

impl Act {
    fn text(self) -> &'static str {
        match self {
            Act::Read => "read",
            Act::Commit => "commit",
            Act::Release => "release",
            Act::Migration => "migration write",
        }
    }
}

impl NoDoubleResume {
    fn row(&mut self, instance: InstanceId) -> &mut Row {
        self.rows.get_or_insert_with(instance, Row::default)
    }

    /// Judges one act under the claim (`owner`, `epoch`) that the store saw applied.
    fn act(&mut self, instance: InstanceId, act: Act, owner: OwnerId, epoch: u64) -> Check {
        let forgotten = epoch != 0 && epoch < self.row(instance).forgotten_below;
        if !forgotten && (epoch == 0 || self.granted_lately(instance, epoch) != Some(owner)) {
            return Check::Fail(format!(
                "{owner} {} instance {} under epoch {epoch}, which the store never granted it: acting without a claim (R1)",
                act.text(),
                instance.0
            ));
        }
        let row = *self.row(instance);
        if epoch == row.epoch {
            return Check::Ok;
        }
        let holder = row.owner.map_or_else(|| "nobody".to_string(), |o| o.to_string());
        match act {
            Act::Read if row.owner != Some(owner) || epoch < row.tenure_from => Check::Ok,
            Act::Read => Check::Fail(format!(
                "{owner} read instance {} under epoch {epoch} after a re-entrant grant of epoch {} to the same owner: one owner acting in two places (R11)",
                instance.0, row.epoch
            )),
            _ => Check::Fail(format!(
                "the store accepted a {} of instance {} by {owner} under epoch {epoch}, but epoch {} ({holder}) is current: two executions acted under one instance",
                act.text(),
                instance.0,
                row.epoch
            )),
        }
    }
}

impl NoDoubleResume {
    /// [`Self::granted`], from the recent answers when it is among them.
    fn granted_lately(&mut self, instance: InstanceId, epoch: u64) -> Option<OwnerId> {
        if let Some(owner) = self.recent.get(instance, epoch) {
            return Some(owner);
        }
        let owner = self.granted(instance, epoch)?;
        self.recent.note(instance, epoch, owner);
        Some(owner)
    }

    /// The owner the store granted `epoch` of `instance` to, if it was witnessed.
    fn granted(&self, instance: InstanceId, epoch: u64) -> Option<OwnerId> {
        if let Some(&owner) = self.grants.get(&(instance, epoch)) {
            return Some(owner);
        }
        let row = self.rows.get(instance)?;
        (row.forgotten_below == epoch).then(|| self.completed_grants.get(instance).map(|&o| OwnerId(o)))?
    }

    /// Records the grant of `epoch` of `instance` to `owner`.
    fn grant(&mut self, instance: InstanceId, epoch: u64, owner: OwnerId) {
        self.grants.insert((instance, epoch), owner);
        self.recent.note(instance, epoch, owner);
        if self.rows.get(instance).is_some_and(|r| r.forgotten_below == epoch) {
            // The same epoch granted again: the tree holds it now, as it would have.
            self.completed_grants.remove(instance);
        }
    }

    /// The instance completed: drops its grants of epochs below the current one (see the
    /// module comment for why no verdict needs them), and moves the current one's out of
    /// the tree.
    fn forget_superseded_grants(&mut self, instance: InstanceId) {
        self.recent.forget(instance);
        let current = self.row(instance).epoch;
        let superseded: Vec<(InstanceId, u64)> =
            self.grants.range((instance, 0)..(instance, current)).map(|(k, _)| *k).collect();
        for key in superseded {
            self.grants.remove(&key);
        }
        let below = self.row(instance).forgotten_below;
        if current < below {
            return;
        }
        if let Some(owner) = self.grants.remove(&(instance, current)) {
            self.completed_grants.insert(instance, owner.0);
        } else if below < current {
            // The grant of the old `forgotten_below` is superseded.
            self.completed_grants.remove(instance);
        }
        self.row(instance).forgotten_below = current;
    }
}

impl Checker<ModelEvent, ModelView> for NoDoubleResume {
    fn interest(&self) -> u64 {
        use crate::event::tag;
        sutra_sim_core::tag_mask(&[
            tag::CLAIM_GRANTED,
            tag::ROW_WRITTEN,
            tag::STORE_READ,
            tag::COMMIT_ACCEPTED,
            tag::RELEASED,
            tag::MIGRATION_COMMITTED,
            tag::TASK_ABORTED,
            tag::INSTANCE_COMPLETED,
        ])
    }

    fn name(&self) -> &str {
        "no-double-resume"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, _view: &ModelView) -> Check {
        match &event.kind {
            ModelEvent::TaskAborted { task, .. } => {
                self.aborted.insert(*task);
            }
            ModelEvent::InstanceCompleted { instance } => self.forget_superseded_grants(*instance),
            ModelEvent::ClaimGranted { instance, owner, epoch, task, .. } => {
                let aborted = &self.aborted;
                let row = self.rows.get_or_insert_with(*instance, Row::default);
                let holder_aborted = row.task.is_some_and(|t| aborted.contains(t));
                let reentrant = row.owner == Some(*owner);
                if reentrant && task.is_some() && row.task.is_some() && *task != row.task && !holder_aborted {
                    return Check::Fail(format!(
                        "instance {} re-claimed by {owner} from task {} while task {} holds epoch {} under the same owner: one owner id on two lanes (R11)",
                        instance.0,
                        task.unwrap_or_default(),
                        row.task.unwrap_or_default(),
                        row.epoch
                    ));
                }
                if !reentrant {
                    row.tenure_from = *epoch;
                }
                row.epoch = *epoch;
                row.owner = Some(*owner);
                row.task = *task;
                self.grant(*instance, *epoch, *owner);
            }
            ModelEvent::RowWritten { instance, owner, .. } => {
                let row = self.row(*instance);
                // Only grants give a row an owner; every other write clears it.
                if row.owner != *owner {
                    row.owner = *owner;
                    row.task = None;
                }
            }
            ModelEvent::StoreRead { instance, claim_owner, claim_epoch, .. } => {
                return self.act(*instance, Act::Read, *claim_owner, *claim_epoch);
            }
            ModelEvent::CommitAccepted { instance, owner, epoch, .. } => {
                return self.act(*instance, Act::Commit, *owner, *epoch);
            }
            ModelEvent::Released { instance, owner, epoch, released: true, .. } => {
                return self.act(*instance, Act::Release, *owner, *epoch);
            }
            ModelEvent::MigrationCommitted { instance, owner, epoch, done: true, .. } => {
                return self.act(*instance, Act::Migration, *owner, *epoch);
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

    const I: InstanceId = InstanceId(1);

    fn grant(exec: u32, owner: OwnerId, previous: Option<OwnerId>, epoch: u64, task: u64) -> E {
        E::ClaimGranted {
            instance: I,
            exec: ExecId(exec),
            owner,
            process: Some(ProcessId(1)),
            path: ResumePath::Relay,
            previous,
            stale_age_ns: None,
            epoch,
            task: Some(task),
        }
    }

    fn read(exec: u32, owner: OwnerId, claim_epoch: u64, row_epoch: u64, task: u64) -> E {
        E::StoreRead {
            instance: I,
            exec: ExecId(exec),
            claim_owner: owner,
            claim_epoch,
            owner: Some(owner),
            epoch: row_epoch,
            version: 0,
            task: Some(task),
        }
    }

    fn commit(exec: u32, owner: OwnerId, epoch: u64, current_epoch: u64, task: u64) -> E {
        E::CommitAccepted {
            instance: I,
            exec: ExecId(exec),
            owner,
            epoch,
            owner_before: Some(owner),
            current_epoch,
            trigger: TriggerRef::Message(MessageId(1)),
            based_on: 0,
            version_before: 0,
            version_after: 1,
            task: Some(task),
        }
    }

    fn written(owner: Option<OwnerId>, epoch: u64, write: WriteKind) -> E {
        E::RowWritten { instance: I, write, by: None, writer: None, owner, version: 1, epoch, parked: false }
    }

    #[test]
    fn fires_on_a_reentrant_grant_from_another_task() {
        let owner = OwnerId::process(ProcessId(1));
        let history = vec![(1, grant(1, owner, None, 1, 10)), (2, grant(2, owner, Some(owner), 2, 11))];
        assert!(fails(&feed(&mut NoDoubleResume::default(), history)));
    }

    #[test]
    fn a_reentrant_grant_from_the_same_task_is_a_refresh() {
        let owner = OwnerId::lane(ProcessId(1), 0);
        let history = vec![
            (1, grant(1, owner, None, 1, 10)),
            (2, grant(2, owner, Some(owner), 2, 10)),
            (3, read(2, owner, 2, 2, 10)),
            (4, commit(2, owner, 2, 2, 10)),
        ];
        assert_eq!(feed(&mut NoDoubleResume::default(), history), Check::Ok);
    }

    #[test]
    fn fires_on_a_read_without_a_claim() {
        let a = OwnerId::lane(ProcessId(1), 0);
        assert!(fails(&feed(&mut NoDoubleResume::default(), vec![(1, read(1, a, 0, 0, 10))])));
        // An epoch the store granted to someone else is no claim of ours either.
        let b = OwnerId::lane(ProcessId(2), 0);
        let history = vec![(1, grant(1, b, None, 1, 20)), (2, read(2, a, 1, 1, 10))];
        assert!(fails(&feed(&mut NoDoubleResume::default(), history)));
    }

    #[test]
    fn fires_on_an_accepted_commit_under_a_superseded_epoch() {
        // Release-before-commit: the claim was released, someone else claimed, and the
        // unconditional commit under the old epoch still landed.
        let a = OwnerId::lane(ProcessId(1), 0);
        let b = OwnerId::lane(ProcessId(2), 0);
        let history = vec![
            (1, grant(1, a, None, 1, 10)),
            (2, read(1, a, 1, 1, 10)),
            (3, written(None, 1, WriteKind::Release)),
            (4, grant(2, b, None, 2, 20)),
            (5, commit(1, a, 1, 2, 10)),
        ];
        assert!(fails(&feed(&mut NoDoubleResume::default(), history)));
    }

    #[test]
    fn fires_on_an_accepted_release_under_a_superseded_epoch() {
        let owner = OwnerId::process(ProcessId(1));
        let release =
            E::Released { instance: I, exec: ExecId(1), owner, epoch: 1, current_epoch: 2, released: true, task: None };
        // Task witnesses missing: the grant itself passes, the release under epoch 1 does not.
        let mut g2 = grant(2, owner, Some(owner), 2, 11);
        if let E::ClaimGranted { task, .. } = &mut g2 {
            *task = None;
        }
        let history = vec![(1, grant(1, owner, None, 1, 10)), (2, g2), (3, release)];
        assert!(fails(&feed(&mut NoDoubleResume::default(), history)));
    }

    #[test]
    fn fires_on_a_read_superseded_by_the_same_owner() {
        let owner = OwnerId::process(ProcessId(1));
        let mut g2 = grant(2, owner, Some(owner), 2, 11);
        if let E::ClaimGranted { task, .. } = &mut g2 {
            *task = None;
        }
        let history = vec![(1, grant(1, owner, None, 1, 10)), (2, g2), (3, read(1, owner, 1, 2, 10))];
        assert!(fails(&feed(&mut NoDoubleResume::default(), history)));
    }

    /// After an instance completes its superseded grants are forgotten: a forgotten epoch
    /// coming back is judged as before — a write under it fires, a harmless stale read
    /// passes, the current epoch and later grants are judged in full.
    #[test]
    fn a_forgotten_epoch_re_appearing_after_completion_is_still_judged() {
        let a = OwnerId::lane(ProcessId(1), 0);
        let b = OwnerId::lane(ProcessId(2), 0);
        let completed = E::InstanceCompleted { instance: I };
        let finished = || {
            vec![
                (1, grant(1, a, None, 1, 10)),
                (40_000, grant(2, b, Some(a), 2, 20)),
                (40_001, commit(2, b, 2, 2, 20)),
                (40_001, written(None, 2, WriteKind::Commit)),
                (40_001, completed.clone()),
            ]
        };
        let mut checker = NoDoubleResume::default();
        assert_eq!(feed(&mut checker, finished()), Check::Ok);
        assert!(checker.grants.range((I, 0)..(I, 2)).next().is_none(), "epoch 1's grant is forgotten");
        // The stale owner wakes: its read is harmless, its commit under epoch 1 fires.
        let mut h = finished();
        h.push((40_002, read(1, a, 1, 2, 10)));
        assert_eq!(feed(&mut NoDoubleResume::default(), h.clone()), Check::Ok);
        h.push((40_003, commit(1, a, 1, 2, 10)));
        assert!(fails(&feed(&mut NoDoubleResume::default(), h)));
        // Under the current epoch, the owner is still checked (R1).
        let mut h = finished();
        h.push((40_002, read(3, a, 2, 2, 10)));
        assert!(fails(&feed(&mut NoDoubleResume::default(), h)));
        // A duplicate trigger claims the finished row: a new grant, judged in full.
        let mut h = finished();
        h.push((40_010, grant(3, a, None, 3, 11)));
        h.push((40_011, read(3, a, 3, 3, 11)));
        h.push((40_012, grant(4, a, Some(a), 4, 12)));
        assert!(fails(&feed(&mut NoDoubleResume::default(), h)), "one owner id on two lanes");
        let mut h = finished();
        h.push((40_010, grant(3, a, None, 3, 11)));
        h.push((40_011, read(4, b, 3, 3, 21)));
        assert!(fails(&feed(&mut NoDoubleResume::default(), h)), "an epoch granted to someone else");
    }

    #[test]
    fn accepts_a_stale_steal_with_the_slow_owners_read_and_rejected_commit() {
        let a = OwnerId::lane(ProcessId(1), 0);
        let b = OwnerId::lane(ProcessId(2), 1);
        let rejected =
            E::CommitRejected { instance: I, exec: ExecId(1), owner: a, epoch: 1, holder: None, task: Some(10) };
        let history = vec![
            (1, grant(1, a, None, 1, 10)),
            (40_000, grant(2, b, Some(a), 2, 20)),
            (40_001, read(2, b, 2, 2, 20)),
            // The live-but-slow owner wakes and reads: harmless, it cannot write.
            (40_002, read(1, a, 1, 2, 10)),
            (40_003, commit(2, b, 2, 2, 20)),
            (40_003, written(None, 2, WriteKind::Commit)),
            (40_004, rejected),
            (40_005, grant(3, a, None, 3, 10)),
            (40_006, read(3, a, 3, 3, 10)),
        ];
        assert_eq!(feed(&mut NoDoubleResume::default(), history), Check::Ok);
    }
}

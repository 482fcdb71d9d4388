//! exits-release (always; R9, R20, R22): every exit that does not commit releases. Judged
//! from witnesses alone: the store records which task sent each claim (the executor's
//! witness), and an execution lane is one task that runs one execution at a time (R20).
//! So when a task asks for a claim on another instance, its previous execution has ended —
//! and if the store still shows a claim that task was granted, under the very epoch of that
//! grant, the previous execution left without releasing: an early refusal, a validation
//! error, an unexpected failure or a panic that skipped the release, leaving the instance to
//! the sweeper although the process is alive (R22).
//!
//! An administrative migration runs in a handler task of its own, one request per task: when
//! the replica's server witnesses that task ended (`AdminRequestEnded`), every exit of the
//! request has run, and a claim the row still shows under one of its grants was left
//! behind — a validation error, a hung-up client or an early return that skipped the
//! release (R9).
//!
//! **What it forgets.** A row that no claim holds is dropped (a free row matches no
//! grant, exactly as an unknown one), and a task's grant is dropped once its row moves on:
//! freed, or granted again to another task. Row epochs only rise, so a grant the row has
//! left can never be the row's claim again. A task is forgotten with its last grant: the
//! checker holds the claims on rows and the tasks holding them, not every task and
//! instance of a long history.
//!
//! What this cannot see: a leak on a lane's very last execution, or one followed only by work
//! on the same instance (the same owner's re-claim is re-entrant and renews the claim).
//! `eventual-completion` catches a claim still held after the heal.

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::checkers::task_lists::TaskLists;
use crate::dense::DenseMap;
use crate::event::ModelEvent;
use crate::ids::{InstanceId, OwnerId};
use crate::view::ModelView;

/// What the checker knows from the store's witnesses.
#[derive(Default)]
pub struct ExitsRelease {
    /// Each instance's row as last written: owner and claim epoch.
    rows: DenseMap<InstanceId, (Option<OwnerId>, u64)>,
    /// The grants each task received and the row may still show: instance, owner and
    /// epoch. A task with none is not kept.
    grants: TaskLists<(InstanceId, OwnerId, u64)>,
    /// The task of each claimed instance's latest grant (instances whose row is free are
    /// not kept).
    granted_to: DenseMap<InstanceId, u64>,
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "exits-release",
        kind: CheckerKind::Always,
        description: "a task that moves on to another instance holds no claim from its previous execution",
        rules: &["R9", "R20", "R22"],
        factory: Arc::new(|| Box::new(ExitsRelease::default())),
    }
}

impl ExitsRelease {
    /// A claim `task` was granted that the row still shows, on an instance other than
    /// `next`: (instance, owner, epoch).
    fn still_held(&mut self, task: u64, next: InstanceId) -> Option<(InstanceId, OwnerId, u64)> {
        let rows = &self.rows;
        let grants = self.grants.get_mut(task)?;
        // Forget grants the row no longer shows (released, committed, swept, superseded).
        grants.retain(|(instance, owner, epoch)| rows.get(*instance) == Some(&(Some(*owner), *epoch)));
        let held = grants.iter().copied().find(|(instance, _, _)| *instance != next);
        self.grants.remove_if_empty(task);
        held
    }

    /// Drops `task`'s grants of `instance` (its row moved on), and the task with its last.
    fn forget_grants_of(&mut self, task: u64, instance: InstanceId) {
        if let Some(grants) = self.grants.get_mut(task) {
            grants.retain(|(i, _, _)| *i != instance);
            self.grants.remove_if_empty(task);
        }
    }

    /// A row write: a free row is forgotten with the grant that held it.
    fn row_written(&mut self, instance: InstanceId, owner: Option<OwnerId>, epoch: u64) {
        if owner.is_some() {
            self.rows.insert(instance, (owner, epoch));
            return;
        }
        self.rows.remove(instance);
        if let Some(task) = self.granted_to.remove(instance) {
            self.forget_grants_of(task, instance);
        }
    }

    /// A grant of `instance` to `task`: the previous grant's task no longer holds it.
    fn granted(&mut self, task: u64, instance: InstanceId, owner: OwnerId, epoch: u64) {
        if let Some(previous) = self.granted_to.insert(instance, task).filter(|&t| t != task) {
            self.forget_grants_of(previous, instance);
        }
        self.grants.push(task, (instance, owner, epoch));
    }
}

impl ExitsRelease {
    /// Judges the end of an administrative request's handler task: it holds no claim.
    fn request_ended(&mut self, task: u64, status: crate::event::AdminStatus) -> Check {
        let rows = &self.rows;
        let Some(grants) = self.grants.get_mut(task) else { return Check::Ok };
        grants.retain(|(instance, owner, epoch)| rows.get(*instance) == Some(&(Some(*owner), *epoch)));
        let held = grants.first().copied();
        self.grants.remove(task);
        match held {
            Some((instance, owner, epoch)) => Check::Fail(format!(
                "the administrative request of task {task} ended ({status:?}) while the store still shows its claim on instance {} (owner {owner}, epoch {epoch}): an exit that did not release (R9)",
                instance.0
            )),
            None => Check::Ok,
        }
    }
}

impl Checker<ModelEvent, ModelView> for ExitsRelease {
    fn interest(&self) -> u64 {
        sutra_sim_core::tag_mask(&[
            crate::event::tag::CLAIM_GRANTED,
            crate::event::tag::CLAIM_REFUSED,
            crate::event::tag::ROW_WRITTEN,
            crate::event::tag::ADMIN_REQUEST_ENDED,
        ])
    }

    fn name(&self) -> &str {
        "exits-release"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, _view: &ModelView) -> Check {
        let (task, next) = match &event.kind {
            ModelEvent::RowWritten { instance, owner, epoch, .. } => {
                self.row_written(*instance, *owner, *epoch);
                return Check::Ok;
            }
            ModelEvent::AdminRequestEnded { task, status, .. } => return self.request_ended(*task, *status),
            ModelEvent::ClaimGranted { instance, task: Some(task), .. }
            | ModelEvent::ClaimRefused { instance, task: Some(task), .. } => (*task, *instance),
            _ => return Check::Ok,
        };
        if let Some((held, owner, epoch)) = self.still_held(task, next) {
            return Check::Fail(format!(
                "task {task} asked for instance {}'s claim while still holding instance {}'s (owner {owner}, epoch {epoch}): its previous execution ended without releasing (R9)",
                next.0, held.0
            ));
        }
        if let ModelEvent::ClaimGranted { instance, owner, epoch, .. } = &event.kind {
            self.granted(task, *instance, *owner, *epoch);
        }
        Check::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::claims::{granted, owner, row};
    use crate::checkers::testing::{fails, feed};
    use crate::event::WriteKind;
    use crate::ids::{ExecId, ProcessId, ResumePath};

    #[test]
    fn a_lane_that_moves_on_still_holding_a_claim_fails() {
        let history = vec![
            (1, granted(0, 1, 7)),
            (2, row(0, WriteKind::Claim, Some(owner()), 1)),
            // The step failed and the release was skipped; the lane takes its next work.
            (3, granted(1, 1, 7)),
        ];
        assert!(fails(&feed(&mut ExitsRelease::default(), history)));
    }

    #[test]
    fn a_refused_claim_on_the_next_instance_also_shows_the_leak() {
        let refused = ModelEvent::ClaimRefused {
            instance: InstanceId(1),
            exec: ExecId(2),
            owner: owner(),
            path: ResumePath::Relay,
            holder: OwnerId::lane(ProcessId(2), 0),
            task: Some(7),
            delivery: None,
            process: None,
        };
        let history = vec![(1, granted(0, 1, 7)), (2, row(0, WriteKind::Claim, Some(owner()), 1)), (3, refused)];
        assert!(fails(&feed(&mut ExitsRelease::default(), history)));
    }

    #[test]
    fn a_released_claim_lets_the_lane_move_on() {
        let history = vec![
            (1, granted(0, 1, 7)),
            (2, row(0, WriteKind::Claim, Some(owner()), 1)),
            (3, row(0, WriteKind::Release, None, 1)),
            (4, granted(1, 1, 7)),
        ];
        assert_eq!(feed(&mut ExitsRelease::default(), history), Check::Ok);
    }

    #[test]
    fn a_claim_taken_over_by_another_grant_is_not_the_old_task_s_leak() {
        let history = vec![
            (1, granted(0, 1, 7)),
            (2, row(0, WriteKind::Claim, Some(owner()), 1)),
            // Swept, then granted again elsewhere: the row no longer shows task 7's grant.
            (3, row(0, WriteKind::Sweep, None, 1)),
            (4, row(0, WriteKind::Claim, Some(OwnerId::lane(ProcessId(2), 1)), 2)),
            (5, granted(1, 1, 7)),
        ];
        assert_eq!(feed(&mut ExitsRelease::default(), history), Check::Ok);
    }

    fn request_ended(task: u64) -> ModelEvent {
        ModelEvent::AdminRequestEnded {
            process: ProcessId(1),
            task,
            instance: InstanceId(0),
            status: crate::event::AdminStatus::HungUp,
            code: None,
        }
    }

    #[test]
    fn a_migration_request_that_ends_still_holding_its_claim_fails() {
        let history =
            vec![(1, granted(0, 1, 30)), (2, row(0, WriteKind::Claim, Some(owner()), 1)), (3, request_ended(30))];
        assert!(fails(&feed(&mut ExitsRelease::default(), history)));
    }

    #[test]
    fn a_migration_request_that_released_or_wrote_ends_clean() {
        for write in [WriteKind::Release, WriteKind::Migration] {
            let history = vec![
                (1, granted(0, 1, 30)),
                (2, row(0, WriteKind::Claim, Some(owner()), 1)),
                (3, row(0, write, None, 1)),
                (4, request_ended(30)),
            ];
            assert_eq!(feed(&mut ExitsRelease::default(), history), Check::Ok);
        }
    }

    #[test]
    fn different_tasks_each_hold_their_own_claims() {
        let history =
            vec![(1, granted(0, 1, 7)), (2, row(0, WriteKind::Claim, Some(owner()), 1)), (3, granted(1, 1, 8))];
        assert_eq!(feed(&mut ExitsRelease::default(), history), Check::Ok);
    }

    /// A long history's tasks and instances come and go: what left its row is forgotten,
    /// and a leak after all of it is still seen.
    #[test]
    fn rows_and_tasks_that_moved_on_are_forgotten_and_a_later_leak_still_fires() {
        let mut checker = ExitsRelease::default();
        let mut h = Vec::new();
        for i in 0..10_000u32 {
            let task = 100 + u64::from(i);
            h.push((1, granted(i, 1, task)));
            h.push((1, row(i, WriteKind::Claim, Some(owner()), 1)));
            // Every other claim is taken over by another task's grant, the rest released.
            if i % 2 == 0 {
                h.push((2, row(i, WriteKind::Release, None, 1)));
            } else {
                h.push((2, granted(i, 2, 1_000_000 + task)));
                h.push((2, row(i, WriteKind::Claim, Some(owner()), 2)));
                h.push((3, row(i, WriteKind::Commit, None, 2)));
            }
        }
        assert_eq!(feed(&mut checker, h), Check::Ok);
        assert!(checker.grants.is_empty() && checker.rows.is_empty() && checker.granted_to.is_empty());
        let leak = vec![
            (4, granted(20_000, 3, 7)),
            (4, row(20_000, WriteKind::Claim, Some(owner()), 3)),
            (5, granted(20_001, 1, 7)),
        ];
        assert!(fails(&feed(&mut checker, leak)));
    }
}

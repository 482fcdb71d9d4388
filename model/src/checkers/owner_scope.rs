//! owner-scope (always; R11, R15): an owner id is only ever sent by one task — one lane of
//! one process — and a migration's owner id is never sent by a task that sent a lane owner
//! id, nor the other way round.
//!
//! The sender is the executor's witness (`task` on every store request: claim, read,
//! commit, release, migration write). An execution lane is one long-lived task, and each
//! migration runs in a task of its own, so "same owner ⇒ same lane" (R11) becomes "same
//! owner ⇒ same task", which the checker can see on the first request a second lane sends —
//! without waiting for the two lanes to collide on one instance. A migration owner carries
//! the administrative marker ([`OwnerId::is_migration`]); no lane may produce one (R15).
//! An aborted task (`TaskAborted`, the executor's witness) hands its owner id to the next
//! task that sends it: the lane's next worker, which its supervisor starts only after the
//! aborted one ended. A request the aborted task sent before it was aborted may still land
//! after that (a request on the wire outlives its sender): a request naming a task the
//! owner id was handed away from is that task's own, sent while it held the owner id, and
//! is not a second place. Requests without a task witness are not judged. `Swept` names the owner it cleared, not
//! its sender, and is not read.
//!
//! A real bug that would still pass: a lane that hands an execution to a spawned helper
//! task only for steps that never send a store request from it (the helper does the step's
//! external effect while the lane claims and commits) — no request shows the second task.

use std::collections::BTreeMap;
use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::ModelEvent;
use crate::ids::OwnerId;
use crate::view::ModelView;

/// The checker's state: who sent each owner id, and what each task sent.
#[derive(Default)]
pub struct OwnerScope {
    /// Owner id → the one task allowed to send it (the first that did).
    sender: BTreeMap<OwnerId, u64>,
    /// Task → the first owner id it sent.
    sent: BTreeMap<u64, OwnerId>,
    /// Tasks the executor witnessed aborted.
    aborted: crate::id_bits::IdBits,
    /// Owner ids handed from an aborted task to the next, with the aborted task: its
    /// requests sent before the abort may land later.
    retired: std::collections::BTreeSet<(OwnerId, u64)>,
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "owner-scope",
        kind: CheckerKind::Always,
        description:
            "an owner id is sent by one task (one lane of one process); migration and lane owner ids never share a task",
        rules: &["R11", "R15"],
        factory: Arc::new(|| Box::new(OwnerScope::default())),
    }
}

fn kind_text(o: OwnerId) -> &'static str {
    if o.is_migration() {
        "migration"
    } else {
        "lane"
    }
}

impl OwnerScope {
    fn sent_by(&mut self, owner: OwnerId, task: Option<u64>, what: &str) -> Check {
        let Some(task) = task else { return Check::Ok };
        let mut first = *self.sender.entry(owner).or_insert(task);
        if first != task && self.retired.contains(&(owner, task)) {
            // A late request of the aborted worker this owner id was handed away from.
            return Check::Ok;
        }
        if first != task && self.aborted.contains(first) {
            self.sender.insert(owner, task);
            self.retired.insert((owner, first));
            first = task;
        }
        if first != task {
            return Check::Fail(format!(
                "owner {owner} sent a {what} from task {task}, but task {first} sends it too: one owner id in two places (R11)"
            ));
        }
        let earlier = *self.sent.entry(task).or_insert(owner);
        if earlier.is_migration() != owner.is_migration() {
            return Check::Fail(format!(
                "task {task} sent a {what} under {} owner {owner} after sending under {} owner {earlier}: a migration owner and a lane owner from one task (R15)",
                kind_text(owner),
                kind_text(earlier)
            ));
        }
        Check::Ok
    }
}

impl Checker<ModelEvent, ModelView> for OwnerScope {
    fn interest(&self) -> u64 {
        use crate::event::tag;
        sutra_sim_core::tag_mask(&[
            tag::CLAIM_GRANTED,
            tag::CLAIM_REFUSED,
            tag::STORE_READ,
            tag::COMMIT_ACCEPTED,
            tag::COMMIT_REJECTED,
            tag::RELEASED,
            tag::MIGRATION_COMMITTED,
            tag::TASK_ABORTED,
        ])
    }

    fn name(&self) -> &str {
        "owner-scope"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, _view: &ModelView) -> Check {
        match &event.kind {
            ModelEvent::TaskAborted { task, .. } => {
                self.aborted.insert(*task);
                Check::Ok
            }
            ModelEvent::ClaimGranted { owner, task, .. } | ModelEvent::ClaimRefused { owner, task, .. } => {
                self.sent_by(*owner, *task, "claim")
            }
            ModelEvent::StoreRead { claim_owner, task, .. } => self.sent_by(*claim_owner, *task, "read"),
            ModelEvent::CommitAccepted { owner, task, .. } | ModelEvent::CommitRejected { owner, task, .. } => {
                self.sent_by(*owner, *task, "commit")
            }
            ModelEvent::Released { owner, task, .. } => self.sent_by(*owner, *task, "release"),
            ModelEvent::MigrationCommitted { owner, task, .. } => self.sent_by(*owner, *task, "migration write"),
            _ => Check::Ok,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed};
    use crate::event::ModelEvent as E;
    use crate::ids::{ExecId, InstanceId, ProcessId, ResumePath};

    fn claim(instance: u32, owner: OwnerId, task: u64) -> E {
        E::ClaimRefused {
            instance: InstanceId(instance),
            exec: ExecId(instance),
            owner,
            path: ResumePath::Relay,
            holder: OwnerId::lane(ProcessId(9), 0),
            task: Some(task),
            delivery: None,
            process: None,
        }
    }

    fn read(owner: OwnerId, task: u64) -> E {
        E::StoreRead {
            instance: InstanceId(0),
            exec: ExecId(0),
            claim_owner: owner,
            claim_epoch: 1,
            owner: Some(owner),
            epoch: 1,
            version: 0,
            task: Some(task),
        }
    }

    #[test]
    fn fires_when_two_lanes_send_one_owner_id() {
        // A per-process owner: lanes 0 and 1 of p1 (tasks 10 and 11) both send `p1`, on
        // different instances — no collision needed.
        let p = OwnerId::process(ProcessId(1));
        assert!(fails(&feed(&mut OwnerScope::default(), vec![(1, claim(0, p, 10)), (2, claim(1, p, 11))])));
    }

    #[test]
    fn fires_when_a_migration_sends_a_lane_owner_id() {
        let lane = OwnerId::lane(ProcessId(1), 0);
        // The lane's task 10 and the migration's task 30 both send the lane's owner id.
        assert!(fails(&feed(&mut OwnerScope::default(), vec![(1, claim(0, lane, 10)), (2, read(lane, 30))])));
    }

    #[test]
    fn fires_when_one_task_sends_a_migration_and_a_lane_owner_id() {
        let lane = OwnerId::lane(ProcessId(1), 0);
        let admin = OwnerId::migration(4);
        assert!(fails(&feed(&mut OwnerScope::default(), vec![(1, claim(0, admin, 30)), (2, claim(0, lane, 30))])));
    }

    #[test]
    fn accepts_a_late_request_of_an_aborted_worker_after_the_next_worker_took_over() {
        let lane = OwnerId::lane(ProcessId(1), 0);
        let aborted = E::TaskAborted { replica: 0, process: ProcessId(1), lane: 0, task: 10 };
        let history = vec![(1, claim(0, lane, 10)), (2, aborted), (3, claim(0, lane, 11)), (4, read(lane, 10))];
        assert_eq!(feed(&mut OwnerScope::default(), history.clone()), Check::Ok);
        // Not for another lane's task, nor once the aborted task was never the owner's.
        let mut other = history.clone();
        other.push((5, read(lane, 12)));
        assert!(fails(&feed(&mut OwnerScope::default(), other)));
        let never = vec![
            (1, claim(0, lane, 11)),
            (2, E::TaskAborted { replica: 0, process: ProcessId(1), lane: 1, task: 10 }),
            (3, read(lane, 10)),
        ];
        assert!(fails(&feed(&mut OwnerScope::default(), never)));
    }

    #[test]
    fn accepts_lanes_and_migrations_each_with_their_own_owner() {
        let history = vec![
            (1, claim(0, OwnerId::lane(ProcessId(1), 0), 10)),
            (2, claim(1, OwnerId::lane(ProcessId(1), 1), 11)),
            (3, claim(2, OwnerId::lane(ProcessId(1), 0), 10)),
            (4, claim(0, OwnerId::migration(1), 30)),
            (5, read(OwnerId::migration(1), 30)),
            (6, claim(0, OwnerId::migration(2), 31)),
            (7, read(OwnerId::lane(ProcessId(1), 1), 11)),
        ];
        assert_eq!(feed(&mut OwnerScope::default(), history), Check::Ok);
    }
}

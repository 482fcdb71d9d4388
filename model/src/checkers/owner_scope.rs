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
//! **What it forgets.** Where the history declares how long a store request takes at most
//! (`store_call_latency_max_ns`, [`ModelView::store_call_latency`]), a task witnessed ended
//! — aborted (`TaskAborted`), its admin request's handler ended (`AdminRequestEnded`), its
//! process crashed or stopped (the process its claims name) — is forgotten once that long
//! has passed: no request of it can land any more. The owner ids it was the sender of stay
//! taken, as bits: any task that sends one later is flagged, as it would have been (only the
//! message no longer names the forgotten task) — unless the task was aborted, whose owner id
//! the lane's next worker takes over, as before. So a long history's memory follows the
//! tasks alive, not every task it ever saw, plus about a bit per owner id ended (turned so
//! that a process's lane owner ids do not each take a word: [`OwnerBits`]). Without the
//! declaration (and in a simulation) nothing is forgotten.
//!
//! A real bug that would still pass: a lane that hands an execution to a spawned helper
//! task only for steps that never send a store request from it (the helper does the step's
//! external effect while the lane claims and commits) — no request shows the second task.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::ModelEvent;
use crate::id_bits::IdBits;
use crate::ids::{OwnerId, ProcessId};
use crate::view::ModelView;

/// The checker's state: who sent each owner id, and what each task sent.
#[derive(Default)]
pub struct OwnerScope {
    /// Owner id → the one task allowed to send it (the first that did).
    sender: BTreeMap<OwnerId, u64>,
    /// Task → the first owner id it sent.
    sent: BTreeMap<u64, OwnerId>,
    /// Tasks the executor witnessed aborted.
    aborted: IdBits,
    /// Owner ids handed from an aborted task to the next, with the aborted task: its
    /// requests sent before the abort may land later.
    retired: BTreeSet<(OwnerId, u64)>,
    /// Only where the history declares its store's call latency: what is needed to forget
    /// a task once none of its requests can land any more.
    ends: Ends,
    /// Pairs judged fine lately, to answer a repeat in one look.
    recent: Recent,
}

/// A few (owner id, task) pairs judged fine lately — the task is the owner id's sender, and
/// the first owner id the task sent is of the same kind — one slot per owner id's hash.
/// Only forgetting a task and handing an owner id to another task change either fact
/// (`sender` and `sent` are written nowhere else, and never for a pair already there), so
/// those clear it; until then a pair held here is judged fine again, as the trees would.
#[derive(Default)]
struct Recent {
    slots: [Option<(OwnerId, u64)>; Recent::SLOTS],
}

impl Recent {
    const SLOTS: usize = 16;

    fn slot(owner: OwnerId) -> usize {
        (owner.0.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60) as usize % Self::SLOTS
    }

    fn holds(&self, owner: OwnerId, task: u64) -> bool {
        self.slots[Self::slot(owner)] == Some((owner, task))
    }

    fn note(&mut self, owner: OwnerId, task: u64) {
        self.slots[Self::slot(owner)] = Some((owner, task));
    }

    fn clear(&mut self) {
        self.slots = [None; Self::SLOTS];
    }
}

/// When tasks end, and what to forget when their last requests have landed.
#[derive(Default)]
struct Ends {
    /// Task → the owner ids it became the sender of (some perhaps handed on since).
    owned: BTreeMap<u64, Vec<OwnerId>>,
    /// Process → its tasks not yet ended, as its claims name them.
    tasks_of: BTreeMap<ProcessId, Vec<u64>>,
    /// Tasks witnessed ended, in the order they ended, with the instant (ns) after which none
    /// of their requests can land.
    ending: VecDeque<(u64, u64)>,
    /// Owner ids whose sender ended (not aborted) and whose requests have all landed: no
    /// task may send them again.
    gone: OwnerBits,
    /// Whether the ends are followed at all (the history declares its store's latency).
    tracking: bool,
    /// The latest instant witnessed (ns): a task's end is dated from it, so that `ending`
    /// stays in order whatever the clocks of the writers.
    now_ns: u64,
}

impl Ends {
    /// `task` became the sender of `owner`.
    fn own(&mut self, task: u64, owner: OwnerId) {
        if self.tracking {
            self.owned.entry(task).or_default().push(owner);
        }
    }
}

/// A set of owner ids as bits. A simulation's lane owner id holds its process above its
/// lane ([`OwnerId::lane`]), so as a plain number each process's owner ids would take a
/// word of their own; turned (the lane on top), one lane's owner ids of processes numbered
/// from a counter sit side by side, about a bit each. Owner ids with a marker or a string's
/// number (anything above the 48 bits a process and a lane take) are kept as they are.
#[derive(Default)]
struct OwnerBits {
    /// Process-and-lane owner ids, turned.
    turned: IdBits,
    /// All others, as they are.
    plain: IdBits,
}

impl OwnerBits {
    /// The bits of a process and a lane.
    const TURNED_BITS: u32 = 48;
    /// The lane's bits, at the bottom of the owner id.
    const LANE_BITS: u32 = 16;

    fn insert(&mut self, owner: OwnerId) {
        match Self::turned(owner) {
            Some(key) => self.turned.insert(key),
            None => self.plain.insert(owner.0),
        };
    }

    fn contains(&self, owner: OwnerId) -> bool {
        match Self::turned(owner) {
            Some(key) => self.turned.contains(key),
            None => self.plain.contains(owner.0),
        }
    }

    /// The turned key of a process-and-lane owner id (a one-to-one map on them).
    fn turned(owner: OwnerId) -> Option<u64> {
        (owner.0 >> Self::TURNED_BITS == 0).then(|| owner.0.rotate_right(Self::LANE_BITS))
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.turned.len() + self.plain.len()
    }

    #[cfg(test)]
    fn words(&self) -> usize {
        self.turned.words() + self.plain.words()
    }
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
        if self.recent.holds(owner, task) {
            // The common case: the owner id's sender sending again, judged fine before.
            return Check::Ok;
        }
        if !self.sender.contains_key(&owner) && self.ends.gone.contains(owner) {
            return Check::Fail(format!(
                "owner {owner} sent a {what} from task {task}, but a task that ended, its requests all landed, sent it: one owner id in two places (R11)"
            ));
        }
        let mut first = *self.sender.entry(owner).or_insert_with(|| {
            self.ends.own(task, owner);
            task
        });
        if first != task && self.retired.contains(&(owner, task)) {
            // A late request of the aborted worker this owner id was handed away from.
            return Check::Ok;
        }
        if first != task && self.aborted.contains(first) {
            self.recent.clear();
            self.sender.insert(owner, task);
            self.ends.own(task, owner);
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
        self.recent.note(owner, task);
        Check::Ok
    }

    /// `task` was witnessed ended: its requests may still land for the declared latency.
    fn ended(&mut self, task: u64, latency_ns: u64) {
        let due = self.ends.now_ns.saturating_add(latency_ns);
        self.ends.ending.push_back((due, task));
    }

    /// Forgets every task whose requests have all landed by now.
    fn forget_landed(&mut self) {
        while let Some(&(due, task)) = self.ends.ending.front() {
            if due >= self.ends.now_ns {
                return;
            }
            self.ends.ending.pop_front();
            self.forget(task);
        }
    }

    /// Forgets `task`, which sends nothing any more: the owner ids it was the sender of are
    /// gone for good — or free for the next task, if it was aborted (the lane's next worker
    /// takes them over, as before).
    fn forget(&mut self, task: u64) {
        self.recent.clear();
        let aborted = self.aborted.remove(task);
        for owner in self.ends.owned.remove(&task).unwrap_or_default() {
            self.retired.remove(&(owner, task));
            if self.sender.get(&owner) != Some(&task) {
                continue;
            }
            self.sender.remove(&owner);
            if !aborted {
                self.ends.gone.insert(owner);
            }
        }
        self.sent.remove(&task);
    }

    /// Notes the process a claim names for its task (a crash of it ends the task), and
    /// drops the process's tasks forgotten since.
    fn of_process(&mut self, process: Option<ProcessId>, task: Option<u64>) {
        let (Some(process), Some(task)) = (process, task) else { return };
        let (owned, sent) = (&self.ends.owned, &self.sent);
        let tasks = self.ends.tasks_of.entry(process).or_default();
        if !tasks.contains(&task) {
            tasks.retain(|t| owned.contains_key(t) || sent.contains_key(t));
            tasks.push(task);
        }
    }

    /// Bookkeeping of the ends of tasks, where the history declares its store's latency.
    fn note_ends(&mut self, event: &Event<ModelEvent>, latency_ns: u64) {
        self.ends.tracking = true;
        self.ends.now_ns = self.ends.now_ns.max(event.time.as_nanos());
        match &event.kind {
            ModelEvent::ClaimGranted { process, task, .. } | ModelEvent::ClaimRefused { process, task, .. } => {
                self.of_process(*process, *task)
            }
            ModelEvent::TaskAborted { task, .. } | ModelEvent::AdminRequestEnded { task, .. } => {
                self.ended(*task, latency_ns)
            }
            ModelEvent::ReplicaCrashed { process, .. } | ModelEvent::ReplicaStopped { process, .. } => {
                for task in self.ends.tasks_of.remove(process).unwrap_or_default() {
                    self.ended(task, latency_ns);
                }
            }
            _ => {}
        }
        self.forget_landed();
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
            // The ends of tasks: read only to forget them (`check` does not ask a history
            // to witness them).
            tag::ADMIN_REQUEST_ENDED,
            tag::REPLICA_CRASHED,
            tag::REPLICA_STOPPED,
        ])
    }

    fn name(&self) -> &str {
        "owner-scope"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, view: &ModelView) -> Check {
        if let Some(latency) = view.store_call_latency() {
            self.note_ends(event, sutra_sim_core::time::duration_nanos(latency));
        }
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
    use crate::checkers::testing::{fails, feed, feed_with};
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

    /// A view of a history that declares its store's call latency: 100 ms.
    fn declaring() -> ModelView {
        crate::checkers::testing::view().with_store_call_latency(Some(std::time::Duration::from_millis(100)))
    }

    fn granted(owner: OwnerId, process: u32, task: u64) -> E {
        E::ClaimGranted {
            instance: InstanceId(0),
            exec: ExecId(0),
            owner,
            process: Some(ProcessId(process)),
            path: ResumePath::Relay,
            previous: None,
            stale_age_ns: None,
            epoch: 1,
            task: Some(task),
        }
    }

    fn crashed(process: u32) -> E {
        E::ReplicaCrashed { replica: 0, process: ProcessId(process) }
    }

    #[test]
    fn an_owner_id_of_a_task_forgotten_after_its_process_died_is_still_taken() {
        let lane = OwnerId::lane(ProcessId(1), 0);
        // p1's lane (task 10) dies; 200 ms later, past the declared 100 ms, task 20 sends its
        // owner id: the task is forgotten, its owner id is not.
        let history = vec![(1, granted(lane, 1, 10)), (2, crashed(1)), (300, read(lane, 20))];
        let mut checker = OwnerScope::default();
        assert!(fails(&feed_with(&mut checker, history.clone(), &declaring())));
        assert!(checker.sent.is_empty() && checker.ends.owned.is_empty(), "task 10 forgotten");
        // Within the declared latency the request is task 10's own, late: judged as before.
        let late = vec![(1, granted(lane, 1, 10)), (2, crashed(1)), (50, read(lane, 10))];
        assert_eq!(feed_with(&mut OwnerScope::default(), late, &declaring()), Check::Ok);
        // Without the declaration nothing is forgotten and the verdict is the same.
        assert!(fails(&feed(&mut OwnerScope::default(), history)));
    }

    #[test]
    fn an_aborted_task_forgotten_hands_its_owner_id_on_as_before() {
        let lane = OwnerId::lane(ProcessId(1), 0);
        let aborted = E::TaskAborted { replica: 0, process: ProcessId(1), lane: 0, task: 10 };
        let history = vec![(1, granted(lane, 1, 10)), (2, aborted), (300, read(lane, 11)), (301, read(lane, 11))];
        let mut checker = OwnerScope::default();
        assert_eq!(feed_with(&mut checker, history, &declaring()), Check::Ok);
        assert_eq!(checker.sender.get(&lane), Some(&11));
        assert!(checker.aborted.is_empty() && checker.retired.is_empty(), "task 10 forgotten");
    }

    #[test]
    fn ended_migrations_are_forgotten_and_their_owner_ids_stay_taken() {
        let mut history = Vec::new();
        for op in 0..1_000u32 {
            let task = 100 + u64::from(op);
            history.push((u64::from(op) * 10, granted(OwnerId::migration(op), 1, task)));
            let ended = E::AdminRequestEnded {
                process: ProcessId(1),
                task,
                instance: InstanceId(0),
                status: crate::event::AdminStatus::Migrated,
                code: None,
            };
            history.push((u64::from(op) * 10 + 1, ended));
        }
        let mut checker = OwnerScope::default();
        assert_eq!(feed_with(&mut checker, history.clone(), &declaring()), Check::Ok);
        assert!(checker.sender.len() <= 20 && checker.sent.len() <= 20, "{} senders", checker.sender.len());
        assert!(checker.ends.tasks_of.values().map(Vec::len).sum::<usize>() <= 20);
        // A later task sending an old migration's owner id is flagged all the same.
        history.push((20_000, read(OwnerId::migration(3), 9_999)));
        assert!(fails(&feed_with(&mut OwnerScope::default(), history, &declaring())));
    }

    #[test]
    fn owner_ids_of_thousands_of_dead_processes_cost_about_a_bit_each_and_stay_taken() {
        let mut history = Vec::new();
        for p in 0..4_000u32 {
            let at = u64::from(p) * 10;
            for lane in 0..2u16 {
                let task = (u64::from(p) << 32) | u64::from(lane);
                history.push((at, granted(OwnerId::lane(ProcessId(p), lane), p, task)));
            }
            history.push((at + 1, crashed(p)));
        }
        let mut checker = OwnerScope::default();
        assert_eq!(feed_with(&mut checker, history.clone(), &declaring()), Check::Ok);
        assert!(checker.ends.gone.len() >= 7_950, "{} owner ids gone", checker.ends.gone.len());
        assert!(checker.ends.gone.words() <= 2 * (4_000 / 64) + 4, "{} words", checker.ends.gone.words());
        assert!(checker.sender.len() <= 40 && checker.ends.tasks_of.len() <= 20);
        // Another task sending a dead process's owner id is flagged all the same.
        history.push((50_000, read(OwnerId::lane(ProcessId(17), 1), 9)));
        assert!(fails(&feed_with(&mut OwnerScope::default(), history, &declaring())));
    }
}

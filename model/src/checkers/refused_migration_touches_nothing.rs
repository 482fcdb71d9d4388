//! refused-migration-touches-nothing (always; R6): a migration whose claim is refused has
//! read and written nothing — in particular, it never entered a replica's binding table.
//!
//! Why: R6 says a refused migration answers 409 *having read and written nothing*. The
//! store witnesses its own rows (refusal-contract judges those); the binding table is the
//! migration's other write. The executor witnesses which task submitted each binding-table
//! item (`Lane { Submitted, task }`) and which task sent each store request
//! (`ClaimRefused { task }`); every migration runs in a task of its own, so a refused
//! migration's task that submitted binding-table work touched the table before it owned
//! the instance.
//!
//! And after it: a request answered 409 (the server's `AdminRequestEnded` witness, status
//! `Conflict`) sent the store nothing more after the refusal it answered with (no read, no
//! write, no further claim) and entered no binding table. A refusal whose reply was lost
//! (`CallStruck`, `ReplyLost`, on that task's claim) was never heard: the client sends its
//! claim again, and what follows is the answer to that; a request whose client hung up
//! while the refusal was on its way answered no 409, and its exit path may look again.
//!
//! **What it keeps.** A refused migration's task may turn out to have submitted at any time
//! before, so every submitting task is remembered while it may still be refused — as bits
//! ([`crate::id_bits::IdBits`]). A refused task is dropped once its request ends or its
//! refusal's reply is lost.
//!
//! **What it forgets.** Where the history declares how long a store request takes at most
//! (`store_call_latency_max_ns`, [`ModelView::store_call_latency`]), a submitting task
//! witnessed ended — its admin request's handler ended (`AdminRequestEnded`), it was aborted
//! (`TaskAborted`), or the process it submitted from crashed or stopped — is forgotten once
//! that long has passed since: it sends nothing more, its last claim has landed, so no
//! refusal can name it any more (a task's number names no other task, ever). No verdict
//! changes; memory follows the tasks alive, not every task that ever rebound an instance.
//! Without the declaration (and in a simulation) nothing is forgotten.
//!
//! A real bug that would still pass: a refused migration that hands its rebind to another
//! task (a spawned helper): the submitter is then not the task the store saw.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::{CallFault, Component, LaneAction, ModelEvent, StoreCall};
use crate::ids::{ProcessId, ResumePath};
use crate::view::ModelView;

/// Tasks that submitted work to a binding table.
#[derive(Default)]
pub struct RefusedMigrationTouchesNothing {
    /// Invariant: every task number seen submitting an item to any binding-table lane.
    submitters: crate::id_bits::IdBits,
    /// Tasks whose migration claim was refused: the refused instance, and the first thing
    /// the task did after the refusal, if anything — a violation if the request then
    /// answers 409.
    refused: BTreeMap<u64, (crate::ids::InstanceId, Option<&'static str>)>,
    /// Only where the history declares its store's call latency: the submitters' ends.
    ends: Ends,
}

/// When submitting tasks end, and when to forget them.
#[derive(Default)]
struct Ends {
    /// Process → its submitting tasks not yet witnessed ended.
    tasks_of: BTreeMap<ProcessId, Vec<u64>>,
    /// Submitters witnessed ended, in the order they ended, with the instant (ns) after which
    /// none of their requests can land.
    ending: VecDeque<(u64, u64)>,
    /// The latest instant witnessed (ns): ends are dated from it, so `ending` stays in order.
    now_ns: u64,
}

/// The task the store names as the sender of the request it served, if `event` is one.
fn store_request_sender(event: &ModelEvent) -> Option<u64> {
    use ModelEvent::*;
    match event {
        ClaimGranted { task, .. }
        | ClaimRefused { task, .. }
        | StoreRead { task, .. }
        | CommitAccepted { task, .. }
        | CommitRejected { task, .. }
        | Released { task, .. }
        | MigrationCommitted { task, .. } => *task,
        _ => None,
    }
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "refused-migration-touches-nothing",
        kind: CheckerKind::Always,
        description: "a migration refused its claim never entered a binding table",
        rules: &["R6"],
        factory: Arc::new(|| Box::new(RefusedMigrationTouchesNothing::default())),
    }
}

impl Checker<ModelEvent, ModelView> for RefusedMigrationTouchesNothing {
    fn interest(&self) -> u64 {
        use crate::event::tag;
        sutra_sim_core::tag_mask(&[
            tag::LANE,
            tag::CLAIM_REFUSED,
            tag::CLAIM_GRANTED,
            tag::STORE_READ,
            tag::COMMIT_ACCEPTED,
            tag::COMMIT_REJECTED,
            tag::RELEASED,
            tag::MIGRATION_COMMITTED,
            tag::CALL_STRUCK,
            tag::ADMIN_REQUEST_ENDED,
            // A submitter's end (forgotten once its requests have landed).
            tag::TASK_ABORTED,
            tag::REPLICA_CRASHED,
            tag::REPLICA_STOPPED,
        ])
    }

    fn name(&self) -> &str {
        "refused-migration-touches-nothing"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, view: &ModelView) -> Check {
        let verdict = self.judge(event);
        if let Some(latency) = view.store_call_latency() {
            self.follow_ends(event, u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX));
        }
        verdict
    }
}

impl RefusedMigrationTouchesNothing {
    /// Entries and words the books hold (for tests: what must not grow with the history).
    #[cfg(test)]
    fn books(&self) -> usize {
        let ends = &self.ends;
        self.submitters.words() + self.refused.len() + ends.tasks_of.len() + ends.ending.len()
    }

    /// The verdict on `event`, with the submitters and refusals brought up to date.
    fn judge(&mut self, event: &Event<ModelEvent>) -> Check {
        let after = self.after_refusal(&event.kind);
        if after != Check::Ok {
            return after;
        }
        if let ModelEvent::ClaimRefused { instance, path: ResumePath::Migration, task: Some(task), .. } = &event.kind {
            self.refused.insert(*task, (*instance, None));
        }
        match &event.kind {
            ModelEvent::Lane {
                component: Component::Bindings,
                action: LaneAction::Submitted(_),
                task: Some(task),
                ..
            } => {
                self.submitters.insert(*task);
                Check::Ok
            }
            ModelEvent::ClaimRefused { instance, exec, path: ResumePath::Migration, task: Some(task), .. }
                if self.submitters.contains(*task) =>
            {
                Check::Fail(format!(
                    "migration {} of instance {} was refused its claim (409) after its task {task} had \
                     entered a binding table: a refused migration must have read and written nothing",
                    exec.0, instance.0
                ))
            }
            _ => Check::Ok,
        }
    }

    /// Notes the submitters that start and end with `event`, and forgets those ended more
    /// than `latency_ns` ago.
    fn follow_ends(&mut self, event: &Event<ModelEvent>, latency_ns: u64) {
        let ends = &mut self.ends;
        ends.now_ns = ends.now_ns.max(event.time.as_nanos());
        let due = ends.now_ns.saturating_add(latency_ns);
        match &event.kind {
            ModelEvent::Lane { process, action: LaneAction::Submitted(_), task: Some(task), .. }
                if self.submitters.contains(*task) =>
            {
                let tasks = ends.tasks_of.entry(*process).or_default();
                if !tasks.contains(task) {
                    tasks.push(*task);
                }
            }
            ModelEvent::AdminRequestEnded { process, task, .. } | ModelEvent::TaskAborted { process, task, .. } => {
                if let Some(tasks) = ends.tasks_of.get_mut(process) {
                    if let Some(at) = tasks.iter().position(|t| t == task) {
                        tasks.swap_remove(at);
                        ends.ending.push_back((*task, due));
                    }
                }
            }
            ModelEvent::ReplicaCrashed { process, .. } | ModelEvent::ReplicaStopped { process, .. } => {
                let tasks = ends.tasks_of.remove(process).unwrap_or_default();
                ends.ending.extend(tasks.into_iter().map(|task| (task, due)));
            }
            _ => {}
        }
        while let Some(&(task, due)) = ends.ending.front() {
            if due >= ends.now_ns {
                break;
            }
            ends.ending.pop_front();
            self.submitters.remove(task);
        }
    }

    /// Notes what the tasks of refused migrations do after their refusal, and judges the
    /// request's end: a 409 answered after acting.
    fn after_refusal(&mut self, event: &ModelEvent) -> Check {
        if self.refused.is_empty() {
            return Check::Ok;
        }
        let actor = match event {
            ModelEvent::CallStruck {
                call: StoreCall::Claim, fault: CallFault::ReplyLost, task: Some(task), ..
            } => {
                self.refused.remove(task);
                return Check::Ok;
            }
            ModelEvent::AdminRequestEnded { task, status, .. } => {
                let Some((instance, Some(act))) = self.refused.remove(task) else { return Check::Ok };
                if *status != crate::event::AdminStatus::Conflict {
                    return Check::Ok;
                }
                return Check::Fail(format!(
                    "task {task}'s migration of instance {} answered 409 after its claim was refused, but it acted after the refusal ({act}): a refused migration must have read and written nothing after its refusal too (R6)",
                    instance.0
                ));
            }
            ModelEvent::Lane { action: LaneAction::Submitted(_), task, .. } => *task,
            other => store_request_sender(other),
        };
        let Some(task) = actor else { return Check::Ok };
        if let Some((_, act)) = self.refused.get_mut(&task) {
            use sutra_sim_core::EventKind;
            act.get_or_insert(event.name());
        }
        Check::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed, feed_with};
    use crate::ids::{ExecId, InstanceId, OwnerId, ProcessId};

    fn submitted(task: u64) -> ModelEvent {
        ModelEvent::Lane {
            process: ProcessId(1),
            component: Component::Bindings,
            action: LaneAction::Submitted(1),
            task: Some(task),
        }
    }

    fn refused(task: u64, path: ResumePath) -> ModelEvent {
        ModelEvent::ClaimRefused {
            instance: InstanceId(2),
            exec: ExecId(9),
            owner: OwnerId::lane(ProcessId(1), 0),
            path,
            holder: OwnerId::lane(ProcessId(1), 1),
            task: Some(task),
            delivery: None,
            process: None,
        }
    }

    #[test]
    fn fires_when_a_refused_migration_had_entered_the_binding_table() {
        assert!(fails(&feed(
            &mut RefusedMigrationTouchesNothing::default(),
            vec![(1, submitted(40)), (2, refused(40, ResumePath::Migration))]
        )));
    }

    #[test]
    fn a_refused_migration_that_touched_nothing_passes() {
        let c = feed(
            &mut RefusedMigrationTouchesNothing::default(),
            vec![(1, submitted(41)), (2, refused(40, ResumePath::Migration))],
        );
        assert_eq!(c, Check::Ok);
    }

    fn read_by(task: u64) -> ModelEvent {
        let owner = OwnerId::migration(1);
        ModelEvent::StoreRead {
            instance: InstanceId(2),
            exec: ExecId(9),
            claim_owner: owner,
            claim_epoch: 1,
            owner: Some(owner),
            epoch: 1,
            version: 0,
            task: Some(task),
        }
    }

    fn ended(task: u64, status: crate::event::AdminStatus) -> ModelEvent {
        ModelEvent::AdminRequestEnded { process: ProcessId(1), task, instance: InstanceId(2), status, code: None }
    }

    #[test]
    fn fires_when_a_migration_answers_409_after_reading_past_its_refusal() {
        assert!(fails(&feed(
            &mut RefusedMigrationTouchesNothing::default(),
            vec![
                (1, refused(40, ResumePath::Migration)),
                (2, read_by(40)),
                (3, ended(40, crate::event::AdminStatus::Conflict))
            ]
        )));
    }

    #[test]
    fn fires_when_a_migration_answers_409_after_entering_the_binding_table_past_its_refusal() {
        assert!(fails(&feed(
            &mut RefusedMigrationTouchesNothing::default(),
            vec![
                (1, refused(40, ResumePath::Migration)),
                (2, submitted(40)),
                (3, ended(40, crate::event::AdminStatus::Conflict))
            ]
        )));
    }

    #[test]
    fn a_hung_up_request_whose_exit_path_looked_again_answered_no_409() {
        let c = feed(
            &mut RefusedMigrationTouchesNothing::default(),
            vec![
                (1, refused(40, ResumePath::Migration)),
                (2, read_by(40)),
                (3, ended(40, crate::event::AdminStatus::HungUp)),
            ],
        );
        assert_eq!(c, Check::Ok);
    }

    #[test]
    fn a_refusal_whose_reply_was_lost_was_never_heard() {
        let lost = ModelEvent::CallStruck {
            instance: InstanceId(2),
            exec: ExecId(9),
            call: StoreCall::Claim,
            fault: CallFault::ReplyLost,
            task: Some(40),
        };
        let c = feed(
            &mut RefusedMigrationTouchesNothing::default(),
            vec![(1, refused(40, ResumePath::Migration)), (2, lost), (3, read_by(40)), (4, read_by(41))],
        );
        assert_eq!(c, Check::Ok);
    }

    #[test]
    fn a_refused_relay_from_a_task_that_uses_the_table_passes() {
        // The consumer and the lanes enter the table for every delivery; their refusals are not R6's.
        let c = feed(
            &mut RefusedMigrationTouchesNothing::default(),
            vec![(1, submitted(40)), (2, refused(40, ResumePath::Relay))],
        );
        assert_eq!(c, Check::Ok);
    }

    fn submitted_by(process: ProcessId, task: u64) -> ModelEvent {
        ModelEvent::Lane { process, component: Component::Bindings, action: LaneAction::Submitted(1), task: Some(task) }
    }

    fn declaring() -> ModelView {
        crate::checkers::testing::view().with_store_call_latency(Some(std::time::Duration::from_millis(100)))
    }

    /// The end of `task`'s admin request on `process`: instance 2 migrated.
    fn migrated(process: ProcessId, task: u64) -> ModelEvent {
        ModelEvent::AdminRequestEnded {
            process,
            task,
            instance: InstanceId(2),
            status: crate::event::AdminStatus::Migrated,
            code: None,
        }
    }

    /// `runs` processes, one a second, each with a lane task and a migration task that rebind
    /// an instance; the migration's request ends, then the process crashes.
    fn many_processes(runs: u32) -> Vec<(u64, ModelEvent)> {
        let mut history = Vec::new();
        for run in 0..runs {
            let (process, t, lane, migration) =
                (ProcessId(run + 10), u64::from(run) * 1_000, u64::from(run) << 33, (u64::from(run) << 33) + 1);
            history.push((t + 1, submitted_by(process, lane)));
            history.push((t + 2, submitted_by(process, migration)));
            let end = migrated(process, migration);
            history.push((t + 3, end));
            history.push((t + 4, ModelEvent::ReplicaCrashed { replica: 0, process }));
        }
        history
    }

    #[test]
    fn a_long_history_of_ended_submitters_leaves_small_books_where_the_latency_is_declared() {
        let runs = 4_000;
        let mut checker = RefusedMigrationTouchesNothing::default();
        assert_eq!(feed_with(&mut checker, many_processes(runs), &declaring()), Check::Ok);
        assert!(checker.books() <= 8, "{} entries and words held after {runs} processes", checker.books());
        let mut keeping = RefusedMigrationTouchesNothing::default();
        assert_eq!(feed(&mut keeping, many_processes(runs)), Check::Ok);
        assert!(keeping.books() >= runs as usize, "without the declaration every submitter is kept (a word each)");
    }

    #[test]
    fn a_refusal_landing_within_the_latency_after_its_submitter_ended_is_still_flagged() {
        let runs = 1_000;
        let late = u64::from(runs) * 1_000;
        let (process, migration, lane) = (ProcessId(1), 1 << 40, (1 << 40) + 1);
        let mut history = many_processes(runs);
        history.push((late, submitted_by(process, migration)));
        let end = migrated(process, migration);
        history.push((late + 1, end));
        history.push((late + 1 + 99, refused(migration, ResumePath::Migration)));
        assert!(fails(&feed_with(&mut RefusedMigrationTouchesNothing::default(), history, &declaring())));

        let mut history = many_processes(runs);
        history.push((late, submitted_by(process, lane)));
        history.push((late + 1, ModelEvent::ReplicaCrashed { replica: 0, process }));
        history.push((late + 1 + 99, refused(lane, ResumePath::Migration)));
        assert!(fails(&feed_with(&mut RefusedMigrationTouchesNothing::default(), history, &declaring())));
    }
}

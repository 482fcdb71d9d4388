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
//! A real bug that would still pass: a refused migration that hands its rebind to another
//! task (a spawned helper): the submitter is then not the task the store saw.

use std::collections::BTreeSet;
use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::{Component, LaneAction, ModelEvent};
use crate::ids::ResumePath;
use crate::view::ModelView;

/// Tasks that submitted work to a binding table.
#[derive(Default)]
pub struct RefusedMigrationTouchesNothing {
    /// Invariant: every task number seen submitting an item to any binding-table lane.
    submitters: BTreeSet<u64>,
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
        sutra_sim_core::tag_mask(&[crate::event::tag::LANE, crate::event::tag::CLAIM_REFUSED])
    }

    fn name(&self) -> &str {
        "refused-migration-touches-nothing"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, _view: &ModelView) -> Check {
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
                if self.submitters.contains(task) =>
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed};
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

    #[test]
    fn a_refused_relay_from_a_task_that_uses_the_table_passes() {
        // The consumer and the lanes enter the table for every delivery; their refusals are not R6's.
        let c = feed(
            &mut RefusedMigrationTouchesNothing::default(),
            vec![(1, submitted(40)), (2, refused(40, ResumePath::Relay))],
        );
        assert_eq!(c, Check::Ok);
    }
}

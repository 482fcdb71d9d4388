//! no-stale-snapshot (always; R19, L7): every accepted commit is based on the version
//! current at commit time, and every action on a versioned snapshot uses a current version
//! (or a claim settled inside the turn that read it).

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::ModelEvent;
use crate::view::ModelView;

/// Stateless: each event carries what it needs.
#[derive(Default)]
pub struct NoStaleSnapshot;

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "no-stale-snapshot",
        kind: CheckerKind::Always,
        description: "every accepted commit and every snapshot use is based on the current version",
        rules: &["R19", "L7"],
        factory: Arc::new(|| Box::new(NoStaleSnapshot)),
    }
}

impl Checker<ModelEvent, ModelView> for NoStaleSnapshot {
    fn interest(&self) -> u64 {
        sutra_sim_core::tag_mask(&[crate::event::tag::COMMIT_ACCEPTED, crate::event::tag::SNAPSHOT_USED])
    }

    fn name(&self) -> &str {
        "no-stale-snapshot"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, _view: &ModelView) -> Check {
        match &event.kind {
            ModelEvent::CommitAccepted { instance, exec, based_on, version_before, .. } if based_on != version_before => {
                Check::Fail(format!(
                    "execution {} committed instance {} based on version {based_on}, but version {version_before} was current",
                    exec.0, instance.0
                ))
            }
            ModelEvent::SnapshotUsed { process, instance, used } if used.is_stale() => Check::Fail(format!(
                "process p{} acted on route snapshot of instance {} at version {} after it changed to {} (L7)",
                process.0, instance.0, used.read_version, used.current_version
            )),
            _ => Check::Ok,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed};
    use crate::ids::{ExecId, InstanceId, OwnerId, ProcessId};
    use sutra_sim_core::cell::{CellId, SnapshotUse};

    fn commit(based_on: u64, version_before: u64) -> ModelEvent {
        ModelEvent::CommitAccepted {
            instance: InstanceId(0),
            exec: ExecId(1),
            owner: OwnerId::lane(ProcessId(1), 0),
            based_on,
            version_before,
            version_after: based_on + 1,
            epoch: 1,
            task: None,
            current_epoch: 1,
            owner_before: None,
            trigger: crate::event::TriggerRef::TimerRow { expects: 0 },
        }
    }

    fn used(read: u64, current: u64, settled: bool) -> ModelEvent {
        ModelEvent::SnapshotUsed {
            process: ProcessId(1),
            instance: InstanceId(0),
            used: SnapshotUse { cell: CellId(0), read_version: read, current_version: current, settled },
        }
    }

    #[test]
    fn fires_on_a_commit_based_on_an_old_version() {
        assert!(fails(&feed(&mut NoStaleSnapshot, vec![(1, commit(0, 0)), (2, commit(0, 1))])));
    }

    #[test]
    fn fires_on_an_unsettled_stale_snapshot_use() {
        assert!(fails(&feed(&mut NoStaleSnapshot, vec![(1, used(0, 1, false))])));
    }

    #[test]
    fn accepts_current_commits_and_settled_uses() {
        let history = vec![(1, commit(0, 0)), (2, commit(1, 1)), (3, used(0, 0, false)), (4, used(0, 3, true))];
        assert_eq!(feed(&mut NoStaleSnapshot, history), Check::Ok);
    }
}

//! no-stale-snapshot (always; R19): every accepted commit is based on the version current
//! at commit time — by the checker's own count of the versions the store committed, not by
//! the `version_before` the commit event reports (a store bug could report it wrong). A
//! writer that read the row, lost the race and wrote anyway from its old read is the
//! stale-snapshot write R19 exists to stop.
//!
//! The route half of L7 (a binding-table route read in one turn and acted on after an
//! await) is judged by `tickets-follow-routes` from the table itself; this checker once
//! read the model's own `SnapshotUsed` label for it, a self-report.
//!
//! A real bug that passes: a commit based on the right version but computed from stale
//! step input that the store never sees (the model's steps carry no payload).
//!
//! The versions are kept for the whole history (a zombie's commit may come at any time) in
//! a [`PagedMap`], where finished instances' last versions, alike, cost about a byte each.

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::ModelEvent;
use crate::ids::InstanceId;
use crate::paged::PagedMap;
use crate::view::ModelView;

/// The committed version of each instance, as the store's commits witnessed it.
#[derive(Default)]
pub struct NoStaleSnapshot {
    versions: PagedMap<InstanceId, u64>,
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "no-stale-snapshot",
        kind: CheckerKind::Always,
        description: "every accepted commit is based on the version current at commit time",
        rules: &["R19"],
        factory: Arc::new(|| Box::new(NoStaleSnapshot::default())),
    }
}

impl Checker<ModelEvent, ModelView> for NoStaleSnapshot {
    fn interest(&self) -> u64 {
        sutra_sim_core::tag_mask(&[crate::event::tag::COMMIT_ACCEPTED])
    }

    fn name(&self) -> &str {
        "no-stale-snapshot"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, _view: &ModelView) -> Check {
        let ModelEvent::CommitAccepted { instance, exec, based_on, version_after, .. } = &event.kind else {
            return Check::Ok;
        };
        let current = self.versions.get(*instance).copied().unwrap_or(0);
        self.versions.insert(*instance, *version_after);
        if *based_on != current {
            return Check::Fail(format!(
                "execution {} committed instance {} based on version {based_on}, but the store had committed version {current}",
                exec.0, instance.0
            ));
        }
        Check::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed};
    use crate::ids::{ExecId, OwnerId, ProcessId};

    /// A commit as the store reports it; `version_before` is what the store claims.
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

    #[test]
    fn fires_on_a_commit_based_on_an_old_version() {
        assert!(fails(&feed(&mut NoStaleSnapshot::default(), vec![(1, commit(0, 0)), (2, commit(0, 1))])));
    }

    #[test]
    fn fires_even_when_the_store_misreports_the_version_it_overwrote() {
        // The second commit claims it overwrote version 0, but the first already made it 1.
        assert!(fails(&feed(&mut NoStaleSnapshot::default(), vec![(1, commit(0, 0)), (2, commit(0, 0))])));
    }

    #[test]
    fn accepts_commits_each_based_on_the_last() {
        let history = vec![(1, commit(0, 0)), (2, commit(1, 1)), (3, commit(2, 2))];
        assert_eq!(feed(&mut NoStaleSnapshot::default(), history), Check::Ok);
    }
}

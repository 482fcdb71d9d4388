//! linear-history (always; R8, R19): each instance's committed steps are 1, 2, 3… — no
//! gap, no fork, nothing applied twice. The last versions are kept for the whole history in
//! a [`PagedMap`], where finished instances' records, alike, cost about a byte each.

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::ModelEvent;
use crate::ids::InstanceId;
use crate::paged::PagedMap;
use crate::view::ModelView;

/// The last committed version of each instance.
#[derive(Default)]
pub struct LinearHistory {
    last: PagedMap<InstanceId, u64>,
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "linear-history",
        kind: CheckerKind::Always,
        description: "each instance's committed steps are 1, 2, 3... with no gap, fork or repeat",
        rules: &["R8", "R19"],
        factory: Arc::new(|| Box::new(LinearHistory::default())),
    }
}

impl Checker<ModelEvent, ModelView> for LinearHistory {
    fn interest(&self) -> u64 {
        sutra_sim_core::tag_mask(&[crate::event::tag::COMMIT_ACCEPTED])
    }

    fn name(&self) -> &str {
        "linear-history"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, _view: &ModelView) -> Check {
        if let ModelEvent::CommitAccepted { instance, exec, version_after, .. } = &event.kind {
            let last = self.last.get_or_insert_with(*instance, || 0);
            if *version_after != *last + 1 {
                let what = if *version_after <= *last { "applied again (a fork)" } else { "a gap" };
                return Check::Fail(format!(
                    "instance {} committed step {version_after} after step {last} by execution {}: {what}",
                    instance.0, exec.0
                ));
            }
            *last = *version_after;
        }
        Check::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed};
    use crate::ids::{ExecId, OwnerId, ProcessId};

    fn commit(instance: u32, after: u64) -> ModelEvent {
        ModelEvent::CommitAccepted {
            instance: InstanceId(instance),
            exec: ExecId(1),
            owner: OwnerId::lane(ProcessId(1), 0),
            based_on: after - 1,
            version_before: after - 1,
            version_after: after,
            epoch: 1,
            task: None,
            current_epoch: 1,
            owner_before: None,
            trigger: crate::event::TriggerRef::TimerRow { expects: 0 },
        }
    }

    #[test]
    fn fires_on_a_step_applied_twice() {
        assert!(fails(&feed(&mut LinearHistory::default(), vec![(1, commit(0, 1)), (2, commit(0, 1))])));
    }

    #[test]
    fn fires_on_a_gap() {
        assert!(fails(&feed(&mut LinearHistory::default(), vec![(1, commit(0, 1)), (2, commit(0, 3))])));
    }

    #[test]
    fn accepts_interleaved_linear_histories() {
        let h = vec![(1, commit(0, 1)), (2, commit(1, 1)), (3, commit(0, 2)), (4, commit(1, 2))];
        assert_eq!(feed(&mut LinearHistory::default(), h), Check::Ok);
    }
}

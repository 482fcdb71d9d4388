//! release-with-commit (always; R8): a committed row is never seen still owned by its
//! committer. "Committed" and "unowned again" are one atomic fact.

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::{ModelEvent, WriteKind};
use crate::view::ModelView;

/// Stateless: the store reports each row as written.
#[derive(Default)]
pub struct ReleaseWithCommit;

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "release-with-commit",
        kind: CheckerKind::Always,
        description: "a committed row is never seen still owned by its committer",
        rules: &["R8"],
        factory: Arc::new(|| Box::new(ReleaseWithCommit)),
    }
}

impl Checker<ModelEvent, ModelView> for ReleaseWithCommit {
    fn interest(&self) -> u64 {
        sutra_sim_core::tag_mask(&[crate::event::tag::ROW_WRITTEN])
    }

    fn name(&self) -> &str {
        "release-with-commit"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, _view: &ModelView) -> Check {
        match &event.kind {
            ModelEvent::RowWritten {
                instance,
                write: WriteKind::Commit,
                writer: Some(writer),
                owner: Some(owner),
                version,
                ..
            } if owner == writer => Check::Fail(format!(
                "instance {} committed version {version} and is still owned by its committer {writer}",
                instance.0
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

    fn written(owner_after: Option<OwnerId>) -> ModelEvent {
        let o = OwnerId::lane(ProcessId(1), 0);
        ModelEvent::RowWritten {
            instance: InstanceId(0),
            write: WriteKind::Commit,
            by: Some(ExecId(1)),
            writer: Some(o),
            owner: owner_after,
            version: 1,
            parked: false,
            epoch: 1,
        }
    }

    #[test]
    fn fires_on_a_commit_that_keeps_the_claim() {
        assert!(fails(&feed(&mut ReleaseWithCommit, vec![(1, written(Some(OwnerId::lane(ProcessId(1), 0))))])));
    }

    #[test]
    fn accepts_a_commit_that_releases() {
        assert_eq!(feed(&mut ReleaseWithCommit, vec![(1, written(None))]), Check::Ok);
    }
}

//! exits-release (always; R9): an execution that ended by any path but process death holds
//! no claim — early refusal, validation error, unexpected failure and panic all release.

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::dense::DenseMap;
use crate::event::{ModelEvent, WriteKind};
use crate::ids::{ExecId, InstanceId, OwnerId};
use crate::view::ModelView;

/// The current claim of each instance: owner and the execution that took it.
#[derive(Default)]
pub struct ExitsRelease {
    claims: DenseMap<InstanceId, (OwnerId, ExecId)>,
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "exits-release",
        kind: CheckerKind::Always,
        description: "an execution that ended by any path but process death holds no claim",
        rules: &["R9"],
        factory: Arc::new(|| Box::new(ExitsRelease::default())),
    }
}

impl Checker<ModelEvent, ModelView> for ExitsRelease {
    fn interest(&self) -> u64 {
        sutra_sim_core::tag_mask(&[
            crate::event::tag::CLAIM_GRANTED,
            crate::event::tag::ROW_WRITTEN,
            crate::event::tag::EXECUTION_ENDED,
        ])
    }

    fn name(&self) -> &str {
        "exits-release"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, _view: &ModelView) -> Check {
        match &event.kind {
            ModelEvent::ClaimGranted { instance, exec, owner, .. } => {
                self.claims.insert(*instance, (*owner, *exec));
            }
            ModelEvent::RowWritten { instance, write, owner, .. } if *write != WriteKind::Claim => match owner {
                None => {
                    self.claims.remove(*instance);
                }
                Some(o) if self.claims.get(*instance).is_some_and(|(held, _)| held != o) => {
                    self.claims.remove(*instance);
                }
                Some(_) => {}
            },
            ModelEvent::ExecutionEnded { instance, exec, exit } => {
                if let Some((owner, holder)) = self.claims.get(*instance) {
                    if holder == exec {
                        return Check::Fail(format!(
                            "execution {} of instance {} ended ({exit:?}) still holding the claim as {owner}",
                            exec.0, instance.0
                        ));
                    }
                }
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
    use crate::event::Exit;
    use crate::ids::{ProcessId, ResumePath};

    fn grant() -> ModelEvent {
        ModelEvent::ClaimGranted {
            instance: InstanceId(0),
            exec: ExecId(1),
            owner: OwnerId::lane(ProcessId(1), 0),
            process: Some(ProcessId(1)),
            path: ResumePath::Relay,
            previous: None,
            stale_age_ns: None,
            epoch: 1,
            task: None,
        }
    }

    fn ended() -> ModelEvent {
        ModelEvent::ExecutionEnded { instance: InstanceId(0), exec: ExecId(1), exit: Exit::ValidationError }
    }

    #[test]
    fn fires_on_an_error_exit_that_kept_the_claim() {
        assert!(fails(&feed(&mut ExitsRelease::default(), vec![(1, grant()), (2, ended())])));
    }

    #[test]
    fn accepts_an_exit_after_release() {
        let release = ModelEvent::RowWritten {
            instance: InstanceId(0),
            write: WriteKind::Release,
            by: Some(ExecId(1)),
            writer: Some(OwnerId::lane(ProcessId(1), 0)),
            owner: None,
            version: 0,
            parked: false,
            epoch: 1,
        };
        assert_eq!(feed(&mut ExitsRelease::default(), vec![(1, grant()), (2, release), (3, ended())]), Check::Ok);
    }
}

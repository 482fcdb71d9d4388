//! parked-holds-no-claim (always; R17): an instance waiting on a pull task holds no claim.
//! The long wait lives in the task row's lock, not in an instance claim: the execution that
//! parks the instance neither keeps its claim through the commit nor takes it again to
//! "hold" the instance for the worker. (Other executions may claim a parked instance
//! briefly — a duplicate delivery, a migration, the completion itself — and find it so.)

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::ModelEvent;
use crate::view::ModelView;

/// The executions whose commit parked their instance.
#[derive(Default)]
pub struct ParkedHoldsNoClaim {
    parkers: crate::dense::DenseSet<crate::ids::ExecId>,
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "parked-holds-no-claim",
        kind: CheckerKind::Always,
        description: "an instance waiting on a pull task holds no claim",
        rules: &["R17"],
        factory: Arc::new(|| Box::new(ParkedHoldsNoClaim::default())),
    }
}

impl Checker<ModelEvent, ModelView> for ParkedHoldsNoClaim {
    fn interest(&self) -> u64 {
        sutra_sim_core::tag_mask(&[crate::event::tag::ROW_WRITTEN, crate::event::tag::CLAIM_GRANTED])
    }

    fn name(&self) -> &str {
        "parked-holds-no-claim"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, _view: &ModelView) -> Check {
        match &event.kind {
            ModelEvent::RowWritten { instance, parked: true, owner: Some(owner), write, .. }
                if *write != crate::event::WriteKind::Claim =>
            {
                Check::Fail(format!("instance {} is parked for a pull worker and still claimed by {owner}", instance.0))
            }
            ModelEvent::RowWritten { write: crate::event::WriteKind::Commit, parked: true, by: Some(exec), .. } => {
                self.parkers.insert(*exec);
                Check::Ok
            }
            ModelEvent::ClaimGranted { instance, exec, owner, .. } if self.parkers.contains(*exec) => {
                Check::Fail(format!(
                    "instance {} was parked for a pull worker and its parking execution {} claimed it again as {owner}",
                    instance.0, exec.0
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
    use crate::event::WriteKind;
    use crate::ids::{ExecId, InstanceId, OwnerId, ProcessId};

    fn parked(owner: Option<OwnerId>) -> ModelEvent {
        ModelEvent::RowWritten {
            instance: InstanceId(0),
            write: WriteKind::Commit,
            by: Some(ExecId(1)),
            writer: Some(OwnerId::lane(ProcessId(1), 0)),
            owner,
            version: 1,
            parked: true,
            epoch: 1,
        }
    }

    #[test]
    fn fires_when_a_parked_instance_is_owned() {
        assert!(fails(&feed(
            &mut ParkedHoldsNoClaim::default(),
            vec![(1, parked(Some(OwnerId::lane(ProcessId(1), 0))))]
        )));
    }

    #[test]
    fn fires_when_the_parking_execution_claims_again() {
        let again = ModelEvent::ClaimGranted {
            instance: InstanceId(0),
            exec: ExecId(1),
            owner: OwnerId::lane(ProcessId(1), 0),
            process: Some(ProcessId(1)),
            path: crate::ids::ResumePath::Relay,
            previous: None,
            stale_age_ns: None,
            epoch: 1,
            task: None,
        };
        assert!(fails(&feed(&mut ParkedHoldsNoClaim::default(), vec![(1, parked(None)), (2, again)])));
    }

    #[test]
    fn accepts_a_released_park() {
        assert_eq!(feed(&mut ParkedHoldsNoClaim::default(), vec![(1, parked(None))]), Check::Ok);
    }
}

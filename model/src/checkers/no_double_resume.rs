//! no-double-resume (always; R1, R2, R10–R12, R15): at no instant do two executions of one
//! instance both hold a valid claim. A claim is valid from the winning conditional update
//! until the execution's commit or release, or until the row's owner changes (a stale
//! steal, a sweep). An execution that rehydrates without ever having been granted the
//! claim skipped R1; one whose commit is accepted without a valid claim while another
//! execution holds one is the same corruption reached by a different road. (Losing a claim
//! between the grant and the read is allowed: a live-but-slow owner's read is harmless,
//! its write is what R19 stops.)

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::dense::{DenseMap, DenseSet};
use crate::event::{ModelEvent, WriteKind};
use crate::ids::{ExecId, InstanceId, OwnerId};
use crate::view::ModelView;

/// The checker's state: valid claims per instance.
#[derive(Default)]
pub struct NoDoubleResume {
    valid: DenseMap<InstanceId, Vec<(ExecId, OwnerId)>>,
    /// Executions ever granted a claim (each belongs to one instance).
    granted: DenseSet<ExecId>,
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "no-double-resume",
        kind: CheckerKind::Always,
        description: "at no instant do two executions of one instance both hold a valid claim",
        rules: &["R1", "R2", "R10", "R11", "R12", "R15"],
        factory: Arc::new(|| Box::new(NoDoubleResume::default())),
    }
}

impl NoDoubleResume {
    fn holders(&mut self, instance: InstanceId) -> &mut Vec<(ExecId, OwnerId)> {
        self.valid.get_or_insert_with(instance, Vec::new)
    }
}

impl Checker<ModelEvent, ModelView> for NoDoubleResume {
    fn interest(&self) -> u64 {
        sutra_sim_core::tag_mask(&[
            crate::event::tag::CLAIM_GRANTED,
            crate::event::tag::ROW_WRITTEN,
            crate::event::tag::REHYDRATED,
            crate::event::tag::COMMIT_ACCEPTED,
            crate::event::tag::EXECUTION_ENDED,
        ])
    }

    fn name(&self) -> &str {
        "no-double-resume"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, _view: &ModelView) -> Check {
        match &event.kind {
            ModelEvent::ClaimGranted { instance, exec, owner, previous, .. } => {
                let holders = self.holders(*instance);
                if *previous != Some(*owner) {
                    // The row's owner changed: every earlier claim on it is void.
                    holders.clear();
                }
                if let Some((other, _)) = holders.iter().find(|(e, _)| e != exec) {
                    return Check::Fail(format!(
                        "instance {} claimed by execution {} (owner {owner}) while execution {} holds a valid claim under the same owner",
                        instance.0, exec.0, other.0
                    ));
                }
                holders.push((*exec, *owner));
                self.granted.insert(*exec);
            }
            ModelEvent::RowWritten { instance, write, owner, .. } => {
                let holders = self.holders(*instance);
                match (write, owner) {
                    (WriteKind::Claim, _) => {}
                    (_, None) => holders.clear(),
                    (_, Some(o)) => holders.retain(|(_, h)| h == o),
                }
            }
            ModelEvent::Rehydrated { instance, exec, .. } if !self.granted.contains(*exec) => {
                let holders = self.holders(*instance);
                let others: Vec<String> = holders.iter().map(|(e, o)| format!("{} ({o})", e.0)).collect();
                return Check::Fail(format!(
                    "execution {} rehydrated instance {} without taking the claim first (R1){}",
                    exec.0,
                    instance.0,
                    if others.is_empty() { String::new() } else { format!(" while {} holds one", others.join(", ")) }
                ));
            }
            ModelEvent::CommitAccepted { instance, exec, .. } => {
                let holders = self.holders(*instance);
                if !holders.iter().any(|(e, _)| e == exec) {
                    if let Some((other, owner)) = holders.first() {
                        return Check::Fail(format!(
                            "execution {} committed instance {} without a valid claim while execution {} ({owner}) holds one",
                            exec.0, instance.0, other.0
                        ));
                    }
                }
            }
            ModelEvent::ExecutionEnded { instance, exec, .. } => {
                self.holders(*instance).retain(|(e, _)| e != exec);
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
    use crate::event::ModelEvent as E;
    use crate::ids::{ProcessId, ResumePath};

    fn grant(exec: u32, owner: OwnerId, previous: Option<OwnerId>) -> E {
        E::ClaimGranted {
            instance: InstanceId(1),
            exec: ExecId(exec),
            owner,
            process: Some(ProcessId(1)),
            path: ResumePath::Relay,
            previous,
            stale_age_ns: None,
            epoch: 1,
            task: None,
        }
    }

    fn rehydrate(exec: u32) -> E {
        E::Rehydrated { instance: InstanceId(1), exec: ExecId(exec), version: 0 }
    }

    #[test]
    fn fires_on_a_reentrant_grant_to_a_second_execution() {
        let owner = OwnerId::process(ProcessId(1));
        let history = vec![(1, grant(1, owner, None)), (2, rehydrate(1)), (3, grant(2, owner, Some(owner)))];
        assert!(fails(&feed(&mut NoDoubleResume::default(), history)));
    }

    #[test]
    fn fires_on_a_resume_without_a_claim() {
        let a = OwnerId::lane(ProcessId(1), 0);
        let history = vec![(1, grant(1, a, None)), (2, rehydrate(2))];
        assert!(fails(&feed(&mut NoDoubleResume::default(), history)));
    }

    #[test]
    fn accepts_a_stale_steal_and_serial_executions() {
        let a = OwnerId::lane(ProcessId(1), 0);
        let b = OwnerId::lane(ProcessId(2), 1);
        let release = E::RowWritten {
            instance: InstanceId(1),
            write: WriteKind::Commit,
            by: Some(ExecId(2)),
            writer: Some(b),
            owner: None,
            version: 1,
            parked: false,
            epoch: 1,
        };
        let history = vec![
            (1, grant(1, a, None)),
            (2, rehydrate(1)),
            (40_000, grant(2, b, Some(a))),
            (40_001, rehydrate(2)),
            (40_002, release),
            (40_003, grant(3, a, None)),
            (40_004, rehydrate(3)),
        ];
        assert_eq!(feed(&mut NoDoubleResume::default(), history), Check::Ok);
    }
}

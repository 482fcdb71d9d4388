//! `sometimes-hung-step-completed-elsewhere`: the step a hung execution was running was
//! committed by another owner — the hung owner's claim went stale, was swept or stolen, and
//! the instance moved on without it (spec 000: a worker never holds an instance forever).
//! Witnessed: the executor's report of the hang names the hung task; the store's grants
//! name the task that sent them, so the hung task's last grant is the claim it hangs under;
//! the store's accepted commits name their owner and the version they were based on.

use std::collections::BTreeMap;

use crate::faults::kind::FaultKind;
use crate::ids::{InstanceId, OwnerId};

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct HungStepCompletedElsewhere {
    /// Each task's last grant: the instance and the owner.
    last_grant: BTreeMap<u64, (InstanceId, OwnerId)>,
    /// Claims a hung step runs under: their instance and owner.
    hung: Vec<(InstanceId, OwnerId)>,
}

impl Property for HungStepCompletedElsewhere {
    const NAME: &'static str = "sometimes-hung-step-completed-elsewhere";
    const DESCRIPTION: &'static str = "a hung step's instance was advanced by another owner";
    const READS: &'static [u8] = &[tag::CLAIM_GRANTED, tag::FAULT_INJECTED, tag::COMMIT_ACCEPTED];

    fn expected(s: &Scenario) -> bool {
        super::on(s, FaultKind::HungStep) && !s.faults.cancel.step_timeout.is_zero()
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        match event {
            E::ClaimGranted { instance, owner, task: Some(task), .. } => {
                self.last_grant.insert(*task, (*instance, *owner));
                false
            }
            E::FaultInjected { fault: FaultKind::HungStep, task: Some(task), .. } => {
                if let Some(&claim) = self.last_grant.get(task) {
                    self.hung.push(claim);
                }
                false
            }
            E::CommitAccepted { instance, owner, .. } => {
                self.hung.iter().any(|(i, hung_owner)| i == instance && hung_owner != owner)
            }
            _ => false,
        }
    }
}

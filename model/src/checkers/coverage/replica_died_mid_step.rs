//! `sometimes-replica-died-mid-step`: a replica died while one of its executions was
//! mid-step.

use crate::dense::DenseMap;
use crate::ids::{ExecId, ProcessId};

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct ReplicaDiedMidStep {
    /// Executions dispatched and not yet done with their step, and their process.
    in_step: DenseMap<ExecId, ProcessId>,
}

impl Property for ReplicaDiedMidStep {
    const NAME: &'static str = "sometimes-replica-died-mid-step";
    const DESCRIPTION: &'static str = "a replica died mid-step";
    const READS: &'static [u8] = &[tag::DISPATCHED, tag::STEP_ENDED, tag::REPLICA_CRASHED];

    fn expected(s: &Scenario) -> bool {
        super::crashes(s)
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        match event {
            E::Dispatched { exec, process, .. } => {
                self.in_step.insert(*exec, *process);
                false
            }
            E::StepEnded { exec, .. } => {
                self.in_step.remove(*exec);
                false
            }
            E::ReplicaCrashed { process, .. } => self.in_step.values().any(|p| p == process),
            _ => false,
        }
    }
}

//! `sometimes-zombie-resumed-mid-step`: a replaced process (a zombie) resumed while one of
//! its executions was mid-step: its lane is busy while the broker takes its deliveries back
//! (R4). Witnessed: the executor's pause, restart and resume; narrative: the step's start
//! and end (only the lane knows it is mid-step).

use crate::dense::{DenseMap, DenseSet};
use crate::faults::kind::FaultKind;
use crate::ids::{ExecId, ProcessId};

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct ZombieResumedMidStep {
    /// Processes currently paused, by replica.
    paused_of: DenseMap<u32, ProcessId>,
    /// Processes replaced while paused: zombies.
    zombies: DenseSet<ProcessId>,
    /// Executions dispatched and not yet done with their step, and their process.
    in_step: DenseMap<ExecId, ProcessId>,
    /// Executions whose step started and has not ended.
    started: DenseSet<ExecId>,
}

impl Property for ZombieResumedMidStep {
    const NAME: &'static str = "sometimes-zombie-resumed-mid-step";
    const DESCRIPTION: &'static str = "a replaced process resumed while one of its executions was mid-step";
    const READS: &'static [u8] = &[
        tag::REPLICA_PAUSED,
        tag::REPLICA_RESTARTED,
        tag::REPLICA_CRASHED,
        tag::REPLICA_RESUMED,
        tag::DISPATCHED,
        tag::STEP_STARTED,
        tag::STEP_ENDED,
    ];

    fn expected(s: &Scenario) -> bool {
        super::on(s, FaultKind::ProcessPause) && !s.faults.process_pause.replacement.is_never()
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        match event {
            E::ReplicaPaused { replica, process, .. } => {
                self.paused_of.insert(*replica, *process);
                false
            }
            E::ReplicaRestarted { replica, .. } => {
                if let Some(p) = self.paused_of.remove(*replica) {
                    self.zombies.insert(p);
                }
                false
            }
            E::ReplicaCrashed { replica, process } => {
                if self.paused_of.get(*replica) == Some(process) {
                    self.paused_of.remove(*replica);
                }
                self.zombies.remove(*process);
                false
            }
            E::Dispatched { exec, process, .. } => {
                self.in_step.insert(*exec, *process);
                false
            }
            E::StepStarted { exec, .. } => {
                self.started.insert(*exec);
                false
            }
            E::StepEnded { exec, .. } => {
                self.started.remove(*exec);
                self.in_step.remove(*exec);
                false
            }
            E::ReplicaResumed { replica, process } => {
                if self.paused_of.get(*replica) == Some(process) {
                    self.paused_of.remove(*replica);
                }
                self.zombies.contains(*process)
                    && self.started.iter().any(|exec| self.in_step.get(exec) == Some(process))
            }
            _ => false,
        }
    }
}

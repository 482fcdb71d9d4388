//! Books two coverage properties keep alike: the drains of graceful shutdowns
//! (`sometimes-drained-replica-released`, `sometimes-drain-deadline-cancel-released`) and
//! the commits a store abort sends again (`sometimes-commit-retried-after-abort`,
//! `sometimes-froze-retrying-commit`). Each property keeps its own copy.

use std::collections::BTreeMap;

use crate::dense::{DenseMap, DenseSet};
use crate::event::ModelEvent as E;
use crate::faults::kind::FaultKind;
use crate::ids::{ExecId, OwnerId, ProcessId};

/// Processes draining after a shutdown request, and the process granted each owner's claims.
#[derive(Default)]
pub struct Drains {
    owner_process: BTreeMap<OwnerId, ProcessId>,
    /// Processes asked to shut down that have not stopped (or died) yet.
    draining: DenseSet<ProcessId>,
    /// Draining processes whose drain deadline (or another abort) cancelled a task.
    cut: DenseSet<ProcessId>,
}

impl Drains {
    /// Books a grant, a shutdown request, a stop or a crash; true if `event` was one of them.
    pub fn observe(&mut self, event: &E) -> bool {
        match event {
            E::ClaimGranted { owner, process: Some(p), .. } => {
                self.owner_process.insert(*owner, *p);
            }
            E::ShutdownRequested { process, .. } => {
                self.draining.insert(*process);
            }
            E::ReplicaStopped { process, .. } | E::ReplicaCrashed { process, .. } => {
                self.draining.remove(*process);
                self.cut.remove(*process);
            }
            _ => return false,
        }
        true
    }

    /// Books a task of `process` aborted: a cut drain, if it is draining.
    pub fn cut(&mut self, process: ProcessId) {
        if self.draining.contains(process) {
            self.cut.insert(process);
        }
    }

    /// True if `owner` was granted a claim by a process that is draining now.
    pub fn owner_draining(&self, owner: &OwnerId) -> bool {
        self.owner_process.get(owner).is_some_and(|p| self.draining.contains(*p))
    }

    /// True if `owner` was granted a claim by a process whose drain was cut.
    pub fn owner_cut(&self, owner: &OwnerId) -> bool {
        self.owner_process.get(owner).is_some_and(|p| self.cut.contains(*p))
    }
}

/// Commits pending after a clean step, and those a store abort sends again. Witnessed: the
/// store's read names the lane task, and the abort is reported from that task; narrative:
/// the step's end says the next call is the commit.
#[derive(Default)]
pub struct Commits {
    /// The execution each lane task last read a row for (store witnesses carry the task),
    /// by the task's slot, with the task's whole number: a slot is reused only after its
    /// task ended, and a task ended can no longer have a call aborted.
    task_exec: DenseMap<u32, (u64, ExecId)>,
    /// Executions whose step ended without error: their next store call is the commit.
    committing: DenseSet<ExecId>,
    /// Committing executions whose commit the store aborted (it is being sent again).
    retrying: DenseSet<ExecId>,
    /// The process each dispatched execution runs on, until it settles.
    in_step: DenseMap<ExecId, ProcessId>,
}

/// The task-table slot of a witness's task number (its low half; the high half is the
/// slot's generation, see `TaskId::number`).
fn task_slot(task: u64) -> u32 {
    task as u32
}

impl Commits {
    /// Books one event; the execution whose pending commit `event` aborted, if it did.
    pub fn observe(&mut self, event: &E) -> Option<ExecId> {
        match event {
            E::StoreRead { exec, task: Some(t), .. } => {
                self.task_exec.insert(task_slot(*t), (*t, *exec));
            }
            E::Dispatched { exec, process, .. } => {
                self.in_step.insert(*exec, *process);
            }
            E::StepEnded { exec, error: None, .. } => {
                self.committing.insert(*exec);
            }
            E::FaultInjected { fault: FaultKind::Store, detail_ns: 0, task: Some(t), .. } => {
                if let Some(&(number, exec)) = self.task_exec.get(task_slot(*t)) {
                    if number == *t && self.committing.contains(exec) {
                        self.retrying.insert(exec);
                        return Some(exec);
                    }
                }
            }
            E::CommitAccepted { exec, .. } | E::CommitRejected { exec, .. } | E::ExecutionEnded { exec, .. } => {
                self.committing.remove(*exec);
                self.retrying.remove(*exec);
                self.in_step.remove(*exec);
            }
            _ => {}
        }
        None
    }

    /// True if a commit being sent again belongs to an execution on `process`.
    pub fn retrying_on(&self, process: ProcessId) -> bool {
        self.retrying.iter().any(|exec| self.in_step.get(exec) == Some(&process))
    }
}

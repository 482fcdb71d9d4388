//! `sometimes-request-landed-after-its-sender-died`: the store answered a claim whose
//! sending task was gone by then — its process killed, or the task aborted by the runtime
//! — a request on the wire outlives its sender, as a database applies a statement whose
//! client went away (the late claim the claim fence exists for).
//! Witnessed: the environment's crash of a replica process (`ReplicaCrashed`) and abort of
//! a lane's task (`TaskAborted`), and the store's answer to a claim naming that process or
//! that task (a grant, a refusal, or the fence's refusal).

use std::collections::BTreeSet;

use crate::faults::kind::FaultKind;
use crate::ids::ProcessId;

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct RequestLandedAfterSenderDied {
    /// Processes witnessed killed.
    killed: BTreeSet<ProcessId>,
    /// Tasks witnessed aborted.
    aborted: BTreeSet<u64>,
}

impl RequestLandedAfterSenderDied {
    /// True if the claim's sending task or process was gone.
    fn gone(&self, process: Option<ProcessId>, task: Option<u64>) -> bool {
        process.is_some_and(|p| self.killed.contains(&p)) || task.is_some_and(|t| self.aborted.contains(&t))
    }
}

impl Property for RequestLandedAfterSenderDied {
    const NAME: &'static str = "sometimes-request-landed-after-its-sender-died";
    const DESCRIPTION: &'static str = "a claim landed after the task or process that sent it was gone";
    const READS: &'static [u8] =
        &[tag::REPLICA_CRASHED, tag::TASK_ABORTED, tag::CLAIM_GRANTED, tag::CLAIM_REFUSED, tag::CLAIM_FENCED];

    fn expected(s: &Scenario) -> bool {
        let wire = &s.faults.store_replies;
        let struck = !(wire.request_lost_per_call.is_never() && wire.reply_lost_per_call.is_never());
        struck && (super::on(s, FaultKind::ReplicaCrash) || super::on(s, FaultKind::Cancel))
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        match event {
            E::ReplicaCrashed { process, .. } => {
                self.killed.insert(*process);
                false
            }
            E::TaskAborted { task, .. } => {
                self.aborted.insert(*task);
                false
            }
            E::ClaimGranted { process, task, .. } | E::ClaimRefused { process, task, .. } => self.gone(*process, *task),
            E::ClaimFenced { task, .. } => self.gone(None, *task),
            _ => false,
        }
    }
}

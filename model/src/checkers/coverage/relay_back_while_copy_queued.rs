//! `sometimes-relay-back-while-copy-queued`: a relay the broker took back from a process
//! was delivered to that process again while a copy of it still waited in one of its lanes
//! (R4: two copies, one process). Witnessed: the broker's take-back and delivery;
//! narrative: the lane queue (only the replica knows what waits in it).

use crate::dense::DenseMap;
use crate::faults::kind::FaultKind;
use crate::ids::{ExecId, InstanceId, MessageId, ProcessId};

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct RelayBackWhileCopyQueued {
    /// Work dispatched to a lane and not yet taken by it: execution → (process, instance).
    waiting: DenseMap<ExecId, (ProcessId, InstanceId)>,
    /// Relays taken back, and from whom.
    taken_back: DenseMap<MessageId, ProcessId>,
}

impl Property for RelayBackWhileCopyQueued {
    const NAME: &'static str = "sometimes-relay-back-while-copy-queued";
    const DESCRIPTION: &'static str =
        "a relay taken back from a process was delivered to it again while a copy waited in its lane";
    const READS: &'static [u8] =
        &[tag::DISPATCHED, tag::CLAIM_ATTEMPT, tag::EXECUTION_ENDED, tag::RELAY_RECLAIMED, tag::RELAY_DELIVERED];

    fn expected(s: &Scenario) -> bool {
        super::on(s, FaultKind::ProcessPause)
            && !s.faults.process_pause.replacement.is_never()
            && s.workload.relay_weight > 0
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        match event {
            E::Dispatched { instance, exec, process, .. } => {
                self.waiting.insert(*exec, (*process, *instance));
                false
            }
            E::ClaimAttempt { exec, .. } | E::ExecutionEnded { exec, .. } => {
                self.waiting.remove(*exec);
                false
            }
            E::RelayReclaimed { message, process, .. } => {
                self.taken_back.insert(*message, *process);
                false
            }
            E::RelayDelivered { instance, message, process, .. } => {
                self.taken_back.remove(*message) == Some(*process)
                    && self.waiting.values().any(|w| *w == (*process, *instance))
            }
            _ => false,
        }
    }
}

//! `sometimes-request-landed-while-sender-frozen`: the store took a claim request while the
//! process that sent it was frozen — a request on the wire is independent of its sender.
//! Witnessed: the environment's freeze and resumption of a replica (`ReplicaPaused`,
//! `ReplicaResumed`) and the store's answer to a claim naming that process.

use std::collections::BTreeSet;

use crate::ids::ProcessId;

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct RequestLandedWhileSenderFrozen {
    /// Processes frozen now.
    frozen: BTreeSet<ProcessId>,
}

impl Property for RequestLandedWhileSenderFrozen {
    const NAME: &'static str = "sometimes-request-landed-while-sender-frozen";
    const DESCRIPTION: &'static str = "a claim request landed while the process that sent it was frozen";
    const READS: &'static [u8] =
        &[tag::REPLICA_PAUSED, tag::REPLICA_RESUMED, tag::REPLICA_CRASHED, tag::CLAIM_GRANTED, tag::CLAIM_REFUSED];

    fn expected(s: &Scenario) -> bool {
        let wire = &s.faults.store_replies;
        let struck = !(wire.request_lost_per_call.is_never() && wire.reply_lost_per_call.is_never());
        struck && !s.faults.process_pause.per_tick.is_never()
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        match event {
            E::ReplicaPaused { process, .. } => {
                self.frozen.insert(*process);
                false
            }
            E::ReplicaResumed { process, .. } | E::ReplicaCrashed { process, .. } => {
                self.frozen.remove(process);
                false
            }
            E::ClaimGranted { process: Some(process), .. } | E::ClaimRefused { process: Some(process), .. } => {
                self.frozen.contains(process)
            }
            _ => false,
        }
    }
}

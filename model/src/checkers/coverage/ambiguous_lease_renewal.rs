//! `sometimes-ambiguous-lease-renewal`: the store renewed a sweeper's lease and the reply
//! was lost — the holder holds a lease it does not know of, and must not sweep under it.
//! Witnessed: the store's renewal (`LeaseAcquired`, a renewal) and the environment's loss
//! of that call's reply (`RoleCallStruck`, same task, lease call).

use std::collections::BTreeSet;

use crate::event::{CallFault, StoreCall};

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct AmbiguousLeaseRenewal {
    /// Tasks whose last lease call the store applied as a renewal.
    renewed: BTreeSet<u64>,
}

impl Property for AmbiguousLeaseRenewal {
    const NAME: &'static str = "sometimes-ambiguous-lease-renewal";
    const DESCRIPTION: &'static str = "a lease renewal the store applied lost its reply";
    const READS: &'static [u8] = &[tag::LEASE_ACQUIRED, tag::ROLE_CALL_STRUCK];

    fn expected(s: &Scenario) -> bool {
        !s.faults.store_replies.reply_lost_per_call.is_never()
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        match event {
            E::LeaseAcquired { renewal, task: Some(task), .. } => {
                if *renewal {
                    self.renewed.insert(*task);
                } else {
                    self.renewed.remove(task);
                }
                false
            }
            E::RoleCallStruck { call: StoreCall::Lease, fault: CallFault::ReplyLost, task: Some(task), .. } => {
                self.renewed.remove(task)
            }
            _ => false,
        }
    }
}

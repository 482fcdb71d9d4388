//! `sometimes-late-release-after-reclaim`: a delayed copy of a release reached the store
//! after the releasing owner had claimed the same instance again under a newer grant — the
//! owner-keyed ABA a late landing sets up, which the store's idempotency table must make
//! harmless (the `release-resent-as-new-request` mutant is the client that does not).
//! Witnessed: the environment's delay and landing (`CallStruck`), the store's grants.

use crate::dense::DenseMap;
use crate::event::{CallFault, StoreCall};
use crate::ids::{ExecId, InstanceId, OwnerId};

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct LateReleaseAfterReclaim {
    /// The owner each execution's grant named.
    granted_to: DenseMap<ExecId, OwnerId>,
    /// The latest grant of each instance: to whom, for which execution.
    latest: DenseMap<InstanceId, (OwnerId, ExecId)>,
}

impl Property for LateReleaseAfterReclaim {
    const NAME: &'static str = "sometimes-late-release-after-reclaim";
    const DESCRIPTION: &'static str =
        "a delayed release landed after its owner had claimed the same instance again under a newer grant";
    const READS: &'static [u8] = &[tag::CLAIM_GRANTED, tag::CALL_STRUCK];

    fn expected(s: &Scenario) -> bool {
        let replies = &s.faults.store_replies;
        !replies.request_lost_per_call.is_never() && !replies.late_landing_per_lost.is_never()
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        match event {
            E::ClaimGranted { instance, exec, owner, .. } => {
                self.granted_to.insert(*exec, *owner);
                self.latest.insert(*instance, (*owner, *exec));
                false
            }
            E::CallStruck { instance, exec, call: StoreCall::Release, fault: CallFault::LateLanded, .. } => {
                let releaser = self.granted_to.get(*exec).copied();
                matches!(self.latest.get(*instance), Some(&(owner, by)) if Some(owner) == releaser && by != *exec)
            }
            _ => false,
        }
    }
}

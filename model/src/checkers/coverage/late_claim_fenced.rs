//! `sometimes-late-claim-fenced`: the store refused a claim by the claim fence — it landed
//! after a newer claim of the same owner had been taken (an aborted worker's claim, after
//! its lane's exit path or next worker claimed). The situation `claims-not-numbered` turns
//! into a double resume or a leak; here the fence's refusal is what makes it harmless.
//! Witnessed: the store's `ClaimFenced`.

use super::prelude::*;

/// The property.
#[derive(Default)]
pub struct LateClaimFenced;

impl Property for LateClaimFenced {
    const NAME: &'static str = "sometimes-late-claim-fenced";
    const DESCRIPTION: &'static str = "a claim that landed after a newer claim of its owner was refused by the fence";
    const READS: &'static [u8] = &[tag::CLAIM_FENCED];

    fn expected(s: &Scenario) -> bool {
        let wire = &s.faults.store_replies;
        let struck = !(wire.request_lost_per_call.is_never() && wire.reply_lost_per_call.is_never());
        struck && super::on(s, crate::faults::kind::FaultKind::Cancel)
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        matches!(event, E::ClaimFenced { .. })
    }
}

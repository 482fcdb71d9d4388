//! `sometimes-same-owner-reclaim-granted`: the store granted a claim to the owner already
//! holding it (R10, R21).

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct SameOwnerReclaimGranted;

impl Property for SameOwnerReclaimGranted {
    const NAME: &'static str = "sometimes-same-owner-reclaim-granted";
    const DESCRIPTION: &'static str = "a claim was granted re-entrantly to the owner already holding it";
    const READS: &'static [u8] = &[tag::CLAIM_GRANTED];

    fn expected(s: &Scenario) -> bool {
        // A lost reply on a grant whose claim is then sent again.
        !s.faults.store_replies.reply_lost_per_call.is_never()
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        matches!(event, E::ClaimGranted { owner, previous: Some(previous), .. } if previous == owner)
    }
}

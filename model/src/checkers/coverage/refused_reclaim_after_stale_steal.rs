//! `sometimes-refused-reclaim-after-stale-steal`: after a stale steal, the owner it was
//! stolen from asked again and was refused.

use crate::dense::DenseMap;
use crate::faults::kind::FaultKind;
use crate::ids::{InstanceId, OwnerId};

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct RefusedReclaimAfterStaleSteal {
    /// Stale steals: instance → the owner the claim was taken from.
    stolen_from: DenseMap<InstanceId, OwnerId>,
}

impl Property for RefusedReclaimAfterStaleSteal {
    const NAME: &'static str = "sometimes-refused-reclaim-after-stale-steal";
    const DESCRIPTION: &'static str = "the owner a stale claim was stolen from asked again and was refused";
    const READS: &'static [u8] = &[tag::CLAIM_GRANTED, tag::CLAIM_REFUSED];

    fn expected(s: &Scenario) -> bool {
        // A stale steal needs an owner outliving the claim timeout while alive (slow step,
        // pause); its refused re-claim needs the old owner's lane to get the instance's work
        // again while the thief holds it. In 2,000-seed sweeps only scenarios with migrations as
        // well reach it (slow-steps and process-pause alone never do: the stolen-from lane's
        // retry comes after the thief has committed). Where most steps park for a pull worker
        // (pull-workers: 2 seeds in 10,000) it is too rare to demand of a sweep.
        (super::on(s, FaultKind::SlowStep) || super::pauses(s)) && super::migrates(s) && super::mostly_unparked(s)
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        match event {
            E::ClaimGranted { instance, owner, previous: Some(previous), stale_age_ns: Some(_), .. }
                if previous != owner =>
            {
                self.stolen_from.insert(*instance, *previous);
                false
            }
            E::ClaimRefused { instance, owner, .. } => self.stolen_from.get(*instance) == Some(owner),
            _ => false,
        }
    }
}

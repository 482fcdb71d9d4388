//! `sometimes-misrouted-work-bounced`: mis-routed work bounced off the claim.

use crate::dense::DenseSet;
use crate::faults::kind::FaultKind;
use crate::ids::ExecId;

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct MisroutedWorkBounced {
    /// Executions dispatched to a lane the misroute fault chose.
    misrouted: DenseSet<ExecId>,
}

impl Property for MisroutedWorkBounced {
    const NAME: &'static str = "sometimes-misrouted-work-bounced";
    const DESCRIPTION: &'static str = "mis-routed work bounced off the claim";
    const READS: &'static [u8] = &[tag::DISPATCHED, tag::CLAIM_REFUSED];

    fn expected(s: &Scenario) -> bool {
        // Mis-routed work only bounces if the right lane holds the instance meanwhile: a
        // duplicate delivery or a migration must be racing it.
        super::on(s, FaultKind::Misroute) && (super::on(s, FaultKind::Broker) || super::migrates(s))
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        match event {
            E::Dispatched { exec, misrouted: true, .. } => {
                self.misrouted.insert(*exec);
                false
            }
            E::ClaimRefused { exec, .. } => self.misrouted.contains(*exec),
            _ => false,
        }
    }
}

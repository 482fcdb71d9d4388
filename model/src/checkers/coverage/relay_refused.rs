//! `sometimes-relay-refused`: a refused relay was requeued. Witnessed: the store's refusal,
//! then the broker's requeue.

use crate::dense::DenseSet;
use crate::ids::{InstanceId, ResumePath};

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct RelayRefused {
    /// Instances with a refused claim on a relay's path.
    refused: DenseSet<InstanceId>,
}

impl Property for RelayRefused {
    const NAME: &'static str = "sometimes-relay-refused";
    const DESCRIPTION: &'static str = "a refused relay was requeued";
    const READS: &'static [u8] = &[tag::CLAIM_REFUSED, tag::RELAY_REQUEUED];

    fn expected(s: &Scenario) -> bool {
        super::contends(s)
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        match event {
            E::ClaimRefused { instance, path: ResumePath::Relay | ResumePath::PullCompletion, .. } => {
                self.refused.insert(*instance);
                false
            }
            E::RelayRequeued { instance, .. } => self.refused.contains(*instance),
            _ => false,
        }
    }
}

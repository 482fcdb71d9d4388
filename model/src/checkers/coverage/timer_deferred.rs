//! `sometimes-timer-deferred`: a refused timer fire was deferred. Witnessed: the store's
//! refusal, then its deferral.

use crate::dense::DenseSet;
use crate::ids::{InstanceId, ResumePath};

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct TimerDeferred {
    /// Instances with a refused claim on a timer's path.
    refused: DenseSet<InstanceId>,
}

impl Property for TimerDeferred {
    const NAME: &'static str = "sometimes-timer-deferred";
    const DESCRIPTION: &'static str = "a refused timer fire was deferred";
    const READS: &'static [u8] = &[tag::CLAIM_REFUSED, tag::TIMER_DEFERRED];

    fn expected(s: &Scenario) -> bool {
        // A timer fire only meets a held claim when something else holds the instance at its
        // due time: in practice, an operator's migration.
        super::migrates(s) && s.workload.timer_weight > 0
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        match event {
            E::ClaimRefused { instance, path: ResumePath::Timer, .. } => {
                self.refused.insert(*instance);
                false
            }
            E::TimerDeferred { instance, .. } => self.refused.contains(*instance),
            _ => false,
        }
    }
}

//! `sometimes-paused-replica-resumed`: a paused replica carried on.

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct PausedReplicaResumed;

impl Property for PausedReplicaResumed {
    const NAME: &'static str = "sometimes-paused-replica-resumed";
    const DESCRIPTION: &'static str = "a paused replica resumed";
    const READS: &'static [u8] = &[tag::REPLICA_RESUMED];

    fn expected(s: &Scenario) -> bool {
        super::pauses(s)
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        matches!(event, E::ReplicaResumed { .. })
    }
}

//! `sometimes-drained-replica-released`: a replica shutting down gracefully had a claim
//! released during its drain (a step committed with its release, or an exit path released).
//! Witnessed: the environment's shutdown request and stop, the store's grants, commits and
//! releases.

use super::books::Drains;

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct DrainedReplicaReleased {
    /// Who is draining, and whose claims.
    drains: Drains,
}

impl Property for DrainedReplicaReleased {
    const NAME: &'static str = "sometimes-drained-replica-released";
    const DESCRIPTION: &'static str = "a replica shutting down gracefully had a claim released during its drain";
    const READS: &'static [u8] = &[
        tag::CLAIM_GRANTED,
        tag::SHUTDOWN_REQUESTED,
        tag::REPLICA_STOPPED,
        tag::REPLICA_CRASHED,
        tag::RELEASED,
        tag::COMMIT_ACCEPTED,
    ];

    fn expected(s: &Scenario) -> bool {
        !s.faults.cancel.shutdown_per_tick.is_never()
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        if self.drains.observe(event) {
            return false;
        }
        match event {
            E::Released { owner, released: true, .. } | E::CommitAccepted { owner, .. } => {
                self.drains.owner_draining(owner)
            }
            _ => false,
        }
    }
}

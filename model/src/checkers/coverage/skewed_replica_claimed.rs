//! `sometimes-skewed-replica-claimed`: a replica with a skewed clock took a claim.

use crate::dense::{DenseMap, DenseSet};
use crate::ids::ProcessId;

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct SkewedReplicaClaimed {
    /// Replicas whose clock was skewed.
    skewed: DenseSet<u32>,
    /// Each restarted replica's current process.
    replica_process: DenseMap<u32, ProcessId>,
}

impl Property for SkewedReplicaClaimed {
    const NAME: &'static str = "sometimes-skewed-replica-claimed";
    const DESCRIPTION: &'static str = "a replica with a skewed clock took a claim";
    const READS: &'static [u8] = &[tag::CLOCK_SKEWED, tag::REPLICA_RESTARTED, tag::CLAIM_GRANTED];

    fn expected(s: &Scenario) -> bool {
        !s.faults.clock_skew.offset_max.is_zero() || s.faults.clock_skew.drift_ppm_max > 0
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        match event {
            E::ClockSkewed { replica, .. } => {
                self.skewed.insert(*replica);
                false
            }
            E::ReplicaRestarted { replica, process } => {
                self.replica_process.insert(*replica, *process);
                false
            }
            E::ClaimGranted { process: Some(p), .. } => {
                // Process ids are handed out in boot order, replica i's first process is i+1.
                let replica =
                    self.replica_process.iter().find(|(_, q)| *q == p).map(|(r, _)| r).unwrap_or(p.0.saturating_sub(1));
                self.skewed.contains(replica)
            }
            _ => false,
        }
    }
}

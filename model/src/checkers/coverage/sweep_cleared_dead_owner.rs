//! `sometimes-sweep-cleared-dead-owner`: the sweeper cleared a claim whose owner's process
//! had died. Witnessed: the store's grants and sweeps, the executor's crash.

use std::collections::BTreeMap;

use crate::dense::DenseSet;
use crate::ids::{OwnerId, ProcessId};

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct SweepClearedDeadOwner {
    /// The process that was granted each owner's claims.
    owner_process: BTreeMap<OwnerId, ProcessId>,
    /// Processes witnessed crashed.
    dead: DenseSet<ProcessId>,
}

impl Property for SweepClearedDeadOwner {
    const NAME: &'static str = "sometimes-sweep-cleared-dead-owner";
    const DESCRIPTION: &'static str = "the sweeper cleared a dead owner's claim";
    const READS: &'static [u8] = &[tag::CLAIM_GRANTED, tag::REPLICA_CRASHED, tag::SWEPT];

    fn expected(s: &Scenario) -> bool {
        super::crashes(s)
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        match event {
            E::ClaimGranted { owner, process: Some(p), .. } => {
                self.owner_process.insert(*owner, *p);
                false
            }
            E::ReplicaCrashed { process, .. } => {
                self.dead.insert(*process);
                false
            }
            E::Swept { owner, .. } => self.owner_process.get(owner).is_some_and(|p| self.dead.contains(*p)),
            _ => false,
        }
    }
}

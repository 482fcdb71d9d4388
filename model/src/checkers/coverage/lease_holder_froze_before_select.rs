//! `sometimes-lease-holder-froze-before-select`: a lease holder froze between its lease
//! grant and its sweep's select: it may wake with the lease lapsed (R18). Witnessed: the
//! store's lease grant and select, the executor's pause. Only a two-step sweep has a select
//! to witness the end of the window.

use crate::dense::DenseSet;
use crate::ids::ProcessId;

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct LeaseHolderFrozeBeforeSelect {
    /// Processes granted the lease whose sweep has not selected yet.
    before_select: DenseSet<ProcessId>,
}

impl Property for LeaseHolderFrozeBeforeSelect {
    const NAME: &'static str = "sometimes-lease-holder-froze-before-select";
    const DESCRIPTION: &'static str = "a lease holder froze between its lease grant and its sweep's select";
    const READS: &'static [u8] = &[tag::LEASE_ACQUIRED, tag::SWEEP_SELECTED, tag::REPLICA_CRASHED, tag::REPLICA_PAUSED];

    fn expected(s: &Scenario) -> bool {
        super::pauses(s) && super::two_step_sweep(s)
    }

    fn reached(&mut self, event: &E, view: &ModelView) -> bool {
        // A one-update sweep witnesses nothing when it clears nothing: no end of window.
        if !super::two_step_sweep(view.scenario()) {
            return false;
        }
        match event {
            E::LeaseAcquired { process, .. } => {
                self.before_select.insert(*process);
                false
            }
            E::SweepSelected { by: process, .. } | E::ReplicaCrashed { process, .. } => {
                self.before_select.remove(*process);
                false
            }
            E::ReplicaPaused { process, .. } => self.before_select.contains(*process),
            _ => false,
        }
    }
}

//! `sometimes-sweep-interrupted-between-steps`: a two-step sweep was interrupted between
//! its select and its clears: the sweeping process paused, or another process took the
//! lease, in between. Witnessed: the store's select and clears, the executor's pause, the
//! store's lease grants.

use crate::dense::DenseSet;
use crate::faults::kind::FaultKind;
use crate::ids::ProcessId;

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct SweepInterrupted {
    /// Processes between a two-step sweep's select (that found something) and its clears.
    mid_sweep: DenseSet<ProcessId>,
}

impl Property for SweepInterrupted {
    const NAME: &'static str = "sometimes-sweep-interrupted-between-steps";
    const DESCRIPTION: &'static str = "a two-step sweep was interrupted between its steps (a pause or a lease loss)";
    const READS: &'static [u8] = &[
        tag::SWEEP_SELECTED,
        tag::SWEPT,
        tag::SWEEP_CLEAR_MISSED,
        tag::REPLICA_CRASHED,
        tag::REPLICA_PAUSED,
        tag::LEASE_ACQUIRED,
    ];

    fn expected(s: &Scenario) -> bool {
        // A tick-drawn pause almost never falls between a sweep's statements; the lease fault's
        // mid-sweep pause puts one there. Needs stale claims to select.
        super::two_step_sweep(s)
            && !s.faults.lease.holder_pause_mid_sweep.is_never()
            && (super::crashes(s) || super::pauses(s) || super::on(s, FaultKind::SlowStep))
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        match event {
            E::SweepSelected { by, stale, .. } => {
                if *stale > 0 {
                    self.mid_sweep.insert(*by);
                }
                false
            }
            E::Swept { by, .. } | E::SweepClearMissed { by, .. } | E::ReplicaCrashed { process: by, .. } => {
                self.mid_sweep.remove(*by);
                false
            }
            E::ReplicaPaused { process, .. } => self.mid_sweep.contains(*process),
            E::LeaseAcquired { process, .. } => self.mid_sweep.iter().any(|p| p != *process),
            _ => false,
        }
    }
}

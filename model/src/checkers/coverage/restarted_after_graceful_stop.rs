//! `sometimes-restarted-after-graceful-stop`: a replica that stopped gracefully came back
//! as a new process.

use crate::dense::DenseSet;

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct RestartedAfterGracefulStop {
    /// Replicas whose last process stopped gracefully.
    stopped: DenseSet<u32>,
}

impl Property for RestartedAfterGracefulStop {
    const NAME: &'static str = "sometimes-restarted-after-graceful-stop";
    const DESCRIPTION: &'static str = "a replica that stopped gracefully restarted as a new process";
    const READS: &'static [u8] = &[tag::REPLICA_STOPPED, tag::REPLICA_CRASHED, tag::REPLICA_RESTARTED];

    fn expected(s: &Scenario) -> bool {
        !s.faults.cancel.shutdown_per_tick.is_never()
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        match event {
            E::ReplicaStopped { replica, .. } => {
                self.stopped.insert(*replica);
                false
            }
            E::ReplicaCrashed { replica, .. } => {
                self.stopped.remove(*replica);
                false
            }
            E::ReplicaRestarted { replica, .. } => self.stopped.remove(*replica),
            _ => false,
        }
    }
}

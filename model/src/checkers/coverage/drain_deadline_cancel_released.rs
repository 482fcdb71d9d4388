//! `sometimes-drain-deadline-cancel-released`: a replica's drain deadline cancelled an
//! execution still running, and the cancelled execution's exit path released its claim
//! before the process stopped. Witnessed: the environment's shutdown request and stop, the
//! executor's abort, the store's grants and releases.

use super::books::Drains;

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct DrainDeadlineCancelReleased {
    /// Who is draining, whose drain was cut, and whose claims.
    drains: Drains,
}

impl Property for DrainDeadlineCancelReleased {
    const NAME: &'static str = "sometimes-drain-deadline-cancel-released";
    const DESCRIPTION: &'static str =
        "a drain deadline cancelled a running execution, whose exit path then released its claim";
    const READS: &'static [u8] = &[
        tag::CLAIM_GRANTED,
        tag::SHUTDOWN_REQUESTED,
        tag::REPLICA_STOPPED,
        tag::REPLICA_CRASHED,
        tag::TASK_ABORTED,
        tag::RELEASED,
    ];

    fn expected(s: &Scenario) -> bool {
        // The deadline cuts an execution only if some step can outlast it.
        !s.faults.cancel.shutdown_per_tick.is_never() && s.faults.cancel.drain_timeout < s.workload.step_duration_max
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        if self.drains.observe(event) {
            return false;
        }
        match event {
            E::Released { owner, released: true, .. } => self.drains.owner_cut(owner),
            E::TaskAborted { process, .. } => {
                self.drains.cut(*process);
                false
            }
            _ => false,
        }
    }
}

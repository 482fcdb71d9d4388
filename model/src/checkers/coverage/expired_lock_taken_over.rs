//! `sometimes-expired-lock-taken-over`: a pull worker locked a task row whose earlier lock
//! had expired — its worker died or froze past it — so the store's path that re-locks an
//! expired task ran. Read from the store's witnesses: a task row is written when its
//! instance parks (`TaskParked`), and the store locks a row only if it is unlocked or its
//! lock expired, so a second `TaskLocked` of one parked row is a takeover.

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct ExpiredLockTakenOver {
    /// Instances whose current task row has been locked once.
    locked: std::collections::BTreeSet<crate::ids::InstanceId>,
}

impl Property for ExpiredLockTakenOver {
    const NAME: &'static str = "sometimes-expired-lock-taken-over";
    const DESCRIPTION: &'static str = "a pull worker took over a task whose lock had expired";
    const READS: &'static [u8] = &[tag::TASK_PARKED, tag::TASK_LOCKED];

    fn expected(s: &Scenario) -> bool {
        let f = &s.faults;
        s.workload.pull_weight > 0
            && (!f.replica_crash.pull_worker_per_tick.is_never() || !f.process_pause.pull_worker_per_tick.is_never())
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        match event {
            E::TaskParked { instance, .. } => {
                self.locked.remove(instance);
                false
            }
            E::TaskLocked { instance, .. } => !self.locked.insert(*instance),
            _ => false,
        }
    }
}

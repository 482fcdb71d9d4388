//! `sometimes-hung-up-migration-released`: the client of a migration hung up while its
//! handler held the claim, and the handler's exit path released it — the dropped-future
//! exit `exits-release` and `live-leak` judge was run, not just written. Read from
//! witnesses: the store names the task that sent a matching release, and the replica's
//! server the request that ended with its client gone.

use std::collections::BTreeSet;

use crate::event::AdminStatus;

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct HungUpMigrationReleased {
    /// Tasks whose release matched a claim.
    released: BTreeSet<u64>,
}

impl Property for HungUpMigrationReleased {
    const NAME: &'static str = "sometimes-hung-up-migration-released";
    const DESCRIPTION: &'static str = "a migration whose client hung up released its claim on the way out";
    const READS: &'static [u8] = &[tag::RELEASED, tag::ADMIN_REQUEST_ENDED];

    fn expected(s: &Scenario) -> bool {
        super::migrates(s)
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        match event {
            E::Released { released: true, task: Some(task), .. } => {
                self.released.insert(*task);
                false
            }
            E::AdminRequestEnded { task, status, .. } => self.released.remove(task) && *status == AdminStatus::HungUp,
            _ => false,
        }
    }
}

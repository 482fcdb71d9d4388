//! `sometimes-migration-retried-after-claim-held`: a migration answered 409
//! `SUTRA.ADMIN.MIGRATE.CLAIM_HELD` was sent again by its client and then migrated the
//! instance — "you lost a race, try again" acted on to the end, the situation the
//! CLAIM_HELD half of `codes-acted-on` judges. Read from the admin server's witnesses: what
//! it received (the request id) and what it answered, paired by handler task.

use std::collections::{BTreeMap, BTreeSet};

use crate::event::AdminStatus;
use crate::ids::{Code, ProcessId};

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct RetriedAfterClaimHeld {
    /// Handlers in flight, by (process, task): the (client, request) they serve.
    handling: BTreeMap<(ProcessId, u64), (u32, u32)>,
    /// Requests answered CLAIM_HELD at least once.
    lost_a_race: BTreeSet<(u32, u32)>,
}

impl Property for RetriedAfterClaimHeld {
    const NAME: &'static str = "sometimes-migration-retried-after-claim-held";
    const DESCRIPTION: &'static str = "a migration answered 409 CLAIM_HELD was sent again and migrated the instance";
    const READS: &'static [u8] = &[tag::ADMIN_REQUEST_RECEIVED, tag::ADMIN_REQUEST_ENDED];

    fn expected(s: &Scenario) -> bool {
        super::migrates(s)
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        match event {
            E::AdminRequestReceived { process, task, client, request, .. } => {
                self.handling.insert((*process, *task), (*client, *request));
                false
            }
            E::AdminRequestEnded { process, task, status, code, .. } => {
                let Some(key) = self.handling.remove(&(*process, *task)) else { return false };
                if *code == Some(Code::MigrateClaimHeld) {
                    self.lost_a_race.insert(key);
                }
                *status == AdminStatus::Migrated && self.lost_a_race.contains(&key)
            }
            _ => false,
        }
    }
}

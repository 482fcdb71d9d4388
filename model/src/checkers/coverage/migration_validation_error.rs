//! `sometimes-migration-validation-error`: a migration that held the claim failed
//! validation (the instance had completed) and answered 422 — the exit `exits-release`
//! judges after a grant, witnessed by the replica's server.

use crate::event::AdminStatus;

use super::prelude::*;

/// The property.
#[derive(Default)]
pub struct MigrationValidationError;

impl Property for MigrationValidationError {
    const NAME: &'static str = "sometimes-migration-validation-error";
    const DESCRIPTION: &'static str = "a migration answered 422 after claiming a completed instance";
    const READS: &'static [u8] = &[tag::ADMIN_REQUEST_ENDED];

    fn expected(s: &Scenario) -> bool {
        super::migrates(s)
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        matches!(event, E::AdminRequestEnded { status: AdminStatus::Invalid, .. })
    }
}

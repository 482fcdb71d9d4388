//! `sometimes-admin-409`: a migration was answered 409 (the store refused the
//! administrative claim).

use crate::ids::ResumePath;

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct Admin409;

impl Property for Admin409 {
    const NAME: &'static str = "sometimes-admin-409";
    const DESCRIPTION: &'static str = "a migration was answered 409";
    const READS: &'static [u8] = &[tag::CLAIM_REFUSED];

    fn expected(s: &Scenario) -> bool {
        super::migrates(s)
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        matches!(event, E::ClaimRefused { path: ResumePath::Migration, .. })
    }
}

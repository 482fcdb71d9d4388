//! `sometimes-step-committed`: a step committed (the store's witness).

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct StepCommitted;

impl Property for StepCommitted {
    const NAME: &'static str = "sometimes-step-committed";
    const DESCRIPTION: &'static str = "a step exited by committing";
    const READS: &'static [u8] = &[tag::COMMIT_ACCEPTED];

    fn expected(_: &Scenario) -> bool {
        true
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        matches!(event, E::CommitAccepted { .. })
    }
}

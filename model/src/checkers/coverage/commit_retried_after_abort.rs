//! `sometimes-commit-retried-after-abort`: a step's commit was aborted by the store and the
//! client sent it again (R19's retry). Witnessed: the store's read names the lane task, and
//! the abort is reported from that task; narrative: the step's end says the next call is
//! the commit. It reads no dispatches: the lane a step runs in matters only to the freeze.

use super::books::Commits;

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct CommitRetriedAfterAbort {
    /// Which commits are pending, and which were aborted.
    commits: Commits,
}

impl Property for CommitRetriedAfterAbort {
    const NAME: &'static str = "sometimes-commit-retried-after-abort";
    const DESCRIPTION: &'static str = "a step's commit was aborted by the store and sent again";
    const READS: &'static [u8] = &[
        tag::STORE_READ,
        tag::STEP_ENDED,
        tag::FAULT_INJECTED,
        tag::COMMIT_ACCEPTED,
        tag::COMMIT_REJECTED,
        tag::EXECUTION_ENDED,
    ];

    fn expected(s: &Scenario) -> bool {
        !s.faults.store.abort_per_call.is_never()
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        self.commits.observe(event).is_some()
    }
}

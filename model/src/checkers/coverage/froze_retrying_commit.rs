//! `sometimes-froze-retrying-commit`: a process froze while one of its commits was being
//! retried after a store abort: its claim may be swept before the retry lands (R19).
//! Witnessed and narrative as `sometimes-commit-retried-after-abort`, plus the executor's
//! pause and the lane a step was dispatched to.

use super::books::Commits;

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct FrozeRetryingCommit {
    /// Which commits are pending, which were aborted, and where each step runs.
    commits: Commits,
}

impl Property for FrozeRetryingCommit {
    const NAME: &'static str = "sometimes-froze-retrying-commit";
    const DESCRIPTION: &'static str = "a process froze while a commit of its was being retried after a store abort";
    const READS: &'static [u8] = &[
        tag::STORE_READ,
        tag::DISPATCHED,
        tag::STEP_ENDED,
        tag::FAULT_INJECTED,
        tag::COMMIT_ACCEPTED,
        tag::COMMIT_REJECTED,
        tag::EXECUTION_ENDED,
        tag::REPLICA_PAUSED,
    ];

    fn expected(s: &Scenario) -> bool {
        // Needs a pause to fall within a retried commit's backoff: 10-24 seeds in 3,000 of smoke,
        // swarm and real-world; where most steps park for a pull worker (pull-workers: 4 in
        // 3,000) it is too rare to demand of a sweep.
        !s.faults.store.abort_per_call.is_never() && super::pauses(s) && super::mostly_unparked(s)
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        match event {
            E::ReplicaPaused { process, .. } => self.commits.retrying_on(*process),
            _ => {
                self.commits.observe(event);
                false
            }
        }
    }
}

//! `sometimes-ambiguous-commit-resolved`: a commit whose reply was lost was resolved as
//! committed (its execution ended committed). Witnessed loss (the environment), narrative
//! end: only the execution knows how it resolved what it never heard.

use crate::dense::DenseSet;
use crate::event::{CallFault, Exit, StoreCall};
use crate::ids::ExecId;

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct AmbiguousCommitResolved {
    /// Executions whose commit reply was lost.
    lost: DenseSet<ExecId>,
}

impl Property for AmbiguousCommitResolved {
    const NAME: &'static str = "sometimes-ambiguous-commit-resolved";
    const DESCRIPTION: &'static str = "a commit whose reply was lost was recognised as committed";
    const READS: &'static [u8] = &[tag::CALL_STRUCK, tag::EXECUTION_ENDED];

    fn expected(s: &Scenario) -> bool {
        // A lost reply on a commit.
        !s.faults.store_replies.reply_lost_per_call.is_never()
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        match event {
            E::CallStruck { exec, call: StoreCall::Commit, fault: CallFault::ReplyLost, .. } => {
                self.lost.insert(*exec);
                false
            }
            E::ExecutionEnded { exec, exit: Exit::Committed, .. } => self.lost.contains(*exec),
            _ => false,
        }
    }
}

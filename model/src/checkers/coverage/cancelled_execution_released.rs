//! `sometimes-cancelled-execution-released`: an execution cancelled while its process lived
//! released its claim on the way out.

use crate::dense::DenseSet;
use crate::event::Exit;
use crate::faults::kind::FaultKind;
use crate::ids::ExecId;

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct CancelledExecutionReleased {
    /// Executions whose claim was released.
    released: DenseSet<ExecId>,
}

impl Property for CancelledExecutionReleased {
    const NAME: &'static str = "sometimes-cancelled-execution-released";
    const DESCRIPTION: &'static str = "an execution cancelled while its process lived released its claim";
    const READS: &'static [u8] = &[tag::RELEASED, tag::EXECUTION_ENDED];

    fn expected(s: &Scenario) -> bool {
        super::on(s, FaultKind::Cancel)
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        match event {
            E::Released { exec, released: true, .. } => {
                self.released.insert(*exec);
                false
            }
            E::ExecutionEnded { exec, exit: Exit::Cancelled, .. } => self.released.contains(*exec),
            _ => false,
        }
    }
}

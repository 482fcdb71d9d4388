//! `sometimes-pull-task-completed`: a pull worker completed a task.

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct PullTaskCompleted;

impl Property for PullTaskCompleted {
    const NAME: &'static str = "sometimes-pull-task-completed";
    const DESCRIPTION: &'static str = "a pull worker completed a task";
    const READS: &'static [u8] = &[tag::TASK_COMPLETED];

    fn expected(s: &Scenario) -> bool {
        s.workload.pull_weight > 0
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        matches!(event, E::TaskCompleted { .. })
    }
}

//! `sometimes-slow-owner-commit-rejected`: a live-but-slow owner's commit was rejected by
//! the store. Expected where slow steps or pauses make owners outlast their claims, and
//! where steps may outlast a short claim timeout by themselves (spec 000's tuning trade).

use crate::faults::kind::FaultKind;

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct SlowOwnerCommitRejected;

impl Property for SlowOwnerCommitRejected {
    const NAME: &'static str = "sometimes-slow-owner-commit-rejected";
    const DESCRIPTION: &'static str = "a live-but-slow owner's commit was rejected";
    const READS: &'static [u8] = &[tag::COMMIT_REJECTED];

    fn expected(s: &Scenario) -> bool {
        let (fitting, draws) = s.step_fit_share();
        super::on(s, FaultKind::SlowStep) || super::pauses(s) || fitting < draws
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        matches!(event, E::CommitRejected { .. })
    }
}

//! Slow steps: a live step outlasts the claim timeout (a live-but-slow owner). The sweeper
//! or a stale claim takes the instance meanwhile; the slow owner's commit then no longer
//! matches (R19).

use std::time::Duration;

use super::kind::FaultKind;
use crate::ctx::Context;
use crate::ctx::FaultGate;
use crate::streams;

/// How long the next step takes: normally up to the workload's maximum; when the fault
/// fires, longer than the claim timeout.
pub fn step_duration(ctx: &Context) -> (Duration, bool) {
    if ctx.fires(FaultGate::tick(FaultKind::SlowStep), ctx.faults().slow_step.per_step) {
        let timeout = ctx.scenario().timeouts.claim_timeout;
        let d = timeout + streams::millis_up_to(streams::STEPS, timeout);
        ctx.report(FaultKind::SlowStep, None, d);
        (d, true)
    } else {
        (streams::millis_up_to(streams::STEPS, ctx.scenario().workload.step_duration_max), false)
    }
}

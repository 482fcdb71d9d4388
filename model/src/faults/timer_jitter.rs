//! Timer jitter: a due timer fires late. Late fires are still at-least-once and still
//! claim before they touch anything.

use std::time::Duration;

use super::kind::FaultKind;
use crate::ctx::Context;
use crate::ctx::FaultGate;
use crate::streams;

/// How late the next fire is (zero when the fault does not fire).
pub fn lateness(ctx: &Context) -> Duration {
    let options = &ctx.faults().timer_jitter;
    if !ctx.fires(FaultGate::tick(FaultKind::TimerJitter), options.late_per_fire) {
        return Duration::ZERO;
    }
    let late = streams::millis_up_to(streams::TIMERS, options.late_max);
    ctx.report(FaultKind::TimerJitter, None, late);
    late
}

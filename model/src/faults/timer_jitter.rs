//! Timer jitter: a due timer fires late. Late fires are still at-least-once and still
//! claim before they touch anything.

use std::time::Duration;

use super::FaultKind;
use crate::streams;
use crate::world::World;

/// How late the next fire is (zero when the fault does not fire).
pub fn lateness(world: &World) -> Duration {
    let options = &world.faults.timer_jitter;
    if !world.fault(options.late_per_fire) {
        return Duration::ZERO;
    }
    let late = streams::millis_up_to(streams::TIMERS, options.late_max);
    super::report(world, FaultKind::TimerJitter, None, late);
    late
}

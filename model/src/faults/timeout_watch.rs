//! Witnessing clock skew in a replica's periodic timers: a timer sleeps by its node's
//! clock, so on a skewed clock it fires early or late in store time. [`TimeoutWatch`]
//! reports that it happened, so that coverage can show it.

use std::cell::Cell;
use std::time::Duration;

use sutra_sim_core::executor;

use crate::event::ModelEvent;
use crate::ids::ProcessId;

/// Watches one periodic timer of a process: reports (once each way) a fire that came early
/// or late in store time because the process's clock is skewed.
#[derive(Default)]
pub struct TimeoutWatch {
    early: Cell<bool>,
    late: Cell<bool>,
}

impl TimeoutWatch {
    /// Sleeps `period` by the current node's clock, and reports `TimeoutSkewed` the first
    /// time the fire comes early in store time, and the first time it comes late while the
    /// node's own clock measured no more than `period` (a pause makes a timer late too, but
    /// by the node's clock as well: that is no skew).
    pub async fn sleep(&self, ctx: &crate::ctx::Context, process: ProcessId, period: Duration) {
        let (sim_before, local_before) = (executor::now(), executor::local_now());
        executor::sleep(period).await;
        let took = executor::now().since(sim_before);
        if took == period {
            return;
        }
        let measured = executor::local_now().since(local_before);
        let flag = if took < period {
            &self.early
        } else if measured <= period + SKEW_ROUNDING {
            &self.late
        } else {
            return;
        };
        if !flag.replace(true) {
            ctx.emit(ModelEvent::TimeoutSkewed {
                process,
                asked_ns: sutra_sim_core::time::duration_nanos(period),
                took_ns: sutra_sim_core::time::duration_nanos(took),
            });
        }
    }
}

/// How far a skewed clock's reading may pass a deadline at the instant it falls due: the
/// conversion between clocks rounds to the nanosecond.
const SKEW_ROUNDING: Duration = Duration::from_micros(1);

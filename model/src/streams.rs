//! The entropy sub-streams of the model, one per subsystem, so that a new draw in one
//! subsystem does not reshuffle what the others see (STYLE.md 1).

use sutra_sim_core::Stream;

/// Store latencies.
pub const STORE: Stream = Stream(2);
/// Broker delivery choices and delays.
pub const BROKER: Stream = Stream(3);
/// Fault occurrence and shape.
pub const FAULTS: Stream = Stream(4);
/// Workload shape (plans, delays).
pub const WORKLOAD: Stream = Stream(5);
/// Step durations and outcomes.
pub const STEPS: Stream = Stream(6);
/// Administrative migrations.
pub const ADMIN: Stream = Stream(7);
/// Swarm configuration.
pub const SWARM: Stream = Stream(8);
/// Timer jitter.
pub const TIMERS: Stream = Stream(9);
/// Pull workers.
pub const PULL: Stream = Stream(10);
/// Routing and mis-routing.
pub const ROUTING: Stream = Stream(11);
/// The phases of the periodic roles and the instants of the fault ticks.
pub const PHASES: Stream = Stream(12);
/// The store's request/reply boundary: lost requests and replies, callers struck at a call.
pub const WIRE: Stream = Stream(13);
/// Faults striking pull workers (their own stream: drawing them reshuffles no other fault).
pub const PULL_FAULTS: Stream = Stream(14);

/// A duration in `[0, max]` drawn in whole milliseconds from `stream`; 0 is the simplest.
pub fn millis_up_to(stream: Stream, max: std::time::Duration) -> std::time::Duration {
    let max_ms = u32::try_from(max.as_millis()).unwrap_or(u32::MAX - 1);
    std::time::Duration::from_millis(u64::from(sutra_sim_core::executor::choose_in(stream, max_ms + 1)))
}

/// A duration in `[0, max)` drawn to the nanosecond from `stream` (zero if `max` is zero);
/// 0 is the simplest. Spans past `u32` nanoseconds (about 4.3 s) are drawn as whole
/// milliseconds and then nanoseconds within one.
pub fn nanos_below(stream: Stream, max: std::time::Duration) -> std::time::Duration {
    use sutra_sim_core::executor::choose_in;
    let max_ns = sutra_sim_core::time::duration_nanos(max);
    if max_ns == 0 {
        return std::time::Duration::ZERO;
    }
    let ns = match u32::try_from(max_ns) {
        Ok(n) => u64::from(choose_in(stream, n)),
        Err(_) => {
            let ms = u32::try_from(max_ns / 1_000_000).unwrap_or(u32::MAX);
            u64::from(choose_in(stream, ms)) * 1_000_000 + u64::from(choose_in(stream, 1_000_000))
        }
    };
    std::time::Duration::from_nanos(ns.min(max_ns - 1))
}

//! The store's clock: one process-wide clock, nanoseconds since the Unix epoch, read by the
//! store layer inside each transaction (after SQLite's write lock is taken) and bound to the
//! statements as "now". It is the only clock staleness is judged by (spec 000), and every
//! witness's `time_ns` — store, broker and harness alike — is read from it. It is the wall
//! clock once, at start, carried forward by the monotonic clock, so it never goes back.
//!
//! A replica's own clock ([`Clock::local_ns`]) is this one plus the replica's offset (the
//! clock-offset fault): its timer poller and its sweeper's cadence follow it.

use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The store's clock.
pub struct Clock {
    start: Instant,
    start_ns: u64,
}

static CLOCK: OnceLock<Clock> = OnceLock::new();

impl Clock {
    /// The process-wide store clock.
    pub fn store() -> &'static Clock {
        CLOCK.get_or_init(|| {
            let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).expect("the wall clock is after 1970");
            Clock { start: Instant::now(), start_ns: u64::try_from(since_epoch.as_nanos()).expect("before 2554") }
        })
    }

    /// The store's time now, in ns since the Unix epoch.
    pub fn now_ns(&self) -> u64 {
        self.start_ns + u64::try_from(self.start.elapsed().as_nanos()).expect("a run shorter than 584 years")
    }

    /// A replica's own time: the store's plus its offset.
    pub fn local_ns(&self, offset_ns: i64) -> u64 {
        self.now_ns().saturating_add_signed(offset_ns)
    }
}

/// Nanoseconds as the BIGINT the statements bind.
pub fn sql_ns(ns: u64) -> i64 {
    i64::try_from(ns).expect("times and spans fit a BIGINT until 2262")
}

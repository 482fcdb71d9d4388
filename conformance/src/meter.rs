//! The runtime's claim-bounce meter (R13): how many claims the lanes heard refused, by
//! path. A lane counts a refusal the moment its reply reaches it, pushed to a collector that
//! outlives the process (as a StatsD or OTLP counter pushed per event would: a crashed
//! process's counts are not lost with it). At the end of the run the harness reads it once,
//! as a metrics scrape would, and witnesses the reading (`bounce-meter`), so
//! `bounce-meter-agrees` judges the meter against the store's own refusals.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::store::Path;

/// The counters, shared by every lane of every process.
#[derive(Debug, Default)]
pub struct BounceMeter {
    relay: AtomicU32,
    timer: AtomicU32,
}

impl BounceMeter {
    /// A lane heard its claim on `path` refused.
    pub fn count(&self, path: Path) {
        let counter = match path {
            Path::Relay => &self.relay,
            Path::Timer => &self.timer,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The reading: (relay, timer).
    pub fn read(&self) -> (u32, u32) {
        (self.relay.load(Ordering::Relaxed), self.timer.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_each_path_apart() {
        let m = BounceMeter::default();
        m.count(Path::Relay);
        m.count(Path::Timer);
        m.count(Path::Relay);
        assert_eq!(m.read(), (2, 1));
    }
}

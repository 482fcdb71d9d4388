//! How long a process *ran* — alive and not frozen — between two instants, from the
//! environment's witnesses alone (`ReplicaPaused`, `ReplicaResumed`, `ReplicaCrashed`).
//!
//! Checkers that give a live process a bound to do something by (release on its way out,
//! give a refused delivery back) must not count the time it was frozen or dead: a frozen
//! process runs nothing, and a dead one never will. Counting running time rather than
//! excusing any freeze at all is what keeps such a bound honest: a process that ran on for
//! seconds and only then paused had its chance (issue 23).

use crate::dense::DenseMap;
use crate::event::ModelEvent;
use crate::ids::ProcessId;

/// The freezes and deaths of every process witnessed so far.
#[derive(Default)]
pub struct RunningTime {
    /// When each process crashed (ns): it runs nothing afterwards.
    crashed_ns: DenseMap<ProcessId, u64>,
    /// Each process's freezes, (from, until) in ns; `until` is `None` while it is frozen.
    frozen: DenseMap<ProcessId, Vec<(u64, Option<u64>)>>,
}

impl RunningTime {
    /// The event tags this reads.
    pub const TAGS: [u8; 3] =
        [crate::event::tag::REPLICA_PAUSED, crate::event::tag::REPLICA_RESUMED, crate::event::tag::REPLICA_CRASHED];

    /// Notes a freeze, a resumption or a death witnessed at `now`; ignores other events.
    /// Inline, so that the checkers that call it on every event they read pay a test of the
    /// event's kind, not a call, for the events it ignores (nearly all).
    #[inline]
    pub fn observe(&mut self, kind: &ModelEvent, now: u64) {
        if matches!(
            kind,
            ModelEvent::ReplicaCrashed { .. } | ModelEvent::ReplicaPaused { .. } | ModelEvent::ReplicaResumed { .. }
        ) {
            self.book(kind, now);
        }
    }

    /// Books a freeze, a resumption or a death.
    fn book(&mut self, kind: &ModelEvent, now: u64) {
        match kind {
            ModelEvent::ReplicaCrashed { process, .. } => {
                self.crashed_ns.get_or_insert_with(*process, || now);
            }
            ModelEvent::ReplicaPaused { process, .. } => {
                let spans = self.frozen.get_or_insert_with(*process, Vec::new);
                if spans.last().is_none_or(|last| last.1.is_some()) {
                    spans.push((now, None));
                }
            }
            ModelEvent::ReplicaResumed { process, .. } => {
                if let Some(last) = self.frozen.get_mut(*process).and_then(|spans| spans.last_mut()) {
                    last.1.get_or_insert(now);
                }
            }
            _ => {}
        }
    }

    /// How long `process` ran between `from` and `to` (ns): neither frozen nor dead.
    pub fn ran_between(&self, process: ProcessId, from: u64, to: u64) -> u64 {
        let to = self.crashed_ns.get(process).map_or(to, |&crashed| crashed.min(to));
        if to <= from {
            return 0;
        }
        let frozen: u64 = self
            .frozen
            .get(process)
            .map(|spans| {
                spans.iter().map(|&(start, until)| until.unwrap_or(to).min(to).saturating_sub(start.max(from))).sum()
            })
            .unwrap_or(0);
        (to - from).saturating_sub(frozen)
    }

    /// True if `process` has crashed.
    pub fn crashed(&self, process: ProcessId) -> bool {
        self.crashed_ns.contains_key(process)
    }

    /// Forgets `process`'s freezes and death, for a checker that knows no witness it still
    /// judges will ask about it (see [`crate::checkers::process_ends`]). Asked again, it
    /// reads as a process that ran throughout.
    pub fn forget(&mut self, process: ProcessId) {
        self.crashed_ns.remove(process);
        self.frozen.remove(process);
    }

    /// The processes with a freeze or a death on the books (some counted twice): what a
    /// checker's test counts to see the books stay small.
    pub fn entries(&self) -> usize {
        self.crashed_ns.len() + self.frozen.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_time_leaves_out_freezes_and_everything_after_a_death() {
        let mut t = RunningTime::default();
        let p = ProcessId(1);
        t.observe(&ModelEvent::ReplicaPaused { replica: 0, process: p, for_ns: 5 }, 10);
        t.observe(&ModelEvent::ReplicaResumed { replica: 0, process: p }, 15);
        assert_eq!(t.ran_between(p, 0, 20), 15);
        assert_eq!(t.ran_between(p, 12, 20), 5);
        t.observe(&ModelEvent::ReplicaPaused { replica: 0, process: p, for_ns: 5 }, 30);
        assert_eq!(t.ran_between(p, 20, 100), 10, "still frozen");
        t.observe(&ModelEvent::ReplicaResumed { replica: 0, process: p }, 40);
        t.observe(&ModelEvent::ReplicaCrashed { replica: 0, process: p }, 50);
        assert_eq!(t.ran_between(p, 20, 100), 20);
        assert_eq!(t.ran_between(ProcessId(2), 20, 100), 80, "another process ran throughout");
    }
}

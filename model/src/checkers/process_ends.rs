//! Processes witnessed ended — crashed (`ReplicaCrashed`) or stopped (`ReplicaStopped`) —
//! whose requests have all landed.
//!
//! A checker that keeps books per process (its freezes and death, [`RunningTime`]) must keep
//! them while a witness may still name the process: a request on the wire outlives its
//! sender, and the store's witness of it names the process. Where the history declares how
//! long a store request takes at most (`store_call_latency_max_ns`,
//! [`ModelView::store_call_latency`]), none can land once that long has passed since the
//! end: the process is *settled*, and a checker with nothing of it left pending may forget
//! it. Without the declaration (and in a simulation) nothing settles, and nothing is
//! forgotten.
//!
//! [`RunningTime`]: crate::checkers::running_time::RunningTime

use std::collections::VecDeque;

use crate::event::ModelEvent;
use crate::ids::ProcessId;
use crate::view::ModelView;

/// Ended processes waiting for their last requests to land.
#[derive(Default)]
pub struct ProcessEnds {
    /// In the order they ended: the instant (ns) after which none of the process's requests
    /// can land, and the process.
    waiting: VecDeque<(u64, ProcessId)>,
    /// The latest instant witnessed (ns): an end is dated from it, so that `waiting` stays
    /// in order whatever the clocks of the writers.
    now_ns: u64,
    /// The declared store call latency (ns), once read from the view.
    latency_ns: Option<u64>,
}

impl ProcessEnds {
    /// The event tags this reads.
    pub const TAGS: [u8; 2] = [crate::event::tag::REPLICA_CRASHED, crate::event::tag::REPLICA_STOPPED];

    /// Notes the instant of an event, and the end of a process if `kind` witnesses one.
    pub fn observe(&mut self, kind: &ModelEvent, now: u64, view: &ModelView) {
        self.now_ns = self.now_ns.max(now);
        if let ModelEvent::ReplicaCrashed { process, .. } | ModelEvent::ReplicaStopped { process, .. } = kind {
            self.latency_ns = view.store_call_latency().map(sutra_sim_core::time::duration_nanos);
            if let Some(latency) = self.latency_ns {
                self.waiting.push_back((self.now_ns.saturating_add(latency), *process));
            }
        }
    }

    /// The ended processes whose requests have all landed by now, taken off the list.
    pub fn settled(&mut self) -> Vec<ProcessId> {
        let mut settled = Vec::new();
        while let Some(&(at, process)) = self.waiting.front() {
            if at > self.now_ns {
                break;
            }
            self.waiting.pop_front();
            settled.push(process);
        }
        settled
    }

    /// Puts a settled `process` back on the list, to be offered again a latency from now:
    /// its checker still has something of it pending.
    pub fn offer_later(&mut self, process: ProcessId) {
        let latency = self.latency_ns.unwrap_or(0).max(1);
        self.waiting.push_back((self.now_ns.saturating_add(latency), process));
    }

    /// Ended processes still waiting (a test counts them to see the books stay small).
    pub fn len(&self) -> usize {
        self.waiting.len()
    }

    /// True if none is waiting.
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crashed(process: u32) -> ModelEvent {
        ModelEvent::ReplicaCrashed { replica: 0, process: ProcessId(process) }
    }

    #[test]
    fn a_process_settles_once_the_declared_latency_passed_since_its_end_and_never_without_it() {
        let declared =
            crate::checkers::testing::view().with_store_call_latency(Some(std::time::Duration::from_millis(100)));
        let mut ends = ProcessEnds::default();
        ends.observe(&crashed(1), 1_000_000_000, &declared);
        ends.observe(&crashed(2), 1_050_000_000, &declared);
        assert!(ends.settled().is_empty(), "nothing has waited the latency");
        ends.observe(&ModelEvent::ReplicaResumed { replica: 0, process: ProcessId(3) }, 1_100_000_000, &declared);
        assert_eq!(ends.settled(), vec![ProcessId(1)]);
        ends.offer_later(ProcessId(1));
        ends.observe(&ModelEvent::ReplicaResumed { replica: 0, process: ProcessId(3) }, 1_150_000_000, &declared);
        assert_eq!(ends.settled(), vec![ProcessId(2)]);
        ends.observe(&ModelEvent::ReplicaResumed { replica: 0, process: ProcessId(3) }, 1_200_000_000, &declared);
        assert_eq!(ends.settled(), vec![ProcessId(1)], "offered again a latency later");
        let mut undeclared = ProcessEnds::default();
        undeclared.observe(&crashed(1), 0, &crate::checkers::testing::view());
        assert!(undeclared.is_empty(), "without the declaration nothing settles");
    }
}

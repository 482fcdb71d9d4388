//! prefetch-window (always; broker flow control, DESIGN.md §4 "Broker"): a consumer never
//! holds more unsettled deliveries than the scenario's prefetch window
//! (`topology.prefetch`). The window is a contract of the simulated environment: a broker
//! that hands out one relay too many changes how much work a replica takes on at once,
//! and every other verdict is then about a world the scenario did not describe.
//!
//! Judged from the broker's witnesses alone: a delivery (`RelayDelivered`) puts a relay in
//! its consumer's window; an ack (`RelayAcked`), a requeue (`RelayRequeued`) or a reclaim
//! (`RelayReclaimed`) takes it out. Acks and requeues name the message, not the consumer:
//! when copies of one message (the duplicate-delivery fault) are unsettled at two
//! consumers at once, the checker cannot tell whose copy was settled and takes one out of
//! each — so its counts never exceed the true ones, and every failure it reports is real.
//!
//! A bug that would still pass: a window exceeded only while duplicates of one message sit
//! at two consumers, since an ambiguous settle lowers both counts.
//!
//! An ack names only the message, so the checker keeps, beside each consumer's window, the
//! consumers holding each unsettled message: a settle visits those alone, not every
//! consumer the run has had (a 10-million-event history has hundreds of thousands, and
//! `check` spent nearly all its time walking them on every ack).
//!
//! **What it forgets.** A consumer with nothing unsettled is dropped (an empty window reads
//! as an absent one), and a message with no unsettled copy: the books hold the deliveries
//! in flight, not every consumer and message of a long history. They are trees, so that
//! one delivery never settled (the history ended first) costs its own entry, not a slot for
//! every consumer after it.
//!
//! The books are kept once per run in the view's ledger ([`crate::checkers::ledger`]),
//! shared with `sometimes-prefetch-window-full`, which asks about the same events.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::checkers::ledger::{Reader, PREFETCH_READS};
use crate::event::{millis_text, ModelEvent};
use crate::ids::{MessageId, ProcessId};
use crate::view::ModelView;

/// The checker; its books are in the view's ledger.
pub struct PrefetchWindow;

/// The checker's books: unsettled deliveries per consumer, by message (a lower bound of
/// the broker's own count).
#[derive(Default)]
pub struct PrefetchBooks {
    unsettled: BTreeMap<ProcessId, Held>,
    /// The consumers holding at least one unsettled copy of each message, each once.
    /// Invariant: `p` is in `holders[m]` exactly when `unsettled[p]` holds a copy of `m`;
    /// a message no consumer holds has no entry, so the map is as small as the unsettled
    /// deliveries, however many messages the run has sent.
    holders: BTreeMap<MessageId, Holders>,
}

/// The consumers holding one message. Almost always one (a second only while a duplicate
/// is out), so one is kept inline: a list per delivered message was an allocation and a
/// free on every relay, which made the index cost more than the scan it replaced in a
/// world of a few consumers.
enum Holders {
    One(ProcessId),
    Many(Vec<ProcessId>),
}

impl Holders {
    /// Adds `consumer`, which is not among them.
    fn add(&mut self, consumer: ProcessId) {
        match self {
            Holders::One(first) => *self = Holders::Many(vec![*first, consumer]),
            Holders::Many(consumers) => consumers.push(consumer),
        }
    }

    /// Removes `consumer`; whether none is left.
    fn remove(&mut self, consumer: ProcessId) -> bool {
        match self {
            Holders::One(only) => *only == consumer,
            Holders::Many(consumers) => {
                consumers.retain(|&p| p != consumer);
                consumers.is_empty()
            }
        }
    }

    /// The consumers, each once.
    fn as_slice(&self) -> &[ProcessId] {
        match self {
            Holders::One(only) => std::slice::from_ref(only),
            Holders::Many(consumers) => consumers,
        }
    }
}

/// One consumer's unsettled deliveries: copies by message, and their total. A window
/// holds a handful of messages (at most the prefetch window, unless the checker is about
/// to fail), so a short list beats a tree; the total saves summing it on every delivery.
#[derive(Default)]
struct Held {
    total: u32,
    copies: Vec<(MessageId, u32)>,
}

impl Held {
    /// Takes one unsettled copy of `message` out, if there is one; whether it was the
    /// last.
    fn settle(&mut self, message: MessageId) -> bool {
        if let Some(at) = self.copies.iter().position(|(m, _)| *m == message) {
            self.total -= 1;
            self.copies[at].1 -= 1;
            if self.copies[at].1 == 0 {
                self.copies.swap_remove(at);
                return true;
            }
        }
        false
    }

    /// Books one more copy of `message`; whether it is the first.
    fn deliver(&mut self, message: MessageId) -> bool {
        self.total += 1;
        match self.copies.iter_mut().find(|(m, _)| *m == message) {
            Some((_, n)) => {
                *n += 1;
                false
            }
            None => {
                self.copies.push((message, 1));
                true
            }
        }
    }
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "prefetch-window",
        kind: CheckerKind::Always,
        description: "no consumer holds more unsettled deliveries than the scenario's prefetch window",
        rules: &[],
        factory: Arc::new(|| Box::new(PrefetchWindow)),
    }
}

impl PrefetchBooks {
    /// Takes one unsettled copy of `message` out of `consumer`'s window, if it has one;
    /// whether it was the consumer's last copy of it. An empty window is forgotten: it
    /// reads as an absent one.
    fn take_copy(&mut self, consumer: ProcessId, message: MessageId) -> bool {
        let Some(held) = self.unsettled.get_mut(&consumer) else { return false };
        let last = held.settle(message);
        if held.total == 0 {
            self.unsettled.remove(&consumer);
        }
        last
    }

    /// Takes one unsettled copy of `message` out of `consumer`'s window, if it has one.
    fn settle_at(&mut self, consumer: ProcessId, message: MessageId) {
        if self.take_copy(consumer, message) {
            self.forget_holder(message, consumer);
        }
    }

    /// `consumer` holds no copy of `message` any more.
    fn forget_holder(&mut self, message: MessageId, consumer: ProcessId) {
        if self.holders.get_mut(&message).is_some_and(|consumers| consumers.remove(consumer)) {
            self.holders.remove(&message);
        }
    }

    /// Books one broker witness; for a delivery, the consumer, the message and how many
    /// deliveries the consumer now holds unsettled (at least).
    pub(crate) fn observe(&mut self, event: &ModelEvent) -> Option<(ProcessId, MessageId, u32)> {
        match event {
            ModelEvent::RelayDelivered { message, process, .. } => {
                let held = self.unsettled.entry(*process).or_default();
                let first = held.deliver(*message);
                let total = held.total;
                if first {
                    match self.holders.entry(*message) {
                        Entry::Vacant(slot) => {
                            slot.insert(Holders::One(*process));
                        }
                        Entry::Occupied(mut slot) => slot.get_mut().add(*process),
                    }
                }
                return Some((*process, *message, total));
            }
            ModelEvent::RelayAcked { message, .. }
            | ModelEvent::RelayRequeued { message, .. }
            | ModelEvent::RelayDeadLettered { message, .. } => self.settle(*message),
            ModelEvent::RelayReclaimed { message, process, .. } => self.settle_at(*process, *message),
            _ => {}
        }
        None
    }

    /// An ack or requeue of `message`: settles one copy at each consumer holding one (one
    /// of them, when there is only one).
    fn settle(&mut self, message: MessageId) {
        let Some(consumers) = self.holders.remove(&message) else { return };
        let mut still: Option<Holders> = None;
        for &consumer in consumers.as_slice() {
            assert!(self.unsettled.contains_key(&consumer), "a holder has a window");
            if !self.take_copy(consumer, message) {
                match &mut still {
                    None => still = Some(Holders::One(consumer)),
                    Some(holders) => holders.add(consumer),
                }
            }
        }
        if let Some(still) = still {
            self.holders.insert(message, still);
        }
    }
}

impl Checker<ModelEvent, ModelView> for PrefetchWindow {
    fn interest(&self) -> u64 {
        sutra_sim_core::tag_mask(PREFETCH_READS)
    }

    fn name(&self) -> &str {
        "prefetch-window"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, view: &ModelView) -> Check {
        if let Some((process, message, held)) = view.ledger().prefetch(Reader::PrefetchWindow, event) {
            let prefetch = view.scenario().topology.prefetch;
            if held > prefetch {
                return Check::Fail(format!(
                    "the broker delivered m{} to p{} at {}, which now holds {held} unsettled deliveries: its prefetch window is {prefetch}",
                    message.0,
                    process.0,
                    millis_text(event.time.as_nanos())
                ));
            }
        }
        Check::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed, view};
    use crate::ids::InstanceId;

    fn delivered(message: u32, process: u32) -> ModelEvent {
        ModelEvent::RelayDelivered {
            instance: InstanceId(message),
            message: MessageId(message),
            process: ProcessId(process),
            redelivery: false,
            duplicate: false,
            delivery: None,
        }
    }

    fn acked(message: u32) -> ModelEvent {
        ModelEvent::RelayAcked { instance: InstanceId(message), message: MessageId(message), delivery: None }
    }

    fn prefetch() -> u32 {
        view().scenario().topology.prefetch
    }

    /// A full window at p1: `prefetch` deliveries, none settled.
    fn full_window() -> Vec<(u64, ModelEvent)> {
        (0..prefetch()).map(|m| (u64::from(m), delivered(m, 1))).collect()
    }

    #[test]
    fn a_full_window_is_allowed() {
        assert!(!fails(&feed(&mut PrefetchWindow, full_window())));
    }

    #[test]
    fn fires_on_one_delivery_past_the_window() {
        let mut history = full_window();
        history.push((100, delivered(prefetch(), 1)));
        assert!(fails(&feed(&mut PrefetchWindow, history)));
    }

    #[test]
    fn an_ack_a_requeue_or_a_reclaim_makes_room() {
        let n = prefetch();
        for settle in [
            acked(0),
            ModelEvent::RelayRequeued { instance: InstanceId(0), message: MessageId(0), delay_ns: 0, delivery: None },
            ModelEvent::RelayReclaimed {
                instance: InstanceId(0),
                message: MessageId(0),
                process: ProcessId(1),
                silent: false,
                delivery: None,
            },
        ] {
            let mut history = full_window();
            history.push((100, settle));
            history.push((101, delivered(n, 1)));
            assert!(!fails(&feed(&mut PrefetchWindow, history)));
        }
    }

    #[test]
    fn windows_are_per_consumer() {
        let mut history = full_window();
        history.push((100, delivered(prefetch(), 2)));
        assert!(!fails(&feed(&mut PrefetchWindow, history)));
        // A reclaim from another consumer makes no room at p1.
        let mut history = full_window();
        let reclaim = ModelEvent::RelayReclaimed {
            instance: InstanceId(0),
            message: MessageId(0),
            process: ProcessId(2),
            silent: false,
            delivery: None,
        };
        history.push((100, reclaim));
        history.push((101, delivered(prefetch(), 1)));
        assert!(fails(&feed(&mut PrefetchWindow, history)));
    }

    #[test]
    fn an_ambiguous_ack_of_a_duplicated_message_never_makes_a_false_alarm() {
        // m0 is unsettled at p1 and p2 (a duplicate); one ack settles one of them, the
        // checker does not know which and makes room at both.
        let mut history = full_window();
        history.push((100, delivered(0, 2)));
        history.push((101, acked(0)));
        history.push((102, delivered(prefetch(), 1)));
        assert!(!fails(&feed(&mut PrefetchWindow, history)));
    }

    /// The books kept the plain way: every settle by message visits every consumer.
    fn brute_force_totals(history: &[ModelEvent]) -> Vec<u32> {
        let mut windows: Vec<Vec<u32>> = Vec::new();
        let mut totals = Vec::new();
        for event in history {
            match event {
                ModelEvent::RelayDelivered { message, process, .. } => {
                    let p = process.0 as usize;
                    windows.resize(windows.len().max(p + 1), Vec::new());
                    windows[p].push(message.0);
                    totals.push(windows[p].len() as u32);
                }
                ModelEvent::RelayAcked { message, .. } => {
                    for window in &mut windows {
                        if let Some(at) = window.iter().position(|m| *m == message.0) {
                            window.remove(at);
                        }
                    }
                }
                ModelEvent::RelayReclaimed { message, process, .. } => {
                    if let Some(window) = windows.get_mut(process.0 as usize) {
                        if let Some(at) = window.iter().position(|m| *m == message.0) {
                            window.remove(at);
                        }
                    }
                }
                _ => {}
            }
        }
        totals
    }

    /// A reclaim of message `m` from consumer `p`, built from the variant's example so
    /// that it names only the fields these books read.
    fn reclaimed(m: u32, p: u32) -> ModelEvent {
        let mut event = ModelEvent::example(crate::event::tag::RELAY_RECLAIMED).expect("every tag has an example");
        if let ModelEvent::RelayReclaimed { instance, message, process, .. } = &mut event {
            (*instance, *message, *process) = (InstanceId(m), MessageId(m), ProcessId(p));
        }
        event
    }

    proptest::proptest! {
        /// The index of holders by message settles exactly what visiting every consumer
        /// did: the same count after every delivery, duplicates and reclaims included.
        #[test]
        fn settling_through_the_holders_keeps_the_same_books(
            steps in proptest::collection::vec((0u8..3, 0u32..6, 0u32..4), 0..200)
        ) {
            let history: Vec<ModelEvent> = steps
                .iter()
                .map(|&(what, m, p)| match what {
                    0 => delivered(m, p),
                    1 => acked(m),
                    _ => reclaimed(m, p),
                })
                .collect();
            let mut window = PrefetchBooks::default();
            let totals: Vec<u32> = history.iter().filter_map(|e| window.observe(e)).map(|(_, _, n)| n).collect();
            proptest::prop_assert_eq!(totals, brute_force_totals(&history));
            for (m, consumers) in &window.holders {
                for p in consumers.as_slice() {
                    proptest::prop_assert!(window.unsettled.get(p).unwrap().copies.iter().any(|(c, _)| c == m));
                }
                let mut listed = consumers.as_slice().to_vec();
                listed.dedup();
                proptest::prop_assert_eq!(listed.len(), consumers.as_slice().len(), "each holder once");
            }
            for (p, held) in window.unsettled.iter() {
                for (m, _) in &held.copies {
                    proptest::prop_assert!(window.holders.get(m).is_some_and(|h| h.as_slice().contains(&p)));
                }
            }
        }
    }
}

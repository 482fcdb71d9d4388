//! The judge of one run: numbers each trace event, folds it into the fingerprint, and
//! hands it to the checkers that listen to its tag, in checker order, until the first
//! violation.
//!
//! It lives apart from the runner (`run.rs`) because dispatching events to checkers is its
//! own concern with its own invariants (who still listens to what, which checkers reached
//! their situation), while the runner only steps the world and watches the budgets.

use crate::checker::{Check, Checker, CheckerKind};
use crate::trace::{Event, EventKind, TraceHasher, TAGS};
use crate::verdict::Verdict;

/// Judges the events of one run and keeps what the run's outcome reports of them.
pub(crate) struct Judge<K, V> {
    checkers: Vec<Box<dyn Checker<K, V>>>,
    /// For each event tag, a bit set of the checkers still listening to it: `words` u64s
    /// per tag, bit `i` for checker `i`. Walking the bits in order keeps checker order (so
    /// that when one event breaks two rules, the first checker reports it); a sometimes-
    /// checker whose situation occurred is cleared from every tag.
    /// Invariant: `listening.len() == TAGS * words`.
    listening: Vec<u64>,
    /// Invariant: at least 1, and `64 * words >= checkers.len()`.
    words: usize,
    /// The kind of each checker, asked once. Invariant: one entry per checker.
    kinds: Vec<CheckerKind>,
    /// Whether each sometimes-checker's situation occurred. Invariant: one entry per checker.
    reached: Vec<bool>,
    hasher: TraceHasher,
    /// Number of events judged so far; the next event's sequence number.
    pub(crate) events: u64,
    keep_trace: bool,
    /// Every judged event, if `keep_trace`.
    pub(crate) trace: Vec<Event<K>>,
    /// How the run ended, once decided. Invariant: no event is judged after it is set.
    pub(crate) verdict: Option<Verdict>,
    /// Sequence number of the event that failed an always-checker.
    pub(crate) failing_event: Option<u64>,
}

impl<K: EventKind, V> Judge<K, V> {
    /// A judge for `checkers`, each asked once for its kind and its interest.
    pub(crate) fn new(checkers: Vec<Box<dyn Checker<K, V>>>, keep_trace: bool) -> Judge<K, V> {
        let kinds = checkers.iter().map(|c| c.kind()).collect();
        let words = checkers.len().div_ceil(64).max(1);
        let mut listening = vec![0u64; TAGS * words];
        for (i, checker) in checkers.iter().enumerate() {
            let mut mask = checker.interest();
            while mask != 0 {
                let tag = mask.trailing_zeros() as usize;
                listening[tag * words + i / 64] |= 1 << (i % 64);
                mask &= mask - 1;
            }
        }
        let reached = vec![false; checkers.len()];
        Judge {
            checkers,
            listening,
            words,
            kinds,
            reached,
            hasher: TraceHasher::default(),
            events: 0,
            keep_trace,
            trace: Vec::new(),
            verdict: None,
            failing_event: None,
        }
    }

    /// Judges a batch of events in order, then empties it. Events after a verdict are
    /// dropped unjudged; judged ones are kept if the run keeps its trace. The runner skips
    /// the steps that emitted nothing, so a batch is never empty.
    #[inline]
    pub(crate) fn judge_batch(&mut self, batch: &mut Vec<Event<K>>, view: &V) {
        debug_assert!(!batch.is_empty(), "the runner judges only steps that emitted events");
        let mut judged = 0;
        for event in batch.iter_mut() {
            if self.verdict.is_some() {
                break;
            }
            self.judge(event, view);
            judged += 1;
        }
        if self.keep_trace {
            self.trace.extend(batch.drain(..judged));
        }
        batch.clear();
    }

    /// Judges one event: numbers it, folds it into the fingerprint and hands it to every
    /// checker listening to its tag, in checker order.
    fn judge(&mut self, event: &mut Event<K>, view: &V) {
        debug_assert!(self.verdict.is_none(), "nothing is judged after the verdict");
        event.seq = self.events;
        let event = &*event;
        self.hasher.add_kind(event.time, event.node, &event.kind);
        let tag = usize::from(event.kind.tag());
        assert!(tag < TAGS, "event tag {tag} is not below {TAGS}");
        self.events += 1;
        if K::NODE_END_TAGS & (1 << tag) != 0 {
            crate::executor::witness_node_end(event.node);
        }
        'checkers: for word in 0..self.words {
            let mut bits = self.listening[tag * self.words + word];
            while bits != 0 {
                let i = word * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let checker = &mut self.checkers[i];
                match checker.on_event(event, view) {
                    Check::Ok => {}
                    Check::Reached => {
                        assert!(self.kinds[i] == CheckerKind::Sometimes, "only sometimes-checkers reach");
                        self.reached[i] = true;
                        // A coverage mark at the current tape position, if the run collects them.
                        crate::executor::record_mark(
                            crate::marks::name_id(checker.name()),
                            crate::marks::MarkKind::Sometimes,
                        );
                        // Reached once is enough: it listens to nothing any more.
                        for t in 0..TAGS {
                            self.listening[t * self.words + word] &= !(1u64 << (i % 64));
                        }
                    }
                    Check::Fail(message) => {
                        assert!(
                            self.kinds[i] != CheckerKind::Sometimes,
                            "sometimes-checker {} returned Fail",
                            checker.name()
                        );
                        self.verdict = Some(Verdict::Violation { checker: checker.name().to_string(), message });
                        self.failing_event = Some(event.seq);
                        break 'checkers;
                    }
                }
            }
        }
    }

    /// The end-of-run phase: unless a verdict is already in, the first checker whose
    /// `at_end` fails decides it.
    pub(crate) fn judge_end(&mut self, view: &V) {
        if self.verdict.is_some() {
            return;
        }
        for checker in self.checkers.iter_mut() {
            if let Check::Fail(message) = checker.at_end(view) {
                self.verdict = Some(Verdict::Violation { checker: checker.name().to_string(), message });
                return;
            }
        }
    }

    /// The fingerprint of every event judged so far.
    pub(crate) fn fingerprint(&self) -> u64 {
        self.hasher.value()
    }

    /// The names of the sometimes-checkers whose situation occurred, in checker order.
    pub(crate) fn reached(&self) -> Vec<String> {
        self.checkers.iter().zip(&self.reached).filter(|(_, r)| **r).map(|(c, _)| c.name().to_string()).collect()
    }
}

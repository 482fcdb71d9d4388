//! The typed trace of a run and its fingerprint.
//!
//! Model code emits typed events through a [`Tracer`]; the runner stamps each with its
//! sequence number, simulated time and node, feeds it to the checkers, and folds it into
//! the run's **fingerprint**: a word-at-a-time fold ([`Fingerprint`]) over the time, the
//! node and the postcard encoding of the kind.
//! Postcard's wire format is specified and endian-free, so the same run has the same
//! fingerprint on any machine, independent of Rust's `Hash` implementation details.

use std::cell::RefCell;
use std::fmt::Debug;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use crate::executor;
use crate::node::NodeId;
use crate::time::SimTime;
pub use crate::trace_fold::{FoldPostcard, WordFolder};

/// What a model's event kind must provide: a stable encoding, a name, and the lane and
/// instance it concerns (for stories and timelines).
pub trait EventKind: Clone + Debug + Serialize + 'static {
    /// A short kebab-case name for the kind, used in timelines and summaries.
    fn name(&self) -> &'static str;
    /// The execution lane (within the node) the event happened on, if any.
    fn lane(&self) -> Option<u32> {
        None
    }
    /// The workflow instance the event concerns, if any.
    fn instance(&self) -> Option<u64> {
        None
    }
    /// A number below [`TAGS`] naming the event's variant, so that checkers can declare
    /// which variants they read ([`crate::Checker::interest`]) and the runner calls each
    /// checker only for those. The default puts every event under tag 0.
    fn tag(&self) -> u8 {
        0
    }
    /// The tags ([`EventKind::tag`], as a [`tag_mask`]) of the events that witness the end of
    /// the process on the event's node: a crash, a stop. A model that names some promises
    /// to witness every kill of a node with one, before simulated time moves on, and the
    /// runner asserts it (a kill nobody witnessed is a lie of the environment that every
    /// checker of a process's end would miss). The default, none, asserts nothing.
    const NODE_END_TAGS: u64 = 0;
    /// Writes the event to `tracing`, for `--log`; called as it is emitted, inside the
    /// task that emitted it (so a subscriber can stamp the time and node). The default
    /// writes nothing. Must not change anything the run can observe.
    fn log(&self) {}
    /// Pushes the kind's postcard encoding, which the fingerprint folds ([`TraceHasher`]).
    /// The default goes through the kind's `Serialize`. A kind on the hot path may push its
    /// fields by hand ([`FoldPostcard`]) to skip serde's calls and error checks per field,
    /// and must then push exactly postcard's bytes, with a test comparing the two on every
    /// variant: every recorded fingerprint depends on them.
    #[inline]
    fn fold_fingerprint(&self, out: &mut WordFolder) {
        out.serde(self);
    }
}

/// How many distinct event tags there can be (the width of an interest mask).
pub const TAGS: usize = 64;

/// The interest mask naming the given tags.
pub const fn tag_mask(tags: &[u8]) -> u64 {
    let mut mask = 0u64;
    let mut i = 0;
    while i < tags.len() {
        assert!((tags[i] as usize) < TAGS, "event tags are below 64");
        mask |= 1 << tags[i];
        i += 1;
    }
    mask
}

/// One event of the trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event<K> {
    /// Position in the trace, from 0.
    pub seq: u64,
    /// Simulated time of emission.
    pub time: SimTime,
    /// The node whose task emitted it (the world node for the environment).
    pub node: NodeId,
    /// What happened.
    pub kind: K,
}

/// The emitting side of the trace, cloned into model tasks. Events wait here until the
/// runner drains them after the poll that emitted them, so checkers never run while model
/// state is borrowed. Pending events are already shaped as [`Event`]s (the runner fills in
/// `seq` when it judges them), so an event is written once and then judged in place.
pub struct Tracer<K> {
    pending: Rc<RefCell<Vec<Event<K>>>>,
}

impl<K> Clone for Tracer<K> {
    fn clone(&self) -> Self {
        Tracer { pending: self.pending.clone() }
    }
}

impl<K: EventKind> Default for Tracer<K> {
    fn default() -> Self {
        Tracer { pending: Rc::new(RefCell::new(Vec::with_capacity(64))) }
    }
}

impl<K: EventKind> Tracer<K> {
    /// A tracer with nothing pending.
    pub fn new() -> Self {
        Self::default()
    }

    /// Emits an event, stamped with the current time and the current task's node.
    ///
    /// Inlined into the emitting code (`inline` alone left it a call): as a call, 74,500
    /// of them in a 100-seed smoke sweep, it cost an entry and an exit and moved the kind
    /// (a model's is a hundred bytes) through a frame of its own.
    #[inline(always)]
    pub fn emit(&self, kind: K) {
        let (time, node) = executor::stamp();
        kind.log();
        self.pending.borrow_mut().push(Event { seq: 0, time, node, kind });
    }

    /// Emits an event attributed to `node` (for the environment acting on a node).
    pub fn emit_on(&self, node: NodeId, kind: K) {
        kind.log();
        self.pending.borrow_mut().push(Event { seq: 0, time: executor::now(), node, kind });
    }

    /// Moves the pending events to the end of `out`, in emission order; their `seq` is not
    /// set yet. When `out` is empty the two buffers just swap, so no event is copied.
    pub fn drain_into(&self, out: &mut Vec<Event<K>>) {
        let mut pending = self.pending.borrow_mut();
        if pending.is_empty() {
            // Most polls emit nothing.
        } else if out.is_empty() {
            std::mem::swap(&mut *pending, out);
        } else {
            out.append(&mut pending);
        }
    }
}

/// A stable 64-bit hash over little-endian words: a multiply-rotate fold eight bytes at a
/// time (tail bytes padded and tagged with their count), finished with a 64-bit avalanche.
/// Word-at-a-time because the fingerprint is on the simulator's hot path (every event);
/// little-endian reads make it the same on every machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fingerprint(u64);

/// The fold's multiplier (2^64 / golden ratio, odd).
const FOLD_MULTIPLIER: u64 = 0x9E37_79B9_7F4A_7C15;

impl Default for Fingerprint {
    fn default() -> Self {
        Fingerprint(0xcbf2_9ce4_8422_2325)
    }
}

impl Fingerprint {
    #[inline]
    pub(crate) fn fold(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(23) ^ word).wrapping_mul(FOLD_MULTIPLIER);
    }

    /// Folds bytes in.
    #[inline]
    pub fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.fold(u64::from_le_bytes(chunk.try_into().expect("chunks of eight")));
        }
        let tail = chunks.remainder();
        if !tail.is_empty() {
            // Little-endian tail bytes, the count in the top byte (shifts, not a copy).
            let word = tail.iter().rev().fold(0u64, |word, &b| (word << 8) | u64::from(b));
            self.fold(word | ((tail.len() as u64) << 56));
        }
    }

    /// Folds a value in.
    #[inline]
    pub fn write_u64(&mut self, v: u64) {
        self.fold(v);
    }

    /// The fingerprint so far.
    pub fn value(&self) -> u64 {
        let mut x = self.0;
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^= x >> 33;
        x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        x ^ (x >> 33)
    }
}

/// Folds events into a fingerprint: the time, the node, then the postcard encoding of the
/// kind, folded from the kind's fields as they are serialised ([`crate::trace_fold`]) or as
/// the kind pushes them by hand ([`EventKind::fold_fingerprint`]), so no event is ever
/// encoded into a buffer.
#[derive(Default)]
pub struct TraceHasher {
    fingerprint: Fingerprint,
}

impl TraceHasher {
    /// Folds one event in.
    #[inline]
    pub fn add<K: Serialize>(&mut self, time: SimTime, node: NodeId, kind: &K) {
        self.fingerprint.write_u64(time.0);
        self.fingerprint.write_u64(u64::from(node.0));
        crate::trace_fold::fold_postcard(&mut self.fingerprint, kind);
    }

    /// Folds one event in, its kind as the kind pushes itself
    /// ([`EventKind::fold_fingerprint`]): the same value as [`TraceHasher::add`] gives, for a
    /// kind whose fold pushes postcard's bytes, as every kind's must. What the judge calls;
    /// inlined with the kind's fold, so the bytes not yet folded stay in registers.
    #[inline(always)]
    pub fn add_kind<K: EventKind>(&mut self, time: SimTime, node: NodeId, kind: &K) {
        self.fingerprint.write_u64(time.0);
        self.fingerprint.write_u64(u64::from(node.0));
        crate::trace_fold::fold_words(
            &mut self.fingerprint,
            #[inline(always)]
            |out| kind.fold_fingerprint(out),
        );
    }

    /// The fingerprint of everything added so far.
    pub fn value(&self) -> u64 {
        self.fingerprint.value()
    }
}

/// Where two traces of the same run first differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// Sequence number of the first differing event.
    pub seq: u64,
    /// That event in the first run, if it had one.
    pub first: Option<String>,
    /// That event in the second run, if it had one.
    pub second: Option<String>,
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let show = |e: &Option<String>| e.clone().unwrap_or_else(|| "<end of trace>".into());
        write!(
            f,
            "runs diverge at event {}: first run {}, second run {}",
            self.seq,
            show(&self.first),
            show(&self.second)
        )
    }
}

/// The first event where two traces differ, or `None` if they are identical.
pub fn first_divergence<K: PartialEq + Debug>(a: &[Event<K>], b: &[Event<K>]) -> Option<Divergence> {
    let n = a.len().max(b.len());
    (0..n).find(|&i| a.get(i) != b.get(i)).map(|i| Divergence {
        seq: i as u64,
        first: a.get(i).map(|e| format!("{e:?}")),
        second: b.get(i).map(|e| format!("{e:?}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_is_pinned_and_tells_inputs_apart() {
        // Pinned values: a change here changes every recorded fingerprint, and must say why.
        let of = |bytes: &[u8]| {
            let mut f = Fingerprint::default();
            f.write(bytes);
            f.value()
        };
        const PINNED_A: u64 = 0x4a29_5dda_f8bc_8581;
        const PINNED_LONG: u64 = 0xef10_4184_107a_7884;
        assert_eq!(of(b"a"), PINNED_A, "{:#018x}", of(b"a"));
        assert_eq!(of(b"foobar-trace-events"), PINNED_LONG, "{:#018x}", of(b"foobar-trace-events"));
        assert_ne!(of(b""), of(b"\0"));
        assert_ne!(of(b"ab"), of(b"ba"));
        assert_ne!(of(&[0; 8]), of(&[0; 9]));
    }

    #[test]
    fn every_event_size_hashes_postcards_bytes() {
        // The fold must take postcard's bytes whatever the length of the encoding (every
        // tail length, one- and two-byte length prefixes, long encodings).
        let expected = |time: u64, bytes: &[u8]| {
            let mut f = Fingerprint::default();
            f.write_u64(time);
            f.write_u64(0);
            f.write(&postcard::to_allocvec(bytes).unwrap());
            f.value()
        };
        for len in [0, 1, 6, 7, 8, 9, 10, 125, 126, 127, 128, 129, 253, 256, 768] {
            let payload: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let mut hasher = TraceHasher::default();
            hasher.add(SimTime(len as u64), NodeId(0), &payload);
            assert_eq!(hasher.value(), expected(len as u64, &payload), "payload of {len} bytes");
        }
    }

    #[test]
    fn a_kind_that_does_not_fold_itself_folds_as_add_folds_it() {
        // The default `fold_fingerprint` goes through serde: `add_kind` and `add` agree.
        #[derive(Clone, Debug, Serialize)]
        enum Kind {
            Small(u8, bool),
            Wide { id: u64, note: Option<String> },
        }
        impl EventKind for Kind {
            fn name(&self) -> &'static str {
                "kind"
            }
        }
        for (time, kind) in [
            (0, Kind::Small(7, true)),
            (1 << 40, Kind::Wide { id: u64::MAX, note: Some("a note of some length".into()) }),
            (3, Kind::Wide { id: 300, note: None }),
        ] {
            let (mut by_serde, mut by_kind) = (TraceHasher::default(), TraceHasher::default());
            by_serde.add(SimTime(time), NodeId(2), &kind);
            by_kind.add_kind(SimTime(time), NodeId(2), &kind);
            assert_eq!(by_kind.value(), by_serde.value(), "{kind:?}");
        }
    }

    #[test]
    fn divergence_names_the_first_differing_event() {
        let e = |seq, kind: u32| Event { seq, time: SimTime(seq), node: NodeId(0), kind };
        let a = vec![e(0, 1), e(1, 2), e(2, 3)];
        let b = vec![e(0, 1), e(1, 9)];
        let d = first_divergence(&a, &b).unwrap();
        assert_eq!(d.seq, 1);
        assert!(d.second.unwrap().contains('9'));
        assert!(first_divergence(&a, &a).is_none());
        assert_eq!(first_divergence(&a, &a[..2]).unwrap().seq, 2);
    }
}

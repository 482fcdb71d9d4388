//! The typed trace of a run and its fingerprint.
//!
//! Model code emits typed events through a [`Tracer`]; the runner stamps each with its
//! sequence number, simulated time and node, feeds it to the checkers, and folds it into
//! the run's **fingerprint**: FNV-1a 64 over the postcard encoding of (time, node, kind).
//! Postcard's wire format is specified and endian-free, so the same run has the same
//! fingerprint on any machine, independent of Rust's `Hash` implementation details.

use std::cell::RefCell;
use std::fmt::Debug;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use crate::executor;
use crate::node::NodeId;
use crate::time::SimTime;

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
/// state is borrowed.
pub struct Tracer<K> {
    pending: Rc<RefCell<Vec<(SimTime, NodeId, K)>>>,
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
    pub fn emit(&self, kind: K) {
        let stamp = (executor::now(), executor::current_node());
        self.pending.borrow_mut().push((stamp.0, stamp.1, kind));
    }

    /// Emits an event attributed to `node` (for the environment acting on a node).
    pub fn emit_on(&self, node: NodeId, kind: K) {
        self.pending.borrow_mut().push((executor::now(), node, kind));
    }

    /// Moves the pending events into `out`, leaving the buffer empty but allocated.
    pub fn drain_into(&self, out: &mut Vec<(SimTime, NodeId, K)>) {
        let mut pending = self.pending.borrow_mut();
        // Most polls emit nothing; skip the (out-of-line) copy they would still pay for.
        if !pending.is_empty() {
            out.append(&mut pending);
        }
    }
}

/// FNV-1a, 64-bit: tiny, stable, and good enough to tell traces apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fingerprint(u64);

impl Default for Fingerprint {
    fn default() -> Self {
        Fingerprint(0xcbf2_9ce4_8422_2325)
    }
}

impl Fingerprint {
    /// Folds bytes in.
    #[inline]
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// Folds a value in by its little-endian bytes.
    #[inline]
    pub fn write_u64(&mut self, v: u64) {
        self.write(&v.to_le_bytes());
    }

    /// The fingerprint so far.
    pub fn value(&self) -> u64 {
        self.0
    }
}

/// Encodes events and folds them into a fingerprint, reusing one buffer.
pub struct TraceHasher {
    fingerprint: Fingerprint,
    buffer: Vec<u8>,
}

impl Default for TraceHasher {
    fn default() -> Self {
        TraceHasher { fingerprint: Fingerprint::default(), buffer: Vec::with_capacity(128) }
    }
}

impl TraceHasher {
    /// Folds one event in.
    pub fn add<K: Serialize>(&mut self, time: SimTime, node: NodeId, kind: &K) {
        self.fingerprint.write_u64(time.0);
        self.fingerprint.write(&node.0.to_le_bytes());
        let mut buffer = std::mem::take(&mut self.buffer);
        buffer.clear();
        let buffer = postcard::to_extend(kind, buffer).expect("event kinds always serialise");
        self.fingerprint.write(&buffer);
        self.buffer = buffer;
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
    fn fnv_matches_the_reference_vectors() {
        let mut f = Fingerprint::default();
        f.write(b"a");
        assert_eq!(f.value(), 0xaf63_dc4c_8601_ec8c);
        let mut f = Fingerprint::default();
        f.write(b"foobar");
        assert_eq!(f.value(), 0x8594_4171_f739_67e8);
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

//! `sutra-sim-core`: the deterministic, single-threaded simulator under sutra-sim.
//!
//! It knows nothing of Sutra. It provides the pieces any deterministic simulation test
//! needs: an executor over virtual time ([`executor`]), one entropy source with a
//! recorded tape ([`entropy`]), scheduling strategies ([`strategy`]), nodes that die,
//! restart and pause ([`node`]), a typed trace with a stable fingerprint ([`trace`]),
//! versioned cells for stale-snapshot detection ([`cell`]), the state lane of spec 003
//! ([`lane`]), the checker API ([`checker`]), the runner that ties them together
//! ([`run`]), the determinism self-check ([`determinism`]), logs stamped with simulated
//! time and node ([`log`]) and the bare executor benchmark ([`mod@bench`]).
//!
//! Determinism rules: one entropy source per run; no wall clock, OS randomness, threads
//! or randomly seeded hash maps inside the simulated world.
#![deny(missing_docs)]

pub mod bench;
pub mod cell;
pub mod checker;
pub mod determinism;
pub mod entropy;
pub mod executor;
pub mod explore;
mod ids;
mod judge;
pub mod lane;
pub mod log;
pub mod marks;
pub mod node;
pub mod puzzles;
mod ready;
pub mod run;
pub mod strategy;
pub mod sync;
pub mod time;
mod timer;
pub mod trace;
mod trace_fold;
pub mod verdict;

pub use cell::{CellId, Settled, Snapshot, SnapshotUse, VersionedCell};
pub use checker::{Check, Checker, CheckerKind, CheckerSpec, Registry, UnknownChecker};
pub use determinism::check_determinism;
pub use entropy::{Entropy, Stream, Tape, TapeError};
pub use executor::{Executor, Step, TaskId, TaskName};
pub use lane::{LaneError, LaneEvent, LaneFlaws, StateLane};
pub use marks::{mark, marking, Mark, MarkKind};
pub use node::{NodeClock, NodeId, NodeStatus};
pub use run::{simulate, Budgets, EntropyMode, Outcome, RunConfig};
pub use strategy::StrategyConfig;
pub use time::{format_duration, parse_duration, SimTime};
pub use trace::{tag_mask, Divergence, Event, EventKind, FoldPostcard, Tracer, WordFolder, TAGS};
pub use verdict::{Budget, Verdict};

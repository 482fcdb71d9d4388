//! `sutra-sim-shrink`: the minimiser. It knows nothing of Sutra: it shrinks a failing run's
//! parameters (integer *knobs*) and its entropy tape toward smaller, simpler runs that still
//! fail the same way, Hypothesis-style.
//!
//! A failing run is a [`Candidate`]: knobs (scenario parameters, each lower is simpler) and
//! a tape (every nondeterministic draw; 0 is the simplest draw, draws past the end are 0).
//! The caller's [`Property`] runs a candidate and says whether it still fails the same way.
//! [`shrink`] first lowers the knobs, then edits the tape — truncate, delete spans (big to
//! small), zero spans, lower single values by binary search — and keeps a change only if
//! the result still fails, is strictly simpler in [`Candidate::simpler_than`] order (knobs
//! lexicographically, then the tape in shortlex order: shorter first, then smaller), and
//! costs no more to read than the input (the property's [`Ran::cost`], for a simulation its
//! events).
//! Because every accepted step moves down a well-founded order, shrinking terminates; on top
//! of that it is bounded by a number of property calls and by a wall-clock budget
//! ([`Limits`]). Given the same input and no time-budget cut-off, the result is the same on
//! every machine: the passes are a fixed sequence and use no randomness.
#![deny(missing_docs)]

mod candidate;
mod knob_passes;
mod limits;
mod search;
mod tape_passes;

pub use candidate::{shortlex_less, Candidate};
pub use limits::{Limits, ORACLE_CALLS_MAX, POSITIONS_PER_PASS_MAX, ROUNDS_MAX, TIME_BUDGET_DEFAULT};
pub use search::{shrink, NotFailing, Property, Ran, Shrunk, Sizes, Stop};

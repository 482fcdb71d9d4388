//! `sutra-sim`: deterministic simulation testing for the Sutra durable-workflow runtime's
//! ownership protocol (claims, lanes, refusals, release, the sweep) and its state lanes.
//!
//! This crate is the facade: it re-exports the simulator core ([`core`]), the Sutra model
//! ([`model`]) and the minimiser ([`shrink`]), and holds the orchestration the command
//! line uses — sweeps over many seeds ([`sweep`]), their reports ([`report`]), and safe
//! file output ([`files`]), a run's witness events as JSON Lines ([`history`]) — and what turns a failing seed into something a person can
//! read: reproducer files ([`reproducer`]), replay ([`replay`]), shrinking ([`shrinking`]),
//! the story of a failure ([`story`]) and its Perfetto timeline ([`perfetto`]).
//!
//! To write your own invariant, start at [`plugin`]: a checker is one small trait,
//! registered in a [`plugin::CheckerSet`] next to the built-in ones, with no change to the
//! simulator or the model. To run it from an ordinary `#[test]`, use [`testing::SimTest`].
#![deny(missing_docs)]

pub mod bench_explore;
pub mod bench_scale;
pub mod check;
pub mod determinism;
pub mod explore;
pub mod fault_events;
pub mod files;
pub mod history;
pub mod knobs;
pub mod perfetto;
pub mod plugin;
pub mod replay;
pub mod report;
pub mod reproducer;
pub mod save_failures;
pub mod scenario_arg;
pub mod shrinking;
pub mod story;
pub mod sweep;
pub mod temporary;
pub mod testing;

/// Scratch directories for the unit tests: the integration tests' helper, one file for both.
#[cfg(test)]
#[path = "../tests/common/scratch.rs"]
mod test_scratch;

pub use sutra_sim_core as core;
pub use sutra_sim_model as model;
pub use sutra_sim_shrink as shrink;

/// The framework's version, written into reports and reproducers.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

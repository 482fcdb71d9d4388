//! `sutra-sim`: deterministic simulation testing for the Sutra durable-workflow runtime's
//! ownership protocol (claims, lanes, refusals, release, the sweep) and its state lanes.
//!
//! This crate is the facade: it re-exports the simulator core ([`core`]), the Sutra model
//! ([`model`]) and the minimiser ([`shrink`]), and holds the orchestration the command
//! line uses — sweeps over many seeds ([`sweep`]), their reports ([`report`]), and safe
//! file output ([`files`]).
#![deny(missing_docs)]

pub mod files;
pub mod report;
pub mod scenario_arg;
pub mod sweep;

pub use sutra_sim_core as core;
pub use sutra_sim_model as model;
pub use sutra_sim_shrink as shrink;

/// The framework's version, written into reports and reproducers.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

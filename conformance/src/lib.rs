//! # sutra-conformance: the ownership protocol, for real
//!
//! A small, real implementation of spec 000's ownership protocol — no simulator anywhere
//! in it (this crate depends on neither `sutra-sim-core` nor `sutra-sim-model`): replica
//! processes as groups of OS threads with execution lanes, on a real database — SQLite
//! (bundled; a file in a temporary directory, WAL, a busy timeout) or PostgreSQL at READ
//! COMMITTED — running the claim store's shared statements (`sql/statements.sql`, the
//! `sutra-sql` crate): the claim as one conditional `UPDATE … RETURNING`, the commit with
//! its release in one transaction, an explicit release on every other exit, a lease-gated
//! sweeper, relays through a transactional outbox and an in-process broker with requeue
//! and a prefetch window, timers with capped backoff. Real time, real threads, and real
//! faults from its harness.
//!
//! Its store layer writes every witness into an audit table in the same transaction as the
//! change it witnesses; the broker and the harness write theirs through the same sequence.
//! The run exports them as a history (`docs/history.md`) that `sutra-sim check` judges.
//! Known-bad SQL shapes from real bug reports are a switch ([`Variant`]).

pub mod broker;
pub mod clock;
pub mod config;
pub mod ctx;
pub mod db;
pub mod harness;
pub mod history;
pub mod lane;
pub mod meter;
pub mod process;
pub mod rng;
pub mod roles;
pub mod store;
pub mod variant;
pub mod witness;

pub use config::{Config, FaultRates};
pub use db::Target;
pub use harness::{run, Outcome};
pub use sutra_sql::Statements;
pub use variant::Variant;

/// The message of a step's panic (the panic path is exercised for real).
pub const STEP_PANIC: &str = "a step panicked (the harness's step error)";

/// A fresh directory for a run's SQLite file, under the system's temporary directory;
/// the caller removes it.
pub fn scratch_dir(label: &str) -> std::io::Result<std::path::PathBuf> {
    let nanos = clock::Clock::store().now_ns();
    let dir = std::env::temp_dir().join(format!("sutra-conformance-{label}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Keeps the expected step panics off stderr (any other panic still prints).
pub fn quiet_step_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let expected = info.payload().downcast_ref::<String>().is_some_and(|m| m == STEP_PANIC);
        if !expected {
            default(info);
        }
    }));
}

//! Who sent the request the store is applying. A request that lands on the wire's own
//! task, or a delayed copy that lands late, is still witnessed as its sender's (the task
//! and the clock reading at the instant it was sent). A leaf below the store and the fault
//! gates, which both name the sender, so neither has to import the other.

use sutra_sim_core::executor;
use sutra_sim_core::time::SimTime;

/// Who sent the request the store is applying, when the store applies it on a task of its
/// own (a request on the wire, or a delayed copy): the sender's task, as the executor
/// witnessed it when it sent the request (none for a delayed copy), and the sender's clock
/// reading at that instant.
#[derive(Clone, Copy)]
pub(crate) struct Sent {
    pub(crate) task: Option<u64>,
    pub(crate) clock: SimTime,
}

thread_local! {
    /// Set while the store applies a request on its own task (see [`sender`]).
    static SENT: std::cell::Cell<Option<Sent>> = const { std::cell::Cell::new(None) };
}

/// Runs `apply` as the store's transaction of a request `sent` earlier.
pub(crate) fn applying_sent<T>(sent: Sent, apply: impl FnOnce() -> T) -> T {
    let outer = SENT.with(|s| s.replace(Some(sent)));
    let answer = apply();
    SENT.with(|s| s.set(outer));
    answer
}

/// The sender of the request being applied, as the executor witnessed it now.
pub(crate) fn sent_now() -> Sent {
    Sent { task: executor::current_task().map(|t| t.number()), clock: executor::local_now() }
}

/// The task making the current store call, as the executor witnesses it: the task that
/// sent the request even when it lands on the wire's own task; none for a delayed copy
/// landing late — no task sends anything then; its sender was witnessed when it sent it
/// (`CallStruck`, `RequestDelayed`), and may be frozen, dead or elsewhere now.
pub(crate) fn sender() -> Option<u64> {
    match SENT.with(|s| s.get()) {
        Some(sent) => sent.task,
        None => executor::current_task().map(|t| t.number()),
    }
}

/// The sender's own clock when it sent the request being applied (what a claimant's clock
/// reads for a statement that is handed it).
pub(crate) fn sender_clock() -> SimTime {
    match SENT.with(|s| s.get()) {
        Some(sent) => sent.clock,
        None => executor::local_now(),
    }
}

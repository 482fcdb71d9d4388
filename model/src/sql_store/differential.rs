//! `--store differential`: the model's store answers every operation, and the same
//! operation then runs on the SQL engine, which is kept in lockstep (it sees every call the
//! model's store sees, with the same bound time). Any difference — in the answer, or in the
//! instance row afterwards — is recorded once, naming the operation, the statement and both
//! results; the `store-divergence` checker turns it into a verdict of its own, which
//! shrinks and replays like any other.
//!
//! The model's store makes every decision of the run (its witnesses are the run's
//! witnesses); the SQL engine emits nothing and changes nothing outside its database.

use std::time::Duration;

use sutra_sim_core::executor;
use sutra_sim_core::SimTime;

use super::careless::Careless;
use crate::ids::{InstanceId, OwnerId, ProcessId};
use crate::store::{ClaimResult, CommitSpec, OwnerFilter, Store, SweepCutoff, TaskRow, TimerRow, Trigger};

/// One difference between the two engines: the first of a run is its verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// The operation, as the model's store names it.
    pub operation: &'static str,
    /// The statement that answered differently (the SQL as run).
    pub statement: String,
    /// The model store's result.
    pub model: String,
    /// SQLite's result.
    pub sqlite: String,
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: the model store gave {}, SQLite gave {} (statement: {})",
            self.operation,
            self.model,
            self.sqlite,
            self.statement.split_whitespace().collect::<Vec<_>>().join(" ")
        )
    }
}

fn nanos(d: Duration) -> u64 {
    sutra_sim_core::time::duration_nanos(d)
}

fn cutoff_param(cutoff: SweepCutoff) -> u64 {
    match cutoff {
        SweepCutoff::StoreAge => 0,
        SweepCutoff::TakenBefore(t) => t.as_nanos(),
    }
}

/// Records a divergence if `model` and `sqlite` differ (the first one of the run is kept).
fn compare<T: std::fmt::Debug + PartialEq>(
    store: &Store,
    operation: &'static str,
    statement: &str,
    model: T,
    sqlite: T,
) {
    if model == sqlite {
        return;
    }
    let mut s = store.state.borrow_mut();
    if s.divergence.is_none() {
        s.divergence = Some(Divergence {
            operation,
            statement: statement.to_string(),
            model: format!("{model:?}"),
            sqlite: format!("{sqlite:?}"),
        });
    }
}

/// Compares `instance`'s row — owner, version, epoch, parked — after an operation.
fn compare_row(store: &Store, operation: &'static str, statement: &str, instance: InstanceId) {
    let sql = store.sql().expect("the SQL engine");
    let r = sql.borrow().read(instance);
    let model = {
        let s = store.state.borrow();
        let m = &s.instances[instance.0 as usize];
        (m.owner, m.version, m.epoch, m.parked)
    };
    let text = format!("{statement}, then read: {}", sql.borrow().text_of("read", None));
    compare(store, operation, &text, model, (r.owner, r.version, r.epoch, r.parked));
}

/// The claim, as the model answered it.
pub fn claim(store: &Store, instance: InstanceId, owner: OwnerId, client_now: Option<SimTime>, model: ClaimResult) {
    let sql = store.sql().expect("the SQL engine");
    let now = executor::now().as_nanos();
    let clock = client_now.unwrap_or_else(crate::sender::sender_clock).as_nanos();
    let careless = super::apply::claim_careless(store, client_now);
    let granted = sql.borrow_mut().claim(instance, owner, now, nanos(store.claim_timeout), clock, careless);
    let answer = match granted {
        Some(g) => ClaimResult::Granted { epoch: g.epoch },
        None => match sql.borrow().read(instance).owner {
            Some(holder) => ClaimResult::Refused { holder },
            None => ClaimResult::Granted { epoch: u64::MAX },
        },
    };
    let text = sql.borrow().text_of("claim", careless).to_string();
    compare(store, "claim", &text, model, answer);
    compare_row(store, "claim", &text, instance);
}

/// A read, as the model answered it.
pub fn read(store: &Store, instance: InstanceId, model: (u64, bool)) {
    let sql = store.sql().expect("the SQL engine");
    let r = sql.borrow().read(instance);
    let text = sql.borrow().text_of("read", None).to_string();
    compare(store, "read", &text, model, (r.version, r.version >= r.steps));
}

/// Which epoch committed a step, as the model answered it.
pub fn committed_under(store: &Store, instance: InstanceId, based_on: u64, model: Option<u64>) {
    let sql = store.sql().expect("the SQL engine");
    let answer = sql.borrow().committed_under(instance, based_on);
    let text = sql.borrow().text_of("committed_under", None).to_string();
    compare(store, "committed-under", &text, model, answer);
}

/// The commit, as the model answered it.
#[allow(clippy::too_many_arguments)]
pub fn commit(
    store: &Store,
    instance: InstanceId,
    owner: OwnerId,
    epoch: u64,
    spec: CommitSpec,
    due: SimTime,
    aborted: u32,
    model: &Result<Option<Trigger>, Option<OwnerId>>,
) {
    let careless = if !spec.conditional {
        Some(Careless::CommitUnowned)
    } else if store.retry_accepts_free_row && aborted > 0 {
        Some(Careless::CommitOwnedOrFree)
    } else {
        None
    };
    let sql = store.sql().expect("the SQL engine");
    let accepted = sql.borrow_mut().commit(instance, owner, spec.based_on, spec.release, careless);
    let answer = match accepted {
        Some(c) => {
            // The relay the outbox gives back was published by the model store already.
            let _ = sql.borrow().commit_rows(instance, spec.based_on, epoch, c.next, due.as_nanos());
            Ok(c.next)
        }
        None => Err(sql.borrow().read(instance).owner),
    };
    let text = sql.borrow().text_of("commit", careless).to_string();
    compare(store, "commit", &text, model, &answer);
    compare_row(store, "commit", &text, instance);
}

/// A release or a migration's releasing write, as the model answered it.
pub fn release(store: &Store, statement: &'static str, instance: InstanceId, owner: OwnerId, model: (bool, u64)) {
    let sql = store.sql().expect("the SQL engine");
    let released = sql.borrow_mut().release(statement, instance, owner);
    let answer = match released {
        Some(r) => (true, r.epoch),
        None => (false, sql.borrow().read(instance).epoch),
    };
    let text = sql.borrow().text_of(statement, None).to_string();
    compare(store, statement, &text, model, answer);
    compare_row(store, statement, &text, instance);
}

/// The lease, as the model answered it (held).
pub fn acquire_lease(store: &Store, process: ProcessId, until: SimTime, model: bool) {
    let sql = store.sql().expect("the SQL engine");
    let held = sql.borrow().lease_acquire(process, executor::now().as_nanos(), until.as_nanos()).is_some();
    let text = sql.borrow().text_of("lease_acquire", None).to_string();
    compare(store, "lease-acquire", &text, model, held);
}

/// The one-statement sweep, as the model answered it (the claims cleared).
pub fn sweep(
    store: &Store,
    by: ProcessId,
    cutoff: SweepCutoff,
    careless: Option<Careless>,
    model: Vec<(InstanceId, u64)>,
) {
    let sql = store.sql().expect("the SQL engine");
    let now = executor::now().as_nanos();
    let rows = sql.borrow().sweep(by, now, nanos(store.claim_timeout), cutoff_param(cutoff), careless);
    let answer: Vec<(InstanceId, u64)> = rows.iter().map(|c| (c.instance, c.epoch)).collect();
    let text = sql.borrow().text_of("sweep", careless).to_string();
    compare(store, "sweep", &text, model, answer);
}

/// The two-step sweep's select, as the model answered it.
pub fn select_stale(store: &Store, cutoff: SweepCutoff, careless: Option<Careless>, model: &[(InstanceId, u64)]) {
    let sql = store.sql().expect("the SQL engine");
    let now = executor::now().as_nanos();
    let answer = sql.borrow().sweep_select(now, nanos(store.claim_timeout), cutoff_param(cutoff), careless);
    let text = sql.borrow().text_of("sweep_select", careless).to_string();
    compare(store, "sweep-select", &text, model, &answer[..]);
}

/// The two-step sweep's clear, as the model answered it.
#[allow(clippy::too_many_arguments)]
pub fn clear_stale(
    store: &Store,
    by: ProcessId,
    instance: InstanceId,
    epoch: u64,
    cutoff: SweepCutoff,
    careless: Option<Careless>,
    model: bool,
) {
    let sql = store.sql().expect("the SQL engine");
    let now = executor::now().as_nanos();
    let timeout = nanos(store.claim_timeout);
    let cleared = sql.borrow().sweep_clear(instance, epoch, by, now, timeout, cutoff_param(cutoff), careless).is_some();
    let text = sql.borrow().text_of("sweep_clear", careless).to_string();
    compare(store, "sweep-clear", &text, model, cleared);
    compare_row(store, "sweep-clear", &text, instance);
}

/// The timers picked, as the model answered them.
pub fn pick_due_timers(store: &Store, fire_lease: Duration, limit: usize, model: &[TimerRow]) {
    let sql = store.sql().expect("the SQL engine");
    let now = executor::now();
    let picked = sql.borrow().pick_timers(now.as_nanos(), now.add(fire_lease).as_nanos(), limit);
    let answer: Vec<(InstanceId, u64, u64, u32)> =
        picked.iter().map(|t| (t.instance, t.expects, t.due, t.attempt as u32)).collect();
    let model: Vec<(InstanceId, u64, u64, u32)> =
        model.iter().map(|t| (t.instance, t.expects, t.due.as_nanos(), t.attempt)).collect();
    let text =
        format!("{}, then {}", sql.borrow().text_of("timer_due", None), sql.borrow().text_of("timer_pick", None));
    compare(store, "pick-due-timers", &text, model, answer);
}

/// A timer's deferral, as the model answered it (the count and the delay it computed).
pub fn defer_timer(store: &Store, instance: InstanceId, expects: u64, refused: bool, model: Option<(u32, Duration)>) {
    let sql = store.sql().expect("the SQL engine");
    let now = executor::now();
    let counted = sql.borrow().timer_refuse(instance, expects, refused);
    // The delay is the model's: the backoff draws its jitter once, for both engines.
    let answer = counted.and_then(|attempt| {
        let delay = model.map_or(Duration::ZERO, |(_, d)| d);
        sql.borrow().timer_defer(instance, expects, now.add(delay).as_nanos()).map(|_| (attempt as u32, delay))
    });
    let text =
        format!("{}, then {}", sql.borrow().text_of("timer_refuse", None), sql.borrow().text_of("timer_defer", None));
    compare(store, "defer-timer", &text, model, answer);
}

/// A task lock, as the model answered it.
pub fn lock_task(store: &Store, worker: u32, duration: Duration, model: Option<TaskRow>) {
    let sql = store.sql().expect("the SQL engine");
    let now = executor::now();
    let locked = sql.borrow().task_lock(worker, now.as_nanos(), now.add(duration).as_nanos());
    let text = sql.borrow().text_of("task_lock", None).to_string();
    compare(store, "lock-task", &text, model.map(|t| (t.instance, t.expects)), locked);
}

/// A task's completion, as the model answered it.
pub fn complete_task(store: &Store, worker: u32, instance: InstanceId, expects: u64, model: bool) {
    let sql = store.sql().expect("the SQL engine");
    let done = sql.borrow().task_complete(worker, instance, expects, executor::now().as_nanos()).is_some();
    let text = sql.borrow().text_of("task_complete", None).to_string();
    compare(store, "complete-task", &text, model, done);
}

/// An instance's first relay: written to the outbox and taken back out, as the model did.
pub fn publish_first_relay(store: &Store, instance: InstanceId) {
    let sql = store.sql().expect("the SQL engine");
    let out = sql.borrow().first_relay(instance);
    let text = sql.borrow().text_of("outbox_take", None).to_string();
    compare(store, "publish-first-relay", &text, (instance, 0), (out.instance, out.expects));
}

/// The careless sweep statement of a model sweep's flags (the same choice the SQL engine
/// makes when it runs alone).
pub fn sweep_careless(cutoff: SweepCutoff, require_lease: bool, filter: Option<OwnerFilter>) -> Option<Careless> {
    if !require_lease {
        Some(Careless::SweepUnleased)
    } else if matches!(cutoff, SweepCutoff::TakenBefore(_)) {
        Some(Careless::SweepTakenBefore)
    } else {
        filter.map(|_| Careless::SweepParsesOwner)
    }
}

/// The careless select of a model select's flags.
pub fn select_careless(cutoff: SweepCutoff, filter: Option<OwnerFilter>) -> Option<Careless> {
    if matches!(cutoff, SweepCutoff::TakenBefore(_)) {
        Some(Careless::SelectTakenBefore)
    } else {
        filter.map(|_| Careless::SelectParsesOwner)
    }
}

/// The careless clear of a model clear's flags.
pub fn clear_careless(cutoff: SweepCutoff, require_lease: bool, recheck: bool) -> Option<Careless> {
    if !recheck {
        Some(Careless::ClearUnchecked)
    } else if !require_lease {
        Some(Careless::ClearUnleased)
    } else {
        matches!(cutoff, SweepCutoff::TakenBefore(_)).then_some(Careless::ClearTakenBefore)
    }
}

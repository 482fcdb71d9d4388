//! The store's operations on the SQL engine: each runs its statements, then derives the
//! answer and every witness from the rows the database returned — never from a predicate
//! evaluated beside it — and mirrors those rows into the store's in-memory view, which the
//! pollers' shortcuts, the model's views and the work-left count read. A wrong predicate in
//! the SQL therefore shows up as a wrong witness, judged like any other run.

use std::time::Duration;

use sutra_sim_core::executor;
use sutra_sim_core::SimTime;

use super::careless::Careless;
use super::ops::Cleared;
use crate::event::{ModelEvent, WriteKind};
use crate::ids::{ExecId, InstanceId, OwnerId, ProcessId, ResumePath};
use crate::sender::sender;
use crate::store::{Claim, ClaimResult, CommitSpec, OwnerFilter, Store, SweepCutoff, TaskRow, TimerRow, Trigger};

fn now_ns() -> u64 {
    executor::now().as_nanos()
}

fn nanos(d: Duration) -> u64 {
    sutra_sim_core::time::duration_nanos(d)
}

/// At most one careless statement per call: the model's mutants each change one predicate.
fn at_most_one(choices: &[Option<Careless>]) -> Option<Careless> {
    let chosen: Vec<Careless> = choices.iter().flatten().copied().collect();
    assert!(chosen.len() <= 1, "no careless statement combines {chosen:?}");
    chosen.first().copied()
}

/// The cutoff instant bound as a parameter (0 when the store's age decides).
fn cutoff_param(cutoff: SweepCutoff) -> u64 {
    match cutoff {
        SweepCutoff::StoreAge => 0,
        SweepCutoff::TakenBefore(t) => t.as_nanos(),
    }
}

/// The careless claim statement of the mutant that changes the claim's predicate, if any.
pub(crate) fn claim_careless(store: &Store, client_now: Option<SimTime>) -> Option<Careless> {
    at_most_one(&[
        client_now.is_some().then_some(Careless::ClaimByClaimantClock),
        store.refuses_own_owner.then_some(Careless::ClaimRefusesOwnOwner),
    ])
}

/// R2's claim.
#[allow(clippy::too_many_arguments)]
pub fn claim(
    store: &Store,
    instance: InstanceId,
    exec: ExecId,
    owner: OwnerId,
    process: Option<ProcessId>,
    path: ResumePath,
    client_now: Option<SimTime>,
    delivery: Option<u32>,
) -> ClaimResult {
    let now = now_ns();
    let sql = store.sql().expect("the SQL engine");
    // The claimant's clock: the mutant's reading, or the calling node's own.
    let claimant_clock = client_now.unwrap_or_else(crate::sender::sender_clock).as_nanos();
    let timeout = nanos(store.claim_timeout);
    let careless = claim_careless(store, client_now);
    let granted = sql.borrow_mut().claim(instance, owner, now, timeout, claimant_clock, careless);
    let Some(g) = granted else {
        let holder = sql.borrow().read(instance).owner;
        let holder =
            holder.unwrap_or_else(|| panic!("statement `claim` matched nothing on instance {}'s free row", instance.0));
        store.tracer.emit(ModelEvent::ClaimRefused {
            instance,
            exec,
            owner,
            path,
            holder,
            task: sender(),
            process,
            delivery,
        });
        return ClaimResult::Refused { holder };
    };
    store.mirror_row(instance, |row| {
        row.owner = Some(owner);
        row.claimed_at = SimTime(now);
        row.epoch = g.epoch;
    });
    let taken_over = g.previous.is_some_and(|p| p != owner);
    store.tracer.emit(ModelEvent::ClaimGranted {
        instance,
        exec,
        owner,
        process,
        path,
        previous: g.previous,
        stale_age_ns: taken_over.then_some(now.saturating_sub(g.previous_claimed_at)),
        epoch: g.epoch,
        task: sender(),
    });
    store.witness_row(ModelEvent::RowWritten {
        instance,
        write: WriteKind::Claim,
        by: Some(exec),
        writer: Some(owner),
        owner: Some(owner),
        version: g.version,
        epoch: g.epoch,
        parked: g.parked,
    });
    ClaimResult::Granted { epoch: g.epoch }
}

/// A read of the row, for `exec` acting under `claim`.
pub fn read(store: &Store, instance: InstanceId, exec: ExecId, claim: Claim) -> (u64, bool) {
    let row = store.sql().expect("the SQL engine").borrow().read(instance);
    store.tracer.emit(ModelEvent::StoreRead {
        instance,
        exec,
        claim_owner: claim.owner,
        claim_epoch: claim.epoch,
        owner: row.owner,
        epoch: row.epoch,
        version: row.version,
        task: sender(),
    });
    (row.version, row.version >= row.steps)
}

/// Which epoch committed the step from `based_on`, witnessed as a read.
pub fn committed_under(store: &Store, instance: InstanceId, exec: ExecId, claim: Claim, based_on: u64) -> Option<u64> {
    let sql = store.sql().expect("the SQL engine");
    let committed = sql.borrow().committed_under(instance, based_on);
    let row = sql.borrow().read(instance);
    store.tracer.emit(ModelEvent::StoreRead {
        instance,
        exec,
        claim_owner: claim.owner,
        claim_epoch: claim.epoch,
        owner: row.owner,
        epoch: row.epoch,
        version: row.version,
        task: sender(),
    });
    committed
}

/// The step commit: `commit` and, if it matched, the rest of its transaction.
pub fn commit(
    store: &Store,
    instance: InstanceId,
    exec: ExecId,
    claim: Claim,
    spec: CommitSpec,
    timer_delay: Duration,
    aborted: u32,
) -> Result<Option<Trigger>, Option<OwnerId>> {
    let owner = claim.owner;
    let careless = at_most_one(&[
        (!spec.conditional).then_some(Careless::CommitUnowned),
        (spec.conditional && store.retry_accepts_free_row && aborted > 0).then_some(Careless::CommitOwnedOrFree),
    ]);
    let sql = store.sql().expect("the SQL engine");
    let now = executor::now();
    let accepted = sql.borrow_mut().commit(instance, owner, spec.based_on, spec.release, careless);
    let Some(c) = accepted else {
        let holder = sql.borrow().read(instance).owner;
        store.tracer.emit(ModelEvent::CommitRejected {
            instance,
            exec,
            owner,
            epoch: claim.epoch,
            holder,
            task: sender(),
        });
        return Err(holder);
    };
    let due = now.add(timer_delay);
    let outgoing = sql.borrow().commit_rows(instance, spec.based_on, claim.epoch, c.next, due.as_nanos());
    store.mirror_commit(instance, spec.based_on, claim.epoch, &c, due);
    store.tracer.emit(ModelEvent::CommitAccepted {
        instance,
        exec,
        owner,
        epoch: claim.epoch,
        owner_before: c.owner_before,
        current_epoch: c.epoch,
        trigger: spec.trigger,
        based_on: spec.based_on,
        version_before: c.version_before,
        version_after: c.version,
        task: sender(),
    });
    store.witness_row(ModelEvent::RowWritten {
        instance,
        write: WriteKind::Commit,
        by: Some(exec),
        writer: Some(owner),
        owner: c.owner,
        version: c.version,
        epoch: c.epoch,
        parked: c.parked,
    });
    match c.next {
        Some(Trigger::Timer) => store.tracer.emit(ModelEvent::TimerScheduled {
            instance,
            step: c.version as u32 + 1,
            due_ns: due.as_nanos(),
        }),
        Some(Trigger::Pull) => store.tracer.emit(ModelEvent::TaskParked { instance, step: c.version as u32 + 1 }),
        Some(Trigger::Relay) => {
            let out = outgoing.expect("a relay written to the outbox");
            store.publish_from_outbox(out.instance, out.expects, ResumePath::Relay);
        }
        None => store.tracer.emit(ModelEvent::InstanceCompleted { instance }),
    }
    Ok(c.next)
}

/// A release (`release`) or a migration's releasing write (`migrate_commit`): whether it
/// matched, and the row's epoch.
pub fn release(store: &Store, instance: InstanceId, exec: ExecId, owner: OwnerId, write: WriteKind) -> (bool, u64) {
    let statement = if write == WriteKind::Migration { "migrate_commit" } else { "release" };
    let sql = store.sql().expect("the SQL engine");
    let released = sql.borrow_mut().release(statement, instance, owner);
    let Some(r) = released else {
        return (false, sql.borrow().read(instance).epoch);
    };
    store.mirror_row(instance, |row| row.owner = None);
    store.witness_row(ModelEvent::RowWritten {
        instance,
        write,
        by: Some(exec),
        writer: Some(owner),
        owner: None,
        version: r.version,
        epoch: r.epoch,
        parked: r.parked,
    });
    (true, r.epoch)
}

/// The sweeper's lease: whether `process` holds it now, and whether it is newly taken.
pub fn acquire_lease(store: &Store, process: ProcessId, until: SimTime) -> (bool, bool) {
    let now = now_ns();
    let lease = store.sql().expect("the SQL engine").borrow().lease_acquire(process, now, until.as_nanos());
    let Some(l) = lease else { return (false, false) };
    store.state.borrow_mut().lease = Some((process, SimTime(l.until)));
    let renewal = l.previous_holder == Some(process.0) && l.previous_until > now;
    (true, !renewal)
}

/// Witnesses and mirrors the claims a sweep statement cleared.
fn cleared(store: &Store, by: ProcessId, lease_held: bool, rows: &[Cleared]) {
    let now = now_ns();
    for c in rows {
        store.mirror_row(c.instance, |row| row.owner = None);
        let age_ns = now.saturating_sub(c.claimed_at);
        store.emit_swept(c.instance, c.owner, c.epoch, age_ns, by, lease_held, c.version, c.parked);
    }
}

/// The one-statement sweep.
pub fn sweep(
    store: &Store,
    by: ProcessId,
    cutoff: SweepCutoff,
    require_lease: bool,
    filter: Option<OwnerFilter>,
) -> u32 {
    let careless = at_most_one(&[
        (!require_lease).then_some(Careless::SweepUnleased),
        matches!(cutoff, SweepCutoff::TakenBefore(_)).then_some(Careless::SweepTakenBefore),
        filter.map(|_| Careless::SweepParsesOwner),
    ]);
    let sql = store.sql().expect("the SQL engine");
    let now = now_ns();
    let lease_held = sql.borrow().lease_held(by, now);
    let rows = sql.borrow().sweep(by, now, nanos(store.claim_timeout), cutoff_param(cutoff), careless);
    cleared(store, by, lease_held, &rows);
    rows.len() as u32
}

/// The two-step sweep's select.
pub fn select_stale(
    store: &Store,
    by: ProcessId,
    cutoff: SweepCutoff,
    filter: Option<OwnerFilter>,
) -> Vec<(InstanceId, u64)> {
    let careless = at_most_one(&[
        matches!(cutoff, SweepCutoff::TakenBefore(_)).then_some(Careless::SelectTakenBefore),
        filter.map(|_| Careless::SelectParsesOwner),
    ]);
    let sql = store.sql().expect("the SQL engine");
    let now = now_ns();
    let stale = sql.borrow().sweep_select(now, nanos(store.claim_timeout), cutoff_param(cutoff), careless);
    let lease_held = sql.borrow().lease_held(by, now);
    store.tracer.emit(ModelEvent::SweepSelected { by, stale: stale.len() as u32, lease_held, task: sender() });
    stale
}

/// The two-step sweep's clear of one selected claim.
pub fn clear_stale(
    store: &Store,
    by: ProcessId,
    instance: InstanceId,
    epoch: u64,
    cutoff: SweepCutoff,
    require_lease: bool,
    recheck: bool,
) -> bool {
    let careless = if recheck {
        at_most_one(&[
            (!require_lease).then_some(Careless::ClearUnleased),
            matches!(cutoff, SweepCutoff::TakenBefore(_)).then_some(Careless::ClearTakenBefore),
        ])
    } else {
        Some(Careless::ClearUnchecked)
    };
    let sql = store.sql().expect("the SQL engine");
    let now = now_ns();
    let lease_held = sql.borrow().lease_held(by, now);
    let timeout = nanos(store.claim_timeout);
    let row = sql.borrow().sweep_clear(instance, epoch, by, now, timeout, cutoff_param(cutoff), careless);
    match row {
        Some(c) => cleared(store, by, lease_held, &[c]),
        None => store.tracer.emit(ModelEvent::SweepClearMissed { instance, by, epoch, task: sender() }),
    }
    row.is_some()
}

/// Due timers, each hidden from other pollers until `now + fire_lease`.
pub fn pick_due_timers(store: &Store, fire_lease: Duration, limit: usize) -> Vec<TimerRow> {
    let now = executor::now();
    let hidden = now.add(fire_lease);
    let picked = store.sql().expect("the SQL engine").borrow().pick_timers(now.as_nanos(), hidden.as_nanos(), limit);
    let mut s = store.state.borrow_mut();
    picked
        .into_iter()
        .map(|t| {
            s.timers.update(t.instance, |row| row.due = hidden);
            TimerRow { instance: t.instance, expects: t.expects, due: SimTime(t.due), attempt: t.attempt as u32 }
        })
        .collect()
}

/// Defers the timer still pending for `expects`: the count after it and the delay.
pub fn defer_timer(
    store: &Store,
    instance: InstanceId,
    expects: u64,
    refused: bool,
    backoff: impl FnOnce(u32) -> Duration,
) -> Option<(u32, Duration)> {
    let sql = store.sql().expect("the SQL engine");
    let now = executor::now();
    let attempt = sql.borrow().timer_refuse(instance, expects, refused)?;
    let attempt = u32::try_from(attempt).expect("a refusal count fits u32");
    let delay = backoff(attempt);
    let (written, due) =
        sql.borrow().timer_defer(instance, expects, now.add(delay).as_nanos()).expect("the row just counted");
    store.state.borrow_mut().timers.update(instance, |row| {
        row.attempt = written as u32;
        row.due = SimTime(due);
    });
    store.rows_written.notify();
    store.tracer.emit(ModelEvent::TimerDeferred {
        instance,
        expects,
        attempt: written as u32,
        due_ns: due,
        task: sender(),
    });
    Some((attempt, delay))
}

/// Locks the first lockable task row for `worker`.
pub fn lock_task(store: &Store, worker: u32, duration: Duration) -> Option<TaskRow> {
    let now = executor::now();
    let until = now.add(duration);
    let (instance, expects) =
        store.sql().expect("the SQL engine").borrow().task_lock(worker, now.as_nanos(), until.as_nanos())?;
    let task = TaskRow { instance, expects, locked: Some((worker, until)) };
    store.state.borrow_mut().tasks.insert(instance, task);
    store.tracer.emit(ModelEvent::TaskLocked { instance, worker });
    Some(task)
}

/// Completes a locked task: its relay goes out through the outbox if the lock still holds.
pub fn complete_task(store: &Store, worker: u32, instance: InstanceId, expects: u64) -> bool {
    let out = store.sql().expect("the SQL engine").borrow().task_complete(worker, instance, expects, now_ns());
    let Some(out) = out else { return false };
    store.tracer.emit(ModelEvent::TaskCompleted { instance, worker });
    store.publish_from_outbox(out.instance, out.expects, ResumePath::PullCompletion);
    true
}

/// An instance's first relay, through the outbox.
pub fn publish_first_relay(store: &Store, instance: InstanceId) {
    let out = store.sql().expect("the SQL engine").borrow().first_relay(instance);
    store.publish_from_outbox(out.instance, out.expects, ResumePath::Relay);
}

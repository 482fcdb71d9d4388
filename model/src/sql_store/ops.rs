//! The store's operations as named statements: each binds the call's values, runs the
//! statement (or the few statements of one transaction: nothing else runs between them in
//! the single-threaded simulation) and returns the rows the database gave back, typed.

use rusqlite::types::Value;

use super::careless::Careless;
use super::engine::{int, SqlEngine};
use crate::ids::{InstanceId, OwnerId, ProcessId};
use crate::store::Trigger;

/// What a granted claim returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Granted {
    /// The claim epoch the row holds.
    pub epoch: u64,
    /// The row's committed version.
    pub version: u64,
    /// Waiting on a pull task.
    pub parked: bool,
    /// The owner before the grant.
    pub previous: Option<OwnerId>,
    /// When the previous claim was taken, by the store's clock.
    pub previous_claimed_at: u64,
}

/// The row as `read` returned it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowNow {
    /// The row's committed version.
    pub version: u64,
    /// Steps in all.
    pub steps: u64,
    /// The owner the row holds.
    pub owner: Option<OwnerId>,
    /// The claim epoch the row holds.
    pub epoch: u64,
    /// Waiting on a pull task.
    pub parked: bool,
}

/// What an accepted commit returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Committed {
    /// The row's committed version.
    pub version: u64,
    /// The owner the row holds.
    pub owner: Option<OwnerId>,
    /// The claim epoch the row holds.
    pub epoch: u64,
    /// Waiting on a pull task.
    pub parked: bool,
    /// The owner before the commit.
    pub owner_before: Option<OwnerId>,
    /// The version before the commit.
    pub version_before: u64,
    /// The next step's trigger, `None` once the last step committed.
    pub next: Option<Trigger>,
}

/// What a release (or a migration's releasing write) returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Released {
    /// The row's committed version.
    pub version: u64,
    /// The claim epoch the row holds.
    pub epoch: u64,
    /// Waiting on a pull task.
    pub parked: bool,
}

/// A claim a sweep cleared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cleared {
    /// The instance.
    pub instance: InstanceId,
    /// The owner the row holds.
    pub owner: OwnerId,
    /// The claim epoch the row holds.
    pub epoch: u64,
    /// When the cleared claim was taken, by the store's clock.
    pub claimed_at: u64,
    /// The row's committed version.
    pub version: u64,
    /// Waiting on a pull task.
    pub parked: bool,
}

/// A lease the store granted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lease {
    /// The lease's expiry.
    pub until: u64,
    /// The holder before.
    pub previous_holder: Option<u32>,
    /// The expiry before.
    pub previous_until: u64,
}

/// A timer row as `timer_due` returned it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DueTimer {
    /// The instance.
    pub instance: InstanceId,
    /// The version it fires or completes for.
    pub expects: u64,
    /// When it was due.
    pub due: u64,
    /// Refusals counted so far.
    pub attempt: u64,
}

/// An outbox row taken for publishing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outgoing {
    /// The instance.
    pub instance: InstanceId,
    /// The version it fires or completes for.
    pub expects: u64,
    /// True for a pull worker's completion, false for a relay of the commit.
    pub pull_completion: bool,
}

fn id(instance: InstanceId) -> Value {
    int(u64::from(instance.0))
}

fn flag(on: bool) -> Value {
    int(u64::from(on))
}

fn instance_at(row: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<InstanceId> {
    Ok(InstanceId(u32::try_from(SqlEngine::u(row, i)?).expect("instance ids fit u32")))
}

fn trigger_name(t: Trigger) -> &'static str {
    match t {
        Trigger::Relay => "relay",
        Trigger::Timer => "timer",
        Trigger::Pull => "pull",
    }
}

fn trigger_of(name: Option<String>) -> Option<Trigger> {
    match name.as_deref() {
        None => None,
        Some("relay") => Some(Trigger::Relay),
        Some("timer") => Some(Trigger::Timer),
        Some("pull") => Some(Trigger::Pull),
        Some(other) => panic!("the plan holds an unknown trigger {other:?}"),
    }
}

fn swept_row(e: &SqlEngine, r: &rusqlite::Row<'_>) -> rusqlite::Result<Cleared> {
    Ok(Cleared {
        instance: instance_at(r, 0)?,
        owner: e.owner_at(r, 1)?.expect("a cleared claim had an owner"),
        epoch: SqlEngine::u(r, 2)?,
        claimed_at: SqlEngine::u(r, 3)?,
        version: SqlEngine::u(r, 4)?,
        parked: SqlEngine::u(r, 5)? != 0,
    })
}

fn released_row(_: &SqlEngine, r: &rusqlite::Row<'_>) -> rusqlite::Result<Released> {
    Ok(Released { version: SqlEngine::u(r, 0)?, epoch: SqlEngine::u(r, 1)?, parked: SqlEngine::u(r, 2)? != 0 })
}

impl SqlEngine {
    /// `instance_create` and one `plan_create` per step.
    pub fn create_instance(&self, instance: InstanceId, plan: &[Trigger]) {
        self.execute("instance_create", vec![id(instance), int(plan.len() as u64)]);
        for (step, t) in plan.iter().enumerate() {
            self.execute("plan_create", vec![id(instance), int(step as u64), Value::Text(trigger_name(*t).into())]);
        }
    }

    /// `claim`: the grant, or `None` (refused).
    /// `claimant_clock` is the claimant's own clock reading, which the contract sends as
    /// `$5` (the default statement ignores it); `careless` is a mutant's claim statement
    /// (client-clock-staleness judges by `$5`; claim-refuses-own-owner drops the owner's
    /// re-claim).
    pub fn claim(
        &mut self,
        instance: InstanceId,
        owner: OwnerId,
        now: u64,
        timeout: u64,
        claimant_clock: u64,
        careless: Option<Careless>,
    ) -> Option<Granted> {
        let owner = self.bind_owner(owner);
        let params = vec![id(instance), owner, int(now), int(timeout), int(claimant_clock)];
        self.row("claim", careless, params, |e, r| {
            Ok(Granted {
                epoch: SqlEngine::u(r, 1)?,
                version: SqlEngine::u(r, 2)?,
                parked: SqlEngine::u(r, 3)? != 0,
                previous: e.owner_at(r, 4)?,
                previous_claimed_at: SqlEngine::u(r, 5)?,
            })
        })
    }

    /// `read`.
    pub fn read(&self, instance: InstanceId) -> RowNow {
        self.row("read", None, vec![id(instance)], |e, r| {
            Ok(RowNow {
                version: SqlEngine::u(r, 0)?,
                steps: SqlEngine::u(r, 1)?,
                owner: e.owner_at(r, 2)?,
                epoch: SqlEngine::u(r, 3)?,
                parked: SqlEngine::u(r, 4)? != 0,
            })
        })
        .unwrap_or_else(|| panic!("statement `read` found no row for instance {}", instance.0))
    }

    /// `commit` (or a careless one): the accepted write, or `None` (rejected).
    pub fn commit(
        &mut self,
        instance: InstanceId,
        owner: OwnerId,
        based_on: u64,
        release: bool,
        careless: Option<Careless>,
    ) -> Option<Committed> {
        let owner = self.bind_owner(owner);
        let params = vec![id(instance), owner, int(based_on), flag(release)];
        self.row("commit", careless, params, |e, r| {
            Ok(Committed {
                version: SqlEngine::u(r, 0)?,
                owner: e.owner_at(r, 2)?,
                epoch: SqlEngine::u(r, 3)?,
                parked: SqlEngine::u(r, 4)? != 0,
                owner_before: e.owner_at(r, 5)?,
                version_before: SqlEngine::u(r, 6)?,
                next: trigger_of(r.get(7)?),
            })
        })
    }

    /// The rest of an accepted commit's transaction: the step history, the consumed
    /// trigger rows, the next trigger's row (a timer due at `due`, a task, or a relay in
    /// the outbox, taken back out for publishing).
    pub fn commit_rows(
        &self,
        instance: InstanceId,
        based_on: u64,
        epoch: u64,
        next: Option<Trigger>,
        due: u64,
    ) -> Option<Outgoing> {
        self.execute("step_forget", vec![id(instance), int(based_on)]);
        self.execute("step_record", vec![id(instance), int(based_on), int(epoch)]);
        self.execute("timer_clear", vec![id(instance)]);
        self.execute("task_clear", vec![id(instance)]);
        let expects = based_on + 1;
        match next {
            Some(Trigger::Timer) => {
                self.execute("timer_schedule", vec![id(instance), int(expects), int(due)]);
                None
            }
            Some(Trigger::Pull) => {
                self.execute("task_park", vec![id(instance), int(expects)]);
                None
            }
            Some(Trigger::Relay) => {
                self.execute("outbox_put", vec![id(instance), int(expects), Value::Text("relay".into())]);
                self.outbox_take()
            }
            None => None,
        }
    }

    /// `outbox_put` of an instance's first relay, taken back out for publishing.
    pub fn first_relay(&self, instance: InstanceId) -> Outgoing {
        self.execute("outbox_put", vec![id(instance), int(0), Value::Text("relay".into())]);
        self.outbox_take().expect("the relay just written")
    }

    /// `outbox_take`: the oldest outbox row.
    pub fn outbox_take(&self) -> Option<Outgoing> {
        self.row("outbox_take", None, vec![], |_, r| {
            let path: String = r.get(3)?;
            Ok(Outgoing {
                instance: instance_at(r, 1)?,
                expects: SqlEngine::u(r, 2)?,
                pull_completion: path == "pull-completion",
            })
        })
    }

    /// `release` (or `migrate_commit`): the row released, or `None` (no match).
    pub fn release(&mut self, statement: &str, instance: InstanceId, owner: OwnerId) -> Option<Released> {
        let owner = self.bind_owner(owner);
        self.row(statement, None, vec![id(instance), owner], released_row)
    }

    /// `committed_under`.
    pub fn committed_under(&self, instance: InstanceId, based_on: u64) -> Option<u64> {
        self.row("committed_under", None, vec![id(instance), int(based_on)], |_, r| SqlEngine::u(r, 0))
    }

    /// `lease_acquire`: the lease granted, or `None` (held by another).
    pub fn lease_acquire(&self, process: ProcessId, now: u64, until: u64) -> Option<Lease> {
        let params = vec![int(u64::from(process.0)), int(now), int(until)];
        self.row("lease_acquire", None, params, |_, r| {
            let prev: Option<i64> = r.get(2)?;
            Ok(Lease {
                until: SqlEngine::u(r, 1)?,
                previous_holder: prev.map(|p| u32::try_from(p).expect("process ids fit u32")),
                previous_until: SqlEngine::u(r, 3)?,
            })
        })
    }

    /// `lease_held`.
    pub fn lease_held(&self, process: ProcessId, now: u64) -> bool {
        self.row("lease_held", None, vec![int(u64::from(process.0)), int(now)], |_, _| Ok(())).is_some()
    }

    /// `sweep` (or a careless one): the claims cleared, by instance.
    pub fn sweep(
        &self,
        process: ProcessId,
        now: u64,
        timeout: u64,
        cutoff: u64,
        careless: Option<Careless>,
    ) -> Vec<Cleared> {
        let params = vec![int(u64::from(process.0)), int(now), int(timeout), int(cutoff)];
        self.rows_ordered("sweep", careless, params, swept_row, |c| c.instance)
    }

    /// `sweep_select` (or a careless one): stale instances with their epochs.
    pub fn sweep_select(
        &self,
        now: u64,
        timeout: u64,
        cutoff: u64,
        careless: Option<Careless>,
    ) -> Vec<(InstanceId, u64)> {
        self.rows("sweep_select", careless, vec![int(now), int(timeout), int(cutoff)], |_, r| {
            Ok((instance_at(r, 0)?, SqlEngine::u(r, 1)?))
        })
    }

    /// `sweep_clear` (or a careless one): the claim cleared, or `None` (missed).
    #[allow(clippy::too_many_arguments)]
    pub fn sweep_clear(
        &self,
        instance: InstanceId,
        epoch: u64,
        process: ProcessId,
        now: u64,
        timeout: u64,
        cutoff: u64,
        careless: Option<Careless>,
    ) -> Option<Cleared> {
        let params = vec![id(instance), int(epoch), int(u64::from(process.0)), int(now), int(timeout), int(cutoff)];
        self.row("sweep_clear", careless, params, swept_row)
    }

    /// `timer_due`, then `timer_pick` of each: the timers picked, as they were before.
    pub fn pick_timers(&self, now: u64, hidden_until: u64, limit: usize) -> Vec<DueTimer> {
        let due = self.rows("timer_due", None, vec![int(now), int(limit as u64)], |_, r| {
            Ok(DueTimer {
                instance: instance_at(r, 0)?,
                expects: SqlEngine::u(r, 1)?,
                due: SqlEngine::u(r, 2)?,
                attempt: SqlEngine::u(r, 3)?,
            })
        });
        due.into_iter()
            .filter(|t| {
                let params = vec![id(t.instance), int(now), int(hidden_until)];
                self.row("timer_pick", None, params, |_, _| Ok(())).is_some()
            })
            .collect()
    }

    /// `timer_refuse`: the refusal count after it, or `None` (no timer pending for
    /// `expects`).
    pub fn timer_refuse(&self, instance: InstanceId, expects: u64, refused: bool) -> Option<u64> {
        self.row("timer_refuse", None, vec![id(instance), int(expects), flag(refused)], |_, r| SqlEngine::u(r, 0))
    }

    /// `timer_defer`: the count and due time written.
    pub fn timer_defer(&self, instance: InstanceId, expects: u64, due: u64) -> Option<(u64, u64)> {
        self.row("timer_defer", None, vec![id(instance), int(expects), int(due)], |_, r| {
            Ok((SqlEngine::u(r, 0)?, SqlEngine::u(r, 1)?))
        })
    }

    /// `task_lock`: the task locked (instance, expects).
    pub fn task_lock(&self, worker: u32, now: u64, until: u64) -> Option<(InstanceId, u64)> {
        self.row("task_lock", None, vec![int(u64::from(worker)), int(now), int(until)], |_, r| {
            Ok((instance_at(r, 0)?, SqlEngine::u(r, 1)?))
        })
    }

    /// `task_complete`, then `outbox_take`: the completion relay, or `None` (lock lost).
    pub fn task_complete(&self, worker: u32, instance: InstanceId, expects: u64, now: u64) -> Option<Outgoing> {
        let params = vec![int(u64::from(worker)), id(instance), int(expects), int(now)];
        self.row("task_complete", None, params, |_, _| Ok(()))?;
        Some(self.outbox_take().expect("the completion just written"))
    }
}

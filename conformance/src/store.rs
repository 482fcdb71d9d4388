//! The store layer: every call of the ownership protocol as one transaction of the shared
//! statements, and its witnesses written in that same transaction (the answer to the
//! request, then the row it wrote, then the rows written with it — `docs/history.md`,
//! *Order*). The store's "now" is read once per transaction from the store's clock and
//! bound to every statement that needs it, so the time the history shows for a grant is the
//! very `claimed_at` staleness is later judged from.
//!
//! What each call writes as witnesses is what the store saw: owners and epochs come from
//! the rows the statements returned, never from what the caller believes.

use std::sync::Arc;

use serde_json::{json, Value as Json};
use sutra_sql::Statements;

use crate::clock::{sql_ns, Clock};
use crate::db::{Conn, Row, Tx, Value};
use crate::witness::{record, statement, Source, Witness};

/// A store client: one thread's connection and the statements it runs.
pub struct Store {
    conn: Conn,
    sql: Arc<Statements>,
    /// The node the calls come from (`replica-N`, `world`).
    node: String,
    claim_timeout_ns: u64,
}

/// Which resume path asks for a claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// A broker relay.
    Relay,
    /// A timer fire.
    Timer,
}

impl Path {
    fn as_str(self) -> &'static str {
        match self {
            Path::Relay => "Relay",
            Path::Timer => "Timer",
        }
    }
}

/// What drove a step: the commit names it (R25).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// A relay, by message id.
    Message(u32),
    /// The instance's timer row written for version `expects`.
    TimerRow {
        /// The version the row was written for.
        expects: u64,
    },
}

impl Trigger {
    fn json(self) -> Json {
        match self {
            Trigger::Message(m) => json!({ "Message": m }),
            Trigger::TimerRow { expects } => json!({ "TimerRow": { "expects": expects } }),
        }
    }
}

/// Who asks: the execution, its claim and the thread (task) sending the request.
#[derive(Clone, Debug)]
pub struct Caller {
    /// The execution id.
    pub exec: u32,
    /// The lane-scoped owner id (opaque to the store).
    pub owner: String,
    /// The process id.
    pub process: u32,
    /// The sending thread's task id (the executor's witness of who sent it).
    pub task: u64,
}

/// The store's answer to a claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// Granted under `epoch`; the row is at `version`.
    Granted {
        /// The epoch the grant wrote.
        epoch: u64,
    },
    /// Refused: someone else holds the row.
    Refused,
}

/// The row as a read saw it.
#[derive(Clone, Copy, Debug)]
pub struct RowState {
    /// Committed steps.
    pub version: u64,
    /// Steps in all.
    pub steps: u64,
}

/// The store's answer to a commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Commit {
    /// Accepted; the next step waits for this (`None`: the instance completed).
    Accepted(Option<String>),
    /// Rejected: the row is not the caller's any more.
    Rejected,
}

/// How many times a claim refused while the row reads free (PostgreSQL READ COMMITTED: the
/// holder left between the conditional update and the read naming it) is run again inside
/// the store call before the store reports whatever it then sees.
const CLAIM_HOLDER_ATTEMPTS_MAX: u32 = 4;

fn int(row: &Row, i: usize) -> u64 {
    row[i]
        .int()
        .and_then(|v| u64::try_from(v).ok())
        .unwrap_or_else(|| panic!("column {i} is not a BIGINT >= 0: {row:?}"))
}

fn text(row: &Row, i: usize) -> Option<String> {
    row[i].text().map(str::to_string)
}

fn opt_owner(o: &Option<String>) -> Json {
    o.as_ref().map_or(Json::Null, |s| Json::String(s.clone()))
}

impl Store {
    /// A client on its own connection.
    pub fn open(
        target: &crate::db::Target,
        sql: Arc<Statements>,
        node: &str,
        claim_timeout_ns: u64,
    ) -> Result<Store, String> {
        Ok(Store { conn: Conn::open(target)?, sql, node: node.to_string(), claim_timeout_ns })
    }

    /// The connection, for broker and harness witnesses.
    pub fn conn(&mut self) -> &mut Conn {
        &mut self.conn
    }

    /// The statements.
    pub fn sql(&self) -> &Arc<Statements> {
        &self.sql
    }

    /// The node name.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// Runs `body` in a transaction at the store's "now", then records its witnesses.
    fn tx<T>(
        &mut self,
        mut body: impl FnMut(&mut Tx<'_>, &Statements, u64, &mut Vec<Witness>) -> Result<T, String>,
    ) -> Result<T, String> {
        let sql = self.sql.clone();
        self.conn.transaction(|tx| {
            let now = Clock::store().now_ns();
            let mut witnesses = Vec::new();
            let out = body(tx, &sql, now, &mut witnesses)?;
            record(tx, &sql, now, &witnesses)?;
            Ok(out)
        })
    }

    /// As [`Store::tx`], with the audit counter's lock taken first and the store's "now" read
    /// once it is held: the transaction is ordered among the witnessed ones from its start,
    /// and its time is the time it ran at, not the time it began waiting for its turn (a
    /// claim that waited half a second on the lock was otherwise witnessed refused half a
    /// second before it was, and its lane's requeue looked that much late).
    fn tx_ordered<T>(
        &mut self,
        mut body: impl FnMut(&mut Tx<'_>, &Statements, u64, &mut Vec<Witness>) -> Result<T, String>,
    ) -> Result<T, String> {
        let sql = self.sql.clone();
        self.conn.transaction(|tx| {
            tx.row(statement(&sql, "audit_reserve"), &[Value::Int(0)])?;
            let now = Clock::store().now_ns();
            let mut witnesses = Vec::new();
            let out = body(tx, &sql, now, &mut witnesses)?;
            record(tx, &sql, now, &witnesses)?;
            Ok(out)
        })
    }

    /// The claim (R2): one conditional `UPDATE … RETURNING`; no row back is a refusal,
    /// whose holder a read of the row then names.
    pub fn claim(&mut self, instance: u32, c: &Caller, path: Path) -> Result<Claim, String> {
        self.claim_for(instance, c, path, None)
    }

    /// The claim, for the broker delivery `delivery` it is made for (a relay's): a refusal
    /// names the process and that delivery, so the copy it concerns can be paired with its
    /// requeue (R4) — what the request carries, as any store layer could record it.
    pub fn claim_for(&mut self, instance: u32, c: &Caller, path: Path, delivery: Option<u64>) -> Result<Claim, String> {
        let timeout = sql_ns(self.claim_timeout_ns);
        let node = self.node.clone();
        // The history's order must be the order the claim saw the row in. A refusal writes
        // nothing, so it takes no row lock: under PostgreSQL's READ COMMITTED its statements
        // can see the row before a concurrent sweep or release commits, while its witness's
        // seq (reserved at the end) comes after that commit's — a refusal of a row the
        // history shows free. Holding the audit counter's lock from the start orders the
        // whole claim among the witnessed transactions.
        self.tx_ordered(|tx, sql, now, ws| {
            let params = [Value::Int(instance.into()), Value::from(c.owner.as_str()), Value::Int(sql_ns(now)), Value::Int(timeout), Value::Int(sql_ns(now))];
            for _ in 0..CLAIM_HOLDER_ATTEMPTS_MAX {
                if let Some(row) = tx.row(statement(sql, "claim"), &params)? {
                    // owner, epoch, version, parked, prev_owner, prev_claimed_at
                    let (epoch, version, previous) = (int(&row, 1), int(&row, 2), text(&row, 4));
                    let stolen = previous.as_ref().is_some_and(|p| *p != c.owner);
                    let stale_age = stolen.then(|| now.saturating_sub(int(&row, 5)));
                    ws.push(Witness::new(&node, "claim-granted", Source::Store, json!({
                        "instance": instance, "exec": c.exec, "owner": c.owner, "process": c.process,
                        "path": path.as_str(), "previous": opt_owner(&previous), "stale_age_ns": stale_age,
                        "epoch": epoch, "task": c.task,
                    })));
                    ws.push(row_written(&node, instance, "Claim", Some(c.exec), Some(&c.owner), Some(&c.owner), version, epoch));
                    return Ok(Claim::Granted { epoch });
                }
                let holder = read_row(tx, sql, instance)?.and_then(|r| text(&r, 2));
                if let Some(holder) = holder {
                    ws.push(Witness::new(&node, "claim-refused", Source::Store, json!({
                        "instance": instance, "exec": c.exec, "owner": c.owner, "path": path.as_str(),
                        "holder": holder, "task": c.task, "process": c.process, "delivery": delivery,
                    })));
                    return Ok(Claim::Refused);
                }
            }
            Err(format!("instance {instance}: the claim matched nothing {CLAIM_HOLDER_ATTEMPTS_MAX} times while the row read free"))
        })
    }

    /// A read of the row under the caller's claim (rehydration).
    pub fn read(&mut self, instance: u32, c: &Caller, epoch: u64) -> Result<RowState, String> {
        let node = self.node.clone();
        self.tx(|tx, sql, _now, ws| {
            let row = read_row(tx, sql, instance)?.ok_or_else(|| format!("instance {instance} has no row"))?;
            // version, steps, owner, epoch, parked
            let (version, steps) = (int(&row, 0), int(&row, 1));
            ws.push(Witness::new(
                &node,
                "store-read",
                Source::Store,
                json!({
                    "instance": instance, "exec": c.exec, "claim_owner": c.owner, "claim_epoch": epoch,
                    "owner": opt_owner(&text(&row, 2)), "epoch": int(&row, 3), "version": version, "task": c.task,
                }),
            ));
            Ok(RowState { version, steps })
        })
    }

    /// The step's commit, releasing the claim in the same transaction (R8), conditional on
    /// owning the row (R19); with it, the next step's trigger (an outbox relay or a timer
    /// row due `timer_delay_ns` from now) or the instance's completion.
    pub fn commit(
        &mut self,
        instance: u32,
        c: &Caller,
        epoch: u64,
        based_on: u64,
        trigger: Trigger,
        timer_delay_ns: u64,
    ) -> Result<Commit, String> {
        let node = self.node.clone();
        self.tx(|tx, sql, now, ws| {
            let id = Value::Int(instance.into());
            let params = [id.clone(), Value::from(c.owner.as_str()), Value::Int(sql_ns(based_on)), Value::Int(1)];
            let Some(row) = tx.row(statement(sql, "commit"), &params)? else {
                let holder = read_row(tx, sql, instance)?.and_then(|r| text(&r, 2));
                ws.push(Witness::new(
                    &node,
                    "commit-rejected",
                    Source::Store,
                    json!({
                        "instance": instance, "exec": c.exec, "owner": c.owner, "epoch": epoch,
                        "holder": opt_owner(&holder), "task": c.task,
                    }),
                ));
                return Ok(Commit::Rejected);
            };
            // version, steps, owner, epoch, parked, prev_owner, prev_version, next_trigger
            let (version, row_epoch, next) = (int(&row, 0), int(&row, 3), text(&row, 7));
            ws.push(Witness::new(
                &node,
                "commit-accepted",
                Source::Store,
                json!({
                    "instance": instance, "exec": c.exec, "owner": c.owner, "epoch": epoch,
                    "owner_before": opt_owner(&text(&row, 5)), "current_epoch": row_epoch, "trigger": trigger.json(),
                    "based_on": based_on, "version_before": int(&row, 6), "version_after": version, "task": c.task,
                }),
            ));
            ws.push(row_written(
                &node,
                instance,
                "Commit",
                Some(c.exec),
                Some(&c.owner),
                text(&row, 2).as_deref(),
                version,
                row_epoch,
            ));
            let based = Value::Int(sql_ns(based_on));
            tx.query(statement(sql, "step_forget"), &[id.clone(), based.clone()])?;
            tx.query(statement(sql, "step_record"), &[id.clone(), based, Value::Int(sql_ns(epoch))])?;
            if let Trigger::TimerRow { .. } = trigger {
                tx.query(statement(sql, "timer_clear"), std::slice::from_ref(&id))?;
            }
            match next.as_deref() {
                None => {
                    ws.push(Witness::new(&node, "instance-completed", Source::Store, json!({ "instance": instance })))
                }
                Some("timer") => {
                    let due = now + timer_delay_ns;
                    tx.query(
                        statement(sql, "timer_schedule"),
                        &[id.clone(), Value::Int(sql_ns(version)), Value::Int(sql_ns(due))],
                    )?;
                    ws.push(Witness::new(
                        &node,
                        "timer-scheduled",
                        Source::Store,
                        json!({ "instance": instance, "step": version + 1, "due_ns": due }),
                    ));
                }
                Some(_) => {
                    tx.query(
                        statement(sql, "outbox_put"),
                        &[id.clone(), Value::Int(sql_ns(version)), Value::from("relay")],
                    )?;
                }
            }
            Ok(Commit::Accepted(next.clone()))
        })
    }

    /// An explicit release (every exit that does not commit, R9): matches only while the row
    /// shows the caller's owner id. Says whether it matched.
    pub fn release(&mut self, instance: u32, c: &Caller, epoch: u64) -> Result<bool, String> {
        let node = self.node.clone();
        self.tx(|tx, sql, _now, ws| {
            let params = [Value::Int(instance.into()), Value::from(c.owner.as_str())];
            let (released, current, version) = match tx.row(statement(sql, "release"), &params)? {
                Some(row) => (true, int(&row, 1), Some(int(&row, 0))),
                None => {
                    let row = read_row(tx, sql, instance)?.ok_or_else(|| format!("instance {instance} has no row"))?;
                    (false, int(&row, 3), None)
                }
            };
            ws.push(Witness::new(
                &node,
                "released",
                Source::Store,
                json!({
                    "instance": instance, "exec": c.exec, "owner": c.owner, "epoch": epoch,
                    "current_epoch": current, "released": released, "task": c.task,
                }),
            ));
            if let Some(version) = version {
                ws.push(row_written(&node, instance, "Release", Some(c.exec), Some(&c.owner), None, version, current));
            }
            Ok(released)
        })
    }

    /// Gives a timer fire back (R5): counts a refused fire, and moves the row's due time by
    /// the capped exponential backoff of its refusals (`base · 2^(k-1)`, at most `cap`); a
    /// fire given back for another reason waits `base`. Nothing if the row is gone.
    pub fn defer_timer(
        &mut self,
        instance: u32,
        expects: u64,
        refused: bool,
        task: u64,
        base_ns: u64,
        cap_ns: u64,
    ) -> Result<(), String> {
        let node = self.node.clone();
        self.tx(|tx, sql, now, ws| {
            let (id, exp) = (Value::Int(instance.into()), Value::Int(sql_ns(expects)));
            let Some(row) = tx.row(statement(sql, "timer_refuse"), &[id.clone(), exp.clone(), Value::Int(i64::from(refused))])? else {
                return Ok(());
            };
            let backoff = if refused { backoff_ns(int(&row, 0), base_ns, cap_ns) } else { base_ns };
            let due = now + backoff;
            if let Some(row) = tx.row(statement(sql, "timer_defer"), &[id, exp, Value::Int(sql_ns(due))])? {
                ws.push(Witness::new(&node, "timer-deferred", Source::Store, json!({
                    "instance": instance, "expects": expects, "attempt": int(&row, 0), "due_ns": int(&row, 1), "task": task,
                })));
            }
            Ok(())
        })
    }

    /// Takes or renews the sweeper lease for `lease_ns`; the expiry if granted.
    pub fn acquire_lease(&mut self, process: u32, task: u64, lease_ns: u64) -> Result<Option<u64>, String> {
        let node = self.node.clone();
        self.tx(|tx, sql, now, ws| lease(tx, sql, &node, now, process, task, lease_ns, ws))
    }

    /// The one-statement sweep: every claim older than the claim timeout, while leased. Its
    /// transaction renews the lease first, holding the lease row to its commit: on
    /// PostgreSQL READ COMMITTED a sweep that waits on a row lock past the lease's expiry
    /// would otherwise land after the next holder took the lease (two sweepers at once).
    /// `None`: another process holds the lease.
    pub fn sweep(&mut self, process: u32, task: u64, lease_ns: u64) -> Result<Option<usize>, String> {
        let (node, timeout) = (self.node.clone(), self.claim_timeout_ns);
        self.tx(|tx, sql, now, ws| {
            if lease(tx, sql, &node, now, process, task, lease_ns, ws)?.is_none() {
                return Ok(None);
            }
            let params = [
                Value::Int(process.into()),
                Value::Int(sql_ns(now)),
                Value::Int(sql_ns(timeout)),
                Value::Int(sql_ns(now.saturating_sub(timeout))),
            ];
            let mut rows = tx.query(statement(sql, "sweep"), &params)?;
            rows.sort_by_key(|r| int(r, 0));
            for row in &rows {
                ws.extend(swept(&node, row, now, process, true, task));
            }
            Ok(Some(rows.len()))
        })
    }

    /// The two-step sweep's select, in a transaction that renews the lease first (see
    /// [`Store::sweep`]): the stale claims (id, epoch). `None`: another process holds the
    /// lease. The store witnesses whether the lease is held at the select's instant.
    pub fn sweep_select(&mut self, process: u32, task: u64, lease_ns: u64) -> Result<Option<Vec<(u32, u64)>>, String> {
        let (node, timeout) = (self.node.clone(), self.claim_timeout_ns);
        self.tx(|tx, sql, now, ws| {
            if lease(tx, sql, &node, now, process, task, lease_ns, ws)?.is_none() {
                return Ok(None);
            }
            let params =
                [Value::Int(sql_ns(now)), Value::Int(sql_ns(timeout)), Value::Int(sql_ns(now.saturating_sub(timeout)))];
            let rows = tx.query(statement(sql, "sweep_select"), &params)?;
            let leased = lease_held(tx, sql, process, now)?;
            let stale: Vec<(u32, u64)> =
                rows.iter().map(|r| (u32::try_from(int(r, 0)).expect("instance ids are u32"), int(r, 1))).collect();
            ws.push(Witness::new(
                &node,
                "sweep-selected",
                Source::Store,
                json!({
                    "by": process, "stale": stale.len(), "lease_held": leased, "task": task,
                }),
            ));
            Ok(Some(stale))
        })
    }

    /// The two-step sweep's clear of one selected claim, in a transaction of its own; with
    /// `renew_ns`, that transaction renews the lease first (see [`Store::sweep`]) and clears
    /// nothing if another process holds it.
    pub fn sweep_clear(
        &mut self,
        process: u32,
        task: u64,
        instance: u32,
        epoch: u64,
        renew_ns: Option<u64>,
    ) -> Result<bool, String> {
        let (node, timeout) = (self.node.clone(), self.claim_timeout_ns);
        self.tx(|tx, sql, now, ws| {
            if let Some(lease_ns) = renew_ns {
                if lease(tx, sql, &node, now, process, task, lease_ns, ws)?.is_none() {
                    return Ok(false);
                }
            }
            let params = [
                Value::Int(instance.into()),
                Value::Int(sql_ns(epoch)),
                Value::Int(process.into()),
                Value::Int(sql_ns(now)),
                Value::Int(sql_ns(timeout)),
                Value::Int(sql_ns(now.saturating_sub(timeout))),
            ];
            match tx.row(statement(sql, "sweep_clear"), &params)? {
                Some(row) => {
                    let leased = lease_held(tx, sql, process, now)?;
                    ws.extend(swept(&node, &row, now, process, leased, task));
                    Ok(true)
                }
                None => {
                    ws.push(Witness::new(
                        &node,
                        "sweep-clear-missed",
                        Source::Store,
                        json!({
                            "instance": instance, "by": process, "epoch": epoch, "task": task,
                        }),
                    ));
                    Ok(false)
                }
            }
        })
    }

    /// The timers due by `local_now` (the poller's own clock), hidden from other pollers
    /// until `local_now + fire_lease_ns` as they are picked: (instance, expects). The pick
    /// is not witnessed (no history kind holds it).
    pub fn pick_due_timers(
        &mut self,
        local_now: u64,
        fire_lease_ns: u64,
        limit: u32,
    ) -> Result<Vec<(u32, u64)>, String> {
        self.conn.transaction(|tx| {
            let sql = &*self.sql;
            let due =
                tx.query(statement(sql, "timer_due"), &[Value::Int(sql_ns(local_now)), Value::Int(limit.into())])?;
            let mut picked = Vec::new();
            for row in due {
                let params =
                    [row[0].clone(), Value::Int(sql_ns(local_now)), Value::Int(sql_ns(local_now + fire_lease_ns))];
                if let Some(p) = tx.row(statement(sql, "timer_pick"), &params)? {
                    picked.push((u32::try_from(int(&p, 0)).expect("instance ids are u32"), int(&p, 1)));
                }
            }
            Ok(picked)
        })
    }

    /// Takes the oldest outbox relay and witnesses its publication under a message id the
    /// broker gives it, in the same transaction: (message, instance, step).
    pub fn publish_from_outbox(&mut self, message_id: &dyn Fn() -> u32) -> Result<Option<(u32, u32, u32)>, String> {
        let node = self.node.clone();
        self.tx(|tx, sql, _now, ws| {
            let Some(row) = tx.row(statement(sql, "outbox_take"), &[])? else { return Ok(None) };
            let message = message_id();
            // seq, instance, expects, path
            let instance = u32::try_from(int(&row, 1)).expect("instance ids are u32");
            let step = u32::try_from(int(&row, 2) + 1).expect("steps are u32");
            ws.push(Witness::new(
                &node,
                "relay-published",
                Source::Store,
                json!({ "instance": instance, "message": message, "step": step }),
            ));
            Ok(Some((message, instance, step)))
        })
    }

    /// Creates an instance of `plan.len()` steps (each step's trigger, `relay` or `timer`)
    /// with its first trigger: the workload's request, witnessed by the harness.
    pub fn create_instance(&mut self, instance: u32, plan: &[&str], first_delay_ns: u64) -> Result<(), String> {
        let node = self.node.clone();
        self.tx(|tx, sql, now, ws| {
            let id = Value::Int(instance.into());
            let steps = i64::try_from(plan.len()).expect("few steps");
            tx.query(statement(sql, "instance_create"), &[id.clone(), Value::Int(steps)])?;
            for (step, trigger) in plan.iter().enumerate() {
                tx.query(statement(sql, "plan_create"), &[id.clone(), Value::Int(step as i64), Value::from(*trigger)])?;
            }
            ws.push(Witness::new(
                &node,
                "instance-started",
                Source::Executor,
                json!({ "instance": instance, "steps": plan.len() }),
            ));
            if plan[0] == "timer" {
                let due = now + first_delay_ns;
                tx.query(statement(sql, "timer_schedule"), &[id, Value::Int(0), Value::Int(sql_ns(due))])?;
                ws.push(Witness::new(
                    &node,
                    "timer-scheduled",
                    Source::Store,
                    json!({ "instance": instance, "step": 1, "due_ns": due }),
                ));
            } else {
                tx.query(statement(sql, "outbox_put"), &[id, Value::Int(0), Value::from("relay")])?;
            }
            Ok(())
        })
    }
}

/// The row of `instance` as `read` returns it: version, steps, owner, epoch, parked.
fn read_row(tx: &mut Tx<'_>, sql: &Statements, instance: u32) -> Result<Option<Row>, String> {
    tx.row(statement(sql, "read"), &[Value::Int(instance.into())])
}

/// Takes or renews the sweeper lease inside `tx` (the lease row stays locked to the
/// commit) and witnesses it; the expiry if granted.
#[allow(clippy::too_many_arguments)]
fn lease(
    tx: &mut Tx<'_>,
    sql: &Statements,
    node: &str,
    now: u64,
    process: u32,
    task: u64,
    lease_ns: u64,
    ws: &mut Vec<Witness>,
) -> Result<Option<u64>, String> {
    let params = [Value::Int(process.into()), Value::Int(sql_ns(now)), Value::Int(sql_ns(now + lease_ns))];
    let Some(row) = tx.row(statement(sql, "lease_acquire"), &params)? else { return Ok(None) };
    // holder, expires, prev_holder, prev_expires
    let until = int(&row, 1);
    let renewal = row[2].int() == Some(process.into()) && int(&row, 3) > now;
    ws.push(Witness::new(
        node,
        "lease-acquired",
        Source::Store,
        json!({
            "process": process, "until_ns": until, "renewal": renewal, "task": task,
        }),
    ));
    Ok(Some(until))
}

fn lease_held(tx: &mut Tx<'_>, sql: &Statements, process: u32, now: u64) -> Result<bool, String> {
    Ok(tx.row(statement(sql, "lease_held"), &[Value::Int(process.into()), Value::Int(sql_ns(now))])?.is_some())
}

/// The witnesses of one cleared claim (a `sweep` or `sweep_clear` row: id, prev_owner,
/// epoch, claimed_at, version, parked). A clear that found no claim on the row (an
/// unchecked clear of a row released since its select) changed nothing a claim shows:
/// only the row write is witnessed.
fn swept(node: &str, row: &Row, now: u64, process: u32, leased: bool, task: u64) -> Vec<Witness> {
    let instance = u32::try_from(int(row, 0)).expect("instance ids are u32");
    let (epoch, version) = (int(row, 2), int(row, 4));
    let mut out = Vec::new();
    if let Some(owner) = text(row, 1) {
        out.push(Witness::new(
            node,
            "swept",
            Source::Store,
            json!({
                "instance": instance, "owner": owner, "epoch": epoch, "age_ns": now.saturating_sub(int(row, 3)),
                "by": process, "lease_held": leased, "task": task,
            }),
        ));
    }
    out.push(row_written(node, instance, "Sweep", None, None, None, version, epoch));
    out
}

/// The row after a write (store truth).
#[allow(clippy::too_many_arguments)]
fn row_written(
    node: &str,
    instance: u32,
    write: &str,
    by: Option<u32>,
    writer: Option<&str>,
    owner: Option<&str>,
    version: u64,
    epoch: u64,
) -> Witness {
    Witness::new(
        node,
        "row-written",
        Source::Store,
        json!({
            "instance": instance, "write": write, "by": by, "writer": writer, "owner": owner,
            "version": version, "epoch": epoch, "parked": false,
        }),
    )
}

/// R5's backoff after the `refusals`-th refused fire: `base · 2^(refusals-1)`, capped.
pub fn backoff_ns(refusals: u64, base_ns: u64, cap_ns: u64) -> u64 {
    let doublings = u32::try_from(refusals.saturating_sub(1).min(40)).expect("at most 40");
    base_ns.saturating_mul(1u64 << doublings).min(cap_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_the_base_and_stops_at_the_cap() {
        let ms = 1_000_000;
        let got: Vec<u64> = (1..=6).map(|k| backoff_ns(k, 20 * ms, 200 * ms) / ms).collect();
        assert_eq!(got, vec![20, 40, 80, 160, 200, 200]);
        assert_eq!(backoff_ns(1000, 20 * ms, 200 * ms), 200 * ms);
    }
}

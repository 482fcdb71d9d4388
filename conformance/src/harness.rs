//! The harness: sets the store up, starts the replica processes, creates the workload, and
//! for the fault phase injects real faults — a process crashed (its threads stop where they
//! are), a process paused past the claim timeout, a lane worker killed mid-step, a clock
//! offset, deliveries routed to the wrong lane (the consumer draws those) — witnessing each
//! as the executor. Then it heals, waits for the work, stops everything and exports the
//! history.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::json;
use sutra_sql::Statements;

use crate::clock::Clock;
use crate::config::Config;
use crate::ctx::Ctx;
use crate::db::{Conn, Target, Value};
use crate::process::Process;
use crate::rng::Rng;
use crate::witness::{record_alone, statement, Source, Witness};

/// The harness's own tick: faults are drawn, restarts and resumes come due, and the
/// broker's liveness watch runs at this period.
const WATCH: Duration = Duration::from_millis(10);

/// What a run produced.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Witness events written.
    pub events: u64,
    /// Instances that completed, of all created.
    pub completed: u32,
    /// Whether every instance completed before the drain deadline.
    pub all_completed: bool,
    /// Faults injected, by kind: crashes, pauses, kills, clock offsets.
    pub faults: [u32; 4],
}

/// A process slot: the running incarnation and its threads, or when it comes back.
struct Slot {
    process: Arc<Process>,
    threads: Vec<JoinHandle<()>>,
    down_until: Option<Instant>,
    paused_until: Option<Instant>,
}

/// Runs one conformance run and writes its history to `history`.
pub fn run(cfg: Config, file: &Statements, history: &std::path::Path) -> Result<Outcome, String> {
    let sql = cfg.variant.statements(file).map_err(|e| e.to_string())?;
    let ctx = Arc::new(Ctx::new(cfg, sql));
    let mut conn = Conn::open(&ctx.cfg.target)?;
    set_up(&mut conn, &ctx.sql)?;
    let mut h =
        Harness { ctx: ctx.clone(), conn, rng: Rng::new(ctx.cfg.seed, 0xFA17), slots: Vec::new(), faults: [0; 4] };
    for r in 0..ctx.cfg.replicas {
        let slot = h.boot(r, 0)?;
        h.slots.push(slot);
    }
    let outcome = h.drive();
    h.stop_all();
    let (completed, all_completed) = outcome?;
    // The scrape of the claim-bounce meter at the end of the run, every thread stopped.
    let (relay, timer) = ctx.bounces.read();
    h.witness("world", "bounce-meter", serde_json::json!({ "relay": relay, "timer": timer }))?;
    if let Some(e) = ctx.error() {
        return Err(e);
    }
    let events = crate::history::export(&mut h.conn, &ctx.cfg, &ctx.sql, history, all_completed)?;
    h.conn.drop_schema(&ctx.cfg.target)?;
    Ok(Outcome { events, completed, all_completed, faults: h.faults })
}

/// Creates the store's tables (dropping a previous run's on PostgreSQL), the lease row and
/// the audit counter.
pub fn set_up(conn: &mut Conn, sql: &Statements) -> Result<(), String> {
    let tables = ["audit", "audit_counter", "outbox", "lease", "task", "timer", "step", "plan", "instance"];
    conn.drop_tables(&tables)?;
    for s in sql.schema() {
        conn.execute_schema(s)?;
    }
    conn.transaction(|tx| {
        tx.query(statement(sql, "lease_create"), &[])?;
        tx.query(statement(sql, "audit_counter_create"), &[])?;
        Ok(())
    })
}

struct Harness {
    ctx: Arc<Ctx>,
    conn: Conn,
    rng: Rng,
    slots: Vec<Slot>,
    faults: [u32; 4],
}

impl Harness {
    fn witness(&mut self, node: &str, kind: &'static str, fields: serde_json::Value) -> Result<(), String> {
        record_alone(&mut self.conn, &self.ctx.sql, Witness::new(node, kind, Source::Executor, fields)).map(|_| ())
    }

    /// Starts replica `r` as a new process.
    fn boot(&mut self, r: u32, offset_ns: i64) -> Result<Slot, String> {
        let p = Arc::new(Process::new(r, self.ctx.pid(), self.ctx.cfg.lanes, offset_ns));
        let threads = crate::roles::start(&self.ctx, &p);
        Ok(Slot { process: p, threads, down_until: None, paused_until: None })
    }

    /// Creates instance `i` with a random plan of relay and timer steps.
    fn create_instance(&mut self, store: &mut crate::store::Store, i: u32) -> Result<(), String> {
        let cfg = &self.ctx.cfg;
        let plan: Vec<&str> = (0..cfg.steps).map(|_| if self.rng.chance(500) { "timer" } else { "relay" }).collect();
        let delay = (1 + self.rng.below(cfg.timer_delay_max_ms.max(1))) * 1_000_000;
        store.create_instance(i, &plan, delay)
    }

    /// The fault phase, the heal and the drain: (instances completed, all of them).
    fn drive(&mut self) -> Result<(u32, bool), String> {
        let cfg = self.ctx.cfg.clone();
        let start = Instant::now();
        let mut next_draw = start;
        let mut world = self.ctx.store("world")?;
        // The workload arrives over the first two thirds of the fault phase.
        let arrival = Duration::from_millis(cfg.fault_phase_ms * 2 / 3) / cfg.instances.max(1);
        let mut created = 0;
        while start.elapsed() < Duration::from_millis(cfg.fault_phase_ms) || created < cfg.instances {
            self.check_error()?;
            while created < cfg.instances && start.elapsed() >= arrival * created {
                self.create_instance(&mut world, created)?;
                created += 1;
            }
            if Instant::now() >= next_draw {
                next_draw += Duration::from_millis(cfg.faults.tick_ms);
                self.draw_faults()?;
            }
            self.come_due(false)?;
            self.watch_consumers()?;
            std::thread::sleep(WATCH);
        }
        self.come_due(true)?;
        self.witness("world", "healed", serde_json::Value::Null)?;
        let deadline = Instant::now() + Duration::from_millis(cfg.drain_max_ms);
        let mut quiet_polls = 0;
        loop {
            self.check_error()?;
            self.watch_consumers()?;
            let done = self.completed()?;
            let quiet = self.quiescent(done);
            quiet_polls = if quiet { quiet_polls + 1 } else { 0 };
            if quiet_polls >= 2 {
                return Ok((done, true));
            }
            if Instant::now() >= deadline {
                return Ok((done, false));
            }
            std::thread::sleep(WATCH * 2);
        }
    }

    /// Whether the workload has ended, `done` instances complete: the end is quiescence (the
    /// drain asks to see it on two polls in a row) — every instance complete with no claim,
    /// no relay outstanding, and no lane with work queued or in hand. A timer picked again
    /// while its lane was slow leaves duplicate fires queued after the commit; each claims
    /// the completed row and releases it. Stopping the processes while one held its claim
    /// cut the history with a claim held and the header saying "complete"
    /// (eventual-completion flagged the correct runtime on PostgreSQL, seed 7).
    fn quiescent(&self, done: u32) -> bool {
        done == self.ctx.cfg.instances && self.ctx.broker.outstanding() == 0 && self.lanes_idle()
    }

    /// Whether no lane of any live process has work queued or in hand.
    fn lanes_idle(&self) -> bool {
        self.slots.iter().all(|slot| {
            slot.process.queued() == 0 && slot.process.lanes.iter().all(|l| l.held.lock().expect("held lock").is_none())
        })
    }

    fn check_error(&self) -> Result<(), String> {
        self.ctx.error().map_or(Ok(()), Err)
    }

    /// Instances whose row shows every step committed and no claim (the harness's own
    /// look at the store, not witnessed).
    fn completed(&mut self) -> Result<u32, String> {
        let (sql, n) = (self.ctx.sql.clone(), self.ctx.cfg.instances);
        self.conn.transaction(|tx| {
            let mut done = 0;
            for i in 0..n {
                let row =
                    tx.row(statement(&sql, "read"), &[Value::Int(i.into())])?.ok_or("an instance row is missing")?;
                if row[0] == row[1] && row[2] == Value::Null {
                    done += 1;
                }
            }
            Ok(done)
        })
    }

    fn draw_faults(&mut self) -> Result<(), String> {
        let f = self.ctx.cfg.faults.clone();
        let all_up = self.slots.iter().all(|s| s.down_until.is_none() && s.paused_until.is_none());
        if all_up && self.rng.chance(f.crash_per_mille) {
            let r = self.rng.below(self.slots.len() as u64) as usize;
            self.crash(r)?;
        } else if all_up && self.rng.chance(f.pause_per_mille) {
            let r = self.rng.below(self.slots.len() as u64) as usize;
            self.pause(r)?;
        }
        if self.rng.chance(f.lane_kill_per_mille) {
            let r = self.rng.below(self.slots.len() as u64) as usize;
            let lane = self.rng.below(u64::from(self.ctx.cfg.lanes)) as usize;
            if self.slots[r].down_until.is_none() {
                self.slots[r].process.lanes[lane].kill.store(true, std::sync::atomic::Ordering::SeqCst);
                self.faults[2] += 1;
            }
        }
        if self.rng.chance(f.clock_offset_per_mille) {
            let r = self.rng.below(self.slots.len() as u64) as usize;
            let max = f.clock_offset_max_ms;
            let offset_ms = self.rng.below(2 * max + 1) as i64 - max as i64;
            self.slots[r].process.offset_ns.store(offset_ms * 1_000_000, std::sync::atomic::Ordering::SeqCst);
            self.witness(&format!("replica-{r}"), "clock-skewed", json!({ "replica": r, "offset_ms": offset_ms }))?;
            self.faults[3] += 1;
        }
        Ok(())
    }

    /// Crashes slot `r`'s process: its threads stop where they are (no exit path runs);
    /// once every one has, the crash is witnessed and the broker takes its deliveries back.
    fn crash(&mut self, r: usize) -> Result<(), String> {
        let p = self.slots[r].process.clone();
        p.crash();
        for t in self.slots[r].threads.drain(..) {
            t.join().map_err(|_| format!("a thread of {} panicked", p.node))?;
        }
        self.witness(&p.node, "replica-crashed", json!({ "replica": p.replica, "process": p.pid }))?;
        self.ctx.broker.take_back(&mut self.conn, &p.node, p.pid, false)?;
        let restart_ms = 100 + self.rng.below(400);
        self.slots[r].down_until = Some(Instant::now() + Duration::from_millis(restart_ms));
        self.faults[0] += 1;
        Ok(())
    }

    /// Freezes slot `r`'s process past the claim timeout (1.05 to 2 times it: long enough
    /// for its claims to go stale, short enough that it often wakes while the work it lost
    /// is being redone elsewhere).
    fn pause(&mut self, r: usize) -> Result<(), String> {
        let timeout = self.ctx.cfg.claim_timeout_ms;
        let ms = timeout + timeout / 20 + self.rng.below(timeout * 19 / 20 + 1);
        let p = self.slots[r].process.clone();
        p.set_paused(true);
        self.witness(
            &p.node,
            "replica-paused",
            json!({ "replica": p.replica, "process": p.pid, "for_ns": ms * 1_000_000 }),
        )?;
        self.slots[r].paused_until = Some(Instant::now() + Duration::from_millis(ms));
        self.faults[1] += 1;
        Ok(())
    }

    /// Restarts crashed processes and resumes paused ones whose time has come (all of
    /// them at the heal).
    fn come_due(&mut self, heal: bool) -> Result<(), String> {
        let now = Instant::now();
        for r in 0..self.slots.len() {
            if self.slots[r].paused_until.is_some_and(|t| heal || t <= now) {
                let p = self.slots[r].process.clone();
                p.set_paused(false);
                self.slots[r].paused_until = None;
                self.witness(&p.node, "replica-resumed", json!({ "replica": p.replica, "process": p.pid }))?;
            }
            if self.slots[r].down_until.is_some_and(|t| heal || t <= now) {
                let offset = self.slots[r].process.offset_ns.load(std::sync::atomic::Ordering::SeqCst);
                let slot = self.boot(r as u32, offset)?;
                self.witness(
                    &slot.process.node,
                    "replica-restarted",
                    json!({ "replica": r, "process": slot.process.pid }),
                )?;
                self.slots[r] = slot;
            }
        }
        Ok(())
    }

    /// The broker's liveness watch: a consumer whose heartbeat has been silent past the
    /// liveness timeout has its unsettled deliveries taken back.
    fn watch_consumers(&mut self) -> Result<(), String> {
        let liveness_ns = self.ctx.cfg.broker_liveness_ms * 1_000_000;
        let now = Clock::store().now_ns();
        for r in 0..self.slots.len() {
            let p = self.slots[r].process.clone();
            if p.is_crashed() || !self.ctx.broker.holds(p.pid) {
                continue;
            }
            let last = p.last_seen_ns.load(std::sync::atomic::Ordering::SeqCst);
            if now.saturating_sub(last) > liveness_ns {
                self.ctx.broker.take_back(&mut self.conn, "world", p.pid, true)?;
            }
        }
        Ok(())
    }

    /// Stops every process at the end of the run (not witnessed: the history ends here).
    fn stop_all(&mut self) {
        for s in &self.slots {
            s.process.set_paused(false);
            s.process.crash();
        }
        for s in &mut self.slots {
            for t in s.threads.drain(..) {
                let _ = t.join();
            }
        }
    }
}

/// A SQLite file for a run in `dir`.
pub fn sqlite_target(dir: &std::path::Path) -> Target {
    Target::Sqlite(dir.join("store.db"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::Work;
    use crate::variant::Variant;

    /// A harness of one process that runs no threads, on a fresh SQLite store in `dir`,
    /// with every instance of the workload complete (it has none).
    fn idle_harness(dir: &std::path::Path) -> Harness {
        let mut cfg = Config::new(0, Variant::Correct, sqlite_target(dir));
        cfg.instances = 0;
        let ctx = Arc::new(Ctx::new(cfg, Statements::default()));
        let mut conn = Conn::open(&ctx.cfg.target).expect("open");
        set_up(&mut conn, &ctx.sql).expect("set up");
        let process = Arc::new(Process::new(0, ctx.pid(), ctx.cfg.lanes, 0));
        let slot = Slot { process, threads: Vec::new(), down_until: None, paused_until: None };
        Harness { ctx, conn, rng: Rng::new(0, 0), slots: vec![slot], faults: [0; 4] }
    }

    /// The fix of issue 24's third pass: a run ended as soon as every instance was
    /// complete, while duplicate timer fires were still queued on a lane (each claims the
    /// completed row: the history was cut with a claim held and said "complete").
    #[test]
    fn a_run_is_not_over_while_a_lane_has_work_queued_or_a_relay_is_outstanding() {
        let dir = crate::scratch_dir("quiescence").expect("a scratch directory");
        let h = idle_harness(&dir);
        assert!(h.quiescent(0), "nothing to do: quiescent");
        h.slots[0].process.dispatch(1, Work::Timer { instance: 0, expects: 6 });
        assert!(!h.quiescent(0), "a duplicate timer fire is queued on lane 1");
        h.slots[0].process.next_work(1).expect("the queued fire");
        assert!(h.quiescent(0));
        let message = h.ctx.broker.message_id();
        h.ctx.broker.publish(message, 0, 6);
        assert!(!h.quiescent(0), "a relay is outstanding");
        let _ = std::fs::remove_dir_all(dir);
    }
}

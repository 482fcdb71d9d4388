//! An execution lane: one worker thread running one execution at a time, under a
//! supervisor that starts a successor when the worker is killed. An execution claims
//! before it reads anything (R1), refuses rather than waits (R3) — a refused relay is
//! requeued, a refused timer fire deferred with backoff (R4, R5) — drops a trigger that was
//! already applied, runs its step, and commits with the release in one transaction (R8).
//! Every other exit releases explicitly, the panic path included (R9); a rejected commit
//! (the claim was swept or taken as stale) hands its trigger back (R19).
//!
//! A worker killed mid-step runs no exit path at all. Its process is alive, so its
//! successor — the same lane, the same owner id, serialised after it by the supervisor —
//! releases the claim it left and hands its trigger back before taking new work (R22:
//! the sweep is only for a process that is not around).

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use crate::ctx::{Ctx, Stop};
use crate::process::{Gone, Held, Process, Work};
use crate::rng::Rng;
use crate::store::{Caller, Claim, Commit, Path, Store, Trigger};
use crate::witness::{record_alone, Source, Witness};

/// How long the `refusal-sleeps-before-requeue` lane sleeps before it requeues a refused
/// relay, as a multiple of the declared broker call latency: a backoff a careful-looking
/// lane might take, far longer than a reply's declared lateness (the header's
/// `faults.store.latency_spike_max`, at most the claim timeout) and the broker's declared
/// call latency together, so that it is flagged however loaded the machine is.
const REFUSAL_BACKOFF_BROKER_CALLS: u64 = 4;

/// How a step ended.
enum StepEnd {
    Done,
    Failed,
}

/// Supervises lane `lane` of `p`: runs workers until the process is gone, witnessing each
/// killed worker's abort (the executor's witness) before its successor starts.
pub fn supervise(ctx: Arc<Ctx>, p: Arc<Process>, lane: u32) {
    let mut witness_conn = match crate::db::Conn::open(&ctx.cfg.target) {
        Ok(c) => c,
        Err(e) => return ctx.fail(e),
    };
    let mut recover: Option<Held> = None;
    loop {
        let task = ctx.task_id();
        let (c, q, r) = (ctx.clone(), p.clone(), recover.take());
        let worker = std::thread::Builder::new()
            .name(format!("p{}-lane{lane}", p.pid))
            .spawn(move || work(&c, &q, lane, task, r))
            .expect("spawn a lane worker");
        match worker.join().expect("a lane worker catches its panics") {
            Stop::Gone(Gone::Killed) => {
                let w = Witness::new(
                    &p.node,
                    "task-aborted",
                    Source::Executor,
                    json!({
                        "replica": p.replica, "process": p.pid, "lane": lane, "task": task,
                    }),
                );
                if let Err(e) = record_alone(&mut witness_conn, &ctx.sql, w) {
                    return ctx.fail(e);
                }
                recover = p.lanes[lane as usize].held.lock().expect("held lock").take();
            }
            Stop::Gone(Gone::Crashed) => return,
            Stop::Error(e) => return ctx.fail(e),
        }
    }
}

/// One worker: recovers what a killed predecessor left, then runs executions.
fn work(ctx: &Ctx, p: &Process, lane: u32, task: u64, recover: Option<Held>) -> Stop {
    let mut store = match ctx.store(&p.node) {
        Ok(s) => s,
        Err(e) => return Stop::Error(e),
    };
    let mut rng = Rng::new(ctx.cfg.seed, task);
    let mut l = LaneRun { ctx, p, lane, task, owner: p.owner(lane), store: &mut store };
    if let Some(held) = recover {
        if let Err(stop) = l.recover(held) {
            return stop;
        }
    }
    loop {
        let work = match p.next_work(lane) {
            Ok(w) => w,
            Err(g) => return Stop::Gone(g),
        };
        match catch_unwind(AssertUnwindSafe(|| l.execute(work, &mut rng))) {
            Ok(Ok(())) => {}
            Ok(Err(stop)) => return stop,
            // A step's panic, re-raised after its release: the lane carries on.
            Err(_) => {}
        }
    }
}

struct LaneRun<'a> {
    ctx: &'a Ctx,
    p: &'a Process,
    lane: u32,
    task: u64,
    owner: String,
    store: &'a mut Store,
}

impl LaneRun<'_> {
    fn caller(&self, exec: u32) -> Caller {
        Caller { exec, owner: self.owner.clone(), process: self.p.pid, task: self.task }
    }

    fn hold(&self, held: Option<Held>) {
        *self.p.lanes[self.lane as usize].held.lock().expect("held lock") = held;
    }

    /// Releases the claim a killed predecessor left and hands its trigger back.
    fn recover(&mut self, held: Held) -> Result<(), Stop> {
        self.p.gate()?;
        if let Some(epoch) = held.epoch {
            self.store.release(held.work.instance(), &self.caller(held.exec), epoch)?;
        }
        self.give_back(&held.work, false)
    }

    fn execute(&mut self, work: Work, rng: &mut Rng) -> Result<(), Stop> {
        let exec = self.ctx.exec_id();
        let caller = self.caller(exec);
        let instance = work.instance();
        self.hold(Some(Held { work, exec, epoch: None }));
        self.p.gate()?;
        let (path, delivery) = match work {
            Work::Relay(d) => (Path::Relay, Some(d.tag)),
            Work::Timer { .. } => (Path::Timer, None),
        };
        let epoch = match self.store.claim_for(instance, &caller, path, delivery)? {
            Claim::Granted { epoch } => epoch,
            Claim::Refused => {
                self.ctx.bounces.count(path);
                self.give_back(&work, true)?;
                self.hold(None);
                return Ok(());
            }
        };
        self.hold(Some(Held { work, exec, epoch: Some(epoch) }));
        self.p.gate()?;
        let row = self.store.read(instance, &caller, epoch)?;
        let expects = match work {
            Work::Relay(d) => u64::from(d.step) - 1,
            Work::Timer { expects, .. } => expects,
        };
        if row.version != expects || row.version >= row.steps {
            // Already applied (a redelivery after the commit, a second fire): drop it.
            self.p.gate()?;
            self.store.release(instance, &caller, epoch)?;
            self.consume(&work)?;
            self.hold(None);
            return Ok(());
        }
        let end = self.step(rng);
        let end = match end {
            Ok(end) => end,
            Err(StepFault::Stop(s)) => return Err(s),
            Err(StepFault::Panic(payload)) => {
                self.p.gate()?;
                self.store.release(instance, &caller, epoch)?;
                self.give_back(&work, false)?;
                self.hold(None);
                resume_unwind(payload);
            }
        };
        self.p.gate()?;
        if let StepEnd::Failed = end {
            self.store.release(instance, &caller, epoch)?;
            self.give_back(&work, false)?;
            self.hold(None);
            return Ok(());
        }
        let trigger = match work {
            Work::Relay(d) => Trigger::Message(d.message),
            Work::Timer { expects, .. } => Trigger::TimerRow { expects },
        };
        let delay_ns = (1 + rng.below(self.ctx.cfg.timer_delay_max_ms.max(1))) * 1_000_000;
        let outcome = match self.store.commit(instance, &caller, epoch, row.version, trigger, delay_ns) {
            Ok(outcome) => outcome,
            // The store refused the write on a constraint (a second timer row for the
            // instance: what a commit that should never have matched leaves behind). The
            // transaction rolled back: an unexpected failure of the step, released and
            // handed back like one.
            Err(e) if is_constraint_violation(&e) => {
                self.store.release(instance, &caller, epoch)?;
                self.give_back(&work, false)?;
                self.hold(None);
                return Ok(());
            }
            Err(e) => return Err(Stop::Error(e)),
        };
        match outcome {
            Commit::Accepted(_) => self.consume(&work)?,
            // R19: our claim was swept or taken as stale; the write is void. This exit
            // does not commit, so it releases like every other (matching nothing, since
            // the row is not ours), and hands the trigger back: its next delivery finds
            // out whether the step was done.
            Commit::Rejected => {
                self.store.release(instance, &caller, epoch)?;
                self.give_back(&work, false)?;
            }
        }
        self.hold(None);
        Ok(())
    }

    /// Runs the step: real time on the lane, a chance of failing or panicking, and the
    /// harness's kill, which ends the worker here with no exit path.
    fn step(&self, rng: &mut Rng) -> Result<StepEnd, StepFault> {
        let cfg = &self.ctx.cfg;
        let span = cfg.step_max_ms.saturating_sub(cfg.step_min_ms()) + 1;
        let ms = cfg.step_min_ms() + rng.below(span);
        let lane = &self.p.lanes[self.lane as usize];
        self.p.sleep(Duration::from_millis(ms), Some(lane)).map_err(|g| StepFault::Stop(g.into()))?;
        if rng.below(cfg.step_error_one_in.max(1)) != 0 {
            return Ok(StepEnd::Done);
        }
        match rng.below(3) {
            0 => Ok(StepEnd::Failed), // a validation error
            1 => Ok(StepEnd::Failed), // an unexpected failure
            _ => match catch_unwind(|| panic!("{}", crate::STEP_PANIC)) {
                Ok(()) => Ok(StepEnd::Done),
                Err(payload) => Err(StepFault::Panic(payload)),
            },
        }
    }

    /// The trigger is done with: ack the relay (a timer row went with the commit).
    fn consume(&mut self, work: &Work) -> Result<(), Stop> {
        if let Work::Relay(d) = work {
            self.ctx.broker.ack(self.store.conn(), &self.p.node, d)?;
        }
        Ok(())
    }

    /// Hands the trigger back for later: requeue the relay after the requeue delay, or
    /// defer the timer row (with R5's backoff when the claim was refused).
    fn give_back(&mut self, work: &Work, refused: bool) -> Result<(), Stop> {
        let cfg = &self.ctx.cfg;
        match *work {
            Work::Relay(d) => {
                if refused && cfg.variant.refusal_sleeps() {
                    // "Back off before handing it back": the lane sleeps holding the delivery.
                    let lane = &self.p.lanes[self.lane as usize];
                    let backoff_ms = REFUSAL_BACKOFF_BROKER_CALLS * cfg.broker_call_latency_max_ms;
                    self.p.sleep(Duration::from_millis(backoff_ms), Some(lane)).map_err(Stop::from)?;
                }
                let node = self.p.node.clone();
                self.ctx.broker.requeue(self.store.conn(), &node, &d, cfg.requeue_delay_ms * 1_000_000)?;
            }
            Work::Timer { instance, expects } => {
                let (base, cap) = (cfg.timer_backoff_base_ms * 1_000_000, cfg.timer_backoff_max_ms * 1_000_000);
                self.store.defer_timer(instance, expects, refused, self.task, base, cap)?;
            }
        }
        Ok(())
    }
}

/// Whether a store error is the database refusing a write on a constraint (SQLite's
/// `UNIQUE constraint failed`, PostgreSQL's 23505 still failing after its retries).
pub fn is_constraint_violation(e: &str) -> bool {
    e.contains("constraint failed") || e.contains("23505")
}

/// A step that did not return normally.
enum StepFault {
    Stop(Stop),
    Panic(Box<dyn std::any::Any + Send>),
}

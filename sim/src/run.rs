//! Running one simulation: executor, trace, checkers and budgets put together.
//!
//! [`simulate`] enters a fresh executor, lets the model set its world up, then steps until
//! the work is done, a checker fails, the run hangs, a budget runs out, or model code
//! panics. Events are drained after every poll and judged in order; the first failing
//! always-checker ends the run. Eventually-checkers judge at the end. The result is an
//! [`Outcome`] with the verdict, the fingerprint, the tape, and what coverage was reached.

use std::panic::{self, AssertUnwindSafe};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::checker::Checker;
use crate::entropy::{Entropy, Tape};
use crate::executor::{Executor, Step};
use crate::judge::Judge;
use crate::strategy::StrategyConfig;
use crate::time::{duration_nanos, format_duration, SimTime};
use crate::trace::{Event, EventKind, Tracer};
use crate::verdict::{Budget, Verdict};

/// Where a run's entropy comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntropyMode {
    /// Fresh draws from ChaCha8 seeded with this value.
    Seed(u64),
    /// A recorded tape, replayed; past its end every draw is 0.
    Tape(Tape),
    /// A branch: the prefix replayed, then fresh draws from ChaCha8 seeded with `seed`
    /// ([`Entropy::branch`]). The run's tape replays it alone.
    Branch {
        /// The parent's tape up to the branch point.
        prefix: Tape,
        /// The child's seed.
        seed: u64,
        /// Past the prefix, rare chances are this many times likelier ([`Entropy::boosted`];
        /// 1: as asked). Only the drawing is boosted: the tape replays the run alone.
        boost: u32,
    },
}

/// The limits of one run. Every run has all three.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Budgets {
    /// Most trace events a run may emit.
    pub events_max: u64,
    /// Most simulated time a run may take.
    pub sim_time_max: Duration,
    /// Most task polls a run may take (catches spins that emit nothing).
    pub polls_max: u64,
}

impl Default for Budgets {
    fn default() -> Self {
        Budgets { events_max: 1_000_000, sim_time_max: Duration::from_secs(3_600), polls_max: 10_000_000 }
    }
}

/// Everything that decides a run besides the model itself.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// Seed or tape.
    pub entropy: EntropyMode,
    /// Scheduling strategy.
    pub strategy: StrategyConfig,
    /// Limits.
    pub budgets: Budgets,
    /// A lane turn open longer than this is a hang (deadlocks hidden behind timers).
    pub stall_bound: Option<Duration>,
    /// Keep every event in [`Outcome::trace`] (replay, stories, timelines).
    pub keep_trace: bool,
    /// Collect coverage marks in [`Outcome::marks`] (exploration).
    pub marks: bool,
}

impl RunConfig {
    /// A seeded run with the random strategy and default budgets.
    pub fn seeded(seed: u64) -> RunConfig {
        RunConfig {
            entropy: EntropyMode::Seed(seed),
            strategy: StrategyConfig::Random,
            budgets: Budgets::default(),
            stall_bound: None,
            keep_trace: false,
            marks: false,
        }
    }
}

/// The result of one run.
#[derive(Clone, Debug)]
pub struct Outcome<K> {
    /// How it ended.
    pub verdict: Verdict,
    /// The [`Fingerprint`](crate::trace::Fingerprint) of the trace up to the end (or the violating event).
    pub fingerprint: u64,
    /// Number of trace events judged.
    pub events: u64,
    /// Number of task polls.
    pub polls: u64,
    /// Simulated time at the end.
    pub sim_time: SimTime,
    /// Every draw the run made: replaying it reproduces the run.
    pub tape: Tape,
    /// For a replay: (entries read, tape length); reading past the end is allowed.
    pub replay_position: Option<(usize, usize)>,
    /// The events, if `keep_trace` was set.
    pub trace: Vec<Event<K>>,
    /// Names of the sometimes-checkers whose situation occurred.
    pub reached: Vec<String>,
    /// Sequence number of the event that failed an always-checker.
    pub failing_event: Option<u64>,
    /// The name of every node of the run, indexed by [`NodeId`](crate::node::NodeId) (for stories and timelines).
    pub node_names: Vec<String>,
    /// The coverage marks reached, first hits in order, if `marks` was set.
    pub marks: Vec<crate::marks::Mark>,
}

/// Runs one simulation. `setup` runs inside the simulated world: it creates nodes, spawns
/// the tasks, and returns the read-only view the checkers see. The run ends when no
/// non-daemon task is left (or the model calls `finish`), on the first violation, on a
/// hang, on a budget overrun, or on a panic in model code (a crash verdict).
pub fn simulate<K, V>(
    config: &RunConfig,
    checkers: Vec<Box<dyn Checker<K, V>>>,
    setup: impl FnOnce(&Tracer<K>) -> V,
) -> Outcome<K>
where
    K: EventKind,
{
    let entropy = match &config.entropy {
        EntropyMode::Seed(seed) => Entropy::random(*seed),
        EntropyMode::Tape(tape) => Entropy::replay(tape.clone()),
        EntropyMode::Branch { prefix, seed, boost } => Entropy::boosted(prefix.clone(), *seed, *boost),
    };
    let executor = Executor::new(entropy, config.strategy);
    if config.marks {
        executor.collect_marks();
    }
    let guard = executor.enter();
    if K::NODE_END_TAGS != 0 {
        crate::executor::expect_kill_witnesses();
    }
    let tracer: Tracer<K> = Tracer::new();
    let mut judge = Judge::new(checkers, config.keep_trace);
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        let view = setup(&tracer);
        judge.verdict = drive(&executor, &tracer, &mut judge, &view, config);
        judge.judge_end(&view);
        // Tasks go before the view, so nothing the model holds outlives the world.
        executor.shutdown();
        drop(view);
    }));
    if let Err(payload) = result {
        judge.verdict = Some(Verdict::Crash { message: panic_message(payload.as_ref()) });
    }
    let outcome = Outcome {
        verdict: judge.verdict.take().unwrap_or(Verdict::Pass),
        fingerprint: judge.fingerprint(),
        events: judge.events,
        polls: executor.polls(),
        sim_time: executor.now(),
        tape: executor.take_tape(),
        replay_position: executor.replay_position(),
        trace: std::mem::take(&mut judge.trace),
        reached: judge.reached(),
        failing_event: judge.failing_event,
        node_names: crate::executor::node_names().iter().map(|n| n.to_string()).collect(),
        marks: executor.take_marks(),
    };
    // A crash may leave tasks behind; drop them while the world is still entered, so a
    // future's destructor that touches the world finds it.
    let _ = panic::catch_unwind(AssertUnwindSafe(|| executor.shutdown()));
    drop(guard);
    outcome
}

/// Steps the world and judges its events until the run ends; the verdict, if the run did
/// not simply finish.
fn drive<K: EventKind, V>(
    executor: &Executor,
    tracer: &Tracer<K>,
    judge: &mut Judge<K, V>,
    view: &V,
    config: &RunConfig,
) -> Option<Verdict> {
    let budgets = config.budgets;
    let sim_time_max = SimTime(duration_nanos(budgets.sim_time_max));
    let mut batch: Vec<Event<K>> = Vec::with_capacity(64);
    loop {
        let step = executor.step();
        tracer.drain_into(&mut batch);
        // Most steps emit nothing: then nothing is judged, and neither the verdict nor the
        // count of events can have changed since the last look.
        if !batch.is_empty() {
            judge.judge_batch(&mut batch, view);
            if judge.verdict.is_some() {
                return judge.verdict.take();
            }
            if judge.events > budgets.events_max {
                let message = format!("more than {} events by {}", budgets.events_max, executor.now());
                return Some(Verdict::BudgetExceeded { budget: Budget::Events, message });
            }
        }
        match step {
            Step::Polled => {
                if executor.polls() > budgets.polls_max {
                    let message = format!("more than {} polls by {}", budgets.polls_max, executor.now());
                    return Some(Verdict::BudgetExceeded { budget: Budget::Polls, message });
                }
            }
            Step::Advanced => {
                // (The executor has checked that every kill of the instant just left was
                // witnessed: see `executor::honesty`.)
                if executor.now() > sim_time_max {
                    let message = format!("simulated time passed {}", format_duration(budgets.sim_time_max));
                    return Some(Verdict::BudgetExceeded { budget: Budget::SimTime, message });
                }
                // The oldest turn is looked at in place; the list of stalled turns is built
                // only for the hang it reports.
                let stalled = config.stall_bound.filter(|&bound| executor.turn_held_past(bound));
                if let Some(hang) = stalled.and_then(|bound| stalled_turn(executor, bound)) {
                    return Some(hang);
                }
            }
            Step::Finished => return None,
            Step::Stuck(message, stuck) => return Some(Verdict::Hang { message, stuck }),
        }
    }
}

/// A hang naming the lanes whose turn has been held longer than `bound`, if any.
#[cold]
fn stalled_turn(executor: &Executor, bound: Duration) -> Option<Verdict> {
    let stalled = executor.stalled_turns(bound);
    let (lane, _) = stalled.first()?;
    Some(Verdict::Hang {
        message: format!("lane {lane} has held one turn for longer than the stall bound {}", format_duration(bound)),
        stuck: stalled.iter().map(|(_, task)| task.clone()).collect(),
    })
}

/// The message of a caught panic.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic with a non-string payload".into())
}

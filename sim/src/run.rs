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

use crate::checker::{Check, Checker, CheckerKind};
use crate::entropy::{Entropy, Tape};
use crate::executor::{Executor, Step};
use crate::strategy::StrategyConfig;
use crate::time::{duration_nanos, SimTime};
use crate::trace::{Event, EventKind, TraceHasher, Tracer, TAGS};
use crate::verdict::{Budget, Verdict};

/// Where a run's entropy comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntropyMode {
    /// Fresh draws from ChaCha8 seeded with this value.
    Seed(u64),
    /// A recorded tape, replayed; past its end every draw is 0.
    Tape(Tape),
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
}

struct Judge<K, V> {
    checkers: Vec<Box<dyn Checker<K, V>>>,
    /// For each event tag, a bit set of the checkers still listening to it: `words` u64s
    /// per tag, bit `i` for checker `i`. Walking the bits in order keeps checker order (so
    /// that when one event breaks two rules, the first checker reports it); a sometimes-
    /// checker whose situation occurred is cleared from every tag.
    listening: Vec<u64>,
    words: usize,
    kinds: Vec<CheckerKind>,
    reached: Vec<bool>,
    hasher: TraceHasher,
    events: u64,
    keep_trace: bool,
    trace: Vec<Event<K>>,
    verdict: Option<Verdict>,
    failing_event: Option<u64>,
}

impl<K: EventKind, V> Judge<K, V> {
    /// Judges one event: numbers it, folds it into the fingerprint and hands it to every
    /// checker listening to its tag, in checker order.
    fn judge(&mut self, event: &mut Event<K>, view: &V) {
        debug_assert!(self.verdict.is_none(), "nothing is judged after the verdict");
        event.seq = self.events;
        let event = &*event;
        self.hasher.add(event.time, event.node, &event.kind);
        let tag = usize::from(event.kind.tag());
        assert!(tag < TAGS, "event tag {tag} is not below {TAGS}");
        self.events += 1;
        'checkers: for word in 0..self.words {
            let mut bits = self.listening[tag * self.words + word];
            while bits != 0 {
                let i = word * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let checker = &mut self.checkers[i];
                match checker.on_event(event, view) {
                    Check::Ok => {}
                    Check::Reached => {
                        assert!(self.kinds[i] == CheckerKind::Sometimes, "only sometimes-checkers reach");
                        self.reached[i] = true;
                        // Reached once is enough: it listens to nothing any more.
                        for t in 0..TAGS {
                            self.listening[t * self.words + word] &= !(1u64 << (i % 64));
                        }
                    }
                    Check::Fail(message) => {
                        assert!(
                            self.kinds[i] != CheckerKind::Sometimes,
                            "sometimes-checker {} returned Fail",
                            checker.name()
                        );
                        self.verdict = Some(Verdict::Violation { checker: checker.name().to_string(), message });
                        self.failing_event = Some(event.seq);
                        break 'checkers;
                    }
                }
            }
        }
    }
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
    };
    let executor = Executor::new(entropy, config.strategy);
    let guard = executor.enter();
    let tracer: Tracer<K> = Tracer::new();
    let kinds = checkers.iter().map(|c| c.kind()).collect();
    // Each checker is asked for its interest once.
    let words = checkers.len().div_ceil(64).max(1);
    let mut listening = vec![0u64; TAGS * words];
    for (i, checker) in checkers.iter().enumerate() {
        let mut mask = checker.interest();
        while mask != 0 {
            let tag = mask.trailing_zeros() as usize;
            listening[tag * words + i / 64] |= 1 << (i % 64);
            mask &= mask - 1;
        }
    }
    let reached = vec![false; checkers.len()];
    let mut judge = Judge {
        checkers,
        listening,
        words,
        kinds,
        reached,
        hasher: TraceHasher::default(),
        events: 0,
        keep_trace: config.keep_trace,
        trace: Vec::new(),
        verdict: None,
        failing_event: None,
    };
    let budgets = config.budgets;
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        let view = setup(&tracer);
        let mut batch: Vec<Event<K>> = Vec::with_capacity(64);
        let sim_time_max = SimTime(duration_nanos(budgets.sim_time_max));
        loop {
            let step = executor.step();
            tracer.drain_into(&mut batch);
            // Most polls emit nothing; skip even setting up the loop for them.
            if !batch.is_empty() {
                // Judged in place; events after the verdict are dropped unjudged.
                let mut judged = 0;
                for event in batch.iter_mut() {
                    if judge.verdict.is_some() {
                        break;
                    }
                    judge.judge(event, &view);
                    judged += 1;
                }
                if judge.keep_trace {
                    judge.trace.extend(batch.drain(..judged));
                }
                batch.clear();
            }
            if judge.verdict.is_some() {
                break;
            }
            if judge.events > budgets.events_max {
                judge.verdict = Some(Verdict::BudgetExceeded {
                    budget: Budget::Events,
                    message: format!("more than {} events by {}", budgets.events_max, executor.now()),
                });
                break;
            }
            match step {
                Step::Polled => {
                    if executor.polls() > budgets.polls_max {
                        judge.verdict = Some(Verdict::BudgetExceeded {
                            budget: Budget::Polls,
                            message: format!("more than {} polls by {}", budgets.polls_max, executor.now()),
                        });
                        break;
                    }
                }
                Step::Advanced => {
                    if executor.now() > sim_time_max {
                        judge.verdict = Some(Verdict::BudgetExceeded {
                            budget: Budget::SimTime,
                            message: format!(
                                "simulated time passed {}",
                                crate::time::format_duration(budgets.sim_time_max)
                            ),
                        });
                        break;
                    }
                    if let Some(bound) = config.stall_bound {
                        let stalled = executor.stalled_turns(bound);
                        if let Some((lane, _)) = stalled.first() {
                            judge.verdict = Some(Verdict::Hang {
                                message: format!(
                                    "lane {lane} has held one turn for longer than the stall bound {}",
                                    crate::time::format_duration(bound)
                                ),
                                stuck: stalled.iter().map(|(_, task)| task.clone()).collect(),
                            });
                            break;
                        }
                    }
                }
                Step::Finished => break,
                Step::Stuck(message, stuck) => {
                    judge.verdict = Some(Verdict::Hang { message, stuck });
                    break;
                }
            }
        }
        if judge.verdict.is_none() {
            for checker in judge.checkers.iter_mut() {
                if let Check::Fail(message) = checker.at_end(&view) {
                    judge.verdict = Some(Verdict::Violation { checker: checker.name().to_string(), message });
                    break;
                }
            }
        }
        // Tasks go before the view, so nothing the model holds outlives the world.
        executor.shutdown();
        drop(view);
    }));
    if let Err(payload) = result {
        let message = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic with a non-string payload".into());
        judge.verdict = Some(Verdict::Crash { message });
    }
    let reached =
        judge.checkers.iter().zip(&judge.reached).filter(|(_, r)| **r).map(|(c, _)| c.name().to_string()).collect();
    let outcome = Outcome {
        verdict: judge.verdict.take().unwrap_or(Verdict::Pass),
        fingerprint: judge.hasher.value(),
        events: judge.events,
        polls: executor.polls(),
        sim_time: executor.now(),
        tape: executor.take_tape(),
        replay_position: executor.replay_position(),
        trace: std::mem::take(&mut judge.trace),
        reached,
        failing_event: judge.failing_event,
        node_names: crate::executor::node_names().iter().map(|n| n.to_string()).collect(),
    };
    // A crash may leave tasks behind; drop them while the world is still entered, so a
    // future's destructor that touches the world finds it.
    let _ = panic::catch_unwind(AssertUnwindSafe(|| executor.shutdown()));
    drop(guard);
    outcome
}

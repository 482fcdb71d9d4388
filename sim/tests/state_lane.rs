//! Spec 003 §8 — one test per verification item — through the state lane's public surface
//! only: what submitted work returns, the error a refused call gets, and the state visible at
//! the moment a component method returns.
//!
//! Each property is a function of the lane's [`LaneFlaws`] (and, for contracts that belong to
//! a component rather than to the lane, of the component's shape) that runs a small world on
//! every seed of a fixed set and says how the property broke, if it did. The item's test runs
//! it on a sound lane and demands that it holds; a second test runs it with the flaw, or the
//! wrong component shape, the item exists to catch and demands that it is caught — a property
//! that cannot fail shows nothing (STYLE 12).
//!
//! The worlds judge what they observed after the run, so they emit no trace events and need
//! no checkers; a run that does not pass (a hang, a crash, an overrun budget) is itself how a
//! property breaks.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::time::Duration;

use sutra_sim_core::executor::{self as sim, sleep, yield_now};
use sutra_sim_core::sync::{oneshot, Receiver, Sender};
use sutra_sim_core::{
    simulate, Budgets, Checker, EventKind, LaneError, LaneFlaws, RunConfig, StateLane, StrategyConfig, Verdict,
};

// --- running a property ----------------------------------------------------------------------

/// Seeds every property runs on: enough interleavings for a broken lane to show, few enough
/// to keep the suite quick. Fixed, so a failing test name is its own reproducer.
const SEEDS: u64 = 16;
/// Most polls one world may take; these worlds need a few hundred.
const POLLS_MAX: u64 = 100_000;
/// Most simulated time one world may take; these worlds need well under a second.
const SIM_TIME_MAX: Duration = Duration::from_secs(60);
/// Trace events are not used here; the budget still has to be set.
const EVENTS_MAX: u64 = 1_000;
/// The async step some turns take in the middle of their work. A timer rather than a yield:
/// every other ready task runs before the turn resumes, whatever the strategy, so a lane that
/// let turns interleave is caught on every seed, not only on those whose schedule happens to
/// switch tasks there.
const IN_TURN_STEP: Duration = Duration::from_millis(1);
/// No turn here lasts more than a few milliseconds of simulated time: one open longer is a
/// deadlock hidden behind some other task's timer.
const STALL_BOUND: Duration = Duration::from_secs(1);

/// These worlds judge what they observed after the run; they emit no trace events.
#[derive(Clone, Debug, serde::Serialize)]
enum Quiet {}

impl EventKind for Quiet {
    fn name(&self) -> &'static str {
        match *self {}
    }
}

/// How a property broke on one seed.
#[derive(Debug)]
enum Broken {
    /// The run itself did not pass: a hang, a crash or an overrun budget.
    Run { seed: u64, verdict: Verdict },
    /// The run passed, but what it observed contradicts the property.
    Observed { seed: u64, what: String },
}

impl fmt::Display for Broken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Broken::Run { seed, verdict } => write!(f, "seed {seed} ({}): {verdict}", strategy(*seed).label()),
            Broken::Observed { seed, what } => write!(f, "seed {seed} ({}): {what}", strategy(*seed).label()),
        }
    }
}

/// `Ok` if the property held on every seed, else how it broke on the first seed that broke it.
type Holds = Result<(), Broken>;

/// Odd seeds schedule with PCT, which reaches the deep orderings a random walk rarely does.
fn strategy(seed: u64) -> StrategyConfig {
    if seed % 2 == 1 {
        StrategyConfig::PCT_DEFAULT
    } else {
        StrategyConfig::Random
    }
}

fn config(seed: u64) -> RunConfig {
    let mut config = RunConfig::seeded(seed);
    config.strategy = strategy(seed);
    config.budgets = Budgets { events_max: EVENTS_MAX, sim_time_max: SIM_TIME_MAX, polls_max: POLLS_MAX };
    config.stall_bound = Some(STALL_BOUND);
    config
}

fn on_every_seed(property: impl Fn(u64) -> Holds) -> Holds {
    (0..SEEDS).try_for_each(property)
}

/// Runs one world; `Err` if the run did not pass.
fn world(seed: u64, setup: impl FnOnce() + 'static) -> Holds {
    let outcome = simulate(&config(seed), Vec::<Box<dyn Checker<Quiet, ()>>>::new(), |_| setup());
    match outcome.verdict {
        Verdict::Pass => Ok(()),
        verdict => Err(Broken::Run { seed, verdict }),
    }
}

/// `Err(Observed)` unless `holds`.
fn expect(seed: u64, holds: bool, what: impl FnOnce() -> String) -> Holds {
    if holds {
        Ok(())
    } else {
        Err(Broken::Observed { seed, what: what() })
    }
}

#[track_caller]
fn assert_holds(holds: Holds) {
    if let Err(broken) = holds {
        panic!("the property broke on a sound lane: {broken}");
    }
}

/// The run passed, and what it observed contradicts the property in the way `symptom` names:
/// caught for the reason the test claims, not for some other one.
#[track_caller]
fn assert_observed_broken(holds: Holds, symptom: &str) {
    match holds {
        Err(Broken::Observed { what, .. }) => {
            assert!(what.contains(symptom), "caught, but not as {symptom:?}: {what}");
        }
        other => panic!("expected {symptom:?} observed in a passing run, got {other:?}"),
    }
}

// --- small helpers for the worlds ----------------------------------------------------------

type Shared<T> = Rc<RefCell<T>>;

fn shared<T>(value: T) -> Shared<T> {
    Rc::new(RefCell::new(value))
}

/// Spawns `work` as a task of its own; the receiver completes once it has finished.
fn spawn_tracked(name: String, work: impl Future<Output = ()> + 'static) -> Receiver<()> {
    let (done, finished) = oneshot();
    sim::spawn(name, async move {
        work.await;
        done.send(());
    });
    finished
}

async fn all_finished(tasks: Vec<Receiver<()>>) {
    for task in tasks {
        // A task that died without finishing shows up in the property's own observations.
        let _ = task.await;
    }
}

/// Awaits `future` and says whether it was ready on its first poll: "ends immediately" made
/// exact — the caller's task never waited between the call and its answer.
async fn with_first_poll<F: Future>(future: F) -> (F::Output, bool) {
    let mut future = pin!(future);
    let mut polls = 0u32;
    let output = std::future::poll_fn(|cx| {
        polls += 1;
        future.as_mut().poll(cx)
    })
    .await;
    (output, polls == 1)
}

fn current_lane_name<S: 'static>() -> Option<String> {
    StateLane::<S>::current().map(|id| id.name.to_string())
}

// --- §8 single execution and order: no lost update ---------------------------------------

/// Callers submitting concurrently, and how many read-modify-write turns each submits.
const COUNTER_CALLERS: u32 = 4;
const INCREMENTS_PER_CALLER: u32 = 5;

/// One increment, returning the value it read. The turn awaits between its read and its
/// write, as a turn doing async work on its state may: a lane, unlike a lock, has no release
/// point there, so no other turn can slip in between.
fn increment(counter: &StateLane<u64>) -> impl Future<Output = Result<u64, LaneError>> + 'static {
    let lane = counter.clone();
    counter.run(async move {
        let before = lane.with(|n| *n);
        sleep(IN_TURN_STEP).await;
        lane.with(|n| *n = before + 1);
        before
    })
}

fn concurrent_submissions_keep_every_update(flaws: LaneFlaws) -> Holds {
    on_every_seed(|seed| {
        let read_before = shared(Vec::<u64>::new());
        let errors = shared(Vec::<LaneError>::new());
        let last = shared(None::<Result<u64, LaneError>>);
        let (read_before_in, errors_in, last_in) = (read_before.clone(), errors.clone(), last.clone());
        world(seed, move || {
            let counter = StateLane::with_flaws("counter", 0u64, flaws);
            let callers = (0..COUNTER_CALLERS)
                .map(|caller| {
                    let (counter, read_before, errors) = (counter.clone(), read_before_in.clone(), errors_in.clone());
                    spawn_tracked(format!("caller{caller}"), async move {
                        for _ in 0..INCREMENTS_PER_CALLER {
                            match increment(&counter).await {
                                Ok(before) => read_before.borrow_mut().push(before),
                                Err(error) => errors.borrow_mut().push(error),
                            }
                        }
                    })
                })
                .collect();
            sim::spawn("reader", async move {
                all_finished(callers).await;
                *last_in.borrow_mut() = Some(counter.run_with(|n| *n).await);
            });
        })?;
        let total = u64::from(COUNTER_CALLERS * INCREMENTS_PER_CALLER);
        expect(seed, errors.borrow().is_empty(), || format!("submissions failed: {:?}", errors.borrow()))?;
        expect(seed, *last.borrow() == Some(Ok(total)), || {
            format!("after {total} increments the counter reads {:?}", last.borrow())
        })?;
        let mut read_before = read_before.borrow().clone();
        read_before.sort_unstable();
        expect(seed, read_before == (0..total).collect::<Vec<_>>(), || {
            format!("two increments read the same value: {read_before:?}")
        })
    })
}

#[test]
fn concurrent_submissions_lose_no_update() {
    assert_holds(concurrent_submissions_keep_every_update(LaneFlaws::default()));
}

#[test]
fn a_lane_with_concurrent_turns_loses_updates() {
    let flaws = LaneFlaws { concurrent_turns: true, ..LaneFlaws::default() };
    assert_observed_broken(concurrent_submissions_keep_every_update(flaws), "increments the counter reads");
}

// --- §8 single execution and order: FIFO ---------------------------------------------------

/// Callers submitting a mix of `run` and `try_post`, and how many items each submits.
const ORDER_CALLERS: u32 = 3;
const ITEMS_PER_CALLER: u32 = 4;
/// Items one caller posts within a single poll, so that several wait in the queue at once.
const BURST: u32 = 4;

fn work_runs_in_the_order_submitted(flaws: LaneFlaws) -> Holds {
    on_every_seed(|seed| {
        let submitted = shared(Vec::<u32>::new());
        let ran = shared(Vec::<u32>::new());
        let refused = shared(Vec::<String>::new());
        let (submitted_in, ran_in, refused_in) = (submitted.clone(), ran.clone(), refused.clone());
        world(seed, move || {
            // The lane's own state is the log of the order its turns ran in.
            let lane = StateLane::with_flaws("log", Vec::<u32>::new(), flaws);
            let mut callers: Vec<Receiver<()>> = (0..ORDER_CALLERS)
                .map(|caller| {
                    let (lane, submitted, refused) = (lane.clone(), submitted_in.clone(), refused_in.clone());
                    spawn_tracked(format!("caller{caller}"), async move {
                        for i in 0..ITEMS_PER_CALLER {
                            let item = caller * 100 + i;
                            // Submission order is the order of the calls: logged in the same
                            // poll as the call, with nothing in between.
                            submitted.borrow_mut().push(item);
                            if i % 2 == 0 {
                                let posted = lane.try_post({
                                    let lane = lane.clone();
                                    async move { lane.with(|log| log.push(item)) }
                                });
                                if !posted {
                                    refused.borrow_mut().push(format!("try_post of {item}"));
                                }
                            } else if let Err(error) = lane.run_with(move |log| log.push(item)).await {
                                refused.borrow_mut().push(format!("run of {item}: {error}"));
                            }
                            yield_now().await;
                        }
                    })
                })
                .collect();
            let (burst_lane, burst_submitted, burst_refused) = (lane.clone(), submitted_in.clone(), refused_in);
            callers.push(spawn_tracked("burst".into(), async move {
                for i in 0..BURST {
                    let item = 900 + i;
                    burst_submitted.borrow_mut().push(item);
                    let lane = burst_lane.clone();
                    if !burst_lane.try_post(async move { lane.with(|log| log.push(item)) }) {
                        burst_refused.borrow_mut().push(format!("try_post of {item}"));
                    }
                }
            }));
            sim::spawn("closer", async move {
                all_finished(callers).await;
                let closed = lane.close().await;
                *ran_in.borrow_mut() = lane.inspect(|log| log.clone());
                closed.expect("closing from outside the lane drains it");
            });
        })?;
        let (submitted, ran, refused) = (submitted.take(), ran.take(), refused.take());
        expect(seed, refused.is_empty(), || format!("submissions refused: {refused:?}"))?;
        expect(seed, ran == submitted, || format!("submitted {submitted:?} but ran {ran:?}"))
    })
}

#[test]
fn work_runs_in_submission_order() {
    assert_holds(work_runs_in_the_order_submitted(LaneFlaws::default()));
}

#[test]
fn a_lifo_lane_breaks_submission_order() {
    let flaws = LaneFlaws { lifo: true, ..LaneFlaws::default() };
    assert_observed_broken(work_runs_in_the_order_submitted(flaws), "but ran");
}

// --- §8 single execution and order: a closed lane refuses ----------------------------------

/// Items accepted before the close, which the close must still finish.
const ACCEPTED_BEFORE_CLOSE: u32 = 3;

/// What a caller got from a closed lane.
#[derive(Debug)]
struct AfterClose {
    run: Result<(), LaneError>,
    run_answered_at_once: bool,
    try_post_accepted: bool,
    close: Result<(), LaneError>,
    closed: bool,
    finished: Vec<u32>,
}

fn a_closed_lane_refuses_submissions(flaws: LaneFlaws) -> Holds {
    on_every_seed(|seed| {
        let seen = shared(None::<AfterClose>);
        let seen_in = seen.clone();
        world(seed, move || {
            let lane = StateLane::with_flaws("mailbox", Vec::<u32>::new(), flaws);
            sim::spawn("closer", async move {
                for item in 0..ACCEPTED_BEFORE_CLOSE {
                    let worker = lane.clone();
                    assert!(lane.try_post(async move { worker.with(|log| log.push(item)) }), "the lane is open");
                }
                let closing = lane.close();
                let (run, run_answered_at_once) = with_first_poll(lane.run_with(|log| log.push(100))).await;
                let worker = lane.clone();
                let try_post_accepted = lane.try_post(async move { worker.with(|log| log.push(200)) });
                let close = closing.await;
                let finished = lane.inspect(|log| log.clone());
                *seen_in.borrow_mut() = Some(AfterClose {
                    run,
                    run_answered_at_once,
                    try_post_accepted,
                    close,
                    closed: lane.is_closed(),
                    finished,
                });
            });
        })?;
        let seen = seen.borrow_mut().take();
        let Some(seen) = seen else {
            return expect(seed, false, || "the closer never finished".into());
        };
        let refused = Err(LaneError::Closed { lane: "mailbox".into() });
        expect(seed, seen.run == refused, || format!("run on a closed lane returned {:?}", seen.run))?;
        expect(seed, seen.run_answered_at_once, || "run on a closed lane did not answer at once".into())?;
        expect(seed, !seen.try_post_accepted, || "try_post on a closed lane was accepted".into())?;
        expect(seed, seen.close.is_ok() && seen.closed, || format!("close gave {:?}", seen.close))?;
        expect(seed, seen.finished == (0..ACCEPTED_BEFORE_CLOSE).collect::<Vec<_>>(), || {
            format!("close should finish exactly what was accepted before it, ran {:?}", seen.finished)
        })
    })
}

#[test]
fn a_closed_lane_refuses_run_and_try_post() {
    assert_holds(a_closed_lane_refuses_submissions(LaneFlaws::default()));
}

#[test]
fn a_lane_accepting_after_close_is_caught() {
    let flaws = LaneFlaws { accept_after_close: true, ..LaneFlaws::default() };
    assert_observed_broken(a_closed_lane_refuses_submissions(flaws), "run on a closed lane returned Ok");
}

// --- §8 reentrancy: refused at the call site -----------------------------------------------

type Sessions = BTreeMap<u32, u32>;

/// A component whose public `rebind` wrongly calls its public `unbind` from inside its own
/// turn (spec 003 §6 kind ① done wrong), reporting what that inner call got.
#[derive(Clone)]
struct Directory {
    lane: StateLane<Sessions>,
}

/// What the reentrant call inside `rebind`'s turn saw.
#[derive(Debug)]
struct Reentry {
    on_lane: bool,
    current: Option<String>,
    check: Result<(), LaneError>,
    unbound: Result<Option<u32>, LaneError>,
    answered_at_once: bool,
    time_passed: bool,
}

impl Directory {
    fn unbind(&self, actor: u32) -> impl Future<Output = Result<Option<u32>, LaneError>> + 'static {
        self.lane.run_with(move |sessions| sessions.remove(&actor))
    }

    fn rebind(&self, actor: u32, session: u32) -> impl Future<Output = Result<Reentry, LaneError>> + 'static {
        let this = self.clone();
        self.lane.run(async move {
            let on_lane = this.lane.is_on_lane();
            let current = current_lane_name::<Sessions>();
            let check = this.lane.throw_if_reentrant();
            let before = sim::now();
            let (unbound, answered_at_once) = with_first_poll(this.unbind(actor)).await;
            let time_passed = sim::now() != before;
            this.lane.with(|sessions| sessions.insert(actor, session));
            Reentry { on_lane, current, check, unbound, answered_at_once, time_passed }
        })
    }
}

/// What a caller outside any turn saw after the reentrant call was refused.
#[derive(Debug)]
struct Outside {
    rebind: Result<Reentry, LaneError>,
    on_lane: bool,
    current: Option<String>,
    check: Result<(), LaneError>,
    unbound_after: Result<Option<u32>, LaneError>,
}

fn reentrant_entry_is_refused_at_the_call_site(flaws: LaneFlaws) -> Holds {
    on_every_seed(|seed| {
        let seen = shared(None::<Outside>);
        let seen_in = seen.clone();
        world(seed, move || {
            let directory = Directory { lane: StateLane::with_flaws("directory", Sessions::new(), flaws) };
            // Other traffic on the lane, so the reentrant turn is not alone in the queue.
            let other = directory.clone();
            sim::spawn("bystander", async move {
                for actor in 10..13 {
                    let _ = other.unbind(actor).await;
                    yield_now().await;
                }
            });
            sim::spawn("caller", async move {
                let rebind = directory.rebind(1, 7).await;
                *seen_in.borrow_mut() = Some(Outside {
                    rebind,
                    on_lane: directory.lane.is_on_lane(),
                    current: current_lane_name::<Sessions>(),
                    check: directory.lane.throw_if_reentrant(),
                    unbound_after: directory.unbind(1).await,
                });
            });
        })?;
        let seen = seen.borrow_mut().take();
        let Some(seen) = seen else {
            return expect(seed, false, || "the caller never finished".into());
        };
        let refusal = LaneError::Reentrant { lane: "directory".into() };
        let inside = match &seen.rebind {
            Ok(inside) => inside,
            Err(error) => return expect(seed, false, || format!("the outer turn failed: {error}")),
        };
        expect(seed, inside.on_lane, || "inside its turn the caller is not on the lane".into())?;
        expect(seed, inside.current.as_deref() == Some("directory"), || {
            format!("inside its turn the current lane is {:?}", inside.current)
        })?;
        expect(seed, inside.check == Err(refusal.clone()), || {
            format!("throw_if_reentrant inside the turn gave {:?}", inside.check)
        })?;
        expect(seed, inside.unbound == Err(refusal.clone()), || {
            format!("the reentrant call got {:?} instead of the refusal naming the lane", inside.unbound)
        })?;
        expect(seed, inside.answered_at_once && !inside.time_passed, || {
            "the reentrant call waited before it was refused".into()
        })?;
        expect(seed, !seen.on_lane && seen.current.is_none() && seen.check.is_ok(), || {
            format!("after the turn the caller still looks on the lane: {seen:?}")
        })?;
        expect(seed, seen.unbound_after == Ok(Some(7)), || {
            format!("the lane did not go on normally after the refusal: unbind gave {:?}", seen.unbound_after)
        })
    })
}

#[test]
fn reentrant_entry_fails_at_the_call_site_instead_of_hanging() {
    assert_holds(reentrant_entry_is_refused_at_the_call_site(LaneFlaws::default()));
}

#[test]
fn a_lane_without_the_reentrancy_check_hangs_and_the_hang_names_the_lane() {
    let broken =
        reentrant_entry_is_refused_at_the_call_site(LaneFlaws { skip_reentrancy_check: true, ..LaneFlaws::default() });
    match broken {
        Err(Broken::Run { verdict: Verdict::Hang { message, .. }, .. }) => {
            assert!(message.contains("directory"), "the hang does not name the lane: {message}");
        }
        other => panic!("expected a hang naming the lane, got {other:?}"),
    }
}

// --- §8 reentrancy through another lane: A's turn -> B's turn -> A --------------------------

/// What the turn of lane `b` got when it entered lane `a`, whose turn was waiting for it.
type IndirectEntry = (Result<u32, LaneError>, bool);

/// Lane `a`'s turn calls into lane `b`; `b`'s turn calls back into `a`. `a`'s turn cannot end
/// before `b`'s, and `b`'s waits for `a`: the call into `a` must be refused right there,
/// naming `a`, and both lanes must go on normally afterwards.
fn indirect_reentry_is_refused_at_the_call_site(flaws: LaneFlaws) -> Holds {
    on_every_seed(|seed| {
        let seen = shared(None::<(Result<Result<IndirectEntry, LaneError>, LaneError>, Result<u32, LaneError>)>);
        let seen_in = seen.clone();
        world(seed, move || {
            let a = StateLane::with_flaws("a", 0u32, flaws);
            let b = StateLane::with_flaws("b", 0u32, flaws);
            sim::spawn("caller", async move {
                let (a_back, b_in) = (a.clone(), b.clone());
                let outer = a
                    .run(async move {
                        b_in.run(async move {
                            let before = sim::now();
                            let (entered, at_once) = with_first_poll(a_back.run_with(|n| {
                                *n += 1;
                                *n
                            }))
                            .await;
                            (entered, at_once && sim::now() == before)
                        })
                        .await
                    })
                    .await;
                let after = a.run_with(|n| *n).await;
                let _ = b.run_with(|n| *n).await;
                *seen_in.borrow_mut() = Some((outer, after));
            });
        })?;
        let seen = seen.borrow_mut().take();
        let Some((outer, after)) = seen else {
            return expect(seed, false, || "the caller never finished".into());
        };
        let refusal = LaneError::Reentrant { lane: "a".into() };
        expect(seed, matches!(&outer, Ok(Ok((Err(e), true))) if *e == refusal), || {
            format!("b's turn entering a (whose turn waits for b) got {outer:?}, not an immediate refusal naming a")
        })?;
        expect(seed, after == Ok(0), || format!("a did not go on normally after the refusal: {after:?}"))
    })
}

#[test]
fn indirect_reentry_through_another_lane_fails_at_the_call_site_instead_of_hanging() {
    assert_holds(indirect_reentry_is_refused_at_the_call_site(LaneFlaws::default()));
}

#[test]
fn a_lane_without_the_reentrancy_check_hangs_on_indirect_reentry_and_the_hang_names_both_lanes() {
    let broken =
        indirect_reentry_is_refused_at_the_call_site(LaneFlaws { skip_reentrancy_check: true, ..LaneFlaws::default() });
    match broken {
        Err(Broken::Run { verdict: Verdict::Hang { message, .. }, .. }) => {
            assert!(
                message.contains("a -> b") || message.contains("b -> a"),
                "the hang does not name the cycle: {message}"
            );
        }
        other => panic!("expected a hang naming the cycle, got {other:?}"),
    }
}

#[test]
fn a_wait_for_cycle_ends_the_run_at_once_though_other_tasks_are_ready() {
    let flaws = LaneFlaws { skip_reentrancy_check: true, ..LaneFlaws::default() };
    let spins = shared(0u32);
    let counter = spins.clone();
    let outcome = simulate(&config(1), Vec::<Box<dyn Checker<Quiet, ()>>>::new(), move |_| {
        let a = StateLane::with_flaws("a", 0u32, flaws);
        let b = StateLane::with_flaws("b", 0u32, flaws);
        sim::spawn("caller", async move {
            let a_back = a.clone();
            let _ = a.run(async move { b.run(async move { a_back.run_with(|n| *n += 1).await }).await }).await;
        });
        sim::spawn("spinner", async move {
            for _ in 0..10_000 {
                *counter.borrow_mut() += 1;
                yield_now().await;
            }
        });
    });
    assert!(matches!(outcome.verdict, Verdict::Hang { .. }), "{}", outcome.verdict);
    let spun = *spins.borrow();
    assert!(spun < 10_000, "the spinner ran on after the cycle was found: {spun} turns");
}

// --- §8 reentrancy: detached work ----------------------------------------------------------

/// How the long-running operation started from a turn begins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Prefix {
    /// Its first action is a genuine delay.
    Delay,
    /// It enters the lane in its synchronous prefix, before any await.
    Synchronous,
}

const PREFIXES: [Prefix; 2] = [Prefix::Delay, Prefix::Synchronous];
/// Times the retry loop enters the lane.
const RETRY_ATTEMPTS: u32 = 3;
const RETRY_DELAY: Duration = Duration::from_millis(10);

#[derive(Default)]
struct Retries {
    retrying: bool,
    attempts: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Mark {
    /// The turn that started the operation ended.
    TurnEnded,
    /// Attempt `n` of the detached operation had its turn and saw `retrying`.
    Attempt(u32, bool),
    /// An attempt to enter the lane failed.
    Refused(u32, LaneError),
    /// The detached operation believed itself on the lane before entering it.
    OnLaneBeforeEntering(u32),
}

async fn retry_loop(lane: StateLane<Retries>, prefix: Prefix, marks: Shared<Vec<Mark>>) {
    for attempt in 0..RETRY_ATTEMPTS {
        if attempt > 0 || prefix == Prefix::Delay {
            sleep(RETRY_DELAY).await;
        }
        if lane.is_on_lane() {
            marks.borrow_mut().push(Mark::OnLaneBeforeEntering(attempt));
        }
        let turn_marks = marks.clone();
        let entered = lane.run_with(move |retries| {
            retries.attempts += 1;
            turn_marks.borrow_mut().push(Mark::Attempt(attempt, retries.retrying));
        });
        if let Err(error) = entered.await {
            marks.borrow_mut().push(Mark::Refused(attempt, error));
        }
    }
}

fn detached_work_enters_after_the_turn(flaws: LaneFlaws, prefix: Prefix) -> Holds {
    on_every_seed(|seed| {
        let marks = shared(Vec::<Mark>::new());
        let marks_in = marks.clone();
        world(seed, move || {
            let lane = StateLane::with_flaws("retries", Retries::default(), flaws);
            sim::spawn("starter", async move {
                let turn_lane = lane.clone();
                let started = lane.run(async move {
                    turn_lane.with(|retries| retries.retrying = true);
                    turn_lane.start_detached("retry-loop", retry_loop(turn_lane.clone(), prefix, marks_in.clone()));
                    // The turn goes on after the start, and the detached operation's first
                    // poll comes while it is still open: a prefix that ran with the turn's
                    // marker would land inside it.
                    sleep(IN_TURN_STEP).await;
                    marks_in.borrow_mut().push(Mark::TurnEnded);
                });
                started.await.expect("the starting turn is an ordinary submission");
            });
        })?;
        let expected: Vec<Mark> = std::iter::once(Mark::TurnEnded)
            .chain((0..RETRY_ATTEMPTS).map(|attempt| Mark::Attempt(attempt, true)))
            .collect();
        let marks = marks.take();
        expect(seed, marks == expected, || format!("{prefix:?} prefix: expected {expected:?}, saw {marks:?}"))
    })
}

fn detached_work_enters_after_the_turn_for_every_prefix(flaws: LaneFlaws) -> Vec<(Prefix, Holds)> {
    PREFIXES.iter().map(|&prefix| (prefix, detached_work_enters_after_the_turn(flaws, prefix))).collect()
}

#[test]
fn detached_work_enters_the_lane_after_the_turn_without_false_reentrancy() {
    for (_, holds) in detached_work_enters_after_the_turn_for_every_prefix(LaneFlaws::default()) {
        assert_holds(holds);
    }
}

#[test]
fn a_lane_handing_its_marker_to_detached_work_raises_false_reentrancy() {
    let flaws = LaneFlaws { inherit_marker: true, ..LaneFlaws::default() };
    for (_, holds) in detached_work_enters_after_the_turn_for_every_prefix(flaws) {
        assert_observed_broken(holds, "Refused(0, Reentrant");
    }
}

// --- §8 reentrancy: external callbacks -----------------------------------------------------

/// One watch: a placeholder claimed in turn A, settled in turn B.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Watch {
    Placeholder { claim: u64 },
    Ready { claim: u64, value: u64 },
    Failed { claim: u64 },
}

#[derive(Default)]
struct WatchTable {
    watches: BTreeMap<u32, Watch>,
    /// Invariant: the number of keys in `watches`; the callback must already see it counted.
    opened: u32,
    next_claim: u64,
}

/// Where the component invokes its external callback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CallbackShape {
    /// Turn A finishes every transition and a placeholder claim, the callback runs outside
    /// the lane, turn B settles the claim (spec 003 §6 kind ③).
    Split,
    /// The callback runs inside the turn, as it once ran inside a monitor.
    InsideTheTurn,
    /// Turn A only validates; the transitions the original code finished before the callback
    /// wait for turn B.
    TransitionsDeferredToTurnB,
}

#[derive(Clone)]
struct Watches {
    lane: StateLane<WatchTable>,
    shape: CallbackShape,
}

fn claim_on_lane(table: &mut WatchTable) -> u64 {
    let claim = table.next_claim;
    table.next_claim += 1;
    claim
}

fn open_on_lane(table: &mut WatchTable, key: u32, claim: u64) {
    assert!(table.watches.insert(key, Watch::Placeholder { claim }).is_none(), "each key is opened once");
    table.opened += 1;
}

/// Replaces the placeholder with the callback's outcome, unless something replaced it since.
fn settle_on_lane(table: &mut WatchTable, key: u32, claim: u64, outcome: Result<u64, ()>) -> Option<Watch> {
    let watch = table.watches.get_mut(&key)?;
    if *watch == (Watch::Placeholder { claim }) {
        *watch = match outcome {
            Ok(value) => Watch::Ready { claim, value },
            Err(()) => Watch::Failed { claim },
        };
    }
    Some(*watch)
}

impl Watches {
    fn peek(&self, key: u32) -> impl Future<Output = Result<(Option<Watch>, u32), LaneError>> + 'static {
        self.lane.run_with(move |table| (table.watches.get(&key).copied(), table.opened))
    }

    async fn open<F, Fut>(&self, key: u32, callback: F) -> Result<Option<Watch>, LaneError>
    where
        F: FnOnce(u32) -> Fut + 'static,
        Fut: Future<Output = Result<u64, ()>> + 'static,
    {
        match self.shape {
            CallbackShape::Split => {
                let claim = self
                    .lane
                    .run_with(move |table| {
                        let claim = claim_on_lane(table);
                        open_on_lane(table, key, claim);
                        claim
                    })
                    .await?;
                let outcome = callback(key).await;
                self.lane.run_with(move |table| settle_on_lane(table, key, claim, outcome)).await
            }
            CallbackShape::InsideTheTurn => {
                let lane = self.lane.clone();
                self.lane
                    .run(async move {
                        let claim = lane.with(|table| {
                            let claim = claim_on_lane(table);
                            open_on_lane(table, key, claim);
                            claim
                        });
                        let outcome = callback(key).await;
                        lane.with(|table| settle_on_lane(table, key, claim, outcome))
                    })
                    .await
            }
            CallbackShape::TransitionsDeferredToTurnB => {
                let claim = self.lane.run_with(claim_on_lane).await?;
                let outcome = callback(key).await;
                self.lane
                    .run_with(move |table| {
                        open_on_lane(table, key, claim);
                        settle_on_lane(table, key, claim, outcome)
                    })
                    .await
            }
        }
    }
}

/// Components opening watches concurrently, one key each.
const OPENERS: u32 = 4;
/// The callback's external work: the window in which it observes the component.
const CALLBACK_LATENCY: Duration = Duration::from_millis(5);

/// What one callback saw while it ran.
#[derive(Debug)]
struct CallbackView {
    on_lane: bool,
    current: Option<String>,
    peeked: Result<(Option<Watch>, u32), LaneError>,
}

fn callbacks_run_outside_the_turn(flaws: LaneFlaws, shape: CallbackShape) -> Holds {
    on_every_seed(|seed| {
        let views = shared(BTreeMap::<u32, CallbackView>::new());
        let opened = shared(BTreeMap::<u32, Result<Option<Watch>, LaneError>>::new());
        let (views_in, opened_in) = (views.clone(), opened.clone());
        world(seed, move || {
            let watches = Watches { lane: StateLane::with_flaws("watches", WatchTable::default(), flaws), shape };
            for key in 0..OPENERS {
                let (watches, views, opened) = (watches.clone(), views_in.clone(), opened_in.clone());
                sim::spawn(format!("opener{key}"), async move {
                    let observer = watches.clone();
                    let callback = move |key: u32| async move {
                        // The callback is external code that comes back through the
                        // component's public surface, like a listener would.
                        let view = CallbackView {
                            on_lane: observer.lane.is_on_lane(),
                            current: current_lane_name::<WatchTable>(),
                            peeked: observer.peek(key).await,
                        };
                        views.borrow_mut().insert(key, view);
                        sleep(CALLBACK_LATENCY).await;
                        if key % 2 == 0 {
                            Ok(u64::from(key) * 10)
                        } else {
                            Err(())
                        }
                    };
                    let result = watches.open(key, callback).await;
                    opened.borrow_mut().insert(key, result);
                });
            }
        })?;
        for key in 0..OPENERS {
            let views = views.borrow();
            let Some(view) = views.get(&key) else {
                return expect(seed, false, || format!("the callback for {key} never ran"));
            };
            expect(seed, !view.on_lane && view.current.is_none(), || {
                format!("the callback for {key} ran inside the turn: {view:?}")
            })?;
            let counted = match view.peeked {
                Ok((Some(Watch::Placeholder { .. }), opened)) => opened >= 1,
                _ => false,
            };
            expect(seed, counted, || {
                format!("the callback for {key} did not see turn A's transitions: {:?}", view.peeked)
            })?;
            let opened = opened.borrow();
            let settled = match opened.get(&key) {
                Some(Ok(Some(Watch::Ready { value, .. }))) => key % 2 == 0 && *value == u64::from(key) * 10,
                Some(Ok(Some(Watch::Failed { .. }))) => key % 2 == 1,
                _ => false,
            };
            expect(seed, settled, || format!("turn B did not settle {key}: {:?}", opened.get(&key)))?;
        }
        Ok(())
    })
}

#[test]
fn external_callbacks_run_outside_the_turn_and_see_prior_transitions() {
    assert_holds(callbacks_run_outside_the_turn(LaneFlaws::default(), CallbackShape::Split));
}

#[test]
fn a_callback_invoked_inside_the_turn_is_refused_as_reentrant() {
    let broken = callbacks_run_outside_the_turn(LaneFlaws::default(), CallbackShape::InsideTheTurn);
    assert_observed_broken(broken, "peeked: Err(Reentrant");
}

#[test]
fn a_transition_deferred_to_turn_b_is_missed_by_the_callback() {
    let broken = callbacks_run_outside_the_turn(LaneFlaws::default(), CallbackShape::TransitionsDeferredToTurnB);
    assert_observed_broken(broken, "did not see turn A's transitions");
}

// --- §8 completion boundary: continuations run off the lane --------------------------------

/// Rounds of submit, complete inside the turn, continue and enter again.
const COMPLETION_ROUNDS: u32 = 3;

/// What a continuation saw right after a completion signalled inside a turn.
#[derive(Debug)]
struct Continuation {
    on_lane: bool,
    current: Option<String>,
    check: Result<(), LaneError>,
    entered_again: Result<u32, LaneError>,
}

impl Continuation {
    async fn observe(lane: &StateLane<u32>) -> Continuation {
        Continuation {
            on_lane: lane.is_on_lane(),
            current: current_lane_name::<u32>(),
            check: lane.throw_if_reentrant(),
            entered_again: lane.run_with(|n| *n).await,
        }
    }

    fn is_normal(&self) -> bool {
        !self.on_lane && self.current.is_none() && self.check.is_ok() && self.entered_again.is_ok()
    }
}

fn completions_signalled_in_a_turn_continue_off_the_lane(flaws: LaneFlaws) -> Holds {
    on_every_seed(|seed| {
        let continuations = shared(Vec::<(&'static str, Continuation)>::new());
        let continuations_in = continuations.clone();
        world(seed, move || {
            let lane = StateLane::with_flaws("jobs", 0u32, flaws);
            let (signals, waits): (Vec<Sender<u32>>, Vec<Receiver<u32>>) =
                (0..COMPLETION_ROUNDS).map(|_| oneshot()).unzip();
            let (waiter_lane, waiter_seen) = (lane.clone(), continuations_in.clone());
            // Completion of a signal the turn raises itself, awaited by another task.
            sim::spawn("waiter", async move {
                for wait in waits {
                    if wait.await.is_ok() {
                        let seen = Continuation::observe(&waiter_lane).await;
                        waiter_seen.borrow_mut().push(("signal", seen));
                    }
                }
            });
            // Completion of `run` itself: its result is sent from inside the turn.
            sim::spawn("caller", async move {
                for signal in signals {
                    let turn_lane = lane.clone();
                    let done = lane.run(async move {
                        let n = turn_lane.with(|n| {
                            *n += 1;
                            *n
                        });
                        signal.send(n);
                        n
                    });
                    if done.await.is_ok() {
                        let seen = Continuation::observe(&lane).await;
                        continuations_in.borrow_mut().push(("run", seen));
                    }
                }
            });
        })?;
        let continuations = continuations.take();
        for (source, seen) in &continuations {
            expect(seed, seen.is_normal(), || format!("the continuation of a {source} completion: {seen:?}"))?;
        }
        expect(seed, continuations.len() == 2 * COMPLETION_ROUNDS as usize, || {
            format!("only {} of {} continuations ran", continuations.len(), 2 * COMPLETION_ROUNDS)
        })
    })
}

#[test]
fn completion_signalled_in_a_turn_runs_its_continuation_normally() {
    assert_holds(completions_signalled_in_a_turn_continue_off_the_lane(LaneFlaws::default()));
}

#[test]
fn a_lane_completing_inside_the_turn_makes_the_continuation_reentrant() {
    let flaws = LaneFlaws { complete_inside_turn: true, ..LaneFlaws::default() };
    let broken = completions_signalled_in_a_turn_continue_off_the_lane(flaws);
    assert_observed_broken(broken, "entered_again: Err(Reentrant");
}

// --- §8 completion boundary: registration before return ------------------------------------

/// How `reserve` takes its reservation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReserveShape {
    /// Awaits the turn that takes it (spec 003 §5 `Reserve`).
    Run,
    /// Posts the turn and returns at once (spec 003 §5 `Reserve_WRONG`).
    TryPost,
}

#[derive(Clone)]
struct Reservations {
    lane: StateLane<BTreeSet<u32>>,
    shape: ReserveShape,
}

/// Proof of a reservation the component has taken.
#[derive(Debug)]
struct Reservation {
    key: u32,
}

impl Reservations {
    async fn reserve(&self, key: u32) -> Result<Reservation, LaneError> {
        match self.shape {
            ReserveShape::Run => {
                self.lane.run_with(move |taken| taken.insert(key)).await?;
            }
            ReserveShape::TryPost => {
                let lane = self.lane.clone();
                if !self.lane.try_post(async move {
                    lane.with(|taken| taken.insert(key));
                }) {
                    return Err(LaneError::Closed { lane: self.lane.name().to_string() });
                }
            }
        }
        Ok(Reservation { key })
    }
}

/// Callers reserving concurrently, one key each.
const RESERVERS: u32 = 4;

fn registration_is_done_before_return(flaws: LaneFlaws, shape: ReserveShape) -> Holds {
    on_every_seed(|seed| {
        let at_return = shared(BTreeMap::<u32, Result<bool, LaneError>>::new());
        let at_return_in = at_return.clone();
        world(seed, move || {
            let reservations =
                Reservations { lane: StateLane::with_flaws("reservations", BTreeSet::new(), flaws), shape };
            for key in 0..RESERVERS {
                let (reservations, at_return) = (reservations.clone(), at_return_in.clone());
                sim::spawn(format!("reserver{key}"), async move {
                    let reserved = reservations.reserve(key).await;
                    // The state exactly as the caller finds it when `reserve` returns: no
                    // await, and so no other task, in between.
                    let seen = reserved.map(|r| reservations.lane.inspect(|taken| taken.contains(&r.key)));
                    at_return.borrow_mut().insert(key, seen);
                });
            }
        })?;
        let at_return = at_return.borrow();
        for key in 0..RESERVERS {
            expect(seed, at_return.get(&key) == Some(&Ok(true)), || {
                format!("{shape:?}: when reserve({key}) returned, the reservation was {:?}", at_return.get(&key))
            })?;
        }
        Ok(())
    })
}

#[test]
fn registration_is_finished_when_the_method_returns() {
    assert_holds(registration_is_done_before_return(LaneFlaws::default(), ReserveShape::Run));
}

#[test]
fn a_reservation_posted_without_waiting_is_not_there_when_reserve_returns() {
    let broken = registration_is_done_before_return(LaneFlaws::default(), ReserveShape::TryPost);
    assert_observed_broken(broken, "the reservation was Some(Ok(false))");
}

// --- §8 completion boundary: waiting for the lane while holding a gate ----------------------

/// A FIFO semaphore of one permit: an operation-protocol gate (spec 003 §4) that runs one
/// external operation at a time.
#[derive(Clone, Default)]
struct Gate {
    inner: Shared<GateInner>,
}

#[derive(Default)]
struct GateInner {
    /// Invariant: false only while `waiters` is empty.
    held: bool,
    waiters: VecDeque<Sender<()>>,
}

/// The gate's one permit; dropping it hands the permit to the oldest waiter.
struct Permit {
    gate: Gate,
}

impl Gate {
    async fn acquire(&self) -> Permit {
        let wait = {
            let mut inner = self.inner.borrow_mut();
            if inner.held {
                let (handed, wait) = oneshot();
                inner.waiters.push_back(handed);
                Some(wait)
            } else {
                inner.held = true;
                None
            }
        };
        if let Some(wait) = wait {
            wait.await.expect("a gate hands its permit on and never drops a waiter");
        }
        Permit { gate: self.clone() }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut inner = self.gate.inner.borrow_mut();
        // A waiter whose task died cannot take the permit; hand it past them.
        while let Some(next) = inner.waiters.pop_front() {
            if !next.is_canceled() {
                drop(inner);
                next.send(());
                return;
            }
        }
        inner.held = false;
    }
}

/// What a lane item does about the gate its caller holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GateShape {
    /// The item settles its claim and leaves the gate alone.
    ItemLeavesTheGateAlone,
    /// The item reacquires the gate its caller holds — the first condition of spec 003 §5's
    /// blocking-compatible boundary broken.
    ItemReacquiresTheGate,
}

#[derive(Default)]
struct Routes {
    /// Invariant: strictly increasing; each claim gets its own generation.
    next_generation: u64,
    claimed: BTreeMap<u32, u64>,
}

/// A sender that serialises its external operations through a gate and claims their route
/// on a state lane while holding it.
#[derive(Clone)]
struct Transport {
    gate: Gate,
    routes: StateLane<Routes>,
    shape: GateShape,
}

/// The external operation the gate serialises.
const SEND_LATENCY: Duration = Duration::from_millis(2);

impl Transport {
    async fn send(&self, key: u32) -> Result<u64, LaneError> {
        let permit = self.gate.acquire().await;
        let (routes, gate, shape) = (self.routes.clone(), self.gate.clone(), self.shape);
        // Waiting for the lane while holding the gate is the direction spec 003 §4 allows.
        let generation = self
            .routes
            .run(async move {
                if shape == GateShape::ItemReacquiresTheGate {
                    drop(gate.acquire().await);
                }
                routes.with(|routes| {
                    let generation = routes.next_generation;
                    routes.next_generation += 1;
                    routes.claimed.insert(key, generation);
                    generation
                })
            })
            .await?;
        // The claim settled inside the turn; the long call happens outside it.
        sleep(SEND_LATENCY).await;
        drop(permit);
        Ok(generation)
    }

    /// Route reads that do not take the gate, keeping the lane busy with other turns.
    fn route(&self, key: u32) -> impl Future<Output = Result<Option<u64>, LaneError>> + 'static {
        self.routes.run_with(move |routes| routes.claimed.get(&key).copied())
    }
}

/// Senders contending for the gate, and the sends each makes.
const SENDERS: u32 = 3;
const SENDS_PER_SENDER: u32 = 3;

fn waiting_for_the_lane_under_a_gate_returns(flaws: LaneFlaws, shape: GateShape) -> Holds {
    on_every_seed(|seed| {
        let results = shared(Vec::<Result<u64, LaneError>>::new());
        let results_in = results.clone();
        world(seed, move || {
            let transport = Transport {
                gate: Gate::default(),
                routes: StateLane::with_flaws("routes", Routes::default(), flaws),
                shape,
            };
            for sender in 0..SENDERS {
                let (transport, results) = (transport.clone(), results_in.clone());
                sim::spawn(format!("sender{sender}"), async move {
                    for i in 0..SENDS_PER_SENDER {
                        let sent = transport.send(sender * 10 + i).await;
                        results.borrow_mut().push(sent);
                    }
                });
            }
            sim::spawn("router", async move {
                for key in 0..SENDERS * 10 {
                    let _ = transport.route(key).await;
                    yield_now().await;
                }
            });
        })?;
        let results = results.borrow();
        let mut generations: Vec<u64> = results.iter().filter_map(|r| r.as_ref().ok().copied()).collect();
        generations.sort_unstable();
        expect(seed, results.len() == (SENDERS * SENDS_PER_SENDER) as usize, || {
            format!("only {} sends returned", results.len())
        })?;
        expect(seed, results.iter().all(Result::is_ok), || format!("sends failed: {results:?}"))?;
        expect(seed, generations == (0..u64::from(SENDERS * SENDS_PER_SENDER)).collect::<Vec<_>>(), || {
            format!("claims shared a generation: {generations:?}")
        })
    })
}

#[test]
fn waiting_for_the_lane_while_holding_a_gate_does_not_hang() {
    assert_holds(waiting_for_the_lane_under_a_gate_returns(LaneFlaws::default(), GateShape::ItemLeavesTheGateAlone));
}

#[test]
fn a_lane_item_reacquiring_the_held_gate_hangs() {
    let broken = waiting_for_the_lane_under_a_gate_returns(LaneFlaws::default(), GateShape::ItemReacquiresTheGate);
    assert!(
        matches!(broken, Err(Broken::Run { verdict: Verdict::Hang { .. }, .. })),
        "expected a hang, got {broken:?}"
    );
}

// --- §8 cross-collection invariants --------------------------------------------------------

/// Two maps that must mirror each other (spec 003 §4's `BindingTable`, a C2 component).
#[derive(Default)]
struct Bindings {
    /// Invariant: `actor_to_session[a] == s` iff `session_to_actor[s] == a`.
    actor_to_session: BTreeMap<u32, u32>,
    session_to_actor: BTreeMap<u32, u32>,
}

#[derive(Clone)]
struct BindingTable {
    lane: StateLane<Bindings>,
}

type BothSides = (BTreeMap<u32, u32>, BTreeMap<u32, u32>);

impl BindingTable {
    /// Binds `actor` to `session`, unbinding whatever either was bound to. The turn awaits
    /// between its two writes, as a turn doing async work may; the lane, not the absence of
    /// an await, is what keeps the two maps agreeing.
    fn bind(&self, actor: u32, session: u32) -> impl Future<Output = Result<(), LaneError>> + 'static {
        let lane = self.lane.clone();
        self.lane.run(async move {
            lane.with(|b| {
                if let Some(old_session) = b.actor_to_session.remove(&actor) {
                    b.session_to_actor.remove(&old_session);
                }
                if let Some(old_actor) = b.session_to_actor.remove(&session) {
                    b.actor_to_session.remove(&old_actor);
                }
                b.actor_to_session.insert(actor, session);
            });
            sleep(IN_TURN_STEP).await;
            lane.with(|b| b.session_to_actor.insert(session, actor));
        })
    }

    /// Both maps, read in one turn.
    fn read_both(&self) -> impl Future<Output = Result<BothSides, LaneError>> + 'static {
        self.lane.run_with(|b| (b.actor_to_session.clone(), b.session_to_actor.clone()))
    }
}

/// How the two maps disagree, if they do.
fn disagreement((actor_to_session, session_to_actor): &BothSides) -> Option<String> {
    for (actor, session) in actor_to_session {
        if session_to_actor.get(session) != Some(actor) {
            return Some(format!(
                "actor {actor} -> session {session}, but session {session} -> {:?}",
                session_to_actor.get(session)
            ));
        }
    }
    for (session, actor) in session_to_actor {
        if actor_to_session.get(actor) != Some(session) {
            return Some(format!(
                "session {session} -> actor {actor}, but actor {actor} -> {:?}",
                actor_to_session.get(actor)
            ));
        }
    }
    None
}

/// Binders and readers running at once, and the calls each makes.
const BINDERS: u32 = 3;
const BINDS_PER_BINDER: u32 = 6;
const READERS: u32 = 2;
const READS_PER_READER: u32 = 8;
/// Small id spaces, so that binds collide and rebind each other's actors and sessions.
const ACTORS: u32 = 4;
const SESSIONS: u32 = 4;

fn multi_collection_updates_are_seen_whole(flaws: LaneFlaws) -> Holds {
    on_every_seed(|seed| {
        let reads = shared(Vec::<Result<BothSides, LaneError>>::new());
        let bind_errors = shared(Vec::<LaneError>::new());
        let (reads_in, bind_errors_in) = (reads.clone(), bind_errors.clone());
        world(seed, move || {
            let table = BindingTable { lane: StateLane::with_flaws("bindings", Bindings::default(), flaws) };
            let mut tasks: Vec<Receiver<()>> = (0..BINDERS)
                .map(|binder| {
                    let (table, errors) = (table.clone(), bind_errors_in.clone());
                    spawn_tracked(format!("binder{binder}"), async move {
                        for _ in 0..BINDS_PER_BINDER {
                            let (actor, session) = (sim::choose(ACTORS), sim::choose(SESSIONS));
                            if let Err(error) = table.bind(actor, session).await {
                                errors.borrow_mut().push(error);
                            }
                        }
                    })
                })
                .collect();
            for reader in 0..READERS {
                let (table, reads) = (table.clone(), reads_in.clone());
                tasks.push(spawn_tracked(format!("reader{reader}"), async move {
                    for _ in 0..READS_PER_READER {
                        let read = table.read_both().await;
                        reads.borrow_mut().push(read);
                        yield_now().await;
                    }
                }));
            }
            // One last read once everyone is done: what the table settled on.
            sim::spawn("auditor", async move {
                all_finished(tasks).await;
                let read = table.read_both().await;
                reads_in.borrow_mut().push(read);
            });
        })?;
        expect(seed, bind_errors.borrow().is_empty(), || format!("binds failed: {:?}", bind_errors.borrow()))?;
        let reads = reads.borrow();
        expect(seed, reads.len() == (READERS * READS_PER_READER + 1) as usize, || {
            format!("only {} reads returned", reads.len())
        })?;
        for read in reads.iter() {
            let both = match read {
                Ok(both) => both,
                Err(error) => return expect(seed, false, || format!("a read failed: {error}")),
            };
            if let Some(what) = disagreement(both) {
                return expect(seed, false, || format!("a reader saw the maps disagree: {what}"));
            }
        }
        Ok(())
    })
}

#[test]
fn concurrent_multi_collection_updates_are_never_seen_disagreeing() {
    assert_holds(multi_collection_updates_are_seen_whole(LaneFlaws::default()));
}

#[test]
fn a_lane_with_concurrent_turns_shows_the_collections_disagreeing() {
    let flaws = LaneFlaws { concurrent_turns: true, ..LaneFlaws::default() };
    assert_observed_broken(multi_collection_updates_are_seen_whole(flaws), "a reader saw the maps disagree");
}

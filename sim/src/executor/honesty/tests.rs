//! Each lie planted, and seen caught; and the honest environment never accused.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use serde::Serialize;

use super::{plant, Lies, SleepOrigin, BROKEN_PROMISE};
use crate::checker::Checker;
use crate::executor::{self, sleep, spawn, spawn_daemon_on, spawn_on};
use crate::node::{Node, NodeClock, NodeId, NodeStatus};
use crate::run::{simulate, RunConfig};
use crate::time::SimTime;
use crate::trace::{tag_mask, EventKind, Tracer};
use crate::verdict::Verdict;

/// A model's two kinds of event: a process's end witnessed, and anything else.
#[derive(Clone, Debug, Serialize)]
enum Witnessed {
    Crashed,
    Tick,
}

impl EventKind for Witnessed {
    fn name(&self) -> &'static str {
        match self {
            Witnessed::Crashed => "crashed",
            Witnessed::Tick => "tick",
        }
    }

    fn tag(&self) -> u8 {
        match self {
            Witnessed::Crashed => 1,
            Witnessed::Tick => 2,
        }
    }

    const NODE_END_TAGS: u64 = tag_mask(&[1]);
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn run(setup: impl FnOnce(&Tracer<Witnessed>)) -> Verdict {
    simulate(&RunConfig::seeded(3), Vec::<Box<dyn Checker<Witnessed, ()>>>::new(), setup).verdict
}

fn assert_broken(verdict: &Verdict, what: &str) {
    match verdict {
        Verdict::Crash { message } => {
            assert!(message.starts_with(BROKEN_PROMISE), "not a broken promise: {message}");
            assert!(message.contains(what), "{message:?} does not say {what:?}");
        }
        other => panic!("expected the broken promise {what:?}, got {other}"),
    }
}

/// A node that sleeps in a loop, and an injector that kills it at 5 ms, witnessing the
/// crash — on the killed node, or not at all — after `witness_after` (none: never).
fn kill_run(witness_on: Option<NodeId>, witness_after: Option<Duration>) -> Verdict {
    kill_run_witnessed_by(Witnessed::Crashed, witness_on, witness_after)
}

/// As [`kill_run`], with `witness` as the event emitted where the crash would be.
fn kill_run_witnessed_by(witness: Witnessed, witness_on: Option<NodeId>, witness_after: Option<Duration>) -> Verdict {
    run(move |tracer| {
        let replica = executor::add_node("replica", None);
        spawn_on(replica, "worker", async move {
            loop {
                sleep(ms(1)).await;
            }
        });
        let tracer = tracer.clone();
        spawn("injector", async move {
            sleep(ms(5)).await;
            executor::kill(replica);
            if let Some(after) = witness_after {
                if !after.is_zero() {
                    sleep(after).await;
                }
                tracer.emit_on(witness_on.unwrap_or(replica), witness);
            }
            tracer.emit(Witnessed::Tick);
            sleep(ms(5)).await;
        });
    })
}

#[test]
fn a_kill_witnessed_at_its_instant_is_honest() {
    assert_eq!(kill_run(None, Some(Duration::ZERO)), Verdict::Pass);
}

#[test]
fn a_kill_never_witnessed_is_caught() {
    assert_broken(&kill_run(None, None), "node replica was killed at 5.000ms");
}

#[test]
fn a_kill_witnessed_only_after_time_moved_on_is_caught() {
    assert_broken(&kill_run(None, Some(ms(1))), "no crash or stop of the process on it was witnessed");
}

#[test]
fn a_crash_witnessed_on_another_node_does_not_witness_the_kill() {
    assert_broken(&kill_run(Some(NodeId::WORLD), Some(Duration::ZERO)), "node replica was killed");
}

#[test]
fn an_event_on_the_killed_node_that_is_no_end_does_not_witness_the_kill() {
    let verdict = kill_run_witnessed_by(Witnessed::Tick, None, Some(Duration::ZERO));
    assert_broken(&verdict, "node replica was killed");
}

#[test]
fn a_stop_witnessed_by_another_task_later_in_the_same_instant_is_honest() {
    // The shape of a graceful stop: the process ends itself, and the orchestrator, woken
    // by its exit, witnesses the stop in a later poll of the same instant.
    let verdict = run(|tracer| {
        let replica = executor::add_node("replica", None);
        let (exited, stopped) = crate::sync::oneshot::<()>();
        spawn_on(replica, "shutdown", async move {
            sleep(ms(3)).await;
            exited.send(());
            executor::kill(executor::current_node());
            executor::yield_now().await;
        });
        let tracer = tracer.clone();
        spawn_daemon_on(NodeId::WORLD, "orchestrator", async move {
            if stopped.await.is_ok() {
                tracer.emit_on(replica, Witnessed::Crashed);
            }
        });
        spawn("work", sleep(ms(10)));
    });
    assert_eq!(verdict, Verdict::Pass);
}

#[test]
fn a_model_that_witnesses_no_ends_is_not_asked_to() {
    let verdict = simulate(&RunConfig::seeded(3), Vec::<Box<dyn Checker<crate::bench::BareTick, ()>>>::new(), |_| {
        let replica = executor::add_node("replica", None);
        spawn("injector", async move {
            sleep(ms(5)).await;
            executor::kill(replica);
            sleep(ms(5)).await;
        });
    })
    .verdict;
    assert_eq!(verdict, Verdict::Pass);
}

/// A node whose clock is 12 s behind simulated time sleeps 1 s, then 1 s again; what it
/// saw, by simulated time.
fn sleeps_on_a_clock_behind(lies: Lies) -> (Verdict, Vec<u64>) {
    let ends = Rc::new(RefCell::new(Vec::new()));
    let ends_in = ends.clone();
    let verdict = run(move |_| {
        plant(lies);
        let replica = executor::add_node("replica", None);
        executor::set_clock(replica, NodeClock { offset_ns: -12_000_000_000, drift_ppm: -100 });
        spawn_on(replica, "timer", async move {
            for _ in 0..2 {
                sleep(Duration::from_secs(1)).await;
                ends_in.borrow_mut().push(executor::now().as_millis());
            }
        });
    });
    let ends = ends.borrow().clone();
    (verdict, ends)
}

#[test]
fn a_sleep_on_a_clock_behind_simulated_time_keeps_its_length() {
    let (verdict, ends) = sleeps_on_a_clock_behind(Lies::default());
    assert_eq!(verdict, Verdict::Pass);
    assert_eq!(ends, vec![1_000, 2_000]);
}

#[test]
fn a_clock_behind_simulated_time_that_freezes_its_sleeps_is_caught() {
    let lie = Lies { clamped_clock_sleeps: true, ..Lies::default() };
    let (verdict, ends) = sleeps_on_a_clock_behind(lie);
    assert_broken(&verdict, "a sleep of 1s on node replica begun at 0.000ms was set to fall due at 13001.");
    assert!(ends.is_empty(), "the lie is caught before the sleep ends: {ends:?}");
}

#[test]
fn a_sleep_that_ends_before_its_length_is_caught() {
    let verdict = run(|_| {
        plant(Lies { halved_sleeps: true, ..Lies::default() });
        let replica = executor::add_node("replica", None);
        spawn_on(replica, "timer", sleep(Duration::from_secs(1)));
    });
    assert_broken(&verdict, "begun at 0.000ms ended at 500.000ms, after 500ms of simulated time, shorter than");
}

/// The bounds allow a clock's integer rounding (4 ns): a sleep that ends exactly that early
/// is honest, one that ends a nanosecond earlier is not.
#[test]
fn a_sleep_may_end_early_by_the_clocks_rounding_and_no_more() {
    let verdict = |early_ns| {
        run(move |_| {
            plant(Lies { sleeps_early_ns: early_ns, ..Lies::default() });
            let replica = executor::add_node("replica", None);
            spawn_on(replica, "timer", sleep(Duration::from_secs(1)));
        })
    };
    assert_eq!(verdict(4), Verdict::Pass);
    assert_broken(&verdict(5), "shorter than the 999999996ns its clock allows");
}

/// A clock that once ran at 2.5 times simulated time (drift 1,500,000 ppm) and then at half
/// of it: a sleep begun on the fast clock falls due late by simulated time, and its longest
/// span allowed is measured with a drift above one million ppm.
#[test]
fn a_clock_that_ran_more_than_twice_as_fast_and_then_slow_keeps_its_promise() {
    let ends = Rc::new(RefCell::new(Vec::new()));
    let ends_in = ends.clone();
    let verdict = run(move |_| {
        let replica = executor::add_node("replica", None);
        executor::set_clock(replica, NodeClock { offset_ns: 0, drift_ppm: 1_500_000 });
        spawn_on(replica, "timer", async move {
            sleep(Duration::from_secs(1)).await;
            ends_in.borrow_mut().push(executor::now().as_millis());
        });
        spawn("skew", async move {
            sleep(ms(100)).await;
            executor::set_clock(replica, NodeClock { offset_ns: 0, drift_ppm: -500_000 });
        });
    });
    assert_eq!(verdict, Verdict::Pass);
    assert_eq!(ends.borrow().len(), 1);
}

/// A node whose clock has drifted up to `drift_max_ppm` either way and stepped `steps_ns`
/// in all.
fn node_that_drifted(drift_max_ppm: u32, steps_ns: u64) -> Node {
    Node {
        name: Rc::from("replica"),
        incarnation: 0,
        status: NodeStatus::Alive,
        clock: NodeClock::EXACT,
        boot: None,
        held: Vec::new(),
        local_sleepers: Vec::new(),
        clock_steps_ns: steps_ns,
        drift_max_ppm,
    }
}

/// A sleep of 1 ms begun at 7 ns, when its node's clock had stepped 500 ns in all.
fn a_millisecond_sleep() -> SleepOrigin {
    SleepOrigin::new(&node_that_drifted(0, 500), SimTime(7), 1_000_000)
}

/// The promise's bounds, to the nanosecond: `(d − S − 4) / (1 + m)` rounded down and
/// `(d + S + 4) / (1 − m)` rounded up, `S` the steps since the sleep began.
#[test]
fn a_sleeps_bounds_allow_the_clocks_steps_since_it_began_its_rounding_and_its_largest_drift() {
    let cases = [
        ((0, 500), (999_996, 1_000_004)),
        ((0, 1_500), (998_996, 1_001_004)),
        ((250_000, 500), (799_996, 1_333_339)),
        ((250_000, 1_500), (799_196, 1_334_672)),
    ];
    for ((drift, steps), bounds) in cases {
        assert_eq!(a_millisecond_sleep().bounds(&node_that_drifted(drift, steps)), bounds, "{drift} ppm, {steps} ns");
    }
}

#[test]
fn a_sleep_may_fall_due_as_late_as_its_longest_span_and_no_later() {
    let (sleep, node) = (a_millisecond_sleep(), node_that_drifted(250_000, 1_500));
    sleep.check_deadline(SimTime(7 + 1_334_672), &node);
    let late = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        sleep.check_deadline(SimTime(7 + 1_334_673), &node);
    }));
    let message = *late.expect_err("a nanosecond later is caught").downcast::<String>().expect("a message");
    assert!(message.starts_with(BROKEN_PROMISE), "{message}");
    assert!(message.contains("after 1334673ns of simulated time, longer than the 1334672ns"), "{message}");
}

#[test]
fn a_node_paused_with_ready_tasks_that_still_runs_them_is_caught() {
    let lie = Lies { pause_leaves_ready: true, ..Lies::default() };
    let ran_while_paused = Rc::new(RefCell::new(false));
    let ran = ran_while_paused.clone();
    let verdict = run(move |_| {
        plant(lie);
        let replica = executor::add_node("replica", None);
        spawn_on(replica, "worker", async move {
            *ran.borrow_mut() = executor::node_status(executor::current_node()) != crate::NodeStatus::Alive;
        });
        // Paused before its first poll, with its worker on the ready list.
        executor::pause(replica);
        spawn("injector", async move {
            sleep(ms(5)).await;
            executor::resume(replica);
        });
    });
    assert_broken(&verdict, "task replica/worker (node paused) was polled while its node is not alive");
    assert!(!*ran_while_paused.borrow(), "caught before it ran");
}

#[test]
fn a_paused_node_runs_nothing_until_resumed() {
    let polled_at = Rc::new(RefCell::new(Vec::new()));
    let polled = polled_at.clone();
    let verdict = run(move |_| {
        let replica = executor::add_node("replica", None);
        spawn_on(replica, "worker", async move {
            for _ in 0..3 {
                polled.borrow_mut().push(executor::now().as_millis());
                sleep(ms(2)).await;
            }
        });
        executor::pause(replica);
        spawn("injector", async move {
            sleep(ms(5)).await;
            executor::resume(replica);
        });
    });
    assert_eq!(verdict, Verdict::Pass);
    assert_eq!(*polled_at.borrow(), vec![5, 7, 9]);
}

/// Sleeps on nodes whose clocks drift either way, step either way and pause, all at once:
/// the honest environment keeps every promise (no false alarm), whatever the draws.
#[test]
fn skewed_stepped_and_paused_clocks_keep_every_sleep_within_its_bounds() {
    for seed in 0..40 {
        let config = RunConfig::seeded(seed);
        let verdict = simulate(&config, Vec::<Box<dyn Checker<Witnessed, ()>>>::new(), |_| {
            let nodes: Vec<NodeId> = (0..3).map(|i| executor::add_node(format!("n{i}"), None)).collect();
            for &node in &nodes {
                spawn_on(node, "sleeper", async move {
                    for _ in 0..30 {
                        let length = 1 + u64::from(executor::choose(3_000));
                        sleep(Duration::from_micros(length * 97)).await;
                    }
                });
            }
            spawn("faults", async move {
                for _ in 0..60 {
                    sleep(Duration::from_micros(1 + u64::from(executor::choose(20_000)))).await;
                    let node = nodes[executor::choose(3) as usize];
                    match executor::choose(4) {
                        0 => {
                            let offset_ns = i64::from(executor::choose(40_000_001)) - 20_000_000;
                            let drift_ppm = executor::choose(2_001) as i32 - 1_000;
                            executor::set_clock(node, NodeClock { offset_ns, drift_ppm });
                        }
                        1 => executor::set_clock(node, NodeClock::EXACT),
                        2 => executor::pause(node),
                        _ => executor::resume(node),
                    }
                }
                for node in nodes {
                    executor::resume(node);
                }
            });
        })
        .verdict;
        assert_eq!(verdict, Verdict::Pass, "seed {seed}");
    }
}

//! How runs end, and that no bad ending passes for a good one: hangs name the stuck tasks,
//! each budget overrun names its budget, odd tapes replay without crashing, and the
//! determinism self-check names the first event where two runs of one seed part.

use std::cell::Cell;
use std::task::Poll;
use std::time::Duration;

use sutra_sim_core::entropy::Stream;
use sutra_sim_core::executor::{self as sim, sleep, yield_now};
use sutra_sim_core::lane::StateLane;
use sutra_sim_core::sync::oneshot;
use sutra_sim_core::{
    check_determinism, simulate, Budget, Checker, EntropyMode, EventKind, Outcome, RunConfig, StrategyConfig, Tape,
    Tracer, Verdict,
};

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
enum Ev {
    Step(u32, u32),
    Helped(u32),
    Seen(u32),
}

impl EventKind for Ev {
    fn name(&self) -> &'static str {
        match self {
            Ev::Step(..) => "step",
            Ev::Helped(_) => "helped",
            Ev::Seen(_) => "seen",
        }
    }
}

fn no_checkers<V>() -> Vec<Box<dyn Checker<Ev, V>>> {
    Vec::new()
}

// --- hangs ------------------------------------------------------------------------------

#[test]
fn a_task_waiting_for_a_message_no_one_sends_is_a_hang_that_names_it() {
    let out = simulate(&RunConfig::seeded(1), no_checkers(), |_| {
        let replica = sim::add_node("replica", None);
        // The senders live in the view, so the receivers wait rather than see `Canceled`.
        let (never, waited) = oneshot::<()>();
        sim::spawn_on(replica, "waiter", async move {
            let _ = waited.await;
        });
        // A daemon stuck the same way neither keeps the run alive nor is named.
        let (never_either, daemon_waited) = oneshot::<()>();
        sim::spawn_daemon_on(replica, "poller", async move {
            let _ = daemon_waited.await;
        });
        sim::spawn("finisher", async {
            sleep(Duration::from_millis(5)).await;
        });
        (never, never_either)
    });
    match out.verdict {
        Verdict::Hang { message, stuck } => {
            assert_eq!(stuck, vec!["replica/waiter".to_string()]);
            assert!(message.contains("nothing ready and no timer"), "{message}");
        }
        other => panic!("expected a hang, got {other}"),
    }
    assert_eq!(out.sim_time.as_millis(), 5, "the hang is found as soon as the last timer fired");
}

#[test]
fn a_hang_behind_a_periodic_daemon_is_not_a_hang_by_itself_but_never_a_pass() {
    // A periodic role keeps a timer set forever, so "nothing ready and no timer" never holds:
    // the executor cannot know the daemon will not, some tick, send the message. DESIGN §3
    // catches the deadlocks that matter here by the lane stall bound and wait-for cycles;
    // any other such hang runs into the time budget, which is a failure too.
    let mut config = RunConfig::seeded(1);
    config.budgets.sim_time_max = Duration::from_secs(1);
    let out = simulate(&config, no_checkers(), |_| {
        let (never, waited) = oneshot::<()>();
        sim::spawn("waiter", async move {
            let _ = waited.await;
        });
        sim::spawn_daemon_on(sim::current_node(), "sweeper", async {
            loop {
                sleep(Duration::from_millis(10)).await;
            }
        });
        never
    });
    assert!(!out.verdict.is_pass());
    assert!(matches!(out.verdict, Verdict::BudgetExceeded { budget: Budget::SimTime, .. }), "{}", out.verdict);
}

#[test]
fn the_timer_of_a_killed_task_does_not_hide_a_hang() {
    // The killed task's two-hour sleep is no timer: time must not jump to it (and spend
    // the one-hour budget) while the waiter can never run again.
    let mut config = RunConfig::seeded(1);
    config.budgets.sim_time_max = Duration::from_secs(3_600);
    let out = simulate(&config, no_checkers(), |_| {
        let replica = sim::add_node("replica", None);
        sim::spawn_on(replica, "sleeper", async {
            sleep(Duration::from_secs(7_200)).await;
        });
        let (never, waited) = oneshot::<()>();
        sim::spawn("waiter", async move {
            let _ = waited.await;
        });
        sim::spawn("killer", async move {
            sleep(Duration::from_millis(1)).await;
            sim::kill(replica);
        });
        never
    });
    assert!(
        matches!(&out.verdict, Verdict::Hang { stuck, .. } if stuck == &["world/waiter".to_string()]),
        "{}",
        out.verdict
    );
    assert_eq!(out.sim_time.as_millis(), 1);
}

/// Two lanes whose turns sleep for `first_ms` and `second_ms`: the second-registered lane's
/// turn starts first. With a stall bound of 100 ms, returns how the run ended.
fn lane_turns_sleeping(first_ms: u64, second_ms: u64) -> Outcome<Ev> {
    let mut config = RunConfig::seeded(1);
    config.stall_bound = Some(Duration::from_millis(100));
    simulate(&config, no_checkers(), |_| {
        let a = StateLane::new("lane-a", ());
        let b = StateLane::new("lane-b", ());
        sim::spawn("holds-b", async move {
            let _ = b.run(sleep(Duration::from_millis(second_ms))).await;
        });
        sim::spawn("holds-a", async move {
            sleep(Duration::from_millis(10)).await;
            let _ = a.run(sleep(Duration::from_millis(first_ms))).await;
        });
    })
}

#[test]
fn a_lane_turn_held_past_the_stall_bound_is_a_hang_naming_the_lane() {
    // A deadlock hidden behind timers: the turn never ends, but time goes on.
    match lane_turns_sleeping(10, 3_600_000).verdict {
        Verdict::Hang { message, stuck } => {
            assert!(message.contains("lane lane-b has held one turn"), "{message}");
            assert_eq!(stuck, vec!["world/lane:lane-b".to_string()]);
        }
        other => panic!("expected a hang, got {other}"),
    }
}

#[test]
fn stalled_lanes_are_named_in_registration_order_whichever_turn_began_first() {
    // lane-b's turn began first, but both are past the bound when it is checked; the
    // message names the first registered, and both holders are listed.
    match lane_turns_sleeping(3_600_000, 3_600_000).verdict {
        Verdict::Hang { message, stuck } => {
            assert!(message.contains("lane lane-a has held one turn"), "{message}");
            assert_eq!(stuck, vec!["world/lane:lane-a".to_string(), "world/lane:lane-b".to_string()]);
        }
        other => panic!("expected a hang, got {other}"),
    }
}

#[test]
fn lane_turns_shorter_than_the_stall_bound_pass() {
    let out = lane_turns_sleeping(90, 95);
    assert!(out.verdict.is_pass(), "{}", out.verdict);
}

#[test]
fn a_task_that_wakes_itself_and_then_ends_is_a_pass_not_a_crash() {
    // Its id was queued by its own wake; ending must take it off the ready list.
    let out = simulate(&RunConfig::seeded(1), no_checkers::<()>(), |_| {
        sim::spawn("self-waker", async {
            std::future::poll_fn(|cx| {
                cx.waker().wake_by_ref();
                Poll::Ready(())
            })
            .await;
        });
        sim::spawn("other", async {
            yield_now().await;
        });
    });
    assert_eq!(out.verdict, Verdict::Pass);
}

// --- budgets ----------------------------------------------------------------------------

fn assert_budget(out: &Outcome<Ev>, budget: Budget, says: &str) {
    match &out.verdict {
        Verdict::BudgetExceeded { budget: b, message } => {
            assert_eq!(*b, budget);
            assert!(message.contains(says), "{message:?} should mention {says:?}");
        }
        other => panic!("expected a {budget:?} budget overrun, got {other}"),
    }
    assert_eq!(out.verdict.class(), "budget");
}

#[test]
fn more_events_than_the_budget_is_an_events_overrun() {
    let mut config = RunConfig::seeded(1);
    config.budgets.events_max = 10;
    let out = simulate(&config, no_checkers::<()>(), |tracer| {
        let tracer = tracer.clone();
        sim::spawn("chatty", async move {
            for i in 0..100 {
                tracer.emit(Ev::Step(0, i));
                yield_now().await;
            }
        });
    });
    assert_budget(&out, Budget::Events, "more than 10 events");
    assert_eq!(out.events, 11, "the run stops at the first event past the budget");
}

#[test]
fn more_simulated_time_than_the_budget_is_a_time_overrun() {
    let mut config = RunConfig::seeded(1);
    config.budgets.sim_time_max = Duration::from_secs(3_600);
    let out = simulate(&config, no_checkers::<()>(), |_| {
        sim::spawn("sleepy", async {
            sleep(Duration::from_secs(7_200)).await;
        });
    });
    assert_budget(&out, Budget::SimTime, "simulated time passed 1h");
}

#[test]
fn a_spin_that_emits_nothing_is_a_polls_overrun() {
    let mut config = RunConfig::seeded(1);
    config.budgets.polls_max = 1_000;
    let out = simulate(&config, no_checkers::<()>(), |_| {
        sim::spawn("spinner", async {
            loop {
                yield_now().await;
            }
        });
    });
    assert_budget(&out, Budget::Polls, "more than 1000 polls");
    assert_eq!(out.polls, 1_001);
}

// --- odd tapes --------------------------------------------------------------------------

/// A world that draws in every way a model does: schedule picks, delays, branches, chances
/// and tasks spawned on the way. Bounded whatever the draws, so any tape finishes.
fn busy_world(tracer: &Tracer<Ev>) {
    for t in 0..4u32 {
        let tracer = tracer.clone();
        sim::spawn(format!("worker{t}"), async move {
            for i in 0..20 {
                match sim::choose(3) {
                    0 => yield_now().await,
                    1 => sleep(Duration::from_millis(u64::from(sim::choose(50)))).await,
                    _ => {
                        if sim::chance_in(Stream::MODEL, 1, 4) {
                            let tracer = tracer.clone();
                            sim::spawn(format!("helper{t}.{i}"), async move {
                                yield_now().await;
                                tracer.emit(Ev::Helped(t));
                            });
                        }
                    }
                }
                tracer.emit(Ev::Step(t, i));
            }
        });
    }
}

fn replay(tape: &Tape, strategy: StrategyConfig) -> Outcome<Ev> {
    let mut config = RunConfig::seeded(0);
    config.entropy = EntropyMode::Tape(tape.clone());
    config.strategy = strategy;
    simulate(&config, no_checkers::<()>(), busy_world)
}

#[test]
fn truncated_zeroed_empty_and_garbage_tapes_replay_the_same_way_twice() {
    for strategy in [StrategyConfig::Random, StrategyConfig::Pct { depth: 3, horizon: 100 }] {
        let mut config = RunConfig::seeded(42);
        config.strategy = strategy;
        let recorded = simulate(&config, no_checkers::<()>(), busy_world).tape;
        assert!(recorded.len() > 20, "the world draws");
        let tapes = [
            ("truncated", Tape(recorded.0[..recorded.len() / 2].to_vec())),
            ("all zeros", Tape(vec![0; recorded.len()])),
            ("empty", Tape(Vec::new())),
            ("out of range", Tape(vec![u32::MAX; recorded.len()])),
        ];
        for (name, tape) in tapes {
            let first = replay(&tape, strategy);
            let second = replay(&tape, strategy);
            let what = format!("{name} tape under {}", strategy.label());
            assert_eq!(first.verdict, Verdict::Pass, "{what}");
            assert_eq!(first.fingerprint, second.fingerprint, "{what}");
            assert_eq!(first.tape, second.tape, "{what}");
            assert_eq!(first.events, second.events, "{what}");
            let (read, len) = first.replay_position.expect("a replay reports its position");
            assert_eq!(len, tape.len(), "{what}");
            assert_eq!(read, first.tape.len(), "{what}: every draw reads one entry, past the end too");
            if tape.is_empty() {
                assert!(read > len, "{what}: the run draws past the end, where every draw is 0");
            }
            // What the run actually used replays to the very same run.
            assert_eq!(replay(&first.tape, strategy).fingerprint, first.fingerprint, "{what}");
        }
        // Zeros are the simplest run: a tape of zeros and no tape at all are the same run.
        assert_eq!(replay(&Tape(Vec::new()), strategy).fingerprint, replay(&Tape(vec![0; 7]), strategy).fingerprint);
    }
}

// --- the determinism self-check -------------------------------------------------------------

#[test]
fn the_self_check_passes_a_deterministic_world_with_its_fingerprint() {
    let config = RunConfig::seeded(7);
    let fingerprint = check_determinism(&config, no_checkers::<()>, busy_world).expect("the world is deterministic");
    assert_eq!(fingerprint, simulate(&config, no_checkers::<()>(), busy_world).fingerprint);
}

thread_local! {
    /// State that outlives a run: the classic way a model becomes nondeterministic.
    static RUNS_SO_FAR: Cell<u32> = const { Cell::new(0) };
}

#[test]
fn the_self_check_names_the_first_event_that_differs() {
    let divergence = check_determinism(&RunConfig::seeded(7), no_checkers::<()>, |tracer| {
        let runs = RUNS_SO_FAR.with(|r| {
            r.set(r.get() + 1);
            r.get()
        });
        let tracer = tracer.clone();
        sim::spawn("reader", async move {
            for i in 0..3 {
                tracer.emit(Ev::Step(0, i));
                yield_now().await;
            }
            tracer.emit(Ev::Seen(runs));
            tracer.emit(Ev::Step(0, 3));
        });
    })
    .expect_err("the world leaks state between runs");
    assert_eq!(divergence.seq, 3, "{divergence}");
    assert!(divergence.first.as_deref().is_some_and(|e| e.contains("Seen(")), "{divergence}");
    assert_ne!(divergence.first, divergence.second);
    assert!(divergence.to_string().contains("diverge at event 3"));
}

#[test]
fn the_self_check_catches_a_divergence_no_event_shows() {
    // Same events, different schedule: the leaked state only changes how many silent tasks
    // run, which shows in the polls and the tape.
    let divergence = check_determinism(&RunConfig::seeded(7), no_checkers::<()>, |tracer| {
        let runs = RUNS_SO_FAR.with(|r| {
            r.set(r.get() + 1);
            r.get()
        });
        for i in 0..runs {
            sim::spawn(format!("silent{i}"), async {
                yield_now().await;
            });
        }
        let tracer = tracer.clone();
        sim::spawn("talker", async move {
            tracer.emit(Ev::Step(0, 0));
        });
    })
    .expect_err("the schedule differs between runs");
    assert_eq!(divergence.seq, 1, "placed just past the last event: {divergence}");
    let first = divergence.first.expect("described");
    assert!(first.contains("polls") && first.contains("draws"), "{first}");
}

#[test]
fn the_self_check_catches_runs_that_differ_in_polls_alone() {
    // One task, so no scheduling choice is drawn: the leaked state changes only how often it
    // is polled, not its events, its draws or where simulated time ends.
    let divergence = check_determinism(&RunConfig::seeded(7), no_checkers::<()>, |tracer| {
        let runs = RUNS_SO_FAR.with(|r| {
            r.set(r.get() + 1);
            r.get()
        });
        let tracer = tracer.clone();
        sim::spawn("only", async move {
            for _ in 0..runs {
                yield_now().await;
            }
            tracer.emit(Ev::Step(0, 0));
        });
    })
    .expect_err("the polls differ between runs");
    let first = divergence.first.expect("described");
    assert!(first.contains("polls"), "{first}");
    assert!(first.ends_with(", 0 draws"), "the tapes agree, so no draw is named: {first}");
}

#[test]
fn the_self_check_names_the_draw_one_run_made_past_the_others_tape() {
    // Same events; the leaked state adds a third draw to every other run, so the tapes
    // agree on their first two draws and part where the shorter ends.
    let divergence = check_determinism(&RunConfig::seeded(7), no_checkers::<()>, |tracer| {
        let runs = RUNS_SO_FAR.with(|r| {
            r.set(r.get() + 1);
            r.get()
        });
        let tracer = tracer.clone();
        sim::spawn("drawer", async move {
            for _ in 0..2 + runs % 2 {
                let _ = sim::choose(1_000);
            }
            tracer.emit(Ev::Step(0, 0));
        });
    })
    .expect_err("the draws differ between runs");
    let ends = [divergence.first.expect("described"), divergence.second.expect("described")];
    assert!(ends.iter().all(|end| end.contains(" draws, the first to differ being #2 = ")), "{ends:?}");
}

#[test]
fn the_self_check_names_the_first_draw_that_differs() {
    // Same events, same number of draws: the leaked state changes only the range of the
    // third draw, so the tapes part at draw #2 and agree before it.
    let divergence = check_determinism(&RunConfig::seeded(7), no_checkers::<()>, |tracer| {
        let runs = RUNS_SO_FAR.with(|r| {
            r.set(r.get() + 1);
            r.get()
        });
        let tracer = tracer.clone();
        sim::spawn("drawer", async move {
            let _ = sim::choose(1_000);
            let _ = sim::choose(1_000);
            let _ = sim::choose(if runs % 2 == 1 { 2 } else { 1_000_000 });
            tracer.emit(Ev::Step(0, 0));
        });
    })
    .expect_err("the draws differ between runs");
    let first = divergence.first.expect("described");
    assert!(first.contains("3 draws, the first to differ being #2"), "{first}");
}

#[test]
fn a_turn_exactly_as_old_as_the_stall_bound_is_not_yet_stalled() {
    // lane-b's turn starts at 0, lane-a's at 10 ms, both for an hour; the first instant past
    // the 100 ms bound is 110 ms (a ticker's wake), when lane-b's turn is 110 ms old and
    // lane-a's exactly 100: only lane-b is named.
    let mut config = RunConfig::seeded(1);
    config.stall_bound = Some(Duration::from_millis(100));
    let out = simulate(&config, no_checkers(), |_| {
        let a = StateLane::new("lane-a", ());
        let b = StateLane::new("lane-b", ());
        sim::spawn("holds-b", async move {
            let _ = b.run(sleep(Duration::from_secs(3_600))).await;
        });
        sim::spawn("holds-a", async move {
            sleep(Duration::from_millis(10)).await;
            let _ = a.run(sleep(Duration::from_secs(3_600))).await;
        });
        sim::spawn("ticks-at-110ms", async {
            sleep(Duration::from_millis(110)).await;
        });
    });
    assert_eq!(out.sim_time.as_millis(), 110);
    match out.verdict {
        Verdict::Hang { message, stuck } => {
            assert!(message.contains("lane lane-b has held one turn"), "{message}");
            assert_eq!(stuck, vec!["world/lane:lane-b".to_string()]);
        }
        other => panic!("expected a hang, got {other}"),
    }
}

#[test]
fn a_verdict_names_the_checker_that_failed_or_its_class() {
    let violation = Verdict::Violation { checker: "no-double-resume".into(), message: "m".into() };
    assert_eq!(violation.checker(), Some("no-double-resume"));
    assert_eq!(violation.to_string(), "violation of no-double-resume: m");
    assert_eq!(Verdict::Crash { message: "boom".into() }.to_string(), "crash: boom");
    assert_eq!(Verdict::Crash { message: "boom".into() }.checker(), Some("crash"));
    assert_eq!(Verdict::Pass.checker(), None);
}

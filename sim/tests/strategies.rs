//! The strategies earn their keep: PCT finds a depth-2 ordering bug that a uniform random
//! walk almost never reaches.
//!
//! The bug (a hand-made one, so that we know exactly what finds it): task A opens a window
//! (`a1`), takes `A_STEPS` more steps, and closes it (`a2`); task B takes `B_STEPS` steps
//! and then acts (`b`). The run is wrong if `b` lands inside A's window. That needs two
//! ordering constraints — `a1` before `b` and `b` before `a2` — and B's act comes late in
//! B's life while A's window is early and short in A's. A random walk interleaves A and B
//! step by step, so B would have to win some `B_STEPS` coin flips before A wins `A_STEPS`:
//! hopeless. PCT runs one task at a time in priority order, and one priority change point
//! (depth 2) that falls inside A's window parks A until B is done, which happens with
//! probability about ½ (A above B) × `A_STEPS` / horizon.

use std::time::Instant;

use sutra_sim_core::executor::{self as sim, yield_now};
use sutra_sim_core::{
    simulate, Check, Checker, CheckerKind, EntropyMode, Event, EventKind, Outcome, RunConfig, StrategyConfig, Verdict,
};

/// Steps A takes between opening and closing its window.
const A_STEPS: u32 = 30;
/// Steps B takes before it acts.
const B_STEPS: u32 = 60;
/// Tasks that only yield, so that neither strategy sees A and B alone.
const NOISE_TASKS: u32 = 3;
/// Steps each noise task takes.
const NOISE_STEPS: u32 = 10;
/// Scheduling steps PCT spreads its change points over: about the whole run.
const HORIZON: u32 = A_STEPS + B_STEPS + NOISE_TASKS * NOISE_STEPS;
/// Seeds per strategy.
const SEEDS: u64 = 500;
/// PCT's bound for this bug is about ½ × A_STEPS / HORIZON = 12.5% at depth 2; leave room
/// below it, but far above anything a random walk reaches.
const PCT_FLOOR: f64 = 0.05;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
enum Ev {
    /// A opened its window.
    WindowOpened,
    /// A closed its window.
    WindowClosed,
    /// B acted.
    Acted,
}

impl EventKind for Ev {
    fn name(&self) -> &'static str {
        match self {
            Ev::WindowOpened => "window-opened",
            Ev::WindowClosed => "window-closed",
            Ev::Acted => "acted",
        }
    }
}

/// Fails when B acts while A's window is open.
#[derive(Default)]
struct NotInsideTheWindow {
    open: bool,
}

impl Checker<Ev, ()> for NotInsideTheWindow {
    fn name(&self) -> &str {
        "not-inside-the-window"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<Ev>, _: &()) -> Check {
        match event.kind {
            Ev::WindowOpened => self.open = true,
            Ev::WindowClosed => self.open = false,
            Ev::Acted if self.open => return Check::Fail(format!("B acted inside A's window at {}", event.time)),
            Ev::Acted => {}
        }
        Check::Ok
    }
}

fn run(seed: u64, strategy: StrategyConfig) -> Verdict {
    let mut config = RunConfig::seeded(seed);
    config.strategy = strategy;
    outcome(&config).verdict
}

/// One run of the program under `config`.
fn outcome(config: &RunConfig) -> Outcome<Ev> {
    let checkers: Vec<Box<dyn Checker<Ev, ()>>> = vec![Box::new(NotInsideTheWindow::default())];
    simulate(config, checkers, |tracer| {
        let a = tracer.clone();
        sim::spawn("a", async move {
            a.emit(Ev::WindowOpened);
            for _ in 0..A_STEPS {
                yield_now().await;
            }
            a.emit(Ev::WindowClosed);
        });
        let b = tracer.clone();
        sim::spawn("b", async move {
            for _ in 0..B_STEPS {
                yield_now().await;
            }
            b.emit(Ev::Acted);
        });
        for i in 0..NOISE_TASKS {
            sim::spawn(format!("noise{i}"), async {
                for _ in 0..NOISE_STEPS {
                    yield_now().await;
                }
            });
        }
    })
}

/// Fraction of seeds `0..SEEDS` in which the bug was found.
fn hit_rate(strategy: StrategyConfig) -> f64 {
    let mut hits = 0;
    for seed in 0..SEEDS {
        match run(seed, strategy) {
            Verdict::Violation { checker, .. } => {
                assert_eq!(checker, "not-inside-the-window");
                hits += 1;
            }
            Verdict::Pass => {}
            other => panic!("seed {seed} under {}: unexpected verdict {other}", strategy.label()),
        }
    }
    hits as f64 / SEEDS as f64
}

#[test]
fn pct_finds_a_depth_two_ordering_bug_far_more_often_than_a_random_walk() {
    let start = Instant::now();
    let random = hit_rate(StrategyConfig::Random);
    let pct2 = hit_rate(StrategyConfig::Pct { depth: 2, horizon: HORIZON });
    let pct3 = hit_rate(StrategyConfig::Pct { depth: 3, horizon: HORIZON });
    println!(
        "depth-2 bug over {SEEDS} seeds: random {:.1}%, pct:2:{HORIZON} {:.1}%, pct:3:{HORIZON} {:.1}% ({:.2?})",
        random * 100.0,
        pct2 * 100.0,
        pct3 * 100.0,
        start.elapsed()
    );
    for (label, pct) in [("pct:2", pct2), ("pct:3", pct3)] {
        assert!(pct >= PCT_FLOOR, "{label} found the bug in only {:.1}% of seeds", pct * 100.0);
        assert!(pct >= 3.0 * random, "{label} ({pct}) is not far above random ({random})");
    }
    assert!(random < 0.01, "the bug was meant to be out of a random walk's reach, yet it hit {random}");
}

#[test]
fn the_checker_fires_and_a_failing_seed_fails_again() {
    // Guards the test above against a checker that cannot fire: some PCT seed finds the
    // bug, and running that seed again finds it again.
    let strategy = StrategyConfig::Pct { depth: 2, horizon: HORIZON };
    let seed = (0..SEEDS).find(|&seed| !run(seed, strategy).is_pass()).expect("some seed finds the bug");
    assert!(matches!(run(seed, strategy), Verdict::Violation { .. }));
}

#[test]
fn a_run_that_turns_from_the_random_walk_to_pct_early_finds_the_bug_like_pct() {
    // Exploration's children switch strategy at their branch point; switched a few draws
    // in, before A's window opens, PCT's priorities (given to the live tasks at the switch)
    // and its change point do the work.
    let switched = StrategyConfig::RandomThenPct { at: 2, depth: 2, horizon: HORIZON };
    let rate = hit_rate(switched);
    assert!(rate >= PCT_FLOOR, "{} found the bug in only {:.1}% of seeds", switched.label(), rate * 100.0);
    // And the other way: PCT until the start, the random walk after it, misses it like the
    // random walk does.
    let back = StrategyConfig::PctThenRandom { depth: 2, horizon: HORIZON, at: 0 };
    assert!(hit_rate(back) < 0.01, "{} behaves like the random walk", back.label());
}

#[test]
fn a_switched_run_is_the_plain_run_up_to_its_switch_and_its_tape_replays_it() {
    let mut differ = 0;
    for seed in 0..20 {
        let plain = outcome(&RunConfig::seeded(seed));
        let at = (plain.tape.len() / 2) as u32;
        let switched = StrategyConfig::RandomThenPct { at, depth: 2, horizon: HORIZON };
        let config = RunConfig { strategy: switched, ..RunConfig::seeded(seed) };
        let first = outcome(&config);
        // The schedule is the random walk's until the switch: the same draws.
        let n = at as usize;
        assert_eq!(plain.tape.0[..n], first.tape.0[..n], "seed {seed}: the same draws before the switch");
        // The switch is made by tape position, so the recorded tape replays the run.
        let again = outcome(&RunConfig { entropy: EntropyMode::Tape(first.tape.clone()), ..config });
        assert_eq!(again.fingerprint, first.fingerprint, "seed {seed}: the switched run replays");
        assert_eq!(again.verdict, first.verdict);
        differ += usize::from(first.tape != plain.tape);
    }
    assert!(differ > 10, "after the switch the schedule is PCT's, not the walk's: {differ} of 20 differ");
}

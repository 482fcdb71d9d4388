//! PCT keeps the guarantee of Burckhardt et al. (ASPLOS 2010) on small programs with the
//! default settings: a bug of depth d in a program of n tasks and k scheduling steps is
//! found with probability at least 1/(n·k^(d−1)) per run.
//!
//! The default `pct` fits its horizon to the program's observed run lengths
//! ([`fit_horizon`], as Coyote and P do): a few calibration runs under the random walk
//! measure k. With the old fixed horizon of 2,000 steps, change points on a program of
//! 20–50 steps mostly fall after its end, and the depth-2 rate dropped under the bound.
//!
//! The programs: n tasks (3–5) of m steps each, every step an event and a yield, so k =
//! n·(m+1) is 20–50. Depth 1: task 1's last step comes before task 0's first (one ordering
//! constraint). Depth 2: task 1's first step falls between task 0's middle steps j and
//! j+1 (two). Statistical but deterministic: fixed seeds, enough runs that the bound is
//! met with room, and a margin.

use sutra_sim_core::executor::{self as sim, yield_now};
use sutra_sim_core::strategy::fit_horizon;
use sutra_sim_core::{simulate, Checker, EntropyMode, EventKind, RunConfig, StrategyConfig};

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
struct Step(u32, u32);

impl EventKind for Step {
    fn name(&self) -> &'static str {
        "step"
    }
}

/// Runs the program of `tasks` tasks of `steps` steps once; (polls, depth-1 bug, depth-2 bug).
fn run(tasks: u32, steps: u32, seed: u64, strategy: StrategyConfig) -> (u64, bool, bool) {
    let config = RunConfig { entropy: EntropyMode::Seed(seed), strategy, keep_trace: true, ..RunConfig::seeded(0) };
    let out = simulate(&config, Vec::<Box<dyn Checker<Step, ()>>>::new(), |tracer| {
        for t in 0..tasks {
            let tracer = tracer.clone();
            sim::spawn(format!("t{t}"), async move {
                for s in 0..steps {
                    tracer.emit(Step(t, s));
                    yield_now().await;
                }
            });
        }
    });
    assert!(out.verdict.is_pass());
    let at = |step: Step| out.trace.iter().position(|e| e.kind == step).expect("every step runs");
    let depth1 = at(Step(1, steps - 1)) < at(Step(0, 0));
    let j = steps / 2 - 1;
    let first = at(Step(1, 0));
    let depth2 = at(Step(0, j)) < first && first < at(Step(0, j + 1));
    (out.polls, depth1, depth2)
}

/// PCT of `depth` with the default horizon, fitted to a few random-walk runs of the program.
fn fitted(depth: u32, tasks: u32, steps: u32) -> StrategyConfig {
    StrategyConfig::Pct { depth, horizon: StrategyConfig::AUTO_HORIZON }
        .with_fitted_horizon(|| fit_horizon((0..4).map(|seed| run(tasks, steps, seed, StrategyConfig::Random).0)))
}

/// Rates of the depth-1 and depth-2 bugs over `trials` seeds, and k.
fn rates(tasks: u32, steps: u32, strategy: StrategyConfig, trials: u64) -> (f64, f64, u64) {
    let (mut d1, mut d2, mut k) = (0u64, 0u64, 0u64);
    for seed in 1_000..1_000 + trials {
        let (polls, a, b) = run(tasks, steps, seed, strategy);
        k = k.max(polls);
        d1 += u64::from(a);
        d2 += u64::from(b);
    }
    (d1 as f64 / trials as f64, d2 as f64 / trials as f64, k)
}

/// Programs of 3–5 tasks and 20–50 steps: (tasks, steps per task).
const PROGRAMS: [(u32, u32); 5] = [(3, 6), (4, 4), (3, 15), (4, 9), (5, 9)];

/// Runs per program: the smallest depth-2 bound here is 1/250, so some 24 finds at the bound.
const TRIALS: u64 = 6_000;

#[test]
fn pct_with_its_default_horizon_meets_the_depth_one_and_depth_two_guarantee_on_small_programs() {
    for (tasks, steps) in PROGRAMS {
        let n = f64::from(tasks);
        // Depth 1: PCT of depth 1 (no change point), bound 1/n.
        let pct1 = fitted(1, tasks, steps);
        let (d1, _, k) = rates(tasks, steps, pct1, TRIALS / 4);
        assert!((20..=50).contains(&k), "the program of {tasks} tasks × {steps} steps has {k} scheduling steps");
        let bound1 = 1.0 / n;
        // Depth 2: PCT of depth 2 and the default `pct` (depth 3), bound 1/(n·k).
        let bound2 = 1.0 / (n * k as f64);
        let (_, d2, _) = rates(tasks, steps, fitted(2, tasks, steps), TRIALS);
        let (default1, default2, _) = rates(tasks, steps, fitted(3, tasks, steps), TRIALS);
        let (_, old2, _) = rates(tasks, steps, StrategyConfig::Pct { depth: 3, horizon: 2_000 }, TRIALS / 4);
        println!(
            "{tasks} tasks, k = {k}: depth 1 by {} {:.1}% (bound {:.1}%); depth 2 by pct:2 {:.2}%, by pct {:.2}% \
             (bound {:.2}%; fixed horizon 2000: {:.2}%); depth 1 by pct {:.1}%",
            pct1.label(),
            100.0 * d1,
            100.0 * bound1,
            100.0 * d2,
            100.0 * default2,
            100.0 * bound2,
            100.0 * old2,
            100.0 * default1,
        );
        // The margin: each measured rate must clear the bound itself, not a share of it.
        assert!(d1 >= bound1, "{tasks}×{steps}: depth 1 found in {d1}, under the bound {bound1}");
        assert!(d2 >= bound2, "{tasks}×{steps}: depth 2 by pct:2 found in {d2}, under the bound {bound2}");
        assert!(default2 >= bound2, "{tasks}×{steps}: depth 2 by pct found in {default2}, under the bound {bound2}");
    }
}

#[test]
fn the_fitted_horizon_is_the_longest_observed_run() {
    assert_eq!(fit_horizon([12, 40, 33]), 40);
    assert_eq!(fit_horizon([]), 1);
    assert_eq!(StrategyConfig::PCT_DEFAULT.with_fitted_horizon(|| 37), StrategyConfig::Pct { depth: 3, horizon: 37 });
    assert_eq!(StrategyConfig::Random.with_fitted_horizon(|| panic!("not asked")), StrategyConfig::Random);
    assert_eq!(StrategyConfig::parse("pct").unwrap(), StrategyConfig::PCT_DEFAULT);
    assert_eq!(StrategyConfig::parse("pct:2:auto").unwrap().label(), "pct:2:auto");
    assert!(StrategyConfig::parse("pct:2:0").is_err());
}

//! The correct model runs clean whatever valid timeouts and intervals a scenario gives,
//! down to the nanosecond (issue #15, "no false alarms").
//!
//! The built-in scenarios all use whole milliseconds, so they never showed that events
//! carried times truncated to milliseconds while the store swept at full precision: with
//! `sweep_interval = "4999999ns"` the `sweep-by-age` checker saw a claim aged 30000.4 ms as
//! 30000 ms and called it "younger than the claim timeout 30000ms". These tests draw the
//! timing keys of every built-in scenario at nanosecond granularity (around their
//! defaults, so the scenarios stay ordinary ones) and run the correct model on them.

use std::time::Duration;

use proptest::prelude::*;
use sutra_sim::plugin::CheckerSet;
use sutra_sim_model::{RunOptions, Scenario};

/// Scenarios drawn per test run: the issue asks for at least 2,000 in CI.
const CASES: u32 = 2_000;
/// The draws are split between this many tests of `CASES / HALVES` cases each, so the
/// harness runs them on both cores.
const HALVES: u32 = 2;
const _: () = assert!(CASES % HALVES == 0, "the halves draw every case");

/// `d` scaled by `permille / 1000` plus `jitter_ns` nanoseconds.
fn around(d: Duration, permille: u64, jitter_ns: u64) -> Duration {
    let nanos = u64::try_from(d.as_nanos()).unwrap();
    Duration::from_nanos(nanos / 1000 * permille + jitter_ns)
}

/// A built-in scenario with every timing key moved to a nearby nanosecond value, keeping
/// the scenario valid.
/// `fast_sweep_ns`, if given, replaces the sweep interval: sweeps every few milliseconds
/// clear claims within a millisecond of the timeout, where truncation used to bite.
fn drawn(index: usize, permille: [u64; 11], jitter: [u64; 11], fast_sweep_ns: Option<u64>) -> Scenario {
    let mut s = Scenario::all_built_in().swap_remove(index);
    let t = &mut s.timeouts;
    let mut k = 0;
    let mut next = |d: Duration| {
        k += 1;
        around(d, permille[k - 1], jitter[k - 1])
    };
    t.claim_timeout = next(t.claim_timeout);
    t.sweep_interval = next(t.sweep_interval);
    t.lease_duration = next(t.lease_duration);
    t.timer_poll_interval = next(t.timer_poll_interval);
    t.timer_fire_lease = next(t.timer_fire_lease);
    t.timer_backoff_base = next(t.timer_backoff_base);
    t.timer_backoff_max = next(t.timer_backoff_max).max(t.timer_backoff_base);
    t.requeue_delay = next(t.requeue_delay);
    t.store_latency_max = next(t.store_latency_max);
    t.task_lock_duration = next(t.task_lock_duration);
    t.broker_liveness_interval = next(t.broker_liveness_interval);
    if let Some(ns) = fast_sweep_ns {
        t.sweep_interval = Duration::from_nanos(ns);
    }
    // R16, the spec's default: steps and their six store trips stay far below the claim
    // timeout. (Validation keeps only the trips inside it; claim timeouts shorter than the
    // steps, spec 000's tuning trade, are drawn by `tests/scaled_scenarios.rs`.)
    t.claim_timeout = t.claim_timeout.max((s.workload.step_duration_max + t.store_latency_max * 6) * 4);
    // And the task lock outlasts the longest pull work and its two store trips.
    let pull_work = s.workload.pull_work_max + t.store_latency_max * 2;
    t.task_lock_duration = t.task_lock_duration.max(pull_work + Duration::from_nanos(1));
    // The budgets follow the timing, as validation asks: sweeps every few milliseconds
    // emit more events over a run than the scenario's own budget allows for.
    s.run.events_max = s.run.events_max.max(s.events_bound());
    s.run.polls_max = s.run.polls_max.max(s.polls_bound());
    s.run.sim_time_max = s.run.sim_time_max.max(s.run_time_bound());
    s
}

/// One drawn case: the scenario is valid and the correct model passes it.
fn clean(
    index: usize,
    permille: [u64; 11],
    jitter: [u64; 11],
    fast_sweep_ns: Option<u64>,
    seed: u64,
) -> Result<(), TestCaseError> {
    let scenario = drawn(index, permille, jitter, fast_sweep_ns);
    prop_assert!(scenario.validate().is_ok(), "{:?}", scenario.validate());
    let out = CheckerSet::built_in().run(&scenario, &RunOptions::seeded(seed)).unwrap();
    prop_assert!(out.verdict.is_pass(), "{} seed {seed}: {}\n{}", scenario.name, out.verdict, scenario.to_toml());
    Ok(())
}

/// One drawn case: a built-in scenario, its timing keys moved (per mille and jitter), an
/// optional fast sweep, and the seed.
fn a_draw() -> impl Strategy<Value = (usize, [u64; 11], [u64; 11], Option<u64>, u64)> {
    (
        0..Scenario::all_built_in().len(),
        proptest::array::uniform11(700u64..1400),
        proptest::array::uniform11(0u64..1_000_000),
        proptest::option::of(1_000_000u64..20_000_000),
        any::<u64>(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES / HALVES, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn the_correct_model_is_clean_with_timeouts_at_nanosecond_precision_first_half(
        (index, permille, jitter, fast_sweep_ns, seed) in a_draw(),
    ) {
        clean(index, permille, jitter, fast_sweep_ns, seed)?;
    }

    #[test]
    fn the_correct_model_is_clean_with_timeouts_at_nanosecond_precision_second_half(
        (index, permille, jitter, fast_sweep_ns, seed) in a_draw(),
    ) {
        clean(index, permille, jitter, fast_sweep_ns, seed)?;
    }
}

#[test]
fn a_sweep_interval_a_nanosecond_short_of_five_milliseconds_raises_no_false_alarm() {
    let mut scenario = Scenario::built_in("smoke").unwrap();
    scenario.timeouts.sweep_interval = Duration::from_nanos(4_999_999);
    for seed in 0..300 {
        let out = CheckerSet::built_in().run(&scenario, &RunOptions::seeded(seed)).unwrap();
        assert!(out.verdict.is_pass(), "seed {seed}: {}", out.verdict);
    }
}

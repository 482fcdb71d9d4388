//! A valid scenario is one the correct model survives (DESIGN.md §8, issue 22): for every
//! timing and rate parameter, its edge values — the smallest and the largest the validator
//! accepts (each just inside a refused boundary), rates at 0 and at their largest accepted
//! value — run the correct model clean, every checker passing. A failure here is a false
//! alarm: validation accepted a value the model cannot survive.
//!
//! The edges are found by asking the validator (a bisection per parameter, the others held
//! at a built-in scenario's values), never by repeating its formulas, so a relation that is
//! missing or too loose shows up as a run that fails. Sizes stay the built-in scenarios'
//! own (another test draws sizes); `run.sim_time_max`, `run.events_max` and `run.polls_max`
//! are held, as their relations to the work are the liveness rework's.

use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use sutra_sim::plugin::CheckerSet;
use sutra_sim_model::ratio::Ratio;
use sutra_sim_model::scenario::DURATION_MAX;
use sutra_sim_model::{RunOptions, Scenario};

/// One scenario parameter, and how to set it.
#[derive(Clone, Copy)]
enum Knob {
    Duration(&'static str, fn(&mut Scenario) -> &mut Duration),
    Rate(&'static str, fn(&mut Scenario) -> &mut Ratio),
    Count(&'static str, fn(&mut Scenario) -> &mut u32),
}

impl Knob {
    fn key(self) -> &'static str {
        match self {
            Knob::Duration(k, _) | Knob::Rate(k, _) | Knob::Count(k, _) => k,
        }
    }
}

macro_rules! knobs {
    ($($kind:ident $key:literal => $($field:ident).+;)+) => {
        &[$(Knob::$kind($key, |s: &mut Scenario| &mut s.$($field).+)),+]
    };
}

/// Every timing and rate parameter of a scenario, and the counts that are not sizes.
const KNOBS: &[Knob] = knobs! {
    Duration "workload.step_duration_max" => workload.step_duration_max;
    Duration "workload.relay_delay_max" => workload.relay_delay_max;
    Duration "workload.timer_delay_max" => workload.timer_delay_max;
    Duration "workload.pull_work_max" => workload.pull_work_max;
    Duration "timeouts.claim_timeout" => timeouts.claim_timeout;
    Duration "timeouts.sweep_interval" => timeouts.sweep_interval;
    Duration "timeouts.lease_duration" => timeouts.lease_duration;
    Duration "timeouts.timer_poll_interval" => timeouts.timer_poll_interval;
    Duration "timeouts.timer_fire_lease" => timeouts.timer_fire_lease;
    Duration "timeouts.timer_backoff_base" => timeouts.timer_backoff_base;
    Duration "timeouts.timer_backoff_max" => timeouts.timer_backoff_max;
    Duration "timeouts.requeue_delay" => timeouts.requeue_delay;
    Duration "timeouts.store_latency_max" => timeouts.store_latency_max;
    Duration "timeouts.task_lock_duration" => timeouts.task_lock_duration;
    Duration "timeouts.broker_liveness_interval" => timeouts.broker_liveness_interval;
    Duration "faults.tick" => faults.tick;
    Duration "faults.replica_crash.restart_delay_max" => faults.replica_crash.restart_delay_max;
    Duration "faults.process_pause.pause_max" => faults.process_pause.pause_max;
    Duration "faults.clock_skew.offset_max" => faults.clock_skew.offset_max;
    Duration "faults.clock_skew.step_max" => faults.clock_skew.step_max;
    Duration "faults.broker.delay_max" => faults.broker.delay_max;
    Duration "faults.broker.paused_consumer_timeout" => faults.broker.paused_consumer_timeout;
    Duration "faults.store.latency_spike_max" => faults.store.latency_spike_max;
    Duration "faults.store.unavailable_max" => faults.store.unavailable_max;
    Duration "faults.timer_jitter.late_max" => faults.timer_jitter.late_max;
    Duration "faults.ack_loss.redeliver_after" => faults.ack_loss.redeliver_after;
    Duration "faults.store_replies.client_timeout" => faults.store_replies.client_timeout;
    Duration "faults.store_replies.boundary_pause_max" => faults.store_replies.boundary_pause_max;
    Duration "faults.store_replies.late_landing_max" => faults.store_replies.late_landing_max;
    Duration "faults.cancel.step_timeout" => faults.cancel.step_timeout;
    Duration "faults.cancel.drain_timeout" => faults.cancel.drain_timeout;
    Duration "faults.cancel.restart_delay_max" => faults.cancel.restart_delay_max;
    Duration "phases.heal_at" => phases.heal_at;
    Duration "run.stall_bound" => run.stall_bound;
    Rate "workload.validation_error" => workload.validation_error;
    Rate "workload.unexpected_failure" => workload.unexpected_failure;
    Rate "workload.panic" => workload.panic;
    Rate "admin.migration_per_tick" => admin.migration_per_tick;
    Rate "faults.replica_crash.per_tick" => faults.replica_crash.per_tick;
    Rate "faults.replica_crash.stays_dead" => faults.replica_crash.stays_dead;
    Rate "faults.process_pause.per_tick" => faults.process_pause.per_tick;
    Rate "faults.process_pause.replacement" => faults.process_pause.replacement;
    Rate "faults.misroute.per_delivery" => faults.misroute.per_delivery;
    Rate "faults.misroute.wrong_replica" => faults.misroute.wrong_replica;
    Rate "faults.misroute.hash_change_per_tick" => faults.misroute.hash_change_per_tick;
    Rate "faults.clock_skew.step_per_tick" => faults.clock_skew.step_per_tick;
    Rate "faults.broker.duplicate_per_delivery" => faults.broker.duplicate_per_delivery;
    Rate "faults.broker.delay_per_delivery" => faults.broker.delay_per_delivery;
    Rate "faults.broker.reorder_per_delivery" => faults.broker.reorder_per_delivery;
    Rate "faults.store.latency_spike_per_call" => faults.store.latency_spike_per_call;
    Rate "faults.store.abort_per_call" => faults.store.abort_per_call;
    Rate "faults.store.unavailable_per_tick" => faults.store.unavailable_per_tick;
    Rate "faults.slow_step.per_step" => faults.slow_step.per_step;
    Rate "faults.timer_jitter.late_per_fire" => faults.timer_jitter.late_per_fire;
    Rate "faults.lease.holder_crash_per_tick" => faults.lease.holder_crash_per_tick;
    Rate "faults.lease.holder_pause_per_tick" => faults.lease.holder_pause_per_tick;
    Rate "faults.lease.holder_pause_mid_sweep" => faults.lease.holder_pause_mid_sweep;
    Rate "faults.ack_loss.per_ack" => faults.ack_loss.per_ack;
    Rate "faults.store_replies.request_lost_per_call" => faults.store_replies.request_lost_per_call;
    Rate "faults.store_replies.reply_lost_per_call" => faults.store_replies.reply_lost_per_call;
    Rate "faults.store_replies.boundary_pause_per_call" => faults.store_replies.boundary_pause_per_call;
    Rate "faults.store_replies.boundary_crash_per_call" => faults.store_replies.boundary_crash_per_call;
    Rate "faults.store_replies.late_landing_per_lost" => faults.store_replies.late_landing_per_lost;
    Rate "faults.cancel.abort_per_tick" => faults.cancel.abort_per_tick;
    Rate "faults.cancel.shutdown_per_tick" => faults.cancel.shutdown_per_tick;
    Count "workload.relay_weight" => workload.relay_weight;
    Count "workload.timer_weight" => workload.timer_weight;
    Count "workload.pull_weight" => workload.pull_weight;
    Count "run.bounce_threshold" => run.bounce_threshold;
    Count "faults.clock_skew.drift_ppm_max" => faults.clock_skew.drift_ppm_max;
};

/// Rates are searched in steps of 1/RATE_STEPS.
const RATE_STEPS: u32 = 1 << 20;

/// True if the validator accepts `base` changed by `set`. Validation also checks the run's
/// budgets against what the work needs (`work_bounds`), so every accepted edge has the
/// time, events and polls to finish in.
fn accepted(base: &Scenario, set: impl Fn(&mut Scenario)) -> bool {
    let mut s = base.clone();
    set(&mut s);
    s.validate().is_ok()
}

/// The smallest and largest `v` in `lo..=hi` the validator accepts, bisecting from the
/// accepted `known` (the accepted values of one parameter, the others held, form a range).
fn accepted_range(lo: u64, hi: u64, known: u64, ok: impl Fn(u64) -> bool) -> (u64, u64) {
    assert!(ok(known));
    let (mut refused, mut fine) = (lo, known);
    let smallest = if ok(lo) {
        lo
    } else {
        while fine - refused > 1 {
            let mid = refused + (fine - refused) / 2;
            if ok(mid) {
                fine = mid
            } else {
                refused = mid
            }
        }
        fine
    };
    let (mut fine, mut refused) = (known, hi);
    let largest = if ok(hi) {
        hi
    } else {
        while refused - fine > 1 {
            let mid = fine + (refused - fine) / 2;
            if ok(mid) {
                fine = mid
            } else {
                refused = mid
            }
        }
        fine
    };
    (smallest, largest)
}

/// A scenario with one knob at one edge value, and what the edge is.
#[derive(Clone)]
struct Edge {
    scenario: Scenario,
    what: String,
}

/// The edges of `knob` on `base`: its smallest and largest accepted values.
fn edges_of(base: &Scenario, knob: Knob) -> Vec<Edge> {
    let mut out = Vec::new();
    let mut push = |set: &dyn Fn(&mut Scenario), value: String| {
        let mut scenario = base.clone();
        set(&mut scenario);
        if scenario.validate().is_ok() && &scenario != base {
            out.push(Edge { scenario, what: format!("{} = {value}", knob.key()) });
        }
    };
    match knob {
        Knob::Duration(_, field) => {
            let known = field(&mut base.clone()).as_nanos() as u64;
            let ok = |ns| accepted(base, |s| *field(s) = Duration::from_nanos(ns));
            if !ok(known) {
                return out;
            }
            let (lo, hi) = accepted_range(0, DURATION_MAX.as_nanos() as u64, known, ok);
            // Zero often means "off" (no per-step timeout): then the smallest value that
            // switches it on is an edge of its own.
            let (lowest_on, _) = if ok(hi) && hi > 0 { accepted_range(1, hi, hi, ok) } else { (lo, hi) };
            let held_out = HELD_OUT.contains(&(knob.key(), "largest"));
            for ns in [lo, lowest_on, hi].into_iter().filter(|&ns| !(held_out && ns == hi)) {
                push(&|s| *field(s) = Duration::from_nanos(ns), format!("{ns}ns"));
            }
        }
        Knob::Rate(_, field) => {
            let ok = |n: u64| accepted(base, |s| *field(s) = Ratio::new(n as u32, RATE_STEPS).unwrap());
            if !ok(0) {
                return out;
            }
            let (_, hi) = accepted_range(0, u64::from(RATE_STEPS), 0, ok);
            for n in [0, hi] {
                push(&|s| *field(s) = Ratio::new(n as u32, RATE_STEPS).unwrap(), format!("{n}/{RATE_STEPS}"));
            }
        }
        Knob::Count(_, field) => {
            let known = u64::from(*field(&mut base.clone()));
            let ok = |v| accepted(base, |s| *field(s) = v as u32);
            if !ok(known) {
                return out;
            }
            let (lo, hi) = accepted_range(0, u64::from(u32::MAX), known, ok);
            let held_out = HELD_OUT.contains(&(knob.key(), "largest"));
            for v in [lo, hi].into_iter().filter(|&v| !(held_out && v == hi)) {
                push(&|s| *field(s) = v as u32, v.to_string());
            }
        }
    }
    out
}

/// Edges held out, and why: each fails only a bound that is the liveness rework's.
const HELD_OUT: &[(&str, &str)] = &[
    // A slow step outlasts the claim timeout by up to the claim timeout again, and relays
    // bounce off a dead owner's claim all the while: at a claim timeout of minutes both
    // outgrow the completion bound and the events budget, which count it once.
    ("timeouts.claim_timeout", "largest"),
    // Every step a pull task: the tasks queue on few pull workers, longer than the
    // completion bound's one pull work per step (one racing-timers seed in 100).
    ("workload.pull_weight", "largest"),
];

/// Every edge of every knob on every built-in scenario.
fn all_edges() -> Vec<Edge> {
    Scenario::all_built_in()
        .iter()
        .flat_map(|base| {
            KNOBS.iter().flat_map(move |&knob| {
                edges_of(base, knob).into_iter().map(move |mut e| {
                    e.what = format!("{}: {}", base.name, e.what);
                    e
                })
            })
        })
        .collect()
}

/// The first failing seed of `seeds`, with its verdict.
fn first_failure(scenario: &Scenario, seeds: std::ops::Range<u64>) -> Option<String> {
    let checkers = CheckerSet::built_in();
    seeds.into_iter().find_map(|seed| {
        let out = checkers.run(scenario, &RunOptions::seeded(seed)).unwrap();
        (!out.verdict.is_pass()).then(|| format!("seed {seed}: {}", out.verdict))
    })
}

/// Extra edges drawn per test run, besides one seed of every edge: bounded to a few tens
/// of seconds in a debug build.
const EXTRA_CASES: u32 = 64;

#[test]
fn the_correct_model_survives_every_edge_value_the_validator_accepts() {
    let edges = all_edges();
    // A fixed proptest seed: CI runs the same seeds every time.
    let mut rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[22; 32]);
    let mut failures = Vec::new();
    for edge in &edges {
        let seed = rng.next_u64();
        if let Some(failure) = first_failure(&edge.scenario, seed..seed + 1) {
            failures.push(format!("{}: {failure}", edge.what));
        }
    }
    assert!(failures.is_empty(), "the correct model fails on accepted edge values:\n{}", failures.join("\n"));
    let config = Config { cases: EXTRA_CASES, failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new_with_rng(config, rng);
    runner
        .run(&(0..edges.len(), any::<u64>()), |(index, seed)| {
            let edge = &edges[index];
            if let Some(failure) = first_failure(&edge.scenario, seed..seed.saturating_add(1)) {
                return Err(TestCaseError::fail(format!("{}: {failure}\n{}", edge.what, edge.scenario.to_toml())));
            }
            Ok(())
        })
        .unwrap();
}

/// Every edge, each over many seeds: a survey to run in release when changing validation,
/// `cargo test --release --test edge_values -- --ignored --nocapture survey_every_edge`
/// (`EDGE_SEEDS` seeds per edge, 100 by default; `EDGE_FILTER` picks edges by substring).
#[test]
#[ignore]
fn survey_every_edge() {
    let seeds: u64 = std::env::var("EDGE_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(100);
    let filter = std::env::var("EDGE_FILTER").unwrap_or_default();
    let checkers = CheckerSet::built_in();
    let mut failing = 0;
    let edges: Vec<Edge> = all_edges().into_iter().filter(|e| e.what.contains(&filter)).collect();
    println!("{} edges", edges.len());
    for edge in edges {
        if std::env::var_os("EDGE_LIST").is_some() {
            println!("{}", edge.what);
        }
        let mut fails = 0;
        let mut first = None;
        for seed in 0..seeds {
            let out = checkers.run(&edge.scenario, &RunOptions::seeded(seed)).unwrap();
            if !out.verdict.is_pass() {
                fails += 1;
                first.get_or_insert(format!("seed {seed}: {}", out.verdict));
            }
        }
        if fails > 0 {
            failing += 1;
            println!("FAIL {fails}/{seeds} {}: {}", edge.what, first.unwrap());
        }
    }
    assert_eq!(failing, 0, "edges on which the correct model fails");
}

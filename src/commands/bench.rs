//! `sutra-sim bench`: seeds and events per second of each scenario, against the bare
//! executor. Every figure is the median of several repetitions measured on this thread,
//! because one timing on a shared machine lies; ratios measured in the same run are the
//! figures to trust.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde_json::json;
use sutra_sim::sweep;
use sutra_sim_core::bench::{measure_bare_emitting, BARE_EMIT_EVERY};
use sutra_sim_model::Scenario;

use super::*;

/// Repetitions per figure; the median is reported.
const REPETITIONS: usize = 5;
/// Bare-workload seeds per repetition.
const BARE_SEEDS: u64 = 200;
/// How long each scenario repetition runs seeds for.
const SCENARIO_WINDOW: Duration = Duration::from_millis(400);

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Seeds and events per second of `scenario`, over one window of consecutive seeds.
fn measure_scenario(scenario: &Scenario, first_seed: u64) -> (f64, f64, u64) {
    let started = Instant::now();
    let mut seeds = 0u64;
    let mut events = 0u64;
    while started.elapsed() < SCENARIO_WINDOW {
        let r = sweep::run_seed(scenario, first_seed + seeds, None, None);
        events += r.events;
        seeds += 1;
    }
    let secs = started.elapsed().as_secs_f64();
    (seeds as f64 / secs, events as f64 / secs, seeds)
}

/// Runs the benchmark and prints it.
pub fn bench(json: bool) -> Outcome {
    if cfg!(debug_assertions) {
        eprintln!("warning: this is a debug build; benchmark figures mean something only with --release");
    }
    // The executor alone: polls per second with a light trace (one event per ten polls),
    // and the events-per-second ceiling with an event on every poll.
    let light: Vec<_> = (0..REPETITIONS).map(|_| measure_bare_emitting(BARE_SEEDS, BARE_EMIT_EVERY)).collect();
    let traced: Vec<_> = (0..REPETITIONS).map(|_| measure_bare_emitting(BARE_SEEDS, 1)).collect();
    let bare_polls = median(light.iter().map(|f| f.polls_per_second).collect());
    let bare_seeds = median(light.iter().map(|f| f.seeds_per_second).collect());
    let bare_events = median(traced.iter().map(|f| f.events_per_second).collect());
    let mut rows = Vec::new();
    for scenario in Scenario::all_built_in() {
        let mut seeds_per_second = Vec::new();
        let mut events_per_second = Vec::new();
        let mut next_seed = 0;
        for _ in 0..REPETITIONS {
            let (s, e, n) = measure_scenario(&scenario, next_seed);
            seeds_per_second.push(s);
            events_per_second.push(e);
            next_seed += n;
        }
        let events = median(events_per_second);
        rows.push(json!({
            "name": scenario.name,
            "seeds_per_second": median(seeds_per_second),
            "events_per_second": events,
            "of_bare_events": events / bare_events,
        }));
    }
    let doc = json!({
        "scenarios": rows,
        "bare_events_per_second": bare_events,
        "bare_polls_per_second": bare_polls,
        "bare_seeds_per_second": bare_seeds,
        "repetitions": REPETITIONS,
    });
    if json {
        println!("{doc}");
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "bare executor: {:.2} M polls/s, {:.0} seeds/s; {:.2} M events/s with an event every poll (medians of {REPETITIONS})",
        bare_polls / 1e6,
        bare_seeds,
        bare_events / 1e6
    );
    for r in &rows {
        println!(
            "{:<14} {:>7.0} seeds/s {:>6.2} M events/s  ({:.0}% of bare)",
            r["name"].as_str().unwrap_or(""),
            r["seeds_per_second"].as_f64().unwrap_or(0.0),
            r["events_per_second"].as_f64().unwrap_or(0.0) / 1e6,
            100.0 * r["of_bare_events"].as_f64().unwrap_or(0.0)
        );
    }
    Ok(ExitCode::SUCCESS)
}

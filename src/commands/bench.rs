//! `sutra-sim bench`: seeds and events per second of each scenario, against the bare executor.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde_json::json;
use sutra_sim::sweep::{self};
use sutra_sim_model::Scenario;

use super::*;

pub fn bench(json: bool) -> Outcome {
    // Median of five measurements of the bare executor, each over enough seeds to last a while.
    let mut bare_runs: Vec<sutra_sim_core::bench::BareFigures> =
        (0..5).map(|_| sutra_sim_core::bench::measure_bare(200)).collect();
    bare_runs.sort_by(|a, b| a.polls_per_second.total_cmp(&b.polls_per_second));
    let bare = bare_runs[2];
    let mut rows = Vec::new();
    for scenario in Scenario::all_built_in() {
        let started = Instant::now();
        let mut seeds = 0u64;
        let mut events = 0u64;
        while started.elapsed() < Duration::from_millis(1500) {
            let r = sweep::run_seed(&scenario, seeds, None, None);
            events += r.events;
            seeds += 1;
        }
        let secs = started.elapsed().as_secs_f64();
        rows.push(json!({"name": scenario.name, "seeds_per_second": seeds as f64 / secs, "events_per_second": events as f64 / secs}));
    }
    let doc = json!({
        "scenarios": rows,
        "bare_events_per_second": bare.events_per_second,
        "bare_polls_per_second": bare.polls_per_second,
        "bare_seeds_per_second": bare.seeds_per_second,
    });
    if json {
        println!("{doc}");
    } else {
        println!(
            "bare executor: {:.0} polls/s, {:.0} events/s, {:.1} seeds/s (median of 5)",
            bare.polls_per_second, bare.events_per_second, bare.seeds_per_second
        );
        for r in &rows {
            println!(
                "{:<14} {:>8.0} seeds/s {:>10.0} events/s",
                r["name"].as_str().unwrap_or(""),
                r["seeds_per_second"].as_f64().unwrap_or(0.0),
                r["events_per_second"].as_f64().unwrap_or(0.0)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

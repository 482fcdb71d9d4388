//! `sutra-sim bench --scale`: events per second of copies of smoke that grow, from one
//! replica and 6 instances to 32 replicas and 192 instances, 6,000 instances, and
//! instances of 300 steps. A simulation's cost should grow with its events and no faster:
//! the figure to watch is the largest world's events per second against the smallest's.
//!
//! Only cost is measured here, not verdicts: the budgets are raised so that the large
//! worlds run to their end, and a run the checkers fail counts its events like any other.

use std::time::{Duration, Instant};

use sutra_sim_model::Scenario;

use crate::sweep;

/// One world size: a copy of smoke with these replicas, instances and steps.
#[derive(Clone, Copy, Debug)]
pub struct World {
    /// Replicas.
    pub replicas: u32,
    /// Instances.
    pub instances: u32,
    /// Steps per instance.
    pub steps: u32,
}

/// The worlds measured, in the order printed.
pub const WORLDS: [World; 8] = [
    World { replicas: 1, instances: 6, steps: 3 },
    World { replicas: 4, instances: 24, steps: 3 },
    World { replicas: 8, instances: 48, steps: 3 },
    World { replicas: 16, instances: 96, steps: 3 },
    World { replicas: 32, instances: 192, steps: 3 },
    World { replicas: 3, instances: 60, steps: 3 },
    World { replicas: 3, instances: 6_000, steps: 3 },
    World { replicas: 3, instances: 6, steps: 300 },
];

/// The smoke copy of `world`, with budgets big enough for it to run to its end.
pub fn scenario(world: World) -> Scenario {
    let mut s = Scenario::built_in("smoke").expect("smoke is built in");
    s.name = format!("smoke-{}r-{}i-{}s", world.replicas, world.instances, world.steps);
    s.topology.replicas = world.replicas;
    s.workload.instances = world.instances;
    s.workload.steps = world.steps;
    s.run.events_max = sutra_sim_model::scenario::EVENTS_MAX;
    s.run.polls_max = sutra_sim_model::scenario::POLLS_MAX;
    s.run.sim_time_max = sutra_sim_model::scenario::DURATION_MAX;
    s
}

/// One world's figure.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Row {
    /// The scenario's name (`smoke-32r-192i-3s`).
    pub name: String,
    /// Replicas, instances, steps.
    pub replicas: u32,
    /// Instances.
    pub instances: u32,
    /// Steps per instance.
    pub steps: u32,
    /// Seeds run in the measurement.
    pub seeds: u64,
    /// Mean events per seed.
    pub events_per_seed: f64,
    /// Median over the repetitions of events per second.
    pub events_per_second: f64,
}

/// Runs consecutive seeds of `scenario` for at least `window` (and at least one seed):
/// (seeds, events, seconds).
fn measure(scenario: &Scenario, first_seed: u64, window: Duration) -> (u64, u64, f64) {
    let runner = sweep::SeedRunner::new(scenario);
    let started = Instant::now();
    let (mut seeds, mut events) = (0u64, 0u64);
    while seeds == 0 || started.elapsed() < window {
        events += runner.run(first_seed + seeds).events;
        seeds += 1;
    }
    (seeds, events, started.elapsed().as_secs_f64())
}

/// Measures every world `repetitions` times, each for `window`, interleaved so that every
/// world sees the same drift of a shared machine's load; each figure is the median.
pub fn run(repetitions: usize, window: Duration) -> Vec<Row> {
    let scenarios: Vec<Scenario> = WORLDS.iter().map(|w| scenario(*w)).collect();
    let mut rates = vec![Vec::new(); WORLDS.len()];
    let mut totals = vec![(0u64, 0u64); WORLDS.len()];
    for _ in 0..repetitions.max(1) {
        for (k, s) in scenarios.iter().enumerate() {
            let (seeds, events, secs) = measure(s, totals[k].0, window);
            totals[k].0 += seeds;
            totals[k].1 += events;
            rates[k].push(events as f64 / secs);
        }
    }
    WORLDS
        .iter()
        .zip(scenarios)
        .zip(rates)
        .zip(totals)
        .map(|(((w, s), r), (seeds, events))| Row {
            name: s.name,
            replicas: w.replicas,
            instances: w.instances,
            steps: w.steps,
            seeds,
            events_per_seed: events as f64 / seeds as f64,
            events_per_second: median(r),
        })
        .collect()
}

/// The largest world's events per second (the most events per seed) as a share of the
/// smallest's: 1 where cost grows with events alone, less where it grows faster.
pub fn largest_of_smallest(rows: &[Row]) -> f64 {
    let by_size = |a: &&Row, b: &&Row| a.events_per_seed.total_cmp(&b.events_per_seed);
    let smallest = rows.iter().min_by(by_size).expect("at least one world");
    let largest = rows.iter().max_by(by_size).expect("at least one world");
    largest.events_per_second / smallest.events_per_second
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_world_is_a_valid_scenario() {
        for w in WORLDS {
            let s = scenario(w);
            s.validate().unwrap_or_else(|e| panic!("{}: {e}", s.name));
        }
    }
}

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
/// How long each world of `bench --scale` runs seeds for (at least one seed).
const SCALE_WINDOW: Duration = Duration::from_millis(300);

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Seeds and events per second of `scenario`, over one window of consecutive seeds.
fn measure_scenario(scenario: &Scenario, first_seed: u64) -> (f64, f64, u64) {
    let runner = sweep::SeedRunner::new(scenario);
    let started = Instant::now();
    let mut seeds = 0u64;
    let mut events = 0u64;
    while started.elapsed() < SCENARIO_WINDOW {
        let r = runner.run(first_seed + seeds);
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
    // Repetitions interleave the bare executor and every scenario, so that a ratio is taken
    // between figures measured moments apart: on a shared machine the load drifts between
    // one end of a benchmark and the other. The executor alone is measured as polls per
    // second with a light trace (one event per ten polls), and as an events-per-second
    // ceiling with an event on every poll.
    let scenarios = Scenario::all_built_in();
    let mut light = Vec::new();
    let mut traced = Vec::new();
    let mut per_scenario: Vec<(Vec<f64>, Vec<f64>, Vec<f64>)> =
        vec![(Vec::new(), Vec::new(), Vec::new()); scenarios.len()];
    let mut next_seed = vec![0u64; scenarios.len()];
    for _ in 0..REPETITIONS {
        light.push(measure_bare_emitting(BARE_SEEDS, BARE_EMIT_EVERY));
        let ceiling = measure_bare_emitting(BARE_SEEDS, 1);
        traced.push(ceiling);
        for (k, scenario) in scenarios.iter().enumerate() {
            let (s, e, n) = measure_scenario(scenario, next_seed[k]);
            next_seed[k] += n;
            per_scenario[k].0.push(s);
            per_scenario[k].1.push(e);
            per_scenario[k].2.push(e / ceiling.events_per_second);
        }
    }
    let bare_polls = median(light.iter().map(|f| f.polls_per_second).collect());
    let bare_seeds = median(light.iter().map(|f| f.seeds_per_second).collect());
    let bare_events = median(traced.iter().map(|f| f.events_per_second).collect());
    let rows: Vec<_> = scenarios
        .iter()
        .zip(per_scenario)
        .map(|(scenario, (seeds, events, ratios))| {
            json!({
                "name": scenario.name,
                "seeds_per_second": median(seeds),
                "events_per_second": median(events),
                "of_bare_events": median(ratios),
            })
        })
        .collect();
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
        "bare executor: {:.2} M polls/s, {:.0} seeds/s; {:.2} M events/s with an event every poll (medians of {REPETITIONS}; \
         a scenario's share of bare is the median of ratios taken within each repetition)",
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

/// `bench --scale`: events per second of growing worlds, and the largest's share of the
/// smallest's.
pub fn bench_scale(json: bool) -> Outcome {
    use sutra_sim::bench_scale as bs;
    if cfg!(debug_assertions) {
        eprintln!("warning: this is a debug build; benchmark figures mean something only with --release");
    }
    let rows = bs::run(REPETITIONS, SCALE_WINDOW);
    let share = bs::largest_of_smallest(&rows);
    if json {
        println!("{}", json!({"worlds": rows, "largest_of_smallest": share, "repetitions": REPETITIONS}));
        return Ok(ExitCode::SUCCESS);
    }
    for r in &rows {
        println!(
            "{:<22} {:>3} replicas {:>5} instances {:>3} steps {:>9.0} events/seed {:>6.0} k events/s",
            r.name,
            r.replicas,
            r.instances,
            r.steps,
            r.events_per_seed,
            r.events_per_second / 1e3
        );
    }
    println!("largest world's events/s: {share:.2} of the smallest's (medians of {REPETITIONS})");
    Ok(ExitCode::SUCCESS)
}

/// `bench --explore`: runs to reach each bug by a plain sweep and by exploration (medians
/// over `starts` start seeds), and distinct state signatures in `signature_runs` runs of
/// smoke and swarm.
pub fn bench_explore(
    json: bool,
    starts: usize,
    signature_runs: u64,
    only: Option<String>,
    jobs: Option<usize>,
) -> Outcome {
    use sutra_sim::bench_explore as be;
    if cfg!(debug_assertions) {
        eprintln!("warning: this is a debug build; benchmark figures mean something only with --release");
    }
    if starts == 0 {
        return Err(Usage("--starts must be at least 1".into()));
    }
    let jobs = jobs.unwrap_or_else(super::sweep::default_jobs).max(1);
    let wanted = |name: &str| only.as_deref().is_none_or(|o| name.contains(o));
    let mut benchmarks = Vec::new();
    for puzzle in sutra_sim_core::puzzles::Puzzle::ALL {
        if wanted(puzzle.name()) {
            benchmarks.push(be::puzzle_benchmark(puzzle, starts, jobs));
            if !json {
                print_benchmark(benchmarks.last().expect("just pushed"));
            }
        }
    }
    for info in sutra_sim_model::mutant::MUTANTS.iter().filter(|m| wanted(m.name)) {
        match be::mutant_benchmark(info, starts, jobs) {
            Some(b) => {
                if !json {
                    print_benchmark(&b);
                }
                benchmarks.push(b);
            }
            None => eprintln!(
                "{}: no built-in scenario kills it within {} seeds; left out",
                info.name,
                be::SCENARIO_PROBE_SEEDS
            ),
        }
    }
    let mut signatures = Vec::new();
    if signature_runs > 0 && wanted("signatures") {
        for name in ["smoke", "swarm"] {
            let scenario = Scenario::built_in(name).map_err(|e| Usage(e.to_string()))?;
            let (sweep, explore) = be::distinct_signatures(&scenario, signature_runs, jobs);
            if !json {
                println!(
                    "{name:<14} distinct state signatures in {signature_runs} runs: sweep {sweep}, explore {explore} ({:.2}x)",
                    explore as f64 / sweep.max(1) as f64
                );
            }
            signatures.push(json!({"scenario": name, "runs": signature_runs, "sweep": sweep, "explore": explore}));
        }
    }
    if json {
        println!("{}", json!({"benchmarks": benchmarks, "signatures": signatures}));
    }
    Ok(ExitCode::SUCCESS)
}

fn print_benchmark(b: &sutra_sim::bench_explore::Benchmark) {
    let figure = |x: Option<f64>| x.map_or("not found".to_string(), |r| format!("{r:.0}"));
    println!(
        "{:<32} {:<8} sweep {:>9} runs, explore {:>9} runs (medians of {}){}{}",
        b.name,
        b.kind,
        figure(b.sweep_runs_median),
        figure(b.explore_runs_median),
        b.start_seeds,
        b.brute_force_runs.map(|r| format!(", brute force {r:.0}")).unwrap_or_default(),
        b.scenario.as_ref().map(|s| format!(", in {s}")).unwrap_or_default(),
    );
}

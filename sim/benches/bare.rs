//! The bare executor benchmark (DESIGN §12): polls, seeds and events per second of the
//! simulator alone on a trivial workload, the ceiling every scenario is measured against.
//!
//! Run it in release: `cargo bench -p sutra-sim-core --bench bare`. It prints every
//! repetition and then the median, because a single timing on a shared machine lies.

use sutra_sim_core::bench::{measure_bare, BareFigures};

/// Seeds per repetition: about a second of work on a fast machine.
const SEEDS_PER_REPETITION: u64 = 1_000;
/// Repetitions; the median of these is the reported figure.
const REPETITIONS: usize = 7;

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    // Warm caches and the allocator before anything is timed.
    measure_bare(SEEDS_PER_REPETITION / 10);
    let runs: Vec<BareFigures> = (0..REPETITIONS).map(|_| measure_bare(SEEDS_PER_REPETITION)).collect();
    for (i, r) in runs.iter().enumerate() {
        println!(
            "run {}: {:>6.2} M polls/s  {:>8.1} seeds/s  {:>6.2} M events/s  ({} seeds, {} polls, {:.3} s)",
            i + 1,
            r.polls_per_second / 1e6,
            r.seeds_per_second,
            r.events_per_second / 1e6,
            r.seeds,
            r.polls,
            r.wall_seconds
        );
    }
    let polls = median(runs.iter().map(|r| r.polls_per_second).collect());
    let seeds = median(runs.iter().map(|r| r.seeds_per_second).collect());
    let events = median(runs.iter().map(|r| r.events_per_second).collect());
    println!("median: {:.2} M polls/s  {:.1} seeds/s  {:.2} M events/s", polls / 1e6, seeds, events / 1e6);
}

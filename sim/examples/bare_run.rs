//! Runs the bare executor workload for a number of seeds and prints its figures: a fixed
//! amount of work to count instructions over (`valgrind --tool=callgrind`), which `bench`'s
//! timed windows are not.
//!
//! `cargo run --release -p sutra-sim-core --example bare_run -- [SEEDS] [EMIT_EVERY]`
//! (defaults: 20 seeds, an event on every poll, as `bench`'s events-per-second ceiling).

use sutra_sim_core::bench::measure_bare_emitting;

fn main() {
    let mut args = std::env::args().skip(1);
    let seeds: u64 = args.next().map_or(20, |a| a.parse().expect("SEEDS is a number"));
    let emit_every: u32 = args.next().map_or(1, |a| a.parse().expect("EMIT_EVERY is a number"));
    let figures = measure_bare_emitting(seeds, emit_every);
    println!(
        "{} seeds, {} polls, {} events, {:.0} events/s",
        figures.seeds, figures.polls, figures.events, figures.events_per_second
    );
}

//! The bare executor benchmark: the simulator alone, on a trivial workload.
//!
//! A scenario's seeds per second only mean something next to the ceiling set by the
//! executor itself (DESIGN §12): how fast can it poll tasks, fire timers and draw entropy
//! when the model does almost nothing? [`bare_workload`] is that workload — many tasks that
//! sleep random virtual durations and bump a shared counter, the same shape as the madsim
//! side-by-side in `peers/` — and [`measure_bare`] times it.
//!
//! The wall clock is read here, and only here, to measure the simulated world from the
//! outside; nothing inside the world sees it, so determinism is untouched.

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::executor::{self, sleep};
use crate::run::{simulate, Outcome, RunConfig};
use crate::trace::EventKind;

/// Tasks spawned by [`bare_workload`].
pub const BARE_TASKS: u32 = 100;
/// Sleep-and-update iterations each task runs.
pub const BARE_ITERATIONS: u32 = 100;
/// Each task emits one event every this many iterations, so the trace and the fingerprint
/// carry the schedule without the event path dominating the measurement.
pub const BARE_EMIT_EVERY: u32 = 10;
/// Sleeps last 1 to this many virtual milliseconds; a small range makes deadlines collide,
/// so several tasks are ready at once and the strategy has real picks to make.
pub const BARE_SLEEP_MS_MAX: u32 = 10;

/// The one event of the bare workload: a task passed an emit point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BareTick {
    /// Which task.
    pub task: u32,
    /// The shared counter as that task saw it.
    pub counter: u64,
}

impl EventKind for BareTick {
    fn name(&self) -> &'static str {
        "bare-tick"
    }
}

/// Runs the bare workload for one seed with the random strategy and no checker:
/// [`BARE_TASKS`] tasks, each [`BARE_ITERATIONS`] times sleeping 1..=[`BARE_SLEEP_MS_MAX`]
/// virtual ms (a model draw), then bumping a shared counter, emitting a [`BareTick`] every
/// [`BARE_EMIT_EVERY`] iterations.
pub fn bare_workload(seed: u64) -> Outcome<BareTick> {
    bare_workload_with(&RunConfig::seeded(seed))
}

/// [`bare_workload`] under a given run configuration (another strategy, a replayed tape,
/// a kept trace).
pub fn bare_workload_with(config: &RunConfig) -> Outcome<BareTick> {
    bare_workload_emitting(config, BARE_EMIT_EVERY)
}

/// The bare workload emitting one event every `emit_every` iterations: with 1, every poll
/// emits, which gives the executor's ceiling in events per second (trace included).
pub fn bare_workload_emitting(config: &RunConfig, emit_every: u32) -> Outcome<BareTick> {
    assert!(emit_every >= 1, "emit_every must be at least 1");
    simulate(config, Vec::new(), |tracer| {
        let counter = Rc::new(Cell::new(0u64));
        for task in 0..BARE_TASKS {
            let tracer = tracer.clone();
            let counter = counter.clone();
            executor::spawn(format!("bare{task}"), async move {
                for i in 0..BARE_ITERATIONS {
                    let ms = 1 + u64::from(executor::choose(BARE_SLEEP_MS_MAX));
                    sleep(Duration::from_millis(ms)).await;
                    counter.set(counter.get() + 1);
                    if i % emit_every == emit_every - 1 {
                        tracer.emit(BareTick { task, counter: counter.get() });
                    }
                }
            });
        }
    })
}

/// Throughput of the bare workload over a number of seeds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BareFigures {
    /// Seeds run.
    pub seeds: u64,
    /// Task polls over all seeds.
    pub polls: u64,
    /// Trace events over all seeds.
    pub events: u64,
    /// Wall-clock time taken, in seconds.
    pub wall_seconds: f64,
    /// Task polls per wall-clock second.
    pub polls_per_second: f64,
    /// Whole runs per wall-clock second.
    pub seeds_per_second: f64,
    /// Trace events per wall-clock second.
    pub events_per_second: f64,
}

/// Runs [`bare_workload`] for seeds `0..seeds` on this thread and reports the rates.
///
/// Panics if a run does not pass: a broken workload would make the figures meaningless.
pub fn measure_bare(seeds: u64) -> BareFigures {
    measure_bare_emitting(seeds, BARE_EMIT_EVERY)
}

/// As [`measure_bare`], emitting an event every `emit_every` iterations (1: every poll).
pub fn measure_bare_emitting(seeds: u64, emit_every: u32) -> BareFigures {
    assert!(seeds > 0, "measuring needs at least one seed");
    let mut polls = 0u64;
    let mut events = 0u64;
    let start = Instant::now();
    for seed in 0..seeds {
        let outcome = bare_workload_emitting(&RunConfig::seeded(seed), emit_every);
        assert!(outcome.verdict.is_pass(), "bare workload seed {seed} did not pass: {}", outcome.verdict);
        polls += outcome.polls;
        events += outcome.events;
    }
    // Never zero, so the rates stay finite even on a coarse clock.
    let wall_seconds = start.elapsed().as_secs_f64().max(1e-9);
    BareFigures {
        seeds,
        polls,
        events,
        wall_seconds,
        polls_per_second: polls as f64 / wall_seconds,
        seeds_per_second: seeds as f64 / wall_seconds,
        events_per_second: events as f64 / wall_seconds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bare_workload_passes_and_polls_every_iteration() {
        let out = bare_workload(7);
        assert!(out.verdict.is_pass());
        assert_eq!(out.events, u64::from(BARE_TASKS * BARE_ITERATIONS / BARE_EMIT_EVERY));
        // One poll per sleep plus the final poll that ends each task.
        assert_eq!(out.polls, u64::from(BARE_TASKS * (BARE_ITERATIONS + 1)));
        assert_eq!(out.fingerprint, bare_workload(7).fingerprint);
    }

    #[test]
    fn the_bare_workloads_event_is_named_as_traces_print_it() {
        assert_eq!(BareTick { task: 0, counter: 0 }.name(), "bare-tick");
    }

    #[test]
    fn the_rates_are_the_counts_over_the_same_wall_time() {
        // No timing is asserted: only that each rate is its count divided by the one clock reading.
        let figures = measure_bare_emitting(2, BARE_EMIT_EVERY);
        let runs = [0, 1].map(|seed| bare_workload_emitting(&RunConfig::seeded(seed), BARE_EMIT_EVERY));
        assert_eq!(figures.polls, runs[0].polls + runs[1].polls);
        assert_eq!(figures.events, runs[0].events + runs[1].events);
        let close = |rate: f64, count: u64| (rate * figures.wall_seconds - count as f64).abs() <= 1e-6 * count as f64;
        assert!(close(figures.polls_per_second, figures.polls), "{figures:?}");
        assert!(close(figures.seeds_per_second, figures.seeds), "{figures:?}");
        assert!(close(figures.events_per_second, figures.events), "{figures:?}");
    }

    #[test]
    fn the_bare_workload_schedule_is_pinned() {
        // The executor's hot path is tuned by hand; these pins catch a tuning that changes
        // which task runs when (the fingerprint covers every event's time and content, the
        // tape every draw). Values from the executor before any tuning. A change here must
        // be a deliberate change of semantics, noted where the pin is updated.
        // Updated once: the fingerprint's hash became a word-at-a-time fold (the event path
        // is hot); the tapes, i.e. the schedules, did not change.
        let fnv = |tape: &crate::entropy::Tape| {
            tape.0.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| (h ^ u64::from(x)).wrapping_mul(0x0000_0100_0000_01b3))
        };
        let random = bare_workload(0);
        assert_eq!((random.fingerprint, fnv(&random.tape)), (0x44bf_dafb_716c_84ff, 0xe873_d2fc_c8cc_a61e));
        let mut config = RunConfig::seeded(0);
        config.strategy = crate::strategy::StrategyConfig::Pct { depth: 3, horizon: 2_000 };
        let pct = bare_workload_with(&config);
        assert_eq!((pct.fingerprint, fnv(&pct.tape)), (0x709c_e10f_a323_2ae5, 0xb3ca_7c34_2ab4_1618));
    }
}

//! Saving a sweep's failures as reproducers (`sweep --save-failures DIR`): failing seeds
//! become files, shrunk first unless asked not to, written atomically, and the report's
//! failure then names the file and replays with `sutra-sim replay FILE`.
//!
//! Everything here is bounded, because a mutant can fail every seed of a night: at most
//! [`SaveFailures::max`] files are written (by default [`SAVED_FAILURES_DEFAULT`]) — first
//! one per distinct failing checker, so every kind of failure gets a reproducer, then the
//! rest in report order. Shrinking is the slow part (up to its time budget per failure),
//! so only the first [`SHRUNK_FAILURES_MAX`] of those are shrunk, on the sweep's worker
//! threads, and the others are saved as recorded, with a note saying so. The sweep's time
//! budget and a stop request (a signal) cover this phase too: once either ends, shrinks in
//! progress return their best so far and the remaining files are saved unshrunk.
//!
//! Every file goes inside the directory given: its name is built from the scenario name
//! (an identifier, checked when the scenario is loaded), the seed and the mutant name.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sutra_sim_core::EntropyMode;
use sutra_sim_shrink::Limits;

use crate::report::{Failure, SweepReport};
use crate::reproducer::Reproducer;
use crate::shrinking::{shrink_failure_until, FailingRun};
use crate::sweep::SweepPlan;

/// Most failures one sweep shrinks before saving; later ones are saved as recorded.
pub const SHRUNK_FAILURES_MAX: usize = 16;

/// Wall-clock budget for shrinking each failure of a sweep.
pub const SHRINK_BUDGET_PER_FAILURE: Duration = Duration::from_secs(10);

/// Reproducers a sweep saves unless `--save-failures-max` says otherwise.
pub const SAVED_FAILURES_DEFAULT: usize = 64;

/// How to save a sweep's failures.
#[derive(Clone, Debug)]
pub struct SaveFailures {
    /// The directory (created if missing).
    pub dir: PathBuf,
    /// Shrink failures before saving them.
    pub shrink: bool,
    /// Worker threads for shrinking.
    pub jobs: usize,
    /// Most files to write.
    pub max: usize,
    /// When the sweep's time budget runs out, if it has one: no shrinking after it.
    pub deadline: Option<Instant>,
}

/// What [`save_failures`] could not do, one line per failure it could not save.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SaveErrors(pub Vec<String>);

/// The indices of the failures to save, in the order they are handled: the first failure
/// of each distinct checker, then the others in report order, at most `max`.
///
/// A seed that ran differently when run again ([`crate::sweep::DETERMINISM`]) is not saved:
/// its reproducer could not promise to reproduce anything; its replay line re-checks it.
pub fn chosen(failures: &[Failure], max: usize) -> Vec<usize> {
    let savable: Vec<usize> =
        (0..failures.len()).filter(|&i| failures[i].checker != crate::sweep::DETERMINISM).collect();
    let mut seen = std::collections::BTreeSet::new();
    let firsts: Vec<usize> = savable.iter().copied().filter(|&i| seen.insert(failures[i].checker.as_str())).collect();
    let rest = savable.into_iter().filter(|i| !firsts.contains(i));
    firsts.iter().copied().chain(rest).take(max).collect()
}

/// Saves reproducers of (at most `options.max`) failures of `report` into `options.dir`,
/// and records each path (and its replay command) in the report. `stop` and
/// `options.deadline` end shrinking early. A directory that cannot be created is an
/// error; a file that cannot be written is listed in the returned errors and the others
/// are still saved.
pub fn save_failures(
    plan: &SweepPlan,
    report: &mut SweepReport,
    options: &SaveFailures,
    stop: &AtomicBool,
) -> Result<SaveErrors, String> {
    let chosen = chosen(&report.failures, options.max);
    if chosen.is_empty() {
        return Ok(SaveErrors::default());
    }
    std::fs::create_dir_all(&options.dir).map_err(|e| format!("cannot create {}: {e}", options.dir.display()))?;
    let next = AtomicUsize::new(0);
    let made: Mutex<Vec<Option<Reproducer>>> = Mutex::new(vec![None; chosen.len()]);
    let failures = &report.failures;
    // Shrinks in progress watch this: set by a stop request or when the deadline passes.
    let give_up = AtomicBool::new(false);
    let over = || stop.load(Ordering::Relaxed) || options.deadline.is_some_and(|d| Instant::now() >= d);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..options.jobs.max(1))
            .map(|_| {
                scope.spawn(|| loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&i) = chosen.get(k) else { return };
                    let how = if !options.shrink {
                        Err("saved as recorded (--no-shrink)")
                    } else if k >= SHRUNK_FAILURES_MAX {
                        Err("saved as recorded: a sweep shrinks only its first failures")
                    } else if stop.load(Ordering::Relaxed) {
                        Err("saved as recorded: the sweep was stopped before shrinking it")
                    } else if let Some(left) = options.deadline.map(|d| d.saturating_duration_since(Instant::now())) {
                        if left.is_zero() {
                            Err("saved as recorded: the time budget ran out before shrinking it")
                        } else {
                            Ok(left.min(SHRINK_BUDGET_PER_FAILURE))
                        }
                    } else {
                        Ok(SHRINK_BUDGET_PER_FAILURE)
                    };
                    let reproducer = reproducer_of(plan, &failures[i], how, &give_up);
                    made.lock().expect("no worker panics while holding the lock")[k] = Some(reproducer);
                })
            })
            .collect();
        while !workers.iter().all(|w| w.is_finished()) {
            if over() {
                give_up.store(true, Ordering::Relaxed);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    });
    let made = made.into_inner().expect("workers are done");
    let mut errors = SaveErrors::default();
    for (&i, reproducer) in chosen.iter().zip(made) {
        let reproducer = reproducer.expect("every chosen failure got a reproducer");
        let failure = &mut report.failures[i];
        let stem = crate::reproducer::file_stem(&failure.scenario, failure.seed, plan.mutant);
        match reproducer.save_in(&options.dir, &stem) {
            Ok(path) => {
                failure.replay = crate::replay::replay_file_command(&path);
                failure.reproducer = Some(path.display().to_string());
            }
            Err(e) => errors.0.push(e.0),
        }
    }
    Ok(errors)
}

/// A reproducer of one failure: shrunk within the budget given (`Ok`), or as recorded
/// (`Err(why)`). `give_up` ends a shrink in progress with its best so far.
fn reproducer_of(
    plan: &SweepPlan,
    failure: &Failure,
    shrink: Result<Duration, &str>,
    give_up: &AtomicBool,
) -> Reproducer {
    let scenario = plan
        .scenarios
        .iter()
        .find(|s| s.name == failure.scenario)
        .expect("a sweep's failures come from its scenarios")
        .clone();
    let mut run =
        FailingRun::from_seed(scenario, failure.seed, plan.mutant, plan.strategy).with_checkers(plan.checkers.clone());
    // A run grown by exploration replays from its tape and strategy; its seed alone would not.
    if let Some(grown) = &failure.grown {
        run.tape = Some(grown.tape.clone());
        run.strategy = grown.strategy;
    }
    match shrink {
        Ok(budget) => {
            let limits = Limits { time_budget: budget, ..Limits::default() };
            match shrink_failure_until(&run, limits, give_up) {
                Ok(shrunk) => shrunk.reproducer,
                Err(why) => recorded(&run, &format!("not shrunk: {why}")),
            }
        }
        Err(why) => recorded(&run, why),
    }
}

/// The failure as the sweep ran it, unshrunk.
fn recorded(run: &FailingRun, why: &str) -> Reproducer {
    let entropy = run.tape.clone().map_or(EntropyMode::Seed(run.seed), EntropyMode::Tape);
    let outcome =
        run.run(&run.scenario, entropy, false).expect("a sweep's checkers resolve its scenarios before the first seed");
    let note = format!(
        "{} {} {}{}: found by a sweep of sutra-sim {}; {why}",
        run.scenario.name,
        if run.tape.is_some() { "explored run of child seed" } else { "seed" },
        run.seed,
        run.mutant.map(|m| format!(" with mutant {}", m.name())).unwrap_or_default(),
        crate::VERSION
    );
    Reproducer::record(&run.recorded_scenario(&run.scenario), run.seed, run.strategy, run.mutant, &outcome, note)
}

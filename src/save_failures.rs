//! Saving a sweep's failures as reproducers (`sweep --save-failures DIR`): every failing
//! seed becomes one file, shrunk first unless asked not to, written atomically, and the
//! report's failure then names the file and replays with `sutra-sim replay FILE`.
//!
//! Shrinking is the slow part (up to its time budget per failure), so a sweep shrinks at
//! most [`SHRUNK_FAILURES_MAX`] failures — the first ones in report order — on the sweep's
//! worker threads, and saves the others as recorded, with a note saying so. A stop request
//! (a signal) ends shrinking: the remaining failures are saved unshrunk, but saved.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use sutra_sim_core::EntropyMode;
use sutra_sim_shrink::Limits;

use crate::report::{Failure, SweepReport};
use crate::reproducer::Reproducer;
use crate::shrinking::{shrink_failure, FailingRun};
use crate::sweep::SweepPlan;

/// Most failures one sweep shrinks before saving; later ones are saved as recorded.
pub const SHRUNK_FAILURES_MAX: usize = 16;

/// Wall-clock budget for shrinking each failure of a sweep.
pub const SHRINK_BUDGET_PER_FAILURE: Duration = Duration::from_secs(10);

/// How to save a sweep's failures.
#[derive(Clone, Debug)]
pub struct SaveFailures {
    /// The directory (created if missing).
    pub dir: PathBuf,
    /// Shrink failures before saving them.
    pub shrink: bool,
    /// Worker threads for shrinking.
    pub jobs: usize,
}

/// The name stem of a failure's file: `SCENARIO-seed-N[-MUTANT]`.
pub fn file_stem(plan: &SweepPlan, failure: &Failure) -> String {
    let mut stem = format!("{}-seed-{}", failure.scenario, failure.seed);
    if let Some(m) = plan.mutant {
        stem.push('-');
        stem.push_str(m.name());
    }
    stem
}

/// The command that replays a saved reproducer.
pub fn replay_command(path: &Path) -> String {
    format!("sutra-sim replay {}", path.display())
}

/// Saves one reproducer per failure of `report` into `options.dir`, and records each path
/// (and its replay command) in the report. `stop` ends shrinking early.
pub fn save_failures(
    plan: &SweepPlan,
    report: &mut SweepReport,
    options: &SaveFailures,
    stop: &AtomicBool,
) -> Result<(), String> {
    if report.failures.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(&options.dir).map_err(|e| format!("cannot create {}: {e}", options.dir.display()))?;
    let next = AtomicUsize::new(0);
    let made: Mutex<Vec<Option<Reproducer>>> = Mutex::new(vec![None; report.failures.len()]);
    let failures = &report.failures;
    std::thread::scope(|scope| {
        for _ in 0..options.jobs.max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(failure) = failures.get(i) else { return };
                let plan_for_it = if !options.shrink {
                    Err("saved as recorded (--no-shrink)")
                } else if i >= SHRUNK_FAILURES_MAX {
                    Err("saved as recorded: a sweep shrinks only its first failures")
                } else if stop.load(Ordering::Relaxed) {
                    Err("saved as recorded: the sweep was stopped before shrinking it")
                } else {
                    Ok(())
                };
                let reproducer = reproducer_of(plan, failure, plan_for_it);
                made.lock().expect("no worker panics while holding the lock")[i] = Some(reproducer);
            });
        }
    });
    let made = made.into_inner().expect("workers are done");
    for (failure, reproducer) in report.failures.iter_mut().zip(made) {
        let reproducer = reproducer.expect("every failure got a reproducer");
        let path = reproducer.save_in(&options.dir, &file_stem(plan, failure)).map_err(|e| e.0)?;
        failure.replay = replay_command(&path);
        failure.reproducer = Some(path.display().to_string());
    }
    Ok(())
}

/// A reproducer of one failure: shrunk (`Ok`), or as recorded (`Err(why)`).
fn reproducer_of(plan: &SweepPlan, failure: &Failure, shrink: Result<(), &str>) -> Reproducer {
    let scenario = plan
        .scenarios
        .iter()
        .find(|s| s.name == failure.scenario)
        .expect("a sweep's failures come from its scenarios")
        .clone();
    let run =
        FailingRun::from_seed(scenario, failure.seed, plan.mutant, plan.strategy).with_checkers(plan.checkers.clone());
    match shrink {
        Ok(()) => {
            let limits = Limits { time_budget: SHRINK_BUDGET_PER_FAILURE, ..Limits::default() };
            match shrink_failure(&run, limits) {
                Ok(shrunk) => shrunk.reproducer,
                Err(why) => recorded(&run, &format!("not shrunk: {why}")),
            }
        }
        Err(why) => recorded(&run, why),
    }
}

/// The failure as the sweep ran it, unshrunk.
fn recorded(run: &FailingRun, why: &str) -> Reproducer {
    let outcome = run
        .run(&run.scenario, EntropyMode::Seed(run.seed), false)
        .expect("a sweep's checkers resolve its scenarios before the first seed");
    let note = format!(
        "{} seed {}{}: found by a sweep of sutra-sim {}; {why}",
        run.scenario.name,
        run.seed,
        run.mutant.map(|m| format!(" with mutant {}", m.name())).unwrap_or_default(),
        crate::VERSION
    );
    Reproducer::record(&run.recorded_scenario(&run.scenario), run.seed, run.strategy, run.mutant, &outcome, note)
}

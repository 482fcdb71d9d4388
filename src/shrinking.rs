//! Shrinking a failing Sutra run (DESIGN.md §9) with the generic minimiser of
//! `sutra-sim-shrink`: this is the glue that knows what a run is.
//!
//! A candidate is the scenario's knobs ([`crate::knobs`]) and an entropy tape. The
//! property runs the scenario the knobs describe on the tape and keeps the candidate if
//! the run fails with the same verdict class and checker as the original — the message may
//! change (it names instances and times), the failure may not — and if the run has no more
//! events than the best so far, so a shrunk story is never longer. What the shrinker keeps is
//! what ran: the tape the run actually drew, trimmed of trailing zeros, so the result
//! replays bit for bit. The shrunk run is run once more at the end, and its verdict and
//! fingerprint become the reproducer's.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use sutra_sim_core::{EntropyMode, Outcome, StrategyConfig, Tape, Verdict};
use sutra_sim_model::{ModelEvent, Mutant, RunOptions, Scenario};
use sutra_sim_shrink::{Candidate, Limits, Property, Ran, Stop};

use crate::fault_events::count_faults;
use crate::knobs;
use crate::plugin::CheckerSet;
use crate::reproducer::{trimmed, Origin, Reproducer};

/// Seeds tried for a smaller scenario when the current tape no longer fails in it.
pub const KNOB_RESEEDS: u32 = 32;

/// A failing run to shrink.
#[derive(Clone, Debug)]
pub struct FailingRun {
    /// Its scenario.
    pub scenario: Scenario,
    /// Its seed (kept in the reproducer for the fallback).
    pub seed: u64,
    /// Its strategy.
    pub strategy: StrategyConfig,
    /// Its mutant.
    pub mutant: Option<Mutant>,
    /// Its tape, if it was recorded; otherwise the seed is run.
    pub tape: Option<Tape>,
    /// The scenario the seed first failed in, if it is not `scenario` (an already shrunk
    /// reproducer).
    pub origin: Option<Scenario>,
    /// The checkers that judged it, and judge every shrunk candidate.
    pub checkers: CheckerSet,
}

impl FailingRun {
    /// A seed of a scenario, with the scenario's strategy unless `strategy` overrides it.
    pub fn from_seed(
        scenario: Scenario,
        seed: u64,
        mutant: Option<Mutant>,
        strategy: Option<StrategyConfig>,
    ) -> FailingRun {
        let strategy = strategy.unwrap_or_else(|| scenario.strategy());
        FailingRun { scenario, seed, strategy, mutant, tape: None, origin: None, checkers: CheckerSet::built_in() }
    }

    /// The same run, judged by `checkers`.
    pub fn with_checkers(mut self, checkers: CheckerSet) -> FailingRun {
        self.checkers = checkers;
        self
    }

    /// The run a reproducer recorded.
    pub fn from_reproducer(r: &Reproducer) -> FailingRun {
        FailingRun {
            scenario: r.scenario.clone(),
            seed: r.seed,
            strategy: r.strategy,
            mutant: r.mutant,
            tape: Some(r.tape.clone()),
            origin: r.origin.as_ref().map(|o| o.scenario.clone()),
            checkers: CheckerSet::built_in(),
        }
    }

    /// Runs `scenario` as this run did: its strategy, mutant and checkers.
    pub fn run(
        &self,
        scenario: &Scenario,
        entropy: EntropyMode,
        keep_trace: bool,
    ) -> Result<Outcome<ModelEvent>, String> {
        let options = RunOptions { entropy, strategy: Some(self.strategy), mutant: self.mutant, keep_trace };
        self.checkers.run(scenario, &options).map_err(|e| e.0)
    }

    /// `scenario` as a reproducer records it: with the checkers that judged the run named
    /// in `run.checkers` when they are not the ones the scenario selects by itself (the
    /// command line's `--checker` and `--skip-checker`, or a program's own checkers), so a
    /// replay is judged by the same ones.
    pub fn recorded_scenario(&self, scenario: &Scenario) -> Scenario {
        let mut recorded = scenario.clone();
        if let Ok(used) = self.checkers.names_for(scenario) {
            if CheckerSet::built_in().names_for(scenario).ok().as_ref() != Some(&used) {
                recorded.run.checkers = used;
            }
        }
        recorded
    }
}

/// What a shrink did, with the figures of DESIGN.md §10 (`shrink --json`).
#[derive(Clone, Debug)]
pub struct ShrinkResult {
    /// The shrunk run, recorded.
    pub reproducer: Reproducer,
    /// The failing checker (or the verdict class for hangs, budgets and crashes).
    pub checker: String,
    /// Events of the run before and after.
    pub events_before: u64,
    /// Events of the shrunk run.
    pub events_after: u64,
    /// Tape length (draws) before.
    pub tape_before: usize,
    /// Tape length (draws) after.
    pub tape_after: usize,
    /// Fault events ([`crate::fault_events`]) before.
    pub faults_before: u64,
    /// Fault events after.
    pub faults_after: u64,
    /// The scenario knobs that moved, `name before→after`.
    pub knob_changes: Vec<String>,
    /// Runs made while shrinking.
    pub oracle_calls: u64,
    /// Why shrinking stopped.
    pub stop: Stop,
    /// Wall-clock time of the whole shrink.
    pub wall: Duration,
}

/// Keeps candidates that fail with the same verdict class and checker.
struct SameFailure<'a> {
    run: &'a FailingRun,
    /// When set, every candidate is refused, so the shrinker returns its best so far.
    give_up: &'a AtomicBool,
    class: &'static str,
    checker: String,
}

impl SameFailure<'_> {
    fn matches(&self, verdict: &Verdict) -> bool {
        verdict.class() == self.class && verdict.checker() == Some(self.checker.as_str())
    }
}

impl SameFailure<'_> {
    /// Runs the scenario of `knobs` with `entropy`; what ran, if it failed the same way.
    /// Its cost is its events: what a person reads in its story and timeline.
    fn try_run(&self, knobs: &[u32], entropy: EntropyMode) -> Option<Ran> {
        if self.give_up.load(Ordering::Relaxed) {
            return None;
        }
        let scenario = knobs::apply(&self.run.scenario, knobs)?;
        let outcome = self.run.run(&scenario, entropy, false).ok()?;
        self.matches(&outcome.verdict)
            .then(|| Ran { candidate: Candidate::new(knobs.to_vec(), trimmed(&outcome.tape).0), cost: outcome.events })
    }
}

impl Property for SameFailure<'_> {
    fn still_fails(&mut self, candidate: &Candidate) -> Option<Ran> {
        self.try_run(&candidate.knobs, EntropyMode::Tape(Tape(candidate.tape.clone())))
    }

    fn reseeds(&self) -> u32 {
        KNOB_RESEEDS
    }

    /// Seeds `seed`, `seed + 1`, … of the smaller scenario: a failure that needs a rare
    /// interleaving in a small world is found by trying a few, where the old tape, read by
    /// different decisions now, rarely finds it.
    fn still_fails_reseeded(&mut self, candidate: &Candidate, attempt: u32) -> Option<Ran> {
        self.try_run(&candidate.knobs, EntropyMode::Seed(self.run.seed.wrapping_add(u64::from(attempt))))
    }
}

/// Shrinks a failing run within `limits`. Errors if the run does not fail, or if the
/// shrunk run does not fail the same way when run again (nondeterminism: a bug).
pub fn shrink_failure(run: &FailingRun, limits: Limits) -> Result<ShrinkResult, String> {
    shrink_failure_until(run, limits, &AtomicBool::new(false))
}

/// As [`shrink_failure`], ending early (with the best run so far) once `give_up` is set:
/// a sweep's signal or time budget covers the shrinking of its failures too.
pub fn shrink_failure_until(run: &FailingRun, limits: Limits, give_up: &AtomicBool) -> Result<ShrinkResult, String> {
    let started = Instant::now();
    let entropy = match &run.tape {
        Some(tape) => EntropyMode::Tape(tape.clone()),
        None => EntropyMode::Seed(run.seed),
    };
    let before = run.run(&run.scenario, entropy, true)?;
    let checker = match before.verdict.checker() {
        Some(c) => c.to_string(),
        None => return Err("the run passes: there is no failure to shrink".into()),
    };
    let mut property = SameFailure { run, give_up, class: before.verdict.class(), checker: checker.clone() };
    let initial = Candidate::new(knobs::read(&run.scenario), trimmed(&before.tape).0);
    let shrunk = sutra_sim_shrink::shrink(initial.clone(), &mut property, limits).map_err(|_| {
        if give_up.load(Ordering::Relaxed) {
            "stopped before shrinking began".to_string()
        } else {
            "the run fails, but not when its own tape is replayed: the model is nondeterministic".to_string()
        }
    })?;
    let scenario = knobs::apply(&run.scenario, &shrunk.candidate.knobs).expect("the shrinker keeps only valid knobs");
    let after = run.run(&scenario, EntropyMode::Tape(Tape(shrunk.candidate.tape.clone())), true)?;
    if !property.matches(&after.verdict) {
        return Err(format!(
            "the shrunk run does not fail the same way when run again ({}): the model is nondeterministic",
            after.verdict
        ));
    }
    let knob_changes = knobs::describe_changes(&run.scenario, &scenario);
    let faults_before = count_faults(before.trace.iter().map(|e| &e.kind));
    let faults_after = count_faults(after.trace.iter().map(|e| &e.kind));
    // Tape lengths are those a reproducer stores: without trailing zeros.
    let (tape_before, tape_after) = (initial.tape.len(), shrunk.candidate.tape.len());
    let wall = started.elapsed();
    let note = format!(
        // No wall-clock time in the note: the same failure shrunk twice writes the same bytes.
        "{} seed {}{}: shrunk by sutra-sim {} from {} events, {} draws, {} faults to {} events, {} draws, {} faults{} ({} runs, {})",
        run.origin.as_ref().unwrap_or(&run.scenario).name,
        run.seed,
        run.mutant.map(|m| format!(" with mutant {}", m.name())).unwrap_or_default(),
        crate::VERSION,
        before.events,
        tape_before,
        faults_before,
        after.events,
        tape_after,
        faults_after,
        if knob_changes.is_empty() { String::new() } else { format!("; scenario: {}", knob_changes.join(", ")) },
        shrunk.oracle_calls,
        shrunk.stop.as_str(),
    );
    let recorded = run.recorded_scenario(&scenario);
    let mut reproducer = Reproducer::record(&recorded, run.seed, run.strategy, run.mutant, &after, note);
    let origin = run.recorded_scenario(run.origin.as_ref().unwrap_or(&run.scenario));
    if origin != recorded {
        reproducer.origin = Some(Origin { scenario: origin });
    }
    Ok(ShrinkResult {
        reproducer,
        checker,
        events_before: before.events,
        events_after: after.events,
        tape_before,
        tape_after,
        faults_before,
        faults_after,
        knob_changes,
        oracle_calls: shrunk.oracle_calls,
        stop: shrunk.stop,
        wall,
    })
}

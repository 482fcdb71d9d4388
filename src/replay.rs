//! Replaying a reproducer: run its tape and judge whether the recorded run came back.
//!
//! A replay **reproduces** when the verdict class, checker, message, event count and
//! fingerprint all equal the recorded ones. Anything else means the tape no longer drives
//! the model the way it did — the model or a checker changed since it was recorded — and
//! the reproducer is **stale**: the differences are listed and the seed is re-run as the
//! fallback (in the scenario it first failed in), and both results are shown. A stale
//! reproducer is never reported as a pass, whatever the fallback says.

use sutra_sim_core::{EntropyMode, Outcome};
use sutra_sim_model::{ModelEvent, RunOptions};

use crate::plugin::CheckerSet;
use crate::reproducer::{Expected, Reproducer};

/// How a replay went.
pub enum Reproduction {
    /// Verdict, checker, message, events and fingerprint are the recorded ones.
    Reproduced,
    /// The tape no longer reproduces the recorded run.
    Stale {
        /// What differs, one line each (`fingerprint: recorded … , now …`).
        differences: Vec<String>,
        /// The seed re-run in the scenario it first failed in.
        fallback: Box<Outcome<ModelEvent>>,
    },
}

/// A replayed reproducer.
pub struct Replay {
    /// The run of the tape (with its trace, if asked for).
    pub outcome: Outcome<ModelEvent>,
    /// Whether it is the recorded run.
    pub reproduction: Reproduction,
}

impl Replay {
    /// True if the recorded run came back exactly.
    pub fn reproduced(&self) -> bool {
        matches!(self.reproduction, Reproduction::Reproduced)
    }
}

/// Runs the reproducer's tape in its scenario, with its strategy and mutant, judged by
/// `checkers` (the command line's are [`CheckerSet::built_in`]). Errors if the scenario
/// names a checker the set does not know.
pub fn run_tape(
    reproducer: &Reproducer,
    checkers: &CheckerSet,
    keep_trace: bool,
) -> Result<Outcome<ModelEvent>, String> {
    let options = RunOptions {
        entropy: EntropyMode::Tape(reproducer.tape.clone()),
        strategy: Some(reproducer.strategy),
        mutant: reproducer.mutant,
        keep_trace,
    };
    checkers.run(&reproducer.scenario, &options).map_err(|e| e.0)
}

/// Runs the reproducer's seed in the scenario it first failed in (the fallback).
pub fn run_seed(reproducer: &Reproducer, checkers: &CheckerSet) -> Result<Outcome<ModelEvent>, String> {
    let options = RunOptions {
        entropy: EntropyMode::Seed(reproducer.seed),
        strategy: Some(reproducer.strategy),
        mutant: reproducer.mutant,
        keep_trace: false,
    };
    checkers.run(reproducer.seed_scenario(), &options).map_err(|e| e.0)
}

/// Replays a reproducer, judged by `checkers`, and says whether the recorded run came back.
pub fn replay(reproducer: &Reproducer, checkers: &CheckerSet, keep_trace: bool) -> Result<Replay, String> {
    let outcome = run_tape(reproducer, checkers, keep_trace)?;
    let differences = differences(reproducer, &outcome);
    let reproduction = if differences.is_empty() {
        Reproduction::Reproduced
    } else {
        Reproduction::Stale { differences, fallback: Box::new(run_seed(reproducer, checkers)?) }
    };
    Ok(Replay { outcome, reproduction })
}

/// What differs between the recorded run and `outcome`, one line each.
pub fn differences(reproducer: &Reproducer, outcome: &Outcome<ModelEvent>) -> Vec<String> {
    let now = Expected::of(outcome);
    let recorded = &reproducer.expected;
    let mut out = Vec::new();
    if (&now.verdict, &now.checker, &now.message) != (&recorded.verdict, &recorded.checker, &recorded.message) {
        out.push(format!("verdict: recorded {}, now {}", recorded.describe(), now.describe()));
    }
    if now.events != recorded.events {
        out.push(format!("events: recorded {}, now {}", recorded.events, now.events));
    }
    if outcome.fingerprint != reproducer.fingerprint {
        out.push(format!("fingerprint: recorded {:016x}, now {:016x}", reproducer.fingerprint, outcome.fingerprint));
    }
    out
}

/// The one command line that reruns a seed: `sutra-sim run --scenario S --seed N` with
/// `--mutant` and `--strategy` when given. `scenario_arg` is what `--scenario` takes — a
/// built-in name or a file path — quoted for a POSIX shell when it needs it, so the line
/// pastes as is. Every replay line of a run, sweep or replay is built here.
pub fn run_command(
    scenario_arg: &str,
    seed: u64,
    mutant: Option<sutra_sim_model::Mutant>,
    strategy: Option<sutra_sim_core::StrategyConfig>,
) -> String {
    let mut cmd = format!("sutra-sim run --scenario {} --seed {seed}", shell_word(scenario_arg));
    if let Some(m) = mutant {
        cmd.push_str(&format!(" --mutant {}", m.name()));
    }
    if let Some(s) = strategy {
        cmd.push_str(&format!(" --strategy {}", s.label()));
    }
    cmd.push_str(&crate::scenario_arg::store_flags());
    cmd
}

/// `word` as one POSIX shell word: unchanged if it is made of safe characters, otherwise
/// in single quotes.
pub fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./:=+@%,".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The command that replays a reproducer file: `sutra-sim replay FILE`, the path quoted
/// for a POSIX shell when it needs it.
pub fn replay_file_command(path: &std::path::Path) -> String {
    format!("sutra-sim replay {}", shell_word(&path.display().to_string()))
}

//! Reproducer files (DESIGN.md §8): one failing run, small, versioned, printable and
//! self-contained — replay needs nothing else.
//!
//! A reproducer is TOML: the format version, the framework version that wrote it, a note
//! for people, the seed, the strategy, the mutant if any, the entropy tape (postcard,
//! base64), a checksum of that recording, the run's fingerprint, the expected verdict, and the complete
//! scenario inline. A shrunk reproducer also keeps the scenario the seed first failed in
//! (`[origin.scenario]`), so that a stale tape can fall back to re-running the seed.
//!
//! Loading validates everything and fails with one line naming the file and what is wrong:
//! not UTF-8, not TOML, the wrong format version, a missing or unknown key, a scenario the
//! rules refuse, a recording that does not decode or does not match its checksum (a
//! corrupted file), or a scenario table with keys missing (a truncated file — the scenario's keys
//! all have defaults, so only completeness tells a cut-off file from a short one).
//!
//! Files are written atomically and never overwrite a different file of the same name:
//! writing the same content again is fine; different content is an error, or — for
//! [`Reproducer::save_in`] — a new name.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sutra_sim_core::{Outcome, StrategyConfig, Tape, Verdict};
use sutra_sim_model::{ModelEvent, Mutant, Scenario};

use crate::files::write_atomically;

/// The reproducer format this build writes and reads. Bump it on any change that an older
/// reader would misread.
pub const FORMAT_VERSION: u32 = 1;

/// Most bytes a reproducer file may hold (64 MiB): tapes of long runs are large, but not
/// this large. A bigger file, or one of unknown size that runs past it, is refused.
pub const REPRODUCER_BYTES_MAX: u64 = 64 << 20;

/// Most names [`Reproducer::save_in`] tries (`NAME.toml`, `NAME-2.toml`, …) before giving up.
pub const NAME_ATTEMPTS_MAX: u32 = 1_000;

/// One failing (or passing) run, recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reproducer {
    /// The reproducer format version ([`FORMAT_VERSION`]).
    pub format: u32,
    /// The version of sutra-sim that wrote it.
    pub framework: String,
    /// For people: where it came from, what it shows.
    pub note: String,
    /// The seed of the run the tape was recorded from. TOML integers are signed 64-bit, and
    /// half of an exploration's child seeds are above `i64::MAX`: those are written as a
    /// decimal string (`seed = "13830585782065312923"`), the others as a number.
    #[serde(with = "seed_number")]
    pub seed: u64,
    /// The scheduling strategy the run used.
    #[serde(with = "strategy_text")]
    pub strategy: StrategyConfig,
    /// The mutant switched on, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutant: Option<Mutant>,
    /// The run's trace fingerprint, which a replay must reproduce.
    #[serde(with = "hex_u64")]
    pub fingerprint: u64,
    /// FNV-1a 64 of the recording — seed, strategy, mutant and tape — which tells a
    /// corrupted file from a stale one (see [`recording_checksum`]).
    #[serde(with = "hex_u64")]
    pub checksum: u64,
    /// Every draw of the run (postcard, base64). Replaying it reproduces the run exactly.
    #[serde(with = "tape_text")]
    pub tape: Tape,
    /// What the run concluded.
    pub expected: Expected,
    /// For a shrunk reproducer: where the seed first failed, before shrinking. (Written
    /// before the scenario, so that a file cut anywhere lacks a required key.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
    /// The complete scenario of the run.
    pub scenario: Scenario,
}

/// The expected verdict of a reproducer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expected {
    /// `pass`, `violation`, `hang`, `budget` or `crash`.
    pub verdict: String,
    /// The failing checker (or the class, for hangs, budgets and crashes); none for a pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checker: Option<String>,
    /// What the checker saw; none for a pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Events judged.
    pub events: u64,
}

impl Expected {
    /// The expectation a run's outcome sets.
    pub fn of(outcome: &Outcome<ModelEvent>) -> Expected {
        Expected::of_verdict(&outcome.verdict, outcome.events)
    }

    /// The expectation of `verdict` after `events` events.
    pub fn of_verdict(verdict: &Verdict, events: u64) -> Expected {
        Expected {
            verdict: verdict.class().to_string(),
            checker: verdict.checker().map(str::to_string),
            message: (!verdict.is_pass()).then(|| verdict.message()),
            events,
        }
    }

    /// True if the expectation is a pass.
    pub fn is_pass(&self) -> bool {
        self.verdict == "pass"
    }

    /// One line: `violation of CHECKER: MESSAGE`, `hang: MESSAGE` or `pass`.
    pub fn describe(&self) -> String {
        match (self.verdict.as_str(), &self.checker, &self.message) {
            ("pass", _, _) => "pass".to_string(),
            ("violation", Some(c), m) => format!("violation of {c}: {}", m.as_deref().unwrap_or("")),
            (class, _, m) => format!("{class}: {}", m.as_deref().unwrap_or("")),
        }
    }

    fn validate(&self) -> Result<(), String> {
        const CLASSES: [&str; 5] = ["pass", "violation", "hang", "budget", "crash"];
        if !CLASSES.contains(&self.verdict.as_str()) {
            return Err(format!("expected.verdict {:?} is not one of {}", self.verdict, CLASSES.join(", ")));
        }
        match (self.is_pass(), &self.checker, &self.message) {
            (true, None, None) => Ok(()),
            (true, _, _) => Err("expected.verdict is pass, so it has no checker or message".into()),
            (false, Some(_), Some(_)) => Ok(()),
            (false, _, _) => Err(format!("expected.verdict is {}, so it needs a checker and a message", self.verdict)),
        }
    }
}

/// Where a shrunk reproducer's seed first failed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Origin {
    /// The scenario before shrinking; with the seed, it reproduces the original failure.
    pub scenario: Scenario,
}

/// A reproducer file that could not be read, written or trusted. Its text is one line
/// naming the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReproducerError(pub String);

impl std::fmt::Display for ReproducerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReproducerError {}

/// What [`Reproducer::save`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Saved {
    /// The file was written.
    Written,
    /// A file with exactly this content was already there.
    AlreadyThere,
}

impl Reproducer {
    /// A reproducer of a run of `scenario` with `seed`, from its outcome. The tape is the
    /// outcome's (what the run drew), without the trailing zeros a replay reads anyway.
    pub fn record(
        scenario: &Scenario,
        seed: u64,
        strategy: StrategyConfig,
        mutant: Option<Mutant>,
        outcome: &Outcome<ModelEvent>,
        note: impl Into<String>,
    ) -> Reproducer {
        let tape = trimmed(&outcome.tape);
        Reproducer {
            format: FORMAT_VERSION,
            framework: crate::VERSION.to_string(),
            note: note.into(),
            seed,
            strategy,
            mutant,
            fingerprint: outcome.fingerprint,
            checksum: recording_checksum(seed, strategy, mutant, &tape),
            tape,
            expected: Expected::of(outcome),
            scenario: scenario.clone(),
            origin: None,
        }
    }

    /// The scenario and seed that reproduce the failure without the tape: the origin's
    /// scenario for a shrunk reproducer, the reproducer's own otherwise.
    pub fn seed_scenario(&self) -> &Scenario {
        self.origin.as_ref().map_or(&self.scenario, |o| &o.scenario)
    }

    /// The file's text: a comment saying how to replay it, then the TOML.
    pub fn to_toml(&self) -> String {
        let body = toml::to_string(self).expect("a reproducer always serialises");
        format!("# A sutra-sim reproducer. Replay it with: sutra-sim replay THIS_FILE\n{body}")
    }

    /// Parses and validates a reproducer's text; `origin` (a file name) starts every error.
    pub fn from_toml(text: &str, origin: &str) -> Result<Reproducer, ReproducerError> {
        let fail = |message: String| ReproducerError(format!("{origin}: {message}"));
        // Read the format first, so that a file of another format says so rather than
        // failing on whatever key changed.
        let table: toml::Table = toml::from_str(text)
            .map_err(|e| fail(format!("{} (a truncated or corrupted file?)", describe_toml_error(text, &e))))?;
        match table.get("format") {
            None => return Err(fail("not a sutra-sim reproducer: it has no `format` key".into())),
            Some(toml::Value::Integer(n)) if *n == i64::from(FORMAT_VERSION) => {}
            Some(other) => {
                return Err(fail(format!(
                    "reproducer format {other} is not supported: sutra-sim {} reads format {FORMAT_VERSION}",
                    crate::VERSION
                )))
            }
        }
        let reproducer: Reproducer = toml::from_str(text).map_err(|e| fail(describe_toml_error(text, &e)))?;
        require_complete(&table, "scenario", &reproducer.scenario).map_err(fail)?;
        if let Some(o) = &reproducer.origin {
            let origin_table = table.get("origin").and_then(|v| v.as_table()).cloned().unwrap_or_default();
            require_complete(&origin_table, "origin.scenario", &o.scenario).map_err(fail)?;
        }
        reproducer.validate().map_err(fail)?;
        Ok(reproducer)
    }

    /// Reads and validates a reproducer file, reading at most [`REPRODUCER_BYTES_MAX`] bytes.
    pub fn load(path: &Path) -> Result<Reproducer, ReproducerError> {
        let text = crate::files::read_text_bounded(path, REPRODUCER_BYTES_MAX, "reproducer", "REPRODUCER_BYTES_MAX")
            .map_err(ReproducerError)?;
        Reproducer::from_toml(&text, &path.display().to_string())
    }

    /// Writes the reproducer to `path` atomically. If a regular file is already there, it
    /// must have exactly this content (then nothing is written); a different file is never
    /// replaced. A character device is written into without being read.
    pub fn save(&self, path: &Path) -> Result<Saved, ReproducerError> {
        let text = self.to_toml();
        let fail = |message: String| ReproducerError(format!("{}: {message}", path.display()));
        // A window remains between this check and the rename below, in which another
        // process could create the file; sutra-sim never writes one name from two places.
        match crate::files::holds_exactly(path, text.as_bytes()) {
            Ok(Some(true)) => return Ok(Saved::AlreadyThere),
            Ok(Some(false)) => return Err(fail("a different file is already there; not overwriting it".into())),
            Ok(None) => {}
            Err(e) => return Err(fail(format!("cannot check the existing file: {e}"))),
        }
        write_atomically(path, text.as_bytes()).map_err(|e| fail(format!("cannot write: {e}")))?;
        Ok(Saved::Written)
    }

    /// Writes the reproducer into `dir` as `STEM.toml`, or `STEM-2.toml`, `STEM-3.toml`, …
    /// if a different file already has the name. Returns the path written (or found with
    /// the same content).
    pub fn save_in(&self, dir: &Path, stem: &str) -> Result<PathBuf, ReproducerError> {
        // Every file goes inside `dir`: the stem must be one plain name, never a path.
        let mut parts = Path::new(stem).components();
        if !matches!((parts.next(), parts.next()), (Some(std::path::Component::Normal(_)), None)) {
            return Err(ReproducerError(format!("{stem:?} is not a plain file name; nothing written")));
        }
        for attempt in 1..=NAME_ATTEMPTS_MAX {
            let name = if attempt == 1 { format!("{stem}.toml") } else { format!("{stem}-{attempt}.toml") };
            let path = dir.join(name);
            match self.save(&path) {
                Ok(_) => return Ok(path),
                Err(_) if path.exists() => continue,
                Err(e) => return Err(e),
            }
        }
        Err(ReproducerError(format!(
            "{}: {NAME_ATTEMPTS_MAX} files named {stem}*.toml are already there",
            dir.display()
        )))
    }

    /// Checks everything a well-formed file can still get wrong.
    fn validate(&self) -> Result<(), String> {
        // Checker names are resolved when the reproducer runs, by the checker set it runs
        // with: a program's own checkers are unknown to the command line.
        self.scenario.validate().map_err(|e| format!("scenario: {e}"))?;
        if let Some(o) = &self.origin {
            o.scenario.validate().map_err(|e| format!("origin.scenario: {e}"))?;
        }
        if recording_checksum(self.seed, self.strategy, self.mutant, &self.tape) != self.checksum {
            return Err(format!(
                "the seed, strategy, mutant and tape do not match their checksum {:016x} (corrupted file?)",
                self.checksum
            ));
        }
        self.expected.validate()
    }
}

/// The name stem of a reproducer of `seed` of `scenario`: `SCENARIO-seed-N[-MUTANT]`, the
/// one naming every saved reproducer (sweeps, `shrink`, `SimTest`). The scenario name is
/// an identifier and the mutant name a known one, so the stem is one plain file name.
pub fn file_stem(scenario: &str, seed: u64, mutant: Option<Mutant>) -> String {
    match mutant {
        Some(m) => format!("{scenario}-seed-{seed}-{}", m.name()),
        None => format!("{scenario}-seed-{seed}"),
    }
}

/// FNV-1a 64 of what a replay and its fallback run from: the seed, the strategy, the
/// mutant and the tape. The scenario is not in it: it is readable and validated, and an
/// edited scenario shows up as a stale replay. Its own hash, part of the file format: the
/// trace fingerprint's hash may change (and say why), the checksum of old files must not.
pub fn recording_checksum(seed: u64, strategy: StrategyConfig, mutant: Option<Mutant>, tape: &Tape) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut fold = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    fold(&seed.to_le_bytes());
    fold(strategy.label().as_bytes());
    fold(&[0]);
    fold(mutant.map_or("", |m| m.name()).as_bytes());
    fold(&[0]);
    fold(&tape.to_bytes());
    h
}

/// The tape without trailing zeros: a replay reads zeros past the end of a tape, so they
/// change nothing, and the shorter tape is the simpler one.
pub fn trimmed(tape: &Tape) -> Tape {
    let keep = tape.0.iter().rposition(|&v| v != 0).map_or(0, |i| i + 1);
    Tape(tape.0[..keep].to_vec())
}

/// Fails if the file's `[KEY]` table lacks keys that a complete serialisation of what was
/// read from it has: a truncated file whose missing keys would otherwise quietly default.
fn require_complete(file: &toml::Table, key: &str, read: &Scenario) -> Result<(), String> {
    let leaf = key.rsplit('.').next().expect("split yields at least one piece");
    let in_file = file.get(leaf).and_then(|v| v.as_table()).cloned().unwrap_or_default();
    let complete: toml::Table = toml::from_str(&read.to_toml()).expect("a scenario's own TOML parses");
    let mut missing = Vec::new();
    missing_keys(&complete, &in_file, key, &mut missing);
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("incomplete (truncated?) reproducer: [{key}] lacks {}", missing.join(", ")))
    }
}

fn missing_keys(complete: &toml::Table, file: &toml::Table, prefix: &str, out: &mut Vec<String>) {
    for (k, v) in complete {
        match (v, file.get(k)) {
            // A fault kind added to the fault table after the file was written: its options
            // default to off, as they were for the run. (A file cut inside `[faults]` also
            // lacks the sections after it, so truncation is still caught.)
            (_, None) if prefix.ends_with("scenario.faults") && is_fault_table(k) => {}
            // An option added to an existing table after the file was written, whose
            // default is what every earlier run did.
            (_, None) if added_later(&format!("{prefix}.{k}")) => {}
            (_, None) => out.push(format!("{prefix}.{k}")),
            (toml::Value::Table(c), Some(toml::Value::Table(f))) => missing_keys(c, f, &format!("{prefix}.{k}"), out),
            _ => {}
        }
    }
}

/// Scenario keys added to existing tables after reproducers were written, each defaulting
/// to what runs did before it existed ("off"): a file without one still loads. Truncation
/// is still caught, since a file cut inside a table lacks other keys of it as well.
const ADDED_LATER: &[&str] = &[
    // Drawn role phases and fault instants (issue 13): off, every role starts at 0.
    "faults.phases",
    // The broker's liveness timeout for paused consumers (issue 13): zero, never.
    "faults.broker.paused_consumer_timeout",
    // Graceful replica shutdowns, the cancel fault's third shape (issue 13): never, no
    // drain, restart at once.
    "faults.cancel.shutdown_per_tick",
    "faults.cancel.drain_timeout",
    "faults.cancel.restart_delay_max",
];

/// True if `path` (`scenario.…` or `origin.scenario.…`) is one of [`ADDED_LATER`].
fn added_later(path: &str) -> bool {
    ADDED_LATER.iter().any(|added| path.strip_suffix(added).is_some_and(|head| head.ends_with("scenario.")))
}

/// True if `key` names a fault kind's table in `[faults]`.
fn is_fault_table(key: &str) -> bool {
    sutra_sim_model::faults::FaultKind::ALL.iter().any(|kind| kind.descriptor().table == key)
}

/// One line for a TOML error: the line number and the message.
fn describe_toml_error(text: &str, error: &toml::de::Error) -> String {
    let message = error.message().trim().replace('\n', " ");
    match error.span() {
        Some(span) => format!("line {}: {message}", text[..span.start.min(text.len())].matches('\n').count() + 1),
        None => message,
    }
}

mod strategy_text {
    use serde::{Deserialize, Deserializer, Serializer};
    use sutra_sim_core::StrategyConfig;

    pub fn serialize<S: Serializer>(s: &StrategyConfig, out: S) -> Result<S::Ok, S::Error> {
        out.serialize_str(&s.label())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<StrategyConfig, D::Error> {
        let text = String::deserialize(d)?;
        StrategyConfig::parse(&text).map_err(serde::de::Error::custom)
    }
}

mod seed_number {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &u64, out: S) -> Result<S::Ok, S::Error> {
        match i64::try_from(*v) {
            Ok(small) => out.serialize_i64(small),
            Err(_) => out.serialize_str(&v.to_string()),
        }
    }

    /// A seed as a number, or as a decimal string (how one past `i64::MAX` is written).
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Written {
        Number(u64),
        Text(String),
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        match Written::deserialize(d)? {
            Written::Number(n) => Ok(n),
            Written::Text(text) => text
                .parse()
                .map_err(|_| serde::de::Error::custom(format!("seed {text:?} is not a whole number of 64 bits"))),
        }
    }
}

mod hex_u64 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &u64, out: S) -> Result<S::Ok, S::Error> {
        out.serialize_str(&format!("{v:016x}"))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        let text = String::deserialize(d)?;
        if text.len() != 16 {
            return Err(serde::de::Error::custom(format!("{text:?} is not 16 hexadecimal digits")));
        }
        u64::from_str_radix(&text, 16)
            .map_err(|_| serde::de::Error::custom(format!("{text:?} is not 16 hexadecimal digits")))
    }
}

mod tape_text {
    use serde::{Deserialize, Deserializer, Serializer};
    use sutra_sim_core::Tape;

    pub fn serialize<S: Serializer>(t: &Tape, out: S) -> Result<S::Ok, S::Error> {
        out.serialize_str(&t.to_base64())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Tape, D::Error> {
        let text = String::deserialize(d)?;
        Tape::from_base64(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::{added_later, recording_checksum, Reproducer};

    /// A reproducer of the corpus with its seed (and checksum) replaced by `seed`.
    fn with_seed(seed: u64) -> Reproducer {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/seeds/sweeper-parses-owner.toml"))
            .expect("the corpus has it");
        let mut r = Reproducer::from_toml(&text, "corpus").expect("the corpus reads");
        r.seed = seed;
        r.checksum = recording_checksum(r.seed, r.strategy, r.mutant, &r.tape);
        r
    }

    #[test]
    fn a_seed_past_i64_max_is_written_as_text_and_reads_back() {
        // An exploration's child seeds use all 64 bits; TOML integers have 63 and a sign.
        for seed in [0, 7, i64::MAX as u64, i64::MAX as u64 + 1, 13_830_585_782_065_312_923, u64::MAX] {
            let r = with_seed(seed);
            let text = r.to_toml();
            let back = Reproducer::from_toml(&text, "round trip").unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            assert_eq!(back, r);
            let written = if seed > i64::MAX as u64 { format!("seed = \"{seed}\"") } else { format!("seed = {seed}") };
            assert!(text.contains(&format!("\n{written}\n")), "seed {seed} written as:\n{text}");
        }
        let bad = with_seed(1).to_toml().replace("seed = 1\n", "seed = \"one\"\n");
        assert!(Reproducer::from_toml(&bad, "bad").is_err());
    }

    #[test]
    fn options_added_later_may_be_missing_and_nothing_else_may() {
        assert!(added_later("scenario.faults.phases"));
        assert!(added_later("origin.scenario.faults.broker.paused_consumer_timeout"));
        assert!(added_later("scenario.faults.cancel.shutdown_per_tick"));
        assert!(!added_later("scenario.faults.cancel.abort_per_tick"));
        assert!(!added_later("scenario.faults.tick"));
        assert!(!added_later("scenario.faults.broker.delay_max"));
        assert!(!added_later("scenario.xfaults.phases"));
    }
}

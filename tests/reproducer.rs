//! Reproducer files, replay, shrink and saved sweep failures, as users and CI drive them:
//! a round trip gives the same run; a bad file is one clear line and exit 2; a stale file
//! is never a silent pass; every failure ends with the command that replays it.

use std::path::{Path, PathBuf};

use sutra_sim::plugin::CheckerSet;
use sutra_sim::replay::replay;
use sutra_sim::reproducer::{Reproducer, Saved};
use sutra_sim_core::EntropyMode;
use sutra_sim_model::{Mutant, RunOptions, Scenario};

mod common;
use common::sutra_sim;

/// A scratch directory of this file's own for test `name`.
fn scratch(name: &str) -> common::Scratch {
    common::scratch("reproducer", name)
}

/// The first smoke seed that routing-as-mutex fails (it is caught in a few dozen events);
/// the tests do not depend on which seed that is.
fn failing_seed() -> u64 {
    let scenario = Scenario::built_in("smoke").unwrap();
    (0..200)
        .find(|&seed| {
            let options = RunOptions {
                entropy: EntropyMode::Seed(seed),
                strategy: None,
                mutant: Some(Mutant::RoutingAsMutex),
                keep_trace: false,
            };
            !sutra_sim_model::run(&scenario, &options).verdict.is_pass()
        })
        .expect("routing-as-mutex fails within 200 smoke seeds")
}

/// A small failing run, recorded.
fn recorded_failure() -> Reproducer {
    let scenario = Scenario::built_in("smoke").unwrap();
    let seed = failing_seed();
    let options = RunOptions {
        entropy: EntropyMode::Seed(seed),
        strategy: None,
        mutant: Some(Mutant::RoutingAsMutex),
        keep_trace: false,
    };
    let outcome = sutra_sim_model::run(&scenario, &options);
    assert!(!outcome.verdict.is_pass());
    Reproducer::record(&scenario, seed, scenario.strategy(), Some(Mutant::RoutingAsMutex), &outcome, "a test")
}

fn corpus_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds").join(format!("{name}.toml"))
}

#[test]
fn a_recorded_failure_round_trips_through_its_file() {
    let dir = scratch("round-trip");
    let r = recorded_failure();
    let path = dir.join("r.toml");
    assert_eq!(r.save(&path).unwrap(), Saved::Written);
    let loaded = Reproducer::load(&path).unwrap();
    assert_eq!(loaded, r);
    let replayed = replay(&loaded, &CheckerSet::built_in(), false).unwrap();
    assert!(replayed.reproduced());
    assert_eq!(replayed.outcome.fingerprint, r.fingerprint);
}

#[test]
fn saving_never_overwrites_a_different_file() {
    let dir = scratch("no-overwrite");
    let r = recorded_failure();
    let path = dir.join("r.toml");
    assert_eq!(r.save(&path).unwrap(), Saved::Written);
    assert_eq!(r.save(&path).unwrap(), Saved::AlreadyThere);
    let mut other = r.clone();
    other.note = "another run".into();
    let err = other.save(&path).unwrap_err();
    assert!(err.0.contains("not overwriting"), "{err}");
    assert_eq!(Reproducer::load(&path).unwrap(), r, "the first file is untouched");
    let second = other.save_in(&dir, "r").unwrap();
    assert_eq!(second, dir.join("r-2.toml"));
    assert_eq!(r.save_in(&dir, "r").unwrap(), path, "the same content keeps its name");
}

#[test]
fn replay_reproduces_a_corpus_file_and_tells_its_story() {
    let file = corpus_file("per-process-owner");
    let (code, out, err) = sutra_sim(&["replay", file.to_str().unwrap()]);
    assert_eq!(code, 1, "a reproduced failure exits 1 like `run`: {err}");
    // The checker is whichever sees the mutant first (owner-scope since issue #12).
    assert!(out.starts_with("REPRODUCED: violation of "), "{out}");
    assert!(out.contains("STORY"), "{out}");
    assert!(out.contains("CLAIM GRANTED"), "{out}");
    assert!(out.trim_end().ends_with(&format!("replay: sutra-sim replay {}", file.display())), "{out}");
}

#[test]
fn replay_json_has_the_verdict_fingerprint_and_story() {
    let file = corpus_file("release-after-commit");
    let r = Reproducer::load(&file).unwrap();
    let (code, out, _) = sutra_sim(&["replay", file.to_str().unwrap(), "--json", "--trace"]);
    assert_eq!(code, 1);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["status"], "reproduced");
    assert_eq!(doc["checker"], r.expected.checker.clone().unwrap());
    assert_eq!(doc["message"], r.expected.message.clone().unwrap());
    assert_eq!(doc["fingerprint"], format!("{:016x}", r.fingerprint));
    assert!(!doc["story"].as_array().unwrap().is_empty());
    assert_eq!(doc["trace"].as_array().unwrap().len() as u64, r.expected.events);
}

/// Writes `text` as a reproducer file and replays it: (exit code, stdout, stderr).
fn replay_text(dir: &Path, name: &str, text: &[u8]) -> (i32, String, String) {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    sutra_sim(&["replay", path.to_str().unwrap()])
}

fn assert_bad_file(result: (i32, String, String), name: &str, needle: &str) {
    let (code, out, err) = result;
    assert_eq!(code, 2, "{name}: {err}{out}");
    assert!(out.is_empty(), "{name}: nothing on stdout, got {out}");
    assert_eq!(err.trim_end().lines().count(), 1, "{name}: one line, got {err}");
    assert!(err.contains(name), "{name}: the error names the file: {err}");
    assert!(err.contains(needle), "{name}: expected {needle:?} in {err}");
}

#[test]
fn a_truncated_reproducer_is_a_clear_error_and_exit_2() {
    let dir = scratch("truncated");
    let text = std::fs::read(corpus_file("sweeper-unleased")).unwrap();
    // Cut anywhere — mid-key, mid-table, between tables — but keep at least the last line
    // off, so that something is really missing.
    let last_line = text[..text.len() - 1].iter().rposition(|&b| b == b'\n').unwrap();
    for cut in [1, text.len() / 10, text.len() / 4, text.len() / 2, 3 * text.len() / 4, last_line, last_line + 5] {
        let name = format!("cut-{cut}.toml");
        let (code, out, err) = replay_text(&dir, &name, &text[..cut]);
        assert_eq!(code, 2, "cut at {cut}: {err}{out}");
        assert_eq!(err.trim_end().lines().count(), 1, "cut at {cut}: {err}");
        assert!(err.contains(&name), "{err}");
    }
    assert_bad_file(replay_text(&dir, "empty.toml", b""), "empty.toml", "not a sutra-sim reproducer");
}

#[test]
fn a_corrupted_reproducer_is_a_clear_error_and_exit_2() {
    let dir = scratch("corrupted");
    let text = std::fs::read_to_string(corpus_file("wait-on-held-claim")).unwrap();
    let tape_line = text.lines().find(|l| l.starts_with("tape = ")).unwrap();
    // A tape edited into other valid base64: the checksum tells it from a stale one.
    let mut tape = tape_line.as_bytes().to_vec();
    let i = tape.len() - 6;
    tape[i] = if tape[i] == b'B' { b'C' } else { b'B' };
    let edited = text.replace(tape_line, std::str::from_utf8(&tape).unwrap());
    assert_bad_file(replay_text(&dir, "tape.toml", edited.as_bytes()), "tape.toml", "checksum");
    let seed_line = text.lines().find(|l| l.starts_with("seed = ")).unwrap();
    let reseeded = text.replacen(seed_line, "seed = 12345", 1);
    assert_bad_file(replay_text(&dir, "seed.toml", reseeded.as_bytes()), "seed.toml", "checksum");
    let garbage = text.replace(tape_line, "tape = \"@@not base64@@\"");
    assert_bad_file(replay_text(&dir, "garbage.toml", garbage.as_bytes()), "garbage.toml", "base64");
    let mut binary = text.clone().into_bytes();
    binary[40] = 0xff;
    binary[41] = 0xfe;
    assert_bad_file(replay_text(&dir, "binary.toml", &binary), "binary.toml", "UTF-8");
    let wrong_type = text.replacen("replicas = 1", "replicas = \"one\"", 1);
    assert_bad_file(replay_text(&dir, "type.toml", wrong_type.as_bytes()), "type.toml", "line");
    let unknown = text.replacen("seed = ", "sede = 1\nseed = ", 1);
    assert_bad_file(replay_text(&dir, "unknown.toml", unknown.as_bytes()), "unknown.toml", "sede");
    let impossible = text.replacen("replicas = 1", "replicas = 0", 1);
    assert_bad_file(replay_text(&dir, "zero.toml", impossible.as_bytes()), "zero.toml", "topology.replicas");
}

#[test]
fn a_reproducer_of_another_format_version_is_a_clear_error_and_exit_2() {
    let dir = scratch("version");
    let text = std::fs::read_to_string(corpus_file("routing-as-mutex")).unwrap();
    let future = text.replacen("format = 1", "format = 99", 1);
    assert_bad_file(replay_text(&dir, "future.toml", future.as_bytes()), "future.toml", "format 99 is not supported");
    let missing = text.replacen("format = 1\n", "", 1);
    assert_bad_file(replay_text(&dir, "none.toml", missing.as_bytes()), "none.toml", "no `format` key");
}

#[test]
fn a_stale_reproducer_is_reported_with_its_fallback_and_never_passes() {
    let dir = scratch("stale");
    let text = std::fs::read_to_string(corpus_file("no-release-on-error")).unwrap();
    let r = Reproducer::from_toml(&text, "corpus").unwrap();
    // As if the model had changed since: the recorded fingerprint is not what the tape gives.
    let recorded = format!("fingerprint = \"{:016x}\"", r.fingerprint);
    let stale = text.replacen(&recorded, "fingerprint = \"0123456789abcdef\"", 1);
    let path = dir.join("stale.toml");
    std::fs::write(&path, stale).unwrap();
    let (code, out, _) = sutra_sim(&["replay", path.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with("STALE"), "{out}");
    assert!(out.contains("fingerprint: recorded 0123456789abcdef"), "{out}");
    assert!(out.contains("fallback, the seed re-run"), "{out}");
    let (code, out, _) = sutra_sim(&["replay", path.to_str().unwrap(), "--json"]);
    assert_eq!(code, 1);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["status"], "stale");
    assert!(doc["fallback"]["verdict"].is_string());
}

#[test]
fn shrink_makes_a_reproducer_that_replays_to_the_same_checker_and_fingerprint() {
    let dir = scratch("shrink");
    let out_file = dir.join("shrunk.toml");
    let seed = failing_seed().to_string();
    let (code, out, err) = sutra_sim(&[
        "shrink",
        "--scenario",
        "smoke",
        "--seed",
        &seed,
        "--mutant",
        "routing-as-mutex",
        "-o",
        out_file.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(code, 1, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    for field in [
        "reproducer",
        "checker",
        "events_before",
        "events_after",
        "tape_before",
        "tape_after",
        "faults_before",
        "faults_after",
        "wall_ms",
    ] {
        assert!(doc.get(field).is_some(), "missing {field} in {out}");
    }
    assert!(doc["events_after"].as_u64() <= doc["events_before"].as_u64());
    let r = Reproducer::load(&out_file).unwrap();
    assert_eq!(doc["checker"], r.expected.checker.clone().unwrap());
    let (code, replayed, _) = sutra_sim(&["replay", out_file.to_str().unwrap(), "--json"]);
    assert_eq!(code, 1);
    let replayed: serde_json::Value = serde_json::from_str(&replayed).unwrap();
    assert_eq!(replayed["status"], "reproduced");
    assert_eq!(replayed["checker"], doc["checker"]);
    assert_eq!(replayed["fingerprint"], doc["fingerprint"]);
    // Shrinking the shrunk file again finds nothing simpler.
    let again = dir.join("again.toml");
    let (code, out, _) = sutra_sim(&["shrink", out_file.to_str().unwrap(), "-o", again.to_str().unwrap(), "--json"]);
    assert_eq!(code, 1);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["events_after"], doc["events_before"]);
}

#[test]
fn shrink_refuses_bad_input_with_exit_2() {
    for (args, needle) in [
        (vec!["shrink"], "--scenario S --seed N"),
        (vec!["shrink", "--scenario", "smoke"], "--scenario S --seed N"),
        (vec!["shrink", "--scenario", "smoke", "--seed", "0"], "passes"),
        (vec!["shrink", "no/such/reproducer.toml"], "no/such/reproducer.toml"),
    ] {
        let (code, _, err) = sutra_sim(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn a_sweep_saves_each_failure_and_its_summary_ends_with_the_replay_command() {
    let dir = scratch("sweep");
    let saved = dir.join("failures");
    let report = dir.join("report.json");
    let seed = failing_seed();
    let count = (seed + 1).to_string();
    let (code, out, err) = sutra_sim(&[
        "sweep",
        "--count",
        &count,
        "--mutant",
        "routing-as-mutex",
        "--save-failures",
        saved.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let failures = doc["failures"].as_array().unwrap();
    assert!(!failures.is_empty());
    for f in failures {
        let file = f["reproducer"].as_str().expect("each failure names its reproducer");
        assert_eq!(f["replay"].as_str().unwrap(), format!("sutra-sim replay {file}"));
        let r = Reproducer::load(Path::new(file)).unwrap();
        assert!(replay(&r, &CheckerSet::built_in(), false).unwrap().reproduced(), "{file}");
        assert_eq!(r.expected.checker.as_deref(), f["checker"].as_str());
        assert!(out.contains(&format!("replay: sutra-sim replay {file}")), "{out}");
    }
    // Unshrunk, the files are the sweep's own runs.
    let raw = dir.join("raw");
    let (code, _, _) = sutra_sim(&[
        "sweep",
        "--count",
        &count,
        "--mutant",
        "routing-as-mutex",
        "--save-failures",
        raw.to_str().unwrap(),
        "--no-shrink",
    ]);
    assert_eq!(code, 1);
    let r = Reproducer::load(&raw.join(format!("smoke-seed-{seed}-routing-as-mutex.toml"))).unwrap();
    assert!(r.origin.is_none() && r.note.contains("--no-shrink"), "{}", r.note);
}

#[test]
fn run_and_replay_write_a_perfetto_timeline() {
    let dir = scratch("perfetto");
    let from_run = dir.join("run.json");
    let (code, _, err) = sutra_sim(&["run", "--seed", "3", "--perfetto", from_run.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let from_replay = dir.join("replay.json");
    let file = corpus_file("no-release-on-panic");
    let (code, out, _) = sutra_sim(&["replay", file.to_str().unwrap(), "--perfetto", from_replay.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(out.contains("ui.perfetto.dev"), "{out}");
    for path in [from_run, from_replay] {
        let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert!(!doc["traceEvents"].as_array().unwrap().is_empty());
    }
}

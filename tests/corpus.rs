//! The regression corpus: every reproducer in `seeds/` replays to exactly its recorded
//! verdict and fingerprint, survives the round trip fail → save → replay, and the correct
//! model passes on its scenario. One minimised reproducer per mutant lives there.
//!
//! After a change to the model or a checker makes the corpus stale, re-record it with
//! `cargo test --release --test corpus -- --ignored regenerate_the_corpus` and commit the
//! new files (see `seeds/README.md`).

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use sutra_sim::plugin::CheckerSet;
use sutra_sim::replay::{replay, run_tape, Reproduction};
use sutra_sim::reproducer::Reproducer;
use sutra_sim::shrinking::{shrink_failure, FailingRun};
use sutra_sim_core::EntropyMode;
use sutra_sim_model::{RunOptions, Scenario, MUTANTS};
use sutra_sim_shrink::Limits;

fn seeds_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds")
}

fn corpus() -> Vec<(PathBuf, Reproducer)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(seeds_dir())
        .expect("seeds/ exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let r = Reproducer::load(&p).unwrap_or_else(|e| panic!("{e}"));
            (p, r)
        })
        .collect()
}

/// How a corpus failure reads in a test log: what went wrong, then the one command that
/// replays it.
fn failure(path: &Path, what: impl std::fmt::Display) -> String {
    format!("{what}\n    replay: sutra-sim replay {}", path.display())
}

#[test]
fn every_reproducer_in_seeds_replays_to_its_verdict_and_fingerprint() {
    let files = corpus();
    assert!(!files.is_empty(), "seeds/ holds no reproducer");
    for (path, r) in &files {
        let replayed = replay(r, &CheckerSet::built_in(), false).unwrap();
        if let Reproduction::Stale { differences, fallback } = &replayed.reproduction {
            panic!(
                "{}",
                failure(
                    path,
                    format!(
                        "{} is STALE: {}; its seed now gives {}. Re-record the corpus (see seeds/README.md).",
                        path.display(),
                        differences.join("; "),
                        fallback.verdict
                    )
                )
            );
        }
        if r.mutant.is_some() {
            assert!(!r.expected.is_pass(), "{}", failure(path, "a mutant's reproducer must record its failure"));
        }
    }
}

#[test]
fn the_round_trip_fail_save_replay_gives_the_same_fingerprint() {
    let dir = common::scratch("corpus", "round-trip");
    for (path, r) in corpus() {
        let outcome = run_tape(&r, &CheckerSet::built_in(), false).unwrap();
        let again = Reproducer::record(&r.scenario, r.seed, r.strategy, r.mutant, &outcome, "round trip");
        let saved = dir.join(path.file_name().unwrap());
        again.save(&saved).unwrap();
        let loaded = Reproducer::load(&saved).unwrap();
        assert_eq!(loaded, again);
        let replayed = replay(&loaded, &CheckerSet::built_in(), false).unwrap();
        assert!(replayed.reproduced(), "{}", failure(&saved, "a saved reproducer did not replay"));
        assert_eq!(replayed.outcome.fingerprint, r.fingerprint, "{}", failure(&path, "fingerprint changed"));
    }
}

#[test]
fn the_correct_model_passes_on_every_corpus_scenario() {
    for (path, r) in corpus() {
        for entropy in [EntropyMode::Seed(r.seed), EntropyMode::Tape(r.tape.clone())] {
            let options = RunOptions { entropy, strategy: Some(r.strategy), mutant: None, keep_trace: false };
            let out = sutra_sim_model::run(&r.scenario, &options);
            assert!(out.verdict.is_pass(), "{}", failure(&path, format!("the correct model fails: {}", out.verdict)));
        }
    }
}

#[test]
fn every_mutant_has_a_reproducer_named_after_it() {
    let files = corpus();
    for info in MUTANTS.iter() {
        let (path, r) = files
            .iter()
            .find(|(p, _)| p.file_stem().is_some_and(|s| s == info.name))
            .unwrap_or_else(|| panic!("seeds/{}.toml is missing", info.name));
        assert_eq!(r.mutant, Some(info.mutant), "{}", failure(path, "the file names another mutant"));
    }
}

/// Seeds searched per scenario for a mutant's first failure when re-recording the corpus.
const SEARCH_SEEDS_MAX: u64 = 5_000;

/// Re-records `seeds/`: for every mutant, the first failing seed of the built-in
/// scenarios, shrunk. Run it after a model change made the corpus stale (see the module
/// docs); it overwrites the mutant files.
#[test]
#[ignore = "re-records seeds/; run by hand after a model change"]
fn regenerate_the_corpus() {
    let limits = Limits { time_budget: Duration::from_secs(120), ..Limits::default() };
    for info in MUTANTS.iter() {
        let (scenario, seed) = Scenario::all_built_in()
            .into_iter()
            .find_map(|s| {
                (0..SEARCH_SEEDS_MAX)
                    .find(|&seed| {
                        let options = RunOptions {
                            entropy: EntropyMode::Seed(seed),
                            strategy: None,
                            mutant: Some(info.mutant),
                            keep_trace: false,
                        };
                        !sutra_sim_model::run(&s, &options).verdict.is_pass()
                    })
                    .map(|seed| (s, seed))
            })
            .unwrap_or_else(|| panic!("no built-in scenario kills {}", info.name));
        let run = FailingRun::from_seed(scenario, seed, Some(info.mutant), None);
        let shrunk = shrink_failure(&run, limits).unwrap_or_else(|e| panic!("{}: {e}", info.name));
        let mut r = shrunk.reproducer;
        r.note = format!("mutant {} ({}; breaks {}): {}", info.name, info.description, info.rules, r.note);
        let path = seeds_dir().join(format!("{}.toml", info.name));
        sutra_sim::files::write_atomically(&path, r.to_toml().as_bytes()).unwrap();
        println!(
            "{:<28} {} seed {seed}: {} → {} events, {} → {} draws, {} ms",
            info.name,
            r.scenario.name,
            shrunk.events_before,
            shrunk.events_after,
            shrunk.tape_before,
            shrunk.tape_after,
            shrunk.wall.as_millis()
        );
    }
}

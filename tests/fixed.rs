//! Findings on the correct model that were fixed: each reproducer in `tests/fixed/` once
//! failed a checker with no mutant switched on. After its fix the tape (which no longer
//! gives the recorded run: the model changed under it) must pass, and so must the seed
//! re-run in the scenario it was found in. Unlike `seeds/`, nothing here is re-recorded:
//! a file keeps the failure as it was found, for its story.

use std::path::{Path, PathBuf};

use sutra_sim::plugin::CheckerSet;
use sutra_sim::replay::{replay, Reproduction};
use sutra_sim::reproducer::Reproducer;
use sutra_sim_core::Verdict;

fn fixed() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("fixed");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("tests/fixed/ exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_fixed_finding_on_the_correct_model_now_passes_by_its_tape_and_by_its_seed() {
    let files = fixed();
    assert!(!files.is_empty(), "tests/fixed/ holds no reproducer");
    for path in &files {
        let r = Reproducer::load(path).unwrap_or_else(|e| panic!("{e}"));
        assert!(r.mutant.is_none(), "{}: a finding on the correct model has no mutant", path.display());
        let replayed = replay(&r, &CheckerSet::built_in(), false).unwrap();
        assert!(
            matches!(replayed.outcome.verdict, Verdict::Pass),
            "{}: the tape still fails: {:?}",
            path.display(),
            replayed.outcome.verdict
        );
        match &replayed.reproduction {
            Reproduction::Reproduced => panic!("{}: the recorded failure still reproduces", path.display()),
            Reproduction::Stale { fallback, .. } => assert!(
                matches!(fallback.verdict, Verdict::Pass),
                "{}: its seed still fails in its scenario: {:?}",
                path.display(),
                fallback.verdict
            ),
        }
    }
}

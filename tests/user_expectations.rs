//! What users expect of a sweep tool (issue #15): a determinism self-check they can run,
//! columns that line up, failures listed in order, all cores by default.

mod common;
use common::sutra_sim;

#[test]
fn run_check_determinism_runs_the_seed_again_and_says_it_ran_the_same() {
    let (code, out, err) = sutra_sim(&["run", "--seed", "5", "--check-determinism"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("determinism: the seed ran the same twice more"), "{out}");
    let (code, out, _) = sutra_sim(&["run", "--seed", "5", "--check-determinism", "--json"]);
    assert_eq!(code, 0);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["determinism"]["same"], true);
}

#[test]
fn sweep_check_determinism_rechecks_seeds_and_the_correct_model_passes() {
    let (code, out, err) = sutra_sim(&["sweep", "--count", "30", "--check-determinism", "100%", "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["violations"], 0);
    let (code, _, err) = sutra_sim(&["sweep", "--count", "3", "--check-determinism", "150%"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--check-determinism"), "{err}");
}

#[test]
fn list_mutants_keeps_every_column_aligned() {
    let (code, out, _) = sutra_sim(&["list", "mutants"]);
    assert_eq!(code, 0);
    let starts: Vec<usize> = out.lines().map(|l| l.find("caught by").unwrap()).collect();
    assert!(starts.windows(2).all(|w| w[0] == w[1]), "{out}");
    // The description column starts after the longest "caught by" cell, on every line.
    let (code, json, _) = sutra_sim(&["list", "mutants", "--json"]);
    assert_eq!(code, 0);
    let rows: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap();
    let starts: Vec<usize> =
        out.lines().zip(&rows).map(|(l, r)| l.rfind(r["description"].as_str().unwrap()).unwrap()).collect();
    assert!(starts.windows(2).all(|w| w[0] == w[1]), "{out}");
}

#[test]
fn the_first_failures_of_a_red_summary_are_sorted_by_scenario_name() {
    let (code, out, _) =
        sutra_sim(&["sweep", "--scenario", "all", "--count", "30", "--mutant", "unconditional-commit"]);
    assert_eq!(code, 1);
    let listed: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("  ") && l.contains(" seed ") && !l.trim_start().starts_with("replay"))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert!(listed.len() > 1, "{out}");
    let mut sorted = listed.clone();
    sorted.sort();
    assert_eq!(listed, sorted, "{out}");
}

mod nondeterministic {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;

    use sutra_sim::plugin::*;
    use sutra_sim::sweep::{self, SweepPlan};

    /// Instances made so far, process-wide: state that leaks from one run into the next.
    static MADE: AtomicU64 = AtomicU64::new(0);

    /// A careless checker: it fails at an event that depends on how many of it were made
    /// before — the kind of bug `--check-determinism` is there to catch.
    struct Leaky {
        fail_at: u64,
        seen: u64,
    }

    impl Checker<ModelEvent, ModelView> for Leaky {
        fn name(&self) -> &str {
            "leaky"
        }
        fn kind(&self) -> CheckerKind {
            CheckerKind::Always
        }
        fn on_event(&mut self, _: &Event<ModelEvent>, _: &ModelView) -> Check {
            self.seen += 1;
            if self.seen == self.fail_at {
                Check::Fail("leaked".into())
            } else {
                Check::Ok
            }
        }
    }

    fn leaky() -> ModelCheckerSpec {
        ModelCheckerSpec {
            name: "leaky",
            kind: CheckerKind::Always,
            description: "fails at an event chosen by a process-wide counter",
            rules: &[],
            factory: Arc::new(|| Box::new(Leaky { fail_at: 5 + MADE.fetch_add(1, Ordering::Relaxed) % 7, seen: 0 })),
        }
    }

    #[test]
    fn a_sweep_that_rechecks_seeds_reports_a_divergence_as_its_own_failure() {
        let checkers = CheckerSet::built_in().with(leaky());
        let plan = SweepPlan {
            scenarios: vec![Scenario::built_in("smoke").unwrap()],
            start: 0,
            count: 5,
            shard: None,
            mutant: None,
            strategy: None,
            jobs: 1,
            time_budget: None,
            checkers,
        };
        let (tally, _) = sweep::run_checked(&plan, sutra_sim::determinism::PPM, &AtomicBool::new(false), &|_, _| {});
        let report = sweep::report(&plan, &tally, std::time::Duration::from_secs(1), false);
        let diverged: Vec<_> = report.failures.iter().filter(|f| f.checker == sweep::DETERMINISM).collect();
        assert!(!diverged.is_empty(), "{}", report.summary());
        for f in diverged {
            assert_eq!(f.verdict, "nondeterminism");
            assert!(f.message.contains("ran differently"), "{}", f.message);
            assert!(f.replay.starts_with("sutra-sim run --scenario smoke --seed "), "{}", f.replay);
            assert!(f.replay.contains(" --check-determinism  (runs without your checkers leaky"), "{}", f.replay);
        }
        assert!(report.failures_by_checker[sweep::DETERMINISM] > 0);
    }
}

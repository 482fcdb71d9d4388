//! Sweep reports: the JSON document CI reads (field names fixed by DESIGN.md §10), their
//! merge across shards, the JUnit XML dashboards read, and the ten-second summary a
//! person reads.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Most failures a report keeps per failing checker (or verdict class), the first in
/// sweep order: a mutant that fails every seed of a night must not fill memory and disk
/// with millions of records that say the same thing. The counts stay exact
/// ([`SweepReport::failures_by_checker`], [`SweepReport::failures_left_out`]).
pub const FAILURES_KEPT_PER_CHECKER: usize = 100;

/// One failing seed.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Failure {
    /// Scenario name.
    pub scenario: String,
    /// The seed.
    pub seed: u64,
    /// `violation`, `hang`, `budget` or `crash`.
    pub verdict: String,
    /// The failing checker (or the verdict class for hangs, budgets and crashes).
    pub checker: String,
    /// What it saw.
    pub message: String,
    /// Path of the saved reproducer, if one was written.
    pub reproducer: Option<String>,
    /// The one command that replays this failure.
    pub replay: String,
}

/// A sweep's report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepReport {
    /// The framework version that produced it.
    pub version: String,
    /// Scenarios swept.
    pub scenarios: Vec<String>,
    /// The mutant switched on, if any.
    pub mutant: Option<String>,
    /// Seeds run to completion.
    pub seeds_run: u64,
    /// Seeds that did not pass (violations, hangs, budget overruns, crashes).
    pub violations: u64,
    /// Of those: hangs.
    pub hangs: u64,
    /// Of those: budget overruns.
    pub budget_overruns: u64,
    /// Of those: crashes.
    pub crashes: u64,
    /// The failing seeds kept (the first [`FAILURES_KEPT_PER_CHECKER`] of each checker),
    /// by scenario and seed.
    pub failures: Vec<Failure>,
    /// Failing seeds by checker (or verdict class for hangs, budget overruns and
    /// crashes): exact counts, whatever was kept in `failures`.
    #[serde(default)]
    pub failures_by_checker: BTreeMap<String, u64>,
    /// Failing seeds not listed in `failures` (over the per-checker cap).
    #[serde(default)]
    pub failures_left_out: u64,
    /// Seeds in which each coverage property was reached (every property listed, zeros too).
    pub coverage: BTreeMap<String, u64>,
    /// Coverage properties that no seed reached: a vacuous green.
    pub unreached: Vec<String>,
    /// Events judged in all.
    pub events: u64,
    /// Wall-clock time of the sweep (the longest shard's, after a merge).
    pub wall_seconds: f64,
    /// Seeds per wall second.
    pub seeds_per_second: f64,
    /// Events per wall second.
    pub events_per_second: f64,
    /// True if the sweep stopped before its last seed (time budget or signal).
    pub stopped_early: bool,
}

impl SweepReport {
    /// Recomputes the derived fields from the others: the failure counts from
    /// `failures_by_checker`, the kept failures (sorted, capped per checker), the left-out
    /// count, unreached coverage and the rates.
    pub fn finish(&mut self) {
        self.failures.sort();
        let mut kept: BTreeMap<String, usize> = BTreeMap::new();
        self.failures.retain(|f| {
            let n = kept.entry(f.checker.clone()).or_insert(0);
            *n += 1;
            *n <= FAILURES_KEPT_PER_CHECKER
        });
        let count = |class: &str| self.failures_by_checker.get(class).copied().unwrap_or(0);
        self.violations = self.failures_by_checker.values().sum();
        self.hangs = count("hang");
        self.budget_overruns = count("budget");
        self.crashes = count("crash");
        self.failures_left_out = self.violations.saturating_sub(self.failures.len() as u64);
        self.unreached = self.coverage.iter().filter(|(_, n)| **n == 0).map(|(k, _)| k.clone()).collect();
        let wall = self.wall_seconds.max(1e-9);
        self.seeds_per_second = self.seeds_run as f64 / wall;
        self.events_per_second = self.events as f64 / wall;
    }

    /// Joins shard reports into one, as if the union of their seeds had been swept.
    pub fn merge(reports: &[SweepReport]) -> Result<SweepReport, String> {
        let first = reports.first().ok_or("nothing to merge")?;
        let mut merged = first.clone();
        merged.failures.clear();
        merged.failures_by_checker.clear();
        merged.coverage.clear();
        merged.seeds_run = 0;
        merged.events = 0;
        merged.wall_seconds = 0.0;
        merged.stopped_early = false;
        let mut scenarios: Vec<String> = Vec::new();
        for r in reports {
            if r.mutant != first.mutant {
                return Err(format!("reports disagree on the mutant: {:?} and {:?}", first.mutant, r.mutant));
            }
            for s in &r.scenarios {
                if !scenarios.contains(s) {
                    scenarios.push(s.clone());
                }
            }
            merged.seeds_run += r.seeds_run;
            merged.events += r.events;
            merged.wall_seconds = merged.wall_seconds.max(r.wall_seconds);
            merged.stopped_early |= r.stopped_early;
            merged.failures.extend(r.failures.iter().cloned());
            for (k, v) in &r.failures_by_checker {
                *merged.failures_by_checker.entry(k.clone()).or_insert(0) += v;
            }
            for (k, v) in &r.coverage {
                *merged.coverage.entry(k.clone()).or_insert(0) += v;
            }
        }
        merged.scenarios = scenarios;
        merged.finish();
        Ok(merged)
    }

    /// The one-word verdict: `GREEN` (seeds ran, none failed), `RED` (some failed) or
    /// `EMPTY` (no seed ran: nothing was checked, which is never green).
    pub fn verdict(&self) -> &'static str {
        if self.violations > 0 {
            "RED"
        } else if self.seeds_run == 0 {
            "EMPTY"
        } else {
            "GREEN"
        }
    }

    /// The summary a person reads in ten seconds.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "{}: {} seed(s) of {} — {} failing ({} hang, {} budget, {} crash){}\n",
            self.verdict(),
            self.seeds_run,
            self.scenarios.join(", "),
            self.violations,
            self.hangs,
            self.budget_overruns,
            self.crashes,
            self.mutant.as_ref().map(|m| format!(", mutant {m}")).unwrap_or_default()
        ));
        out.push_str(&format!(
            "  {:.0} seeds/s, {:.0} events/s, {:.1}s wall{}\n",
            self.seeds_per_second,
            self.events_per_second,
            self.wall_seconds,
            if self.stopped_early { " (stopped early: the rest was not run)" } else { "" }
        ));
        for (checker, n) in &self.failures_by_checker {
            out.push_str(&format!("  {n:>6} × {checker}\n"));
        }
        for f in self.failures.iter().take(SUMMARY_FAILURES_MAX) {
            out.push_str(&format!(
                "  {} seed {}: {}: {}\n    replay: {}\n",
                f.scenario, f.seed, f.checker, f.message, f.replay
            ));
        }
        let listed = self.failures.len().min(SUMMARY_FAILURES_MAX) as u64;
        if self.violations > listed {
            out.push_str(&format!(
                "  … and {} more ({} listed in the report, {} left out of it: only the first {FAILURES_KEPT_PER_CHECKER} per checker are kept)\n",
                self.violations - listed,
                self.failures.len() as u64 - listed,
                self.failures_left_out
            ));
        }
        if !self.unreached.is_empty() {
            out.push_str(&format!("  coverage never reached (a vacuous green): {}\n", self.unreached.join(", ")));
        }
        if self.seeds_run == 0 {
            out.push_str("  no seed ran: nothing was checked\n");
        }
        out
    }

    /// JUnit XML: one suite per scenario, one test case per failing seed and one for the
    /// seeds that passed.
    pub fn junit(&self) -> String {
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        out.push_str(&format!(
            "<testsuites name=\"sutra-sim sweep\" tests=\"{}\" failures=\"{}\" time=\"{:.3}\">\n",
            self.seeds_run, self.violations, self.wall_seconds
        ));
        for scenario in &self.scenarios {
            let failures: Vec<&Failure> = self.failures.iter().filter(|f| &f.scenario == scenario).collect();
            out.push_str(&format!(
                "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\">\n",
                xml(scenario),
                failures.len() + 1,
                failures.len()
            ));
            for f in &failures {
                out.push_str(&format!(
                    "    <testcase classname=\"{}\" name=\"seed {}\">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>\n",
                    xml(scenario),
                    f.seed,
                    xml(&f.checker),
                    xml(&f.message),
                    xml(&format!("{}\nreplay: {}", f.message, f.replay))
                ));
            }
            out.push_str(&format!("    <testcase classname=\"{}\" name=\"passing seeds\"/>\n", xml(scenario)));
            out.push_str("  </testsuite>\n");
        }
        out.push_str("</testsuites>\n");
        out
    }
}

/// Failures the summary lists with their replay commands.
pub const SUMMARY_FAILURES_MAX: usize = 5;

fn xml(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(seeds: u64, failing: &[u64]) -> SweepReport {
        let mut r = SweepReport {
            version: "t".into(),
            scenarios: vec!["smoke".into()],
            mutant: None,
            seeds_run: seeds,
            violations: 0,
            hangs: 0,
            budget_overruns: 0,
            crashes: 0,
            failures: failing
                .iter()
                .map(|&seed| Failure {
                    scenario: "smoke".into(),
                    seed,
                    verdict: "violation".into(),
                    checker: "c".into(),
                    message: "m <&>".into(),
                    reproducer: None,
                    replay: format!("sutra-sim run --scenario smoke --seed {seed}"),
                })
                .collect(),
            failures_by_checker: if failing.is_empty() {
                BTreeMap::new()
            } else {
                [("c".to_string(), failing.len() as u64)].into_iter().collect()
            },
            failures_left_out: 0,
            coverage: [("a".to_string(), seeds), ("b".to_string(), 0)].into_iter().collect(),
            unreached: vec![],
            events: seeds * 10,
            wall_seconds: 1.0,
            seeds_per_second: 0.0,
            events_per_second: 0.0,
            stopped_early: false,
        };
        r.finish();
        r
    }

    #[test]
    fn merge_adds_seeds_failures_and_coverage() {
        let m = SweepReport::merge(&[report(5, &[3]), report(7, &[1, 9])]).unwrap();
        assert_eq!(m.seeds_run, 12);
        assert_eq!(m.violations, 3);
        assert_eq!(m.failures.iter().map(|f| f.seed).collect::<Vec<_>>(), vec![1, 3, 9]);
        assert_eq!(m.coverage["a"], 12);
        assert_eq!(m.unreached, vec!["b".to_string()]);
    }

    #[test]
    fn junit_escapes_and_counts() {
        let x = report(5, &[3]).junit();
        assert!(x.contains("failures=\"1\""));
        assert!(x.contains("m &lt;&amp;&gt;"));
    }

    #[test]
    fn the_summary_names_unreached_coverage_and_the_replay_command() {
        let s = report(5, &[3]).summary();
        assert!(s.starts_with("RED"));
        assert!(s.contains("sutra-sim run --scenario smoke --seed 3"));
        assert!(s.contains("(a vacuous green): b"));
    }
}

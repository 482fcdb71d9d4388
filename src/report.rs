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

/// Most bytes a report `merge` reads (64 MiB; a report keeps at most
/// [`FAILURES_KEPT_PER_CHECKER`] failures per checker, a few MiB at most).
pub const REPORT_BYTES_MAX: u64 = 64 << 20;

/// One failing seed.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Failure {
    /// Scenario name.
    pub scenario: String,
    /// The seed.
    pub seed: u64,
    /// `violation`, `hang`, `budget`, `crash`, or `nondeterminism` (the seed ran
    /// differently when re-checked; its checker is `determinism`).
    pub verdict: String,
    /// The failing checker (or the verdict class for hangs, budgets and crashes).
    pub checker: String,
    /// What it saw.
    pub message: String,
    /// Path of the saved reproducer, if one was written.
    pub reproducer: Option<String>,
    /// The one command that replays this failure.
    pub replay: String,
    /// For a run grown by exploration: its whole tape and strategy, since its seed alone
    /// does not replay it (a child replays its parent's prefix first). Saved into the
    /// reproducer; not part of the JSON report.
    #[serde(skip)]
    pub grown: Option<crate::sweep::GrownRun>,
}

/// One swept scenario: where it came from and what it was, so that a report says exactly
/// what was run and `merge` can tell reports of different sweeps apart.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScenarioSource {
    /// The scenario's name.
    pub name: String,
    /// The file it was loaded from, as given on the command line; none for a built-in one.
    pub file: Option<String>,
    /// A hash (16 hex digits) of the complete scenario as run (its canonical TOML), so two
    /// different scenarios of one name never pass for one another.
    pub hash: String,
    /// The checkers that judged it, in judging order.
    pub checkers: Vec<String>,
}

/// A sweep's report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepReport {
    /// The framework version that produced it.
    pub version: String,
    /// A fingerprint of the model's behaviour (see [`crate::sweep::model_hash`]): reports of
    /// different models do not merge.
    #[serde(default)]
    pub model_hash: String,
    /// Scenarios swept.
    pub scenarios: Vec<String>,
    /// Each swept scenario's origin, content hash and checkers.
    #[serde(default)]
    pub scenario_sources: Vec<ScenarioSource>,
    /// The first seed of the range.
    #[serde(default)]
    pub start: u64,
    /// The size of the seed range (before sharding); 0 in reports of older versions.
    #[serde(default)]
    pub count: u64,
    /// `I/N` if this report covers one shard of the range; none for the whole range (or a
    /// complete merge).
    #[serde(default)]
    pub shard: Option<String>,
    /// The strategy override, if any (otherwise each scenario's own).
    #[serde(default)]
    pub strategy: Option<String>,
    /// The mutant switched on, if any.
    pub mutant: Option<String>,
    /// The share of seeds run a second time to check that they run the same
    /// (`--check-determinism`), as a fraction from 0 to 1: 0 if determinism was not checked.
    #[serde(default)]
    pub check_determinism_rate: f64,
    /// Seeds run a second time at that rate (those that ran differently are failures of
    /// checker `determinism`).
    #[serde(default)]
    pub determinism_rechecked: u64,
    /// For a merge: the shards it joined.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_shards: Vec<String>,
    /// For a merge: the shards of the range that were not given. A report with missing
    /// shards is incomplete, never green.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_shards: Vec<String>,
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
    /// For `explore` (and `sweep --explore`): what the exploration did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exploration: Option<crate::explore::ExplorationReport>,
}

impl SweepReport {
    /// Recomputes the derived fields from the others: the failure counts from
    /// `failures_by_checker`, the kept failures (sorted, capped per checker), the left-out
    /// count, unreached coverage and the rates.
    pub fn finish(&mut self) {
        // The cap keeps the first failures in sweep order — seeds ascending, and for each
        // seed the scenarios in the order swept — as the sweep itself does: so a merge of
        // shards lists exactly what one sweep of the range lists. Then they are listed by
        // scenario and seed.
        let position = |name: &str| self.scenarios.iter().position(|s| s == name).unwrap_or(usize::MAX);
        self.failures.sort_by_cached_key(|f| (f.seed, position(&f.scenario)));
        let mut kept: BTreeMap<String, usize> = BTreeMap::new();
        self.failures.retain(|f| {
            let n = kept.entry(f.checker.clone()).or_insert(0);
            *n += 1;
            *n <= FAILURES_KEPT_PER_CHECKER
        });
        self.failures.sort();
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

    /// Joins the shard reports of one sweep into one, as if the union of their seeds had
    /// been swept. Refused, saying why: reports of an older version (not self-describing),
    /// of different versions, models, scenarios (by name, content or checkers), seed
    /// ranges, strategies or mutants; a whole-range report with any other; a shard given
    /// twice or shards of different counts. Shards of the range that were not given are
    /// listed in `missing_shards`: the merge is then incomplete, never green.
    pub fn merge(reports: &[SweepReport]) -> Result<SweepReport, String> {
        let first = reports.first().ok_or("nothing to merge")?;
        let mut merged = first.clone();
        merged.failures.clear();
        merged.failures_by_checker.clear();
        merged.coverage.clear();
        merged.seeds_run = 0;
        merged.determinism_rechecked = 0;
        merged.events = 0;
        merged.wall_seconds = 0.0;
        merged.stopped_early = false;
        merged.shard = None;
        merged.merged_shards.clear();
        merged.missing_shards.clear();
        let mut shards: Vec<(u64, u64)> = Vec::new();
        for (i, r) in reports.iter().enumerate() {
            let which = format!("report {} ({})", i + 1, r.shard.as_deref().unwrap_or("whole range"));
            if r.count == 0 {
                return Err(format!(
                    "{which} does not say which seeds it covers (written by sutra-sim {} or older?): re-run it",
                    r.version
                ));
            }
            let same = |what: &str, a: String, b: String| {
                if a == b {
                    Ok(())
                } else {
                    Err(format!("{which} is of a different sweep: {what} {b} where the first report has {a}"))
                }
            };
            same("version", first.version.clone(), r.version.clone())?;
            same("model hash", first.model_hash.clone(), r.model_hash.clone())?;
            same("mutant", format!("{:?}", first.mutant), format!("{:?}", r.mutant))?;
            same("strategy", format!("{:?}", first.strategy), format!("{:?}", r.strategy))?;
            same(
                "determinism check rate",
                first.check_determinism_rate.to_string(),
                r.check_determinism_rate.to_string(),
            )?;
            same(
                "seed range",
                format!("start {} count {}", first.start, first.count),
                format!("start {} count {}", r.start, r.count),
            )?;
            let identity = |s: &SweepReport| {
                s.scenario_sources
                    .iter()
                    .map(|x| format!("{} ({}; checkers {})", x.name, x.hash, x.checkers.join(",")))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            same("scenarios", identity(first), identity(r))?;
            let shard = match r.shard.as_deref() {
                None => (0, 1),
                Some(text) => parse_shard(text).ok_or_else(|| format!("{which}: shard {text:?} is not I/N"))?,
            };
            if let Some(&(_, of)) = shards.first() {
                if of != shard.1 {
                    return Err(format!(
                        "{which} overlaps the others: it is one of {} shards, the first report one of {of}",
                        shard.1
                    ));
                }
            }
            if shards.contains(&shard) {
                return Err(format!("{which}: shard {}/{} is given twice", shard.0, shard.1));
            }
            shards.push(shard);
            merged.seeds_run += r.seeds_run;
            merged.determinism_rechecked += r.determinism_rechecked;
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
        let of = shards[0].1;
        shards.sort();
        merged.merged_shards = shards.iter().map(|(i, n)| format!("{i}/{n}")).collect();
        merged.missing_shards =
            (0..of).filter(|i| !shards.iter().any(|(s, _)| s == i)).map(|i| format!("{i}/{of}")).collect();
        if of == 1 {
            merged.merged_shards.clear();
        }
        merged.finish();
        Ok(merged)
    }

    /// The one-word verdict: `GREEN` (seeds ran, none failed), `RED` (some failed) or
    /// `EMPTY` (no seed ran: nothing was checked, which is never green).
    pub fn verdict(&self) -> &'static str {
        if self.violations > 0 {
            "RED"
        } else if !self.missing_shards.is_empty() {
            "INCOMPLETE"
        } else if self.seeds_run == 0 {
            "EMPTY"
        } else {
            "GREEN"
        }
    }

    /// The exit code the command line gives this report, for a program of yours that
    /// sweeps: 0 GREEN, 1 RED or INCOMPLETE (CI must notice both), 2 EMPTY (no seed ran:
    /// nothing was checked).
    pub fn exit_code(&self) -> std::process::ExitCode {
        match self.verdict() {
            "GREEN" => std::process::ExitCode::SUCCESS,
            "EMPTY" => std::process::ExitCode::from(2),
            _ => std::process::ExitCode::from(1),
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
        if let Some(e) = &self.exploration {
            out.push_str(&e.summary());
        }
        if self.check_determinism_rate > 0.0 {
            let diverged = self.failures_by_checker.get(crate::sweep::DETERMINISM).copied().unwrap_or(0);
            out.push_str(&format!(
                "  determinism: {} seed(s) re-run ({}), {diverged} ran differently\n",
                self.determinism_rechecked,
                self.determinism_rate_text()
            ));
        }
        if !self.unreached.is_empty() {
            out.push_str(&format!(
                "  never reached by any seed: {} — the invariants they partner went untested (a vacuous green); run more seeds (--count) or a scenario that provokes them\n",
                self.unreached.join(", ")
            ));
        }
        if self.seeds_run == 0 {
            out.push_str("  no seed ran: nothing was checked\n");
        }
        if !self.missing_shards.is_empty() {
            out.push_str(&format!(
                "  incomplete: shard(s) {} of the range were not merged\n",
                self.missing_shards.join(", ")
            ));
        }
        out
    }

    /// The determinism check rate as a percentage: `1%`, `0.5%`.
    pub fn determinism_rate_text(&self) -> String {
        format!("{}%", (self.check_determinism_rate * 1e6).round() / 1e4)
    }

    /// JUnit `<properties>` of every suite: the sweep's determinism check, when it ran.
    fn junit_properties(&self) -> String {
        if self.check_determinism_rate == 0.0 {
            return String::new();
        }
        format!(
            "    <properties>\n      <property name=\"check_determinism_rate\" value=\"{}\"/>\n      <property name=\"determinism_rechecked\" value=\"{}\"/>\n    </properties>\n",
            self.check_determinism_rate, self.determinism_rechecked
        )
    }

    /// JUnit XML, in the shape CI dashboards (GitHub, GitLab, Jenkins) render well: one
    /// suite per scenario holding one failing test case per failing seed kept in the report
    /// (named `seed N`, with the checker as the failure type and the replay line in the
    /// text) and one passing case, `passing seeds`, for the rest — with the sweep's
    /// determinism check in its `<properties>` when it ran; and, when failures were
    /// left out of the report, one more suite `left out` with a single failing case that
    /// says how many. The root's `tests` and `failures` are the sums of its suites', so
    /// every dashboard shows the same numbers; the exact seed counts are in the JSON report.
    pub fn junit(&self) -> String {
        let mut suites = String::new();
        let (mut tests, mut failed) = (0usize, 0usize);
        for scenario in &self.scenarios {
            let failures: Vec<&Failure> = self.failures.iter().filter(|f| &f.scenario == scenario).collect();
            tests += failures.len() + 1;
            failed += failures.len();
            suites.push_str(&format!(
                "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\">\n",
                xml(scenario),
                failures.len() + 1,
                failures.len()
            ));
            suites.push_str(&self.junit_properties());
            for f in &failures {
                suites.push_str(&format!(
                    "    <testcase classname=\"{}\" name=\"seed {}\">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>\n",
                    xml(scenario),
                    f.seed,
                    xml(&f.checker),
                    xml(&f.message),
                    xml(&format!("{}\nreplay: {}", f.message, f.replay))
                ));
            }
            suites.push_str(&format!("    <testcase classname=\"{}\" name=\"passing seeds\"/>\n", xml(scenario)));
            suites.push_str("  </testsuite>\n");
        }
        if self.failures_left_out > 0 {
            tests += 1;
            failed += 1;
            let text = format!(
                "{} more failing seed(s) are counted in the JSON report but not listed (only the first {FAILURES_KEPT_PER_CHECKER} per checker are)",
                self.failures_left_out
            );
            suites.push_str(&format!(
                "  <testsuite name=\"left out\" tests=\"1\" failures=\"1\">\n    <testcase classname=\"left out\" name=\"failing seeds not listed\">\n      <failure type=\"left-out\" message=\"{0}\">{0}</failure>\n    </testcase>\n  </testsuite>\n",
                xml(&text)
            ));
        }
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"sutra-sim sweep\" tests=\"{tests}\" failures=\"{failed}\" time=\"{:.3}\">\n{suites}</testsuites>\n",
            self.wall_seconds
        )
    }
}

/// `I/N` as `(I, N)`, if `0 <= I < N`.
pub fn parse_shard(text: &str) -> Option<(u64, u64)> {
    let (i, n) = text.split_once('/')?;
    let (i, n): (u64, u64) = (i.parse().ok()?, n.parse().ok()?);
    (n > 0 && i < n).then_some((i, n))
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
            model_hash: "m".into(),
            scenarios: vec!["smoke".into()],
            scenario_sources: vec![ScenarioSource {
                name: "smoke".into(),
                file: None,
                hash: "h".into(),
                checkers: vec!["c".into()],
            }],
            start: 0,
            count: 100,
            shard: None,
            strategy: None,
            merged_shards: vec![],
            missing_shards: vec![],
            mutant: None,
            check_determinism_rate: 0.0,
            determinism_rechecked: 0,
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
                    grown: None,
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
            exploration: None,
        };
        r.finish();
        r
    }

    fn shard(i: u64, of: u64, seeds: u64, failing: &[u64]) -> SweepReport {
        let mut r = report(seeds, failing);
        r.shard = Some(format!("{i}/{of}"));
        r
    }

    #[test]
    fn merge_adds_seeds_failures_and_coverage() {
        let m = SweepReport::merge(&[shard(0, 2, 5, &[3]), shard(1, 2, 7, &[1, 9])]).unwrap();
        assert!(m.missing_shards.is_empty() && m.shard.is_none());
        assert_eq!(m.merged_shards, vec!["0/2".to_string(), "1/2".to_string()]);
        assert_eq!(m.seeds_run, 12);
        assert_eq!(m.violations, 3);
        assert_eq!(m.failures.iter().map(|f| f.seed).collect::<Vec<_>>(), vec![1, 3, 9]);
        assert_eq!(m.coverage["a"], 12);
        assert_eq!(m.unreached, vec!["b".to_string()]);
    }

    #[test]
    fn merge_refuses_a_shard_given_twice_and_reports_of_other_sweeps() {
        let err = SweepReport::merge(&[shard(0, 2, 5, &[3]), shard(0, 2, 5, &[3])]).unwrap_err();
        assert!(err.contains("given twice"), "{err}");
        let err = SweepReport::merge(&[shard(0, 2, 5, &[]), shard(1, 3, 5, &[])]).unwrap_err();
        assert!(err.contains("one of 3 shards"), "{err}");
        let err = SweepReport::merge(&[report(5, &[]), shard(1, 3, 5, &[])]).unwrap_err();
        assert!(err.contains("one of 3 shards"), "{err}");
        let err = SweepReport::merge(&[report(5, &[]), report(5, &[])]).unwrap_err();
        assert!(err.contains("given twice"), "{err}");
        for (what, change) in [
            ("seed range", (|r: &mut SweepReport| r.count = 99) as fn(&mut SweepReport)),
            ("seed range", |r| r.start = 1),
            ("version", |r| r.version = "other".into()),
            ("model hash", |r| r.model_hash = "other".into()),
            ("mutant", |r| r.mutant = Some("ack-before-commit".into())),
            ("strategy", |r| r.strategy = Some("pct:3:1000".into())),
            ("scenarios", |r| r.scenario_sources[0].hash = "other".into()),
            ("scenarios", |r| r.scenario_sources[0].checkers.push("d".into())),
        ] {
            let mut other = shard(1, 2, 5, &[]);
            change(&mut other);
            let err = SweepReport::merge(&[shard(0, 2, 5, &[]), other]).unwrap_err();
            assert!(err.contains(what), "{what}: {err}");
        }
        let mut old = report(5, &[]);
        old.count = 0;
        assert!(SweepReport::merge(&[old]).unwrap_err().contains("does not say which seeds"));
    }

    #[test]
    fn a_missing_shard_makes_the_merge_incomplete_never_green() {
        let m = SweepReport::merge(&[shard(0, 3, 5, &[]), shard(2, 3, 5, &[])]).unwrap();
        assert_eq!(m.missing_shards, vec!["1/3".to_string()]);
        assert_eq!(m.verdict(), "INCOMPLETE");
        assert!(m.summary().contains("shard(s) 1/3"), "{}", m.summary());
    }

    #[test]
    fn the_junit_root_counts_what_its_suites_hold() {
        let mut r = report(500, &(0..150).collect::<Vec<_>>());
        r.scenarios.push("migration".into());
        r.finish();
        assert_eq!(r.failures.len(), FAILURES_KEPT_PER_CHECKER);
        let x = r.junit();
        let total = |attr: &str, tag: &str| -> usize {
            x.lines()
                .filter(|l| l.trim_start().starts_with(tag))
                .map(|l| {
                    let at = l.find(&format!(" {attr}=\"")).unwrap() + attr.len() + 3;
                    l[at..at + l[at..].find('"').unwrap()].parse::<usize>().unwrap()
                })
                .sum()
        };
        assert_eq!(total("tests", "<testsuites "), total("tests", "<testsuite "));
        assert_eq!(total("failures", "<testsuites "), total("failures", "<testsuite "));
        assert_eq!(total("tests", "<testsuite "), x.matches("<testcase ").count());
        assert_eq!(total("failures", "<testsuite "), x.matches("<failure ").count());
        assert!(x.contains("50 more failing seed(s)"), "{x}");
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
        // In one line, what it means and what to do about it.
        let line = s.lines().find(|l| l.contains("never reached by any seed: b")).expect(&s);
        assert!(line.contains("went untested") && line.contains("run more seeds (--count)"), "{line}");
    }
}

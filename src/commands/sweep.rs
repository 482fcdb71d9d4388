//! `sutra-sim sweep`: many seeds, in parallel, with a progress bar, a summary and reports.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use sutra_sim::explore;
use sutra_sim::plugin::CheckerSet;
use sutra_sim::save_failures::{save_failures, SaveFailures};
use sutra_sim::scenario_arg;
use sutra_sim::sweep::{self, SweepPlan};
use sutra_sim_core::parse_duration;

use super::*;

/// The arguments of `sutra-sim sweep`.
#[derive(clap::Args)]
pub struct SweepArgs {
    /// Built-in scenario name, a scenario file, or `all`.
    #[arg(long, default_value = "smoke")]
    pub scenario: String,
    /// Size of the seed range from --start; every scenario runs each seed of it. Under
    /// --shard I/N it is still the size of the whole range, not of this shard: each shard
    /// runs about count/N of its seeds, and N shards given the same --count cover it.
    #[arg(long, default_value_t = 1000)]
    pub count: u64,
    /// First seed.
    #[arg(long, default_value_t = 0)]
    pub start: u64,
    /// Worker threads; by default the available cores (results are identical for any
    /// number).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Re-run this share of the seeds (`1%`, `0.01`) and fail any that runs differently
    /// the second time, naming the first divergent event: a check that the model and the
    /// checkers are deterministic. Off by default.
    #[arg(long, value_name = "RATE")]
    pub check_determinism: Option<String>,
    /// Run one shard of the range: `I/N` takes every N-th seed, starting at offset I
    /// (0 <= I < N); `merge` joins the N shard reports.
    #[arg(long)]
    pub shard: Option<String>,
    /// Switch on a known-bad variant of the model.
    #[arg(long)]
    pub mutant: Option<String>,
    /// Override the scenarios' strategy.
    #[arg(long)]
    pub strategy: Option<String>,
    /// Stop taking new seeds after this long (e.g. `50m`); the report is still written.
    #[arg(long)]
    pub time_budget: Option<String>,
    /// Write the JSON report here.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Write JUnit XML here.
    #[arg(long)]
    pub junit: Option<PathBuf>,
    /// Save reproducers of failures in this directory: at most --save-failures-max files,
    /// first one per distinct failing checker, then the rest in report order; the first 16
    /// are shrunk (each within 10 s and the sweep's --time-budget), the others saved as run.
    #[arg(long)]
    pub save_failures: Option<PathBuf>,
    /// Most reproducers --save-failures writes.
    #[arg(long, default_value_t = sutra_sim::save_failures::SAVED_FAILURES_DEFAULT)]
    pub save_failures_max: usize,
    /// Do not shrink failures before saving them.
    #[arg(long)]
    pub no_shrink: bool,
    /// Run only this checker (repeatable); by default the scenario's checkers, or all.
    #[arg(long = "checker", value_name = "NAME")]
    pub checker: Vec<String>,
    /// Do not run this checker (repeatable).
    #[arg(long = "skip-checker", value_name = "NAME")]
    pub skip_checker: Vec<String>,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Explore instead of sweeping independent seeds: grow the runs that reached a new
    /// coverage mark from their tape prefix (`--count` is then the run budget per
    /// scenario, `--start` the first fresh seed). Same report, plus what the exploration did.
    #[arg(long)]
    pub explore: bool,
    /// With `--explore`: the share of children, in percent, that switch between the random
    /// walk and PCT at their branch point (default: the explorer's).
    #[arg(long, value_name = "PERCENT")]
    pub switch_percent: Option<u32>,
    /// With `--explore`: how many times likelier a boosted child's rare chances are past its
    /// branch point (1: no boost; default: the explorer's).
    #[arg(long, value_name = "FACTOR")]
    pub boost: Option<u32>,
    /// With `--explore`: the share of children, in percent, whose rare chances are boosted,
    /// before and after the schedule settles (default: the explorer's, all before and half
    /// after; no child is boosted in the first runs, which are planned as a sweep's).
    #[arg(long, value_name = "PERCENT")]
    pub boost_percent: Option<u32>,
}

/// The arguments of `sutra-sim explore`: `sweep --explore` with `--runs` for the budget.
#[derive(clap::Args)]
pub struct ExploreArgs {
    /// Runs per scenario: fresh seeds and branches of earlier runs together.
    #[arg(long)]
    pub runs: u64,
    #[command(flatten)]
    pub sweep: SweepArgs,
}

/// `sutra-sim explore`.
pub fn explore_command(mut a: ExploreArgs) -> Outcome {
    a.sweep.count = a.runs;
    a.sweep.explore = true;
    sweep_command(a.sweep)
}

pub fn parse_shard(text: &str) -> Result<(u64, u64), Usage> {
    let bad = || Usage(format!("--shard {text:?} is not I/N with 0 <= I < N"));
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let (i, n): (u64, u64) = (i.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

pub fn sweep_command(a: SweepArgs) -> Outcome {
    let scenarios = scenario_arg::resolve(&a.scenario).map_err(|e| Usage(e.0))?;
    let checkers =
        CheckerSet::built_in().only(a.checker).and_then(|c| c.skip(a.skip_checker)).map_err(|e| Usage(e.0))?;
    checkers.check_scenarios(&scenarios).map_err(|e| Usage(e.0))?;
    let mutant = parse_mutant(a.mutant)?;
    let strategy = parse_strategy(a.strategy)?;
    let shard = a.shard.as_deref().map(parse_shard).transpose()?;
    let time_budget =
        a.time_budget.as_deref().map(parse_duration).transpose().map_err(|e| Usage(format!("--time-budget: {e}")))?;
    if a.count == 0 || a.count > sweep::SEEDS_MAX {
        return Err(Usage(format!("--count must be between 1 and {}", sweep::SEEDS_MAX)));
    }
    if a.start.checked_add(a.count - 1).is_none() {
        return Err(Usage(format!(
            "--start {} with --count {} runs past the last seed {}: the range would wrap to seed 0",
            a.start,
            a.count,
            u64::MAX
        )));
    }
    let jobs = a.jobs.unwrap_or_else(default_jobs);
    if jobs == 0 || jobs > sweep::JOBS_MAX {
        return Err(Usage(format!("--jobs must be between 1 and {}", sweep::JOBS_MAX)));
    }
    let recheck_ppm = a
        .check_determinism
        .as_deref()
        .map(sutra_sim::determinism::parse_rate)
        .transpose()
        .map_err(|e| Usage(format!("--check-determinism: {e}")))?
        .unwrap_or(0);
    if a.explore && shard.is_some() {
        return Err(Usage(
            "--shard splits a range of seeds; an exploration is one search (give each job its own --start)".into(),
        ));
    }
    if a.switch_percent.is_some() && !a.explore {
        return Err(Usage("--switch-percent is a share of an exploration's children; give --explore".into()));
    }
    if (a.boost.is_some() || a.boost_percent.is_some()) && !a.explore {
        return Err(Usage("--boost and --boost-percent shape an exploration's children; give --explore".into()));
    }
    if a.boost == Some(0) {
        return Err(Usage("--boost 0 would make rare chances impossible; 1 is no boost".into()));
    }
    if a.boost_percent.is_some_and(|p| p > 100) {
        return Err(Usage(format!("--boost-percent {} is over 100", a.boost_percent.unwrap_or(0))));
    }
    if a.switch_percent.is_some_and(|p| p > 100) {
        return Err(Usage(format!("--switch-percent {} is over 100", a.switch_percent.unwrap_or(0))));
    }
    if a.explore && recheck_ppm > 0 {
        return Err(Usage("--check-determinism re-runs seeds of a plain sweep; not with --explore".into()));
    }
    // Every output is checked before the first seed: a bad path found at the end would
    // throw the whole sweep away.
    let outputs = [("--report", a.report.as_ref()), ("--junit", a.junit.as_ref())];
    if let Some(dir) = &a.save_failures {
        check_save_dir(dir, &outputs)?;
    }
    check_outputs(&scenario_input(&a.scenario), &outputs)?;
    let plan =
        SweepPlan { scenarios, start: a.start, count: a.count, shard, mutant, strategy, jobs, time_budget, checkers };
    let total = plan.item_count();
    if total == 0 {
        return Err(Usage(format!(
            "--shard {} of --count {} leaves no seed to run",
            a.shard.as_deref().unwrap_or(""),
            a.count
        )));
    }
    let bar = std::io::stderr().is_terminal().then(|| progress_bar(total));
    // SIGINT or SIGTERM stops taking new seeds; the seeds in flight finish and the report
    // and the failures found so far are still written. A second one ends the process.
    signals::install();
    let stop = &signals::STOP;
    let started = Instant::now();
    let progress = |done, failing| {
        if let Some(bar) = &bar {
            bar.set_position(done);
            bar.set_message(format!("{failing} failing"));
        }
    };
    let mut explore_config = explore::config_for(&plan);
    if let Some(percent) = a.switch_percent {
        explore_config.switch_percent = percent;
    }
    if let Some(boost) = a.boost {
        explore_config.boost = boost;
    }
    if let Some(percent) = a.boost_percent {
        explore_config.boost_percent = percent;
        explore_config.boost_percent_settled = percent;
    }
    let (tally, early, exploration) = if a.explore {
        let (tally, exploration, early) = explore::run(&plan, &explore_config, stop, &progress);
        (tally, early, Some(exploration))
    } else {
        let (tally, early) = sweep::run_checked(&plan, recheck_ppm, stop, &progress);
        (tally, early, None)
    };
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let mut report = sweep::report(&plan, &tally, started.elapsed(), early);
    // A scenario from a file is named by its file: in the report, and in every replay line
    // (a built-in scenario of the same name is another scenario).
    if let Some(file) = scenario_arg::file_of(&a.scenario) {
        for source in &mut report.scenario_sources {
            source.file = Some(file.to_string());
        }
        for failure in &mut report.failures {
            let determinism = failure.checker == sweep::DETERMINISM;
            failure.replay = plan.replay_command_for(file, &failure.scenario, failure.seed, determinism);
        }
    }
    if let Some(exploration) = exploration {
        report.exploration = Some(exploration);
        // A grown run has no seed that replays it alone: until its reproducer is saved,
        // the way back to it is the exploration itself.
        for failure in report.failures.iter_mut().filter(|f| f.grown.is_some()) {
            failure.replay = explore::rerun_command(&plan, &explore_config, &a.scenario);
        }
    }
    if report.seeds_run == 0 && signals::interrupted_exit_code().is_none() {
        return Err(Usage(format!(
            "no seed ran (the time budget of {} ran out first): nothing was checked, and nothing written",
            a.time_budget.as_deref().unwrap_or("?")
        )));
    }
    // The JSON report first, whatever happens next: shrinking and saving take long, and a
    // second Ctrl-C or a full disk must not lose what the sweep found.
    let mut lost = LostOutputs::default();
    lost.keep(write_report_files(&report, a.report.as_ref(), None));
    if let Some(dir) = &a.save_failures {
        let options = SaveFailures {
            dir: dir.clone(),
            shrink: !a.no_shrink,
            jobs,
            max: a.save_failures_max,
            deadline: time_budget.map(|b| started + b),
        };
        match save_failures(&plan, &mut report, &options, stop) {
            Ok(errors) => errors.0.into_iter().for_each(|e| lost.keep(Err(e))),
            Err(e) => lost.keep(Err(e)),
        }
        // Again, now naming the saved files.
        lost.keep(write_report_files(&report, a.report.as_ref(), None));
    }
    lost.keep(write_report_files(&report, None, a.junit.as_ref()));
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("reports serialise"));
    } else {
        print!("{}", report.summary());
    }
    let code = if report.violations > 0 {
        ExitCode::from(1)
    } else if let Some(code) = signals::interrupted_exit_code() {
        ExitCode::from(code)
    } else {
        ExitCode::SUCCESS
    };
    Ok(lost.exit(code))
}

/// Worker threads when `--jobs` is not given: the available cores (results are the same
/// for any number, so a core left idle is only time lost).
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).min(sweep::JOBS_MAX)
}

/// The progress bar of a sweep on a terminal: seeds done, the rate as a whole number of
/// seeds per second, failures so far (from the start: "0 failing"), and the time left.
fn progress_bar(total: u64) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} seeds, {rate}, {msg}, eta {eta}")
            .expect("a valid template")
            .with_key("rate", |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{}", rate_text(state.per_sec()));
            }),
    );
    bar.set_message("0 failing");
    bar
}

/// A rate as people read it: `2,746 seeds/s`.
pub fn rate_text(per_second: f64) -> String {
    let whole = if per_second.is_finite() && per_second > 0.0 { per_second.round() as u64 } else { 0 };
    let digits = whole.to_string();
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("{grouped} seeds/s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_is_a_whole_number_of_seeds_per_second_in_groups_of_three() {
        assert_eq!(rate_text(2_745.664_3), "2,746 seeds/s");
        assert_eq!(rate_text(0.4), "0 seeds/s");
        assert_eq!(rate_text(1_234_567.0), "1,234,567 seeds/s");
        assert_eq!(rate_text(f64::NAN), "0 seeds/s");
    }

    #[test]
    fn jobs_default_to_the_available_cores() {
        assert_eq!(default_jobs(), std::thread::available_parallelism().unwrap().get().min(sweep::JOBS_MAX));
    }
}

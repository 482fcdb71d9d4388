//! The `sutra-sim` command line (DESIGN.md §10). Exit codes: 0 all passed, 1 a failure
//! was found (violation, hang, budget overrun, crash), 2 bad usage or bad input — and with
//! exit 2 nothing is written.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use serde_json::json;
use sutra_sim::files::write_atomically;
use sutra_sim::report::SweepReport;
use sutra_sim::sweep::{self, SweepPlan};
use sutra_sim::{scenario_arg, VERSION};
use sutra_sim_core::{parse_duration, CheckerKind, EntropyMode, StrategyConfig, Verdict};
use sutra_sim_model::{checkers, Mutant, RunOptions, Scenario, MUTANTS};

#[derive(Parser)]
#[command(name = "sutra-sim", version, about = "Deterministic simulation testing for the Sutra ownership protocol")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one seed of one scenario and print its verdict and fingerprint.
    Run {
        /// Built-in scenario name or path to a scenario TOML file.
        #[arg(long, default_value = "smoke")]
        scenario: String,
        /// The seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Switch on a known-bad variant of the model.
        #[arg(long)]
        mutant: Option<String>,
        /// Override the scenario's strategy: random, pct, pct:DEPTH, pct:DEPTH:HORIZON.
        #[arg(long)]
        strategy: Option<String>,
        /// Write a Perfetto/Chrome trace-event timeline.
        #[arg(long)]
        perfetto: Option<PathBuf>,
        /// Print one JSON document.
        #[arg(long)]
        json: bool,
    },
    /// Run many seeds, in parallel, and report.
    Sweep {
        /// Built-in scenario name, a scenario file, or `all`.
        #[arg(long, default_value = "smoke")]
        scenario: String,
        /// Seeds per scenario.
        #[arg(long, default_value_t = 1000)]
        count: u64,
        /// First seed.
        #[arg(long, default_value_t = 0)]
        start: u64,
        /// Worker threads (results are identical for any number).
        #[arg(long, default_value_t = 1)]
        jobs: usize,
        /// Take every N-th seed starting at I: `I/N`.
        #[arg(long)]
        shard: Option<String>,
        /// Switch on a known-bad variant of the model.
        #[arg(long)]
        mutant: Option<String>,
        /// Override the scenarios' strategy.
        #[arg(long)]
        strategy: Option<String>,
        /// Stop taking new seeds after this long (e.g. `50m`); the report is still written.
        #[arg(long)]
        time_budget: Option<String>,
        /// Write the JSON report here.
        #[arg(long)]
        report: Option<PathBuf>,
        /// Write JUnit XML here.
        #[arg(long)]
        junit: Option<PathBuf>,
        /// Save a reproducer per failure in this directory.
        #[arg(long)]
        save_failures: Option<PathBuf>,
        /// Do not shrink failures before saving them.
        #[arg(long)]
        no_shrink: bool,
        /// Print the report as JSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Replay a reproducer file exactly.
    Replay {
        /// The reproducer.
        file: PathBuf,
        /// Print the whole trace.
        #[arg(long)]
        trace: bool,
        /// Write a Perfetto/Chrome trace-event timeline.
        #[arg(long)]
        perfetto: Option<PathBuf>,
        /// Print one JSON document.
        #[arg(long)]
        json: bool,
    },
    /// Shrink a failing run to a small reproducer.
    Shrink {
        /// A reproducer to shrink.
        file: Option<PathBuf>,
        /// Or: the scenario of a failing seed.
        #[arg(long)]
        scenario: Option<String>,
        /// The failing seed.
        #[arg(long)]
        seed: Option<u64>,
        /// The mutant of the failing run.
        #[arg(long)]
        mutant: Option<String>,
        /// Where to write the shrunk reproducer.
        #[arg(short = 'o', long = "output")]
        output: Option<PathBuf>,
        /// Stop shrinking after this long.
        #[arg(long)]
        time_budget: Option<String>,
        /// Print one JSON document.
        #[arg(long)]
        json: bool,
    },
    /// Show that every mutant is caught and the correct model is clean.
    Mutants {
        /// Built-in scenario name, a scenario file, or `all`.
        #[arg(long, default_value = "all")]
        scenario: String,
        /// Seeds tried per mutant and scenario (and run on the correct model).
        #[arg(long, default_value_t = 2000)]
        count: u64,
        /// Worker threads for the correct-model seeds.
        #[arg(long, default_value_t = 1)]
        jobs: usize,
        /// Write the JSON report here.
        #[arg(long)]
        report: Option<PathBuf>,
        /// Print the report as JSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// List scenarios, checkers, faults or mutants.
    List {
        /// What to list.
        #[arg(value_parser = ["scenarios", "checkers", "faults", "mutants"])]
        what: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Merge shard reports into one.
    Merge {
        /// The shard reports.
        #[arg(required = true)]
        reports: Vec<PathBuf>,
        /// Where to write the merged report.
        #[arg(short = 'o', long = "output", required = true)]
        output: PathBuf,
    },
    /// Measure seeds and events per second.
    Bench {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// A command's failure: usage/input problems exit 2.
struct Usage(String);

type Outcome = Result<ExitCode, Usage>;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run { scenario, seed, mutant, strategy, perfetto, json } => {
            run(&scenario, seed, mutant, strategy, perfetto, json)
        }
        Command::Sweep {
            scenario,
            count,
            start,
            jobs,
            shard,
            mutant,
            strategy,
            time_budget,
            report,
            junit,
            save_failures,
            no_shrink,
            json,
        } => sweep_command(SweepArgs {
            scenario,
            count,
            start,
            jobs,
            shard,
            mutant,
            strategy,
            time_budget,
            report,
            junit,
            save_failures,
            no_shrink,
            json,
        }),
        Command::Replay { .. } => later("replay", "reproducer files and replay arrive with the shrinking issue (#5)"),
        Command::Shrink { .. } => later("shrink", "the minimiser arrives with the shrinking issue (#5)"),
        Command::Mutants { scenario, count, jobs, report, json } => mutants(&scenario, count, jobs, report, json),
        Command::List { what, json } => list(&what, json),
        Command::Merge { reports, output } => merge(&reports, &output),
        Command::Bench { json } => bench(json),
    };
    match result {
        Ok(code) => code,
        Err(Usage(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn later(command: &str, why: &str) -> Outcome {
    Err(Usage(format!("`sutra-sim {command}` is not available yet: {why}")))
}

fn parse_mutant(name: Option<String>) -> Result<Option<Mutant>, Usage> {
    name.map(|n| Mutant::parse(&n).map_err(Usage)).transpose()
}

fn parse_strategy(text: Option<String>) -> Result<Option<StrategyConfig>, Usage> {
    text.map(|t| StrategyConfig::parse(&t).map_err(Usage)).transpose()
}

fn exit_for(verdict: &Verdict) -> ExitCode {
    if verdict.is_pass() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn replay_command(scenario: &str, seed: u64, mutant: Option<Mutant>, strategy: Option<StrategyConfig>) -> String {
    let mut cmd = format!("sutra-sim run --scenario {scenario} --seed {seed}");
    if let Some(m) = mutant {
        cmd.push_str(&format!(" --mutant {}", m.name()));
    }
    if let Some(s) = strategy {
        cmd.push_str(&format!(" --strategy {}", s.label()));
    }
    cmd
}

fn run(
    scenario_arg: &str,
    seed: u64,
    mutant: Option<String>,
    strategy: Option<String>,
    perfetto: Option<PathBuf>,
    json: bool,
) -> Outcome {
    let scenario = scenario_arg::resolve_one(scenario_arg).map_err(|e| Usage(e.0))?;
    let mutant = parse_mutant(mutant)?;
    let strategy = parse_strategy(strategy)?;
    if perfetto.is_some() {
        return later("run --perfetto", "the Perfetto timeline arrives with the replay machinery (issue #5)");
    }
    let options = RunOptions { entropy: EntropyMode::Seed(seed), strategy, mutant, keep_trace: false };
    let out = sutra_sim_model::run(&scenario, &options);
    let replay = replay_command(scenario_arg, seed, mutant, strategy);
    if json {
        let doc = json!({
            "verdict": out.verdict.class(),
            "checker": out.verdict.checker(),
            "message": out.verdict.message(),
            "fingerprint": format!("{:016x}", out.fingerprint),
            "events": out.events,
            "sim_time_ms": out.sim_time.as_millis(),
            "scenario": scenario.name,
            "seed": seed,
            "mutant": mutant.map(|m| m.name()),
            "strategy": strategy.unwrap_or_else(|| scenario.strategy()).label(),
            "tape_len": out.tape.len(),
            "replay": replay,
        });
        println!("{doc}");
    } else {
        println!("{}", out.verdict);
        println!(
            "fingerprint {:016x}, {} events, {} simulated, tape of {} draws",
            out.fingerprint,
            out.events,
            out.sim_time,
            out.tape.len()
        );
        if !out.verdict.is_pass() {
            println!("replay: {replay}");
        }
    }
    Ok(exit_for(&out.verdict))
}

struct SweepArgs {
    scenario: String,
    count: u64,
    start: u64,
    jobs: usize,
    shard: Option<String>,
    mutant: Option<String>,
    strategy: Option<String>,
    time_budget: Option<String>,
    report: Option<PathBuf>,
    junit: Option<PathBuf>,
    save_failures: Option<PathBuf>,
    no_shrink: bool,
    json: bool,
}

fn parse_shard(text: &str) -> Result<(u64, u64), Usage> {
    let bad = || Usage(format!("--shard {text:?} is not I/N with 0 <= I < N"));
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let (i, n): (u64, u64) = (i.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

fn sweep_command(a: SweepArgs) -> Outcome {
    let scenarios = scenario_arg::resolve(&a.scenario).map_err(|e| Usage(e.0))?;
    let mutant = parse_mutant(a.mutant)?;
    let strategy = parse_strategy(a.strategy)?;
    let shard = a.shard.as_deref().map(parse_shard).transpose()?;
    let time_budget =
        a.time_budget.as_deref().map(parse_duration).transpose().map_err(|e| Usage(format!("--time-budget: {e}")))?;
    if a.count == 0 || a.count > sweep::SEEDS_MAX {
        return Err(Usage(format!("--count must be between 1 and {}", sweep::SEEDS_MAX)));
    }
    if a.jobs == 0 || a.jobs > sweep::JOBS_MAX {
        return Err(Usage(format!("--jobs must be between 1 and {}", sweep::JOBS_MAX)));
    }
    if a.save_failures.is_some() {
        return later("sweep --save-failures", "reproducer files arrive with the shrinking issue (#5)");
    }
    let _ = a.no_shrink; // Nothing shrinks yet; the flag is accepted so CI scripts keep working.
    let plan =
        SweepPlan { scenarios, start: a.start, count: a.count, shard, mutant, strategy, jobs: a.jobs, time_budget };
    let total = plan.items().len() as u64;
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(total);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} seeds, {per_sec}, {msg}, eta {eta}")
                .expect("a valid template"),
        );
        bar
    });
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let (results, early) = sweep::run(&plan, &stop, &|done, failing| {
        if let Some(bar) = &bar {
            bar.set_position(done);
            bar.set_message(format!("{failing} failing"));
        }
    });
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let report = sweep::report(&plan, &results, started.elapsed(), early);
    write_report_files(&report, a.report.as_ref(), a.junit.as_ref())?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("reports serialise"));
    } else {
        print!("{}", report.summary());
    }
    Ok(if report.violations == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn write_report_files(report: &SweepReport, json: Option<&PathBuf>, junit: Option<&PathBuf>) -> Result<(), Usage> {
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(report).expect("reports serialise");
        write_atomically(path, text.as_bytes()).map_err(|e| Usage(format!("cannot write {}: {e}", path.display())))?;
    }
    if let Some(path) = junit {
        write_atomically(path, report.junit().as_bytes())
            .map_err(|e| Usage(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}

fn mutants(scenario_arg: &str, count: u64, jobs: usize, report_path: Option<PathBuf>, json: bool) -> Outcome {
    let scenarios = scenario_arg::resolve(scenario_arg).map_err(|e| Usage(e.0))?;
    if count == 0 {
        return Err(Usage("--count must be at least 1".into()));
    }
    let mut rows = Vec::new();
    let mut all_killed = true;
    for info in MUTANTS.iter() {
        let started = Instant::now();
        let mut tried = 0u64;
        let mut kill = None;
        'search: for scenario in &scenarios {
            for seed in 0..count {
                tried += 1;
                let r = sweep::run_seed(scenario, seed, Some(info.mutant), None);
                if !r.verdict.is_pass() {
                    kill = Some((scenario.name.clone(), seed, r.verdict));
                    break 'search;
                }
            }
        }
        let wall_ms = started.elapsed().as_millis() as u64;
        all_killed &= kill.is_some();
        if !json {
            match &kill {
                Some((s, seed, v)) => println!(
                    "killed   {:<26} by {:<22} after {tried:>5} seed(s), {wall_ms:>6} ms  ({s} seed {seed})",
                    info.name,
                    v.checker().unwrap_or("")
                ),
                None => {
                    println!("SURVIVED {:<26} {tried} seed(s), {wall_ms} ms; expected {}", info.name, info.caught_by)
                }
            }
        }
        rows.push(json!({
            "name": info.name,
            "rules": info.rules,
            "killed": kill.is_some(),
            "checker": kill.as_ref().and_then(|(_, _, v)| v.checker().map(str::to_string)),
            "expected_checker": info.caught_by,
            "message": kill.as_ref().map(|(_, _, v)| v.message()),
            "scenario": kill.as_ref().map(|(s, _, _)| s.clone()),
            "seed": kill.as_ref().map(|(_, seed, _)| *seed),
            "seeds_to_kill": kill.as_ref().map(|_| tried),
            "wall_ms": wall_ms,
        }));
    }
    let plan =
        SweepPlan { scenarios, start: 0, count, shard: None, mutant: None, strategy: None, jobs, time_budget: None };
    let started = Instant::now();
    let (results, _) = sweep::run(&plan, &AtomicBool::new(false), &|_, _| {});
    let correct = sweep::report(&plan, &results, started.elapsed(), false);
    let doc = json!({
        "version": VERSION,
        "mutants": rows,
        "correct_seeds": correct.seeds_run,
        "correct_violations": correct.violations,
        "correct_failures": correct.failures,
    });
    if let Some(path) = &report_path {
        let text = serde_json::to_string_pretty(&doc).expect("reports serialise");
        write_atomically(path, text.as_bytes()).map_err(|e| Usage(format!("cannot write {}: {e}", path.display())))?;
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&doc).expect("reports serialise"));
    } else {
        println!("correct model: {} seed(s), {} failing", correct.seeds_run, correct.violations);
        for f in correct.failures.iter().take(5) {
            println!("  {} seed {}: {}: {}\n    replay: {}", f.scenario, f.seed, f.checker, f.message, f.replay);
        }
    }
    Ok(if all_killed && correct.violations == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

const FAULTS: [(&str, &str); 9] = [
    ("replica-crash", "the process dies at an arbitrary await point; it restarts later as a new incarnation, or stays dead until the heal"),
    ("process-pause", "the process freezes for shorter or longer than the claim timeout, then carries on"),
    ("misroute", "a relay or timer fire goes to the wrong lane"),
    ("clock-skew", "per-replica clock offset; the store's clock stays authoritative"),
    ("broker", "duplicate delivery; redelivery after consumer death"),
    ("store", "latency on every call"),
    ("slow-step", "a live step outlasts the claim timeout (live-but-slow)"),
    ("timer-jitter", "refused timer fires are deferred with jittered backoff"),
    ("lease", "the sweeper's lease holder dies or pauses with the replica holding it"),
];

fn list(what: &str, json: bool) -> Outcome {
    let rows: Vec<serde_json::Value> = match what {
        "scenarios" => {
            Scenario::all_built_in().iter().map(|s| json!({"name": s.name, "description": s.description})).collect()
        }
        "checkers" => checkers::registry()
            .specs()
            .map(|s| json!({"name": s.name, "kind": s.kind.as_str(), "rules": s.rules, "description": s.description}))
            .collect(),
        "faults" => FAULTS.iter().map(|(n, d)| json!({"name": n, "description": d})).collect(),
        "mutants" => MUTANTS
            .iter()
            .map(|m| json!({"name": m.name, "rules": m.rules, "caught_by": m.caught_by, "description": m.description}))
            .collect(),
        _ => unreachable!("clap checks the value"),
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&rows).expect("lists serialise"));
        return Ok(ExitCode::SUCCESS);
    }
    for row in &rows {
        let name = row["name"].as_str().unwrap_or("");
        let detail = match what {
            "checkers" => format!(
                "{:<10} {:<28} {}",
                row["kind"].as_str().unwrap_or(""),
                rules_text(&row["rules"]),
                row["description"].as_str().unwrap_or("")
            ),
            "mutants" => format!(
                "breaks {:<8} caught by {:<22} {}",
                row["rules"].as_str().unwrap_or(""),
                row["caught_by"].as_str().unwrap_or(""),
                row["description"].as_str().unwrap_or("")
            ),
            _ => row["description"].as_str().unwrap_or("").to_string(),
        };
        println!("{name:<38} {detail}");
    }
    let _ = CheckerKind::Always;
    Ok(ExitCode::SUCCESS)
}

fn rules_text(v: &serde_json::Value) -> String {
    v.as_array().map(|a| a.iter().filter_map(|r| r.as_str()).collect::<Vec<_>>().join(",")).unwrap_or_default()
}

fn merge(paths: &[PathBuf], output: &PathBuf) -> Outcome {
    let mut reports = Vec::new();
    for p in paths {
        let text = std::fs::read_to_string(p).map_err(|e| Usage(format!("cannot read {}: {e}", p.display())))?;
        let r: SweepReport =
            serde_json::from_str(&text).map_err(|e| Usage(format!("{} is not a sweep report: {e}", p.display())))?;
        reports.push(r);
    }
    let merged = SweepReport::merge(&reports).map_err(Usage)?;
    write_report_files(&merged, Some(output), None)?;
    print!("{}", merged.summary());
    Ok(if merged.violations == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn bench(json: bool) -> Outcome {
    // Median of five measurements of the bare executor, each over enough seeds to last a while.
    let mut bare_runs: Vec<sutra_sim_core::bench::BareFigures> =
        (0..5).map(|_| sutra_sim_core::bench::measure_bare(200)).collect();
    bare_runs.sort_by(|a, b| a.polls_per_second.total_cmp(&b.polls_per_second));
    let bare = bare_runs[2];
    let mut rows = Vec::new();
    for scenario in Scenario::all_built_in() {
        let started = Instant::now();
        let mut seeds = 0u64;
        let mut events = 0u64;
        while started.elapsed() < Duration::from_millis(1500) {
            let r = sweep::run_seed(&scenario, seeds, None, None);
            events += r.events;
            seeds += 1;
        }
        let secs = started.elapsed().as_secs_f64();
        rows.push(json!({"name": scenario.name, "seeds_per_second": seeds as f64 / secs, "events_per_second": events as f64 / secs}));
    }
    let doc = json!({
        "scenarios": rows,
        "bare_events_per_second": bare.events_per_second,
        "bare_polls_per_second": bare.polls_per_second,
        "bare_seeds_per_second": bare.seeds_per_second,
    });
    if json {
        println!("{doc}");
    } else {
        println!(
            "bare executor: {:.0} polls/s, {:.0} events/s, {:.1} seeds/s (median of 5)",
            bare.polls_per_second, bare.events_per_second, bare.seeds_per_second
        );
        for r in &rows {
            println!(
                "{:<14} {:>8.0} seeds/s {:>10.0} events/s",
                r["name"].as_str().unwrap_or(""),
                r["seeds_per_second"].as_f64().unwrap_or(0.0),
                r["events_per_second"].as_f64().unwrap_or(0.0)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

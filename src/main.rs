//! The `sutra-sim` command line (DESIGN.md §10). Exit codes: 0 all passed, 1 a failure
//! was found (violation, hang, budget overrun, crash), 2 bad usage or bad input — and with
//! exit 2 nothing is written — and 3 the work was done but an output could not be written
//! (`commands::EXIT_OUTPUT_LOST`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod allocator;

#[derive(Parser)]
#[command(name = "sutra-sim", version, about = "Deterministic simulation testing for the Sutra ownership protocol")]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The store engine for every scenario this command loads: `model` (the Rust store),
    /// `sqlite` (the named SQL statements on an in-memory SQLite database) or
    /// `differential` (both in lockstep; a difference is a `store-divergence` verdict).
    #[arg(long, global = true, value_name = "model|sqlite|differential")]
    store: Option<String>,
    /// A statements file (see sql/statements.sql) to run instead of the built-in one;
    /// implies `--store sqlite` unless `--store` says otherwise.
    #[arg(long, global = true, value_name = "FILE")]
    sql: Option<PathBuf>,
}

/// Reads `--store` and `--sql` into the override every scenario load applies.
fn store_override(store: Option<String>, sql: Option<PathBuf>) -> Result<(), Usage> {
    use sutra_sim_model::sql_store::{section::read_bounded, StoreEngine};
    let engine = store.as_deref().map(StoreEngine::parse).transpose().map_err(|e| Usage(format!("--store: {e}")))?;
    let sql = match sql {
        Some(path) => {
            let text = read_bounded(&path).map_err(|e| Usage(format!("--sql: {e}")))?;
            Some((path.display().to_string(), text))
        }
        None => None,
    };
    sutra_sim::scenario_arg::set_store_override(sutra_sim::scenario_arg::StoreOverride { engine, sql });
    Ok(())
}

#[derive(Subcommand)]
enum Command {
    /// Run one seed of one scenario and print its verdict and fingerprint.
    Run(commands::run::RunArgs),
    /// Judge history files (docs/history.md) — the simulation's or a real runtime's — with
    /// the built-in checkers, and say which could not judge them and why.
    Check(commands::check::CheckArgs),
    /// Run many seeds, in parallel, and report.
    Sweep(commands::sweep::SweepArgs),
    /// Like sweep, but grow the runs that reached a new coverage mark from their tape
    /// prefix instead of starting every run from zero.
    Explore(commands::sweep::ExploreArgs),
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
        /// Write every witness event of the replayed run (store, broker, executor) as JSON
        /// Lines after a header line; the schema is docs/history.md.
        #[arg(long, value_name = "FILE")]
        history: Option<PathBuf>,
        /// Write the run's log to stderr: every event as a `tracing` record stamped with
        /// simulated time and node, filtered by `RUST_LOG`-style directives taken from
        /// `RUST_LOG` (default `debug`, all of it).
        #[arg(long)]
        log: bool,
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
        /// Worker threads for the correct-model seeds; by default the available cores.
        #[arg(long)]
        jobs: Option<usize>,
        /// Write the JSON report here.
        #[arg(long)]
        report: Option<PathBuf>,
        /// Print the report as JSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Run every design variant of spec 000 and print the design-decision matrix.
    Variants {
        /// Built-in scenario name, a scenario file, or `all`.
        #[arg(long, default_value = "all")]
        scenario: String,
        /// Seeds per variant and scenario.
        #[arg(long, default_value_t = 2000)]
        count: u64,
        /// Worker threads; by default the available cores.
        #[arg(long)]
        jobs: Option<usize>,
        /// Where each variant's first failure is saved as a reproducer.
        #[arg(long, value_name = "DIR", default_value = "variant-reproducers")]
        save_failures: PathBuf,
        /// Save first failures as recorded, without shrinking them.
        #[arg(long)]
        no_shrink: bool,
        /// Print one JSON document.
        #[arg(long)]
        json: bool,
    },
    /// List scenarios, checkers, faults, mutants or variants.
    List {
        /// What to list.
        #[arg(value_parser = ["scenarios", "checkers", "faults", "mutants", "variants"])]
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
    /// Measure seeds and events per second; with --explore, runs to a bug by sweep and
    /// by exploration.
    Bench {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Measure exploration against sweeps instead: the maze, the dungeon, every mutant,
        /// and distinct state signatures of smoke and swarm.
        #[arg(long)]
        explore: bool,
        /// Measure events per second of growing copies of smoke instead (1 replica and 6
        /// instances up to 32 replicas and 192, 6,000 instances, 300 steps), and the largest
        /// world's share of the smallest's.
        #[arg(long, conflicts_with = "explore")]
        scale: bool,
        /// With --explore: start seeds per benchmark (each figure is their median).
        #[arg(long, default_value_t = sutra_sim::bench_explore::START_SEEDS)]
        starts: usize,
        /// With --explore: runs of smoke and swarm in which signatures are counted.
        #[arg(long, default_value_t = 10_000)]
        signature_runs: u64,
        /// With --explore: only benchmarks whose name contains this (maze, dungeon, a
        /// mutant, or `signatures`).
        #[arg(long)]
        only: Option<String>,
        /// Worker threads (figures are the same for any number).
        #[arg(long)]
        jobs: Option<usize>,
    },
}

mod commands;

use commands::Usage;

fn main() -> ExitCode {
    // A closed stdout (`sutra-sim list checkers | head -1`) ends the program quietly, as it
    // does `cat` and `ls`, instead of a panic on the next print. Files are written before
    // anything is printed, so nothing is lost.
    #[cfg(unix)]
    // SAFETY: restoring the default action of SIGPIPE, before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    allocator::purge_freed_memory_soon();
    let cli = Cli::parse();
    if let Err(Usage(message)) = store_override(cli.store, cli.sql) {
        eprintln!("error: {message}");
        return ExitCode::from(2);
    }
    let result = match cli.command {
        Command::Run(args) => commands::run::run(args),
        Command::Check(args) => commands::check::run(args),
        Command::Sweep(args) => commands::sweep::sweep_command(args),
        Command::Explore(args) => commands::sweep::explore_command(args),
        Command::Replay { file, trace, perfetto, history, log, json } => {
            commands::replay::replay(&file, trace, commands::replay::ReplayOutputs { perfetto, history }, log, json)
        }
        Command::Shrink { file, scenario, seed, mutant, output, time_budget, json } => {
            commands::shrink::shrink(commands::shrink::ShrinkArgs {
                file,
                scenario,
                seed,
                mutant,
                output,
                time_budget,
                json,
            })
        }
        Command::Mutants { scenario, count, jobs, report, json } => commands::mutants::mutants(
            &scenario,
            count,
            jobs.unwrap_or_else(commands::sweep::default_jobs),
            report,
            json,
        ),
        Command::Variants { scenario, count, jobs, save_failures, no_shrink, json } => {
            commands::variants::variants(commands::variants::VariantsArgs {
                scenario,
                count,
                jobs: jobs.unwrap_or_else(commands::sweep::default_jobs),
                save_dir: save_failures,
                shrink: !no_shrink,
                json,
            })
        }
        Command::List { what, json } => commands::list::list(&what, json),
        Command::Merge { reports, output } => commands::merge::merge(&reports, &output),
        Command::Bench { json, scale: true, .. } => commands::bench::bench_scale(json),
        Command::Bench { json, explore: false, .. } => commands::bench::bench(json),
        Command::Bench { json, explore: true, starts, signature_runs, only, jobs, .. } => {
            commands::bench::bench_explore(json, starts, signature_runs, only, jobs)
        }
    };
    match result {
        Ok(code) => code,
        Err(Usage(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

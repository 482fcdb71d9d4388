//! `sutra-conformance`: runs the reference runtime and writes its history for
//! `sutra-sim check`.
//!
//! ```text
//! sutra-conformance run [--variant NAME] [--seed N] [--postgres URL] [--no-faults] [--fault-phase-ms MS] --out FILE
//! sutra-conformance variants
//! ```
//! Exit 0: the run finished and its history is written (the verdict is `check`'s); 2: bad
//! arguments or a database that failed, nothing written.

use std::path::PathBuf;
use std::process::ExitCode;

use sutra_conformance::{harness, Config, FaultRates, Target, Variant};

struct Args {
    variant: Variant,
    seed: u64,
    postgres: Option<String>,
    faults: bool,
    fault_phase_ms: Option<u64>,
    out: PathBuf,
}

const USAGE: &str = "usage: sutra-conformance run [--variant NAME] [--seed N] [--postgres URL] [--no-faults] [--fault-phase-ms MS] --out FILE
       sutra-conformance variants";

fn parse(mut it: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut a = Args {
        variant: Variant::Correct,
        seed: 0,
        postgres: None,
        faults: true,
        fault_phase_ms: None,
        out: PathBuf::new(),
    };
    let mut out = None;
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--variant" => a.variant = Variant::parse(&value()?)?,
            "--seed" => a.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--postgres" => a.postgres = Some(value()?),
            "--no-faults" => a.faults = false,
            "--fault-phase-ms" => {
                a.fault_phase_ms = Some(value()?.parse().map_err(|e| format!("--fault-phase-ms: {e}"))?)
            }
            "--out" => out = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    a.out = out.ok_or("--out FILE is required")?;
    match a.out.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => {
            return Err(format!("--out {}: {} is not a directory", a.out.display(), dir.display()))
        }
        _ => {}
    }
    Ok(a)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("variants") => {
            for v in Variant::ALL {
                let expect = match v.expected_checkers() {
                    [] => "safe: must pass".to_string(),
                    checkers => format!("unsafe: flagged by {}", checkers.join(" or ")),
                };
                println!("{:<40} {expect}", v.name());
            }
            ExitCode::SUCCESS
        }
        Some("run") => match parse(args).and_then(run) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("sutra-conformance: {e}\n{USAGE}");
                ExitCode::from(2)
            }
        },
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn run(a: Args) -> Result<(), String> {
    sutra_conformance::quiet_step_panics();
    let scratch = match &a.postgres {
        Some(_) => None,
        None => Some(sutra_conformance::scratch_dir(&format!("seed{}", a.seed)).map_err(|e| e.to_string())?),
    };
    let target = match (&a.postgres, &scratch) {
        (Some(url), _) => {
            Target::Postgres { url: url.clone(), schema: sutra_conformance::db::run_schema(&format!("seed{}", a.seed)) }
        }
        (None, Some(dir)) => harness::sqlite_target(dir),
        (None, None) => unreachable!("a scratch directory when no URL"),
    };
    let mut cfg = Config::new(a.seed, a.variant, target);
    if !a.faults {
        cfg.faults = FaultRates::none();
    }
    if let Some(ms) = a.fault_phase_ms {
        cfg.fault_phase_ms = ms;
    }
    let started = std::time::Instant::now();
    let result = harness::run(cfg, &sutra_sql::Statements::default(), &a.out);
    if let Some(dir) = scratch {
        let _ = std::fs::remove_dir_all(dir);
    }
    let o = result?;
    println!(
        "{}: {} events, {} instance(s) completed{}, faults: {} crash(es), {} pause(s), {} kill(s), {} clock offset(s), {:.1}s",
        a.out.display(),
        o.events,
        o.completed,
        if o.all_completed { "" } else { " (NOT all)" },
        o.faults[0],
        o.faults[1],
        o.faults[2],
        o.faults[3],
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

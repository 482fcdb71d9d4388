//! Writes the scaled copies of the built-in scenarios that issue #26's acceptance sweeps by
//! hand: every built-in scenario at least once, at a deployment's sizes — 16 replicas × 8
//! lanes × 500 instances on one pull worker among them — each raised to what validation
//! asks of its size (`Scenario::raise_to_the_work`), validated, and written as a scenario
//! file that `sutra-sim sweep --scenario FILE` takes. `scripts/scaled-copies.sh` sweeps
//! them.
//!
//! `cargo run --release --example scaled_copies -- DIR` (DIR must be new or empty: nothing
//! is overwritten).

use std::path::Path;
use std::process::ExitCode;

use sutra_sim_model::resize::Sizes;
use sutra_sim_model::Scenario;

/// (base, replicas, lanes, instances, steps, pull workers).
const COPIES: &[(&str, u32, u32, u32, u32, u32)] = &[
    ("smoke", 16, 8, 500, 3, 1),
    ("smoke", 32, 16, 1_000, 3, 4),
    ("smoke", 1, 1, 60, 3, 1),
    ("smoke", 3, 2, 6, 50, 2),
    ("migration", 8, 4, 60, 3, 2),
    ("migration", 2, 64, 30, 30, 1),
    ("pull-workers", 24, 2, 480, 3, 8),
    ("pull-workers", 4, 2, 200, 3, 1),
    ("misroute", 16, 8, 96, 3, 2),
    ("replica-churn", 16, 4, 200, 3, 2),
    ("process-pause", 12, 6, 120, 3, 2),
    ("clock-skew", 8, 8, 100, 3, 2),
    ("slow-steps", 6, 2, 6, 300, 1),
    ("swarm", 16, 8, 200, 3, 4),
    ("swarm", 32, 64, 128, 2, 0),
    ("quiet", 2, 64, 64, 3, 0),
    ("racing-timers", 8, 4, 120, 3, 1),
    ("real-world", 16, 8, 300, 3, 2),
    ("real-world", 4, 16, 64, 20, 1),
    ("short-claim-timeout", 8, 4, 100, 3, 2),
    ("hung-steps", 8, 4, 100, 3, 2),
    ("hung-steps", 16, 2, 40, 20, 1),
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir] = args.as_slice() else {
        eprintln!("usage: scaled_copies DIR");
        return ExitCode::from(2);
    };
    match write_copies(Path::new(dir)) {
        Ok(written) => {
            println!("{written} scaled copies written to {dir}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn write_copies(dir: &Path) -> Result<usize, String> {
    let occupied = dir.read_dir().map(|mut entries| entries.next().is_some()).unwrap_or(false);
    if occupied {
        return Err(format!("{} is not empty: the copies go to a new or empty directory", dir.display()));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (n, &(base, replicas, lanes, instances, steps, pull_workers)) in COPIES.iter().enumerate() {
        let mut s = Scenario::built_in(base).map_err(|e| e.to_string())?;
        s.resize(&Sizes { replicas, lanes, instances, steps, pull_workers });
        s.raise_to_the_work();
        s.name = format!("{base}-{replicas}r-{lanes}l-{instances}i-{steps}s-{pull_workers}pw");
        s.validate().map_err(|e| format!("{}: {e}", s.name))?;
        let file = dir.join(format!("{n:02}-{}.toml", s.name));
        std::fs::write(&file, s.to_toml()).map_err(|e| format!("{}: {e}", file.display()))?;
    }
    Ok(COPIES.len())
}

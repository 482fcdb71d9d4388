//! `peer`: runs the micro-workload of [`workload`] for many seeds and prints seeds per
//! second, on madsim when built with `--cfg madsim` and on sutra-sim-core otherwise.
//!
//! One driver for both, so timing, warm-up and output are identical and only the runtime
//! differs. `run.sh` builds it twice and alternates the two binaries.
//!
//! ```text
//! peer bench [SEEDS]      time seeds 0..SEEDS (default 200) after a short warm-up
//! peer checksums [SEEDS]  print each seed's checksum of the final shared state (default 3)
//! ```
//!
//! The wall clock and CPU time are read only outside any simulated world (madsim replaces
//! `clock_gettime` inside its runtime but falls through to the real one outside it).

mod workload;

#[cfg(madsim)]
mod on_madsim;
#[cfg(madsim)]
use on_madsim as runtime;

#[cfg(not(madsim))]
mod on_sutra;
#[cfg(not(madsim))]
use on_sutra as runtime;

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

/// Seeds run untimed first, so page faults and lazy allocator set-up are not measured.
const WARM_UP_SEEDS: u64 = 5;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let count = |default: u64| -> Option<u64> {
        match args.get(1) {
            None => Some(default),
            Some(text) => text.parse().ok().filter(|n| *n > 0),
        }
    };
    match (args.first().map(String::as_str), args.len()) {
        (Some("bench"), 1 | 2) => match count(200) {
            Some(seeds) => bench(seeds),
            None => usage(),
        },
        (Some("checksums"), 1 | 2) => match count(3) {
            Some(seeds) => checksums(seeds),
            None => usage(),
        },
        _ => usage(),
    }
}

fn usage() -> ExitCode {
    eprintln!("usage: peer bench [SEEDS] | peer checksums [SEEDS]   (SEEDS a positive integer)");
    ExitCode::from(2)
}

fn bench(seeds: u64) -> ExitCode {
    for seed in 0..WARM_UP_SEEDS {
        black_box(runtime::run_seed(u64::MAX - seed));
    }
    let cpu_start = cpu_seconds();
    let start = Instant::now();
    for seed in 0..seeds {
        black_box(runtime::run_seed(seed));
    }
    let wall = start.elapsed().as_secs_f64().max(1e-9);
    let cpu = (cpu_seconds() - cpu_start).max(1e-9);
    println!(
        "{:<6} seeds={seeds} tasks={} iterations={} wall={wall:.3}s cpu={cpu:.3}s seeds_per_sec={:.1} seeds_per_cpu_sec={:.1}",
        runtime::NAME,
        workload::TASKS,
        workload::ITERATIONS,
        seeds as f64 / wall,
        seeds as f64 / cpu
    );
    ExitCode::SUCCESS
}

/// User plus system CPU time of this process so far. On a shared machine wall time also
/// counts the time other processes held the core; CPU time does not, so the two together
/// show how much of a slow run was the machine rather than the runtime.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the struct it is given, which is plain data.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_SELF, &mut usage), 0, "getrusage(RUSAGE_SELF) cannot fail");
        usage
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

fn checksums(seeds: u64) -> ExitCode {
    for seed in 0..seeds {
        println!("{} seed={seed} checksum={:016x}", runtime::NAME, runtime::run_seed(seed));
    }
    ExitCode::SUCCESS
}

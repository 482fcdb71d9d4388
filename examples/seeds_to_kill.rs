//! Seeds a plain sweep needs to kill a mutant: for each of N start seeds (K·1,000,000 for
//! K = 1..=N), the seeds from the start up to and including the first one that the
//! mutant's expected checker fails — judged as `sutra-sim mutants` judges (a crash, a
//! budget overrun or another checker is not a kill). Prints each figure and the median.
//!
//! ```text
//! cargo run --release --example seeds_to_kill -- MUTANT SCENARIO [STARTS [LIMIT [THREADS]]]
//! ```
//!
//! STARTS defaults to 21, LIMIT (seeds tried per start before giving up; a survivor counts
//! as LIMIT) to 100,000, THREADS to 2. Deterministic: the figures do not depend on THREADS.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use sutra_sim_model::{run_for_kill, Mutant, Scenario};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: seeds_to_kill MUTANT SCENARIO [STARTS [LIMIT [THREADS]]]");
        std::process::exit(2);
    }
    let info = Mutant::parse(&args[0]).unwrap_or_else(|e| panic!("{e}")).info();
    let scenario = Scenario::built_in(&args[1]).unwrap_or_else(|e| panic!("{e}"));
    let number = |i: usize, default: u64| args.get(i).map_or(default, |a| a.parse().expect("a number"));
    let (starts, limit, threads) = (number(2, 21) as usize, number(3, 100_000), number(4, 2) as usize);
    let figures = Mutex::new(vec![None; starts]);
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= starts {
                    return;
                }
                let start = (k as u64 + 1) * 1_000_000;
                let found = (0..limit).find(|n| {
                    let out = run_for_kill(&scenario, start + n, info).expect("expected checkers are registered");
                    info.killed_by(&out.verdict)
                });
                figures.lock().unwrap()[k] = Some(found.map_or((limit, false), |n| (n + 1, true)));
            });
        }
    });
    let figures: Vec<(u64, bool)> = figures.into_inner().unwrap().into_iter().map(|f| f.unwrap()).collect();
    for (k, (n, killed)) in figures.iter().enumerate() {
        println!("start {:>9}: {n}{}", (k + 1) * 1_000_000, if *killed { "" } else { " (survived)" });
    }
    let mut sorted: Vec<u64> = figures.iter().map(|f| f.0).collect();
    sorted.sort_unstable();
    println!(
        "{} {}: median {} seeds to kill over {starts} start seeds (min {}, max {}; {} survived {limit})",
        info.name,
        scenario.name,
        sorted[sorted.len() / 2],
        sorted[0],
        sorted[sorted.len() - 1],
        figures.iter().filter(|f| !f.1).count()
    );
}

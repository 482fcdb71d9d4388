//! Measures what switching strategy at branch points does to exploration: for each share
//! of switching children given, distinct state signatures in a number of runs and runs to
//! kill mutants, over the start seeds `bench --explore` uses.
//!
//! ```text
//! cargo run --release --example strategy_mix -- PERCENTS RUNS STARTS ITEM...
//! ```
//!
//! `PERCENTS` is a comma-separated list (`0,25,50`); an item is `signatures:SCENARIO` or a
//! mutant's name (measured in the scenario `bench --explore` measures it in).

use sutra_sim::bench_explore::{explore_runs_to_kill_with, median, scenario_for, signatures_reached, DEEP_RUNS_MAX};
use sutra_sim_core::explore::ExploreConfig;
use sutra_sim_model::{Mutant, Scenario};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 4 {
        eprintln!("usage: strategy_mix PERCENTS RUNS STARTS ITEM...");
        std::process::exit(2);
    }
    let percents: Vec<u32> = args[0].split(',').map(|p| p.parse().expect("a percent")).collect();
    let runs: u64 = args[1].parse().expect("a number of runs");
    let starts: u64 = args[2].parse().expect("a number of starts");
    for item in &args[3..] {
        for &switch_percent in &percents {
            let base = ExploreConfig { switch_percent, ..ExploreConfig::default() };
            if let Some(name) = item.strip_prefix("signatures:") {
                let scenario = Scenario::built_in(name).unwrap_or_else(|e| panic!("{e}"));
                let seen = signatures_reached(&scenario, ExploreConfig { runs, ..base }, 2);
                println!("{item} switch {switch_percent}%: {seen} signatures in {runs} runs");
            } else {
                let info = Mutant::parse(item).unwrap_or_else(|e| panic!("{e}")).info();
                let scenario = scenario_for(info).expect("a scenario kills it");
                let max = if info.deep { DEEP_RUNS_MAX } else { runs };
                let found: Vec<_> = (0..starts)
                    .map(|i| {
                        let config =
                            ExploreConfig { runs: max, start: sutra_sim_core::puzzles::start_seed(i), ..base.clone() };
                        explore_runs_to_kill_with(&scenario, info, config, 1)
                    })
                    .collect();
                println!("{item} ({}) switch {switch_percent}%: explore median {:?}", scenario.name, median(found));
            }
        }
    }
}

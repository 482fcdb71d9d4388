//! Runs to kill a deep mutant by exploration under a given explorer configuration, for
//! diagnosing which marks help (`bench --explore` uses the default configuration):
//!
//! ```text
//! cargo run --release --example deep_explore -- MUTANT SCENARIO [STARTS [ENERGY_STATE [ENERGY_SOMETIMES [SOMETIMES_SHARE_PERCENT [SOMETIMES_REHITS]]]]]
//! ```
//!
//! Prints each start's runs to the kill and the median; starts as `bench --explore`'s.

use sutra_sim::bench_explore::{explore_runs_to_kill_with, median, DEEP_RUNS_MAX};
use sutra_sim_core::explore::ExploreConfig;
use sutra_sim_model::{Mutant, Scenario};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: deep_explore MUTANT SCENARIO [STARTS [ENERGY_STATE [ENERGY_SOMETIMES [SOMETIMES_SHARE_PERCENT [SOMETIMES_REHITS]]]]]");
        std::process::exit(2);
    }
    let info = Mutant::parse(&args[0]).unwrap_or_else(|e| panic!("{e}")).info();
    let scenario = Scenario::built_in(&args[1]).unwrap_or_else(|e| panic!("{e}"));
    let number = |i: usize, default: u64| args.get(i).map_or(default, |a| a.parse().expect("a number"));
    let defaults = ExploreConfig::default();
    let starts = number(2, 21);
    let energy_state = number(3, u64::from(defaults.energy_state)) as u32;
    let energy_sometimes = number(4, u64::from(defaults.energy_sometimes)) as u32;
    let sometimes_share_percent = number(5, u64::from(defaults.sometimes_share_percent)) as u32;
    let sometimes_rehits = number(6, u64::from(defaults.sometimes_rehits)) as u32;
    let mut figures = Vec::new();
    for i in 0..starts {
        let config = ExploreConfig {
            runs: DEEP_RUNS_MAX,
            start: sutra_sim_core::puzzles::start_seed(i),
            energy_state,
            energy_sometimes,
            sometimes_share_percent,
            sometimes_rehits,
            ..ExploreConfig::default()
        };
        let found = explore_runs_to_kill_with(&scenario, info, config, 1);
        println!("start {i}: {found:?}");
        figures.push(found);
    }
    println!(
        "{} {}: explore median {:?} over {starts} starts (energy_state {energy_state}, energy_sometimes \
         {energy_sometimes}, sometimes_share_percent {sometimes_share_percent}, sometimes_rehits {sometimes_rehits})",
        info.name,
        scenario.name,
        median(figures)
    );
}

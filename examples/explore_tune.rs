//! Tunes the explorer's schedule: measures one configuration, given as `key=value`
//! overrides of [`ExploreConfig`]'s defaults, on the figures of issue #14.
//!
//! ```text
//! cargo run --release --example explore_tune -- sig RUNS [key=value ...]
//! cargo run --release --example explore_tune -- kill MUTANT SCENARIO|auto STARTS [key=value ...]
//! ```
//!
//! `sig` prints the distinct state signatures exploration reaches in RUNS runs of smoke and
//! swarm (a sweep's figure does not depend on the schedule: `bench --explore --only
//! signatures` prints both); `kill` prints each start's runs to kill the mutant by
//! exploration and the median, starts as `bench --explore`'s, two starts at a time (`auto`:
//! the scenario `bench --explore` measures the mutant in). The figures are those of
//! `bench --explore --only` with the defaults; this only saves the sweep's half and the
//! rebuild when a default is tried. (The strategy-mixing figures of the README were
//! measured this way, with `switch_percent=25` and `=50`.)

use std::sync::Mutex;

use sutra_sim::bench_explore::{
    explore_runs_to_kill_with, median, scenario_for, signatures_reached, DEEP_RUNS_MAX, MUTANT_RUNS_MAX,
};
use sutra_sim_core::explore::ExploreConfig;
use sutra_sim_model::{Mutant, Scenario};

fn configured(overrides: &[String]) -> ExploreConfig {
    let mut c = ExploreConfig::default();
    for o in overrides {
        let (k, v) = o.split_once('=').expect("key=value");
        let n: u64 = v.parse().expect("a number");
        match k {
            "generation" => c.generation = n as usize,
            "fresh_per_generation" => c.fresh_per_generation = n as usize,
            "fresh_decay_runs" => c.fresh_decay_runs = n,
            "energy_sometimes" => c.energy_sometimes = n as u32,
            "energy_state" => c.energy_state = n as u32,
            "sometimes_rehits" => c.sometimes_rehits = n as u32,
            "sometimes_share_percent" => c.sometimes_share_percent = n as u32,
            "sometimes_share_after_runs" => c.sometimes_share_after_runs = n,
            "settle_after_runs" => c.settle_after_runs = n,
            "energy_state_settled" => c.energy_state_settled = n as u32,
            "bonus_settled" => c.bonus_settled = n as u32,
            "bonus" => c.bonus = n as u32,
            "barren_after" => c.barren_after = n as u32,
            "children_max_factor" => c.children_max_factor = n as u32,
            "frontier_max" => c.frontier_max = n as usize,
            "switch_percent" => c.switch_percent = n as u32,
            "boost_percent" => c.boost_percent = n as u32,
            "boost" => c.boost = n as u32,
            "boost_after_runs" => c.boost_after_runs = n,
            "boost_percent_settled" => c.boost_percent_settled = n as u32,
            _ => panic!("unknown key {k}"),
        }
    }
    c
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("sig") => {
            let runs: u64 = args[1].parse().expect("RUNS");
            let config = ExploreConfig { runs, ..configured(&args[2..]) };
            let names = ["smoke", "swarm"];
            let out: Vec<u64> = std::thread::scope(|s| {
                let handles: Vec<_> = names
                    .iter()
                    .map(|name| {
                        let config = config.clone();
                        s.spawn(move || signatures_reached(&Scenario::built_in(name).unwrap(), config, 1))
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            println!("sig {runs} {:?}: smoke {} swarm {}", &args[2..], out[0], out[1]);
        }
        Some("kill") => {
            let info = Mutant::parse(&args[1]).unwrap_or_else(|e| panic!("{e}")).info();
            let scenario = if args[2] == "auto" {
                scenario_for(info).expect("a scenario kills it")
            } else {
                Scenario::built_in(&args[2]).unwrap_or_else(|e| panic!("{e}"))
            };
            let starts: u64 = args[3].parse().expect("STARTS");
            let base = configured(&args[4..]);
            let max = if info.deep { DEEP_RUNS_MAX } else { MUTANT_RUNS_MAX };
            let next = Mutex::new(0u64);
            let found = Mutex::new(vec![None; starts as usize]);
            std::thread::scope(|s| {
                for _ in 0..2 {
                    s.spawn(|| loop {
                        let i = {
                            let mut n = next.lock().unwrap();
                            *n += 1;
                            *n - 1
                        };
                        if i >= starts {
                            return;
                        }
                        let config =
                            ExploreConfig { runs: max, start: sutra_sim_core::puzzles::start_seed(i), ..base.clone() };
                        let r = explore_runs_to_kill_with(&scenario, info, config, 1);
                        found.lock().unwrap()[i as usize] = r;
                    });
                }
            });
            let found = found.into_inner().unwrap();
            println!(
                "kill {} {} {:?}: median {:?} {:?}",
                info.name,
                scenario.name,
                &args[4..],
                median(found.clone()),
                found
            );
        }
        _ => {
            eprintln!("usage: explore_tune sig RUNS [key=value ...] | kill MUTANT SCENARIO STARTS [key=value ...]");
            std::process::exit(2);
        }
    }
}

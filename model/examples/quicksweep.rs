//! A quick sequential sweep printing failures (a debugging aid until the CLI sweep lands).
use sutra_sim_model::{run, Mutant, RunOptions, Scenario};

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "smoke".into());
    let count: u64 = args.next().map(|s| s.parse().unwrap()).unwrap_or(200);
    let mutant = args.next().map(|m| Mutant::parse(&m).unwrap());
    let scenario = Scenario::built_in(&name).unwrap();
    let mut fails = 0;
    let mut first = None;
    let mut events = 0;
    for seed in 0..count {
        let mut o = RunOptions::seeded(seed);
        o.mutant = mutant;
        let out = run(&scenario, &o);
        events += out.events;
        if !out.verdict.is_pass() {
            fails += 1;
            if first.is_none() {
                first = Some(seed);
            }
            if fails <= 5 {
                println!("seed {seed}: {}", out.verdict);
            }
        }
    }
    println!("{name}: {fails}/{count} failed, first {first:?}, mean events {}", events / count);
}

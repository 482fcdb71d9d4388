//! Prints how many events of each kind one run emits, and optionally every event of one
//! instance: `cargo run -p sutra-sim-model --example histogram -- SCENARIO SEED [INSTANCE]`.
//! A debugging aid for model work, below the CLI's stories.
use std::collections::BTreeMap;
use sutra_sim_core::EventKind;
use sutra_sim_model::{run, RunOptions, Scenario};

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "smoke".into());
    let seed: u64 = args.next().map(|s| s.parse().unwrap()).unwrap_or(1);
    let scenario = Scenario::built_in(&name).unwrap();
    let mut opts = RunOptions::seeded(seed);
    opts.keep_trace = true;
    let out = run(&scenario, &opts);
    let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
    for e in &out.trace {
        *counts.entry(e.kind.name()).or_default() += 1;
    }
    println!(
        "{} events={} polls={} t={} fp={:016x}",
        out.verdict, out.events, out.polls, out.sim_time, out.fingerprint
    );
    for (k, v) in counts {
        println!("{v:8} {k}");
    }
    if let Some(i) = std::env::args().nth(3) {
        let i: u64 = i.parse().unwrap();
        for e in out.trace.iter().filter(|e| e.kind.instance() == Some(i) || e.kind.instance().is_none()) {
            println!("{} {:?} {:?}", e.time, e.node, e.kind);
        }
    }
}

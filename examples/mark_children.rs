//! How often a deep mutant dies in the children of a sometimes-mark: for the first `PARENTS`
//! seeds (from 0) whose run reaches the mark, runs `CHILDREN` children branched at the mark's
//! tape position with fresh entropy, and prints the kills per parent — the odds exploration
//! gets from that mark. With BOOST > 1 the children's rare chances are that many times likelier
//! (`ExploreConfig::boost`).
//!
//! ```text
//! cargo run --release --example mark_children -- MUTANT SCENARIO MARK [PARENTS [CHILDREN [BOOST]]]
//! ```

use sutra_sim_core::explore::child_seed;
use sutra_sim_core::marks::{name_id, slot_of, MarkKind};
use sutra_sim_core::EntropyMode;
use sutra_sim_model::{Mutant, RunOptions, Scenario};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: mark_children MUTANT SCENARIO MARK [PARENTS [CHILDREN]]");
        std::process::exit(2);
    }
    let info = Mutant::parse(&args[0]).unwrap_or_else(|e| panic!("{e}")).info();
    let scenario = Scenario::built_in(&args[1]).unwrap_or_else(|e| panic!("{e}"));
    let slot = slot_of(name_id(&args[2]), MarkKind::Sometimes);
    let number = |i: usize, default: u64| args.get(i).map_or(default, |a| a.parse().expect("a number"));
    let (parents, children, boost) = (number(3, 10), number(4, 32), number(5, 1) as u32);
    let registry = sutra_sim_model::checkers::registry();
    let coverage = sutra_sim_model::checkers::coverage_names();
    let run = |entropy: EntropyMode, seed: u64| {
        let mut checkers = sutra_sim_model::kill_checkers(info).expect("registered");
        checkers.extend(registry.build(&coverage).expect("registered"));
        let options = RunOptions { entropy, ..RunOptions::for_seed(seed, None, Some(info.mutant)) };
        sutra_sim_model::run_marked(&scenario, &options, checkers)
    };
    let (mut found, mut seed, mut kills_all, mut runs_all) = (0, 0u64, 0, 0);
    while found < parents && seed < 200_000 {
        let out = run(EntropyMode::Seed(seed), seed);
        if let Some(mark) = out.marks.iter().find(|m| m.slot == slot && m.kind == MarkKind::Sometimes) {
            found += 1;
            let parent_killed = info.killed_by(&out.verdict);
            let prefix = sutra_sim_core::Tape(out.tape.0[..mark.position.min(out.tape.len())].to_vec());
            let kills = (0..children as u32)
                .filter(|&k| {
                    let s = child_seed(seed, mark.position, k);
                    let child = run(EntropyMode::Branch { prefix: prefix.clone(), seed: s, boost }, s);
                    info.killed_by(&child.verdict)
                })
                .count();
            kills_all += kills;
            runs_all += children;
            println!("seed {seed}: parent killed {parent_killed}, children killed {kills}/{children}");
        }
        seed += 1;
    }
    println!(
        "{} {} {}: {kills_all}/{runs_all} children killed ({found} parents in {seed} seeds)",
        info.name, scenario.name, args[2]
    );
}

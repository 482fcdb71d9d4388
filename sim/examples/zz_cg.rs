use std::time::Duration;
use sutra_sim_core::bench::BareTick;
use sutra_sim_core::executor::{self as sim, sleep};
use sutra_sim_core::{simulate, RunConfig};
fn main() {
    let n: u64 = std::env::args().nth(1).map(|s| s.parse().unwrap()).unwrap_or(50);
    if std::env::args().nth(2).is_some() {
        for seed in 0..n {
            simulate(&RunConfig::seeded(seed), Vec::new(), |_t: &sutra_sim_core::Tracer<BareTick>| {
                for task in 0..100u32 {
                    sim::spawn(format!("t{task}"), async move {
                        for _ in 0..100 {
                            sleep(Duration::from_nanos(1 + sim::choose(10_000_000) as u64)).await;
                        }
                    });
                }
            });
        }
        return;
    }
    let f = sutra_sim_core::bench::measure_bare(n);
    println!("{:.2} M polls/s", f.polls_per_second / 1e6);
}

use std::time::{Duration, Instant};
use sutra_sim_core::bench::BareTick;
use sutra_sim_core::executor::{self as sim, sleep};
use sutra_sim_core::{simulate, RunConfig};
fn main() {
    for _ in 0..3 {
        let start = Instant::now();
        let mut polls = 0;
        for seed in 0..300 {
            let o = simulate(&RunConfig::seeded(seed), Vec::new(), |_t: &sutra_sim_core::Tracer<BareTick>| {
                for task in 0..100u32 {
                    sim::spawn(format!("t{task}"), async move {
                        for _ in 0..100 {
                            // Distinct deadlines: nanosecond delays over a wide range.
                            sleep(Duration::from_nanos(1 + sim::choose(10_000_000) as u64)).await;
                        }
                    });
                }
            });
            polls += o.polls;
        }
        println!("ns-distinct: {:.2} M polls/s", polls as f64 / start.elapsed().as_secs_f64() / 1e6);
    }
}

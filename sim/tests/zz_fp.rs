use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;
use sutra_sim_core::bench::bare_workload_with;
use sutra_sim_core::executor::{self as sim, sleep};
use sutra_sim_core::{simulate, EventKind, RunConfig, StrategyConfig};

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
struct E(u32, u64);
impl EventKind for E {
    fn name(&self) -> &'static str {
        "e"
    }
}

fn mixed(c: &RunConfig) -> sutra_sim_core::Outcome<E> {
    simulate(c, Vec::new(), |tracer| {
        let shared = Rc::new(Cell::new(0u64));
        let node = sim::add_node("n", None);
        for t in 0..12u32 {
            let tracer = tracer.clone();
            let shared = shared.clone();
            let target = if t % 3 == 0 { node } else { sutra_sim_core::NodeId::WORLD };
            sim::spawn_on(target, format!("t{t}"), async move {
                for i in 0..40u64 {
                    match sim::choose(4) {
                        0 => sim::yield_now().await,
                        1 => sleep(Duration::from_nanos(sim::choose(5000) as u64)).await,
                        2 => sleep(Duration::from_micros(sim::choose(3) as u64)).await,
                        _ => {
                            if i % 7 == 0 {
                                let tr = tracer.clone();
                                sim::spawn(format!("c{t}.{i}"), async move {
                                    sim::yield_now().await;
                                    tr.emit(E(999, sim::now().0));
                                });
                            }
                        }
                    }
                    shared.set(shared.get() * 31 + t as u64);
                    tracer.emit(E(t, shared.get()));
                }
            });
        }
        sim::spawn("driver", async move {
            sleep(Duration::from_micros(3)).await;
            sim::pause(node);
            sleep(Duration::from_micros(5)).await;
            sim::resume(node);
            sleep(Duration::from_micros(2)).await;
            sim::kill(node);
        });
    })
}

#[test]
fn print_fps() {
    let mut acc = 0u64;
    for strat in [
        StrategyConfig::Random,
        StrategyConfig::Pct { depth: 3, horizon: 2000 },
        StrategyConfig::Pct { depth: 2, horizon: 50 },
    ] {
        for seed in 0..30 {
            let mut c = RunConfig::seeded(seed);
            c.strategy = strat;
            for (w, o) in [(0, bare_workload_with(&c).fingerprint_tape()), (1, mixed(&c).fingerprint_tape())] {
                let (fp, th, polls, t, ev) = o;
                if seed == 0 {
                    println!("{} w{w} {seed} {fp:016x} {th:016x} {polls} {t} {ev}", strat.label());
                }
                acc = acc.wrapping_mul(31).wrapping_add(fp ^ th ^ polls ^ t ^ ev);
            }
        }
    }
    println!("TOTAL {acc:016x}");
}

trait FpT {
    fn fingerprint_tape(&self) -> (u64, u64, u64, u64, u64);
}
impl<K> FpT for sutra_sim_core::Outcome<K> {
    fn fingerprint_tape(&self) -> (u64, u64, u64, u64, u64) {
        let th: u64 =
            self.tape.0.iter().fold(0xcbf29ce484222325u64, |h, &x| (h ^ x as u64).wrapping_mul(0x100000001b3));
        (self.fingerprint, th, self.polls, self.sim_time.0, self.events)
    }
}

//! The workload on madsim: one `Runtime::with_seed_and_config` per seed, `block_on` a
//! root future that spawns the tasks and joins them, `madsim::time::sleep` for the
//! sleeps, madsim's seeded global RNG for the durations.
//!
//! Tasks are spawned with `task::spawn_local` so the shared state can be the same
//! `Rc<RefCell<_>>` as on our side; in madsim 0.2.34 `spawn` and `spawn_local` are the same
//! code path (both end in `Spawner::spawn_inner`), `spawn` only adds a `Send` bound, so
//! this costs madsim nothing. Each task keeps one handle to the RNG rather than calling
//! `thread_rng()` per draw, which is the cheaper of madsim's two ways.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use madsim::rand::Rng;
use madsim::runtime::Runtime;

use crate::workload::{Shared, ITERATIONS, SLEEP_MS_MAX, TASKS};

/// The label printed by the driver.
pub const NAME: &str = "madsim";

/// Runs one seed in a fresh runtime and returns the checksum of the shared state.
pub fn run_seed(seed: u64) -> u64 {
    let runtime = Runtime::with_seed_and_config(seed, madsim::Config::default());
    let shared = Rc::new(RefCell::new(Shared::new()));
    let world = shared.clone();
    runtime.block_on(async move {
        let handles: Vec<_> = (0..TASKS)
            .map(|task| {
                let shared = world.clone();
                madsim::task::spawn_local(async move {
                    let mut rng = madsim::rand::thread_rng();
                    for i in 0..ITERATIONS {
                        let ms = rng.gen_range(1..=SLEEP_MS_MAX);
                        madsim::time::sleep(Duration::from_millis(u64::from(ms))).await;
                        shared.borrow_mut().update(task, i);
                    }
                })
            })
            .collect();
        for handle in handles {
            handle.await.expect("a worker task panicked");
        }
    });
    drop(runtime);
    let checksum = shared.borrow().checksum();
    checksum
}

//! The workload on our executor: `sutra_sim_core::simulate` with a seed, the random
//! strategy and default budgets — the same path every scenario seed takes, so the figure
//! includes what a real run pays for (tape recording, budget checks, the runner's loop).
//!
//! No trace events are emitted (madsim has nothing to emit them to), so the event type is
//! uninhabited.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use serde::Serialize;
use sutra_sim_core::{executor, simulate, EventKind, RunConfig};

use crate::workload::{Shared, ITERATIONS, SLEEP_MS_MAX, TASKS};

/// The label printed by the driver.
pub const NAME: &str = "sutra";

/// An event type with no values: this workload emits nothing.
#[derive(Clone, Debug, Serialize)]
pub enum NoEvent {}

impl EventKind for NoEvent {
    fn name(&self) -> &'static str {
        match *self {}
    }
}

/// Runs one seed in a fresh world and returns the checksum of the shared state.
pub fn run_seed(seed: u64) -> u64 {
    let shared = Rc::new(RefCell::new(Shared::new()));
    let world = shared.clone();
    let outcome = simulate::<NoEvent, ()>(&RunConfig::seeded(seed), Vec::new(), move |_tracer| {
        for task in 0..TASKS {
            let shared = world.clone();
            executor::spawn("worker", async move {
                for i in 0..ITERATIONS {
                    // choose(n) is uniform in [0, n): 1..=SLEEP_MS_MAX ms.
                    let ms = 1 + executor::choose(SLEEP_MS_MAX);
                    executor::sleep(Duration::from_millis(u64::from(ms))).await;
                    shared.borrow_mut().update(task, i);
                }
            });
        }
    });
    assert!(outcome.verdict.is_pass(), "seed {seed} did not pass: {}", outcome.verdict);
    let checksum = shared.borrow().checksum();
    checksum
}

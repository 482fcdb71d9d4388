//! The workload: instances of K steps, each step waiting for a relay, a timer or a pull
//! task, drawn from the scenario's mix. The driver starts them all, then waits until every
//! instance completed and no claim is held — or until, after the heal, the work left has not
//! progressed for the progress bound, leaving the verdict to the eventually-checkers.

use std::rc::Rc;
use std::time::Duration;

use sutra_sim_core::executor::{self, sleep};

use crate::event::ModelEvent;
use crate::store::Trigger;
use crate::streams;
use crate::work_left::ProgressWatch;
use crate::world::World;

/// How often the driver looks at the store while waiting for the end.
pub const DRIVER_POLL_INTERVAL: Duration = Duration::from_millis(500);

/// Draws each instance's plan and publishes its first relay.
pub fn start(world: &Rc<World>) {
    let w = &world.ctx.scenario().workload;
    let total = w.relay_weight + w.timer_weight + w.pull_weight;
    for _ in 0..w.instances {
        // The first step is always started by a relay (the instance's creation message).
        let mut plan = vec![Trigger::Relay];
        for _ in 1..w.steps {
            let pick = executor::choose_in(streams::WORKLOAD, total);
            plan.push(if pick < w.relay_weight {
                Trigger::Relay
            } else if pick < w.relay_weight + w.timer_weight {
                Trigger::Timer
            } else {
                Trigger::Pull
            });
        }
        let instance = world.store.create_instance(plan);
        world.ctx.emit(ModelEvent::InstanceStarted { instance, steps: w.steps });
        // The creation message goes out through the store's outbox, which witnesses it.
        world.store.publish_first_relay(instance);
    }
}

/// Waits for the end of the run — every step committed and no claim held after the heal,
/// or, after the heal, no progress for longer than the scenario's progress bound (a stall,
/// left for `eventual-completion` to judge) — then reads the bounce meter and finishes.
/// Progress is the store's count of the work left (`work_left`) setting a new low, looked
/// at on every poll, so the poll costs the same however large the world.
pub async fn drive(world: Rc<World>) {
    let bound = world.ctx.scenario().progress_bound();
    let mut watch: Option<ProgressWatch> = None;
    loop {
        sleep(DRIVER_POLL_INTERVAL).await;
        let work = world.store.state().borrow().work.total();
        debug_assert_eq!(work == 0, settled_by_scan(&world), "the work left agrees with the rows");
        let now = executor::now();
        if world.ctx.healed() {
            let watch = watch.get_or_insert(ProgressWatch::new(work, now));
            watch.observe(work, now);
            if work == 0 || watch.stalled(work, now, bound) {
                break;
            }
        } else if work == 0 {
            // Everything is done before the heal: heal now, there is nothing left to hurt.
            crate::injector::heal(&world);
        }
    }
    let (relay, timer) = world.ctx.bounces();
    world.ctx.emit(ModelEvent::BounceMeter { relay, timer });
    executor::finish();
}

/// Every instance complete and unowned, by reading every row (debug builds only).
fn settled_by_scan(world: &World) -> bool {
    let store = world.store.state();
    let s = store.borrow();
    s.instances.iter().all(|r| r.completed() && r.owner.is_none())
}

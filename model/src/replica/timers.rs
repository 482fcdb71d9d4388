//! The timer poller: due timer rows fire to the instance's routed lane (R5). A poller
//! hides a picked timer from other pollers for its fire lease; a refused fire is deferred
//! by the lane with capped exponential backoff and jitter.

use std::rc::Rc;

use sutra_sim_core::executor::{self, sleep};

use crate::event::ModelEvent;
use crate::ids::ResumePath;
use crate::replica::execution::{Source, Work};
use crate::replica::ReplicaSurface;
use crate::streams;
use crate::world::World;

/// Most timers one poll picks.
pub const TIMERS_PER_POLL_MAX: usize = 64;

/// The poller loop of one process.
pub async fn run(world: Rc<World>, surface: Rc<ReplicaSurface>) {
    let t = &world.scenario.timeouts;
    let lanes = world.scenario.topology.lanes;
    loop {
        sleep(t.timer_poll_interval).await;
        let due = world.store.pick_due_timers(t.timer_fire_lease, TIMERS_PER_POLL_MAX).await;
        for timer in due {
            let mut lane = world.home_lane(timer.instance);
            let misrouted = lanes > 1 && world.fault(world.faults.misroute_per_delivery);
            if misrouted {
                lane = ((u32::from(lane) + 1 + executor::choose_in(streams::ROUTING, lanes - 1)) % lanes) as u16;
            }
            let exec = world.new_exec();
            world.emit(ModelEvent::Dispatched {
                instance: timer.instance,
                exec,
                path: ResumePath::Timer,
                process: surface.process,
                lane,
                misrouted,
            });
            let work = Work {
                exec,
                instance: timer.instance,
                expects: timer.expects,
                path: ResumePath::Timer,
                source: Source::Timer,
                misrouted,
            };
            surface.lanes[lane as usize].send(work).await;
        }
    }
}

//! The timer poller: due timer rows fire to the instance's routed lane (R5). A poller
//! hides a picked timer from other pollers for its fire lease; a refused fire is deferred
//! by the lane with capped exponential backoff and jitter. A process shutting down stops
//! polling at its next wait (a poll under way dispatches what it picked first), and no
//! poller sends a mis-routed fire to a replica that is shutting down or dead, nor waits for
//! room in another replica's lane past its own shutdown request (it hands the fire back).
//!
//! The pick crosses the store's faulty boundary. A pick whose reply was lost may have
//! hidden some rows for their fire lease: the poller fires nothing it was not told of, and
//! those rows come due again once the lease runs out (at-least-once firing, as for a
//! poller that dies holding them).

use std::rc::Rc;

use sutra_sim_core::executor::sleep;

use crate::ctx::Context;
use crate::event::{Exit, ModelEvent};
use crate::ids::ResumePath;
use crate::replica::cluster::Cluster;
use crate::replica::cluster::ReplicaSurface;
use crate::replica::execution::{defer_fire, Source, Work};
use crate::routing::Routing;
use crate::store::{Reply, Store};

/// Most timers one poll picks.
pub const TIMERS_PER_POLL_MAX: usize = 64;

/// The poller loop of one process.
pub async fn run(
    ctx: Rc<Context>,
    store: Store,
    routing: Rc<Routing>,
    cluster: Rc<Cluster>,
    surface: Rc<ReplicaSurface>,
) {
    let t = &ctx.scenario().timeouts;
    let shutdown = surface.shutdown.clone();
    let _role = shutdown.role();
    // The role's phase (zero unless drawn): its first period starts this much after boot.
    let phase = crate::faults::phase(&ctx, t.timer_poll_interval);
    if !phase.is_zero() && shutdown.unless_requested(sleep(phase)).await.is_none() {
        return;
    }
    let watch = crate::faults::timeout_watch::TimeoutWatch::default();
    loop {
        if shutdown.unless_requested(watch.sleep(&ctx, surface.process, t.timer_poll_interval)).await.is_none() {
            return;
        }
        // Skip the ticks at which nothing can be due (see `Store::earliest_timer_due`).
        match shutdown.unless_requested(store.idle_until_work(store.earliest_timer_due(), t.timer_poll_interval)).await
        {
            None => return,
            Some(false) => continue,
            Some(true) => {}
        }
        let Reply::Answered(due) = store.pick_due_timers(t.timer_fire_lease, TIMERS_PER_POLL_MAX).await else {
            continue;
        };
        for timer in due {
            let late = crate::faults::timer_jitter::lateness(&ctx);
            if !late.is_zero() {
                // The environment's delay, in physical (store) time: a skewed node clock
                // must not shorten a lateness the fault reported.
                sutra_sim_core::executor::elapse(late).await;
            }
            let destination = crate::faults::misroute::route(&ctx, routing.home_lane(timer.instance), true);
            let (lane, misrouted) = (destination.lane, destination.misrouted);
            // A fire mis-routed to another replica lands in that replica's lane, if it runs.
            let target = match destination.replica {
                Some(index) => cluster.surface(index).filter(|s| !s.shutdown.requested()),
                None => Some(surface.clone()),
            };
            let Some(target) = target else { continue };
            let exec = ctx.new_exec();
            ctx.emit(ModelEvent::Dispatched {
                instance: timer.instance,
                exec,
                path: ResumePath::Timer,
                process: target.process,
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
            let inbox = &target.lanes[lane as usize];
            if target.process == surface.process {
                inbox.send(work, &target.shutdown).await;
            } else if shutdown.unless_requested(inbox.send(work, &target.shutdown)).await.is_none() {
                // Waiting for room in another replica's lane must not hold up this process's
                // shutdown: the fire it holds is handed back, like the work queued here.
                defer_fire(&ctx, &store, &work, false).await;
                ctx.emit(ModelEvent::ExecutionEnded { instance: work.instance, exec, exit: Exit::HandedBack });
            }
        }
    }
}

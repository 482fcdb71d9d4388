//! The relay path: receive a relay from the broker, route it through the binding table,
//! wait for the lane to have room, and dispatch it (R12: routing is affinity only; the
//! claim, not the route, decides who runs). A process shutting down stops receiving: the
//! consumer stops at its wait for the next delivery (one it holds is dispatched first).

use std::rc::Rc;

use crate::broker::Broker;
use crate::ctx::Context;
use crate::event::ModelEvent;
use crate::mutant::Mutant;
use crate::replica::cluster::ReplicaSurface;
use crate::replica::execution::{Source, Work};
use crate::streams;

/// The consumer loop of one process.
pub async fn run(ctx: Rc<Context>, broker: Broker, surface: Rc<ReplicaSurface>) {
    let process = surface.process;
    let _role = surface.shutdown.role();
    loop {
        let Some(delivery) = surface.shutdown.unless_requested(broker.receive(process)).await else { return };
        let relay = delivery.relay;
        // A duplicate is the publisher's or the broker's at-least-once slip: one per first delivery,
        // never multiplying on redeliveries.
        if !delivery.redelivery && broker.faults().duplicates() {
            broker.duplicate(relay, streams::millis_up_to(streams::BROKER, ctx.scenario().workload.relay_delay_max));
        }
        let dedupes = ctx.mutant_is(Mutant::QueuedCopyAcked);
        if dedupes && surface.in_hand.borrow().contains(&relay.message) {
            // "A lane here already has this message queued; that copy will do the step."
            broker.ack(delivery.tag);
            continue;
        }
        let Ok((route, ticket)) = surface.bindings.route_and_register(relay.instance, delivery.tag).await else {
            // The binding lane refused (it only does for a reentrancy bug): give the relay back.
            broker.requeue(delivery.tag, ctx.scenario().timeouts.requeue_delay);
            continue;
        };
        let lane = route.lane();
        // The await between deciding and acting: wait for the lane to have room.
        let inbox = &surface.lanes[lane as usize];
        // Once the process is shutting down its lanes take nothing, and the queue is handed
        // back: no room to wait for.
        while inbox.queue.len() >= crate::spec::LANE_BACKLOG_MAX && !surface.shutdown.requested() {
            inbox.space.notified().await;
        }
        if surface.bindings.act_on(relay.instance, delivery.tag, &route).await.is_err() {
            broker.requeue(delivery.tag, ctx.scenario().timeouts.requeue_delay);
            continue;
        }
        // A relay is already on the replica that took it from the broker; only its lane can be wrong.
        let destination = crate::faults::misroute::route(&ctx, lane, false);
        let (lane, misrouted) = (destination.lane, destination.misrouted);
        let exec = ctx.new_exec();
        ctx.emit(ModelEvent::Dispatched { instance: relay.instance, exec, path: relay.path, process, lane, misrouted });
        let work = Work {
            exec,
            instance: relay.instance,
            expects: relay.expects,
            path: relay.path,
            source: Source::Relay { relay, tag: delivery.tag, ticket },
            misrouted,
        };
        if dedupes {
            surface.in_hand.borrow_mut().insert(relay.message);
        }
        surface.lanes[lane as usize].queue.push(work);
    }
}

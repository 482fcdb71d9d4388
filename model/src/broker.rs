//! The broker: at-least-once delivery of relays with a prefetch window per consumer,
//! ack and requeue (R4), and redelivery of a dead consumer's unacked relays.
//!
//! Consumers are replica processes. A relay stays unacked, owned by the process it was
//! delivered to, until that process acks or requeues it; if the process dies, the broker
//! notices within its liveness interval and puts the relay back.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::Duration;

use sutra_sim_core::executor::{self, sleep};
use sutra_sim_core::sync::Notify;
use sutra_sim_core::{NodeId, Tracer};

use crate::dense::DenseMap;
use crate::event::ModelEvent;
use crate::faults::broker::BrokerFaults;
use crate::ids::{InstanceId, MessageId, ProcessId, ResumePath};

/// A relay: resume `instance`'s step that expects version `expects`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Relay {
    /// Stable across redeliveries.
    pub message: MessageId,
    /// The instance to resume.
    pub instance: InstanceId,
    /// The committed version the step expects to find.
    pub expects: u64,
    /// Relay, or a pull completion re-entering as a fresh delivery.
    pub path: ResumePath,
}

/// One delivery of a relay to a consumer; the tag acks or requeues exactly it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// The relay.
    pub relay: Relay,
    /// Unique per delivery.
    pub tag: u32,
    /// Delivered before (after a requeue or a consumer death).
    pub redelivery: bool,
}

/// How a relay came to be ready: what a delivery of it is, for the broker's witness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    /// Published.
    Fresh,
    /// Requeued, or taken back from a consumer.
    Redelivery,
    /// A copy made by the duplicate-delivery fault.
    Duplicate,
}

#[derive(Default)]
struct BrokerState {
    ready: VecDeque<(Relay, Origin)>,
    /// tag → (consumer process, relay).
    unacked: DenseMap<u32, (ProcessId, Relay)>,
    /// Unacked count per consumer.
    in_flight: DenseMap<ProcessId, u32>,
    next_tag: u32,
    next_message: u32,
}

/// The broker handle.
#[derive(Clone)]
pub struct Broker {
    state: Rc<RefCell<BrokerState>>,
    arrived: Notify,
    tracer: Tracer<ModelEvent>,
    prefetch: u32,
    faults: BrokerFaults,
}

impl Broker {
    /// An empty broker; consumers may hold `prefetch` unacked relays each.
    pub fn new(tracer: Tracer<ModelEvent>, prefetch: u32, faults: BrokerFaults) -> Broker {
        Broker {
            state: Rc::new(RefCell::new(BrokerState::default())),
            arrived: Notify::new(),
            tracer,
            prefetch,
            faults,
        }
    }

    /// The broker's faults (the consumer asks whether to duplicate a delivery).
    pub fn faults(&self) -> &BrokerFaults {
        &self.faults
    }

    /// A fresh message id.
    pub fn new_message(&self) -> MessageId {
        let mut s = self.state.borrow_mut();
        s.next_message += 1;
        MessageId(s.next_message)
    }

    /// Publishes a relay, ready after `delay` (a task on the world node carries it there).
    pub fn publish(&self, relay: Relay, delay: Duration) {
        self.enqueue_after(relay, delay, Origin::Fresh);
    }

    fn enqueue_after(&self, relay: Relay, delay: Duration, origin: Origin) {
        let delay = delay + self.faults.extra_delay();
        let broker = self.clone();
        if delay.is_zero() {
            broker.enqueue(relay, origin);
            return;
        }
        executor::spawn_daemon_on(NodeId::WORLD, "broker:publish", async move {
            sleep(delay).await;
            broker.enqueue(relay, origin);
        });
    }

    fn enqueue(&self, relay: Relay, origin: Origin) {
        self.state.borrow_mut().ready.push_back((relay, origin));
        self.arrived.notify();
    }

    /// Waits for a relay for `consumer`, within its prefetch window. The broker witnesses
    /// the delivery (`RelayDelivered`).
    pub async fn receive(&self, consumer: ProcessId) -> Delivery {
        loop {
            let taken = {
                let mut s = self.state.borrow_mut();
                let in_flight = s.in_flight.get(consumer).copied().unwrap_or(0);
                if in_flight < self.prefetch && !s.ready.is_empty() {
                    let index = self.faults.pick(s.ready.len());
                    let (relay, origin) = s.ready.remove(index).expect("index within the ready queue");
                    s.next_tag += 1;
                    let tag = s.next_tag;
                    s.unacked.insert(tag, (consumer, relay));
                    *s.in_flight.get_or_insert_with(consumer, || 0) += 1;
                    Some((Delivery { relay, tag, redelivery: origin != Origin::Fresh }, origin))
                } else {
                    None
                }
            };
            if let Some((d, origin)) = taken {
                self.tracer.emit(ModelEvent::RelayDelivered {
                    instance: d.relay.instance,
                    message: d.relay.message,
                    process: consumer,
                    redelivery: d.redelivery,
                    duplicate: origin == Origin::Duplicate,
                    delivery: Some(d.tag),
                });
                // Others may be waiting for what is still ready.
                if !self.state.borrow().ready.is_empty() {
                    self.arrived.notify();
                }
                return d;
            }
            self.arrived.notified().await;
        }
    }

    /// Acks a delivery: it will not be delivered again. Acking an unknown tag does nothing.
    pub fn ack(&self, tag: u32) {
        if let Some(timeout) = self.faults.ack_lost() {
            self.redeliver_unless_settled(tag, timeout);
            return;
        }
        let acked = self.settle(tag);
        if let Some(relay) = acked {
            self.tracer.emit(ModelEvent::RelayAcked {
                instance: relay.instance,
                message: relay.message,
                delivery: Some(tag),
            });
        }
    }

    /// Requeues a delivery for redelivery after `delay` (R4).
    pub fn requeue(&self, tag: u32, delay: Duration) {
        if let Some(relay) = self.settle(tag) {
            self.tracer.emit(ModelEvent::RelayRequeued {
                instance: relay.instance,
                message: relay.message,
                delay_ns: sutra_sim_core::time::duration_nanos(delay),
                delivery: Some(tag),
            });
            self.enqueue_after(relay, delay, Origin::Redelivery);
        }
    }

    /// Dead-letters a delivery: it is settled for good and parked in the dead-letter queue
    /// with `code` as its reason, never to be delivered again.
    pub fn dead_letter(&self, tag: u32, code: crate::ids::Code) {
        if let Some(relay) = self.settle(tag) {
            self.tracer.emit(ModelEvent::RelayDeadLettered {
                instance: relay.instance,
                message: relay.message,
                delivery: Some(tag),
                code,
            });
        }
    }

    /// Delivers a copy of `relay` again later (the duplicate-delivery fault).
    pub fn duplicate(&self, relay: Relay, delay: Duration) {
        self.enqueue_after(relay, delay, Origin::Duplicate);
    }

    fn settle(&self, tag: u32) -> Option<Relay> {
        let mut s = self.state.borrow_mut();
        let (consumer, relay) = s.unacked.remove(tag)?;
        if let Some(n) = s.in_flight.get_mut(consumer) {
            *n -= 1;
        }
        drop(s);
        self.arrived.notify();
        Some(relay)
    }

    /// The broker's ack timeout: if `tag` is still unacked after `timeout`, takes it back
    /// from its consumer and redelivers it.
    fn redeliver_unless_settled(&self, tag: u32, timeout: Duration) {
        let broker = self.clone();
        executor::spawn_daemon_on(NodeId::WORLD, "broker:ack-timeout", async move {
            sleep(timeout).await;
            let consumer = broker.state.borrow().unacked.get(tag).map(|(c, _)| *c);
            let Some(consumer) = consumer else { return };
            if let Some(relay) = broker.settle(tag) {
                broker.tracer.emit(ModelEvent::RelayReclaimed {
                    instance: relay.instance,
                    message: relay.message,
                    process: consumer,
                    silent: false,
                    delivery: Some(tag),
                });
                broker.enqueue(relay, Origin::Redelivery);
            }
        });
    }

    /// Puts every unacked relay of a dead consumer back (redelivery after consumer death).
    pub fn reclaim(&self, dead: ProcessId) {
        self.take_back(dead, false);
    }

    /// Puts every unacked relay of a consumer that is alive but silent (paused) past the
    /// liveness timeout back, as a real broker does when a consumer stops heartbeating.
    /// The consumer may wake later and act on what it had: its ack or requeue of a relay
    /// taken back is ignored (the tag is unknown by then).
    pub fn reclaim_silent(&self, silent: ProcessId) {
        self.take_back(silent, true);
    }

    fn take_back(&self, dead: ProcessId, silent: bool) {
        let reclaimed: Vec<(u32, Relay)> = {
            let mut s = self.state.borrow_mut();
            let tags: Vec<u32> = s.unacked.iter().filter(|(_, (c, _))| *c == dead).map(|(t, _)| t).collect();
            s.in_flight.remove(dead);
            tags.into_iter().filter_map(|t| s.unacked.remove(t).map(|(_, r)| (t, r))).collect()
        };
        for (tag, relay) in reclaimed {
            self.tracer.emit(ModelEvent::RelayReclaimed {
                instance: relay.instance,
                message: relay.message,
                process: dead,
                silent,
                delivery: Some(tag),
            });
            self.enqueue(relay, Origin::Redelivery);
        }
    }

    /// Processes holding unacked relays.
    pub fn consumers(&self) -> Vec<ProcessId> {
        self.state.borrow().in_flight.iter().filter(|(_, n)| **n > 0).map(|(p, _)| p).collect()
    }
}

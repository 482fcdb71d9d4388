//! The broker: an in-process queue of relays with per-consumer flow control (a prefetch
//! window), requeue with a delay, and takeback of a dead or silent consumer's deliveries.
//! Relays reach it from the store's outbox (the publisher thread). It witnesses what it
//! does — deliveries, acks, requeues, takebacks — into the audit table while it holds its
//! lock, so a witness's `seq` is where the broker did it. Settling a delivery the broker
//! already took back does nothing and is not witnessed (its delivery tag is void).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;
use sutra_sql::Statements;

use crate::clock::Clock;
use crate::db::Conn;
use crate::witness::{record_alone, Source, Witness};

/// A relay handed to a consumer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// The delivery's tag: what an ack or a requeue names.
    pub tag: u64,
    /// The message id.
    pub message: u32,
    /// The instance it is for.
    pub instance: u32,
    /// The step it was published for.
    pub step: u32,
}

#[derive(Clone, Copy, Debug)]
struct Message {
    instance: u32,
    step: u32,
    /// Store time (ns) from which it may be delivered.
    ready_ns: u64,
    delivered_before: bool,
    /// The consumer process and delivery tag holding it, if delivered and unsettled.
    held_by: Option<(u32, u64)>,
}

#[derive(Default)]
struct State {
    messages: BTreeMap<u32, Message>,
    unsettled: BTreeMap<u32, u32>,
    next_tag: u64,
}

/// The broker.
pub struct Broker {
    state: Mutex<State>,
    next_message: AtomicU32,
    sql: Arc<Statements>,
    prefetch: u32,
}

impl Broker {
    /// An empty broker whose consumers hold at most `prefetch` unsettled deliveries.
    pub fn new(sql: Arc<Statements>, prefetch: u32) -> Broker {
        Broker { state: Mutex::new(State::default()), next_message: AtomicU32::new(0), sql, prefetch }
    }

    /// A fresh message id, for the publisher to witness the publication under.
    pub fn message_id(&self) -> u32 {
        self.next_message.fetch_add(1, Ordering::Relaxed)
    }

    /// Queues a published relay, ready now.
    pub fn publish(&self, message: u32, instance: u32, step: u32) {
        let mut s = self.state.lock().expect("broker lock");
        let m = Message { instance, step, ready_ns: 0, delivered_before: false, held_by: None };
        s.messages.insert(message, m);
    }

    /// Relays published and not yet acked.
    pub fn outstanding(&self) -> usize {
        self.state.lock().expect("broker lock").messages.len()
    }

    fn witness(
        &self,
        conn: &mut Conn,
        node: &str,
        kind: &'static str,
        fields: serde_json::Value,
    ) -> Result<u64, String> {
        record_alone(conn, &self.sql, Witness::new(node, kind, Source::Broker, fields))
    }

    /// The next ready relay for `process`, if its window has room.
    pub fn next(&self, conn: &mut Conn, node: &str, process: u32) -> Result<Option<Delivery>, String> {
        let mut s = self.state.lock().expect("broker lock");
        if s.unsettled.get(&process).copied().unwrap_or(0) >= self.prefetch {
            return Ok(None);
        }
        let now = Clock::store().now_ns();
        let ready = s
            .messages
            .iter()
            .filter(|(_, m)| m.held_by.is_none() && m.ready_ns <= now)
            .min_by_key(|(id, m)| (m.ready_ns, **id));
        let Some((&message, &m)) = ready else { return Ok(None) };
        s.next_tag += 1;
        let tag = s.next_tag;
        self.witness(conn, node, "relay-delivered", json!({
            "instance": m.instance, "message": message, "process": process, "redelivery": m.delivered_before, "duplicate": false,
            "delivery": tag,
        }))?;
        let entry = s.messages.get_mut(&message).expect("just found");
        entry.held_by = Some((process, tag));
        entry.delivered_before = true;
        *s.unsettled.entry(process).or_insert(0) += 1;
        Ok(Some(Delivery { tag, message, instance: m.instance, step: m.step }))
    }

    /// Acks a delivery: the relay is done with.
    pub fn ack(&self, conn: &mut Conn, node: &str, d: &Delivery) -> Result<(), String> {
        let mut s = self.state.lock().expect("broker lock");
        let Some(process) = holder(&s, d) else { return Ok(()) };
        self.witness(
            conn,
            node,
            "relay-acked",
            json!({ "instance": d.instance, "message": d.message, "delivery": d.tag }),
        )?;
        s.messages.remove(&d.message);
        settle(&mut s, process);
        Ok(())
    }

    /// Requeues a delivery, ready again `delay_ns` after the broker's instant.
    pub fn requeue(&self, conn: &mut Conn, node: &str, d: &Delivery, delay_ns: u64) -> Result<(), String> {
        let mut s = self.state.lock().expect("broker lock");
        let Some(process) = holder(&s, d) else { return Ok(()) };
        let at = self.witness(
            conn,
            node,
            "relay-requeued",
            json!({ "instance": d.instance, "message": d.message, "delay_ns": delay_ns, "delivery": d.tag }),
        )?;
        let m = s.messages.get_mut(&d.message).expect("held");
        m.held_by = None;
        m.ready_ns = at + delay_ns;
        settle(&mut s, process);
        Ok(())
    }

    /// Takes back every unsettled delivery of `process`: it died, or (`silent`) it sent
    /// nothing for longer than the broker's liveness timeout. Returns how many.
    pub fn take_back(&self, conn: &mut Conn, node: &str, process: u32, silent: bool) -> Result<usize, String> {
        let mut s = self.state.lock().expect("broker lock");
        let held: Vec<(u32, u64)> = s
            .messages
            .iter()
            .filter_map(|(id, m)| m.held_by.filter(|(p, _)| *p == process).map(|(_, tag)| (*id, tag)))
            .collect();
        for (message, tag) in &held {
            let instance = s.messages[message].instance;
            self.witness(
                conn,
                node,
                "relay-reclaimed",
                json!({ "instance": instance, "message": message, "process": process, "silent": silent, "delivery": tag }),
            )?;
            let m = s.messages.get_mut(message).expect("held");
            m.held_by = None;
            m.ready_ns = 0;
        }
        s.unsettled.remove(&process);
        Ok(held.len())
    }

    /// Whether `process` holds unsettled deliveries.
    pub fn holds(&self, process: u32) -> bool {
        self.state.lock().expect("broker lock").unsettled.get(&process).is_some_and(|n| *n > 0)
    }
}

/// The consumer holding delivery `d`, if the tag is still valid.
fn holder(s: &State, d: &Delivery) -> Option<u32> {
    s.messages.get(&d.message).and_then(|m| m.held_by).filter(|(_, tag)| *tag == d.tag).map(|(p, _)| p)
}

fn settle(s: &mut State, process: u32) {
    if let Some(n) = s.unsettled.get_mut(&process) {
        *n = n.saturating_sub(1);
    }
}

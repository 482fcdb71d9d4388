//! The broker: an in-process queue of relays with per-consumer flow control (a prefetch
//! window), requeue with a delay, and takeback of a dead or silent consumer's deliveries.
//! Relays reach it from the store's outbox (the publisher thread). It witnesses what it
//! does — deliveries, acks, requeues, takebacks — into the audit table, so a witness's
//! `seq` is where the broker did it. Settling a delivery the broker already took back does
//! nothing and is not witnessed (its delivery tag is void).
//!
//! A real broker does not wait for one consumer's bookkeeping before it answers another,
//! so this one holds its lock only to change its state, never across a witness's database
//! transaction (which waits for the store's writers): an operation marks the message it
//! acts on *in flight* under the lock, writes its witness without the lock, and applies
//! the change under the lock again. Nothing else touches an in-flight message meanwhile
//! (no delivery, no takeback; a settle of it is void), so each message's witnesses are in
//! the order the broker acted on it. Before, a requeue queued behind every other consumer's
//! delivery and its database write, and a correct lane's requeue of a refused relay came
//! hundreds of milliseconds late on a loaded machine (`refusal-contract` flagged it).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

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
    /// An operation's witness of this message is being written: nothing else may act on it.
    in_flight: bool,
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

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("broker lock")
    }

    /// A fresh message id, for the publisher to witness the publication under.
    pub fn message_id(&self) -> u32 {
        self.next_message.fetch_add(1, Ordering::Relaxed)
    }

    /// Queues a published relay, ready now.
    pub fn publish(&self, message: u32, instance: u32, step: u32) {
        let m = Message { instance, step, ready_ns: 0, delivered_before: false, held_by: None, in_flight: false };
        self.lock().messages.insert(message, m);
    }

    /// Relays published and not yet acked.
    pub fn outstanding(&self) -> usize {
        self.lock().messages.len()
    }

    /// Writes one witness (without the broker's lock) and returns its store time.
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
        let Some((d, redelivery)) = self.reserve_next(process) else { return Ok(None) };
        let written = self.witness(conn, node, "relay-delivered", json!({
            "instance": d.instance, "message": d.message, "process": process, "redelivery": redelivery, "duplicate": false,
            "delivery": d.tag,
        }));
        let mut s = self.lock();
        let m = s.messages.get_mut(&d.message).expect("an in-flight message stays");
        m.in_flight = false;
        if let Err(e) = written {
            m.held_by = None;
            settle(&mut s, process, 1);
            return Err(e);
        }
        m.delivered_before = true;
        Ok(Some(d))
    }

    /// Picks the next ready relay for `process` and holds it for `process`, in flight; with
    /// whether it was delivered before.
    fn reserve_next(&self, process: u32) -> Option<(Delivery, bool)> {
        let mut s = self.lock();
        if s.unsettled.get(&process).copied().unwrap_or(0) >= self.prefetch {
            return None;
        }
        let now = Clock::store().now_ns();
        let ready = s
            .messages
            .iter()
            .filter(|(_, m)| m.held_by.is_none() && !m.in_flight && m.ready_ns <= now)
            .min_by_key(|(id, m)| (m.ready_ns, **id));
        let (&message, &m) = ready?;
        s.next_tag += 1;
        let tag = s.next_tag;
        let entry = s.messages.get_mut(&message).expect("just found");
        entry.held_by = Some((process, tag));
        entry.in_flight = true;
        *s.unsettled.entry(process).or_insert(0) += 1;
        Some((Delivery { tag, message, instance: m.instance, step: m.step }, m.delivered_before))
    }

    /// Marks delivery `d` in flight if its tag is still valid and nothing else acts on it;
    /// returns its holder.
    fn reserve_settle(&self, d: &Delivery) -> Option<u32> {
        let mut s = self.lock();
        let process = holder(&s, d)?;
        let m = s.messages.get_mut(&d.message).expect("held");
        if m.in_flight {
            return None;
        }
        m.in_flight = true;
        Some(process)
    }

    /// Ends `d`'s flight without a change (its witness was not written).
    fn abandon(&self, d: &Delivery, e: String) -> Result<(), String> {
        if let Some(m) = self.lock().messages.get_mut(&d.message) {
            m.in_flight = false;
        }
        Err(e)
    }

    /// Acks a delivery: the relay is done with.
    pub fn ack(&self, conn: &mut Conn, node: &str, d: &Delivery) -> Result<(), String> {
        let Some(process) = self.reserve_settle(d) else { return Ok(()) };
        let fields = json!({ "instance": d.instance, "message": d.message, "delivery": d.tag });
        if let Err(e) = self.witness(conn, node, "relay-acked", fields) {
            return self.abandon(d, e);
        }
        let mut s = self.lock();
        s.messages.remove(&d.message);
        settle(&mut s, process, 1);
        Ok(())
    }

    /// Requeues a delivery, ready again `delay_ns` after the broker's instant.
    pub fn requeue(&self, conn: &mut Conn, node: &str, d: &Delivery, delay_ns: u64) -> Result<(), String> {
        let Some(process) = self.reserve_settle(d) else { return Ok(()) };
        let fields = json!({ "instance": d.instance, "message": d.message, "delay_ns": delay_ns, "delivery": d.tag });
        let at = match self.witness(conn, node, "relay-requeued", fields) {
            Ok(at) => at,
            Err(e) => return self.abandon(d, e),
        };
        let mut s = self.lock();
        let m = s.messages.get_mut(&d.message).expect("held");
        m.held_by = None;
        m.in_flight = false;
        m.ready_ns = at + delay_ns;
        settle(&mut s, process, 1);
        Ok(())
    }

    /// Takes back every unsettled delivery of `process`: it died, or (`silent`) it sent
    /// nothing for longer than the broker's liveness timeout. Returns how many. A delivery
    /// in flight (its consumer is settling it, or it is still being handed over) is left
    /// to that operation: the liveness watch looks again on its next round.
    pub fn take_back(&self, conn: &mut Conn, node: &str, process: u32, silent: bool) -> Result<usize, String> {
        let held = self.reserve_held(process);
        for (i, (message, tag, instance)) in held.iter().enumerate() {
            let fields = json!({ "instance": instance, "message": message, "process": process, "silent": silent, "delivery": tag });
            if let Err(e) = self.witness(conn, node, "relay-reclaimed", fields) {
                self.finish_take_back(process, &held[..i]);
                let mut s = self.lock();
                for (m, _, _) in &held[i..] {
                    s.messages.get_mut(m).expect("held").in_flight = false;
                }
                return Err(e);
            }
        }
        self.finish_take_back(process, &held);
        Ok(held.len())
    }

    /// The deliveries `process` holds and nothing else acts on, marked in flight:
    /// (message, tag, instance).
    fn reserve_held(&self, process: u32) -> Vec<(u32, u64, u32)> {
        let mut s = self.lock();
        let mut held = Vec::new();
        for (id, m) in s.messages.iter_mut() {
            if let Some((p, tag)) = m.held_by.filter(|(p, _)| *p == process && !m.in_flight) {
                debug_assert_eq!(p, process);
                m.in_flight = true;
                held.push((*id, tag, m.instance));
            }
        }
        held
    }

    /// Applies the takeback of `taken` (witnessed): ready again at once.
    fn finish_take_back(&self, process: u32, taken: &[(u32, u64, u32)]) {
        let mut s = self.lock();
        for (message, _, _) in taken {
            let m = s.messages.get_mut(message).expect("held");
            m.held_by = None;
            m.in_flight = false;
            m.ready_ns = 0;
        }
        settle(&mut s, process, taken.len() as u32);
    }

    /// Whether `process` holds unsettled deliveries.
    pub fn holds(&self, process: u32) -> bool {
        self.lock().unsettled.get(&process).is_some_and(|n| *n > 0)
    }
}

/// The consumer holding delivery `d`, if the tag is still valid.
fn holder(s: &State, d: &Delivery) -> Option<u32> {
    s.messages.get(&d.message).and_then(|m| m.held_by).filter(|(_, tag)| *tag == d.tag).map(|(p, _)| p)
}

/// `count` of `process`'s deliveries settled or taken back: its window has that much room again.
fn settle(s: &mut State, process: u32, count: u32) {
    if let Some(n) = s.unsettled.get_mut(&process) {
        *n = n.saturating_sub(count);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    use super::*;

    /// Set by [`waiting_for_the_write_lock`]: a connection found SQLite's write lock taken.
    static WAITING: AtomicBool = AtomicBool::new(false);

    /// A SQLite busy handler that says so and waits on, for as long as the lock is held.
    fn waiting_for_the_write_lock(_attempt: i32) -> bool {
        WAITING.store(true, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(1));
        true
    }

    /// Last session's fix: the broker held its lock across a witness's database transaction,
    /// so every other broker call — another consumer's delivery, a requeue, a publication,
    /// the liveness watch — waited for one consumer's witness to get the store's write
    /// lock. Here a delivery's witness waits for the write lock, which the test holds; a
    /// publication must still go through. No time decides it: the test waits until the
    /// delivering thread is seen waiting for the lock, and holds the lock until the
    /// publication returns — with the old broker that is never (the publication waits for
    /// the broker lock, held by a delivery that waits for the test), so it gives up after
    /// 10 s rather than hang.
    #[test]
    fn a_broker_call_does_not_wait_for_another_calls_witness_write() {
        let dir = crate::scratch_dir("broker-lock").expect("a scratch directory");
        let target = crate::harness::sqlite_target(&dir);
        let sql = Arc::new(Statements::default());
        let mut setup = Conn::open(&target).expect("open");
        crate::harness::set_up(&mut setup, &sql).expect("set up");
        let broker = Arc::new(Broker::new(sql, 4));
        broker.publish(0, 0, 1);
        let Conn::Sqlite(holder) = &setup else { unreachable!("a SQLite target") };
        holder.execute_batch("BEGIN IMMEDIATE").expect("take the write lock");
        let mut consumer = Conn::open(&target).expect("open");
        let Conn::Sqlite(c) = &mut consumer else { unreachable!("a SQLite target") };
        c.busy_handler(Some(waiting_for_the_write_lock)).expect("a busy handler");
        let b = broker.clone();
        let delivering = std::thread::spawn(move || b.next(&mut consumer, "replica-0", 1));
        while !WAITING.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let b = broker.clone();
        let publishing = std::thread::spawn(move || {
            b.publish(1, 1, 1);
            tx.send(b.outstanding()).expect("the test waits");
        });
        let published = rx.recv_timeout(Duration::from_secs(10));
        holder.execute_batch("COMMIT").expect("release the write lock");
        publishing.join().expect("the publisher");
        let delivered = delivering.join().expect("the delivery").expect("the delivery's witness is written");
        assert_eq!(published, Ok(2), "a publication waited for another consumer's delivery witness");
        assert_eq!(delivered.map(|d| d.message), Some(0));
        let _ = std::fs::remove_dir_all(dir);
    }
}

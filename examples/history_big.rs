//! Writes a big history for measuring `sutra-sim check` (issue 24 item 3): passing runs of
//! smoke, seed after seed, their witness lines renumbered into one run — each run's seq,
//! times and ids (instances, executions, messages, processes, tasks, owners, admin clients) moved past the
//! previous run's — so the checkers judge every line and the whole file passes.
//!
//! Each run ends as a deployment's processes do: every replica process the run left alive is
//! witnessed crashed at the run's last witness (without that, the file's processes would all live for
//! the whole history, 65,000 of them per 10 M events, which no real history has). The header
//! declares the store's call latency as a deployment would (`store_call_latency_max_ns`:
//! smoke's longest store latency with its longest spike), so `check` may forget a task once
//! its requests have all landed.
//!
//! `cargo run --release --example history_big -- OUT.jsonl 10000000`

use std::io::{BufWriter, Write};

use serde_json::Value;
use sutra_sim::history::{render, RunInfo, LINE_KEYS};
use sutra_sim::plugin::CheckerSet;
use sutra_sim_model::{RunOptions, Scenario};

/// Per-copy offsets of every renumbered field.
#[derive(Default, Clone, Copy)]
struct Offsets {
    seq: u64,
    time: u64,
    instance: u64,
    exec: u64,
    message: u64,
    process: u64,
    task: u64,
    operation: u64,
    /// Broker delivery ids (per copy of a relay): refusal-contract and bounce-meter-agrees
    /// pair a refusal with its copy by them, so they must not repeat across runs.
    delivery: u64,
    /// Admin clients: codes-acted-on knows a request by (client, request id), so they must
    /// not repeat across runs either.
    client: u64,
}

const ADMIN: u64 = 1 << 63;

fn shift(v: &mut Value, by: u64) -> u64 {
    let n = v.as_u64().unwrap_or(0) + by;
    if !v.is_null() {
        *v = n.into();
    }
    n
}

/// Moves one line by `o`; raises `next` to past every id it used.
fn renumber(line: &mut Value, o: &Offsets, next: &mut Offsets) {
    let kind = line["kind"].as_str().unwrap_or("").to_string();
    let obj = line.as_object_mut().unwrap();
    for (key, value) in obj.iter_mut() {
        match key.as_str() {
            "seq" => next.seq = next.seq.max(shift(value, o.seq) + 1),
            "time_ns" | "due_ns" | "until_ns" => next.time = next.time.max(shift(value, o.time)),
            "instance" => next.instance = next.instance.max(shift(value, o.instance) + 1),
            "exec" => next.exec = next.exec.max(shift(value, o.exec) + 1),
            "message" => next.message = next.message.max(shift(value, o.message) + 1),
            "process" => next.process = next.process.max(shift(value, o.process) + 1),
            "by" if kind != "row-written" => next.process = next.process.max(shift(value, o.process) + 1),
            "by" => next.exec = next.exec.max(shift(value, o.exec) + 1),
            "task" => next.task = next.task.max(shift(value, o.task) + 1),
            "delivery" => next.delivery = next.delivery.max(shift(value, o.delivery) + 1),
            "client" => next.client = next.client.max(shift(value, o.client) + 1),
            "owner" | "holder" | "previous" | "writer" | "owner_before" | "claim_owner" => {
                if let Some(id) = value.as_u64() {
                    *value = if id & ADMIN != 0 {
                        next.operation = next.operation.max((id & !ADMIN) + o.operation + 1);
                        (id + o.operation).into()
                    } else {
                        (id + (o.process << 16)).into()
                    };
                }
            }
            "trigger" => {
                if let Some(m) = value.get_mut("Message") {
                    next.message = next.message.max(shift(m, o.message) + 1);
                }
            }
            _ => {}
        }
    }
}

/// The line as `run --history` writes it: the line's own keys first, in
/// [`LINE_KEYS`] order, then the event's fields (a `Value` prints its keys sorted, and a
/// reader reads a line that starts as the schema says a writer starts it without a JSON
/// parser for its head).
fn in_writer_order(line: &Value) -> String {
    let obj = line.as_object().expect("an event line is an object");
    let head = LINE_KEYS.iter().filter_map(|k| obj.get(*k).map(|v| format!("{}:{v}", Value::from(*k))));
    let rest = obj
        .iter()
        .filter(|(k, _)| !LINE_KEYS.contains(&k.as_str()))
        .map(|(k, v)| format!("{}:{v}", Value::from(k.as_str())));
    format!("{{{}}}", head.chain(rest).collect::<Vec<_>>().join(","))
}

/// Whether the run ended with a refused relay copy not yet requeued (the simulation stops
/// once the workload is done, a lane's requeue possibly still on its way): another run
/// appended after it would have that copy overdue, so such a run is left out.
fn owes_a_requeue_at_its_end(text: &str) -> bool {
    let mut owed = std::collections::BTreeSet::new();
    for line in text.lines().skip(1) {
        let v: Value = serde_json::from_str(line).unwrap();
        let Some(delivery) = v["delivery"].as_u64() else { continue };
        match v["kind"].as_str() {
            Some("claim-refused") => {
                owed.insert(delivery);
            }
            Some("relay-requeued" | "relay-reclaimed" | "relay-acked" | "relay-dead-lettered") => {
                owed.remove(&delivery);
            }
            _ => {}
        }
    }
    !owed.is_empty()
}

/// The replica processes a run's lines name (by the node that witnessed them: `replica-2`,
/// or `replica-2.1` for a process that replaced a paused one), renumbered, less those it
/// witnessed crashed or stopped: (process, replica, node).
fn left_alive(lines: &[Value]) -> Vec<(u64, u64, String)> {
    let mut alive = std::collections::BTreeMap::new();
    for v in lines {
        let (Some(process), Some(node)) = (v["process"].as_u64(), v["node"].as_str()) else { continue };
        let Some(number) = node.strip_prefix("replica-") else { continue };
        let Some(replica) = number.split('.').next().and_then(|r| r.parse::<u64>().ok()) else { continue };
        if v["kind"] == "replica-crashed" || v["kind"] == "replica-stopped" {
            alive.insert(process, None);
        } else {
            alive.entry(process).or_insert(Some((replica, node.to_string())));
        }
    }
    alive.into_iter().filter_map(|(p, r)| r.map(|(r, node)| (p, r, node))).collect()
}

/// The header, declaring the store's call latency of `scenario`.
fn declaring(header: &str, scenario: &Scenario) -> String {
    let mut v: Value = serde_json::from_str(header).unwrap();
    let latency = scenario.timeouts.store_latency_max + scenario.faults.store.latency_spike_max;
    v["store_call_latency_max_ns"] = (latency.as_nanos() as u64).into();
    v.to_string()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let out = args.get(1).expect("usage: history_big OUT.jsonl EVENTS");
    let events: u64 = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(10_000_000);
    let scenario = Scenario::built_in("smoke").unwrap();
    let set = CheckerSet::built_in();
    let mut file = BufWriter::new(std::fs::File::create(out).unwrap());
    let (mut offsets, mut written, mut seed) = (Offsets::default(), 0u64, 0u64);
    let mut meter = (0u64, 0u64);
    while written < events {
        let outcome = set.run(&scenario, &RunOptions { keep_trace: true, ..RunOptions::seeded(seed) }).unwrap();
        seed += 1;
        if !outcome.verdict.is_pass() {
            continue;
        }
        let info = RunInfo { scenario: &scenario, seed, mutant: None, strategy: "random".into() };
        let text = render(&info, &outcome);
        if owes_a_requeue_at_its_end(&text) {
            continue;
        }
        let mut lines = text.lines();
        let header = lines.next().unwrap();
        if written == 0 {
            writeln!(file, "{}", declaring(header, &scenario)).unwrap();
        }
        let mut next = offsets;
        let mut moved = Vec::new();
        for line in lines {
            let mut v: Value = serde_json::from_str(line).unwrap();
            if v["kind"] == "bounce-meter" {
                // One scrape of the meter at the very end, counting every run's bounces.
                meter.0 += v["relay"].as_u64().unwrap_or(0);
                meter.1 += v["timer"].as_u64().unwrap_or(0);
                continue;
            }
            renumber(&mut v, &offsets, &mut next);
            writeln!(file, "{}", in_writer_order(&v)).unwrap();
            written += 1;
            moved.push(v);
        }
        // At the run's last witness: a crash later than that would tell the checkers the
        // processes ran on, idle, past what the run showed (codes-acted-on would count that
        // time against a client's retry).
        let last_witness = moved.iter().filter_map(|v| v["time_ns"].as_u64()).max().unwrap_or(offsets.time);
        for (process, replica, node) in left_alive(&moved) {
            let crash = serde_json::json!({
                "seq": next.seq, "time_ns": last_witness, "node": node, "kind": "replica-crashed",
                "witness": "executor", "process": process, "replica": replica,
            });
            writeln!(file, "{}", in_writer_order(&crash)).unwrap();
            next.seq += 1;
            written += 1;
        }
        // The next run starts past every instant this one named (a lease's end, a timer's due
        // time), not only past its witnesses.
        next.time = next.time.max(offsets.time + outcome.sim_time.as_nanos()) + 1_000_000_000;
        offsets = next;
    }
    let scrape = serde_json::json!({
        "seq": offsets.seq, "time_ns": offsets.time, "node": "world", "kind": "bounce-meter", "witness": "executor",
        "relay": meter.0, "timer": meter.1,
    });
    writeln!(file, "{}", in_writer_order(&scrape)).unwrap();
    written += 1;
    file.flush().unwrap();
    eprintln!("{written} events from {seed} seeds");
}

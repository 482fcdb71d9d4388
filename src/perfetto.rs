//! A Chrome/Perfetto trace-event timeline of one run (DESIGN.md §3), for ui.perfetto.dev or
//! chrome://tracing: the JSON "trace event format", which both load as is.
//!
//! Layout: one process (`pid`) per node of the run, named after it (`replica-0`, …, and the
//! `world` for the environment and administration); one thread (`tid`) per execution lane
//! of each replica, named `lane-N`, and one more per node, `process`, for what happens to
//! the node as a whole (its sweeper, its lease, faults that hit it). Steps are complete
//! slices (`"ph": "X"`) from `step-started` to `step-ended` — or, for a step whose process
//! died, to the end of its execution or of the run. Claims, refusals, commits, sweeps and
//! faults are instants (`"ph": "i"`); the heal is a global instant. Names are given by
//! metadata events (`"ph": "M"`). Timestamps are simulated microseconds.

use std::collections::BTreeMap;

use serde_json::{json, Value};
use sutra_sim_core::{Event, EventKind, NodeId, Outcome, SimTime};
use sutra_sim_model::ids::ExecId;
use sutra_sim_model::ModelEvent;

use crate::fault_events::is_environment_event;
use crate::story::describe;

/// The thread of a node for node-wide events; lanes are threads `LANE_TID_BASE + lane`.
pub const NODE_TID: u64 = 0;
/// Thread id of lane 0; lane `n` is `LANE_TID_BASE + n`.
pub const LANE_TID_BASE: u64 = 1;

/// Process id of a node (Perfetto treats pid 0 specially, so nodes start at 1).
fn pid(node: NodeId) -> u64 {
    u64::from(node.0) + 1
}

/// Simulated time in trace-event microseconds.
fn micros(t: SimTime) -> f64 {
    t.as_nanos() as f64 / 1_000.0
}

/// Builds the timeline of `outcome` (run with its trace kept). `lanes` is the number of
/// execution lanes per replica: each replica node gets that many lane tracks, used or not.
pub fn timeline(outcome: &Outcome<ModelEvent>, lanes: u32, title: &str) -> Value {
    let mut exec_place: BTreeMap<ExecId, (NodeId, u64)> = BTreeMap::new();
    for e in &outcome.trace {
        match &e.kind {
            ModelEvent::Dispatched { exec, lane, .. } => {
                exec_place.insert(*exec, (e.node, LANE_TID_BASE + u64::from(*lane)));
            }
            ModelEvent::MigrationRequested { exec, .. } => {
                exec_place.insert(*exec, (e.node, NODE_TID));
            }
            _ => {}
        }
    }
    let place = |e: &Event<ModelEvent>| -> (u64, u64) {
        match e.kind.exec().and_then(|x| exec_place.get(&x)) {
            Some((node, tid)) if *node == e.node => (pid(*node), *tid),
            _ => (pid(e.node), NODE_TID),
        }
    };
    let mut events = metadata(outcome, lanes, title);
    let end = outcome.trace.last().map_or(SimTime::ZERO, |e| e.time);
    let mut open_steps: BTreeMap<ExecId, &Event<ModelEvent>> = BTreeMap::new();
    let step_slice = |start: &Event<ModelEvent>, until: SimTime, how: &str| -> Value {
        let (pid, tid) = place(start);
        let (instance, step) = match &start.kind {
            ModelEvent::StepStarted { instance, step, .. } => (instance.0, *step),
            _ => unreachable!("only step-started events open slices"),
        };
        json!({
            "name": format!("i{instance} step {step}"), "cat": "step", "ph": "X",
            "ts": micros(start.time), "dur": micros(until) - micros(start.time),
            "pid": pid, "tid": tid,
            "args": {"instance": instance, "step": step, "exec": start.kind.exec().map(|x| x.0), "ended": how},
        })
    };
    for e in &outcome.trace {
        match &e.kind {
            ModelEvent::StepStarted { exec, .. } => {
                open_steps.insert(*exec, e);
            }
            ModelEvent::StepEnded { exec, error, .. } => {
                if let Some(start) = open_steps.remove(exec) {
                    let how = error.map_or("ok", |c| c.as_str());
                    events.push(step_slice(start, e.time, how));
                }
            }
            ModelEvent::ExecutionEnded { exec, .. } => {
                if let Some(start) = open_steps.remove(exec) {
                    events.push(step_slice(start, e.time, "execution ended"));
                }
            }
            _ => {}
        }
        if let Some((category, scope)) = instant_kind(&e.kind) {
            let (pid, tid) = place(e);
            let mut instant = json!({
                "name": e.kind.name(), "cat": category, "ph": "i", "s": scope,
                "ts": micros(e.time), "pid": pid, "tid": tid,
                "args": {"seq": e.seq, "what": describe(&e.kind), "instance": e.kind.instance()},
            });
            if Some(e.seq) == outcome.failing_event {
                instant["name"] = json!(format!("FAILURE: {}", outcome.verdict.checker().unwrap_or("failure")));
                instant["cat"] = json!("failure");
                instant["args"]["verdict"] = json!(outcome.verdict.to_string());
            }
            events.push(instant);
        }
    }
    // Steps still open when the trace ends: their process died or the run stopped.
    for start in open_steps.into_values() {
        events.push(step_slice(start, end, "unfinished at the end of the trace"));
    }
    json!({
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {
            "title": title,
            "verdict": outcome.verdict.to_string(),
            "fingerprint": format!("{:016x}", outcome.fingerprint),
            "events": outcome.events,
            "version": crate::VERSION,
        },
    })
}

/// Which events are instants: (category, scope). Scope `t` is the thread's track, `p` the
/// whole process, `g` every track.
fn instant_kind(event: &ModelEvent) -> Option<(&'static str, &'static str)> {
    use ModelEvent as E;
    Some(match event {
        E::ClaimGranted { .. } | E::ClaimRefused { .. } => ("claim", "t"),
        E::Refusal { .. } => ("refusal", "t"),
        E::CommitAccepted { .. } | E::CommitRejected { .. } => ("commit", "t"),
        E::Swept { .. } | E::SweepSelected { .. } | E::SweepClearMissed { .. } => ("sweep", "t"),
        E::Healed => ("fault", "g"),
        E::ReplicaCrashed { .. }
        | E::ShutdownRequested { .. }
        | E::ReplicaStopped { .. }
        | E::ReplicaPaused { .. }
        | E::ReplicaResumed { .. }
        | E::ReplicaRestarted { .. } => ("fault", "p"),
        other if is_environment_event(other) => ("fault", "t"),
        E::MigrationRequested { .. } => ("admin", "t"),
        E::InstanceCompleted { .. } => ("instance", "t"),
        _ => return None,
    })
}

/// Names for every process and thread; every lane of every replica gets a track.
fn metadata(outcome: &Outcome<ModelEvent>, lanes: u32, title: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for (index, name) in outcome.node_names.iter().enumerate() {
        let pid = pid(NodeId(index as u32));
        let label = if index == 0 { format!("world — {title}") } else { name.clone() };
        out.push(
            json!({"name": "process_name", "ph": "M", "ts": 0, "pid": pid, "tid": NODE_TID, "args": {"name": label}}),
        );
        out.push(json!({"name": "process_sort_index", "ph": "M", "ts": 0, "pid": pid, "tid": NODE_TID, "args": {"sort_index": index}}));
        out.push(json!({"name": "thread_name", "ph": "M", "ts": 0, "pid": pid, "tid": NODE_TID, "args": {"name": "process"}}));
        if is_replica(name) {
            for lane in 0..u64::from(lanes) {
                let tid = LANE_TID_BASE + lane;
                out.push(json!({"name": "thread_name", "ph": "M", "ts": 0, "pid": pid, "tid": tid, "args": {"name": format!("lane-{lane}")}}));
                out.push(json!({"name": "thread_sort_index", "ph": "M", "ts": 0, "pid": pid, "tid": tid, "args": {"sort_index": tid}}));
            }
        }
    }
    out
}

/// True for the nodes that are replicas (the ones with execution lanes).
fn is_replica(node_name: &str) -> bool {
    node_name.starts_with("replica-")
}

/// Writes the timeline as JSON to `path`, atomically.
pub fn write(outcome: &Outcome<ModelEvent>, lanes: u32, title: &str, path: &std::path::Path) -> std::io::Result<()> {
    let text = serde_json::to_string(&timeline(outcome, lanes, title)).expect("timelines serialise");
    crate::files::write_atomically(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use sutra_sim_core::EntropyMode;
    use sutra_sim_model::{Mutant, RunOptions, Scenario};

    use super::*;

    fn traced(scenario: &Scenario, seed: u64, mutant: Option<Mutant>) -> Outcome<ModelEvent> {
        let options = RunOptions { entropy: EntropyMode::Seed(seed), strategy: None, mutant, keep_trace: true };
        sutra_sim_model::run(scenario, &options)
    }

    #[test]
    fn the_timeline_is_trace_event_json_with_one_track_per_lane() {
        let scenario = Scenario::built_in("smoke").unwrap();
        let outcome = traced(&scenario, 3, None);
        let text = serde_json::to_string(&timeline(&outcome, scenario.topology.lanes, "test")).unwrap();
        let doc: Value = serde_json::from_str(&text).expect("valid JSON");
        let events = doc["traceEvents"].as_array().expect("a traceEvents array");
        let mut tracks: BTreeMap<(u64, u64), String> = BTreeMap::new();
        for e in events {
            for field in ["ph", "ts", "pid", "tid", "name"] {
                assert!(e.get(field).is_some(), "{field} missing in {e}");
            }
            assert!(e["ts"].as_f64().unwrap() >= 0.0, "{e}");
            if e["ph"] == "M" && e["name"] == "thread_name" {
                let key = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
                let name = e["args"]["name"].as_str().unwrap().to_string();
                assert!(tracks.insert(key, name).is_none(), "one name per track: {e}");
            }
        }
        // Every replica node has exactly one track per lane.
        let replica_pids: BTreeSet<u64> = outcome
            .node_names
            .iter()
            .enumerate()
            .filter(|(_, n)| n.starts_with("replica-"))
            .map(|(i, _)| i as u64 + 1)
            .collect();
        // A replacement started while a replica is frozen is a replica node of its own.
        assert!(replica_pids.len() as u32 >= scenario.topology.replicas);
        for pid in &replica_pids {
            let lanes: Vec<&String> =
                tracks.iter().filter(|((p, _), n)| p == pid && n.starts_with("lane-")).map(|(_, n)| n).collect();
            assert_eq!(lanes.len() as u32, scenario.topology.lanes, "replica pid {pid}: {lanes:?}");
        }
        // Slices and instants sit on named tracks; steps are slices with a duration.
        let mut slices = 0;
        for e in events.iter().filter(|e| e["ph"] == "X" || e["ph"] == "i") {
            let key = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
            assert!(tracks.contains_key(&key), "unnamed track {key:?} for {e}");
            if e["ph"] == "X" {
                slices += 1;
                assert!(e["dur"].as_f64().unwrap() >= 0.0, "{e}");
                assert!(tracks[&key].starts_with("lane-"), "steps run on lanes: {e}");
            }
        }
        assert!(slices > 0, "a passing smoke run has steps");
        assert!(events.iter().any(|e| e["cat"] == "claim"));
    }

    #[test]
    fn the_failing_event_is_marked() {
        let scenario = Scenario::built_in("smoke").unwrap();
        let outcome = (0..200)
            .map(|seed| traced(&scenario, seed, Some(Mutant::PerProcessOwner)))
            .find(|outcome| !outcome.verdict.is_pass())
            .expect("the mutant fails within 200 smoke seeds");
        let doc = timeline(&outcome, scenario.topology.lanes, "test");
        let failures: Vec<&Value> =
            doc["traceEvents"].as_array().unwrap().iter().filter(|e| e["cat"] == "failure").collect();
        assert_eq!(failures.len(), 1);
        let checker = outcome.verdict.checker().unwrap();
        assert_eq!(failures[0]["name"], format!("FAILURE: {checker}").as_str());
    }
}

//! The correct model stays green on a fixed seed range of every built-in scenario, and its
//! runs are deterministic.

use sutra_sim_model::{run, RunOptions, Scenario};

#[test]
fn the_correct_model_is_clean_on_a_fixed_seed_range() {
    for scenario in Scenario::all_built_in() {
        for seed in 0..30 {
            let out = run(&scenario, &RunOptions::seeded(seed));
            assert!(
                out.verdict.is_pass(),
                "{} seed {seed}: {} (replay: sutra-sim run --scenario {} --seed {seed})",
                scenario.name,
                out.verdict,
                scenario.name
            );
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_fingerprint() {
    let scenario = Scenario::built_in("smoke").unwrap();
    for seed in [1, 7, 99] {
        let a = run(&scenario, &RunOptions::seeded(seed));
        let b = run(&scenario, &RunOptions::seeded(seed));
        assert_eq!(a.fingerprint, b.fingerprint);
        assert_eq!(a.events, b.events);
    }
}

/// A graceful shutdown (the `cancel` fault's third shape), judged from a run's witnesses:
/// once asked to shut down, a process receives no further delivery; when it stops, no row
/// is held by any of its owner ids (the drain released everything); and the replica comes
/// back later as a new process. Queued work is handed back somewhere in the range.
#[test]
fn a_graceful_shutdown_takes_no_new_work_stops_holding_nothing_and_restarts_as_a_new_process() {
    use std::collections::{BTreeMap, BTreeSet};
    use sutra_sim_model::event::Exit;
    use sutra_sim_model::ids::{InstanceId, OwnerId, ProcessId};
    use sutra_sim_model::ModelEvent as E;

    let scenario = Scenario::built_in("real-world").unwrap();
    let (mut stops, mut restarts, mut handed_back) = (0, 0, 0);
    for seed in 0..60 {
        let mut options = RunOptions::seeded(seed);
        options.keep_trace = true;
        let out = run(&scenario, &options);
        assert!(out.verdict.is_pass(), "real-world seed {seed}: {}", out.verdict);
        let mut owner_process: BTreeMap<OwnerId, ProcessId> = BTreeMap::new();
        let mut holder: BTreeMap<InstanceId, OwnerId> = BTreeMap::new();
        let mut draining: BTreeSet<ProcessId> = BTreeSet::new();
        let mut stopped: BTreeMap<u32, ProcessId> = BTreeMap::new();
        for event in &out.trace {
            match &event.kind {
                E::ClaimGranted { owner, process: Some(p), .. } => {
                    owner_process.insert(*owner, *p);
                }
                E::RowWritten { instance, owner: Some(o), .. } => {
                    holder.insert(*instance, *o);
                }
                E::RowWritten { instance, owner: None, .. } => {
                    holder.remove(instance);
                }
                E::ShutdownRequested { process, .. } => {
                    draining.insert(*process);
                }
                E::RelayDelivered { process, .. } => {
                    assert!(
                        !draining.contains(process),
                        "seed {seed}: p{} received a delivery while shutting down",
                        process.0
                    );
                }
                E::ReplicaStopped { replica, process } => {
                    stops += 1;
                    let held: Vec<&InstanceId> =
                        holder.iter().filter(|(_, o)| owner_process.get(o) == Some(process)).map(|(i, _)| i).collect();
                    assert!(held.is_empty(), "seed {seed}: p{} stopped still holding {held:?}", process.0);
                    stopped.insert(*replica, *process);
                }
                E::ReplicaCrashed { replica, .. } => {
                    stopped.remove(replica);
                }
                E::ReplicaRestarted { replica, process } => {
                    if let Some(old) = stopped.remove(replica) {
                        assert!(process.0 > old.0, "seed {seed}: a restart is a new process");
                        restarts += 1;
                    }
                }
                E::ExecutionEnded { exit: Exit::HandedBack, .. } => handed_back += 1,
                _ => {}
            }
        }
    }
    assert!(
        stops > 0 && restarts > 0 && handed_back > 0,
        "stops {stops}, restarts {restarts}, handed back {handed_back}"
    );
}

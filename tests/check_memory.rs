//! `check` forgets what a long history no longer needs (issue 24 item 3: bounded memory)
//! without changing a verdict: a zombie acting under an old epoch of an instance finished
//! thousands of instances earlier is still flagged, and a user's checker still reads the
//! rows the built-in ones no longer make the view keep.

use std::sync::Arc;

use sutra_sim::history::event_line;
use sutra_sim::plugin::CheckerSet;
use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event, NodeId, SimTime, Verdict};
use sutra_sim_model::event::{TriggerRef, WriteKind};
use sutra_sim_model::ids::{ExecId, InstanceId, MessageId, OwnerId, ProcessId, ResumePath};
use sutra_sim_model::{ModelEvent, ModelView};

const HEADER: &str = r#"{"history":"sutra-sim","version":1,"scenario":"smoke","complete":false}"#;

fn owner(process: u32) -> OwnerId {
    OwnerId::lane(ProcessId(process), 0)
}

fn granted(instance: u32, exec: u32, process: u32, epoch: u64) -> ModelEvent {
    ModelEvent::ClaimGranted {
        instance: InstanceId(instance),
        exec: ExecId(exec),
        owner: owner(process),
        process: Some(ProcessId(process)),
        path: ResumePath::Relay,
        previous: None,
        stale_age_ns: None,
        epoch,
        task: Some(u64::from(process)),
    }
}

fn row(instance: u32, write: WriteKind, owner: Option<OwnerId>, version: u64, epoch: u64) -> ModelEvent {
    ModelEvent::RowWritten {
        instance: InstanceId(instance),
        write,
        by: None,
        writer: None,
        owner,
        version,
        epoch,
        parked: false,
    }
}

fn committed(instance: u32, exec: u32, process: u32, epoch: u64, current_epoch: u64) -> ModelEvent {
    ModelEvent::CommitAccepted {
        instance: InstanceId(instance),
        exec: ExecId(exec),
        owner: owner(process),
        epoch,
        owner_before: Some(owner(process)),
        current_epoch,
        trigger: TriggerRef::Message(MessageId(instance)),
        based_on: 0,
        version_before: 0,
        version_after: 1,
        task: Some(u64::from(process)),
    }
}

/// Instance `i` of one step: process `2i` claims it (epoch 1) and loses it to a stale
/// steal by process `2i + 1` (epoch 2), which commits and completes it.
fn finished_instance(i: u32) -> Vec<ModelEvent> {
    let (a, b) = (2 * i + 1, 2 * i + 2);
    vec![
        ModelEvent::InstanceStarted { instance: InstanceId(i), steps: 1 },
        granted(i, 2 * i, a, 1),
        row(i, WriteKind::Claim, Some(owner(a)), 0, 1),
        granted(i, 2 * i + 1, b, 2),
        row(i, WriteKind::Claim, Some(owner(b)), 0, 2),
        committed(i, 2 * i + 1, b, 2, 2),
        row(i, WriteKind::Commit, None, 1, 2),
        ModelEvent::InstanceCompleted { instance: InstanceId(i) },
    ]
}

/// A history of `instances` finished instances, then `tail`.
fn history(instances: u32, tail: Vec<ModelEvent>) -> String {
    let nodes = vec!["store".to_string()];
    let mut text = format!("{HEADER}\n");
    let events = (0..instances).flat_map(finished_instance).chain(tail);
    for (seq, kind) in events.enumerate() {
        let event = Event { seq: seq as u64 + 1, time: SimTime(seq as u64 * 1_000), node: NodeId(0), kind };
        text.push_str(&event_line(&event, &nodes).expect("a witness"));
        text.push('\n');
    }
    text
}

fn judged_by(names: &[&str], text: &str) -> Verdict {
    let set = CheckerSet::built_in().only(names.iter().copied()).unwrap();
    set.check_history_text("long.jsonl", text, None).unwrap().verdict
}

#[test]
fn a_zombie_acting_under_an_old_epoch_of_a_long_finished_instance_is_still_flagged() {
    // Instance 3's first owner (process 7, epoch 1) wakes 6,000 instances later and the
    // store accepts its commit: two executions acted under one instance.
    let zombie = committed(3, 6, 7, 1, 2);
    let text = history(6_000, vec![zombie]);
    let checkers = ["no-double-resume", "commit-once", "linear-history", "exits-release"];
    match judged_by(&checkers, &text) {
        Verdict::Violation { checker, message } => {
            assert_eq!(checker, "no-double-resume", "{message}");
            assert!(message.contains("under epoch 1, but epoch 2"), "{message}");
        }
        other => panic!("not flagged: {other:?}"),
    }
    // Without the zombie the same history passes.
    assert!(judged_by(&checkers, &history(6_000, Vec::new())).is_pass());
}

/// A user's checker that reads the store's rows through the view.
struct ReadsRows;

impl Checker<ModelEvent, ModelView> for ReadsRows {
    fn name(&self) -> &str {
        "reads-rows"
    }
    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }
    fn interest(&self) -> u64 {
        sutra_sim_core::tag_mask(&[sutra_sim_model::event::tag::INSTANCE_COMPLETED])
    }
    fn on_event(&mut self, event: &Event<ModelEvent>, view: &ModelView) -> Check {
        let ModelEvent::InstanceCompleted { instance } = event.kind else { return Check::Ok };
        match view.version(instance) {
            Some(1) => Check::Ok,
            other => Check::Fail(format!("instance {} completed at version {other:?}", instance.0)),
        }
    }
}

#[test]
fn a_user_s_checker_still_reads_the_rows_the_view_keeps_for_it() {
    let spec = CheckerSpec {
        name: "reads-rows",
        kind: CheckerKind::Always,
        description: "a completed instance's row is at version 1",
        rules: &[],
        factory: Arc::new(|| Box::new(ReadsRows)),
    };
    let set = CheckerSet::built_in().with(spec).only(["reads-rows"]).unwrap();
    let report = set.check_history_text("rows.jsonl", &history(50, Vec::new()), None).unwrap();
    assert!(report.verdict.is_pass(), "{:?}", report.verdict);
    assert!(report.judged.iter().any(|j| j.name == "reads-rows" && j.events == 50));
}

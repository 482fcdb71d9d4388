//! A user's own checker judging an external history through the library: a hand-written
//! history (as a real runtime's store layer would write it, string owner ids and all),
//! judged by `CheckerSet::with(mine).check_history_text`.

use std::sync::Arc;

use sutra_sim::plugin::CheckerSet;
use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event, Verdict};
use sutra_sim_model::{ModelEvent, ModelView};

/// Mine: no instance is swept twice.
#[derive(Default)]
struct SweptOnce(Vec<u32>);

impl Checker<ModelEvent, ModelView> for SweptOnce {
    fn name(&self) -> &str {
        "swept-once"
    }
    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }
    /// The kinds it reads: a checker that keeps the default (every kind, narrative ones
    /// included) cannot judge a history, and `check` says so.
    fn interest(&self) -> u64 {
        sutra_sim_core::tag_mask(&[sutra_sim_model::event::tag::SWEPT])
    }
    fn on_event(&mut self, event: &Event<ModelEvent>, _: &ModelView) -> Check {
        if let ModelEvent::Swept { instance, .. } = event.kind {
            if self.0.contains(&instance.0) {
                return Check::Fail(format!("instance {} swept twice", instance.0));
            }
            self.0.push(instance.0);
        }
        Check::Ok
    }
}

fn mine() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "swept-once",
        kind: CheckerKind::Always,
        description: "no instance is swept twice",
        rules: &[],
        factory: Arc::new(|| Box::new(SweptOnce::default())),
    }
}

fn swept(seq: u64) -> String {
    format!(
        r#"{{"seq":{seq},"time_ns":{},"node":"sweeper-a","kind":"swept","witness":"store","instance":0,"owner":"pod-7/lane-2","epoch":1,"age_ns":40000000000,"by":0,"lease_held":true,"task":null}}"#,
        seq * 1000
    )
}

#[test]
fn a_users_checker_judges_an_external_history_and_the_built_ins_it_cannot_feed_say_why() {
    let header = r#"{"history":"sutra-sim","version":1,"scenario":"smoke","emits":["swept"]}"#;
    let text = format!("{header}\n{}\n{}\n", swept(1), swept(2));
    let set = CheckerSet::built_in().with(mine());
    let report = set.check_history_text("external.jsonl", &text, None).unwrap();
    assert_eq!(
        report.verdict,
        Verdict::Violation { checker: "swept-once".into(), message: "instance 0 swept twice".into() }
    );
    assert_eq!(report.failing_seq, Some(2));
    // The built-ins that read kinds this writer does not emit say so, and are not judges.
    let sweep_by_age = report.unable.iter().find(|u| u.name == "sweep-by-age").unwrap();
    assert!(sweep_by_age.reason.contains("the writer does not emit"), "{sweep_by_age:?}");
    assert!(report.judged.iter().all(|j| j.name != "sweep-by-age"));
    assert_eq!(report.owner_names.values().next().map(String::as_str), Some("pod-7/lane-2"));
    // Without the second sweep: a pass, and the history (no `complete`) is cut.
    let clean = set.check_history_text("external.jsonl", &format!("{header}\n{}\n", swept(1)), None).unwrap();
    assert!(clean.verdict.is_pass() && clean.cut.is_some());
    // A checker that reads every kind (the default interest) reads narrative ones: unable.
    let mut greedy = mine();
    greedy.factory = Arc::new(|| Box::new(Greedy));
    greedy.name = "greedy";
    let report = CheckerSet::built_in().with(greedy).check_history_text("external.jsonl", &text, None).unwrap();
    assert!(report.unable.iter().any(|u| u.name == "greedy" && u.reason.contains("narrative")), "{:?}", report.unable);
}

struct Greedy;
impl Checker<ModelEvent, ModelView> for Greedy {
    fn name(&self) -> &str {
        "greedy"
    }
    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }
    fn on_event(&mut self, _: &Event<ModelEvent>, _: &ModelView) -> Check {
        Check::Ok
    }
}

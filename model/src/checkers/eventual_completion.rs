//! eventual-completion (eventually; R4, R5, R18, R24): after the heal, work that is left
//! never goes without progress for longer than the scenario's progress bound, and the run
//! ends with every instance complete and no claim held.
//!
//! It judges progress, not a deadline for all of the work (see `work_left`): a deadline
//! derived from timeouts alone fails the correct model whenever a scenario queues more
//! work behind one lane or one pull worker than the bound allows for, and a stall is caught
//! as soon as it is one at any size. The work left is counted from the store's witnesses
//! (instances started, rows written) alone; the view is never asked.
//!
//! Where steps may outlast the claim timeout (spec 000's tuning trade), a step may be
//! stolen and its commit rejected on one attempt after another: the progress bound counts
//! as many attempts as make all of them missing less likely than once in 10^12 over the
//! run (`Scenario::attempts_bound`), each attempt fitting in its claim with at least the
//! share of step durations that end inside it — a bound that still holds, not a pass for
//! a scenario it cannot judge.

use std::sync::Arc;
use std::time::Duration;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event, SimTime};

use crate::event::ModelEvent;
use crate::view::ModelView;
use crate::work_left::{ProgressWatch, WorkLeft};

/// The work left and, from the heal on, its progress.
#[derive(Default)]
pub struct EventualCompletion {
    work: WorkLeft,
    /// Set at the heal.
    watch: Option<ProgressWatch>,
    /// The scenario's progress bound, read at the heal.
    bound: Duration,
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "eventual-completion",
        kind: CheckerKind::Eventually,
        description: "after the heal, work left never goes without progress for longer than the progress bound, and every instance completes with no claim held",
        rules: &["R4", "R5", "R18", "R24"],
        factory: Arc::new(|| Box::new(EventualCompletion::default())),
    }
}

impl Checker<ModelEvent, ModelView> for EventualCompletion {
    fn interest(&self) -> u64 {
        use crate::event::tag;
        sutra_sim_core::tag_mask(&[tag::INSTANCE_STARTED, tag::ROW_WRITTEN, tag::HEALED])
    }

    fn name(&self) -> &str {
        "eventual-completion"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Eventually
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, view: &ModelView) -> Check {
        if let ModelEvent::Healed = event.kind {
            self.bound = view.scenario().progress_bound();
            self.watch = Some(ProgressWatch::new(self.work.total(), event.time));
            return Check::Ok;
        }
        if let Some(watch) = &self.watch {
            if watch.stalled(self.work.total(), event.time, self.bound) {
                return Check::Fail(self.stall_message(*watch, event.time));
            }
        }
        if self.work.observe(&event.kind) {
            if let Some(watch) = &mut self.watch {
                watch.observe(self.work.total(), event.time);
            }
        }
        Check::Ok
    }

    fn at_end(&mut self, _view: &ModelView) -> Check {
        if self.work.total() == 0 {
            return Check::Ok;
        }
        match self.watch {
            Some(watch) => Check::Fail(format!(
                "{}: no progress since {} to the end of the run (at most {} allowed after the heal)",
                self.work_message(),
                watch.last_progress,
                sutra_sim_core::format_duration(self.bound)
            )),
            None => Check::Fail(format!("{}, and the run ended before the heal", self.work_message())),
        }
    }
}

impl EventualCompletion {
    /// What is left and since when nothing of it progressed.
    fn stall_message(&self, watch: ProgressWatch, now: SimTime) -> String {
        format!(
            "{}: no progress since {} ({} without, at most {} allowed after the heal)",
            self.work_message(),
            watch.last_progress,
            sutra_sim_core::format_duration(now.since(watch.last_progress)),
            sutra_sim_core::format_duration(self.bound)
        )
    }

    fn work_message(&self) -> String {
        let mut parts = Vec::new();
        let incomplete: Vec<String> =
            self.work.incomplete().map(|(i, version)| format!("{} (at step {version})", i.0)).collect();
        if !incomplete.is_empty() {
            let shown: Vec<&str> = incomplete.iter().take(8).map(String::as_str).collect();
            parts.push(format!("{} instance(s) never completed: {}", incomplete.len(), shown.join(", ")));
        }
        let held: Vec<String> = self.work.held().map(|(i, o)| format!("{} by {o}", i.0)).collect();
        if !held.is_empty() {
            let shown: Vec<&str> = held.iter().take(8).map(String::as_str).collect();
            parts.push(format!("{} claim(s) still held: {}", held.len(), shown.join(", ")));
        }
        parts.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{claims, fails, feed};
    use crate::event::WriteKind;
    use crate::ids::InstanceId;

    fn started(instance: u32, steps: u32) -> ModelEvent {
        ModelEvent::InstanceStarted { instance: InstanceId(instance), steps }
    }

    fn committed(instance: u32, version: u64) -> ModelEvent {
        row(instance, version, None)
    }

    fn row(instance: u32, version: u64, owner: Option<crate::ids::OwnerId>) -> ModelEvent {
        ModelEvent::RowWritten {
            instance: InstanceId(instance),
            write: WriteKind::Commit,
            by: None,
            writer: None,
            owner,
            version,
            epoch: version,
            parked: false,
        }
    }

    /// Smoke's progress bound, in whole milliseconds.
    fn bound_ms() -> u64 {
        crate::scenario::Scenario::built_in("smoke").unwrap().progress_bound().as_millis() as u64
    }

    #[test]
    fn fires_when_an_instance_never_completed() {
        let history = vec![(0, started(0, 2)), (5, committed(0, 1)), (40_000, ModelEvent::Healed)];
        let check = feed(&mut EventualCompletion::default(), history);
        assert!(fails(&check), "{check:?}");
        assert!(format!("{check:?}").contains("0 (at step 1)"), "{check:?}");
    }

    #[test]
    fn fires_when_a_claim_is_left_held() {
        let history = vec![
            (0, started(0, 1)),
            (5, committed(0, 1)),
            (6, row(0, 1, Some(claims::owner()))),
            (40_000, ModelEvent::Healed),
        ];
        let check = feed(&mut EventualCompletion::default(), history);
        assert!(format!("{check:?}").contains("claim(s) still held"), "{check:?}");
    }

    #[test]
    fn accepts_everything_complete_and_free() {
        let history =
            vec![(0, started(0, 2)), (5, committed(0, 1)), (40_000, ModelEvent::Healed), (40_010, committed(0, 2))];
        assert_eq!(feed(&mut EventualCompletion::default(), history), Check::Ok);
    }

    #[test]
    fn a_long_queue_of_work_is_no_stall_while_each_piece_progresses_within_the_bound() {
        // 40 instances whose steps complete one every 90% of the bound after the heal: the
        // whole workload takes 36 bounds, far past any deadline for all of it, and is fine.
        let gap = bound_ms() * 9 / 10;
        let mut history: Vec<(u64, ModelEvent)> = (0..40).map(|i| (0, started(i, 1))).collect();
        history.push((0, ModelEvent::Healed));
        history.extend((0..40).map(|i| ((u64::from(i) + 1) * gap, committed(i, 1))));
        assert_eq!(feed(&mut EventualCompletion::default(), history), Check::Ok);
    }

    #[test]
    fn fires_at_the_first_event_past_a_gap_longer_than_the_bound_even_if_work_resumes() {
        let late = bound_ms() + 1;
        let history =
            vec![(0, started(0, 2)), (0, ModelEvent::Healed), (late, committed(0, 1)), (late + 1, committed(0, 2))];
        let check = feed(&mut EventualCompletion::default(), history);
        assert!(format!("{check:?}").contains("no progress since 0.000ms"), "{check:?}");
    }

    #[test]
    fn a_livelock_of_claims_and_releases_is_no_progress() {
        let owner = Some(claims::owner());
        let mut history = vec![(0, started(0, 1)), (0, ModelEvent::Healed)];
        let step = bound_ms() / 4;
        for k in 1..8u64 {
            history.push((k * step, claims::row(0, WriteKind::Claim, owner, k)));
            history.push((k * step + 1, claims::row(0, WriteKind::Release, None, k)));
        }
        assert!(fails(&feed(&mut EventualCompletion::default(), history)));
    }

    #[test]
    fn nothing_before_the_heal_is_judged_for_progress() {
        let late = bound_ms() * 3;
        let history = vec![(0, started(0, 1)), (late, committed(0, 1)), (late + 1, ModelEvent::Healed)];
        assert_eq!(feed(&mut EventualCompletion::default(), history), Check::Ok);
    }
}

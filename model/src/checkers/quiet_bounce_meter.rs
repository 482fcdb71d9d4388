//! quiet-bounce-meter (eventually; R13): in a run without anything that makes two resumes
//! of one instance meet — no contention fault (mis-routing, duplicates, crashes, pauses,
//! slow steps, store or lease faults; late timer fires are fine) and no migrations — the
//! claim-bounce meter, split by relay and timer, stays under the scenario's threshold. The
//! meter is the checker's own count of the store's `ClaimRefused` witnesses, not the
//! runtime's counter. The built-in `quiet` scenario is where it is active.
//!
//! A bug that would still pass: a runtime whose relays bounce only under contention, but
//! twice as often as they should (a refusal repeated by a needless redelivery) — contention
//! switches this checker off; refusal-contract's delay bound is what limits that.

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::ModelEvent;
use crate::ids::ResumePath;
use crate::view::ModelView;

/// Claim refusals witnessed so far, by path.
#[derive(Default)]
pub struct QuietBounceMeter {
    relay: u32,
    timer: u32,
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "quiet-bounce-meter",
        kind: CheckerKind::Eventually,
        description: "without contention faults or migrations, refused claims (relay, timer) stay under the threshold",
        rules: &["R13"],
        factory: Arc::new(|| Box::new(QuietBounceMeter::default())),
    }
}

/// True if the run is quiet: nothing in it should make two resumes of one instance meet.
pub fn quiet(view: &ModelView) -> bool {
    !view.faults().contention_expected() && view.scenario().admin.migration_per_tick.is_never()
}

impl Checker<ModelEvent, ModelView> for QuietBounceMeter {
    fn interest(&self) -> u64 {
        sutra_sim_core::tag_mask(&[crate::event::tag::CLAIM_REFUSED])
    }

    fn name(&self) -> &str {
        "quiet-bounce-meter"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Eventually
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, _view: &ModelView) -> Check {
        if let ModelEvent::ClaimRefused { path, .. } = event.kind {
            match path {
                ResumePath::Relay | ResumePath::PullCompletion => self.relay += 1,
                ResumePath::Timer => self.timer += 1,
                // An operator's 409 is not a resume bouncing.
                ResumePath::Migration => {}
            }
        }
        Check::Ok
    }

    fn at_end(&mut self, view: &ModelView) -> Check {
        if !quiet(view) {
            return Check::Ok;
        }
        let threshold = view.scenario().run.bounce_threshold;
        if self.relay > threshold || self.timer > threshold {
            return Check::Fail(format!(
                "claim bounces relay={} timer={} in a run without contention exceed the threshold {threshold} (R13)",
                self.relay, self.timer
            ));
        }
        Check::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed_with};
    use crate::ids::{ExecId, InstanceId, OwnerId, ProcessId};
    use crate::scenario::Scenario;
    use crate::store::StoreState;
    use std::cell::RefCell;
    use std::rc::Rc;

    fn view_of(name: &str) -> ModelView {
        let s = Scenario::built_in(name).unwrap();
        ModelView::new(
            Rc::new(crate::ctx::Config { scenario: s.clone(), faults: s.faults.clone() }),
            Rc::new(RefCell::new(StoreState::default())),
        )
    }

    fn bounces(n: u32, path: ResumePath) -> Vec<(u64, ModelEvent)> {
        (0..n)
            .map(|i| {
                (
                    u64::from(i),
                    ModelEvent::ClaimRefused {
                        instance: InstanceId(0),
                        exec: ExecId(i),
                        owner: OwnerId::lane(ProcessId(1), 0),
                        path,
                        holder: OwnerId::lane(ProcessId(1), 1),
                        task: None,
                        delivery: None,
                        process: None,
                    },
                )
            })
            .collect()
    }

    #[test]
    fn the_quiet_scenario_is_quiet_and_the_others_are_not() {
        assert!(quiet(&view_of("quiet")));
        for name in ["smoke", "migration", "misroute"] {
            assert!(!quiet(&view_of(name)), "{name}");
        }
    }

    #[test]
    fn fires_on_a_loud_meter_in_a_quiet_run() {
        assert!(fails(&feed_with(&mut QuietBounceMeter::default(), bounces(3, ResumePath::Relay), &view_of("quiet"))));
        assert!(fails(&feed_with(&mut QuietBounceMeter::default(), bounces(3, ResumePath::Timer), &view_of("quiet"))));
    }

    #[test]
    fn accepts_a_few_bounces_and_any_under_contention() {
        assert_eq!(
            feed_with(&mut QuietBounceMeter::default(), bounces(2, ResumePath::Relay), &view_of("quiet")),
            Check::Ok
        );
        assert_eq!(
            feed_with(&mut QuietBounceMeter::default(), bounces(9, ResumePath::Relay), &view_of("smoke")),
            Check::Ok
        );
        assert_eq!(
            feed_with(&mut QuietBounceMeter::default(), bounces(9, ResumePath::Migration), &view_of("quiet")),
            Check::Ok
        );
    }
}

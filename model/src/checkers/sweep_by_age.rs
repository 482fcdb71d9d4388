//! sweep-by-age (always; R14, R18): the sweeper clears only claims older than the claim
//! timeout by the store's clock, and only while holding the lease.

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::{millis_text, ModelEvent};
use crate::view::ModelView;

/// Stateless: the store reports each sweep with the claim's true age.
#[derive(Default)]
pub struct SweepByAge;

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "sweep-by-age",
        kind: CheckerKind::Always,
        description:
            "the sweeper clears only claims older than the timeout by the store's clock, and only while leased",
        rules: &["R14", "R18"],
        factory: Arc::new(|| Box::new(SweepByAge)),
    }
}

impl Checker<ModelEvent, ModelView> for SweepByAge {
    fn interest(&self) -> u64 {
        sutra_sim_core::tag_mask(&[crate::event::tag::SWEPT])
    }

    fn name(&self) -> &str {
        "sweep-by-age"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, view: &ModelView) -> Check {
        if let ModelEvent::Swept { instance, owner, age_ns, by, lease_held, .. } = &event.kind {
            // Nanoseconds on both sides: the store sweeps at full precision, and an age
            // truncated to milliseconds made a claim 30000.4ms old look 30000ms old.
            let timeout_ns = sutra_sim_core::time::duration_nanos(view.scenario().timeouts.claim_timeout);
            if !lease_held {
                return Check::Fail(format!(
                    "p{} swept instance {}'s claim ({owner}) without holding the lease",
                    by.0, instance.0
                ));
            }
            if *age_ns <= timeout_ns {
                return Check::Fail(format!(
                    "p{} swept instance {}'s claim ({owner}) at age {}, not older than the claim timeout {}",
                    by.0,
                    instance.0,
                    millis_text(*age_ns),
                    millis_text(timeout_ns)
                ));
            }
        }
        Check::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed};
    use crate::ids::{InstanceId, OwnerId, ProcessId};

    fn swept(age_ns: u64, lease_held: bool) -> ModelEvent {
        ModelEvent::Swept {
            instance: InstanceId(0),
            owner: OwnerId::lane(ProcessId(1), 1),
            age_ns,
            by: ProcessId(2),
            lease_held,
            epoch: 1,
            task: None,
        }
    }

    #[test]
    fn sweep_never_clears_a_claim_younger_than_the_timeout() {
        assert!(fails(&feed(&mut SweepByAge, vec![(1, swept(29_000_000_000, true))])));
    }

    #[test]
    fn fires_on_a_sweep_without_the_lease() {
        assert!(fails(&feed(&mut SweepByAge, vec![(1, swept(60_000_000_000, false))])));
    }

    #[test]
    fn a_claim_a_fraction_of_a_millisecond_past_the_timeout_may_be_swept() {
        // The smoke scenario's claim timeout is 30 s: 30000.4 ms is past it, 30000 ms is not.
        assert_eq!(feed(&mut SweepByAge, vec![(1, swept(30_000_400_000, true))]), Check::Ok);
        assert!(fails(&feed(&mut SweepByAge, vec![(1, swept(30_000_000_000, true))])));
    }

    #[test]
    fn accepts_an_old_leased_sweep() {
        assert_eq!(feed(&mut SweepByAge, vec![(1, swept(31_000_000_000, true))]), Check::Ok);
    }
}

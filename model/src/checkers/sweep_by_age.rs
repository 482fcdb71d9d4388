//! sweep-by-age (always; R14, R18): the sweeper clears only claims older than the claim
//! timeout by the store's clock, and only while holding the lease.
//!
//! The age is the checker's own: the store time of the sweep minus the store time of the
//! last grant of the instance it witnessed (a same-owner re-claim renews the age, R21). The
//! `age_ns` the store reports is never read: a sweep whose cutoff was computed from a
//! replica's clock reports whatever age its own bookkeeping believes. The lease condition
//! is the store's own witness (`lease_held`, decided in the sweep's transaction);
//! `lease-exclusive` judges the lease again from the lease grants alone.
//!
//! A real bug that would still pass: a sweeper that never sweeps (a dead replica's claim
//! stays forever) — a liveness failure, left to `eventual-completion`.
//!
//! The grant times are kept for the whole history (a sweep may name any instance) in a
//! [`PagedMap`]: times differ instance by instance, so 8 bytes and a bit each.

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::{millis_text, ModelEvent};
use crate::ids::InstanceId;
use crate::paged::PagedMap;
use crate::view::ModelView;

/// The store time (ns) of the last grant witnessed per instance.
#[derive(Default)]
pub struct SweepByAge {
    granted_ns: PagedMap<InstanceId, u64>,
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "sweep-by-age",
        kind: CheckerKind::Always,
        description:
            "the sweeper clears only claims older than the timeout by the store's clock, and only while leased",
        rules: &["R14", "R18"],
        factory: Arc::new(|| Box::new(SweepByAge::default())),
    }
}

impl Checker<ModelEvent, ModelView> for SweepByAge {
    fn interest(&self) -> u64 {
        sutra_sim_core::tag_mask(&[crate::event::tag::SWEPT, crate::event::tag::CLAIM_GRANTED])
    }

    fn name(&self) -> &str {
        "sweep-by-age"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, view: &ModelView) -> Check {
        let now = event.time.as_nanos();
        match &event.kind {
            ModelEvent::ClaimGranted { instance, .. } => {
                self.granted_ns.insert(*instance, now);
            }
            ModelEvent::Swept { instance, owner, by, lease_held, .. } => {
                if !lease_held {
                    return Check::Fail(format!(
                        "p{} swept instance {}'s claim ({owner}) without holding the lease",
                        by.0, instance.0
                    ));
                }
                let Some(&granted_ns) = self.granted_ns.get(*instance) else {
                    return Check::Fail(format!(
                        "p{} swept instance {}'s claim ({owner}), which the store never granted",
                        by.0, instance.0
                    ));
                };
                // Nanoseconds on both sides: the store sweeps at full precision, and an age
                // truncated to milliseconds made a claim 30000.4ms old look 30000ms old.
                let timeout_ns = sutra_sim_core::time::duration_nanos(view.scenario().timeouts.claim_timeout);
                let age = now.saturating_sub(granted_ns);
                if age <= timeout_ns {
                    return Check::Fail(format!(
                        "p{} swept instance {}'s claim ({owner}) at age {} by the store's clock, not older than the claim timeout {}",
                        by.0,
                        instance.0,
                        millis_text(age),
                        millis_text(timeout_ns)
                    ));
                }
            }
            _ => {}
        }
        Check::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed_at};
    use crate::ids::{ExecId, OwnerId, ProcessId, ResumePath};

    const A: OwnerId = OwnerId(1 << 16 | 2);

    fn grant() -> ModelEvent {
        ModelEvent::ClaimGranted {
            instance: InstanceId(0),
            exec: ExecId(1),
            owner: A,
            process: Some(ProcessId(1)),
            path: ResumePath::Relay,
            previous: None,
            stale_age_ns: None,
            epoch: 1,
            task: None,
        }
    }

    /// A sweep that reports `age_ns` (which the checker must ignore).
    fn swept(age_ns: u64, lease_held: bool) -> ModelEvent {
        ModelEvent::Swept {
            instance: InstanceId(0),
            owner: A,
            age_ns,
            by: ProcessId(2),
            lease_held,
            epoch: 1,
            task: None,
        }
    }

    fn run(history: Vec<(u64, ModelEvent)>) -> Check {
        feed_at(&mut SweepByAge::default(), history)
    }

    #[test]
    fn sweep_never_clears_a_claim_younger_than_the_timeout() {
        assert!(fails(&run(vec![(0, grant()), (29_000_000_000, swept(29_000_000_000, true))])));
    }

    #[test]
    fn the_age_is_the_checkers_not_the_stores() {
        // The store says 31 s; the witnessed grant was 10 s ago.
        assert!(fails(&run(vec![(5_000_000_000, grant()), (15_000_000_000, swept(31_000_000_000, true))])));
    }

    #[test]
    fn a_reentrant_reclaim_renews_the_age() {
        let history = vec![(0, grant()), (20_000_000_000, grant()), (40_000_000_000, swept(40_000_000_000, true))];
        assert!(fails(&run(history)));
    }

    #[test]
    fn fires_on_a_sweep_without_the_lease() {
        assert!(fails(&run(vec![(0, grant()), (60_000_000_000, swept(60_000_000_000, false))])));
    }

    #[test]
    fn fires_on_a_sweep_of_a_claim_never_granted() {
        assert!(fails(&run(vec![(60_000_000_000, swept(60_000_000_000, true))])));
    }

    #[test]
    fn a_claim_a_fraction_of_a_millisecond_past_the_timeout_may_be_swept() {
        // The smoke scenario's claim timeout is 30 s: 30000.4 ms is past it, 30000 ms is not.
        assert_eq!(run(vec![(0, grant()), (30_000_400_000, swept(0, true))]), Check::Ok);
        assert!(fails(&run(vec![(0, grant()), (30_000_000_000, swept(0, true))])));
    }

    #[test]
    fn accepts_an_old_leased_sweep() {
        assert_eq!(run(vec![(0, grant()), (31_000_000_000, swept(0, true))]), Check::Ok);
    }
}

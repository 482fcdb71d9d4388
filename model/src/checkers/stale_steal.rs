//! stale-steal (always; R2, R21): the store grants a claim over a *different* owner only
//! when the old claim is older than the claim timeout by the store's clock.
//!
//! The age is the checker's own: the store time of the grant it witnessed last for the
//! instance (a same-owner re-claim renews the age, R21) subtracted from the store time of
//! the steal. It never reads `stale_age_ns` or any other age a writer computed: a store
//! whose staleness test is inverted, or judged by a replica's clock, reports whatever its
//! bug computed. The old owner is the one the witnesses left on the row (grants set it,
//! every other row write clears it); the grant's own `previous` is consulted as well, so a
//! grant that claims to take a row from an owner the checker never saw is reported too.
//!
//! A real bug that would still pass: a store that refuses claims it should grant (a stale
//! claim never stolen) — that is a liveness failure, left to `eventual-completion`.

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::{millis_text, ModelEvent};
use crate::ids::{InstanceId, OwnerId};
use crate::paged::PagedMap;
use crate::view::ModelView;

/// The checker's state: each instance's claim as the witnesses left it, in two maps — the
/// owners of finished instances are alike (nobody), their grant times are not, and a
/// [`PagedMap`] keeps records alike in a byte an instance.
#[derive(Default)]
pub struct StaleSteal {
    /// The row's owner.
    owners: PagedMap<InstanceId, Option<OwnerId>>,
    /// Store time of the last grant (first or re-entrant), in ns.
    granted_ns: PagedMap<InstanceId, u64>,
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "stale-steal",
        kind: CheckerKind::Always,
        description:
            "a claim is granted over a different owner only when the old claim is older than the timeout by the store's clock",
        rules: &["R2", "R21"],
        factory: Arc::new(|| Box::new(StaleSteal::default())),
    }
}

impl Checker<ModelEvent, ModelView> for StaleSteal {
    fn interest(&self) -> u64 {
        use crate::event::tag;
        sutra_sim_core::tag_mask(&[tag::CLAIM_GRANTED, tag::ROW_WRITTEN])
    }

    fn name(&self) -> &str {
        "stale-steal"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, view: &ModelView) -> Check {
        let now = event.time.as_nanos();
        match &event.kind {
            ModelEvent::ClaimGranted { instance, owner, previous, .. } => {
                let held = self.owners.get(*instance).copied().flatten();
                let old = held.or(*previous).filter(|o| o != owner);
                if let Some(old) = old {
                    let timeout_ns = sutra_sim_core::time::duration_nanos(view.scenario().timeouts.claim_timeout);
                    let Some(&granted_ns) = self.granted_ns.get(*instance).filter(|_| held.is_some()) else {
                        return Check::Fail(format!(
                            "instance {} granted to {owner} over {old}, whose claim the store never granted",
                            instance.0
                        ));
                    };
                    let age = now.saturating_sub(granted_ns);
                    if age <= timeout_ns {
                        return Check::Fail(format!(
                            "instance {} granted to {owner} over {old}, whose claim was {} old by the store's clock, not older than the claim timeout {}",
                            instance.0,
                            millis_text(age),
                            millis_text(timeout_ns)
                        ));
                    }
                }
                self.owners.insert(*instance, Some(*owner));
                self.granted_ns.insert(*instance, now);
            }
            ModelEvent::RowWritten { instance, owner, .. } => {
                // Only grants give a row an owner; every other write clears it.
                self.owners.insert(*instance, *owner);
            }
            _ => {}
        }
        Check::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed};
    use crate::event::{ModelEvent as E, WriteKind};
    use crate::ids::{ExecId, ProcessId, ResumePath};

    fn grant(owner: OwnerId, previous: Option<OwnerId>, stale_age_ns: Option<u64>) -> E {
        E::ClaimGranted {
            instance: InstanceId(0),
            exec: ExecId(1),
            owner,
            process: Some(ProcessId(1)),
            path: ResumePath::Relay,
            previous,
            stale_age_ns,
            epoch: 1,
            task: None,
        }
    }

    const A: OwnerId = OwnerId(1 << 16 | 1);
    const B: OwnerId = OwnerId(2 << 16 | 1);

    #[test]
    fn fires_on_a_steal_of_a_fresh_claim_whatever_age_the_store_reports() {
        // The smoke scenario's claim timeout is 30 s; the claim is 10 s old.
        let history = vec![(1_000, grant(A, None, None)), (11_000, grant(B, Some(A), Some(31_000_000_000)))];
        assert!(fails(&feed(&mut StaleSteal::default(), history)));
    }

    #[test]
    fn a_same_owner_reclaim_renews_the_age() {
        // Taken at 1 s, refreshed at 20 s: at 40 s the claim is 20 s old, not 39 s.
        let history =
            vec![(1_000, grant(A, None, None)), (20_000, grant(A, Some(A), None)), (40_000, grant(B, Some(A), None))];
        assert!(fails(&feed(&mut StaleSteal::default(), history)));
    }

    #[test]
    fn fires_on_a_steal_over_an_owner_never_granted() {
        assert!(fails(&feed(&mut StaleSteal::default(), vec![(1_000, grant(B, Some(A), None))])));
    }

    #[test]
    fn accepts_a_steal_past_the_timeout_and_a_claim_of_a_released_row() {
        let released = E::RowWritten {
            instance: InstanceId(0),
            write: WriteKind::Release,
            by: None,
            writer: Some(B),
            owner: None,
            version: 0,
            epoch: 2,
            parked: false,
        };
        let history = vec![
            (1_000, grant(A, None, None)),
            (31_001, grant(B, Some(A), None)),
            (31_002, released),
            (31_003, grant(A, None, None)),
        ];
        assert_eq!(feed(&mut StaleSteal::default(), history), Check::Ok);
    }

    #[test]
    fn a_claim_exactly_the_timeout_old_is_not_stale() {
        let history = vec![(1_000, grant(A, None, None)), (31_000, grant(B, Some(A), None))];
        assert!(fails(&feed(&mut StaleSteal::default(), history)));
    }
}

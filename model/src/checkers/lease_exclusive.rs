//! lease-exclusive (always; R18): the sweeper lease has one valid holder at a time. A lease
//! goes to a different process only after the previous holder's expiry by the store's
//! clock, and every sweep is made by a process that holds an unexpired lease — by the
//! checker's own bookkeeping of the store's lease grants and renewals (`LeaseAcquired`),
//! never by the sweep's own `lease_held` flag.
//!
//! A lease is valid while the store time is strictly before its `until_ns` (the store's
//! own test is `expiry > now`).
//!
//! Every clear is judged at its own instant: a two-step sweep (select, then clear each
//! id in a statement of its own) whose clears land after the lease expired fails here,
//! however valid the lease was at its select.
//!
//! A real bug that would still pass: a sweeper that acts on the lease outside the store
//! (say, deletes task rows through another service) after its lease lapsed — no store
//! witness shows the act.

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::{millis_text, ModelEvent};
use crate::ids::ProcessId;
use crate::view::ModelView;

/// The checker's state: the lease's holder and expiry, as granted.
#[derive(Default)]
pub struct LeaseExclusive {
    holder: Option<(ProcessId, u64)>,
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "lease-exclusive",
        kind: CheckerKind::Always,
        description: "the sweeper lease has one valid holder at a time, and only a holder sweeps",
        rules: &["R18"],
        factory: Arc::new(|| Box::new(LeaseExclusive::default())),
    }
}

impl Checker<ModelEvent, ModelView> for LeaseExclusive {
    fn interest(&self) -> u64 {
        use crate::event::tag;
        sutra_sim_core::tag_mask(&[tag::LEASE_ACQUIRED, tag::SWEPT])
    }

    fn name(&self) -> &str {
        "lease-exclusive"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, _view: &ModelView) -> Check {
        let now = event.time.as_nanos();
        match &event.kind {
            ModelEvent::LeaseAcquired { process, until_ns, .. } => {
                if let Some((holder, until)) = self.holder {
                    if holder != *process && until > now {
                        return Check::Fail(format!(
                            "the sweeper lease went to p{} at {} while p{} held it until {}",
                            process.0,
                            millis_text(now),
                            holder.0,
                            millis_text(until)
                        ));
                    }
                }
                if *until_ns <= now {
                    return Check::Fail(format!(
                        "the sweeper lease went to p{} at {} with an expiry already past ({})",
                        process.0,
                        millis_text(now),
                        millis_text(*until_ns)
                    ));
                }
                self.holder = Some((*process, *until_ns));
            }
            ModelEvent::Swept { instance, by, .. } => match self.holder {
                Some((holder, until)) if holder == *by && until > now => {}
                Some((holder, until)) => {
                    return Check::Fail(format!(
                        "p{} swept instance {} at {}, but the lease was p{}'s until {}",
                        by.0,
                        instance.0,
                        millis_text(now),
                        holder.0,
                        millis_text(until)
                    ));
                }
                None => {
                    return Check::Fail(format!(
                        "p{} swept instance {} at {}, but nobody was ever granted the lease",
                        by.0,
                        instance.0,
                        millis_text(now)
                    ));
                }
            },
            _ => {}
        }
        Check::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed};
    use crate::ids::{InstanceId, OwnerId};

    const S: u64 = 1_000_000_000;

    fn lease(process: u32, until_s: u64) -> ModelEvent {
        ModelEvent::LeaseAcquired { process: ProcessId(process), until_ns: until_s * S, renewal: false, task: None }
    }

    /// A sweep that claims to hold the lease (which the checker must not believe).
    fn swept(by: u32) -> ModelEvent {
        ModelEvent::Swept {
            instance: InstanceId(0),
            owner: OwnerId(1 << 16 | 1),
            epoch: 1,
            age_ns: 60 * S,
            by: ProcessId(by),
            lease_held: true,
            task: None,
        }
    }

    #[test]
    fn fires_on_a_lease_granted_over_a_live_holder() {
        let history = vec![(1_000, lease(1, 16)), (10_000, lease(2, 25))];
        assert!(fails(&feed(&mut LeaseExclusive::default(), history)));
    }

    #[test]
    fn fires_on_a_sweep_by_a_process_without_the_lease() {
        assert!(fails(&feed(&mut LeaseExclusive::default(), vec![(1_000, swept(1))])));
        let history = vec![(1_000, lease(1, 16)), (2_000, swept(2))];
        assert!(fails(&feed(&mut LeaseExclusive::default(), history)));
    }

    #[test]
    fn fires_on_a_sweep_after_the_lease_expired() {
        let history = vec![(1_000, lease(1, 16)), (16_000, swept(1))];
        assert!(fails(&feed(&mut LeaseExclusive::default(), history)));
    }

    #[test]
    fn accepts_renewals_and_a_handover_after_expiry() {
        let history = vec![
            (1_000, lease(1, 16)),
            (2_000, swept(1)),
            (10_000, lease(1, 25)),
            (20_000, swept(1)),
            (25_000, lease(2, 40)),
            (26_000, swept(2)),
        ];
        assert_eq!(feed(&mut LeaseExclusive::default(), history), Check::Ok);
    }
}

//! refusal-grounds (always; R2, R10): the store refuses a claim only when the row is held
//! by *another* owner whose claim is not older than the claim timeout by the store's clock.
//! R2's predicate is "take it if free, stale or held by the same owner; otherwise match
//! nothing" — and a refusal of a row it should have granted is as much a break of it as a
//! grant it should have refused (`stale-steal` judges those): a free row refused, a stale
//! claim refused (nobody can resume the instance until the sweeper passes), or an owner's
//! own re-claim refused (R10: the re-claim that resolves a lost reply, the exit path of an
//! aborted execution — refused, the lane gives the trigger back and leaves its own claim
//! on the row for the sweeper).
//!
//! The row is the checker's own reading of the witnesses, as `stale-steal` keeps it: a
//! grant gives the row its owner and its age (a same-owner re-claim renews it, R21), every
//! other row write sets the owner it reports; an instance the history never started or
//! wrote is not judged. The refusal's own `holder` is not believed: a store with a wrong
//! predicate names whatever its bug found.
//!
//! A real bug that would still pass: a store that answers "refused" without witnessing the
//! refusal (a claim that times out on the client side every time) — no `claim-refused` is
//! written to judge; `eventual-completion` sees the instance stall.

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::{millis_text, ModelEvent};
use crate::ids::{InstanceId, OwnerId};
use crate::paged::PagedMap;
use crate::view::ModelView;

/// One instance's claim as the witnesses left it.
#[derive(Clone, Copy, Debug, Default)]
struct Row {
    owner: Option<OwnerId>,
    /// Store time of the last grant (first or re-entrant), in ns.
    granted_ns: u64,
}

/// The checker's state: the rows it has seen, in two maps — the owners of finished
/// instances are alike (nobody), their grant times are not, and a [`PagedMap`] keeps
/// records alike in a byte an instance.
#[derive(Default)]
pub struct RefusalGrounds {
    /// The row's owner; an instance without one was never started or written.
    owners: PagedMap<InstanceId, Option<OwnerId>>,
    /// Store time of the last grant (first or re-entrant), in ns; absent: 0.
    granted_ns: PagedMap<InstanceId, u64>,
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "refusal-grounds",
        kind: CheckerKind::Always,
        description:
            "a claim is refused only over another owner's claim younger than the timeout: never a free row, a stale claim or the owner's own re-claim",
        rules: &["R2", "R10"],
        factory: Arc::new(|| Box::new(RefusalGrounds::default())),
    }
}

impl Checker<ModelEvent, ModelView> for RefusalGrounds {
    fn interest(&self) -> u64 {
        use crate::event::tag;
        sutra_sim_core::tag_mask(&[tag::INSTANCE_STARTED, tag::CLAIM_GRANTED, tag::CLAIM_REFUSED, tag::ROW_WRITTEN])
    }

    fn name(&self) -> &str {
        "refusal-grounds"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, view: &ModelView) -> Check {
        let now = event.time.as_nanos();
        match &event.kind {
            ModelEvent::InstanceStarted { instance, .. } => {
                self.owners.insert(*instance, None);
                self.granted_ns.remove(*instance);
            }
            ModelEvent::ClaimGranted { instance, owner, .. } => {
                self.owners.insert(*instance, Some(*owner));
                self.granted_ns.insert(*instance, now);
            }
            ModelEvent::RowWritten { instance, owner, .. } => {
                self.owners.insert(*instance, *owner);
            }
            ModelEvent::ClaimRefused { instance, owner, exec, .. } => {
                let Some(&owner_now) = self.owners.get(*instance) else { return Check::Ok };
                let granted_ns = self.granted_ns.get(*instance).copied().unwrap_or(0);
                let row = Row { owner: owner_now, granted_ns };
                let timeout_ns = sutra_sim_core::time::duration_nanos(view.scenario().timeouts.claim_timeout);
                return judge(*instance, exec.0, *owner, row, now, timeout_ns);
            }
            _ => {}
        }
        Check::Ok
    }
}

/// A refusal of `claimant`'s claim on `instance` at `now`, over `row` as witnessed.
fn judge(instance: InstanceId, exec: u32, claimant: OwnerId, row: Row, now: u64, timeout_ns: u64) -> Check {
    let Some(holder) = row.owner else {
        return Check::Fail(format!(
            "the store refused execution {exec}'s claim on instance {} though the row was free: R2 takes a free row",
            instance.0
        ));
    };
    if holder == claimant {
        return Check::Fail(format!(
            "the store refused {claimant}'s re-claim of instance {} (execution {exec}), which it already held: a re-claim by the same owner is granted (R10)",
            instance.0
        ));
    }
    let age = now.saturating_sub(row.granted_ns);
    if age > timeout_ns {
        return Check::Fail(format!(
            "the store refused execution {exec}'s claim on instance {} over {holder}'s claim, {} old by the store's clock — older than the claim timeout {}: R2 takes a stale row",
            instance.0,
            millis_text(age),
            millis_text(timeout_ns)
        ));
    }
    Check::Ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed};
    use crate::event::{ModelEvent as E, WriteKind};
    use crate::ids::{ExecId, ProcessId, ResumePath};

    fn a() -> OwnerId {
        OwnerId::lane(ProcessId(1), 0)
    }

    fn b() -> OwnerId {
        OwnerId::lane(ProcessId(2), 0)
    }

    fn started() -> E {
        E::InstanceStarted { instance: InstanceId(0), steps: 2 }
    }

    fn grant(owner: OwnerId) -> E {
        E::ClaimGranted {
            instance: InstanceId(0),
            exec: ExecId(1),
            owner,
            process: None,
            path: ResumePath::Relay,
            previous: None,
            stale_age_ns: None,
            epoch: 1,
            task: None,
        }
    }

    fn row(owner: Option<OwnerId>) -> E {
        E::RowWritten {
            instance: InstanceId(0),
            write: if owner.is_some() { WriteKind::Claim } else { WriteKind::Release },
            by: None,
            writer: None,
            owner,
            version: 0,
            epoch: 1,
            parked: false,
        }
    }

    /// The store refusing `owner`, naming `holder` (whatever its bug found).
    fn refused(owner: OwnerId, holder: OwnerId) -> E {
        E::ClaimRefused {
            instance: InstanceId(0),
            exec: ExecId(2),
            owner,
            path: ResumePath::Relay,
            holder,
            task: None,
            process: None,
            delivery: None,
        }
    }

    #[test]
    fn fires_on_a_free_row_refused() {
        assert!(fails(&feed(&mut RefusalGrounds::default(), vec![(0, started()), (5, refused(a(), b()))])));
        let released =
            vec![(0, started()), (1, grant(b())), (1, row(Some(b()))), (2, row(None)), (5, refused(a(), b()))];
        assert!(fails(&feed(&mut RefusalGrounds::default(), released)));
    }

    #[test]
    fn fires_on_the_owner_s_own_re_claim_refused() {
        let h = vec![(0, started()), (1, grant(a())), (1, row(Some(a()))), (5, refused(a(), a()))];
        assert!(fails(&feed(&mut RefusalGrounds::default(), h)));
    }

    #[test]
    fn fires_on_a_stale_claim_refused_and_accepts_one_at_the_timeout() {
        // smoke: claim timeout 30 s.
        let stale = vec![(0, started()), (1, grant(b())), (1, row(Some(b()))), (30_002, refused(a(), b()))];
        assert!(fails(&feed(&mut RefusalGrounds::default(), stale)));
        let at_timeout = vec![(0, started()), (1, grant(b())), (1, row(Some(b()))), (30_001, refused(a(), b()))];
        assert_eq!(feed(&mut RefusalGrounds::default(), at_timeout), Check::Ok);
    }

    #[test]
    fn a_refusal_over_another_owner_s_fresh_claim_is_grounded() {
        let h = vec![(0, started()), (1, grant(b())), (1, row(Some(b()))), (20_000, refused(a(), b()))];
        assert_eq!(feed(&mut RefusalGrounds::default(), h), Check::Ok);
        // A same-owner re-claim renews the age (R21).
        let renewed = vec![
            (0, started()),
            (1, grant(b())),
            (1, row(Some(b()))),
            (20_000, grant(b())),
            (20_000, row(Some(b()))),
            (40_000, refused(a(), b())),
        ];
        assert_eq!(feed(&mut RefusalGrounds::default(), renewed), Check::Ok);
        // An instance the history never showed is not judged.
        assert_eq!(feed(&mut RefusalGrounds::default(), vec![(5, refused(a(), b()))]), Check::Ok);
    }
}

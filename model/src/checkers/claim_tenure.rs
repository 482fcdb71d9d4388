//! claim-tenure (always; R24): no owner keeps an instance's claim alive, without a break,
//! for longer than any step the scenario runs can justify. Spec 000 opens with the two
//! things that must never happen to an instance; the second is "a worker holding it
//! forever". The claim timeout is what guarantees it: a claim nobody renews goes stale, and
//! the compare-and-set (R2) and the sweep (R18) may take it. A design that renews the claim
//! while a step runs (the mid-step heartbeat spec 000's "Heartbeats" section argues
//! against) keeps a hung step's instance for as long as the step hangs.
//!
//! From store witnesses only: a claim's tenure starts at a grant (`claim-granted`) and
//! lasts while the claim is *alive* — each same-owner re-claim (a grant to the owner the
//! row already shows) renews it (R21) — until a row write leaves the row to another owner
//! or to none (`row-written`: a commit that releases, a release, a sweep, a migration's
//! write, a grant to someone else). A claim not renewed within the claim timeout went stale
//! at its last grant plus the timeout: from then on any claimant may take it, so it no
//! longer keeps anyone out, and a later re-claim by its owner starts a new tenure. The
//! tenure is judged at each renewal and at the write that ends it, by the store's clock,
//! against [`Scenario::claim_tenure_bound`] (derived in `work_bounds.rs`: the longest step
//! the scenario runs, and the claim timeout past each of the re-claims spec 000's runtime
//! sends while it has no answer to its claim). It reads the claim timeout, step spans and
//! fault options from the scenario (a history's `scenario_toml`) and nothing a writer
//! computed.
//!
//! **What it forgets.** An instance's tenure is dropped at the write that ends it (the row
//! left to another owner or to none): no record is kept for a row nobody holds, which
//! reads exactly as a row never claimed (a grant starts a tenure, a write ends nothing).
//! So a long history holds a tenure per row still owned — the live world's claims, and a
//! claim left on a row by an owner that died holding it (it goes stale, but "stale" is
//! judged by the store's clock at the next witness, so it is kept: a few per run).
//!
//! A real bug that would still pass: a hold kept alive just under the bound, again and
//! again with a release between (each tenure is short); a starved instance is
//! `eventual-completion`'s to see.

use std::sync::Arc;

use sutra_sim_core::time::duration_nanos;
use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::dense::DenseMap;
use crate::event::{millis_text, ModelEvent};
use crate::ids::{InstanceId, OwnerId};
use crate::scenario::Scenario;
use crate::view::ModelView;

/// One instance's claim tenure, as the store's witnesses show it.
#[derive(Clone, Copy, Debug)]
struct Tenure {
    owner: OwnerId,
    /// Store time (ns) of the grant that started it.
    since_ns: u64,
    /// Store time (ns) of its last grant (the first, or a renewal).
    renewed_ns: u64,
}

/// The checker's state: the tenure of every instance whose row shows an owner (none kept
/// for a row left to no one or to an owner not granted it).
#[derive(Default)]
pub struct ClaimTenure {
    tenures: DenseMap<InstanceId, Tenure>,
}

impl ClaimTenure {
    /// Tenures held: what the checker's memory follows.
    pub fn held(&self) -> usize {
        self.tenures.len()
    }
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "claim-tenure",
        kind: CheckerKind::Always,
        description: "no owner keeps a claim alive without a break for longer than the longest step and the claim timeouts of its re-claims",
        rules: &["R24"],
        factory: Arc::new(|| Box::new(ClaimTenure::default())),
    }
}

impl Checker<ModelEvent, ModelView> for ClaimTenure {
    fn interest(&self) -> u64 {
        use crate::event::tag;
        sutra_sim_core::tag_mask(&[tag::CLAIM_GRANTED, tag::ROW_WRITTEN])
    }

    fn name(&self) -> &str {
        "claim-tenure"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, view: &ModelView) -> Check {
        let now = event.time.as_nanos();
        let scenario = view.scenario();
        let timeout = duration_nanos(scenario.timeouts.claim_timeout);
        match &event.kind {
            ModelEvent::ClaimGranted { instance, owner, .. } => {
                if let Some(t) = self.tenures.get_mut(*instance) {
                    if t.owner == *owner && now.saturating_sub(t.renewed_ns) <= timeout {
                        t.renewed_ns = now;
                        let t = *t;
                        return judge(*instance, t, now, "renewed", scenario);
                    }
                }
                self.tenures.insert(*instance, Tenure { owner: *owner, since_ns: now, renewed_ns: now });
            }
            ModelEvent::RowWritten { instance, owner, .. } => {
                if let Some(&t) = self.tenures.get(*instance) {
                    if *owner != Some(t.owner) {
                        self.tenures.remove(*instance);
                        if now.saturating_sub(t.renewed_ns) <= timeout {
                            return judge(*instance, t, now, "let go", scenario);
                        }
                    }
                }
            }
            _ => {}
        }
        Check::Ok
    }
}

/// Fails if `tenure`, still alive at `now`, has lasted longer than the scenario's bound.
fn judge(instance: InstanceId, tenure: Tenure, now: u64, what: &str, scenario: &Scenario) -> Check {
    let bound = duration_nanos(scenario.claim_tenure_bound());
    let held = now.saturating_sub(tenure.since_ns);
    if held <= bound {
        return Check::Ok;
    }
    Check::Fail(format!(
        "instance {} was held by {} without a break for {} (granted at {}, {what} at {}), longer than the claim-tenure bound {} (the longest step {} and the claim timeout {} past each of {} grants): a claim kept alive past any step the scenario runs",
        instance.0,
        tenure.owner,
        millis_text(held),
        millis_text(tenure.since_ns),
        millis_text(now),
        millis_text(bound),
        millis_text(duration_nanos(scenario.longest_step())),
        millis_text(duration_nanos(scenario.timeouts.claim_timeout)),
        crate::work_bounds::TENURE_GRANTS_MAX
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed};
    use crate::event::{ModelEvent as E, WriteKind};
    use crate::ids::{ExecId, ProcessId, ResumePath};

    const A: OwnerId = OwnerId(1 << 16 | 1);
    const B: OwnerId = OwnerId(2 << 16 | 1);

    fn grant(owner: OwnerId) -> E {
        E::ClaimGranted {
            instance: InstanceId(0),
            exec: ExecId(1),
            owner,
            process: Some(ProcessId(1)),
            path: ResumePath::Relay,
            previous: None,
            stale_age_ns: None,
            epoch: 1,
            task: None,
        }
    }

    fn written(write: WriteKind, owner: Option<OwnerId>) -> E {
        E::RowWritten {
            instance: InstanceId(0),
            write,
            by: None,
            writer: None,
            owner,
            version: 0,
            epoch: 1,
            parked: false,
        }
    }

    /// The smoke scenario's bound, in ms: a slow step of twice the 30 s claim timeout, and
    /// 49 claim timeouts.
    fn bound_ms() -> u64 {
        let smoke = Scenario::built_in("smoke").unwrap();
        assert_eq!(smoke.claim_tenure_bound(), std::time::Duration::from_millis(60_000 + 49 * 30_000));
        60_000 + 49 * 30_000
    }

    /// A grant at 0 renewed every 10 s (a third of the claim timeout) up to `until_ms`.
    fn heartbeat(until_ms: u64) -> Vec<(u64, E)> {
        (0..=until_ms / 10_000).map(|k| (k * 10_000, grant(A))).collect()
    }

    #[test]
    fn fires_on_a_claim_renewed_past_the_bound() {
        let check = feed(&mut ClaimTenure::default(), heartbeat(bound_ms() + 10_000));
        assert!(fails(&check), "{check:?}");
        let Check::Fail(message) = check else { unreachable!() };
        assert!(message.contains("without a break for 1540000ms"), "{message}");
    }

    #[test]
    fn fires_when_a_claim_kept_alive_past_the_bound_is_let_go() {
        let mut history = heartbeat(bound_ms() - 200);
        history.push((bound_ms() + 1, written(WriteKind::Commit, None)));
        assert!(fails(&feed(&mut ClaimTenure::default(), history)));
    }

    #[test]
    fn a_claim_renewed_up_to_the_bound_passes() {
        let mut history = heartbeat(bound_ms() - 200);
        history.push((bound_ms(), written(WriteKind::Release, None)));
        assert_eq!(feed(&mut ClaimTenure::default(), history), Check::Ok);
    }

    #[test]
    fn a_stale_claim_is_no_longer_held_and_a_later_reclaim_starts_a_new_tenure() {
        // Renewals 31 s apart: each found the claim stale, so no tenure outlasts 31 s.
        let history: Vec<(u64, E)> = (0..100).map(|k| (k * 31_000, grant(A))).collect();
        assert_eq!(feed(&mut ClaimTenure::default(), history), Check::Ok);
        // A stale claim released long after its grant was not held all that while.
        let history = vec![(0, grant(A)), (bound_ms() + 1, written(WriteKind::Release, None))];
        assert_eq!(feed(&mut ClaimTenure::default(), history), Check::Ok);
    }

    #[test]
    fn a_release_or_another_owner_ends_the_tenure() {
        let mut history = heartbeat(bound_ms() / 2);
        history.push((bound_ms() / 2 + 1, written(WriteKind::Release, None)));
        history.extend(heartbeat(bound_ms() / 2).into_iter().map(|(t, e)| (t + bound_ms() / 2 + 2, e)));
        assert_eq!(feed(&mut ClaimTenure::default(), history), Check::Ok);
        // Another owner's grant over a stale claim ends A's tenure; B's starts afresh.
        let history = vec![
            (0, grant(A)),
            (31_000, grant(B)),
            (31_000, written(WriteKind::Claim, Some(B))),
            (bound_ms(), grant(A)),
        ];
        assert_eq!(feed(&mut ClaimTenure::default(), history), Check::Ok);
    }

    #[test]
    fn a_commit_that_keeps_the_claim_does_not_end_the_tenure() {
        let mut history = heartbeat(bound_ms() / 2);
        history.push((bound_ms() / 2 + 1, written(WriteKind::Commit, Some(A))));
        history.extend(heartbeat(bound_ms()).into_iter().skip(1).map(|(t, e)| (t + bound_ms() / 2 + 2, e)));
        assert!(fails(&feed(&mut ClaimTenure::default(), history)));
    }

    /// Instances `0..n`, each granted to A at `i` s, renewed, then committed and released.
    fn finished_instances(n: u32) -> Vec<(u64, E)> {
        let at = |instance: u32, event: E| match event {
            E::ClaimGranted { exec, owner, process, path, previous, stale_age_ns, epoch, task, .. } => {
                E::ClaimGranted {
                    instance: InstanceId(instance),
                    exec,
                    owner,
                    process,
                    path,
                    previous,
                    stale_age_ns,
                    epoch,
                    task,
                }
            }
            E::RowWritten { write, by, writer, owner, version, epoch, parked, .. } => {
                E::RowWritten { instance: InstanceId(instance), write, by, writer, owner, version, epoch, parked }
            }
            other => other,
        };
        (0..n)
            .flat_map(|i| {
                let t = u64::from(i) * 1_000;
                [
                    (t, at(i, grant(A))),
                    (t + 10, at(i, grant(A))),
                    (t + 20, at(i, written(WriteKind::Commit, Some(A)))),
                    (t + 30, at(i, written(WriteKind::Release, None))),
                ]
            })
            .collect()
    }

    #[test]
    fn books_stay_small_over_thousands_of_released_claims() {
        let mut checker = ClaimTenure::default();
        assert_eq!(feed(&mut checker, finished_instances(5_000)), Check::Ok);
        assert_eq!(checker.held(), 0);
    }

    #[test]
    fn a_forgotten_instance_granted_again_and_kept_past_the_bound_still_fails() {
        // Instance 0 was released long ago and forgotten: a later claim held too long fails.
        let mut history = finished_instances(5_000);
        let start = 5_000 * 1_000;
        history.extend(heartbeat(bound_ms() + 10_000).into_iter().map(|(t, e)| (start + t, e)));
        assert!(fails(&feed(&mut ClaimTenure::default(), history)));
    }
}

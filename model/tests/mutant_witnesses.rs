//! Each new mutant produces the witnessed fact its expected checker judges.
//!
//! Several mutants of issue #12 are expected to be caught by checkers written beside this
//! work (`one-trigger-one-step`, `stale-steal`, `refusal-contract` rewritten on broker
//! witnesses, `no-double-resume` on epochs, `bindings-consistent`). These tests do not
//! stand in for them: each runs a small *probe* — a user checker reading only witness
//! events and the read-only view, as the real checker must — that fires on exactly the
//! fact the mutant breaks, and shows (a) the mutant produces that fact within a seed
//! budget, (b) the correct model never does over the same seeds. The kill by the real
//! checker is `tests/mutants.rs`'s job once it is registered.

use std::collections::BTreeMap;

use sutra_sim_core::{Check, Checker, CheckerKind, Event, SimTime};
use sutra_sim_model::event::TriggerRef;
use sutra_sim_model::ids::{InstanceId, MessageId};
use sutra_sim_model::{run_with, ModelEvent, ModelView, Mutant, RunOptions, Scenario};

/// Seeds per built-in scenario a probe gets to see its fact.
const SEEDS_PER_SCENARIO: u64 = 60;

/// A user checker judging each event with a closure over its own state.
struct Probe<S> {
    state: S,
    judge: fn(&mut S, &Event<ModelEvent>, &ModelView) -> Option<String>,
}

impl<S: 'static> Checker<ModelEvent, ModelView> for Probe<S> {
    fn name(&self) -> &str {
        "probe"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, view: &ModelView) -> Check {
        (self.judge)(&mut self.state, event, view).map_or(Check::Ok, Check::Fail)
    }
}

/// The first (scenario, seed, message) where the probe fires with `mutant` on.
fn first_fire<S: Default + 'static>(
    mutant: Option<Mutant>,
    judge: fn(&mut S, &Event<ModelEvent>, &ModelView) -> Option<String>,
) -> Option<(String, u64, String)> {
    for scenario in Scenario::all_built_in() {
        for seed in 0..SEEDS_PER_SCENARIO {
            let mut options = RunOptions::seeded(seed);
            options.mutant = mutant;
            let probe: Box<dyn Checker<ModelEvent, ModelView>> = Box::new(Probe { state: S::default(), judge });
            let out = run_with(&scenario, &options, vec![probe]);
            if out.verdict.checker() == Some("probe") {
                return Some((scenario.name.clone(), seed, out.verdict.message()));
            }
        }
    }
    None
}

/// The probe fires on `mutant` and never on the correct model.
fn assert_witnessed<S: Default + 'static>(
    mutant: Mutant,
    judge: fn(&mut S, &Event<ModelEvent>, &ModelView) -> Option<String>,
) {
    let found = first_fire(Some(mutant), judge);
    assert!(found.is_some(), "{} never produced its witnessed fact", mutant.name());
    println!("{}: {:?}", mutant.name(), found);
    let clean = first_fire(None, judge);
    assert!(clean.is_none(), "the probe for {} fires on the correct model: {clean:?}", mutant.name());
}

/// R25 (`one-trigger-one-step`): an accepted commit names a trigger issued for its step.
#[derive(Default)]
struct Triggers {
    published: BTreeMap<MessageId, u32>,
}

fn trigger_for_another_step(s: &mut Triggers, e: &Event<ModelEvent>, _: &ModelView) -> Option<String> {
    match &e.kind {
        ModelEvent::RelayPublished { message, step, .. } => {
            s.published.insert(*message, *step);
            None
        }
        ModelEvent::CommitAccepted { instance, trigger, based_on, version_after, .. } => match trigger {
            TriggerRef::Message(m) => {
                s.published.get(m).filter(|step| u64::from(**step) != *version_after).map(|step| {
                    format!(
                        "instance {}: step {version_after} committed under relay {} issued for step {step}",
                        instance.0, m.0
                    )
                })
            }
            TriggerRef::TimerRow { expects } => (expects != based_on).then(|| {
                format!("instance {}: commit based on {based_on} under a timer row for {expects}", instance.0)
            }),
        },
        _ => None,
    }
}

#[test]
fn duplicate_advances_step_commits_a_step_under_a_trigger_issued_for_another() {
    assert_witnessed(Mutant::DuplicateAdvancesStep, trigger_for_another_step);
}

/// R9/R21 (`no-double-resume` on epochs): a release that matched names the current epoch.
fn release_under_an_old_epoch(_: &mut (), e: &Event<ModelEvent>, _: &ModelView) -> Option<String> {
    match &e.kind {
        ModelEvent::Released { instance, epoch, current_epoch, released: true, .. } if epoch != current_epoch => {
            Some(format!("instance {}: a release under epoch {epoch} cleared epoch {current_epoch}", instance.0))
        }
        _ => None,
    }
}

#[test]
fn release_in_spawned_task_clears_a_newer_claim_of_the_same_lane() {
    assert_witnessed(Mutant::ReleaseInSpawnedTask, release_under_an_old_epoch);
}

/// R2 (`stale-steal`): a grant over another owner only once the old claim is older than the
/// claim timeout, by the store times of the grants witnessed.
#[derive(Default)]
struct Grants {
    granted_at: BTreeMap<InstanceId, SimTime>,
}

fn steal_of_a_fresh_claim(s: &mut Grants, e: &Event<ModelEvent>, view: &ModelView) -> Option<String> {
    let ModelEvent::ClaimGranted { instance, owner, previous, .. } = &e.kind else { return None };
    let before = s.granted_at.insert(*instance, e.time);
    let (Some(previous), Some(at)) = (previous, before) else { return None };
    let age = e.time.since(at);
    (previous != owner && age <= view.scenario().timeouts.claim_timeout)
        .then(|| format!("instance {}: {owner} took {previous}'s claim aged {age:?} by the store's clock", instance.0))
}

#[test]
fn client_clock_staleness_steals_a_claim_younger_than_the_timeout() {
    assert_witnessed(Mutant::ClientClockStaleness, steal_of_a_fresh_claim);
}

/// R3/R4 (`refusal-contract`): a relay is acked only once its step is committed.
#[derive(Default)]
struct Acks {
    published: BTreeMap<MessageId, u32>,
}

fn ack_of_an_unfinished_step(s: &mut Acks, e: &Event<ModelEvent>, view: &ModelView) -> Option<String> {
    match &e.kind {
        ModelEvent::RelayPublished { message, step, .. } => {
            s.published.insert(*message, *step);
            None
        }
        ModelEvent::RelayAcked { instance, message, .. } => {
            let step = *s.published.get(message)?;
            let version = view.version(*instance)?;
            (version < u64::from(step)).then(|| {
                format!("instance {}: relay {} for step {step} acked at version {version}", instance.0, message.0)
            })
        }
        _ => None,
    }
}

#[test]
fn refused_relay_republished_acks_a_relay_whose_step_did_not_commit() {
    assert_witnessed(Mutant::RefusedRelayRepublished, ack_of_an_unfinished_step);
}

/// L9 (`bindings-consistent`): the binding table keeps its invariant after every turn.
fn table_inconsistent_after_a_turn(_: &mut (), e: &Event<ModelEvent>, view: &ModelView) -> Option<String> {
    use sutra_sim_model::event::{Component, LaneAction};
    match &e.kind {
        ModelEvent::Lane { process, component: Component::Bindings, action: LaneAction::TurnEnded(_), .. } => {
            (view.binding_table_consistent(*process) == Some(false))
                .then(|| format!("p{}: per-lane counts disagree with the tickets after a turn", process.0))
        }
        _ => None,
    }
}

#[test]
fn per_lane_count_second_turn_ends_a_turn_with_the_table_inconsistent() {
    assert_witnessed(Mutant::PerLaneCountSecondTurn, table_inconsistent_after_a_turn);
}

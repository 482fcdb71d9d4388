//! refusal-contract (always; R3–R7): every refused claim is answered with its structured
//! code and the right reaction — a relay requeued, a timer fire deferred with capped
//! exponential backoff, a migration answered 409 having read and written nothing — and no
//! resume path waits on a held claim (no second attempt by the refused execution).

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::dense::{DenseMap, DenseSet};
use crate::event::{ModelEvent, Reaction};
use crate::ids::{Code, ExecId, ResumePath};
use crate::view::ModelView;

/// Executions refused and not yet answered, and those that were refused at all.
#[derive(Default)]
pub struct RefusalContract {
    awaiting_reaction: DenseMap<ExecId, ResumePath>,
    refused: DenseSet<ExecId>,
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "refusal-contract",
        kind: CheckerKind::Always,
        description: "refusals carry their code and reaction (requeue, backoff, 409 touching nothing); nobody waits on a held claim",
        rules: &["R3", "R4", "R5", "R6", "R7"],
        factory: Arc::new(|| Box::new(RefusalContract::default())),
    }
}

impl Checker<ModelEvent, ModelView> for RefusalContract {
    fn interest(&self) -> u64 {
        use crate::event::tag::*;
        // Everything a refused execution could go on to do without its reaction, too.
        sutra_sim_core::tag_mask(&[
            CLAIM_REFUSED,
            CLAIM_ATTEMPT,
            REFUSAL,
            REHYDRATED,
            ROW_WRITTEN,
            STEP_STARTED,
            EXECUTION_ENDED,
        ])
    }

    fn name(&self) -> &str {
        "refusal-contract"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, view: &ModelView) -> Check {
        match &event.kind {
            ModelEvent::ClaimRefused { exec, path, .. } => {
                self.awaiting_reaction.insert(*exec, *path);
                self.refused.insert(*exec);
            }
            ModelEvent::ClaimAttempt { exec, instance, .. } if self.refused.contains(*exec) => {
                return Check::Fail(format!(
                    "execution {} tried the claim on instance {} again after a refusal: it waited on a held claim (R3)",
                    exec.0, instance.0
                ));
            }
            ModelEvent::Refusal { exec, instance, path, code, reaction } => {
                if self.awaiting_reaction.remove(*exec).is_none() {
                    return Check::Fail(format!("execution {} reported a refusal it never received", exec.0));
                }
                let expected_code =
                    if *path == ResumePath::Migration { Code::MigrateClaimHeld } else { Code::ResumeClaimHeld };
                if *code != expected_code {
                    return Check::Fail(format!(
                        "refusal of execution {} carries {} instead of {}",
                        exec.0,
                        code.as_str(),
                        expected_code.as_str()
                    ));
                }
                let t = &view.scenario().timeouts;
                let ok = match (path, reaction) {
                    (ResumePath::Relay | ResumePath::PullCompletion, Reaction::Requeued) => true,
                    (ResumePath::Migration, Reaction::Conflict409) => true,
                    (ResumePath::Timer, Reaction::Deferred { attempt, backoff_ns }) => {
                        let least = least_backoff(t.timer_backoff_base, t.timer_backoff_max, (*attempt).max(1));
                        if u128::from(*backoff_ns) < least.as_nanos() {
                            return Check::Fail(format!(
                                "timer fire of instance {} refused {attempt} time(s) was deferred by {}, below the backoff {} (R5)",
                                instance.0,
                                crate::event::millis_text(*backoff_ns),
                                crate::event::millis_text(sutra_sim_core::time::duration_nanos(least))
                            ));
                        }
                        true
                    }
                    _ => false,
                };
                if !ok {
                    return Check::Fail(format!(
                        "refused {path:?} of instance {} answered with {reaction:?}",
                        instance.0
                    ));
                }
            }
            other => {
                if let Some(exec) = other.exec() {
                    if let Some(path) = self.awaiting_reaction.get(exec) {
                        let touched = matches!(
                            other,
                            ModelEvent::Rehydrated { .. }
                                | ModelEvent::RowWritten { .. }
                                | ModelEvent::StepStarted { .. }
                        );
                        if touched || matches!(other, ModelEvent::ExecutionEnded { .. }) {
                            return Check::Fail(format!(
                                "execution {} was refused on the {path:?} path and went on to {} without its reaction",
                                exec.0,
                                sutra_sim_core::EventKind::name(other)
                            ));
                        }
                    }
                }
            }
        }
        Check::Ok
    }
}

/// The least deferral R5 allows after `attempt` refusals: capped exponential backoff,
/// `base` doubled for every refusal after the first, never above `cap`. The checker's own
/// reading of the spec's parameters — not the model's formula, which it judges.
fn least_backoff(base: std::time::Duration, cap: std::time::Duration, attempt: u32) -> std::time::Duration {
    let mut least = base.min(cap);
    for _ in 1..attempt {
        if least >= cap {
            break;
        }
        least = least.saturating_mul(2).min(cap);
    }
    least
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed};
    use crate::ids::{InstanceId, OwnerId, ProcessId};

    fn refused(path: ResumePath) -> ModelEvent {
        ModelEvent::ClaimRefused {
            instance: InstanceId(0),
            exec: ExecId(1),
            owner: OwnerId::lane(ProcessId(1), 0),
            path,
            holder: OwnerId::lane(ProcessId(2), 0),
            task: None,
        }
    }

    fn reaction(path: ResumePath, code: Code, reaction: Reaction) -> ModelEvent {
        ModelEvent::Refusal { instance: InstanceId(0), exec: ExecId(1), path, code, reaction }
    }

    #[test]
    fn fires_on_a_retry_in_place() {
        let again = ModelEvent::ClaimAttempt {
            instance: InstanceId(0),
            exec: ExecId(1),
            owner: OwnerId::lane(ProcessId(1), 0),
            path: ResumePath::Relay,
        };
        assert!(fails(&feed(&mut RefusalContract::default(), vec![(1, refused(ResumePath::Relay)), (2, again)])));
    }

    #[test]
    fn fires_on_a_deferral_without_backoff() {
        let h = vec![
            (1, refused(ResumePath::Timer)),
            (2, reaction(ResumePath::Timer, Code::ResumeClaimHeld, Reaction::Deferred { attempt: 3, backoff_ns: 0 })),
        ];
        assert!(fails(&feed(&mut RefusalContract::default(), h)));
    }

    #[test]
    fn fires_on_a_409_that_read_the_row() {
        let read = ModelEvent::Rehydrated { instance: InstanceId(0), exec: ExecId(1), version: 0 };
        assert!(fails(&feed(&mut RefusalContract::default(), vec![(1, refused(ResumePath::Migration)), (2, read)])));
    }

    #[test]
    fn fires_on_the_wrong_code() {
        let h = vec![
            (1, refused(ResumePath::Relay)),
            (2, reaction(ResumePath::Relay, Code::StepFailed, Reaction::Requeued)),
        ];
        assert!(fails(&feed(&mut RefusalContract::default(), h)));
    }

    #[test]
    fn accepts_the_three_right_reactions() {
        for (path, code, r) in [
            (ResumePath::Relay, Code::ResumeClaimHeld, Reaction::Requeued),
            (ResumePath::Timer, Code::ResumeClaimHeld, Reaction::Deferred { attempt: 2, backoff_ns: 200_000_000 }),
            (ResumePath::Migration, Code::MigrateClaimHeld, Reaction::Conflict409),
        ] {
            assert_eq!(
                feed(&mut RefusalContract::default(), vec![(1, refused(path)), (2, reaction(path, code, r))]),
                Check::Ok
            );
        }
    }
}

//! The relay path's error mapping (R7): what the consumer tells the broker for a delivery
//! whose execution did not consume it, by the structured code it ended with. A refusal's
//! `SUTRA.RUNTIME.RESUME.CLAIM_HELD` means "you lost a race, try again": the delivery goes
//! back to the queue (R4). Only a code that means "this will never work" may send a
//! delivery to the dead-letter queue — and none of this model's codes does: its step
//! failures (validation included) are drawn transients that a later attempt gets past, so
//! every code that can end a relay's execution is requeued. (The admin surface's
//! `SUTRA.ADMIN.MIGRATE.VALIDATION` does mean "never"; it never ends a relay's execution.)
//! `refusal-contract` judges the mapping by what the broker then does with a refused copy.
//!
//! This is where a runtime turns codes into broker actions, so it is where the careless
//! mapping lives: `claim-held-dead-lettered` keeps a list of retryable step failures and
//! dead-letters everything else, CLAIM_HELD included.

use crate::ids::Code;

/// What the consumer does with a delivery that was not consumed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Disposition {
    /// Requeue it for redelivery after the requeue delay.
    Requeue,
    /// Park it in the dead-letter queue for good.
    DeadLetter,
}

/// The disposition of a delivery whose execution ended with `code`. `careless` is the
/// `claim-held-dead-lettered` mutant's mapping: only the step failures it lists are retried.
pub fn disposition(code: Code, careless: bool) -> Disposition {
    if careless {
        return match code {
            Code::StepFailed | Code::StepPanic | Code::StepValidation => Disposition::Requeue,
            Code::ResumeClaimHeld | Code::MigrateClaimHeld => Disposition::DeadLetter,
            Code::MigrateValidation | Code::MigrateFailed => Disposition::DeadLetter,
        };
    }
    match code {
        // Lost a race: try again (R4, R7).
        Code::ResumeClaimHeld | Code::MigrateClaimHeld => Disposition::Requeue,
        // Transient in this model (see the module comment).
        Code::StepFailed | Code::StepPanic | Code::StepValidation => Disposition::Requeue,
        // The admin surface's codes never end a relay's execution; were one to, only
        // "this will never work" would be dead-lettered.
        Code::MigrateValidation => Disposition::DeadLetter,
        Code::MigrateFailed => Disposition::Requeue,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claim_held_is_requeued_and_only_the_careless_mapping_dead_letters_it() {
        assert_eq!(disposition(Code::ResumeClaimHeld, false), Disposition::Requeue);
        assert_eq!(disposition(Code::ResumeClaimHeld, true), Disposition::DeadLetter);
        for code in [Code::StepFailed, Code::StepPanic, Code::StepValidation] {
            assert_eq!(disposition(code, false), Disposition::Requeue);
        }
    }
}

//! `sometimes-step-validation-error`, `sometimes-step-unexpected-failure`,
//! `sometimes-step-panic`: a step ended in this error. One property per error code, told
//! apart by the code's marker type. Narrative: why a step failed is the step's own
//! knowledge; the store only sees the release that follows, the same for every failure.

use std::marker::PhantomData;

use crate::ids::Code;
use crate::ratio::Ratio;

use super::prelude::*;

/// One error code a step can end in: the property's name and description, and the
/// scenario's rate of that error.
pub trait FailureCode: 'static {
    /// The code.
    const CODE: Code;
    /// The property's name.
    const NAME: &'static str;
    /// The property's description.
    const DESCRIPTION: &'static str;
    /// How often the scenario's steps end in the code.
    fn rate(s: &Scenario) -> Ratio;
}

/// A validation error.
pub struct Validation;
/// An unexpected failure.
pub struct Unexpected;
/// A panic.
pub struct Panic;

impl FailureCode for Validation {
    const CODE: Code = Code::StepValidation;
    const NAME: &'static str = "sometimes-step-validation-error";
    const DESCRIPTION: &'static str = "a step exited with a validation error";
    fn rate(s: &Scenario) -> Ratio {
        s.workload.validation_error
    }
}

impl FailureCode for Unexpected {
    const CODE: Code = Code::StepFailed;
    const NAME: &'static str = "sometimes-step-unexpected-failure";
    const DESCRIPTION: &'static str = "a step exited with an unexpected failure";
    fn rate(s: &Scenario) -> Ratio {
        s.workload.unexpected_failure
    }
}

impl FailureCode for Panic {
    const CODE: Code = Code::StepPanic;
    const NAME: &'static str = "sometimes-step-panic";
    const DESCRIPTION: &'static str = "a step exited by panicking";
    fn rate(s: &Scenario) -> Ratio {
        s.workload.panic
    }
}

/// The property for code `C`; it keeps no books.
pub struct StepFailed<C>(PhantomData<C>);

impl<C> Default for StepFailed<C> {
    fn default() -> Self {
        StepFailed(PhantomData)
    }
}

impl<C: FailureCode> Property for StepFailed<C> {
    const NAME: &'static str = C::NAME;
    const DESCRIPTION: &'static str = C::DESCRIPTION;
    const READS: &'static [u8] = &[tag::STEP_ENDED];

    fn expected(s: &Scenario) -> bool {
        !C::rate(s).is_never()
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        matches!(event, E::StepEnded { error: Some(e), .. } if *e == C::CODE)
    }
}

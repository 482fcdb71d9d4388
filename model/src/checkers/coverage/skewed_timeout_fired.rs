//! `sometimes-skewed-timeout-fired`: a replica's periodic timer fired early or late in
//! store time: its clock is skewed.

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct SkewedTimeoutFired;

impl Property for SkewedTimeoutFired {
    const NAME: &'static str = "sometimes-skewed-timeout-fired";
    const DESCRIPTION: &'static str = "a skewed replica's timer fired early or late in store time";
    const READS: &'static [u8] = &[tag::TIMEOUT_SKEWED];

    fn expected(s: &Scenario) -> bool {
        // Any skew a replica's timers can notice: drift, or a step while they are pending. (A
        // constant offset alone changes no span.)
        let skew = &s.faults.clock_skew;
        skew.drift_ppm_max > 0 || (!skew.step_max.is_zero() && !skew.step_per_tick.is_never())
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        matches!(event, E::TimeoutSkewed { .. })
    }
}

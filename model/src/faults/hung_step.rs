//! Hung steps: a step's code never returns — a deadlocked client, a call that has no
//! timeout of its own. Nothing in the step ends it, so the runtime's per-step timeout
//! (`faults.cancel.step_timeout`) does: it abandons the step at its await point and takes
//! the exit that releases and hands the trigger back, like every other exit that does not
//! commit (spec 000, "Release is part of the commit, and part of every other exit").
//!
//! Why the timeout is needed: spec 000 opens with "two things must never happen to one
//! instance: two workers advancing it concurrently, and a worker holding it forever". The
//! claim cannot be held forever — it goes stale after the claim timeout and the sweep
//! clears it — but a hung execution holds more than its claim: its lane (nothing else runs
//! there), the broker delivery it runs for (a live consumer's unacked relay is never
//! redelivered) and with them its prefetch slot and the feeders waiting for room in the
//! lane. A timer fire comes back when its fire lease runs out; a relay never would. So a
//! hung step is drawn only where a per-step timeout is in force (validation refuses hung
//! steps without one; under the swarm, a seed whose draw switched the timeout off draws no
//! hangs), and no draw is made at all where hung steps are off.

use super::kind::FaultKind;
use crate::ctx::{Context, FaultGate};

/// The gate: drawn from the fault stream at the step, as slow steps are.
const GATE: FaultGate = FaultGate::tick(FaultKind::HungStep);

/// True if the step about to run hangs (reported as injected).
pub fn hangs(ctx: &Context) -> bool {
    let timeout = ctx.faults().cancel.step_timeout;
    if timeout.is_zero() || !ctx.fires(GATE, ctx.faults().hung_step.per_step) {
        return false;
    }
    ctx.report(FaultKind::HungStep, None, timeout);
    true
}

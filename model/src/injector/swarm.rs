//! Swarm testing: per seed, each fault kind is switched on or off and its rates scaled, so
//! that a sweep explores combinations no single configuration would (Groce et al., ISSTA
//! 2012). The selection is drawn from its own stream and recorded in the trace.

use sutra_sim_core::executor;

use crate::faults::kind::{FaultKind, Faults};
use crate::streams;

/// Most a swarm draw scales a configured rate, in permille (2×).
pub const SCALE_MAX_PERMILLE: u32 = 2_000;
/// Scales are drawn in steps of this many permille (1/4).
const SCALE_STEP_PERMILLE: u32 = 250;

/// The effective faults of one seed, and the kinds switched on: the scenario's own faults
/// (every configured kind on) or, with `swarm`, a random selection of them.
pub fn select(configured: &Faults) -> (Faults, Vec<FaultKind>) {
    if !configured.swarm {
        let enabled = FaultKind::ALL.iter().copied().filter(|&k| configured.configured_on(k)).collect();
        return (configured.clone(), enabled);
    }
    let mut f = configured.clone();
    let mut enabled = Vec::new();
    // Only configured kinds draw: an unconfigured kind has nothing to scale, and a new
    // kind in the fault table then changes no existing scenario's runs.
    for &kind in FaultKind::ALL.iter().filter(|&&kind| configured.configured_on(kind)) {
        // Draw 0 — the simplest — switches the kind off; others scale it by 1/4 to 2.
        let draw = executor::choose_in(streams::SWARM, SCALE_MAX_PERMILLE / SCALE_STEP_PERMILLE + 1);
        f.swarm(kind, if draw == 0 { None } else { Some(SCALE_STEP_PERMILLE * draw) });
        if draw != 0 {
            enabled.push(kind);
        }
    }
    (f, enabled)
}

//! Swarm testing: per seed, each fault kind switched on or off and its rate scaled, so
//! that a sweep explores combinations no single configuration would.

use sutra_sim_core::executor;

use crate::scenario::Faults;
use crate::streams;

/// The effective faults of one seed: the scenario's own, or a swarm selection of them.
pub fn select(configured: &Faults) -> Faults {
    if !configured.swarm {
        return configured.clone();
    }
    let mut f = configured.clone();
    // Each kind: 0 (simplest) switches it off; otherwise scale its rate by 1/4..2.
    let pick = |rate: &mut crate::ratio::Ratio| {
        let draw = executor::choose_in(streams::SWARM, 9);
        *rate = if draw == 0 { crate::ratio::Ratio::NEVER } else { rate.scaled(250 * draw) };
    };
    pick(&mut f.replica_crash_per_tick);
    pick(&mut f.process_pause_per_tick);
    pick(&mut f.misroute_per_delivery);
    pick(&mut f.broker_duplicate_per_delivery);
    pick(&mut f.slow_step_per_step);
    pick(&mut f.migration_per_tick);
    if executor::choose_in(streams::SWARM, 2) == 0 {
        f.clock_skew_max = std::time::Duration::ZERO;
    }
    f
}

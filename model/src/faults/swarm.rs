//! Swarm testing: per seed, each fault kind is switched on or off and its rates scaled, so
//! that a sweep explores combinations no single configuration would (Groce et al., ISSTA
//! 2012). The selection is drawn from its own stream and recorded in the trace.

use sutra_sim_core::executor;

use super::FaultKind;
use crate::ratio::Ratio;
use crate::scenario::Faults;
use crate::streams;

/// Most a swarm draw scales a configured rate, in permille (2×).
const SCALE_MAX_PERMILLE: u32 = 2_000;
/// Scales are drawn in steps of this many permille (1/4).
const SCALE_STEP_PERMILLE: u32 = 250;

/// The effective faults of one seed, and the kinds switched on: the scenario's own faults
/// (every configured kind on) or, with `swarm`, a random selection of them.
pub fn select(configured: &Faults) -> (Faults, Vec<FaultKind>) {
    let mut f = configured.clone();
    if !configured.swarm {
        let enabled = FaultKind::ALL.into_iter().filter(|k| configured_on(configured, *k)).collect();
        return (f, enabled);
    }
    let mut enabled = Vec::new();
    for kind in FaultKind::ALL {
        // Draw 0 — the simplest — switches the kind off; others scale it by 1/4 to 2.
        let draw = executor::choose_in(streams::SWARM, SCALE_MAX_PERMILLE / SCALE_STEP_PERMILLE + 1);
        let scale = |r: &mut Ratio| *r = if draw == 0 { Ratio::NEVER } else { r.scaled(SCALE_STEP_PERMILLE * draw) };
        match kind {
            FaultKind::ReplicaCrash => scale(&mut f.replica_crash.per_tick),
            FaultKind::ProcessPause => scale(&mut f.process_pause.per_tick),
            FaultKind::Misroute => {
                scale(&mut f.misroute.per_delivery);
                scale(&mut f.misroute.hash_change_per_tick);
            }
            FaultKind::ClockSkew => {
                scale(&mut f.clock_skew.step_per_tick);
                if draw == 0 {
                    f.clock_skew.offset_max = std::time::Duration::ZERO;
                    f.clock_skew.drift_ppm_max = 0;
                }
            }
            FaultKind::Broker => {
                scale(&mut f.broker.duplicate_per_delivery);
                scale(&mut f.broker.delay_per_delivery);
                scale(&mut f.broker.reorder_per_delivery);
            }
            FaultKind::Store => {
                scale(&mut f.store.latency_spike_per_call);
                scale(&mut f.store.abort_per_call);
                scale(&mut f.store.unavailable_per_tick);
            }
            FaultKind::SlowStep => scale(&mut f.slow_step.per_step),
            FaultKind::TimerJitter => scale(&mut f.timer_jitter.late_per_fire),
            FaultKind::Lease => {
                scale(&mut f.lease.holder_crash_per_tick);
                scale(&mut f.lease.holder_pause_per_tick);
            }
        }
        if draw != 0 && configured_on(configured, kind) {
            enabled.push(kind);
        }
    }
    (f, enabled)
}

/// True if the scenario configures `kind` at all.
pub fn configured_on(f: &Faults, kind: FaultKind) -> bool {
    let on = |r: Ratio| !r.is_never();
    match kind {
        FaultKind::ReplicaCrash => on(f.replica_crash.per_tick),
        FaultKind::ProcessPause => on(f.process_pause.per_tick),
        FaultKind::Misroute => on(f.misroute.per_delivery) || on(f.misroute.hash_change_per_tick),
        FaultKind::ClockSkew => {
            !f.clock_skew.offset_max.is_zero() || f.clock_skew.drift_ppm_max > 0 || on(f.clock_skew.step_per_tick)
        }
        FaultKind::Broker => {
            on(f.broker.duplicate_per_delivery) || on(f.broker.delay_per_delivery) || on(f.broker.reorder_per_delivery)
        }
        FaultKind::Store => {
            on(f.store.latency_spike_per_call) || on(f.store.abort_per_call) || on(f.store.unavailable_per_tick)
        }
        FaultKind::SlowStep => on(f.slow_step.per_step),
        FaultKind::TimerJitter => on(f.timer_jitter.late_per_fire),
        FaultKind::Lease => on(f.lease.holder_crash_per_tick) || on(f.lease.holder_pause_per_tick),
    }
}

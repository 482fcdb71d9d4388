//! Every numeric scenario key has a documented upper bound that validation checks, naming
//! the key (issue #15): extreme values used to wrap silently in release builds (and run
//! green) and panic in debug builds.

use proptest::prelude::*;
use sutra_sim_model::scenario::{
    BOUNCE_THRESHOLD_MAX, DRIFT_PPM_MAX, EVENTS_MAX, INSTANCES_MAX, POLLS_MAX, REPLICAS_MAX, WEIGHT_MAX,
};
use sutra_sim_model::Scenario;

/// Every duration key, as `(table, key)`.
const DURATION_KEYS: &[(&str, &str)] = &[
    ("workload", "step_duration_max"),
    ("workload", "relay_delay_max"),
    ("workload", "timer_delay_max"),
    ("workload", "pull_work_max"),
    ("timeouts", "claim_timeout"),
    ("timeouts", "sweep_interval"),
    ("timeouts", "lease_duration"),
    ("timeouts", "timer_poll_interval"),
    ("timeouts", "timer_fire_lease"),
    ("timeouts", "timer_backoff_base"),
    ("timeouts", "timer_backoff_max"),
    ("timeouts", "requeue_delay"),
    ("timeouts", "store_latency_max"),
    ("timeouts", "task_lock_duration"),
    ("timeouts", "broker_liveness_interval"),
    ("faults", "tick"),
    ("faults.replica_crash", "restart_delay_max"),
    ("faults.process_pause", "pause_max"),
    ("faults.clock_skew", "offset_max"),
    ("faults.clock_skew", "step_max"),
    ("faults.broker", "delay_max"),
    ("faults.broker", "paused_consumer_timeout"),
    ("faults.ack_loss", "redeliver_after"),
    ("faults.store", "latency_spike_max"),
    ("faults.store", "unavailable_max"),
    ("faults.timer_jitter", "late_max"),
    ("faults.cancel", "step_timeout"),
    ("faults.cancel", "drain_timeout"),
    ("faults.cancel", "restart_delay_max"),
    ("faults.store_replies", "client_timeout"),
    ("faults.store_replies", "boundary_pause_max"),
    ("phases", "heal_at"),
    ("run", "sim_time_max"),
    ("run", "stall_bound"),
];

/// Every integer key with its largest valid value, as `(table, key, max)`.
const INTEGER_KEYS: &[(&str, &str, u64)] = &[
    ("topology", "replicas", REPLICAS_MAX as u64),
    ("workload", "instances", INSTANCES_MAX as u64),
    ("workload", "relay_weight", WEIGHT_MAX as u64),
    ("workload", "timer_weight", WEIGHT_MAX as u64),
    ("workload", "pull_weight", WEIGHT_MAX as u64),
    ("run", "events_max", EVENTS_MAX),
    ("run", "polls_max", POLLS_MAX),
    ("run", "bounce_threshold", BOUNCE_THRESHOLD_MAX as u64),
    ("faults.clock_skew", "drift_ppm_max", DRIFT_PPM_MAX as u64),
];

fn scenario_with(table: &str, line: &str) -> String {
    format!("name = \"x\"\ndescription = \"d\"\n[{table}]\n{line}\n")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn a_duration_past_its_bound_is_refused_naming_the_key(
        which in 0..DURATION_KEYS.len(),
        days in 1u64..100_000,
        extra_ns in 1u64..1_000_000_000,
    ) {
        let (table, key) = DURATION_KEYS[which];
        // From just past one day up to the largest duration the syntax reads.
        let ns = (days * 86_400_000_000_000).saturating_add(extra_ns);
        let text = scenario_with(table, &format!("{key} = \"{ns}ns\""));
        let err = match Scenario::from_toml(&text, "big.toml") {
            Ok(s) => s.validate().unwrap_err(),
            Err(e) => e.0,
        };
        prop_assert!(err.contains(&format!("{table}.{key}")) || err.contains(key), "{table}.{key}: {err}");
    }

    #[test]
    fn an_integer_past_its_bound_is_refused_naming_the_key(
        which in 0..INTEGER_KEYS.len(),
        over in 1u64..u64::MAX / 2,
    ) {
        let (table, key, max) = INTEGER_KEYS[which];
        let value = max.saturating_add(over);
        let text = scenario_with(table, &format!("{key} = {value}"));
        let err = match Scenario::from_toml(&text, "big.toml") {
            Ok(s) => s.validate().unwrap_err(),
            Err(e) => e.0,
        };
        prop_assert!(err.contains(key), "{table}.{key} = {value}: {err}");
    }
}

#[test]
fn every_bound_itself_is_accepted() {
    let mut s = Scenario::built_in("smoke").unwrap();
    s.workload.relay_weight = WEIGHT_MAX;
    s.run.events_max = EVENTS_MAX;
    s.run.polls_max = POLLS_MAX;
    s.run.bounce_threshold = BOUNCE_THRESHOLD_MAX;
    s.faults.clock_skew.drift_ppm_max = DRIFT_PPM_MAX;
    s.run.sim_time_max = sutra_sim_model::scenario::DURATION_MAX;
    s.validate().unwrap();
}

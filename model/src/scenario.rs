//! Scenarios: the typed, documented description of one situation to simulate, read from
//! `scenarios/NAME.toml`. Every field has a unit in its name or its type (durations are
//! strings like `"30s"`, probabilities are ratios like `"1/50"`), every section is strict
//! (unknown keys are errors naming the file, line and key), and `validate` refuses
//! impossible combinations before anything runs.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use sutra_sim_core::time::serde_duration;
use sutra_sim_core::{format_duration, Budgets, StrategyConfig};

use crate::design::Design;
pub use crate::faults::kind::Faults;
use crate::ratio::Ratio;
use crate::sql_store::StoreSection;

/// Most replicas, lanes, instances and steps a scenario may ask for.
pub const REPLICAS_MAX: u32 = 32;
/// Most execution lanes per replica.
pub const LANES_MAX: u32 = 64;
/// Most instances in one run.
pub const INSTANCES_MAX: u32 = 10_000;
/// Most steps per instance.
pub const STEPS_MAX: u32 = 1_000;
/// Most pull workers.
pub const PULL_WORKERS_MAX: u32 = 32;
/// Largest broker prefetch window.
pub const PREFETCH_MAX: u32 = 1_000;
/// Longest duration any scenario key may give (one simulated day): far past every
/// timeout a runtime uses, and short enough that sums and multiples of durations (a run's
/// time bound, backoff doubling, clock drift) never overflow.
pub const DURATION_MAX: Duration = Duration::from_secs(24 * 3_600);
/// Largest relative weight of a step kind.
pub const WEIGHT_MAX: u32 = 1_000_000;
/// Largest `run.events_max`.
pub const EVENTS_MAX: u64 = 100_000_000;
/// Largest `run.polls_max`.
pub const POLLS_MAX: u64 = 1_000_000_000;
/// Largest `run.bounce_threshold`.
pub const BOUNCE_THRESHOLD_MAX: u32 = 1_000_000;
/// Largest `faults.clock_skew.drift_ppm_max` (10%: clocks that drift more are broken
/// hardware, not skew).
pub const DRIFT_PPM_MAX: u32 = 100_000;

/// One scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name, kebab-case.
    pub name: String,
    /// One line on the situation it simulates.
    pub description: String,
    /// Processes and lanes.
    #[serde(default)]
    pub topology: Topology,
    /// Instances and their steps.
    #[serde(default)]
    pub workload: Workload,
    /// The runtime's timing keys.
    #[serde(default)]
    pub timeouts: Timeouts,
    /// Fault kinds and their options.
    #[serde(default)]
    pub faults: Faults,
    /// Administrative operations (migration).
    #[serde(default)]
    pub admin: Admin,
    /// The faulty phase and the heal.
    #[serde(default)]
    pub phases: Phases,
    /// Design choices (spec 000's alternatives); the defaults are the spec's own.
    #[serde(default, skip_serializing_if = "Design::is_default")]
    pub design: Design,
    /// Strategy, checkers and budgets.
    #[serde(default)]
    pub run: RunSection,
    /// The store's engine and statements (`[store]`); the default is the model store.
    #[serde(default, skip_serializing_if = "StoreSection::is_default")]
    pub store: StoreSection,
}

/// Processes and lanes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Topology {
    /// Replica processes.
    pub replicas: u32,
    /// Execution lanes per replica.
    pub lanes: u32,
    /// Pull-worker nodes.
    pub pull_workers: u32,
    /// Unacked relays a replica may hold at once (broker prefetch window).
    pub prefetch: u32,
}

impl Default for Topology {
    fn default() -> Self {
        Topology { replicas: 3, lanes: 2, pull_workers: 1, prefetch: 8 }
    }
}

/// Instances and their steps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Workload {
    /// Workflow instances, all started at time zero.
    pub instances: u32,
    /// Steps per instance (K).
    pub steps: u32,
    /// Relative weight of steps that wait for a relay.
    pub relay_weight: u32,
    /// Relative weight of steps that wait for a timer.
    pub timer_weight: u32,
    /// Relative weight of steps that wait for a pull task.
    pub pull_weight: u32,
    /// Longest normal step; with six store trips, at most a quarter of the claim timeout (R16).
    #[serde(with = "serde_duration")]
    pub step_duration_max: Duration,
    /// Longest delay before a relay is published after a commit.
    #[serde(with = "serde_duration")]
    pub relay_delay_max: Duration,
    /// Longest delay until a timer is due.
    #[serde(with = "serde_duration")]
    pub timer_delay_max: Duration,
    /// Longest time a pull worker works on a task; below the task lock.
    #[serde(with = "serde_duration")]
    pub pull_work_max: Duration,
    /// Chance that an attempt ends in a validation error. With the two below and the share
    /// of steps the per-step timeout cuts, at most 1/2.
    pub validation_error: Ratio,
    /// Chance that an attempt ends in an unexpected failure.
    pub unexpected_failure: Ratio,
    /// Chance that an attempt panics.
    pub panic: Ratio,
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            instances: 6,
            steps: 3,
            relay_weight: 4,
            timer_weight: 3,
            pull_weight: 1,
            step_duration_max: Duration::from_millis(200),
            relay_delay_max: Duration::from_millis(50),
            timer_delay_max: Duration::from_secs(2),
            pull_work_max: Duration::from_secs(45),
            validation_error: Ratio::new(1, 60).expect("valid"),
            unexpected_failure: Ratio::new(1, 80).expect("valid"),
            panic: Ratio::new(1, 100).expect("valid"),
        }
    }
}

/// The runtime's timing keys. `docs/scenarios.md` lists the relations between them that
/// validation keeps ([`crate::relations`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Timeouts {
    /// A claim older than this (by the store's clock) is stale: it may be taken or swept.
    #[serde(with = "serde_duration")]
    pub claim_timeout: Duration,
    /// How often the lease holder sweeps (at least 1 ms).
    #[serde(with = "serde_duration")]
    pub sweep_interval: Duration,
    /// How long a sweeper lease lasts without renewal; it must outlast one sweep, four
    /// one-way store latencies.
    #[serde(with = "serde_duration")]
    pub lease_duration: Duration,
    /// How often a replica polls the store for due timers (at least 1 ms).
    #[serde(with = "serde_duration")]
    pub timer_poll_interval: Duration,
    /// How long a picked timer is hidden from other pollers (its fire lease); it must
    /// outlast a fire, which may wait behind one step of every instance.
    #[serde(with = "serde_duration")]
    pub timer_fire_lease: Duration,
    /// First backoff of a refused timer fire; it doubles per refusal.
    #[serde(with = "serde_duration")]
    pub timer_backoff_base: Duration,
    /// Cap of the timer backoff.
    #[serde(with = "serde_duration")]
    pub timer_backoff_max: Duration,
    /// Delay before a requeued relay is delivered again.
    #[serde(with = "serde_duration")]
    pub requeue_delay: Duration,
    /// Longest one-way latency of a store call (drawn in whole milliseconds).
    #[serde(with = "serde_duration")]
    pub store_latency_max: Duration,
    /// How long a pull worker's lock on a task row lasts; it must outlast the longest pull
    /// work and two one-way store latencies.
    #[serde(with = "serde_duration")]
    pub task_lock_duration: Duration,
    /// How often the broker checks for dead consumers to redeliver their unacked relays
    /// (at least 1 ms).
    #[serde(with = "serde_duration")]
    pub broker_liveness_interval: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            claim_timeout: Duration::from_secs(30),
            sweep_interval: Duration::from_secs(5),
            lease_duration: Duration::from_secs(15),
            timer_poll_interval: Duration::from_millis(250),
            timer_fire_lease: Duration::from_secs(45),
            timer_backoff_base: Duration::from_millis(100),
            timer_backoff_max: Duration::from_secs(5),
            requeue_delay: Duration::from_millis(50),
            store_latency_max: Duration::from_millis(4),
            task_lock_duration: Duration::from_secs(120),
            broker_liveness_interval: Duration::from_secs(1),
        }
    }
}

/// Administrative operations that race the runtime: load rather than faults, started
/// during the faulty phase only.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Admin {
    /// Chance per fault tick that an operator migrates a random instance.
    pub migration_per_tick: Ratio,
}

impl Default for Admin {
    fn default() -> Self {
        Admin { migration_per_tick: Ratio::NEVER }
    }
}

/// The faulty phase and the heal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Phases {
    /// When faults stop, paused replicas resume and dead ones restart.
    #[serde(with = "serde_duration")]
    pub heal_at: Duration,
}

impl Default for Phases {
    fn default() -> Self {
        Phases { heal_at: Duration::from_secs(60) }
    }
}

/// Strategy, checkers and budgets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunSection {
    /// `random`, `pct`, `pct:DEPTH` or `pct:DEPTH:HORIZON`.
    pub strategy: String,
    /// Checkers by name; empty means all built-in checkers.
    pub checkers: Vec<String>,
    /// Most events per run.
    pub events_max: u64,
    /// Most simulated time per run.
    #[serde(with = "serde_duration")]
    pub sim_time_max: Duration,
    /// Most polls per run.
    pub polls_max: u64,
    /// A state-lane turn open longer than this is a hang.
    #[serde(with = "serde_duration")]
    pub stall_bound: Duration,
    /// Most claim bounces the quiet-bounce-meter accepts in a run without contention faults.
    pub bounce_threshold: u32,
}

impl Default for RunSection {
    fn default() -> Self {
        RunSection {
            strategy: "random".into(),
            checkers: Vec::new(),
            events_max: 200_000,
            sim_time_max: Duration::from_secs(3_600),
            polls_max: 2_000_000,
            stall_bound: Duration::from_secs(120),
            bounce_threshold: 2,
        }
    }
}

/// A scenario that could not be read or is impossible.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError(pub String);

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ScenarioError {}

/// The built-in scenarios, compiled in from `scenarios/*.toml`.
pub const BUILT_IN: &[(&str, &str)] = &[
    ("smoke", include_str!("../../scenarios/smoke.toml")),
    ("migration", include_str!("../../scenarios/migration.toml")),
    ("pull-workers", include_str!("../../scenarios/pull-workers.toml")),
    ("misroute", include_str!("../../scenarios/misroute.toml")),
    ("replica-churn", include_str!("../../scenarios/replica-churn.toml")),
    ("process-pause", include_str!("../../scenarios/process-pause.toml")),
    ("clock-skew", include_str!("../../scenarios/clock-skew.toml")),
    ("slow-steps", include_str!("../../scenarios/slow-steps.toml")),
    ("swarm", include_str!("../../scenarios/swarm.toml")),
    ("quiet", include_str!("../../scenarios/quiet.toml")),
    ("racing-timers", include_str!("../../scenarios/racing-timers.toml")),
    ("real-world", include_str!("../../scenarios/real-world.toml")),
    ("short-claim-timeout", include_str!("../../scenarios/short-claim-timeout.toml")),
    ("hung-steps", include_str!("../../scenarios/hung-steps.toml")),
];

impl Scenario {
    /// Parses TOML text; `origin` (a file name) prefixes every error.
    pub fn from_toml(text: &str, origin: &str) -> Result<Scenario, ScenarioError> {
        let mut scenario: Scenario =
            toml::from_str(text).map_err(|e| ScenarioError(describe_toml_error(text, origin, &e)))?;
        crate::sql_store::section::read_sql_file(&mut scenario.store, origin).map_err(ScenarioError)?;
        scenario.validate().map_err(|e| ScenarioError(format!("{origin}: {e}")))?;
        Ok(scenario)
    }

    /// A built-in scenario by name.
    pub fn built_in(name: &str) -> Result<Scenario, ScenarioError> {
        let (_, text) = BUILT_IN.iter().find(|(n, _)| *n == name).ok_or_else(|| {
            let known: Vec<&str> = BUILT_IN.iter().map(|(n, _)| *n).collect();
            ScenarioError(format!("unknown scenario {name:?}; known scenarios: {}", known.join(", ")))
        })?;
        Scenario::from_toml(text, &format!("scenarios/{name}.toml"))
    }

    /// Every built-in scenario, in listing order.
    pub fn all_built_in() -> Vec<Scenario> {
        BUILT_IN.iter().map(|(n, _)| Scenario::built_in(n).expect("built-in scenarios are valid")).collect()
    }

    /// The scenario as TOML (for reproducers).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a scenario always serialises")
    }

    /// The strategy named in the scenario.
    pub fn strategy(&self) -> StrategyConfig {
        StrategyConfig::parse(&self.run.strategy).expect("validated")
    }

    /// The run's budgets.
    pub fn budgets(&self) -> Budgets {
        Budgets { events_max: self.run.events_max, sim_time_max: self.run.sim_time_max, polls_max: self.run.polls_max }
    }

    /// Every duration of the scenario with its key, for validation.
    fn durations(&self) -> [(&'static str, Duration); 35] {
        let (w, t, f) = (&self.workload, &self.timeouts, &self.faults);
        [
            ("workload.step_duration_max", w.step_duration_max),
            ("workload.relay_delay_max", w.relay_delay_max),
            ("workload.timer_delay_max", w.timer_delay_max),
            ("workload.pull_work_max", w.pull_work_max),
            ("timeouts.claim_timeout", t.claim_timeout),
            ("timeouts.sweep_interval", t.sweep_interval),
            ("timeouts.lease_duration", t.lease_duration),
            ("timeouts.timer_poll_interval", t.timer_poll_interval),
            ("timeouts.timer_fire_lease", t.timer_fire_lease),
            ("timeouts.timer_backoff_base", t.timer_backoff_base),
            ("timeouts.timer_backoff_max", t.timer_backoff_max),
            ("timeouts.requeue_delay", t.requeue_delay),
            ("timeouts.store_latency_max", t.store_latency_max),
            ("timeouts.task_lock_duration", t.task_lock_duration),
            ("timeouts.broker_liveness_interval", t.broker_liveness_interval),
            ("faults.tick", f.tick),
            ("faults.replica_crash.restart_delay_max", f.replica_crash.restart_delay_max),
            ("faults.process_pause.pause_max", f.process_pause.pause_max),
            ("faults.clock_skew.offset_max", f.clock_skew.offset_max),
            ("faults.clock_skew.step_max", f.clock_skew.step_max),
            ("faults.broker.delay_max", f.broker.delay_max),
            ("faults.broker.paused_consumer_timeout", f.broker.paused_consumer_timeout),
            ("faults.ack_loss.redeliver_after", f.ack_loss.redeliver_after),
            ("faults.store.latency_spike_max", f.store.latency_spike_max),
            ("faults.store.unavailable_max", f.store.unavailable_max),
            ("faults.timer_jitter.late_max", f.timer_jitter.late_max),
            ("faults.store_replies.client_timeout", f.store_replies.client_timeout),
            ("faults.store_replies.boundary_pause_max", f.store_replies.boundary_pause_max),
            ("faults.store_replies.late_landing_max", f.store_replies.late_landing_max),
            ("faults.cancel.step_timeout", f.cancel.step_timeout),
            ("faults.cancel.drain_timeout", f.cancel.drain_timeout),
            ("faults.cancel.restart_delay_max", f.cancel.restart_delay_max),
            ("phases.heal_at", self.phases.heal_at),
            ("run.sim_time_max", self.run.sim_time_max),
            ("run.stall_bound", self.run.stall_bound),
        ]
    }

    /// Refuses impossible scenarios with the reason: every rule a scenario must satisfy, including the documented upper bound of
    /// every numeric key ([`DURATION_MAX`], [`WEIGHT_MAX`], [`EVENTS_MAX`], [`POLLS_MAX`],
    /// [`BOUNCE_THRESHOLD_MAX`], [`DRIFT_PPM_MAX`] and the topology limits); errors name the key.
    pub fn validate(&self) -> Result<(), String> {
        self.store.validate()?;
        // The name becomes part of file names (saved reproducers) and command lines
        // (replay lines), so it is an identifier: no path separators, dots or spaces.
        if !is_identifier(&self.name) {
            return Err(format!(
                "name {:?} is not a scenario name: it must match [a-z0-9][a-z0-9-]* (it names files and is typed on command lines)",
                self.name
            ));
        }
        let t = &self.topology;
        let w = &self.workload;
        let between = |what: &str, v: u32, lo: u32, hi: u32| {
            if v < lo || v > hi {
                Err(format!("{what} = {v} is outside {lo}..={hi}"))
            } else {
                Ok(())
            }
        };
        between("topology.replicas", t.replicas, 1, REPLICAS_MAX)?;
        between("topology.lanes", t.lanes, 1, LANES_MAX)?;
        between("topology.pull_workers", t.pull_workers, 0, PULL_WORKERS_MAX)?;
        between("topology.prefetch", t.prefetch, 1, PREFETCH_MAX)?;
        between("workload.instances", w.instances, 1, INSTANCES_MAX)?;
        between("workload.steps", w.steps, 1, STEPS_MAX)?;
        between("workload.relay_weight", w.relay_weight, 0, WEIGHT_MAX)?;
        between("workload.timer_weight", w.timer_weight, 0, WEIGHT_MAX)?;
        between("workload.pull_weight", w.pull_weight, 0, WEIGHT_MAX)?;
        between("run.bounce_threshold", self.run.bounce_threshold, 0, BOUNCE_THRESHOLD_MAX)?;
        between("faults.clock_skew.drift_ppm_max", self.faults.clock_skew.drift_ppm_max, 0, DRIFT_PPM_MAX)?;
        for (key, v, hi) in
            [("run.events_max", self.run.events_max, EVENTS_MAX), ("run.polls_max", self.run.polls_max, POLLS_MAX)]
        {
            if v > hi {
                return Err(format!("{key} = {v} is more than {hi}"));
            }
        }
        // Every duration is bounded, so that no arithmetic on them overflows (it would
        // wrap in release and panic in debug).
        for (key, d) in self.durations() {
            if d > DURATION_MAX {
                return Err(format!(
                    "{key} = {} is more than {}, the longest duration a scenario may give",
                    format_duration(d),
                    format_duration(DURATION_MAX)
                ));
            }
        }
        if w.relay_weight + w.timer_weight + w.pull_weight == 0 {
            return Err("workload: relay_weight, timer_weight and pull_weight are all 0".into());
        }
        if w.pull_weight > 0 && t.pull_workers == 0 {
            return Err("workload.pull_weight > 0 needs topology.pull_workers >= 1".into());
        }
        let tt = &self.timeouts;
        for (key, d) in [
            ("timeouts.claim_timeout", tt.claim_timeout),
            ("timeouts.sweep_interval", tt.sweep_interval),
            ("timeouts.lease_duration", tt.lease_duration),
            ("timeouts.timer_poll_interval", tt.timer_poll_interval),
            ("timeouts.timer_fire_lease", tt.timer_fire_lease),
            ("timeouts.timer_backoff_base", tt.timer_backoff_base),
            ("timeouts.task_lock_duration", tt.task_lock_duration),
            ("timeouts.broker_liveness_interval", tt.broker_liveness_interval),
            ("faults.tick", self.faults.tick),
        ] {
            if d.is_zero() {
                return Err(format!("{key} must be more than 0"));
            }
        }
        if tt.timer_backoff_max < tt.timer_backoff_base {
            return Err(format!(
                "timeouts.timer_backoff_max ({}) is below timeouts.timer_backoff_base ({})",
                format_duration(tt.timer_backoff_max),
                format_duration(tt.timer_backoff_base)
            ));
        }
        let replies = &self.faults.store_replies;
        if replies.client_timeout.is_zero() {
            return Err("faults.store_replies.client_timeout must be more than 0: a client gives up on a call only after waiting".into());
        }
        if replies.client_timeout * 4 > tt.claim_timeout {
            return Err(format!(
                "faults.store_replies.client_timeout ({}) must be far below timeouts.claim_timeout ({}): an exit path that outlives the claim timeout is a live-but-slow owner",
                format_duration(replies.client_timeout),
                format_duration(tt.claim_timeout)
            ));
        }
        if self.phases.heal_at >= self.run.sim_time_max {
            return Err("phases.heal_at must come before run.sim_time_max".into());
        }
        StrategyConfig::parse(&self.run.strategy).map_err(|e| format!("run.strategy: {e}"))?;
        if self.run.events_max == 0 || self.run.polls_max == 0 {
            return Err("run.events_max and run.polls_max must be more than 0".into());
        }
        crate::relations::check(self)?;
        self.budgets_fit_the_work()
    }
}

/// True if `name` matches `[a-z0-9][a-z0-9-]*`.
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// Turns a TOML error into one line naming the file, the line and the key.
fn describe_toml_error(text: &str, origin: &str, error: &toml::de::Error) -> String {
    let line = error.span().map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
    let message = error.message().trim().replace('\n', " ");
    // The key of the offending line, when it has one: a value out of its type's range
    // ("expected u32") would otherwise not say which key it is.
    let key = line
        .and_then(|l| text.lines().nth(l - 1))
        .and_then(|l| l.split_once('='))
        .map(|(k, _)| k.trim())
        .filter(|k| !k.is_empty() && !message.contains(*k));
    match (line, key) {
        (Some(line), Some(key)) => format!("{origin}:{line}: {key}: {message}"),
        (Some(line), None) => format!("{origin}:{line}: {message}"),
        (None, _) => format!("{origin}: {message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_scenario_is_valid() {
        for s in Scenario::all_built_in() {
            s.validate().unwrap();
        }
    }

    #[test]
    fn an_unknown_key_names_the_file_line_and_key() {
        let err =
            Scenario::from_toml("name = \"x\"\ndescription = \"d\"\n[topology]\nreplicas = 2\nlanez = 3\n", "bad.toml")
                .unwrap_err()
                .0;
        assert!(err.starts_with("bad.toml:5:"), "{err}");
        assert!(err.contains("lanez"), "{err}");
    }

    #[test]
    fn a_negative_duration_is_refused() {
        let err =
            Scenario::from_toml("name = \"x\"\ndescription = \"d\"\n[timeouts]\nclaim_timeout = \"-3s\"\n", "neg.toml")
                .unwrap_err()
                .0;
        assert!(err.contains("neg.toml:4") && err.contains("negative"), "{err}");
    }

    #[test]
    fn impossible_values_are_refused() {
        let err = Scenario::from_toml("name = \"x\"\ndescription = \"d\"\n[topology]\nreplicas = 0\n", "zero.toml")
            .unwrap_err()
            .0;
        assert!(err.contains("topology.replicas"), "{err}");
    }

    #[test]
    fn a_name_that_is_not_an_identifier_is_refused() {
        for bad in ["", "../../x", "Smoke", "-x", "a b", "a/b", "a.b", "smoke\n"] {
            let mut s = Scenario::built_in("smoke").unwrap();
            s.name = bad.to_string();
            assert!(s.validate().unwrap_err().contains("is not a scenario name"), "{bad:?}");
        }
        for good in ["smoke", "0", "a-b-9"] {
            assert!(is_identifier(good), "{good}");
        }
    }

    #[test]
    fn toml_round_trip_is_identity() {
        for s in Scenario::all_built_in() {
            assert_eq!(Scenario::from_toml(&s.to_toml(), "round-trip").unwrap(), s);
        }
    }
}

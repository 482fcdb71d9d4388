//! A built-in scenario copied at a deployment's size (issue #26): what a user does by hand —
//! raise the replicas, lanes, instances, steps and pull workers, then raise what validation
//! then asks for (the budgets, and the timer fire lease when a fire outlasts it) — done the
//! same way by the scaled-scenario test and by `examples/scaled_copies.rs`, so a copy the
//! test draws and a copy swept by hand are built alike.

use std::time::Duration;

use crate::scenario::{Scenario, DURATION_MAX};

/// The sizes of a deployment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// Replicas (processes with execution lanes).
    pub replicas: u32,
    /// Execution lanes per replica.
    pub lanes: u32,
    /// Workflow instances.
    pub instances: u32,
    /// Steps per instance.
    pub steps: u32,
    /// Pull workers (none: no step parks for one).
    pub pull_workers: u32,
}

impl Scenario {
    /// Sets the topology and workload sizes. With no pull worker, no step parks for one
    /// (validation asks for a worker when steps may), and a relay takes the weight if
    /// nothing else triggers steps.
    pub fn resize(&mut self, sizes: &Sizes) {
        self.topology.replicas = sizes.replicas;
        self.topology.lanes = sizes.lanes;
        self.topology.pull_workers = sizes.pull_workers;
        self.workload.instances = sizes.instances;
        self.workload.steps = sizes.steps;
        if sizes.pull_workers == 0 {
            self.workload.pull_weight = 0;
            if self.workload.relay_weight + self.workload.timer_weight == 0 {
                self.workload.relay_weight = 1;
            }
        }
    }

    /// Raises what validation asks for of a world this size: the timer fire lease past the
    /// pick's reply and one step (with its six store trips) of every instance, and the
    /// budgets of simulated time, events and polls to the work's bounds. Never lowers one.
    pub fn raise_to_the_work(&mut self) {
        if self.workload.timer_weight > 0 {
            let t = &mut self.timeouts;
            let step = self.workload.step_duration_max + t.store_latency_max * 6;
            let fire = t.store_latency_max + step * self.workload.instances;
            t.timer_fire_lease = t.timer_fire_lease.max(fire + Duration::from_millis(1)).min(DURATION_MAX);
        }
        self.run.sim_time_max = self.run.sim_time_max.max(self.run_time_bound().min(DURATION_MAX));
        self.run.events_max = self.run.events_max.max(self.events_bound());
        self.run.polls_max = self.run.polls_max.max(self.polls_bound());
    }
}

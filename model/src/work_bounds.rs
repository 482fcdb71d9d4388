//! Bounds a scenario's timeouts and the size of its work give: how long the correct model
//! may go without progress after the heal (what `eventual-completion` judges), and how much
//! simulated time, how many events and how many polls a whole run of the correct model may
//! take (what its budgets must allow, or validation refuses them).
//!
//! The budgets are a safety net against a run that never ends, not a judgement: a budget
//! the correct model can overrun is a false alarm, and one that is only met by the built-in
//! scenarios' sizes is a false alarm waiting for the first team that models its own
//! deployment. So each budget is checked against what the workload can take — the work
//! queued behind the one resource it shares (a pull worker, a lane) as well as the timeouts.
//! Where a count is drawn (how many steps wait for a pull task, how many instances one lane
//! owns), it is bounded at its mean plus eight standard deviations: exceeded with a
//! probability far below once in all the seeds anyone will run.

use std::time::Duration;

use sutra_sim_core::format_duration;

use crate::scenario::Scenario;

/// Events a step may cost, with its claims, refusals, redeliveries and store witnesses (the
/// built-in scenarios measure up to about 210, periodic roles and faults included).
pub const EVENTS_PER_STEP: u64 = 250;
/// Events a live process may emit per simulated second besides its periodic roles' (at most
/// 0.3 measured in a 32-replica world, steps included).
pub const EVENTS_PER_PROCESS_SECOND: f64 = 2.0;
/// Events a sweep may emit (its lease call and its select; what it clears counts as steps').
pub const EVENTS_PER_ROUND: f64 = 4.0;
/// Events a fault tick may cost per process (one per fault kind at most, with its effects).
pub const EVENTS_PER_PROCESS_TICK: u64 = 10;
/// Polls an event may cost, idle polling aside (measured 1.0–1.7 in the built-in scenarios).
pub const POLLS_PER_EVENT: u64 = 4;
/// Polls a process may take per simulated second besides its periodic roles' (about 1.4
/// measured in a 32-replica world, its periodic roles included).
pub const POLLS_PER_PROCESS_SECOND: f64 = 4.0;
/// Polls a periodic round may take (a poll loop's wake-up and the store calls it makes).
pub const POLLS_PER_ROUND: f64 = 4.0;
/// Grants of one claim without a break that [`Scenario::claim_tenure_bound`] allows: two
/// claim loops of `RETRY_ATTEMPTS_MAX` claims each, and the claim timeout after the last.
pub const TENURE_GRANTS_MAX: u32 = 2 * crate::spec::RETRY_ATTEMPTS_MAX + 1;
/// `ln(10^12)`: [`Scenario::attempts_bound`] allows every step of a run together a chance
/// below one in 10^12 of needing more attempts.
pub const ATTEMPTS_MISS_LN: f64 = 27.7;

impl Scenario {
    /// The longest the correct model may go, after the heal, without progress while work is
    /// left (`work_left`: a step committed or a claim let go for good). It bounds a gap, not
    /// the whole workload: however much work is queued behind a lane or a pull worker, the
    /// next piece of it completes within one recovery and one step.
    pub fn progress_bound(&self) -> Duration {
        self.recovery_bound() + self.step_bound() + self.retry_bound().saturating_mul(self.attempts_bound() - 1)
    }

    /// The share of a step's duration draws (whole milliseconds up to
    /// `workload.step_duration_max`) that end, with the step's six store trips, before its
    /// claim goes stale, as (fitting, all): a step that fits commits unless a fault strikes
    /// it. All of them when the scenario keeps R16; validation keeps the trips inside a
    /// quarter of the claim timeout, so some always do.
    pub fn step_fit_share(&self) -> (u64, u64) {
        let (t, w) = (&self.timeouts, &self.workload);
        let draws = u64::try_from(w.step_duration_max.as_millis()).unwrap_or(u64::MAX - 1) + 1;
        let room = t.claim_timeout.saturating_sub(t.store_latency_max * 6);
        // A draw of d ms fits if d ms < room: d in 0..room's whole milliseconds.
        let fitting = u64::try_from(room.as_millis()).unwrap_or(u64::MAX).min(draws);
        (fitting, draws)
    }

    /// Attempts one step may take after the heal: 1 when every step fits in its claim
    /// (R16); with a claim timeout shorter than the longest step (spec 000's tuning trade),
    /// a step that outlasts its claim may be swept or stolen and its commit rejected (R19),
    /// and the step is tried again. Each attempt fits with at least the chance
    /// [`Self::step_fit_share`] gives, independently, so this many attempts all miss with a
    /// chance below one in 10^12 for every step of the run together.
    pub fn attempts_bound(&self) -> u32 {
        let (fitting, draws) = self.step_fit_share();
        if fitting >= draws {
            return 1;
        }
        assert!(fitting > 0, "validation keeps the store trips inside a quarter of the claim timeout");
        let miss = 1.0 - fitting as f64 / draws as f64;
        let steps = (u64::from(self.workload.instances) * u64::from(self.workload.steps)).max(1) as f64;
        let attempts = (steps.ln() + ATTEMPTS_MISS_LN) / -miss.ln();
        (attempts.ceil() as u32).max(1)
    }

    /// The longest step the scenario runs to its end: up to `workload.step_duration_max`,
    /// or twice the claim timeout under slow steps, and never past the per-step timeout. A
    /// hung step is no step that ends: it is not counted.
    pub fn longest_step(&self) -> Duration {
        let (t, f) = (&self.timeouts, &self.faults);
        let slow = if f.slow_step.per_step.is_never() { Duration::ZERO } else { t.claim_timeout * 2 };
        let longest = self.workload.step_duration_max.max(slow);
        match f.cancel.step_timeout {
            d if d.is_zero() => longest,
            d => longest.min(d),
        }
    }

    /// The longest one owner may keep an instance's claim alive without a break (what
    /// `claim-tenure` judges, R24): the longest step, and the claim timeout past each of
    /// [`TENURE_GRANTS_MAX`] grants. A claim is alive from its grant until a write clears
    /// it or it goes stale; only a same-owner re-claim while it is alive extends it. Spec
    /// 000's runtime re-claims only while it has no answer to its claim — a claim sent
    /// again after its reply was lost — so a claim is renewed by at most the
    /// `RETRY_ATTEMPTS_MAX` claims of one claim loop, and those of the exit path of a worker
    /// aborted while it claimed; each renewal lands within the claim timeout of the last,
    /// or the claim had gone stale and the renewal starts a new tenure. A step never renews
    /// it; the step is counted so that a design that renews during a step is flagged only
    /// for a step that outlasts every step the scenario can run — one that hangs.
    pub fn claim_tenure_bound(&self) -> Duration {
        self.longest_step() + self.timeouts.claim_timeout.saturating_mul(TENURE_GRANTS_MAX)
    }

    /// One more attempt at a step whose claim was lost: the trigger handed back (a relay
    /// requeued, a timer deferred by at most the backoff cap) and the step run again.
    pub fn retry_bound(&self) -> Duration {
        self.step_bound() + self.timeouts.timer_backoff_max
    }

    /// What the faults of the faulty phase can have left behind at the heal, each of which
    /// runs out by itself: a dead or slow owner's claim goes stale (a slow step lasts at most
    /// twice the claim timeout) and is swept within two sweep intervals once a lapsed lease
    /// is taken over; a timer picked by a dead poller comes back after its fire lease; a
    /// refused fire waits at most the backoff cap (a few times); a task locked by a lost
    /// worker comes back after its lock; a delayed, late or ambiguous call or delivery lands
    /// or times out; a hung step holds its lane and its relay until the per-step timeout.
    pub fn recovery_bound(&self) -> Duration {
        let (t, f) = (&self.timeouts, &self.faults);
        let hung = if f.hung_step.per_step.is_never() { Duration::ZERO } else { f.cancel.step_timeout };
        hung + t.claim_timeout * 2
            + t.sweep_interval * 2
            + t.lease_duration
            + t.timer_fire_lease
            + t.timer_backoff_max * 4
            + t.task_lock_duration
            + f.broker.delay_max
            + f.timer_jitter.late_max
            + f.store.unavailable_max
            + f.store.latency_spike_max
            + f.store_replies.client_timeout
            + f.store_replies.boundary_pause_max
    }

    /// One step, once nothing is left over from the faults: its longest wait (a relay's
    /// delay and requeues, a timer's delay and the poll that sees it, a pull task's work)
    /// and its duration, with the store calls around it.
    pub fn step_bound(&self) -> Duration {
        let (t, w) = (&self.timeouts, &self.workload);
        w.step_duration_max
            + w.relay_delay_max.max(w.timer_delay_max).max(w.pull_work_max)
            + t.requeue_delay * 2
            + t.timer_poll_interval
            + t.store_latency_max * 8
            + t.broker_liveness_interval
    }

    /// The most simulated time a run of the correct model may take: the faulty phase, a
    /// recovery and every instance's own chain of steps, plus all the work queued behind
    /// the resources instances share — the pull workers' tasks, and the steps of the busiest
    /// lane — as if none of it overlapped.
    pub fn run_time_bound(&self) -> Duration {
        let (t, w, top) = (&self.timeouts, &self.workload, &self.topology);
        let store_calls = t.store_latency_max * 8;
        let retries = self.attempts_bound() - 1;
        let chain = (self.step_bound() + self.retry_bound().saturating_mul(retries)).saturating_mul(w.steps);
        let pull_queue = match top.pull_workers {
            0 => Duration::ZERO,
            workers => (w.pull_work_max + store_calls) * saturate(self.pull_tasks_bound().div_ceil(u64::from(workers))),
        };
        let lane_steps = self.busiest_lane_instances_bound() * u64::from(w.steps);
        let lane_queue = (w.step_duration_max + store_calls)
            .saturating_mul(saturate(lane_steps))
            .saturating_mul(self.attempts_bound());
        self.phases.heal_at + self.progress_bound() + chain + pull_queue + lane_queue
    }

    /// The most events a run of the correct model may emit.
    pub fn events_bound(&self) -> u64 {
        let steps = u64::from(self.workload.instances) * u64::from(self.workload.steps);
        let ticks = ticks(self.phases.heal_at, self.faults.tick);
        // Only the lease holder sweeps; every process runs its other roles.
        let sweeps = EVENTS_PER_ROUND * rounds_per_second(self.timeouts.sweep_interval);
        let seconds = seconds(self.run_time_bound()) as f64;
        EVENTS_PER_STEP
            .saturating_mul(steps)
            .saturating_mul(u64::from(self.attempts_bound()))
            .saturating_add(self.over_the_run(EVENTS_PER_PROCESS_SECOND))
            .saturating_add((sweeps * seconds).ceil() as u64)
            .saturating_add(EVENTS_PER_PROCESS_TICK.saturating_mul(self.processes()).saturating_mul(ticks))
    }

    /// The most task polls a run of the correct model may take.
    pub fn polls_bound(&self) -> u64 {
        let ticks = ticks(self.phases.heal_at, self.faults.tick);
        let t = &self.timeouts;
        let rounds = [
            t.sweep_interval,
            t.lease_duration,
            t.timer_poll_interval,
            t.broker_liveness_interval,
            crate::workload::DRIVER_POLL_INTERVAL,
        ]
        .into_iter()
        .map(rounds_per_second)
        .sum::<f64>();
        POLLS_PER_EVENT
            .saturating_mul(self.events_bound())
            .saturating_add(self.over_the_run(POLLS_PER_PROCESS_SECOND + POLLS_PER_ROUND * rounds))
            .saturating_add(self.processes().saturating_mul(ticks))
    }

    /// Refuses budgets the correct model can overrun, naming what the work needs.
    pub(crate) fn budgets_fit_the_work(&self) -> Result<(), String> {
        let needed = self.run_time_bound();
        if self.run.sim_time_max < needed {
            // Whole seconds, rounded up, so the value can be pasted into the file.
            let needed = Duration::from_secs(seconds(needed));
            return Err(format!(
                "run.sim_time_max ({}) is shorter than a run of this workload may take ({}: the heal at {}, a \
                 recovery and each instance's {} step(s), {} pull task(s) on {} pull worker(s) and {} step(s) on the \
                 busiest lane, at their longest{}); raise it to at least {}{}",
                format_duration(self.run.sim_time_max),
                format_duration(needed),
                format_duration(self.phases.heal_at),
                self.workload.steps,
                self.pull_tasks_bound(),
                self.topology.pull_workers,
                self.busiest_lane_instances_bound() * u64::from(self.workload.steps),
                self.attempts_text(),
                format_duration(needed),
                if needed > crate::scenario::DURATION_MAX {
                    " — which is past the longest a scenario may give: fewer instances or steps, or more pull workers"
                } else {
                    ""
                }
            ));
        }
        for (key, have, needed, most) in [
            ("run.events_max", self.run.events_max, self.events_bound(), crate::scenario::EVENTS_MAX),
            ("run.polls_max", self.run.polls_max, self.polls_bound(), crate::scenario::POLLS_MAX),
        ] {
            if have < needed {
                return Err(format!(
                    "{key} ({have}) is below what a run of this workload may take ({needed}, for {} instance(s) of {} \
                     step(s) on {} process(es) over up to {}{}); raise it to at least {needed}{}",
                    self.workload.instances,
                    self.workload.steps,
                    self.processes(),
                    format_duration(self.run_time_bound()),
                    self.attempts_text(),
                    if needed > most {
                        format!(" — which is past the most a scenario may give ({most}): fewer instances or steps")
                    } else {
                        String::new()
                    }
                ));
            }
        }
        Ok(())
    }

    /// Says, in a budget's refusal, that steps may take several attempts; empty when they
    /// fit in their claims.
    fn attempts_text(&self) -> String {
        match self.attempts_bound() {
            1 => String::new(),
            n => format!(
                ", each step up to {n} attempts: steps of up to {} outlast the claim timeout ({}) and may be stolen and tried again",
                format_duration(self.workload.step_duration_max),
                format_duration(self.timeouts.claim_timeout)
            ),
        }
    }

    /// Steps that may wait for a pull task: a draw of each non-first step's kind.
    pub fn pull_tasks_bound(&self) -> u64 {
        let w = &self.workload;
        let total = w.relay_weight + w.timer_weight + w.pull_weight;
        let draws = u64::from(w.instances) * u64::from(w.steps.saturating_sub(1));
        high_quantile(draws, f64::from(w.pull_weight) / f64::from(total.max(1)))
    }

    /// Instances the busiest lane may be routed: instance-hash routing spreads them over
    /// every lane of every replica, as a draw would.
    pub fn busiest_lane_instances_bound(&self) -> u64 {
        let lanes = self.topology.replicas * self.topology.lanes;
        high_quantile(u64::from(self.workload.instances), 1.0 / f64::from(lanes.max(1)))
    }

    /// A rate per process and simulated second, over every process and the longest run.
    fn over_the_run(&self, per_process_second: f64) -> u64 {
        let total = per_process_second * self.processes() as f64 * seconds(self.run_time_bound()) as f64;
        // A float past u64::MAX converts to u64::MAX: the bound saturates.
        total.ceil() as u64
    }

    /// Replicas and pull workers, and one for the broker and the harness.
    fn processes(&self) -> u64 {
        u64::from(self.topology.replicas) + u64::from(self.topology.pull_workers) + 1
    }
}

/// A count of `draws` trials of probability `p` that is exceeded with negligible
/// probability: the mean plus eight standard deviations plus eight, at most `draws`.
fn high_quantile(draws: u64, p: f64) -> u64 {
    if p <= 0.0 {
        return 0;
    }
    let n = draws as f64;
    let bound = n * p + 8.0 * (n * p * (1.0 - p)).sqrt() + 8.0;
    (bound.ceil() as u64).min(draws)
}

fn saturate(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// How often a role that runs every `interval` runs per simulated second.
fn rounds_per_second(interval: Duration) -> f64 {
    1.0 / interval.as_secs_f64().max(1e-9)
}

fn seconds(d: Duration) -> u64 {
    d.as_secs() + 1
}

/// Fault ticks in the faulty phase.
fn ticks(heal_at: Duration, tick: Duration) -> u64 {
    u64::try_from(heal_at.as_nanos() / tick.as_nanos().max(1)).unwrap_or(u64::MAX) + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_scenario_fits_its_budgets() {
        for s in Scenario::all_built_in() {
            assert!(s.run.sim_time_max >= s.run_time_bound(), "{}", s.name);
            assert!(s.run.events_max >= s.events_bound(), "{}", s.name);
        }
    }

    #[test]
    fn more_work_on_one_pull_worker_needs_more_time() {
        let small = Scenario::built_in("smoke").unwrap();
        let mut big = small.clone();
        big.workload.instances = 600;
        assert!(big.pull_tasks_bound() > 10 * small.pull_tasks_bound());
        assert!(big.run_time_bound() > small.run_time_bound() + Duration::from_secs(3_600));
        let mut more_workers = big.clone();
        more_workers.topology.pull_workers = 8;
        assert!(more_workers.run_time_bound() < big.run_time_bound());
    }

    #[test]
    fn a_budget_the_work_can_overrun_is_refused_naming_what_it_needs() {
        let mut s = Scenario::built_in("smoke").unwrap();
        s.workload.instances = 600;
        let e = s.validate().unwrap_err();
        assert!(e.contains("run.sim_time_max (1h) is shorter than a run of this workload may take"), "{e}");
        s.run.sim_time_max = s.run_time_bound();
        let e = s.validate().unwrap_err();
        assert!(e.contains("run.events_max (200000) is below"), "{e}");
        s.run.events_max = s.events_bound();
        s.run.polls_max = s.polls_bound();
        assert_eq!(s.validate(), Ok(()));
    }

    #[test]
    fn a_time_limit_just_after_the_heal_is_refused() {
        let mut s = Scenario::built_in("smoke").unwrap();
        s.run.sim_time_max = s.phases.heal_at + Duration::from_secs(1);
        assert!(s.validate().unwrap_err().contains("run.sim_time_max"));
    }

    #[test]
    fn steps_that_fit_their_claims_take_one_attempt_and_the_bounds_stay_as_they_were() {
        for s in Scenario::all_built_in().into_iter().filter(|s| s.name != "short-claim-timeout") {
            assert_eq!(s.step_fit_share().0, s.step_fit_share().1, "{}", s.name);
            assert_eq!(s.attempts_bound(), 1, "{}", s.name);
            assert_eq!(s.progress_bound(), s.recovery_bound() + s.step_bound(), "{}", s.name);
        }
    }

    #[test]
    fn steps_longer_than_the_claim_timeout_take_attempts_that_all_miss_less_than_once_in_10_to_the_12() {
        let mut s = Scenario::built_in("smoke").unwrap();
        s.timeouts.claim_timeout = Duration::from_secs(2);
        s.workload.step_duration_max = Duration::from_secs(3);
        // Draws 0..=3000 ms; those below 2 s less six 4 ms trips fit: 1976 of 3001.
        assert_eq!(s.step_fit_share(), (1976, 3001));
        let n = s.attempts_bound();
        let miss: f64 = 1.0 - 1976.0 / 3001.0;
        let steps = f64::from(s.workload.instances * s.workload.steps);
        assert!(steps * miss.powi(n as i32) < 1e-12, "{n}");
        assert!(steps * miss.powi(n as i32 - 1) >= 9e-13, "{n} is one more than needed");
        assert_eq!(s.progress_bound(), s.recovery_bound() + s.step_bound() + s.retry_bound() * (n - 1));
        // A shorter claim timeout needs more attempts, and more time.
        let mut shorter = s.clone();
        shorter.timeouts.claim_timeout = Duration::from_millis(500);
        assert!(shorter.attempts_bound() > n);
        assert!(shorter.run_time_bound() > s.run_time_bound());
    }

    #[test]
    fn a_budget_refusal_names_the_attempts_of_steps_that_outlast_their_claims() {
        let mut s = Scenario::built_in("smoke").unwrap();
        s.timeouts.claim_timeout = Duration::from_secs(2);
        s.workload.step_duration_max = Duration::from_secs(3);
        for delay in
            [&mut s.faults.broker.delay_max, &mut s.faults.store.latency_spike_max, &mut s.faults.timer_jitter.late_max]
        {
            *delay = (*delay).min(s.timeouts.claim_timeout);
        }
        s.faults.store_replies.client_timeout = Duration::from_millis(400);
        let e = s.validate().unwrap_err();
        assert!(e.contains("attempts: steps of up to 3s outlast the claim timeout (2s)"), "{e}");
    }

    #[test]
    fn the_high_quantile_is_past_the_mean_and_never_past_the_draws() {
        assert_eq!(high_quantile(100, 0.0), 0);
        assert_eq!(high_quantile(10, 0.5), 10);
        let q = high_quantile(12_000, 0.125);
        assert!(q > 1_500 && q < 1_900, "{q}");
    }
}

//! The relations between scenario keys that every valid scenario keeps (DESIGN.md §8: a
//! valid scenario is one the correct model survives). Each is derived from how the model
//! uses the keys — the store client's retries, the sweeper's lease, the pull workers' task
//! locks, the per-step timeout — and refuses, naming the relation, a value no deployment
//! could survive either. `docs/scenarios.md` lists them for users.
//!
//! Left to the liveness rework: how `run.sim_time_max`, `run.events_max` and `run.polls_max`
//! relate to the work.

use std::time::Duration;

use sutra_sim_core::format_duration;

use crate::injector::swarm::SCALE_MAX_PERMILLE;
use crate::ratio::Ratio;
use crate::scenario::Scenario;
use crate::spec::RETRY_HORIZON;

/// Shortest period of a periodic role (the fault tick, the timer poll, the sweep, the
/// broker's liveness check).
pub const PERIOD_MIN: Duration = Duration::from_millis(1);
/// Longest store outage: a fifth of the store client's retry horizon.
pub const OUTAGE_MAX: Duration = Duration::from_secs(RETRY_HORIZON.as_secs() / 5);
/// Largest share of the time store outages may cover, `1 / OUTAGE_SHARE_INVERSE`.
pub const OUTAGE_SHARE_INVERSE: u64 = 4;
/// Largest chance that the store aborts a call, `1 / ABORT_INVERSE`.
pub const ABORT_INVERSE: u64 = 10;
/// Largest chance that a store call's request or reply is lost, `1 / LOST_INVERSE`.
pub const LOST_INVERSE: u64 = 4;
/// Largest chance that a step's attempt fails, `1 / ATTEMPT_FAILURE_INVERSE`.
pub const ATTEMPT_FAILURE_INVERSE: u64 = 2;

/// Checks every relation; the first broken one is the error.
pub fn check(s: &Scenario) -> Result<(), String> {
    periodic_roles(s)?;
    store_trips_within_claim(s)?;
    store_outages(s)?;
    store_aborts(s)?;
    store_replies_mostly_arrive(s)?;
    lease_outlasts_a_sweep(s)?;
    fire_lease_outlasts_a_fire(s)?;
    task_lock_outlasts_pull_work(s)?;
    attempts_mostly_succeed(s)?;
    hung_steps_are_timed_out(s)?;
    spans_end_after_the_heal(s)?;
    Ok(())
}

fn d(v: Duration) -> String {
    format_duration(v)
}

fn nanos(v: Duration) -> u128 {
    v.as_nanos()
}

/// `rate` as the most a swarm draw may make of it: the swarm scales rates up to
/// [`SCALE_MAX_PERMILLE`], as (numerator, denominator).
fn worst_rate(s: &Scenario, rate: Ratio) -> (u128, u128) {
    let (n, den) = rate.parts();
    let scale = if s.faults.swarm { u128::from(SCALE_MAX_PERMILLE) } else { 1000 };
    (u128::from(n) * scale, u128::from(den) * 1000)
}

/// Every period is at least one poll of the executor, over the whole run: a role waking
/// more often than once a millisecond — the resolution at which the model draws its spans
/// and latencies — adds no schedule a coarser one lacks, and polls past any budget (a 1 ns
/// broker liveness interval ran every seed over its polls budget in 2 ms).
fn periodic_roles(s: &Scenario) -> Result<(), String> {
    let t = &s.timeouts;
    for (key, period) in [
        ("faults.tick", s.faults.tick),
        ("timeouts.timer_poll_interval", t.timer_poll_interval),
        ("timeouts.sweep_interval", t.sweep_interval),
        ("timeouts.broker_liveness_interval", t.broker_liveness_interval),
    ] {
        if period < PERIOD_MIN {
            return Err(format!(
                "{key} ({}) must be at least {}: a periodic role must not poll more often than once a millisecond, the resolution of the model's spans",
                d(period),
                d(PERIOD_MIN)
            ));
        }
    }
    Ok(())
}

/// A claim outlives its own store trips — the claim's reply, the read and the commit, six
/// one-way latencies — by far, at most a quarter of the claim timeout. The step's own work
/// may outlast the claim timeout: that is spec 000's tuning trade ("a short claim timeout
/// … risks stealing an instance from a live-but-slow one — which the claim's own
/// compare-and-set then makes safe"), and the model survives it: the slow owner's commit is
/// owner-conditional and matches nothing once its claim was swept or stolen (R19), and its
/// trigger is handed back for another attempt. What the model cannot survive is a claim
/// that no step can keep: with the trips inside a quarter of the timeout, at least the
/// steps that end within three quarters of it commit, so every attempt has a share of its
/// draws that commits, and the progress bound and the budgets count the attempts
/// ([`Scenario::attempts_bound`]). R16 ("steps far shorter than the claim timeout") is the
/// spec's default, kept by every built-in scenario but `short-claim-timeout`.
fn store_trips_within_claim(s: &Scenario) -> Result<(), String> {
    let t = &s.timeouts;
    if t.store_latency_max * 6 * 4 > t.claim_timeout {
        return Err(format!(
            "six store trips of timeouts.store_latency_max ({}) must be far below timeouts.claim_timeout ({}), at most a quarter of it: a step's claim, read and commit must fit in its claim with room for the step (R16, R19)",
            d(t.store_latency_max),
            d(t.claim_timeout)
        ));
    }
    Ok(())
}

/// The store client retries a refused call for its retry horizon (24 attempts, backing off
/// to 1 s). A call fails only if every attempt lands in an outage (or aborts), so the model
/// survives outages that are short next to the horizon — it must have retries left after one
/// outage to ride out the next — and that cover a small share of the time: outages start
/// `unavailable_per_tick` per `tick` and each lasts up to `unavailable_max`, so they cover
/// at most `unavailable_per_tick × unavailable_max / tick` of the time (the swarm may double
/// the rate). At a fifth of the horizon and a quarter of the time, with aborts at a tenth, a
/// simulation of the client put the chance that one call fails below 1 in 10^8; at a 1 ms
/// tick (outages always on) one seed in seven crashed.
fn store_outages(s: &Scenario) -> Result<(), String> {
    let store = &s.faults.store;
    if store.unavailable_per_tick.is_never() {
        return Ok(());
    }
    if store.unavailable_max > OUTAGE_MAX {
        return Err(format!(
            "faults.store.unavailable_max ({}) may be at most {}, a fifth of the store client's retry horizon ({}): after one outage the client must have retries left to ride out the next",
            d(store.unavailable_max),
            d(OUTAGE_MAX),
            d(RETRY_HORIZON)
        ));
    }
    let (n, den) = worst_rate(s, store.unavailable_per_tick);
    if n * nanos(store.unavailable_max) * u128::from(OUTAGE_SHARE_INVERSE) > den * nanos(s.faults.tick) {
        return Err(format!(
            "store outages may cover at most 1/{OUTAGE_SHARE_INVERSE} of the time the client's retries span: faults.store.unavailable_per_tick ({}{}) x faults.store.unavailable_max ({}) / faults.tick ({}) is more",
            store.unavailable_per_tick,
            if s.faults.swarm { ", doubled by the swarm" } else { "" },
            d(store.unavailable_max),
            d(s.faults.tick)
        ));
    }
    Ok(())
}

/// An aborted attempt is one more the client spends: aborts must leave it enough attempts
/// to outlast an outage (see [`store_outages`]); always aborting, every call failed.
fn store_aborts(s: &Scenario) -> Result<(), String> {
    let (n, den) = worst_rate(s, s.faults.store.abort_per_call);
    if n * u128::from(ABORT_INVERSE) > den {
        return Err(format!(
            "faults.store.abort_per_call ({}{}) may be at most 1/{ABORT_INVERSE}: the store client's retries must outlast aborts and outages together",
            s.faults.store.abort_per_call,
            if s.faults.swarm { ", doubled by the swarm" } else { "" }
        ));
    }
    Ok(())
}

/// A client sends a call whose request or reply was lost again, up to 24 times
/// (`RETRY_ATTEMPTS_MAX`), then gives up — a lane's claim, read or release panics. Until the
/// heal every attempt may be lost: at a loss rate of 1 a claim failed 24 times in a row
/// whenever the faulty phase outlasted 24 client timeouts (`short-claim-timeout`'s 400 ms
/// timeout under a 40 s phase crashed at once; scenarios with 2 s timeouts survived it by
/// luck). At a quarter, 24 losses in a row come once in 10^14 calls.
fn store_replies_mostly_arrive(s: &Scenario) -> Result<(), String> {
    let r = &s.faults.store_replies;
    let (n1, d1) = worst_rate(s, r.request_lost_per_call);
    let (n2, d2) = worst_rate(s, r.reply_lost_per_call);
    if (n1 * d2 + n2 * d1) * u128::from(LOST_INVERSE) > d1 * d2 {
        return Err(format!(
            "faults.store_replies.request_lost_per_call ({}) + faults.store_replies.reply_lost_per_call ({}){} may be at most 1/{LOST_INVERSE}: a client gives up on a call after {} unanswered attempts",
            r.request_lost_per_call,
            r.reply_lost_per_call,
            if s.faults.swarm { ", doubled by the swarm" } else { "" },
            crate::spec::RETRY_ATTEMPTS_MAX
        ));
    }
    Ok(())
}

/// The sweeper acquires its lease, then selects and clears stale claims, each statement
/// checking the lease at the store: from the grant to the first clear are four one-way
/// latencies (the grant's reply, the select's request and reply, the clear's request). A
/// lease that lapses within them never sweeps anything (a 1 ns lease left an operator's
/// claim held forever).
fn lease_outlasts_a_sweep(s: &Scenario) -> Result<(), String> {
    let t = &s.timeouts;
    if t.lease_duration <= t.store_latency_max * 4 {
        return Err(format!(
            "the sweeper lease must outlast one sweep: timeouts.lease_duration ({}) must be more than four one-way store latencies (timeouts.store_latency_max {})",
            d(t.lease_duration),
            d(t.store_latency_max)
        ));
    }
    Ok(())
}

/// A poller hides the timers it picks for their fire lease; once it lapses, the next poll
/// picks the timer again and fires it a second time, and a second fire before the first
/// commits finds the claim held and bounces — in a run without contention, past R13's
/// meter (a 1 ns fire lease did). Until it commits, a fire waits for the pick's reply, for
/// the poller's earlier dispatches and for the steps queued ahead of it at its lane: each a
/// step of another instance (an instance has one trigger pending), so at most one step of
/// every instance, its own included, each with its six store trips. (A fire lease of four
/// steps still bounced in one quiet seed in 100.) Under contention faults duplicate fires
/// are fair game (`racing-timers` races them on purpose), so this binds only a scenario
/// that can run quiet: no contention fault configured, or a swarm that may switch them all
/// off, and no migrations.
fn fire_lease_outlasts_a_fire(s: &Scenario) -> Result<(), String> {
    let (w, t) = (&s.workload, &s.timeouts);
    let can_run_quiet = (s.faults.swarm || !s.faults.contention_expected()) && s.admin.migration_per_tick.is_never();
    if w.timer_weight == 0 || !can_run_quiet {
        return Ok(());
    }
    let step = w.step_duration_max + t.store_latency_max * 6;
    let fire = t.store_latency_max + step * w.instances;
    if t.timer_fire_lease <= fire {
        return Err(format!(
            "in a run without contention the timer fire lease must outlast a fire: timeouts.timer_fire_lease ({}) must be more than {}, the pick's reply and one step of each of the {} instances (workload.step_duration_max {} with six store trips of timeouts.store_latency_max {})",
            d(t.timer_fire_lease),
            d(fire),
            w.instances,
            d(w.step_duration_max),
            d(t.store_latency_max)
        ));
    }
    Ok(())
}

/// A pull worker locks a task, works up to `pull_work_max`, and completes while it still
/// holds the lock: the completion reaches the store after the lock's reply, the work and
/// the completion's request. A lock shorter than that expires under every long task, which
/// then never completes (a 1 ms lock: every seed failed).
fn task_lock_outlasts_pull_work(s: &Scenario) -> Result<(), String> {
    let (w, t) = (&s.workload, &s.timeouts);
    if s.topology.pull_workers == 0 || w.pull_weight == 0 {
        return Ok(());
    }
    if t.task_lock_duration <= w.pull_work_max + t.store_latency_max * 2 {
        return Err(format!(
            "the task lock must outlast the longest pull work: timeouts.task_lock_duration ({}) must be more than workload.pull_work_max ({}) and two one-way store latencies ({} each)",
            d(t.task_lock_duration),
            d(w.pull_work_max),
            d(t.store_latency_max)
        ));
    }
    Ok(())
}

/// A step's attempt fails on a drawn error (validation, unexpected failure, panic) or when
/// the per-step timeout cuts a normal step (durations are drawn up to `step_duration_max`,
/// so the timeout cuts the share above it); each failure is retried. Failures are rare
/// (DESIGN.md §4); an attempt that always fails never completes its step (a 1 ns per-step
/// timeout cut nearly every step). At most half the attempts may fail.
fn attempts_mostly_succeed(s: &Scenario) -> Result<(), String> {
    let w = &s.workload;
    // In millionths, rounded up.
    let share = |r: Ratio| {
        let (n, den) = r.parts();
        (u128::from(n) * 1_000_000).div_ceil(u128::from(den))
    };
    let timeout = s.faults.cancel.step_timeout;
    let cut = if timeout.is_zero() || timeout >= w.step_duration_max {
        0
    } else {
        (nanos(w.step_duration_max - timeout) * 1_000_000).div_ceil(nanos(w.step_duration_max))
    };
    let failing = share(w.validation_error) + share(w.unexpected_failure) + share(w.panic) + cut;
    if failing * u128::from(ATTEMPT_FAILURE_INVERSE) > 1_000_000 {
        return Err(format!(
            "a step's attempt may fail at most 1/{ATTEMPT_FAILURE_INVERSE} of the time: workload.validation_error ({}) + workload.unexpected_failure ({}) + workload.panic ({}) + the share of steps up to workload.step_duration_max ({}) that faults.cancel.step_timeout ({}) cuts is more",
            w.validation_error,
            w.unexpected_failure,
            w.panic,
            d(w.step_duration_max),
            d(timeout)
        ));
    }
    Ok(())
}

/// A hung step never returns by itself: only the runtime's per-step timeout ends it. Without
/// one, the hung execution keeps its lane, its broker delivery and that delivery's prefetch
/// slot for ever — the claim goes stale and is swept, but the relay it runs for is never
/// redelivered to a live consumer, so the instance never moves again.
fn hung_steps_are_timed_out(s: &Scenario) -> Result<(), String> {
    let f = &s.faults;
    if !f.hung_step.per_step.is_never() && f.cancel.step_timeout.is_zero() {
        return Err(format!(
            "faults.hung_step.per_step ({}) needs faults.cancel.step_timeout: a hung step never returns, and only the per-step timeout ends it (without one it keeps its lane and its relay for ever)",
            f.hung_step.per_step
        ));
    }
    Ok(())
}

/// The heal resumes paused processes and restarts dead ones, but a delay already drawn —
/// a relay held back by the broker, a latency spike, a late timer — runs its course after
/// it. Liveness after the heal allows the claim timeout for recovery: such a span must end
/// within it (a 24 h broker delay left instances unfinished for a day).
fn spans_end_after_the_heal(s: &Scenario) -> Result<(), String> {
    let f = &s.faults;
    let claim = s.timeouts.claim_timeout;
    for (key, span, rate) in [
        ("faults.broker.delay_max", f.broker.delay_max, f.broker.delay_per_delivery),
        ("faults.store.latency_spike_max", f.store.latency_spike_max, f.store.latency_spike_per_call),
        ("faults.timer_jitter.late_max", f.timer_jitter.late_max, f.timer_jitter.late_per_fire),
    ] {
        if !rate.is_never() && span > claim {
            return Err(format!(
                "{key} ({}) may be at most timeouts.claim_timeout ({}): a delay the heal does not end must end within the claim timeout",
                d(span),
                d(claim)
            ));
        }
    }
    Ok(())
}

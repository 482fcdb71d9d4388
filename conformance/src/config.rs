//! A run's parameters: the topology, the workload, the protocol's timeouts and the harness's
//! fault rates. Units end the names. The timeouts are the ones the checkers read, so the
//! history's header carries them (see [`crate::history::scenario_toml`]).

use crate::db::Target;
use crate::variant::Variant;

/// Everything one run needs.
#[derive(Clone, Debug)]
pub struct Config {
    /// The run's seed: the harness's plan (faults, step durations, triggers) derives from it.
    pub seed: u64,
    /// The SQL shape under test.
    pub variant: Variant,
    /// The database.
    pub target: Target,
    /// Replica processes (thread groups).
    pub replicas: u32,
    /// Execution lanes per process.
    pub lanes: u32,
    /// Instances, arriving over the first two thirds of the fault phase.
    pub instances: u32,
    /// Steps per instance.
    pub steps: u32,
    /// Longest step, in ms (each is drawn from 1..=this).
    pub step_max_ms: u64,
    /// Longest delay before a timer step is due, in ms.
    pub timer_delay_max_ms: u64,
    /// One in this many steps fails (validation error, unexpected failure or panic).
    pub step_error_one_in: u64,
    /// How long faults are injected, in ms; then the harness heals and waits for the work.
    pub fault_phase_ms: u64,
    /// How long the harness waits after the heal for every instance to complete, in ms.
    pub drain_max_ms: u64,
    /// The claim timeout, in ms (spec 000: staleness by the store's clock).
    pub claim_timeout_ms: u64,
    /// The sweeper's period, in ms.
    pub sweep_interval_ms: u64,
    /// The sweeper lease's duration, in ms.
    pub lease_duration_ms: u64,
    /// How long a picked timer stays hidden from other pollers, in ms.
    pub timer_fire_lease_ms: u64,
    /// The timer poller's period, in ms.
    pub timer_poll_interval_ms: u64,
    /// The first refused fire's backoff, in ms.
    pub timer_backoff_base_ms: u64,
    /// The backoff's cap, in ms.
    pub timer_backoff_max_ms: u64,
    /// How long a requeued relay waits before it is ready again, in ms.
    pub requeue_delay_ms: u64,
    /// The longest one broker call takes, from the lane's call to the broker's witness of
    /// it, in ms: what this deployment declares in its history's header
    /// (`broker_call_latency_max_ns`). The in-process broker answers in microseconds when
    /// the machine is quiet; the declaration covers a loaded machine's scheduling and the
    /// broker's own witness transaction waiting behind the store's writers.
    pub broker_call_latency_max_ms: u64,
    /// Unsettled deliveries a consumer may hold.
    pub prefetch: u32,
    /// A consumer silent this long has its deliveries taken back by the broker, in ms.
    pub broker_liveness_ms: u64,
    /// The pause between a two-step sweep's select and each of its clears, in ms: the
    /// sweeper's own work on the selected rows, the window River #1302 lost its jobs in.
    pub sweep_clear_gap_ms: u64,
    /// The harness's faults.
    pub faults: FaultRates,
}

/// The harness's fault rates, per tick of [`FaultRates::tick_ms`], in permille.
#[derive(Clone, Debug)]
pub struct FaultRates {
    /// The harness's tick, in ms.
    pub tick_ms: u64,
    /// A replica process crashes (every thread stops where it is; a new process restarts it).
    pub crash_per_mille: u32,
    /// A replica process is paused past the claim timeout.
    pub pause_per_mille: u32,
    /// A lane thread is killed in the middle of its next step, with no exit path.
    pub lane_kill_per_mille: u32,
    /// A replica's clock is set off the store's (up to [`FaultRates::clock_offset_max_ms`]).
    pub clock_offset_per_mille: u32,
    /// The largest clock offset, in ms, either way.
    pub clock_offset_max_ms: u64,
    /// A delivery is routed to the wrong lane, per delivery.
    pub misroute_per_mille: u32,
}

impl FaultRates {
    /// No faults at all.
    pub fn none() -> FaultRates {
        FaultRates {
            tick_ms: 50,
            crash_per_mille: 0,
            pause_per_mille: 0,
            lane_kill_per_mille: 0,
            clock_offset_per_mille: 0,
            clock_offset_max_ms: 0,
            misroute_per_mille: 0,
        }
    }

    /// Every fault the harness has, at rates that hit a few-second run several times each.
    pub fn all() -> FaultRates {
        FaultRates {
            tick_ms: 50,
            crash_per_mille: 40,
            pause_per_mille: 50,
            lane_kill_per_mille: 60,
            clock_offset_per_mille: 20,
            clock_offset_max_ms: 150,
            misroute_per_mille: 100,
        }
    }

    /// Whether any fault is on.
    pub fn any(&self) -> bool {
        self.crash_per_mille
            + self.pause_per_mille
            + self.lane_kill_per_mille
            + self.clock_offset_per_mille
            + self.misroute_per_mille
            > 0
    }
}

impl Config {
    /// The defaults of a few-second run of `variant` on `target`, every fault on.
    pub fn new(seed: u64, variant: Variant, target: Target) -> Config {
        let mut c = Config {
            seed,
            variant,
            target,
            replicas: 3,
            lanes: 2,
            instances: 40,
            steps: 6,
            step_max_ms: 40,
            timer_delay_max_ms: 100,
            step_error_one_in: 25,
            fault_phase_ms: 3_000,
            drain_max_ms: 20_000,
            claim_timeout_ms: 300,
            sweep_interval_ms: 100,
            lease_duration_ms: 400,
            timer_fire_lease_ms: 600,
            timer_poll_interval_ms: 20,
            timer_backoff_base_ms: 20,
            timer_backoff_max_ms: 200,
            requeue_delay_ms: 30,
            broker_call_latency_max_ms: 1_000,
            prefetch: 4,
            broker_liveness_ms: 150,
            sweep_clear_gap_ms: 20,
            faults: FaultRates::all(),
        };
        if variant.short_claim_timeout() {
            // Spec 000's tuning trade: a claim timeout shorter than the steps (hexpm #1825's
            // shape). Steps run 20..60 ms; claims go stale at 15 ms and are swept every 25.
            c.claim_timeout_ms = 15;
            c.sweep_interval_ms = 25;
            c.step_max_ms = 60;
        }
        c
    }

    /// The shortest step, in ms.
    pub fn step_min_ms(&self) -> u64 {
        if self.variant.short_claim_timeout() {
            20
        } else {
            5
        }
    }
}

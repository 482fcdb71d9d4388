//! The fault options of a scenario: one typed, documented struct per fault kind, each
//! deserialised from its own `[faults.KIND]` table. Every rate is a ratio (`"1/50"`), every
//! span a duration string with its unit, and every kind is off unless the scenario says so.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use sutra_sim_core::time::serde_duration;

use crate::ratio::Ratio;

/// Replica crash: the process dies at an arbitrary await point, no exit path runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReplicaCrashOptions {
    /// Chance per fault tick that an alive replica is killed.
    pub per_tick: Ratio,
    /// Longest a killed replica stays dead before it restarts as a new incarnation.
    #[serde(with = "serde_duration")]
    pub restart_delay_max: Duration,
    /// Chance that a killed replica stays dead until the heal.
    pub stays_dead: Ratio,
    /// Chance per fault tick that an alive pull worker is killed (mid-task or idle); it
    /// restarts within `restart_delay_max`, and its task lock is left to expire. Left out of
    /// a scenario file when never.
    #[serde(skip_serializing_if = "is_never")]
    pub pull_worker_per_tick: Ratio,
}

impl Default for ReplicaCrashOptions {
    fn default() -> Self {
        ReplicaCrashOptions {
            per_tick: Ratio::NEVER,
            restart_delay_max: Duration::from_secs(20),
            stays_dead: Ratio::NEVER,
            pull_worker_per_tick: Ratio::NEVER,
        }
    }
}

/// Process pause: the process freezes (GC, VM pause) and later carries on where it was.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProcessPauseOptions {
    /// Chance per fault tick that an alive replica is frozen.
    pub per_tick: Ratio,
    /// Longest pause; pauses past the claim timeout make live-but-slow owners.
    #[serde(with = "serde_duration")]
    pub pause_max: Duration,
    /// Chance that a replacement with the same replica identity starts while the frozen
    /// process is out; the old one wakes later as a zombie with stale claims.
    pub replacement: Ratio,
    /// Chance per fault tick that an alive pull worker is frozen (up to `pause_max`): one
    /// frozen past its task lock finds the lock expired, perhaps taken over, when it wakes.
    /// Left out of a scenario file when never.
    #[serde(skip_serializing_if = "is_never")]
    pub pull_worker_per_tick: Ratio,
}

impl Default for ProcessPauseOptions {
    fn default() -> Self {
        ProcessPauseOptions {
            per_tick: Ratio::NEVER,
            pause_max: Duration::from_secs(60),
            replacement: Ratio::NEVER,
            pull_worker_per_tick: Ratio::NEVER,
        }
    }
}

/// Mis-routing: work lands somewhere routing did not intend; the claim must bounce it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MisrouteOptions {
    /// Chance per relay or timer dispatch that it goes to the wrong lane.
    pub per_delivery: Ratio,
    /// Share of mis-routed timer fires that go to another replica's lane instead.
    pub wrong_replica: Ratio,
    /// Chance per fault tick that the routing hash changes.
    pub hash_change_per_tick: Ratio,
}

impl Default for MisrouteOptions {
    fn default() -> Self {
        MisrouteOptions { per_delivery: Ratio::NEVER, wrong_replica: Ratio::NEVER, hash_change_per_tick: Ratio::NEVER }
    }
}

/// Clock skew: replica clocks off the store's, which stays authoritative.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClockSkewOptions {
    /// Largest offset given to a replica at start, either way.
    #[serde(with = "serde_duration")]
    pub offset_max: Duration,
    /// Largest drift, in parts per million, either way.
    pub drift_ppm_max: u32,
    /// Chance per fault tick that a replica's clock steps.
    pub step_per_tick: Ratio,
    /// Largest step, either way.
    #[serde(with = "serde_duration")]
    pub step_max: Duration,
}

impl Default for ClockSkewOptions {
    fn default() -> Self {
        ClockSkewOptions {
            offset_max: Duration::ZERO,
            drift_ppm_max: 0,
            step_per_tick: Ratio::NEVER,
            step_max: Duration::ZERO,
        }
    }
}

/// Broker faults: at-least-once delivery at its least convenient.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BrokerOptions {
    /// Chance per first delivery that the relay is delivered twice.
    pub duplicate_per_delivery: Ratio,
    /// Chance per publish that delivery is delayed.
    pub delay_per_delivery: Ratio,
    /// Longest such delay; at most the claim timeout (the heal does not cut it short).
    #[serde(with = "serde_duration")]
    pub delay_max: Duration,
    /// Chance per delivery that a later relay is delivered first.
    pub reorder_per_delivery: Ratio,
    /// How long a consumer may stay alive but silent (paused) before the broker takes its
    /// unacked relays back and redelivers them, as real brokers do after a consumer
    /// liveness timeout; zero, never (only a dead consumer's relays are taken back).
    #[serde(with = "serde_duration")]
    pub paused_consumer_timeout: Duration,
}

impl Default for BrokerOptions {
    fn default() -> Self {
        BrokerOptions {
            duplicate_per_delivery: Ratio::NEVER,
            delay_per_delivery: Ratio::NEVER,
            delay_max: Duration::from_secs(2),
            reorder_per_delivery: Ratio::NEVER,
            paused_consumer_timeout: Duration::ZERO,
        }
    }
}

/// Store faults. Only what the spec tolerates: an aborted or unavailable call writes
/// nothing; a committed write is never lost.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreOptions {
    /// Chance per call of a latency spike.
    pub latency_spike_per_call: Ratio,
    /// Longest spike; at most the claim timeout (the heal does not cut a spike short).
    #[serde(with = "serde_duration")]
    pub latency_spike_max: Duration,
    /// Chance per call that the transaction aborts (nothing written; the client retries);
    /// at most 1/10 (doubled under the swarm).
    pub abort_per_call: Ratio,
    /// Chance per fault tick that the store becomes unavailable for a while. Outages may
    /// cover at most 1/4 of the time: this rate (doubled under the swarm) times
    /// `unavailable_max` over `faults.tick`.
    pub unavailable_per_tick: Ratio,
    /// Longest unavailability: at most 3 s, a fifth of the store client's retry horizon.
    #[serde(with = "serde_duration")]
    pub unavailable_max: Duration,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            latency_spike_per_call: Ratio::NEVER,
            latency_spike_max: Duration::from_millis(500),
            abort_per_call: Ratio::NEVER,
            unavailable_per_tick: Ratio::NEVER,
            unavailable_max: Duration::from_secs(2),
        }
    }
}

/// Slow steps: a live step outlasts the claim timeout (a live-but-slow owner).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SlowStepOptions {
    /// Chance per step.
    pub per_step: Ratio,
}

impl Default for SlowStepOptions {
    fn default() -> Self {
        SlowStepOptions { per_step: Ratio::NEVER }
    }
}

/// Hung steps: a step's code never returns (a deadlocked client, a call with no timeout of
/// its own). Only the runtime's per-step timeout (`faults.cancel.step_timeout`) ends it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HungStepOptions {
    /// Chance per step that it hangs.
    pub per_step: Ratio,
}

impl Default for HungStepOptions {
    fn default() -> Self {
        HungStepOptions { per_step: Ratio::NEVER }
    }
}

/// Timer jitter: due timers fire late.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimerJitterOptions {
    /// Chance per fire that it is late.
    pub late_per_fire: Ratio,
    /// Latest; at most the claim timeout (the heal does not cut it short).
    #[serde(with = "serde_duration")]
    pub late_max: Duration,
}

impl Default for TimerJitterOptions {
    fn default() -> Self {
        TimerJitterOptions { late_per_fire: Ratio::NEVER, late_max: Duration::from_secs(3) }
    }
}

/// For `skip_serializing_if`: a rate that never fires.
fn is_never(rate: &Ratio) -> bool {
    rate.is_never()
}

/// Lease faults: the sweeper's lease holder dies or pauses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LeaseOptions {
    /// Chance per fault tick that the lease holder's replica is killed.
    pub holder_crash_per_tick: Ratio,
    /// Chance per fault tick that the lease holder's replica is frozen (up to the pause maximum).
    pub holder_pause_per_tick: Ratio,
    /// Chance per two-step sweep that found stale claims that the sweeping lease holder is
    /// frozen (up to the pause maximum) between its select and its clears — the window a
    /// tick-drawn pause almost never hits. Left out of a scenario file when never.
    #[serde(skip_serializing_if = "is_never")]
    pub holder_pause_mid_sweep: Ratio,
}

impl Default for LeaseOptions {
    fn default() -> Self {
        LeaseOptions {
            holder_crash_per_tick: Ratio::NEVER,
            holder_pause_per_tick: Ratio::NEVER,
            holder_pause_mid_sweep: Ratio::NEVER,
        }
    }
}

/// Ack loss: a consumer's ack never reaches the broker, which took the relay as still
/// unacked and redelivers it once its ack timeout passes (a visibility timeout, a consumer
/// timeout). The consumer carries on; the redelivery is a duplicate its guard must absorb.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AckLossOptions {
    /// Chance per ack that it is lost on its way to the broker.
    pub per_ack: Ratio,
    /// How long the broker waits for an ack before it redelivers the relay.
    #[serde(with = "serde_duration")]
    pub redeliver_after: Duration,
}

impl Default for AckLossOptions {
    fn default() -> Self {
        AckLossOptions { per_ack: Ratio::NEVER, redeliver_after: Duration::from_secs(10) }
    }
}

/// Store replies: the store is reached over a request/reply boundary that can fail. A lost
/// request applied nothing; a lost reply hides a call the store did apply (an ambiguous
/// outcome). Either way the client hears nothing and gives up after its timeout; what it
/// does next is the model's to get right. Strikes the execution lanes' calls (claim, read,
/// commit, release). Also: the calling process freezes or dies at the call's boundary, just
/// before its request is sent or just after its reply arrives.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreRepliesOptions {
    /// Chance per call that the request is lost on its way (nothing applied).
    pub request_lost_per_call: Ratio,
    /// Chance per call that the reply is lost after the store applied the call.
    pub reply_lost_per_call: Ratio,
    /// How long the client waits for a reply before it gives up on the call.
    #[serde(with = "serde_duration")]
    pub client_timeout: Duration,
    /// Chance per call that the calling process freezes at the call's boundary.
    pub boundary_pause_per_call: Ratio,
    /// Longest such freeze.
    #[serde(with = "serde_duration")]
    pub boundary_pause_max: Duration,
    /// Chance per call that the calling process dies at the call's boundary (it restarts
    /// as a new incarnation after the replica-crash restart delay).
    pub boundary_crash_per_call: Ratio,
    /// Chance that a request the client gave up on as lost is only delayed: it lands at
    /// the store later, after the client's timeout (a late copy of a release, commit or
    /// migration write; a frozen or dead sender's copy lands all the same).
    pub late_landing_per_lost: Ratio,
    /// Longest time past the client's timeout a delayed request may land.
    #[serde(with = "serde_duration")]
    pub late_landing_max: Duration,
}

impl Default for StoreRepliesOptions {
    fn default() -> Self {
        StoreRepliesOptions {
            request_lost_per_call: Ratio::NEVER,
            reply_lost_per_call: Ratio::NEVER,
            client_timeout: Duration::from_secs(2),
            boundary_pause_per_call: Ratio::NEVER,
            boundary_pause_max: Duration::from_secs(40),
            boundary_crash_per_call: Ratio::NEVER,
            late_landing_per_lost: Ratio::NEVER,
            late_landing_max: Duration::from_secs(5),
        }
    }
}

/// Cancellation: an execution ends at an await point while its process lives — its task
/// is aborted by the runtime, its step outlives the per-step timeout, or its replica is
/// shut down gracefully (drain, then stop) and the drain deadline cuts it short. Spec 000:
/// a destructor cannot await, so the release must be an explicit, awaited exit path.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CancelOptions {
    /// Chance per fault tick that a busy execution lane's task is aborted (the lane's
    /// supervisor starts a new one).
    pub abort_per_tick: Ratio,
    /// The per-step timeout: a step running longer is cancelled (zero: no timeout). The
    /// share of normal steps it cuts counts towards the 1/2 of attempts that may fail.
    #[serde(with = "serde_duration")]
    pub step_timeout: Duration,
    /// Chance per fault tick that one alive, unpaused replica is shut down gracefully (an
    /// orchestrator's SIGTERM): it stops taking work, hands its queued deliveries back,
    /// drains its executions, then stops, and later restarts as a new incarnation.
    pub shutdown_per_tick: Ratio,
    /// How long a shutting-down replica lets its executions in flight run before it cancels
    /// them (each then takes its awaited exit path), by the replica's own clock (zero:
    /// cancel at once).
    #[serde(with = "serde_duration")]
    pub drain_timeout: Duration,
    /// Longest a gracefully stopped replica stays down before it restarts as a new
    /// incarnation (drawn up to this; zero: at once).
    #[serde(with = "serde_duration")]
    pub restart_delay_max: Duration,
}

impl Default for CancelOptions {
    fn default() -> Self {
        CancelOptions {
            abort_per_tick: Ratio::NEVER,
            step_timeout: Duration::ZERO,
            shutdown_per_tick: Ratio::NEVER,
            drain_timeout: Duration::ZERO,
            restart_delay_max: Duration::ZERO,
        }
    }
}

impl CancelOptions {
    /// True if a lane's worker task may be aborted while its process lives (the task-abort
    /// fault, or a graceful shutdown's drain deadline): the lane then runs supervised.
    pub fn aborts_workers(&self) -> bool {
        !self.abort_per_tick.is_never() || !self.shutdown_per_tick.is_never()
    }
}

/// What every fault kind's options type says about itself.
pub trait FaultOptions: Default {
    /// True if the options make any fault of the kind fire at all.
    fn configured(&self) -> bool;

    /// The swarm's draw for this kind: `None` switches it off, `Some(permille)` scales its
    /// rates by that factor. Only rates (and for clock skew, the standing offset and drift,
    /// which only switch off) change.
    fn swarm(&mut self, scale_permille: Option<u32>);
}

/// Scales one rate as the swarm does: off, or times `permille`/1000.
pub fn swarm_rate(rate: &mut Ratio, scale_permille: Option<u32>) {
    *rate = match scale_permille {
        None => Ratio::NEVER,
        Some(permille) => rate.scaled(permille),
    };
}

// What each kind's options say about themselves: when the kind is on, and how the swarm
// scales it. The swarm scales rates only; spans (how long, how late) stay as configured.

impl FaultOptions for ReplicaCrashOptions {
    fn configured(&self) -> bool {
        !self.per_tick.is_never() || !self.pull_worker_per_tick.is_never()
    }
    fn swarm(&mut self, scale: Option<u32>) {
        swarm_rate(&mut self.per_tick, scale);
        swarm_rate(&mut self.pull_worker_per_tick, scale);
    }
}

impl FaultOptions for ProcessPauseOptions {
    fn configured(&self) -> bool {
        !self.per_tick.is_never() || !self.pull_worker_per_tick.is_never()
    }
    fn swarm(&mut self, scale: Option<u32>) {
        swarm_rate(&mut self.per_tick, scale);
        swarm_rate(&mut self.pull_worker_per_tick, scale);
    }
}

impl FaultOptions for MisrouteOptions {
    fn configured(&self) -> bool {
        !self.per_delivery.is_never() || !self.hash_change_per_tick.is_never()
    }
    fn swarm(&mut self, scale: Option<u32>) {
        swarm_rate(&mut self.per_delivery, scale);
        swarm_rate(&mut self.hash_change_per_tick, scale);
    }
}

impl FaultOptions for ClockSkewOptions {
    fn configured(&self) -> bool {
        !self.offset_max.is_zero() || self.drift_ppm_max > 0 || !self.step_per_tick.is_never()
    }
    fn swarm(&mut self, scale: Option<u32>) {
        swarm_rate(&mut self.step_per_tick, scale);
        if scale.is_none() {
            self.offset_max = Duration::ZERO;
            self.drift_ppm_max = 0;
        }
    }
}

impl FaultOptions for BrokerOptions {
    fn configured(&self) -> bool {
        !self.duplicate_per_delivery.is_never()
            || !self.delay_per_delivery.is_never()
            || !self.reorder_per_delivery.is_never()
            || !self.paused_consumer_timeout.is_zero()
    }
    fn swarm(&mut self, scale: Option<u32>) {
        swarm_rate(&mut self.duplicate_per_delivery, scale);
        swarm_rate(&mut self.delay_per_delivery, scale);
        swarm_rate(&mut self.reorder_per_delivery, scale);
        if scale.is_none() {
            self.paused_consumer_timeout = Duration::ZERO;
        }
    }
}

impl FaultOptions for StoreOptions {
    fn configured(&self) -> bool {
        !self.latency_spike_per_call.is_never()
            || !self.abort_per_call.is_never()
            || !self.unavailable_per_tick.is_never()
    }
    fn swarm(&mut self, scale: Option<u32>) {
        swarm_rate(&mut self.latency_spike_per_call, scale);
        swarm_rate(&mut self.abort_per_call, scale);
        swarm_rate(&mut self.unavailable_per_tick, scale);
    }
}

impl FaultOptions for SlowStepOptions {
    fn configured(&self) -> bool {
        !self.per_step.is_never()
    }
    fn swarm(&mut self, scale: Option<u32>) {
        swarm_rate(&mut self.per_step, scale);
    }
}

impl FaultOptions for HungStepOptions {
    fn configured(&self) -> bool {
        !self.per_step.is_never()
    }
    fn swarm(&mut self, scale: Option<u32>) {
        swarm_rate(&mut self.per_step, scale);
    }
}

impl FaultOptions for TimerJitterOptions {
    fn configured(&self) -> bool {
        !self.late_per_fire.is_never()
    }
    fn swarm(&mut self, scale: Option<u32>) {
        swarm_rate(&mut self.late_per_fire, scale);
    }
}

impl FaultOptions for LeaseOptions {
    fn configured(&self) -> bool {
        !self.holder_crash_per_tick.is_never()
            || !self.holder_pause_per_tick.is_never()
            || !self.holder_pause_mid_sweep.is_never()
    }
    fn swarm(&mut self, scale: Option<u32>) {
        swarm_rate(&mut self.holder_crash_per_tick, scale);
        swarm_rate(&mut self.holder_pause_per_tick, scale);
        swarm_rate(&mut self.holder_pause_mid_sweep, scale);
    }
}

impl FaultOptions for AckLossOptions {
    fn configured(&self) -> bool {
        !self.per_ack.is_never()
    }
    fn swarm(&mut self, scale: Option<u32>) {
        swarm_rate(&mut self.per_ack, scale);
    }
}

impl FaultOptions for StoreRepliesOptions {
    fn configured(&self) -> bool {
        !self.request_lost_per_call.is_never()
            || !self.reply_lost_per_call.is_never()
            || !self.boundary_pause_per_call.is_never()
            || !self.boundary_crash_per_call.is_never()
    }
    fn swarm(&mut self, scale: Option<u32>) {
        swarm_rate(&mut self.request_lost_per_call, scale);
        swarm_rate(&mut self.reply_lost_per_call, scale);
        swarm_rate(&mut self.boundary_pause_per_call, scale);
        swarm_rate(&mut self.boundary_crash_per_call, scale);
        swarm_rate(&mut self.late_landing_per_lost, scale);
    }
}

impl FaultOptions for CancelOptions {
    fn configured(&self) -> bool {
        !self.abort_per_tick.is_never() || !self.step_timeout.is_zero() || !self.shutdown_per_tick.is_never()
    }
    fn swarm(&mut self, scale: Option<u32>) {
        swarm_rate(&mut self.abort_per_tick, scale);
        swarm_rate(&mut self.shutdown_per_tick, scale);
        if scale.is_none() {
            self.step_timeout = Duration::ZERO;
        }
    }
}

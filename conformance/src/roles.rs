//! The threads of a process besides its lanes: the consumer (broker → lanes, routed by
//! instance hash, which the misroute fault gets wrong), the timer poller (by the process's
//! own clock), the lease-gated sweeper, the outbox publisher and the heartbeat the broker
//! watches. Each runs until its process is gone; a database error stops the run.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::clock::Clock;
use crate::ctx::{Ctx, Stop};
use crate::lane;
use crate::process::{Process, Work};
use crate::rng::Rng;
use crate::variant::Variant;

/// Timers a poller picks per poll, at most.
const TIMERS_PER_POLL_MAX: u32 = 16;

/// How long an idle consumer or publisher waits before it looks again.
const IDLE: Duration = Duration::from_millis(3);

/// How often the heartbeat beats.
const HEARTBEAT: Duration = Duration::from_millis(10);

/// Starts every thread of `p`; joining them all means the process is gone.
pub fn start(ctx: &Arc<Ctx>, p: &Arc<Process>) -> Vec<JoinHandle<()>> {
    let mut threads = Vec::new();
    for lane in 0..ctx.cfg.lanes {
        let (c, q) = (ctx.clone(), p.clone());
        threads.push(spawn(&format!("p{}-sup{lane}", p.pid), move || lane::supervise(c, q, lane)));
    }
    let roles: [(&str, fn(&Ctx, &Process) -> Result<(), Stop>); 5] = [
        ("consumer", consume),
        ("poller", poll_timers),
        ("sweeper", sweep),
        ("publisher", publish),
        ("heartbeat", heartbeat),
    ];
    for (name, role) in roles {
        let (c, q) = (ctx.clone(), p.clone());
        threads.push(spawn(&format!("p{}-{name}", p.pid), move || {
            if let Err(Stop::Error(e)) = role(&c, &q) {
                c.fail(e);
            }
        }));
    }
    threads
}

fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> JoinHandle<()> {
    std::thread::Builder::new().name(name.to_string()).spawn(f).expect("spawn a thread")
}

/// The lane an instance's work goes to: affinity by hash (spec 000: routing is affinity,
/// the claim is correctness).
fn route(ctx: &Ctx, instance: u32) -> u32 {
    instance % ctx.cfg.lanes
}

fn consume(ctx: &Ctx, p: &Process) -> Result<(), Stop> {
    let mut store = ctx.store(&p.node)?;
    let mut rng = Rng::new(ctx.cfg.seed, 0xC0 ^ u64::from(p.pid) << 8);
    loop {
        p.gate()?;
        match ctx.broker.next(store.conn(), &p.node, p.pid)? {
            Some(d) => {
                let mut lane = route(ctx, d.instance);
                if ctx.cfg.lanes > 1 && rng.chance(ctx.cfg.faults.misroute_per_mille) {
                    lane = (lane + 1 + rng.below(u64::from(ctx.cfg.lanes - 1)) as u32) % ctx.cfg.lanes;
                }
                p.dispatch(lane, Work::Relay(d));
            }
            None => p.sleep(IDLE, None)?,
        }
    }
}

fn poll_timers(ctx: &Ctx, p: &Process) -> Result<(), Stop> {
    let mut store = ctx.store(&p.node)?;
    let cfg = &ctx.cfg;
    loop {
        p.sleep(Duration::from_millis(cfg.timer_poll_interval_ms), None)?;
        let picked = store.pick_due_timers(p.local_ns(), cfg.timer_fire_lease_ms * 1_000_000, TIMERS_PER_POLL_MAX)?;
        for (instance, expects) in picked {
            p.dispatch(route(ctx, instance), Work::Timer { instance, expects });
        }
    }
}

fn sweep(ctx: &Ctx, p: &Process) -> Result<(), Stop> {
    let mut store = ctx.store(&p.node)?;
    let task = ctx.task_id();
    let cfg = &ctx.cfg;
    let lease_ns = cfg.lease_duration_ms * 1_000_000;
    loop {
        p.sleep(Duration::from_millis(cfg.sweep_interval_ms), None)?;
        if !cfg.variant.two_step_sweep() {
            store.sweep(p.pid, task, lease_ns)?;
            continue;
        }
        let Some(stale) = store.sweep_select(p.pid, task, lease_ns)? else { continue };
        // The correct clear renews the lease in its own transaction and re-checks it in its
        // statement; River #1302's rescuer re-checks nothing.
        let renew = (cfg.variant != Variant::SweepUncheckedClear).then_some(lease_ns);
        for (instance, epoch) in stale {
            p.sleep(Duration::from_millis(cfg.sweep_clear_gap_ms), None)?;
            store.sweep_clear(p.pid, task, instance, epoch, renew)?;
        }
    }
}

fn publish(ctx: &Ctx, p: &Process) -> Result<(), Stop> {
    let mut store = ctx.store(&p.node)?;
    loop {
        p.gate()?;
        match store.publish_from_outbox(&|| ctx.broker.message_id())? {
            Some((message, instance, step)) => ctx.broker.publish(message, instance, step),
            None => p.sleep(IDLE, None)?,
        }
    }
}

fn heartbeat(_ctx: &Ctx, p: &Process) -> Result<(), Stop> {
    loop {
        p.gate()?;
        p.last_seen_ns.store(Clock::store().now_ns(), Ordering::SeqCst);
        p.sleep(HEARTBEAT, None)?;
    }
}

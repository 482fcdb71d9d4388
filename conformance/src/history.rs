//! The history file: the header `sutra-sim check` reads (the checkers' parameters as an
//! inline scenario, the kinds this runtime emits, whether the workload ran to its end) and
//! the audit table's witnesses, in `seq` order, in the JSON Lines format of
//! `docs/history.md`. Written to a temporary name and renamed, so no reader sees half.

use std::io::Write;
use std::path::Path;

use serde_json::json;

use crate::config::Config;
use crate::db::{Conn, Value};
use crate::witness::{history_line, statement};
use sutra_sql::Statements;

/// Rows read from the audit table per page: the export's memory is bounded by it.
const EXPORT_PAGE_ROWS: i64 = 5_000;

/// Every kind this runtime's store, broker and harness write when the thing happens.
/// Kinds of operations it does not have — migrations, pull tasks, graceful shutdowns,
/// calls struck at the network boundary, state-lane turns — are listed too: it would
/// witness them, and there are none, which is the truth a checker may rely on.
pub const EMITS: &[&str] = &[
    // store
    "claim-granted",
    "claim-refused",
    "store-read",
    "commit-accepted",
    "commit-rejected",
    "row-written",
    "released",
    "swept",
    "sweep-selected",
    "sweep-clear-missed",
    "lease-acquired",
    "relay-published",
    "timer-scheduled",
    "timer-deferred",
    "instance-completed",
    "migration-committed",
    "task-parked",
    "task-locked",
    "task-completed",
    // broker
    "relay-delivered",
    "relay-acked",
    "relay-requeued",
    "relay-reclaimed",
    "relay-dead-lettered",
    // harness
    "instance-started",
    "task-aborted",
    "replica-crashed",
    "replica-restarted",
    "replica-paused",
    "replica-resumed",
    "clock-skewed",
    "healed",
    "shutdown-requested",
    "replica-stopped",
    "call-struck",
    "lane",
    "admin-request-ended",
    "admin-request-received",
    "pull-worker-crashed",
    "bounce-meter",
];

/// The checkers' parameters as a scenario (`docs/scenarios.md`): the runtime's timeouts,
/// topology and prefetch, and which fault kinds its harness injects. `[workload]` is the
/// simulation's and describes nothing here but what validation asks of it.
pub fn scenario_toml(cfg: &Config) -> String {
    let ms = |v: u64| format!("\"{v}ms\"");
    let on = |per_mille: u32| if per_mille > 0 { "\"1/10\"" } else { "\"0\"" };
    let f = &cfg.faults;
    // The simulation's relation asks that a step and six store trips fit a quarter of the
    // claim timeout; the short-timeout shape breaks that on purpose, so the simulated
    // workload is stated as the largest the relation allows.
    let latency_us: u64 = if cfg.variant.short_claim_timeout() { 100 } else { 1_000 };
    let step_us = (cfg.claim_timeout_ms * 1_000 / 4).saturating_sub(6 * latency_us).clamp(1, cfg.step_max_ms * 1_000);
    format!(
        "# Written by sutra-conformance: the reference runtime's parameters (variant {variant}).
name = \"conformance\"
description = \"sutra-conformance, {engine}, variant {variant}\"

[topology]
replicas = {replicas}
lanes = {lanes}
pull_workers = 0
prefetch = {prefetch}

[workload]
instances = {instances}
steps = {steps}
relay_weight = 1
timer_weight = 1
pull_weight = 0
step_duration_max = {step_ms}

[timeouts]
claim_timeout = {claim}
sweep_interval = {sweep}
lease_duration = {lease}
timer_poll_interval = {poll}
timer_fire_lease = {fire}
timer_backoff_base = {base}
timer_backoff_max = {cap}
requeue_delay = {requeue}
store_latency_max = {latency}
broker_liveness_interval = {liveness}

# A real store's reply is sometimes late (a lock wait, a loaded machine) and nothing
# witnesses by how much: declared as latency spikes up to the claim timeout, the most the
# scenario relations allow (the rate says only that they happen).
[faults.store]
latency_spike_per_call = \"1/10\"
latency_spike_max = {claim}

[faults.store_replies]
client_timeout = {client}

[faults.replica_crash]
per_tick = {crash}

[faults.process_pause]
per_tick = {pause}
pause_max = {pause_max}

[faults.cancel]
abort_per_tick = {kill}

[faults.clock_skew]
offset_max = {offset}

[faults.misroute]
per_delivery = {misroute}

[phases]
heal_at = {heal}
",
        variant = cfg.variant.name(),
        engine = cfg.target.engine(),
        replicas = cfg.replicas,
        lanes = cfg.lanes,
        prefetch = cfg.prefetch,
        instances = cfg.instances,
        steps = cfg.steps,
        step_ms = format!("\"{step_us}us\""),
        latency = format!("\"{latency_us}us\""),
        claim = ms(cfg.claim_timeout_ms),
        sweep = ms(cfg.sweep_interval_ms),
        lease = ms(cfg.lease_duration_ms),
        poll = ms(cfg.timer_poll_interval_ms),
        fire = ms(cfg.timer_fire_lease_ms),
        base = ms(cfg.timer_backoff_base_ms),
        cap = ms(cfg.timer_backoff_max_ms),
        requeue = ms(cfg.requeue_delay_ms),
        liveness = ms(cfg.broker_liveness_ms),
        client = ms((cfg.claim_timeout_ms / 10).max(1)),
        crash = on(f.crash_per_mille),
        pause = on(f.pause_per_mille),
        pause_max = ms(cfg.claim_timeout_ms * 2),
        kill = on(f.lane_kill_per_mille),
        offset = ms(f.clock_offset_max_ms),
        misroute = on(f.misroute_per_mille),
        heal = ms(cfg.fault_phase_ms.max(1)),
    )
}

/// Writes the history of the run to `path`: the header, then every audit row in `seq`
/// order. Returns the number of events.
pub fn export(conn: &mut Conn, cfg: &Config, sql: &Statements, path: &Path, complete: bool) -> Result<u64, String> {
    let tmp = path.with_extension("partial");
    let file = std::fs::File::create(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    let mut out = std::io::BufWriter::new(file);
    let mut nodes = vec!["world".to_string()];
    nodes.extend((0..cfg.replicas).map(|r| format!("replica-{r}")));
    let header = json!({
        "history": "sutra-sim", "version": 1, "writer": concat!("sutra-conformance ", env!("CARGO_PKG_VERSION")),
        "scenario": "conformance", "variant": cfg.variant.name(), "engine": cfg.target.engine(), "seed": cfg.seed,
        "scenario_toml": scenario_toml(cfg), "emits": EMITS, "complete": complete, "nodes": nodes,
        "broker_call_latency_max_ns": cfg.broker_call_latency_max_ms * 1_000_000,
    });
    let io = |e: std::io::Error| format!("{}: {e}", tmp.display());
    writeln!(out, "{header}").map_err(io)?;
    let mut after = 0i64;
    let mut events = 0u64;
    loop {
        let rows = conn.transaction(|tx| {
            tx.query(statement(sql, "audit_export"), &[Value::Int(after), Value::Int(EXPORT_PAGE_ROWS)])
        })?;
        let Some(last) = rows.last() else { break };
        after = last[0].int().ok_or("audit seq is not a BIGINT")?;
        for r in &rows {
            let text = |i: usize| r[i].text().ok_or_else(|| format!("audit column {i} is not TEXT"));
            let line =
                history_line(r[0].int().unwrap_or(0), r[1].int().unwrap_or(0), text(2)?, text(3)?, text(4)?, text(5)?);
            writeln!(out, "{line}").map_err(io)?;
            events += 1;
        }
    }
    out.flush().map_err(io)?;
    drop(out);
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(events)
}

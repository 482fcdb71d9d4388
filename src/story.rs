//! The story of a failing run: what happened to the instance that failed, in order, told so
//! that a person understands it in a minute (DESIGN.md §9).
//!
//! The story follows the failing event's instance — or, for failures found at the end (an
//! instance that never completed, a claim still held), the instances left unfinished. It
//! shows their deliveries, claims, refusals, steps, commits and releases, and the faults
//! and recoveries of the environment around them, each with its simulated time, the node
//! (replica) and the execution lane it happened on. Bookkeeping that repeats what the other
//! lines already say (`row-written`, current snapshot uses) is left out unless it is the
//! failing event.
//! [`trace_lines`] prints everything instead (`replay --trace`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use sutra_sim_core::{Event, EventKind, NodeId, Outcome, SimTime};
use sutra_sim_model::event::millis_text;
use sutra_sim_model::event::{Exit, Reaction};
use sutra_sim_model::ids::{ExecId, ProcessId};
use sutra_sim_model::ModelEvent;

use crate::fault_events::{is_environment_event, is_fault_event};

/// Most instances one story follows.
pub const STORY_INSTANCES_MAX: usize = 3;

/// Most lines of events one story prints; a longer story keeps the lines nearest the
/// failure and says how many earlier ones it left out.
pub const STORY_LINES_MAX: usize = 120;

/// The story of a run, ready to print.
#[derive(Clone, Debug)]
pub struct Story {
    /// The instances it follows.
    pub instances: Vec<u64>,
    /// Lines of text, header included, without trailing newlines.
    pub lines: Vec<String>,
}

impl std::fmt::Display for Story {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for line in &self.lines {
            writeln!(f, "{line}")?;
        }
        Ok(())
    }
}

/// Where events happened: node names, and the lane and node of every execution.
struct Places<'a> {
    node_names: &'a [String],
    /// Execution → (node, lane), from the dispatch that started it.
    exec_lane: BTreeMap<ExecId, u16>,
    /// Process → the node it ran on.
    process_node: BTreeMap<ProcessId, NodeId>,
}

impl<'a> Places<'a> {
    fn of(outcome: &'a Outcome<ModelEvent>) -> Places<'a> {
        let mut exec_lane = BTreeMap::new();
        let mut process_node = BTreeMap::new();
        for e in &outcome.trace {
            match &e.kind {
                ModelEvent::Dispatched { exec, lane, process, .. } => {
                    exec_lane.insert(*exec, *lane);
                    process_node.entry(*process).or_insert(e.node);
                }
                ModelEvent::MigrationRequested { exec, to_lane, .. } => {
                    exec_lane.insert(*exec, *to_lane);
                }
                ModelEvent::ReplicaCrashed { process, .. }
                | ModelEvent::ShutdownRequested { process, .. }
                | ModelEvent::ReplicaStopped { process, .. }
                | ModelEvent::ReplicaRestarted { process, .. }
                | ModelEvent::ReplicaPaused { process, .. }
                | ModelEvent::ReplicaResumed { process, .. } => {
                    process_node.entry(*process).or_insert(e.node);
                }
                _ => {}
            }
        }
        Places { node_names: &outcome.node_names, exec_lane, process_node }
    }

    fn node(&self, node: NodeId) -> String {
        self.node_names.get(node.0 as usize).cloned().unwrap_or_else(|| format!("node-{}", node.0))
    }

    fn lane(&self, event: &ModelEvent) -> Option<u16> {
        match event {
            ModelEvent::Dispatched { lane, .. } => Some(*lane),
            other => other.exec().and_then(|x| self.exec_lane.get(&x).copied()),
        }
    }

    /// `p3 = replica-1` for every process the story mentions.
    fn legend(&self, processes: &BTreeSet<ProcessId>) -> String {
        processes
            .iter()
            .map(|p| match self.process_node.get(p) {
                Some(n) => format!("p{} = {}", p.0, self.node(*n)),
                None => format!("p{} = ?", p.0),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The instances a story follows: the failing event's, or else the ones left unfinished,
/// or else the last one the trace mentions.
pub fn instances_of_interest(outcome: &Outcome<ModelEvent>) -> Vec<u64> {
    let failing = failing_position(outcome).map(|i| &outcome.trace[i]);
    if let Some(instance) = failing.and_then(|e| e.kind.instance()) {
        return vec![instance];
    }
    let mut started = BTreeSet::new();
    let mut completed = BTreeSet::new();
    let mut owned_at_end: BTreeMap<u64, bool> = BTreeMap::new();
    for e in &outcome.trace {
        match &e.kind {
            ModelEvent::InstanceStarted { instance, .. } => {
                started.insert(u64::from(instance.0));
            }
            ModelEvent::InstanceCompleted { instance } => {
                completed.insert(u64::from(instance.0));
            }
            ModelEvent::RowWritten { instance, owner, .. } => {
                owned_at_end.insert(u64::from(instance.0), owner.is_some());
            }
            _ => {}
        }
    }
    let unfinished: Vec<u64> = started
        .iter()
        .copied()
        .filter(|i| !completed.contains(i) || owned_at_end.get(i).copied().unwrap_or(false))
        .take(STORY_INSTANCES_MAX)
        .collect();
    if !unfinished.is_empty() {
        return unfinished;
    }
    let before_end = failing_position(outcome).map_or(outcome.trace.len(), |i| i + 1);
    outcome.trace[..before_end.min(outcome.trace.len())]
        .iter()
        .rev()
        .find_map(|e| e.kind.instance())
        .into_iter()
        .collect()
}

/// Where the failing event is in `outcome.trace`, found by its `seq`: the trace may be a
/// run's whole trace (position = seq) or a history's witnesses only (`sutra-sim check`).
fn failing_position(outcome: &Outcome<ModelEvent>) -> Option<usize> {
    let seq = outcome.failing_event?;
    outcome.trace.binary_search_by_key(&seq, |e| e.seq).ok()
}

/// Tells the story of `outcome`, which must have been run with its trace kept.
pub fn tell(outcome: &Outcome<ModelEvent>) -> Story {
    let places = Places::of(outcome);
    let instances = instances_of_interest(outcome);
    let mut lines = vec![format!("STORY — {}", outcome.verdict)];
    if outcome.trace.is_empty() {
        lines.push("  (no trace: the run was not kept)".into());
        return Story { instances, lines };
    }
    let failing = failing_position(outcome).map(|i| &outcome.trace[i]);
    if let Some(e) = failing {
        lines.push(format!(
            "  failing event #{} at {} on {}: {}",
            e.seq,
            seconds(e.time),
            places.node(e.node),
            e.kind.name()
        ));
    }
    let shown: BTreeSet<u64> = instances.iter().copied().collect();
    let of_interest = |e: &Event<ModelEvent>| e.kind.instance().is_some_and(|i| shown.contains(&i));
    // The window of the story: from the first event of its instances to the failure (or
    // the end of the run); environment events inside it are "the faults around them".
    let first = outcome.trace.iter().position(of_interest).unwrap_or(0);
    let last = failing_position(outcome).unwrap_or(outcome.trace.len() - 1);
    let mut selected: Vec<&Event<ModelEvent>> = outcome.trace[first..=last.min(outcome.trace.len() - 1)]
        .iter()
        .filter(|e| {
            let is_failing = Some(e.seq) == outcome.failing_event;
            is_failing || (of_interest(e) && !is_bookkeeping(&e.kind)) || is_environment_event(&e.kind)
        })
        .collect();
    let faults = selected.iter().filter(|e| is_fault_event(&e.kind)).count();
    let mut processes = BTreeSet::new();
    for e in &selected {
        collect_processes(&e.kind, &mut processes);
    }
    lines.push(format!(
        "  following instance{} {} — {} event(s) shown, {} fault(s) around them",
        if instances.len() == 1 { "" } else { "s" },
        instances.iter().map(u64::to_string).collect::<Vec<_>>().join(", "),
        selected.len(),
        faults
    ));
    if !processes.is_empty() {
        lines.push(format!("  processes: {}", places.legend(&processes)));
    }
    if selected.len() > STORY_LINES_MAX {
        let dropped = selected.len() - STORY_LINES_MAX;
        selected.drain(..dropped);
        lines.push(format!("  … {dropped} earlier event(s) left out; `replay --trace` prints everything"));
    }
    lines.push(format!("  {:>10}  {:<14} {:<7} {:<6} what happened", "time", "node", "lane", "exec"));
    for e in selected {
        let is_failing = Some(e.seq) == outcome.failing_event;
        let mut line = format!(
            "{} {:>10}  {:<14} {:<7} {:<6} {}",
            if is_failing {
                "▶"
            } else if is_environment_event(&e.kind) {
                "!"
            } else {
                " "
            },
            seconds(e.time),
            places.node(e.node),
            places.lane(&e.kind).map(|l| format!("lane {l}")).unwrap_or_else(|| "-".into()),
            e.kind.exec().map(|x| format!("e{}", x.0)).unwrap_or_else(|| "-".into()),
            describe(&e.kind)
        );
        if is_failing {
            let _ = write!(line, "   ◀ {}", outcome.verdict.checker().unwrap_or("failure"));
        }
        lines.push(line);
    }
    if failing.is_none() && !outcome.verdict.is_pass() {
        lines.push(format!("  end of run at {}: {}", seconds(outcome.sim_time), outcome.verdict));
    }
    Story { instances, lines }
}

/// The whole trace, one line per event (`replay --trace`).
pub fn trace_lines(outcome: &Outcome<ModelEvent>) -> Vec<String> {
    let places = Places::of(outcome);
    outcome
        .trace
        .iter()
        .map(|e| {
            format!(
                "#{:<6} {:>10}  {:<14} {:<7} {:<20} {}",
                e.seq,
                seconds(e.time),
                places.node(e.node),
                places.lane(&e.kind).map(|l| format!("lane {l}")).unwrap_or_else(|| "-".into()),
                e.kind.name(),
                describe(&e.kind)
            )
        })
        .collect()
}

/// Events that repeat what the story's other lines already say: the store's row after each
/// write (the claim, commit or release line says it), and snapshot uses that were current.
fn is_bookkeeping(event: &ModelEvent) -> bool {
    match event {
        ModelEvent::RowWritten { .. } => true,
        ModelEvent::SnapshotUsed { used, .. } => !used.is_stale(),
        _ => false,
    }
}

/// Simulated time as seconds with milliseconds: `12.345s`.
pub fn seconds(t: SimTime) -> String {
    let ms = t.as_millis();
    format!("{}.{:03}s", ms / 1000, ms % 1000)
}

fn collect_processes(event: &ModelEvent, out: &mut BTreeSet<ProcessId>) {
    match event {
        ModelEvent::Dispatched { process, .. }
        | ModelEvent::RelayDelivered { process, .. }
        | ModelEvent::RelayReclaimed { process, .. }
        | ModelEvent::ReplicaCrashed { process, .. }
        | ModelEvent::ShutdownRequested { process, .. }
        | ModelEvent::ReplicaStopped { process, .. }
        | ModelEvent::ReplicaRestarted { process, .. }
        | ModelEvent::ReplicaPaused { process, .. }
        | ModelEvent::ReplicaResumed { process, .. }
        | ModelEvent::MigrationRequested { process, .. }
        | ModelEvent::Swept { by: process, .. }
        | ModelEvent::SweepSelected { by: process, .. }
        | ModelEvent::SweepClearMissed { by: process, .. } => {
            out.insert(*process);
        }
        ModelEvent::ClaimGranted { process: Some(process), .. } => {
            out.insert(*process);
        }
        _ => {}
    }
}

/// One event in words.
pub fn describe(event: &ModelEvent) -> String {
    use ModelEvent as E;
    match event {
        E::InstanceStarted { instance, steps } => format!("instance {} started: {steps} step(s)", instance.0),
        E::InstanceCompleted { instance } => format!("instance {} completed", instance.0),
        E::RelayPublished { message, step, .. } => format!("relay m{} published for step {step}", message.0),
        E::RelayDelivered { message, process, redelivery, duplicate, .. } => format!(
            "relay m{} delivered to p{}{}{}",
            message.0,
            process.0,
            if *redelivery { " (redelivery)" } else { "" },
            if *duplicate { " (DUPLICATE: broker fault)" } else { "" }
        ),
        E::RelayAcked { message, .. } => format!("relay m{} acked", message.0),
        E::RelayRequeued { message, .. } => format!("relay m{} requeued", message.0),
        E::RelayReclaimed { message, process, .. } => {
            format!("relay m{} reclaimed from consumer p{} (dead, or its ack never came)", message.0, process.0)
        }
        E::TimerScheduled { step, due_ns, .. } => format!("timer for step {step} due at {}", millis_text(*due_ns)),
        E::TimerDeferred { expects, attempt, due_ns, .. } => {
            format!("timer for step {} deferred to {} (refusal {attempt})", expects + 1, millis_text(*due_ns))
        }
        E::Dispatched { path, process, lane, misrouted, .. } => format!(
            "{path:?} dispatched to p{} lane {lane}{}",
            process.0,
            if *misrouted { " (MIS-ROUTED: fault)" } else { "" }
        ),
        E::TaskParked { step, .. } => format!("parked for a pull worker at step {step}"),
        E::TaskLocked { worker, .. } => format!("pull worker {worker} locked the task"),
        E::TaskCompleted { worker, .. } => format!("pull worker {worker} completed the task"),
        E::ClaimAttempt { owner, path, .. } => format!("asks for the claim as {owner} ({path:?})"),
        E::ClaimGranted { owner, previous, stale_age_ns, epoch, .. } => {
            let mut s = format!("CLAIM GRANTED to {owner}, epoch {epoch}");
            match (previous, stale_age_ns) {
                (Some(p), Some(age)) => {
                    let _ = write!(s, " (taken from {p}, stale after {})", millis_text(*age));
                }
                (Some(p), None) => {
                    let _ = write!(s, " (already held by {p}: re-entrant)");
                }
                _ => {}
            }
            s
        }
        E::ClaimRefused { owner, holder, .. } => format!("claim REFUSED to {owner}: held by {holder}"),
        E::Refusal { code, reaction, .. } => format!("refusal {}: {}", code.as_str(), reaction_text(reaction)),
        E::Rehydrated { version, .. } => format!("rehydrated at version {version}"),
        E::StepStarted { step, slow, .. } => {
            format!("STEP {step} started{}", if *slow { " (SLOW: outlasts the claim timeout)" } else { "" })
        }
        E::StepEnded { error, .. } => match error {
            None => "step ended".into(),
            Some(code) => format!("step ended with {}", code.as_str()),
        },
        E::CommitAccepted { owner, epoch, current_epoch, based_on, version_before, version_after, .. } => {
            let epochs = if epoch == current_epoch {
                format!("epoch {epoch}")
            } else {
                format!("epoch {epoch}, row at epoch {current_epoch}")
            };
            format!(
                "COMMIT by {owner} ({epochs}): based on v{based_on}, row was v{version_before}, now v{version_after}"
            )
        }
        E::CommitRejected { owner, holder, .. } => format!(
            "commit REJECTED for {owner}: row owned by {}",
            holder.map_or_else(|| "nobody".to_string(), |h| h.to_string())
        ),
        E::RowWritten { write, owner, version, .. } => format!(
            "row written ({write:?}): owner {}, v{version}",
            owner.map_or_else(|| "none".to_string(), |o| o.to_string())
        ),
        E::Released { owner, epoch, released, .. } => {
            if *released {
                format!("released by {owner} (epoch {epoch})")
            } else {
                format!("release by {owner} matched nothing (row owned by another)")
            }
        }
        E::ExecutionEnded { exit, .. } => format!("execution ended: {}", exit_text(exit)),
        E::Swept { owner, age_ns, by, lease_held, .. } => format!(
            "SWEPT claim of {owner} (age {}) by p{}{}",
            millis_text(*age_ns),
            by.0,
            if *lease_held { "" } else { " WITHOUT the lease" }
        ),
        E::SweepSelected { by, stale, lease_held, .. } => format!(
            "p{} selects {stale} stale claim(s) to clear{}",
            by.0,
            if *lease_held { "" } else { " (its lease has lapsed)" }
        ),
        E::SweepClearMissed { by, epoch, .. } => {
            format!("p{}'s clear of the claim of epoch {epoch} it selected matches nothing (re-checked)", by.0)
        }
        E::LeaseAcquired { process, until_ns, renewal, .. } => format!(
            "p{} {} the sweep lease until {}",
            process.0,
            if *renewal { "renews" } else { "takes" },
            millis_text(*until_ns)
        ),
        E::StoreRead { claim_owner, claim_epoch, version, epoch, .. } => {
            format!("read v{version} as {claim_owner} (epoch {claim_epoch}; row at epoch {epoch})")
        }
        E::MigrationCommitted { owner, done, .. } => {
            if *done {
                format!("migration by {owner} committed (released)")
            } else {
                format!("migration by {owner} matched nothing")
            }
        }
        E::MigrationRequested { process, to_lane, .. } => {
            format!("admin migration requested on p{} to lane {to_lane}", process.0)
        }
        E::AdminRequestReceived { process, client, request, to_lane, attempt, .. } => format!(
            "p{}'s admin server received request {request} of client {client} (to lane {to_lane}, attempt {attempt})",
            process.0
        ),
        E::AdminRequestEnded { process, status, code, .. } => format!(
            "p{}'s admin server answered {status:?}{}",
            process.0,
            code.map_or(String::new(), |c| format!(" {}", c.as_str()))
        ),
        E::BindingChanged { process, lane, .. } => format!("p{} binding now routes to {lane:?}", process.0),
        E::SnapshotUsed { process, used, .. } => format!(
            "p{} acted on binding-table version {} (current: {}){}",
            process.0,
            used.read_version,
            used.current_version,
            if used.settled { ", settled into a claim" } else { "" }
        ),
        E::Lane { process, component, action, .. } => format!("p{} {component:?} lane: {action:?}", process.0),
        E::ReplicaCrashed { replica, process } => format!("REPLICA-{replica} CRASHED (p{} dies)", process.0),
        E::ShutdownRequested { replica, process, drain_ns } => {
            format!("replica-{replica} asked to shut down (p{} drains for up to {})", process.0, millis_text(*drain_ns))
        }
        E::ReplicaStopped { replica, process } => {
            format!("replica-{replica} stopped gracefully (p{} exits)", process.0)
        }
        E::ReplicaRestarted { replica, process } => format!("replica-{replica} restarted as p{}", process.0),
        E::ReplicaPaused { replica, process, for_ns } => {
            format!("REPLICA-{replica} PAUSED (p{} frozen for {})", process.0, millis_text(*for_ns))
        }
        E::ReplicaResumed { replica, process } => format!("replica-{replica} resumed (p{})", process.0),
        E::ClockSkewed { replica, offset_ms } => format!("replica-{replica} clock skewed by {offset_ms}ms"),
        E::TimeoutSkewed { process, asked_ns, took_ns } => format!(
            "p{}'s {} timer fired after {} of store time (skewed clock)",
            process.0,
            millis_text(*asked_ns),
            millis_text(*took_ns)
        ),
        E::FaultInjected { fault, replica, detail_ns, .. } => format!(
            "FAULT {}{}{}",
            fault.name(),
            replica.map(|r| format!(" on replica-{r}")).unwrap_or_default(),
            if *detail_ns > 0 { format!(" ({})", millis_text(*detail_ns)) } else { String::new() }
        ),
        E::SwarmSelected { enabled } => {
            format!("swarm switched on: {}", enabled.iter().map(|k| k.name()).collect::<Vec<_>>().join(", "))
        }
        E::Healed => "HEALED: faults stop, everything resumes".into(),
        E::BounceMeter { relay, timer } => format!("claim bounces: {relay} relay, {timer} timer"),
        #[allow(unreachable_patterns)] // Events added to the model later read as their name.
        other => format!("{} {other:?}", other.name()),
    }
}

fn reaction_text(reaction: &Reaction) -> String {
    match reaction {
        Reaction::Requeued => "relay requeued".into(),
        Reaction::Deferred { attempt, backoff_ns } => {
            format!("timer deferred {} (refusal {attempt})", millis_text(*backoff_ns))
        }
        Reaction::Conflict409 => "409 to the administrator".into(),
    }
}

fn exit_text(exit: &Exit) -> &'static str {
    match exit {
        Exit::Committed => "committed",
        Exit::Refused => "refused",
        Exit::Duplicate => "duplicate trigger, released",
        Exit::ValidationError => "validation error",
        Exit::UnexpectedFailure => "unexpected failure",
        Exit::Panic => "panic",
        Exit::LostClaim => "lost its claim (commit rejected)",
        Exit::Migrated => "migrated",
        Exit::LaneError => "lane refused a reentrant call",
        Exit::Cancelled => "cancelled while its process lived, released",
        Exit::HandedBack => "handed back untouched: its replica was shutting down",
    }
}

#[cfg(test)]
mod tests {
    use sutra_sim_core::EntropyMode;
    use sutra_sim_model::{Mutant, RunOptions, Scenario};

    use super::*;

    /// The first failing smoke seed of `mutant`, traced: the tests do not depend on which
    /// seed that is.
    fn first_failure(mutant: Mutant) -> Outcome<ModelEvent> {
        first_failure_of(mutant, &Scenario::built_in("smoke").unwrap())
    }

    /// As [`first_failure`], in `scenario`.
    fn first_failure_of(mutant: Mutant, scenario: &Scenario) -> Outcome<ModelEvent> {
        let scenario = scenario.clone();
        (0..200)
            .map(|seed| {
                let options = RunOptions {
                    entropy: EntropyMode::Seed(seed),
                    strategy: None,
                    mutant: Some(mutant),
                    keep_trace: true,
                };
                sutra_sim_model::run(&scenario, &options)
            })
            .find(|outcome| !outcome.verdict.is_pass())
            .expect("a mutant fails within 200 smoke seeds")
    }

    #[test]
    fn a_story_follows_the_failing_instance_to_the_failing_event() {
        let outcome = first_failure(Mutant::PerProcessOwner);
        let failing = &outcome.trace[outcome.failing_event.unwrap() as usize];
        let story = tell(&outcome);
        assert_eq!(story.instances, vec![failing.kind.instance().unwrap()]);
        let text = story.to_string();
        // Whichever checker sees the mutant first (owner-scope, since issue #12).
        let checker = outcome.verdict.checker().unwrap();
        assert!(text.starts_with(&format!("STORY — violation of {checker}")), "{text}");
        let marked: Vec<&String> = story.lines.iter().filter(|l| l.starts_with('▶')).collect();
        assert_eq!(marked.len(), 1, "{text}");
        assert!(marked[0].ends_with(&format!("◀ {checker}")), "{text}");
        assert_eq!(story.lines.last(), Some(marked[0]), "the story ends at the failure: {text}");
        assert!(text.contains("replica-"), "nodes are named: {text}");
        assert!(text.contains("lane "), "lanes are shown: {text}");
    }

    #[test]
    fn a_failure_found_at_the_end_follows_the_unfinished_instances() {
        // refusal-contract catches this mutant mid-run where it can (a refused relay never
        // requeued): judge with the eventually-checker alone to get a failure at the end.
        let mut scenario = Scenario::built_in("smoke").unwrap();
        scenario.run.checkers = vec!["eventual-completion".to_string()];
        let outcome = first_failure_of(Mutant::AckBeforeCommit, &scenario);
        assert_eq!(outcome.verdict.checker(), Some("eventual-completion"));
        assert!(outcome.failing_event.is_none());
        let story = tell(&outcome);
        assert!(!story.instances.is_empty() && story.instances.len() <= STORY_INSTANCES_MAX);
        assert!(story.lines.len() <= STORY_LINES_MAX + 8, "{story}");
        assert!(story.lines.last().unwrap().contains("end of run"), "{story}");
    }

    #[test]
    fn the_whole_trace_is_one_line_per_event() {
        let outcome = first_failure(Mutant::RoutingAsMutex);
        assert_eq!(trace_lines(&outcome).len() as u64, outcome.events);
    }
}

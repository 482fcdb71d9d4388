//! `sutra-sim-model`: the model of the Sutra durable-workflow runtime's ownership protocol
//! (spec 000) and its state lanes (spec 003), with fault injection, workloads, the
//! built-in checkers and the mutants.
//!
//! Every rule of DESIGN.md §4 (R1–R19, L1–L12) lives at one place in the model; the
//! checkers assert them from events alone; the mutants break them one at a time.
#![warn(missing_docs)]

pub mod admin;
pub mod admin_client;
pub mod broker;
pub mod checkers;
pub mod claim_fence;
pub mod ctx;
pub mod dense;
pub mod design;
pub mod event;
mod event_fold;
pub mod faults;
pub mod id_bits;
pub mod ids;
pub mod injector;
pub mod log;
pub mod mutant;
pub mod paged;
pub mod pull;
pub mod ratio;
pub mod relations;
pub mod replica;
pub mod request_log;
pub mod resize;
pub mod routing;
pub mod scenario;
mod sender;
pub mod signature;
pub mod sorted_vec;
pub mod spec;
pub mod sql_store;
pub mod store;
pub mod streams;
pub mod task_rows;
pub mod timer_rows;
pub mod variant;
pub mod view;
pub mod work_bounds;
pub mod work_left;
pub mod workload;
pub mod world;

use std::rc::Rc;

use sutra_sim_core::executor;
use sutra_sim_core::{simulate, Checker, EntropyMode, NodeId, Outcome, RunConfig, StrategyConfig, Tracer};

pub use event::ModelEvent;
pub use mutant::{Mutant, MUTANTS};
use replica::ReplicaSlot;
pub use scenario::Scenario;
pub use view::ModelView;
use world::World;

/// The checker type of this model.
pub type ModelChecker = Box<dyn Checker<ModelEvent, ModelView>>;

/// How to run a scenario once.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Seed or tape.
    pub entropy: EntropyMode,
    /// The strategy, overriding the scenario's.
    pub strategy: Option<StrategyConfig>,
    /// The mutant to switch on.
    pub mutant: Option<Mutant>,
    /// Keep the whole trace in the outcome.
    pub keep_trace: bool,
}

impl RunOptions {
    /// A seeded run of the correct model with the scenario's strategy.
    pub fn seeded(seed: u64) -> RunOptions {
        RunOptions::for_seed(seed, None, None)
    }

    /// A seeded run with a strategy override and a mutant, keeping no trace (a sweep's seed).
    pub fn for_seed(seed: u64, strategy: Option<StrategyConfig>, mutant: Option<Mutant>) -> RunOptions {
        RunOptions { entropy: EntropyMode::Seed(seed), strategy, mutant, keep_trace: false }
    }
}

/// Builds the world inside the simulation and returns the checkers' view.
pub fn setup(scenario: &Scenario, mutant: Option<Mutant>, tracer: &Tracer<ModelEvent>) -> ModelView {
    view_of(&build_world(scenario, mutant, tracer))
}

/// The checkers' view of `world`. Weak: the view must not keep the world alive.
fn view_of(world: &World) -> ModelView {
    ModelView::new(world.ctx.config.clone(), world.store.state()).with_cluster(Rc::downgrade(&world.cluster))
}

/// Builds the world inside the simulation: its components, replicas and pull workers booting,
/// the workload, the fault injector and the operator started. The world is kept alive by
/// its tasks; the caller's handle is for tests.
fn build_world(scenario: &Scenario, mutant: Option<Mutant>, tracer: &Tracer<ModelEvent>) -> Rc<World> {
    let (faults, enabled) = injector::swarm::select(&scenario.faults);
    if scenario.faults.swarm {
        tracer.emit(ModelEvent::SwarmSelected { enabled });
    }
    let config = Rc::new(ctx::Config { scenario: scenario.clone(), faults });
    let ctx = Rc::new(ctx::Context::new(config, mutant, tracer.clone()));
    let broker =
        broker::Broker::new(tracer.clone(), scenario.topology.prefetch, faults::broker::BrokerFaults::new(ctx.clone()));
    let store = store::Store::new(
        tracer.clone(),
        broker.clone(),
        faults::store::StoreFaults::new(ctx.clone()),
        scenario.workload.relay_delay_max,
        scenario.timeouts.store_latency_max,
        scenario.timeouts.claim_timeout,
    )
    .with_careless_commit_retry(ctx.mutant_is(Mutant::CommitRetryAcceptsFreeRow))
    .with_claim_refusing_own_owner(ctx.mutant_is(Mutant::ClaimRefusesOwnOwner));
    let store = match scenario.store.engine {
        sql_store::StoreEngine::Model => store,
        sql_store::StoreEngine::Sqlite => store.with_sql_engine(sql_store::load::engine(&scenario.store)),
        sql_store::StoreEngine::Differential => store.with_sql_shadow(sql_store::load::engine(&scenario.store)),
    };
    let world = Rc::new(World {
        ctx,
        store,
        broker,
        routing: Rc::new(routing::Routing::new(scenario.topology.lanes)),
        cluster: Rc::new(replica::Cluster::default()),
        zombies: Default::default(),
        pull_workers: Default::default(),
    });
    let weak = Rc::downgrade(&world);
    world.ctx.set_pause_process(Box::new(move |process| {
        if let Some(world) = weak.upgrade() {
            injector::lease::pause_mid_sweep(&world, process);
        }
    }));
    injector::install_boundary_strike(&world);
    let deps = world.replica_deps();
    for index in 0..scenario.topology.replicas {
        let deps = deps.clone();
        let boot: sutra_sim_core::node::BootFn = Rc::new(move |node| replica::boot(&deps, index, node));
        world.cluster.slots.borrow_mut().push(ReplicaSlot {
            node: NodeId::WORLD,
            process: ids::ProcessId(0),
            surface: None,
            replacement: None,
            skew_ms: 0,
        });
        let node = executor::add_node(format!("replica-{index}"), Some(boot));
        world.cluster.slots.borrow_mut()[index as usize].node = node;
    }
    let mut pull_workers = Vec::new();
    for worker in 0..scenario.topology.pull_workers {
        let (ctx, store) = (world.ctx.clone(), world.store.clone());
        let boot: sutra_sim_core::node::BootFn = Rc::new(move |node| {
            executor::spawn_daemon_on(node, "pull-worker", pull::run(ctx.clone(), store.clone(), worker));
        });
        pull_workers.push(executor::add_node(format!("pull-worker-{worker}"), Some(boot)));
    }
    debug_assert_eq!(pull_workers.len(), scenario.topology.pull_workers as usize);
    *world.pull_workers.borrow_mut() = pull_workers;
    injector::clock_skew::skew_clocks(&world);
    workload::start(&world);
    executor::spawn_daemon_on(NodeId::WORLD, "fault-injector", injector::inject(world.clone()));
    executor::spawn_daemon_on(NodeId::WORLD, "operator", admin_client::operator(world.clone()));
    executor::spawn_daemon_on(NodeId::WORLD, "broker:liveness", injector::crash::broker_liveness(world.clone()));
    executor::spawn_on(NodeId::WORLD, "driver", workload::drive(world.clone()));
    world
}

/// Runs `scenario` once with the given checkers.
pub fn run_with(scenario: &Scenario, options: &RunOptions, checkers: Vec<ModelChecker>) -> Outcome<ModelEvent> {
    run_configured(scenario, options, checkers, false)
}

/// As [`run_with`], collecting coverage marks for exploration: the first hit of each
/// sometimes-checker and the model's abstract-state signature ([`signature`]) after every
/// witness event. The run itself — events, verdict, fingerprint, tape — is the same.
pub fn run_marked(scenario: &Scenario, options: &RunOptions, mut checkers: Vec<ModelChecker>) -> Outcome<ModelEvent> {
    checkers.push(Box::new(signature::SignatureProbe::new()));
    run_configured(scenario, options, checkers, true)
}

fn run_configured(
    scenario: &Scenario,
    options: &RunOptions,
    mut checkers: Vec<ModelChecker>,
    marks: bool,
) -> Outcome<ModelEvent> {
    leave_out_idle_checkers(scenario, &mut checkers);
    let config = RunConfig {
        entropy: options.entropy.clone(),
        strategy: strategy_for(scenario, options),
        budgets: scenario.budgets(),
        stall_bound: Some(scenario.run.stall_bound),
        keep_trace: options.keep_trace,
        marks,
    };
    simulate(&config, checkers, |tracer| setup(scenario, options.mutant, tracer))
}

/// Leaves out of a run the checkers that have nothing to judge in it: `store-divergence`
/// unless the run has two store engines to compare. Each would be asked about every event
/// it listens to and could never speak, so leaving it out changes no verdict.
fn leave_out_idle_checkers(scenario: &Scenario, checkers: &mut Vec<ModelChecker>) {
    if !checkers::store_divergence::judges(scenario) {
        checkers.retain(|c| c.name() != checkers::store_divergence::NAME);
    }
}

/// The strategy a run of `scenario` with `options` schedules with: the override or the
/// scenario's, with a PCT horizon left to `auto` fitted to the scenario's run lengths
/// ([`fitted_horizon`]).
pub fn strategy_for(scenario: &Scenario, options: &RunOptions) -> StrategyConfig {
    options
        .strategy
        .unwrap_or_else(|| scenario.strategy())
        .with_fitted_horizon(|| fitted_horizon(scenario, options.mutant))
}

/// Calibration runs behind [`fitted_horizon`].
pub const HORIZON_CALIBRATION_SEEDS: u64 = 4;

/// The PCT horizon fitted to `scenario` (with `mutant`): the most scheduling steps (polls)
/// of seeds `0..HORIZON_CALIBRATION_SEEDS` under the random walk, judged by no checker
/// ([`sutra_sim_core::strategy::fit_horizon`], as Coyote and P do). A pure function of
/// the scenario and the mutant, so a reproducer replays with the same horizon; computed
/// once per process for each.
pub fn fitted_horizon(scenario: &Scenario, mutant: Option<Mutant>) -> u32 {
    type Cache = std::sync::Mutex<std::collections::BTreeMap<(String, Option<&'static str>), u32>>;
    static CACHE: std::sync::OnceLock<Cache> = std::sync::OnceLock::new();
    let key = (scenario.to_toml(), mutant.map(|m| m.name()));
    let cache = CACHE.get_or_init(Default::default);
    if let Some(&h) = cache.lock().expect("no panic while holding the cache").get(&key) {
        return h;
    }
    let h = sutra_sim_core::strategy::fit_horizon((0..HORIZON_CALIBRATION_SEEDS).map(|seed| {
        let options = RunOptions { strategy: Some(StrategyConfig::Random), ..RunOptions::for_seed(seed, None, mutant) };
        run_configured(scenario, &options, Vec::new(), false).polls
    }));
    cache.lock().expect("no panic while holding the cache").insert(key, h);
    h
}

/// Runs `scenario` once with `info`'s mutant on, judged only by the checkers expected to
/// catch it: a run that another checker would have stopped first goes on until the
/// expected one speaks, so "killed by its expected checker" does not depend on checker
/// order. Of alternatives ("a or b"), those registered run; it is an error if none is.
pub fn run_for_kill(scenario: &Scenario, seed: u64, info: &mutant::MutantInfo) -> Result<Outcome<ModelEvent>, String> {
    let mut options = RunOptions::seeded(seed);
    options.mutant = Some(info.mutant);
    Ok(run_with(scenario, &options, kill_checkers(info)?))
}

/// The checkers [`run_for_kill`] judges `info`'s mutant with: those expected to catch it
/// that are registered (none for a mutant expected to hang). Exploration's kill
/// benchmarks judge with the same.
pub fn kill_checkers(info: &mutant::MutantInfo) -> Result<Vec<ModelChecker>, String> {
    static REGISTRY: std::sync::OnceLock<checkers::ModelRegistry> = std::sync::OnceLock::new();
    let registry = REGISTRY.get_or_init(checkers::registry);
    let expected: Vec<&str> = info.expected_checkers().collect();
    let names: Vec<String> = expected.iter().filter(|n| registry.get(n).is_ok()).map(|n| n.to_string()).collect();
    if names.is_empty() && !expected.is_empty() {
        return Err(format!("mutant {} expects checker(s) not registered: {}", info.name, expected.join(" or ")));
    }
    // An empty list builds every checker; a mutant expected to hang needs none.
    if names.is_empty() {
        Ok(Vec::new())
    } else {
        registry.build(&names).map_err(|e| e.to_string())
    }
}

/// Runs `scenario` once as variant `info` runs it ([`variant::VariantInfo::apply`]): an
/// unsafe variant judged only by the checkers expected to catch it (as a mutant's kill
/// search is), a safe one by the checkers the scenario names.
pub fn run_variant(scenario: &Scenario, seed: u64, info: &variant::VariantInfo) -> Outcome<ModelEvent> {
    static REGISTRY: std::sync::OnceLock<checkers::ModelRegistry> = std::sync::OnceLock::new();
    let registry = REGISTRY.get_or_init(checkers::registry);
    let (scenario, mutant) = info.apply(scenario);
    let mut options = RunOptions::seeded(seed);
    options.mutant = mutant;
    let names: Vec<String> = info.expected.checkers().map(str::to_string).collect();
    if names.is_empty() {
        return run(&scenario, &options);
    }
    let built = registry.build(&names).expect("a variant's expected checkers are registered (tested)");
    run_with(&scenario, &options, built)
}

/// Runs `scenario` once with the checkers the scenario names (all built-in ones if none).
pub fn run(scenario: &Scenario, options: &RunOptions) -> Outcome<ModelEvent> {
    // The registry and the default selection are the same for every run: built once.
    static REGISTRY: std::sync::OnceLock<checkers::ModelRegistry> = std::sync::OnceLock::new();
    static DEFAULT_NAMES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let registry = REGISTRY.get_or_init(checkers::registry);
    let built = if scenario.run.checkers.is_empty() {
        registry.build(DEFAULT_NAMES.get_or_init(checkers::default_names))
    } else {
        registry.build(&scenario.run.checkers)
    };
    run_with(scenario, options, built.expect("scenario checkers are validated before running"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_divergence_is_installed_only_where_two_store_engines_run() {
        let names = |engine| {
            let mut scenario = Scenario::built_in("smoke").expect("smoke is built in");
            scenario.store.engine = engine;
            let mut built = checkers::registry().build(&checkers::default_names()).expect("built-in checkers");
            leave_out_idle_checkers(&scenario, &mut built);
            built.iter().map(|c| c.name().to_string()).collect::<Vec<_>>()
        };
        let all = checkers::default_names();
        assert!(all.iter().any(|n| n == checkers::store_divergence::NAME));
        let differential = names(sql_store::StoreEngine::Differential);
        assert_eq!(differential, all, "a differential run keeps every checker, in order");
        for engine in [sql_store::StoreEngine::Model, sql_store::StoreEngine::Sqlite] {
            let kept = names(engine);
            let expected: Vec<_> = all.iter().filter(|n| *n != checkers::store_divergence::NAME).cloned().collect();
            assert_eq!(kept, expected, "{engine:?}: only store-divergence is left out");
        }
    }

    /// Runs `seed` of `scenario` and says whether the world outlived the run.
    fn world_outlives_run(scenario: &Scenario, mutant: Option<Mutant>, seed: u64) -> bool {
        let mut store = std::rc::Weak::new();
        let config = RunConfig::seeded(seed);
        simulate(&config, Vec::new(), |tracer| {
            let view = setup(scenario, mutant, tracer);
            store = view.store_weak();
            view
        });
        store.upgrade().is_some()
    }

    #[test]
    fn the_mutants_of_lost_replies_and_cancellation_are_caught_by_their_expected_checkers() {
        let scenario = Scenario::built_in("real-world").unwrap();
        for mutant in [Mutant::AmbiguousCommitAsFailure, Mutant::NoReleaseOnCancel, Mutant::ShutdownSkipsDrainRelease] {
            let info = mutant.info();
            let killed = (0..40).find(|&seed| info.killed_by(&run_for_kill(&scenario, seed, info).unwrap().verdict));
            assert!(killed.is_some(), "{} survived 40 seeds of real-world", info.name);
        }
    }

    #[test]
    fn the_correct_model_survives_lost_replies_cancellation_graceful_shutdowns_and_strikes_at_store_calls() {
        let scenario = Scenario::built_in("real-world").unwrap();
        for seed in 0..30 {
            let verdict = run(&scenario, &RunOptions::seeded(seed)).verdict;
            assert!(matches!(verdict, sutra_sim_core::Verdict::Pass), "seed {seed}: {verdict:?}");
        }
    }

    /// What the world shows of replica 0's slot at one instant.
    #[derive(Debug, PartialEq)]
    struct SlotSeen {
        node: NodeId,
        status: sutra_sim_core::NodeStatus,
        process: ids::ProcessId,
        surface: Option<ids::ProcessId>,
        alive_for_faults: bool,
        process_paused: bool,
    }

    fn slot_seen(world: &World) -> SlotSeen {
        let (node, process, surface) = {
            let slot = &world.cluster.slots.borrow()[0];
            (slot.node, slot.process, slot.surface.as_ref().map(|s| s.process))
        };
        SlotSeen {
            node,
            status: executor::node_status(node),
            process,
            surface,
            alive_for_faults: injector::crash::alive_replicas(world).iter().any(|&(i, _)| i == 0),
            process_paused: world.cluster.process_paused(process),
        }
    }

    #[test]
    fn a_fault_drawn_before_a_paused_replicas_replacement_boots_sees_the_frozen_process_whole() {
        // Pause replica 0 with a replacement, by hand, in a scenario with no faults of its
        // own; look at the slot in the same instant (the replacement added, not booted) —
        // what crash, pause, lease and cancel faults draw from — and once it has booted.
        let mut scenario = Scenario::built_in("quiet").unwrap();
        scenario.faults.process_pause.replacement = ratio::Ratio::ALWAYS;
        let seen: Rc<std::cell::RefCell<Vec<SlotSeen>>> = Default::default();
        let record = seen.clone();
        simulate(&RunConfig::seeded(0), Vec::new(), |tracer| {
            let world = build_world(&scenario, None, tracer);
            let view = view_of(&world);
            let record = record.clone();
            executor::spawn_daemon_on(NodeId::WORLD, "test:pause-with-replacement", async move {
                executor::sleep(std::time::Duration::from_millis(1)).await;
                let before = slot_seen(&world);
                record.borrow_mut().push(before);
                let node = world.cluster.slots.borrow()[0].node;
                injector::pause::pause_for(&world, 0, node, std::time::Duration::from_secs(5));
                record.borrow_mut().push(slot_seen(&world));
                executor::sleep(std::time::Duration::from_millis(1)).await;
                record.borrow_mut().push(slot_seen(&world));
            });
            view
        });
        let seen = seen.borrow();
        let [before, window, booted] = &seen[..] else { panic!("three looks at the slot: {seen:?}") };
        assert_eq!(before.status, sutra_sim_core::NodeStatus::Alive);
        assert_eq!(before.surface, Some(before.process), "booted: {before:?}");
        // In the window the slot is still the frozen process's, whole: its node, paused.
        let frozen = SlotSeen {
            status: sutra_sim_core::NodeStatus::Paused,
            alive_for_faults: false,
            process_paused: true,
            ..*before
        };
        assert_eq!(window, &frozen, "a fault in the window sees one process");
        // Booted: the replacement's node, process and surface together.
        assert_ne!(booted.node, before.node);
        assert!(booted.process > before.process);
        assert_eq!(booted.surface, Some(booted.process));
        assert_eq!(booted.status, sutra_sim_core::NodeStatus::Alive);
        assert!(booted.alive_for_faults && !booted.process_paused);
    }

    #[test]
    fn an_aborted_execution_on_a_replica_whose_clock_is_behind_releases_within_the_exit_path_bound() {
        // The shape of a live-leak found on the correct model (swarm): replica 0's clock is
        // 12 s behind simulated time, so it reads 0 for the first 12 s. Its lane holds a
        // claim; the store goes unavailable and the lane's worker is aborted. The exit path
        // releases, retrying the refused call with a backoff measured on the replica's own
        // clock — which runs although it reads 0. Were the backoff measured on the clamped
        // reading, the release would wait until the clock read 20 ms, at 12 s.
        let mut scenario = Scenario::built_in("quiet").unwrap();
        // Lanes run supervised (abortable); a rate this low never fires on its own here.
        scenario.faults.cancel.abort_per_tick = ratio::Ratio::new(1, 1_000_000).unwrap();
        let seen: Rc<std::cell::RefCell<Option<(u64, u64, bool)>>> = Default::default();
        let record = seen.clone();
        simulate(&RunConfig::seeded(0), Vec::new(), |tracer| {
            let world = build_world(&scenario, None, tracer);
            let view = view_of(&world);
            let record = record.clone();
            executor::spawn_daemon_on(NodeId::WORLD, "test:abort-on-a-clock-behind", async move {
                let node = world.cluster.slots.borrow()[0].node;
                executor::set_clock(node, sutra_sim_core::NodeClock { offset_ns: -12_000_000_000, drift_ppm: 0 });
                // Wait for one of replica 0's lanes to hold a claim.
                let (inbox, instance) = loop {
                    executor::sleep(std::time::Duration::from_millis(1)).await;
                    let surface = world.cluster.slots.borrow()[0].surface.clone().expect("replica 0 booted");
                    let held = surface.lanes.iter().find_map(|inbox| {
                        let f = (*inbox.in_flight.borrow())?;
                        f.claim.map(|_| (inbox.clone(), f.work.instance))
                    });
                    if let Some(held) = held {
                        break held;
                    }
                };
                world.store.faults().make_unavailable(std::time::Duration::from_millis(300));
                let aborted_at = executor::now();
                assert!(inbox.abort().is_some(), "the lane's worker is aborted");
                while inbox.in_flight.borrow().is_some() {
                    executor::sleep(std::time::Duration::from_millis(1)).await;
                }
                let released = world.store.state().borrow().instances[instance.0 as usize].owner.is_none();
                *record.borrow_mut() = Some((aborted_at.as_nanos(), executor::now().as_nanos(), released));
            });
            view
        });
        let (aborted_at, ended_at, released) = seen.borrow().expect("a lane of replica 0 held a claim");
        let took = std::time::Duration::from_nanos(ended_at - aborted_at);
        assert!(aborted_at < 12_000_000_000, "aborted while the clock still read 0");
        assert!(took < std::time::Duration::from_secs(2), "the exit path took {took:?}");
        assert!(released, "the exit path released the claim (or committed, which releases too)");
    }

    #[test]
    fn no_world_outlives_its_run() {
        // A cycle of strong handles through the world leaks it whole after every run: a
        // nightly of millions of seeds then runs out of memory. Replicas crash, restart
        // and pause in these scenarios, and mutants take the model's odd paths.
        for scenario in Scenario::all_built_in() {
            for seed in 0..3 {
                assert!(!world_outlives_run(&scenario, None, seed), "{} seed {seed} leaked its world", scenario.name);
            }
        }
        let smoke = Scenario::built_in("smoke").unwrap();
        for info in mutant::MUTANTS {
            assert!(!world_outlives_run(&smoke, Some(info.mutant), 0), "mutant {} leaked its world", info.name);
        }
    }
}

//! A user-written invariant, registered without touching the simulator or the model, run
//! in a sweep, and shown to catch a mutant.
//!
//! The invariant: **no relay goes round more often than the scenario's timing can
//! explain.** A refused relay is requeued and redelivered later (R4), so under contention
//! a relay is legitimately delivered many times — about once per requeue delay, for as
//! long as a dead, paused or slow owner can hold the claim. But a relay is refused only
//! while another execution of its instance holds the claim, and after the heal no claim
//! outlasts the scenario's progress bound (a step, or a stale claim swept), so a relay
//! delivered more often than one per requeue delay over the faulty phase plus that bound
//! is not waiting out
//! contention: it is going round in a livelock. The built-in eventual-completion checker
//! sees such a livelock only at the end of the run, after up to an hour of simulated time;
//! this always-checker reports it the moment the relay goes round once too often, and names
//! it. Its partner, a sometimes-property, shows that relays do go round under contention
//! and still get through — otherwise the bound would pass for want of a test.
//!
//! ```sh
//! cargo run --release --example custom_checker                      # sweep + mutant
//! cargo run --release --example custom_checker -- --count 20000     # a longer sweep
//! cargo run --release --example custom_checker -- --seed 0 --mutant refused-relay-republished
//! ```
//!
//! `tests/custom_checker.rs` runs the same checkers under `cargo test`.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use sutra_sim::plugin::*;
use sutra_sim::sweep::{self, SweepPlan};

/// The always-checker's name, as reports, `--checker` and replays spell it.
pub const BOUNDED_REDELIVERY: &str = "relay-redelivery-bounded";
/// The sometimes-partner's name.
pub const RELAY_OUTLASTED_CONTENTION: &str = "sometimes-relay-outlasted-contention";

/// Deliveries of one relay that count as "went round under contention" for the partner
/// property: a few refusals in a row, not a single retry.
pub const CONTENTION_DELIVERIES_MIN: u32 = 5;

/// The most deliveries of one relay that `scenario`'s timing can explain: one per requeue
/// delay, for as long as the scenario lets a claim block it — the faulty phase, then the
/// progress bound after the heal.
pub fn deliveries_max(scenario: &Scenario) -> u32 {
    let allowed = scenario.phases.heal_at + scenario.progress_bound();
    let per_delivery = scenario.timeouts.requeue_delay.max(std::time::Duration::from_millis(1));
    u32::try_from(allowed.as_millis() / per_delivery.as_millis()).unwrap_or(u32::MAX)
}

/// The always-checker: deliveries per relay so far, against the bound.
#[derive(Default)]
pub struct BoundedRedelivery {
    /// Deliveries of each relay seen so far.
    deliveries: BTreeMap<MessageId, u32>,
    /// `deliveries_max` of the scenario, read from the view at the first delivery.
    bound: Option<u32>,
}

impl Checker<ModelEvent, ModelView> for BoundedRedelivery {
    fn name(&self) -> &str {
        BOUNDED_REDELIVERY
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, view: &ModelView) -> Check {
        let ModelEvent::RelayDelivered { instance, message, .. } = &event.kind else {
            return Check::Ok;
        };
        let bound = *self.bound.get_or_insert_with(|| deliveries_max(view.scenario()));
        let deliveries = self.deliveries.entry(*message).or_default();
        *deliveries += 1;
        if *deliveries > bound {
            return Check::Fail(format!(
                "relay {} of instance {} was delivered {} times in {} ms of simulated time: more than the {bound} \
                 that one delivery per requeue delay over the faulty phase and the progress bound allows — it is \
                 going round, not waiting out contention",
                message.0,
                instance.0,
                deliveries,
                event.time.as_millis()
            ));
        }
        Check::Ok
    }
}

/// The sometimes-partner: a relay delivered at least [`CONTENTION_DELIVERIES_MIN`] times
/// was then acked — it went round under contention and got through.
#[derive(Default)]
pub struct RelayOutlastedContention {
    /// Deliveries of each relay not yet acked.
    deliveries: BTreeMap<MessageId, u32>,
}

impl Checker<ModelEvent, ModelView> for RelayOutlastedContention {
    fn name(&self) -> &str {
        RELAY_OUTLASTED_CONTENTION
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Sometimes
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, _view: &ModelView) -> Check {
        match &event.kind {
            ModelEvent::RelayDelivered { message, .. } => *self.deliveries.entry(*message).or_default() += 1,
            ModelEvent::RelayAcked { message, .. }
                if self.deliveries.remove(message).is_some_and(|n| n >= CONTENTION_DELIVERIES_MIN) =>
            {
                return Check::Reached;
            }
            _ => {}
        }
        Check::Ok
    }
}

/// The registration of the always-checker.
pub fn bounded_redelivery() -> ModelCheckerSpec {
    ModelCheckerSpec {
        name: BOUNDED_REDELIVERY,
        kind: CheckerKind::Always,
        description: "no relay is delivered more often than one per requeue delay over the scenario's time allowance",
        rules: &["R4"],
        factory: Arc::new(|| Box::new(BoundedRedelivery::default())),
    }
}

/// The registration of the sometimes-partner.
pub fn relay_outlasted_contention() -> ModelCheckerSpec {
    ModelCheckerSpec {
        name: RELAY_OUTLASTED_CONTENTION,
        kind: CheckerKind::Sometimes,
        description: "a relay went round several times under contention and was then acked",
        rules: &["R4"],
        factory: Arc::new(|| Box::new(RelayOutlastedContention::default())),
    }
}

/// The built-in checkers plus ours, with the command that replays a seed of this program.
pub fn checkers() -> CheckerSet {
    CheckerSet::built_in().with(bounded_redelivery()).with(relay_outlasted_contention()).replay_with(
        "cargo run --release --example custom_checker -- --scenario {scenario} --seed {seed} --mutant {mutant}",
    )
}

/// The checkers the mutant is judged by: all of [`checkers`] but the built-in
/// `refusal-contract`, which pairs each refused copy with its requeue from the broker's
/// witnesses and so fails this mutant (it acks the refused copy and publishes a new one) at
/// the first refusal, before any relay can go round; without it, the mutant shows what ours
/// adds over the end-of-run eventual-completion.
pub fn checkers_for_the_mutant() -> CheckerSet {
    checkers().skip(["refusal-contract"]).expect("refusal-contract is a built-in checker")
}

/// The mutant this example catches: a refused relay re-published at once (breaks R3, R4),
/// so it goes round against the holder, again and again, much faster than one delivery
/// per requeue delay.
pub const MUTANT_CAUGHT: Mutant = Mutant::RefusedRelayRepublished;

/// Seeds of the correct model swept by default.
const CORRECT_SEEDS_DEFAULT: u64 = 2_000;
/// Seeds of the mutant swept by default.
const MUTANT_SEEDS_DEFAULT: u64 = 50;

/// Sweeps `count` seeds of `scenario_names` (a built-in name or `all`), with or without a
/// mutant, and prints the summary.
fn sweep(scenario_names: &str, count: u64, mutant: Option<Mutant>) -> sutra_sim::report::SweepReport {
    let checkers = if mutant.is_some() { checkers_for_the_mutant() } else { checkers() };
    let scenarios = sutra_sim::scenario_arg::resolve_with(scenario_names, &checkers).unwrap_or_else(|e| panic!("{e}"));
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    let plan = SweepPlan {
        scenarios,
        start: 0,
        count,
        shard: None,
        mutant,
        strategy: None,
        jobs,
        time_budget: None,
        checkers,
    };
    let started = Instant::now();
    let (results, early) = sweep::run(&plan, &AtomicBool::new(false), &|_, _| {});
    let report = sweep::report(&plan, &results, started.elapsed(), early);
    print!("{}", report.summary());
    report
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    let scenario = value("--scenario").unwrap_or_else(|| "all".to_string());
    let mutant = value("--mutant").filter(|m| m != "none").map(|m| Mutant::parse(&m).unwrap_or_else(|e| panic!("{e}")));

    if let Some(seed) = value("--seed") {
        // Replay one seed with our checkers, as the sweep's replay command asks.
        let seed: u64 = seed.parse().expect("--seed takes a whole number");
        let scenario = Scenario::built_in(&scenario).unwrap_or_else(|e| panic!("{e}"));
        let options = RunOptions { mutant, ..RunOptions::seeded(seed) };
        let set = if mutant.is_some() { checkers_for_the_mutant() } else { checkers() };
        let outcome = set.run(&scenario, &options).unwrap_or_else(|e| panic!("{e}"));
        println!("{}\nfingerprint {:016x}, {} events", outcome.verdict, outcome.fingerprint, outcome.events);
        std::process::exit(i32::from(!outcome.verdict.is_pass()));
    }

    let count = value("--count").map_or(CORRECT_SEEDS_DEFAULT, |c| c.parse().expect("--count takes a whole number"));
    println!("== the correct model, judged by the built-in checkers and {BOUNDED_REDELIVERY}:");
    let correct = sweep(&scenario, count, None);
    println!("\n== mutant {}, judged by the same checkers but refusal-contract:", MUTANT_CAUGHT.name());
    let caught = sweep(&scenario, MUTANT_SEEDS_DEFAULT, Some(MUTANT_CAUGHT));
    let ours = caught.failures.iter().filter(|f| f.checker == BOUNDED_REDELIVERY).count();
    println!("\n{BOUNDED_REDELIVERY} caught the mutant in {ours} of {} seeds", caught.seeds_run);
    let green = correct.violations == 0 && ours > 0;
    std::process::exit(if green { 0 } else { 1 });
}

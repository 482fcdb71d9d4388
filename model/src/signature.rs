//! The model's abstract-state signature, for exploration (`sutra-sim explore`).
//!
//! Exploration grows the runs that reach something new; "new" is judged on coverage marks
//! ([`sutra_sim_core::marks`]), and this file supplies the model's share: a coarse hash of
//! what matters to the ownership protocol right now (issue #14):
//!
//! - **per instance**, the kind of its owner — none, a lane of a live process, of a paused
//!   one, of a process that is no replica's live process any more (a zombie's or a dead
//!   one's claim), a migration — and whether it is parked for a pull worker; and the
//!   workload's progress (none started, under way, all done);
//! - **per replica**, its node live, paused or dead, whether it holds the sweeper lease,
//!   how many instances its live process owns (0, 1, several), whether deliveries wait in
//!   its binding table, and its lanes' queue depths (how many lanes hold 1, how many several).
//!
//! Instances and replicas are taken as multisets (their words sorted before they are
//! mixed): which instance or replica is in a situation matters less than that one is.
//! Every count is bucketed, so the bitmap does not drown in noise; what the signature
//! tells apart are the rare combinations (a zombie's claim while its replacement runs, a
//! paused lease holder, a deep lane queue behind a frozen node) that exploration grows.
//!
//! Left out on purpose, because measured they were noise (`bench --explore`, 3,000 runs):
//! each instance's exact version makes almost every run's states unique, so a sweep finds
//! nearly as many as exploration (smoke 140,760 against 151,973 in 10,000 runs); the fault
//! kinds injected within the last fault tick likewise (1.16× and 1.04× where the signature
//! without them gave 1.38× and 1.25×). The faults that last are in the signature anyway:
//! paused and dead nodes, a replacement's zombie claims.
//!
//! It is computed from the read-only [`ModelView`] after each witness event (store, broker,
//! executor), by a probe that never fails and is added only to runs that collect marks:
//! a plain sweep does not pay for it, and a marked run draws exactly what a plain one does.

use sutra_sim_core::{marks, Check, Checker, CheckerKind, Event, NodeStatus};

use crate::event::{tag, ModelEvent, Source};
use crate::ids::OwnerId;
use crate::view::ModelView;

/// Name of the signature probe (not a registered checker: it judges nothing).
pub const PROBE_NAME: &str = "state-signature";

/// A word-at-a-time mix (FNV-like with a final avalanche in the bitmap fold).
struct Mix(u64);

impl Mix {
    fn add(&mut self, word: u64) {
        self.0 = (self.0 ^ word).wrapping_mul(0x0100_0000_01b3).rotate_left(23);
    }
}

/// 0, 1 or "several" (2).
fn few(n: usize) -> u64 {
    n.min(2) as u64
}

/// The kind of an instance's owner, as the signature tells them apart.
#[derive(Clone, Copy)]
enum OwnerKind {
    None = 0,
    /// A lane (or the process) of a replica's current process, its node alive.
    Live = 1,
    /// Of a replica's current process, its node paused.
    Paused = 2,
    /// Of a process that is no replica's current one, or whose node is dead: a zombie's
    /// claim, or a dead process's that waits for the sweeper.
    Stale = 3,
    /// An administrative (migration) owner.
    Migration = 4,
}

/// The abstract-state signature of the model as `view` shows it now. See the module doc
/// for what it holds and why.
pub fn signature(view: &ModelView) -> u64 {
    let mut mix = Mix(0xcbf2_9ce4_8422_2325);
    view.with_parts(|store, cluster| {
        let slots = cluster.map(|c| c.slots.borrow());
        // The replica index and node status of an owner's process, if it is some
        // replica's current process (a process id, or a stable replica name, in the high bits).
        let current = |owner: OwnerId| -> Option<(usize, NodeStatus)> {
            let slots = slots.as_ref()?;
            let prefix = owner.0 >> 16;
            slots.iter().enumerate().find_map(|(r, slot)| {
                let mine =
                    OwnerId::process(slot.process).0 >> 16 == prefix || OwnerId::stable(r as u32, 0).0 >> 16 == prefix;
                mine.then(|| (r, sutra_sim_core::executor::node_status(slot.node)))
            })
        };
        let mut owned = vec![0usize; slots.as_ref().map_or(0, |s| s.len())];
        let (mut started, mut done) = (false, true);
        let mut instances: Vec<u64> = store
            .instances
            .iter()
            .map(|row| {
                started |= row.version > 0;
                done &= row.completed();
                let kind = match row.owner {
                    None => OwnerKind::None,
                    Some(owner) if owner.is_migration() => OwnerKind::Migration,
                    Some(owner) => match current(owner) {
                        Some((r, NodeStatus::Alive)) => {
                            owned[r] += 1;
                            OwnerKind::Live
                        }
                        Some((r, NodeStatus::Paused)) => {
                            owned[r] += 1;
                            OwnerKind::Paused
                        }
                        _ => OwnerKind::Stale,
                    },
                };
                (kind as u64) | u64::from(row.parked) << 3
            })
            .collect();
        instances.sort_unstable();
        for w in instances {
            mix.add(w);
        }
        // The workload's progress: none started, under way, all done.
        mix.add(if done { 2 } else { u64::from(started) } << 8);
        if let Some(slots) = &slots {
            let mut replicas: Vec<u64> = slots
                .iter()
                .zip(&owned)
                .map(|(slot, &owned)| {
                    let status = match sutra_sim_core::executor::node_status(slot.node) {
                        NodeStatus::Alive => 0,
                        NodeStatus::Paused => 1,
                        NodeStatus::Dead => 2,
                    };
                    let leased = store.lease.is_some_and(|(holder, _)| holder == slot.process);
                    let (mut queued, mut lanes) = (0, 0u64);
                    if let Some(surface) = &slot.surface {
                        surface.bindings.inspect(|t| queued = t.tickets().count());
                        // Lane depths as a multiset: how many lanes hold 1, how many several.
                        let depths = surface.lanes.iter().map(|l| few(l.queue.len()));
                        let (one, more) =
                            depths.fold((0u64, 0u64), |(o, m), d| (o + u64::from(d == 1), m + u64::from(d == 2)));
                        lanes = one.min(3) | more.min(3) << 2;
                    }
                    status | u64::from(leased) << 2 | few(owned) << 3 | u64::from(queued > 0) << 5 | lanes << 6
                })
                .collect();
            replicas.sort_unstable();
            for w in replicas {
                mix.add(w);
            }
        }
    });
    mix.0
}

/// Reports the model's signature as a coverage mark after every witness event. Never fails.
pub struct SignatureProbe {
    last: u64,
}

impl SignatureProbe {
    /// A probe for one run.
    pub fn new() -> SignatureProbe {
        SignatureProbe { last: 0 }
    }
}

impl Default for SignatureProbe {
    fn default() -> Self {
        SignatureProbe::new()
    }
}

impl Checker<ModelEvent, ModelView> for SignatureProbe {
    fn name(&self) -> &str {
        PROBE_NAME
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn interest(&self) -> u64 {
        (0..tag::COUNT).filter(|&t| matches!(tag::source(t), Some(Source::Witness(_)))).fold(0, |m, t| m | (1u64 << t))
    }

    fn on_event(&mut self, _event: &Event<ModelEvent>, view: &ModelView) -> Check {
        let signature = signature(view);
        if signature != self.last {
            self.last = signature;
            marks::mark(signature);
        }
        Check::Ok
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::Scenario;
    use crate::RunOptions;

    #[test]
    fn an_auto_pct_horizon_is_fitted_to_the_scenario_and_the_same_every_time() {
        use sutra_sim_core::StrategyConfig;
        let scenario = Scenario::built_in("smoke").expect("smoke is built in");
        let options = RunOptions { strategy: Some(StrategyConfig::PCT_DEFAULT), ..RunOptions::seeded(1) };
        let fitted = crate::strategy_for(&scenario, &options);
        let StrategyConfig::Pct { depth: 3, horizon } = fitted else { panic!("{fitted:?}") };
        assert!(horizon > 1 && horizon != StrategyConfig::FALLBACK_HORIZON, "{horizon}");
        assert_eq!(crate::strategy_for(&scenario, &options), fitted);
        // A run with the auto horizon is the run with the fitted one.
        let fixed = RunOptions { strategy: Some(fitted), ..RunOptions::seeded(1) };
        assert_eq!(crate::run(&scenario, &options).fingerprint, crate::run(&scenario, &fixed).fingerprint);
    }

    #[test]
    fn a_run_that_collects_marks_reports_several_signatures_and_the_same_run_without_is_unchanged() {
        let scenario = Scenario::built_in("smoke").expect("smoke is built in");
        let options = RunOptions::seeded(3);
        let plain = crate::run(&scenario, &options);
        let marked = crate::run_marked(
            &scenario,
            &options,
            crate::checkers::registry().build(&crate::checkers::default_names()).unwrap(),
        );
        assert!(plain.marks.is_empty());
        let states = marked.marks.iter().filter(|m| m.kind == sutra_sim_core::MarkKind::State).count();
        assert!(states >= 3, "only {states} signatures in a smoke run");
        // Marks observe; they change nothing.
        assert_eq!(plain.fingerprint, marked.fingerprint);
        assert_eq!(plain.tape, marked.tape);
    }
}

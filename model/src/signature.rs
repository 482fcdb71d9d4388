//! The model's abstract-state signature, for exploration (`sutra-sim explore`).
//!
//! Exploration grows the runs that reach something new; "new" is judged on coverage marks
//! ([`sutra_sim_core::marks`]), and this file supplies the model's share: a coarse hash of
//! what matters to the ownership protocol right now — per replica: live, paused or dead,
//! holding the sweeper lease, how many instances it owns and how many deliveries
//! wait in its binding table; then the claims held by no live process (a zombie's), by a
//! migration, the parked instances, and the workload's progress — each count bucketed to
//! 0, 1 or "several", so that runs differing only in counts of one situation share a
//! signature and the bitmap does not drown in noise. Rare situations (a zombie's claim
//! while its replacement runs, a paused lease holder) are what the signature tells apart.
//!
//! It is computed from the read-only [`ModelView`] after each witness event (store, broker,
//! executor), by a checker that never fails and is added only to runs that collect marks:
//! a plain sweep does not pay for it.

use sutra_sim_core::{marks, Check, Checker, CheckerKind, Event, NodeStatus};

use crate::event::{tag, ModelEvent, Source};
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

/// The abstract-state signature of the model as `view` shows it now.
///
/// Per replica (as a multiset, in no particular order): its node live, paused or dead;
/// whether it holds the sweeper lease; the instances its process owns (0, 1, 2+) and
/// whether deliveries are queued in its binding table. Then the instances owned by no
/// live process (a zombie's claims), by a migration, parked for a pull worker, and the
/// progress of the whole workload (none started, under way, all done).
pub fn signature(view: &ModelView) -> u64 {
    let mut mix = Mix(0xcbf2_9ce4_8422_2325);
    view.with_parts(|store, cluster| {
        let few = |n: usize| n.min(2) as u64;
        let (mut migrating, mut parked, mut started, mut done, mut orphaned) = (0, 0, 0, 0, 0);
        let slots = cluster.map(|c| c.slots.borrow());
        let process_of = |owner: crate::ids::OwnerId| owner.0 >> 16;
        for row in &store.instances {
            started += usize::from(row.version > 0);
            done += usize::from(row.completed());
            parked += usize::from(row.parked);
            if let Some(owner) = row.owner {
                if owner.is_migration() {
                    migrating += 1;
                } else if let Some(slots) = &slots {
                    let live = slots.iter().any(|slot| {
                        u64::from(slot.process.0) == process_of(owner)
                            && sutra_sim_core::executor::node_status(slot.node) == NodeStatus::Alive
                    });
                    orphaned += usize::from(!live);
                }
            }
        }
        if let Some(slots) = &slots {
            // Replicas as a multiset: which replica is in a situation matters less than
            // that one is, so their words are sorted before they are mixed.
            let mut words: Vec<u64> = slots
                .iter()
                .map(|slot| {
                    let status = match sutra_sim_core::executor::node_status(slot.node) {
                        NodeStatus::Alive => 0,
                        NodeStatus::Paused => 1,
                        NodeStatus::Dead => 2,
                    };
                    let leased = store.lease.is_some_and(|(holder, _)| holder == slot.process);
                    let owned = store
                        .instances
                        .iter()
                        .filter(|r| {
                            r.owner.is_some_and(|o| !o.is_migration() && process_of(o) == u64::from(slot.process.0))
                        })
                        .count();
                    let mut queued = 0;
                    if let Some(surface) = &slot.surface {
                        surface.bindings.inspect(|t| queued = t.tickets().count());
                    }
                    status | u64::from(leased) << 2 | few(owned) << 3 | u64::from(queued > 0) << 5
                })
                .collect();
            words.sort_unstable();
            for w in words {
                mix.add(w);
            }
        }
        let progress = if started == 0 {
            0
        } else if done == store.instances.len() {
            2
        } else {
            1
        };
        mix.add(few(orphaned) | few(migrating) << 2 | few(parked) << 4 | progress << 6);
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

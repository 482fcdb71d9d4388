//! The model's abstract-state signature, for exploration (`sutra-sim explore`).
//!
//! Exploration grows the runs that reach something new; "new" is judged on coverage marks
//! ([`sutra_sim_core::marks`]), and this file supplies the model's share: a coarse hash of
//! what matters to the ownership protocol right now — how many instances are in each
//! (owner kind, progress) class, which replica processes are live, paused or dead, who
//! holds the sweeper lease, the deliveries queued per lane, and the fault switches of
//! this seed — bucketed (0, 1, 2–3, 4–7, 8+), so that runs differing only in counts of
//! the same situation share a signature and the bitmap does not drown in noise.
//!
//! It is computed from the read-only [`ModelView`] after each witness event (store, broker,
//! executor), by a checker that never fails and is added only to runs that collect marks:
//! a plain sweep does not pay for it.

use sutra_sim_core::{marks, Check, Checker, CheckerKind, Event, NodeStatus};

use crate::event::{tag, ModelEvent, Source};
use crate::view::ModelView;

/// Name of the signature probe (not a registered checker: it judges nothing).
pub const PROBE_NAME: &str = "state-signature";

/// Log-2 bucket of a count: 0, 1, 2–3, 4–7, 8+.
fn bucket(n: usize) -> u64 {
    match n {
        0 => 0,
        1 => 1,
        2..=3 => 2,
        4..=7 => 3,
        _ => 4,
    }
}

/// A word-at-a-time mix (FNV-like with a final avalanche in the bitmap fold).
struct Mix(u64);

impl Mix {
    fn add(&mut self, word: u64) {
        self.0 = (self.0 ^ word).wrapping_mul(0x0100_0000_01b3).rotate_left(23);
    }
}

/// The abstract-state signature of the model as `view` shows it now.
pub fn signature(view: &ModelView) -> u64 {
    let mut mix = Mix(0xcbf2_9ce4_8422_2325);
    view.with_parts(|store, cluster| {
        // Instances by owner kind (none, lane, process, migration) × progress (not
        // started, under way, done) × parked.
        let mut classes = [0usize; 24];
        for row in &store.instances {
            let owner = match row.owner {
                None => 0,
                Some(o) if o.is_migration() => 3,
                Some(o) if o.0 & 0xffff == 0 => 2,
                Some(_) => 1,
            };
            let progress = if row.version == 0 {
                0
            } else if row.completed() {
                2
            } else {
                1
            };
            classes[owner * 6 + progress * 2 + usize::from(row.parked)] += 1;
        }
        for c in classes {
            mix.add(bucket(c));
        }
        mix.add(bucket(store.timers.len()));
        mix.add(bucket(store.tasks.len()));
        if let Some(cluster) = cluster {
            let slots = cluster.slots.borrow();
            for slot in slots.iter() {
                let status = match sutra_sim_core::executor::node_status(slot.node) {
                    NodeStatus::Alive => 1,
                    NodeStatus::Paused => 2,
                    NodeStatus::Dead => 3,
                };
                mix.add(status | (u64::from(slot.skew_ms != 0) << 2) | (u64::from(slot.surface.is_some()) << 3));
                // The lease: held by this replica's current process?
                mix.add(u64::from(store.lease.is_some_and(|(holder, _)| holder == slot.process)));
                // Deliveries queued per lane (tickets in the binding table), bucketed.
                if let Some(surface) = &slot.surface {
                    let mut per_lane = [0usize; 8];
                    surface.bindings.inspect(|t| {
                        for (_, _, lane, _) in t.tickets() {
                            per_lane[usize::from(lane) % 8] += 1;
                        }
                    });
                    for n in per_lane {
                        mix.add(bucket(n));
                    }
                }
            }
        }
        // The lease held by no live replica process (a zombie's, or an expired one).
        mix.add(u64::from(store.lease.is_some()));
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
    use super::*;
    use crate::scenario::Scenario;
    use crate::RunOptions;

    #[test]
    fn buckets_are_coarse_and_ordered() {
        let b: Vec<u64> = [0, 1, 2, 3, 4, 7, 8, 100].into_iter().map(bucket).collect();
        assert_eq!(b, vec![0, 1, 2, 2, 3, 3, 4, 4]);
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

//! The fault table: one row per fault kind, and everything else about fault kinds derived
//! from it — the `FaultKind` enum and its names, the `[faults.*]` tables of a scenario,
//! "is this kind configured", the swarm's scaling, the shrinker's switch, the coverage
//! property each kind must reach. A leaf: it knows the options types and nothing of the
//! components that fire the faults, so the scenario, the event vocabulary, the checkers and
//! the command line may all read it.
//!
//! Adding a fault kind: its options type (with a [`FaultOptions`] impl) in
//! [`super::options`], one row in the `fault_table!` invocation below, and the code that
//! fires it at the place in the model where it strikes.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use sutra_sim_core::time::serde_duration;

pub use super::options::FaultOptions;
use super::options::{
    AckLossOptions, BrokerOptions, CancelOptions, ClockSkewOptions, HungStepOptions, LeaseOptions, MisrouteOptions,
    ProcessPauseOptions, ReplicaCrashOptions, SlowStepOptions, StoreOptions, StoreRepliesOptions, TimerJitterOptions,
};

/// Describes one fault kind; the rows of [`FaultKind::ALL`] in table order.
#[derive(Clone, Copy, Debug)]
pub struct FaultDescriptor {
    /// The kind.
    pub kind: FaultKind,
    /// Its name as DESIGN.md §6 and the CLI write it (`replica-crash`).
    pub name: &'static str,
    /// The scenario table holding its options (`replica_crash`, in `[faults.replica_crash]`).
    pub table: &'static str,
    /// The shrinker's knob that switches it off, named by its table (`faults.replica_crash`).
    pub shrink_knob: &'static str,
    /// The coverage property reached when it is injected (`fault-replica-crash`).
    pub coverage: &'static str,
    /// What that coverage property says, in one line.
    pub coverage_description: &'static str,
    /// What the fault does, in one line.
    pub description: &'static str,
}

/// Declares the fault kinds: one row each, `Variant, table_field, "name", OptionsType,
/// "description", "coverage description";`. Generates [`FaultKind`], its descriptors, and [`Faults`].
macro_rules! fault_table {
    ($($variant:ident, $field:ident, $name:literal, $options:ty, $description:literal, $injected:literal;)+) => {
        /// The fault kinds of DESIGN.md §6, by their names there.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "kebab-case")]
        pub enum FaultKind {
            $(
                #[doc = $description]
                $variant,
            )+
        }

        impl FaultKind {
            /// Every kind, in table order.
            pub const ALL: &'static [FaultKind] = &[$(FaultKind::$variant),+];

            /// The kind's row of the table.
            pub fn descriptor(self) -> &'static FaultDescriptor {
                const TABLE: &[FaultDescriptor] = &[$(
                    FaultDescriptor {
                        kind: FaultKind::$variant,
                        name: $name,
                        table: stringify!($field),
                        shrink_knob: concat!("faults.", stringify!($field)),
                        coverage: concat!("fault-", $name),
                        coverage_description: $injected,
                        description: $description,
                    }
                ),+];
                &TABLE[self as usize]
            }
        }

        /// Fault kinds and their options, one table per kind (DESIGN.md §6): the `[faults]`
        /// section of a scenario, and the effective faults of one seed after the swarm.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct Faults {
            /// Per seed, switch each fault kind on or off and scale its rates (swarm testing).
            pub swarm: bool,
            /// How often the fault injector considers the per-tick faults (at least 1 ms).
            #[serde(with = "serde_duration")]
            pub tick: Duration,
            /// Draw each periodic role's phase per run (timer poll, sweep and lease
            /// renewal, the fault tick, the operator) and each fault tick's instant within
            /// its tick, to the nanosecond; off, every role starts at time 0 and faults
            /// strike on the tick grid (the simplest, and what the shrinker goes back to).
            pub phases: bool,
            $(
                #[doc = $description]
                pub $field: $options,
            )+
        }

        impl Default for Faults {
            fn default() -> Self {
                Faults { swarm: false, tick: Duration::from_secs(1), phases: false, $($field: Default::default()),+ }
            }
        }

        impl Faults {
            /// True if the scenario configures `kind` at all.
            pub fn configured_on(&self, kind: FaultKind) -> bool {
                match kind {
                    $(FaultKind::$variant => self.$field.configured()),+
                }
            }

            /// Applies the swarm's draw for `kind` (see [`FaultOptions::swarm`]).
            pub fn swarm(&mut self, kind: FaultKind, scale_permille: Option<u32>) {
                match kind {
                    $(FaultKind::$variant => self.$field.swarm(scale_permille)),+
                }
            }

            /// Switches `kind` off: its options back to their defaults, which are "off".
            pub fn switch_off(&mut self, kind: FaultKind) {
                match kind {
                    $(FaultKind::$variant => self.$field = Default::default()),+
                }
                // A hung step ends only by the per-step timeout, the cancel fault's: without
                // it the scenario would be refused, so hung steps go with it.
                if kind == FaultKind::Cancel {
                    self.hung_step = Default::default();
                }
                debug_assert!(!self.configured_on(kind), "a fault kind's default options switch it off");
            }
        }
    };
}

fault_table! {
    ReplicaCrash, replica_crash, "replica-crash", ReplicaCrashOptions,
        "the process dies at an arbitrary await point; it restarts later as a new incarnation, or stays dead until the heal", "a replica crash was injected";
    ProcessPause, process_pause, "process-pause", ProcessPauseOptions,
        "the process freezes for shorter or longer than the claim timeout, then carries on; variant: a replacement with the same identity starts meanwhile", "a process pause was injected";
    Misroute, misroute, "misroute", MisrouteOptions,
        "a relay or timer fire goes to the wrong lane or the wrong replica; variant: the routing hash changes mid-run", "a mis-route was injected";
    ClockSkew, clock_skew, "clock-skew", ClockSkewOptions,
        "per-replica clock offset, drift and steps; the store's clock stays authoritative", "a clock skew was injected";
    Broker, broker, "broker", BrokerOptions,
        "duplicate delivery, delay, reorder; redelivery after consumer death", "a broker fault was injected";
    Store, store, "store", StoreOptions,
        "latency spikes, transient aborts (nothing written), short unavailability", "a store fault was injected";
    SlowStep, slow_step, "slow-step", SlowStepOptions,
        "a live step outlasts the claim timeout (live-but-slow)", "a slow step was injected";
    TimerJitter, timer_jitter, "timer-jitter", TimerJitterOptions,
        "timers fire late", "a late timer was injected";
    Lease, lease, "lease", LeaseOptions,
        "the sweeper's lease holder dies or pauses", "a lease-holder fault was injected";
    AckLoss, ack_loss, "ack-loss", AckLossOptions,
        "a consumer's ack is lost; the broker redelivers the relay after its ack timeout", "an ack was lost";
    StoreReplies, store_replies, "store-replies", StoreRepliesOptions,
        "a store request is lost (nothing applied) or its reply is lost after the store applied it (ambiguous); the caller may freeze or die at a call's boundary", "a store request or reply was lost, or a caller struck at a store call";
    Cancel, cancel, "cancel", CancelOptions,
        "an execution is cancelled at an await point while its process lives: its task aborted, its step past the per-step timeout, or its replica shut down gracefully (drain, then stop)", "an execution was cancelled";
    HungStep, hung_step, "hung-step", HungStepOptions,
        "a step never returns; only the runtime's per-step timeout ends it", "a hung step was injected";
}

impl FaultKind {
    /// The name as DESIGN.md and the CLI write it.
    pub fn name(self) -> &'static str {
        self.descriptor().name
    }

    /// What the fault does, in one line.
    pub fn description(self) -> &'static str {
        self.descriptor().description
    }

    /// The kind named `name`, if any.
    pub fn parse(name: &str) -> Option<FaultKind> {
        FaultKind::ALL.iter().copied().find(|k| k.name() == name)
    }
}

impl Faults {
    /// True if some fault kind that makes two resumes of one instance meet is configured:
    /// claim bounces are then expected, and the quiet-bounce-meter has nothing to say. Only
    /// late timer fires leave a run quiet: a timer row stays the instance's one trigger.
    /// (Migrations contend too; that is the scenario's, not the faults', to say.)
    pub fn contention_expected(&self) -> bool {
        FaultKind::ALL.iter().any(|&kind| kind != FaultKind::TimerJitter && self.configured_on(kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ratio::Ratio;

    #[test]
    fn the_table_is_indexed_by_the_kind() {
        for (i, &kind) in FaultKind::ALL.iter().enumerate() {
            assert_eq!(kind as usize, i);
            assert_eq!(kind.descriptor().kind, kind);
            assert_eq!(FaultKind::parse(kind.name()), Some(kind));
        }
    }

    #[test]
    fn names_tables_and_coverage_properties_are_distinct() {
        let (mut names, mut tables) = (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
        for &kind in FaultKind::ALL {
            let d = kind.descriptor();
            assert!(names.insert(d.name), "{d:?}");
            assert!(tables.insert(d.table), "{d:?}");
            assert_eq!(d.coverage, format!("fault-{}", d.name));
        }
    }

    #[test]
    fn default_options_switch_every_kind_off() {
        let faults = Faults::default();
        for &kind in FaultKind::ALL {
            assert!(!faults.configured_on(kind), "{}", kind.name());
        }
        assert!(!faults.contention_expected());
    }

    #[test]
    fn switching_the_per_step_timeout_off_takes_the_hung_steps_it_ends_with_it() {
        let mut faults = Faults::default();
        faults.hung_step.per_step = Ratio::parse("1/20").unwrap();
        faults.cancel.step_timeout = Duration::from_secs(600);
        faults.switch_off(FaultKind::Cancel);
        assert!(!faults.configured_on(FaultKind::HungStep));
    }

    #[test]
    fn the_swarm_switches_a_configured_kind_off_and_on() {
        let mut faults = Faults::default();
        faults.replica_crash.per_tick = Ratio::parse("1/10").unwrap();
        assert!(faults.configured_on(FaultKind::ReplicaCrash));
        let mut off = faults.clone();
        off.swarm(FaultKind::ReplicaCrash, None);
        assert!(!off.configured_on(FaultKind::ReplicaCrash));
        faults.swarm(FaultKind::ReplicaCrash, Some(2_000));
        assert!(faults.configured_on(FaultKind::ReplicaCrash));
    }
}

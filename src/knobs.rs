//! The scenario parameters the shrinker may lower, as the integer knobs of
//! `sutra-sim-shrink` (which knows nothing of scenarios).
//!
//! Every knob reads 0 at its simplest setting — one replica, one lane, one instance, one
//! step, a fault kind switched off, no migrations, a heal at time zero — so "lower is
//! simpler" holds for each. A knob only ever moves down from the failing scenario's value;
//! [`apply`] writes the knobs that moved and leaves everything else as it was. A
//! combination the scenario rules refuse (say, pull steps with no pull worker) is not a
//! run at all, and the shrinker simply does not keep it.
//!
//! The order is the order the shrinker tries them in each round: the knobs that remove the
//! most work first.

use std::time::Duration;

use sutra_sim_core::format_duration;
use sutra_sim_model::faults::FaultKind;
use sutra_sim_model::ratio::Ratio;
use sutra_sim_model::Scenario;

/// One scenario parameter as a knob: a field of the scenario, or a fault kind switched on
/// or off (the fault table says which kinds there are).
#[derive(Clone, Copy)]
pub enum Knob {
    /// A scenario field.
    Field(&'static FieldKnob),
    /// A fault kind (1: as configured, 0: off).
    Fault(FaultKind),
}

impl Knob {
    /// What it is, for reports.
    pub fn name(self) -> &'static str {
        match self {
            Knob::Field(k) => k.name,
            Knob::Fault(kind) => kind.descriptor().shrink_knob,
        }
    }

    /// The knob's value in a scenario: 0 at its simplest setting.
    pub fn read(self, s: &Scenario) -> u32 {
        match self {
            Knob::Field(k) => (k.read)(s),
            Knob::Fault(kind) => u32::from(s.faults.configured_on(kind)),
        }
    }

    /// Sets the knob to a value lower than the scenario's.
    pub fn lower(self, s: &mut Scenario, value: u32) {
        match self {
            Knob::Field(k) => (k.lower)(s, value),
            Knob::Fault(kind) => s.faults.switch_off(kind),
        }
    }

    /// The parameter's value in a scenario, as a person reads it in the file.
    pub fn shown(self, s: &Scenario) -> String {
        match self {
            Knob::Field(k) => (k.shown)(s),
            Knob::Fault(kind) => on_off(s.faults.configured_on(kind)),
        }
    }
}

/// The knobs, in the order the shrinker tries them: the fields that remove the most work,
/// then every fault kind in table order, then the rest.
pub fn knobs() -> &'static [Knob] {
    static KNOBS: std::sync::OnceLock<Vec<Knob>> = std::sync::OnceLock::new();
    KNOBS.get_or_init(|| {
        let work = WORK_KNOBS.iter().map(Knob::Field);
        let faults = FaultKind::ALL.iter().map(|&kind| Knob::Fault(kind));
        work.chain(faults).chain(OTHER_KNOBS.iter().map(Knob::Field)).collect()
    })
}

/// One scenario field as a knob.
pub struct FieldKnob {
    /// What it is, for reports.
    pub name: &'static str,
    /// The knob's value in a scenario: 0 at its simplest setting.
    pub read: fn(&Scenario) -> u32,
    /// Sets the knob to a value lower than the scenario's.
    pub lower: fn(&mut Scenario, u32),
    /// The parameter's value in a scenario, as a person reads it in the file.
    pub shown: fn(&Scenario) -> String,
}

/// The fields that remove the most work, tried first.
const WORK_KNOBS: &[FieldKnob] = &[
    FieldKnob {
        name: "workload.instances",
        read: |s| s.workload.instances - 1,
        lower: |s, v| s.workload.instances = v + 1,
        shown: |s| s.workload.instances.to_string(),
    },
    FieldKnob {
        name: "workload.steps",
        read: |s| s.workload.steps - 1,
        lower: |s, v| s.workload.steps = v + 1,
        shown: |s| s.workload.steps.to_string(),
    },
    FieldKnob {
        name: "topology.replicas",
        read: |s| s.topology.replicas - 1,
        lower: |s, v| s.topology.replicas = v + 1,
        shown: |s| s.topology.replicas.to_string(),
    },
    FieldKnob {
        name: "topology.lanes",
        read: |s| s.topology.lanes - 1,
        lower: |s, v| s.topology.lanes = v + 1,
        shown: |s| s.topology.lanes.to_string(),
    },
    FieldKnob {
        name: "workload.timer_weight",
        read: |s| u32::from(s.workload.timer_weight > 0),
        lower: |s, _| s.workload.timer_weight = 0,
        shown: |s| s.workload.timer_weight.to_string(),
    },
    FieldKnob {
        name: "workload.pull_weight",
        read: |s| u32::from(s.workload.pull_weight > 0),
        lower: |s, _| s.workload.pull_weight = 0,
        shown: |s| s.workload.pull_weight.to_string(),
    },
    FieldKnob {
        name: "topology.pull_workers",
        read: |s| s.topology.pull_workers,
        lower: |s, v| s.topology.pull_workers = v,
        shown: |s| s.topology.pull_workers.to_string(),
    },
];

/// The fields tried after the fault kinds.
const OTHER_KNOBS: &[FieldKnob] = &[
    FieldKnob {
        name: "admin.migration_per_tick",
        read: |s| u32::from(!s.admin.migration_per_tick.is_never()),
        lower: |s, _| s.admin.migration_per_tick = Ratio::NEVER,
        shown: |s| on_off(!s.admin.migration_per_tick.is_never()),
    },
    FieldKnob {
        name: "workload.validation_error",
        read: |s| u32::from(!s.workload.validation_error.is_never()),
        lower: |s, _| s.workload.validation_error = Ratio::NEVER,
        shown: |s| on_off(!s.workload.validation_error.is_never()),
    },
    FieldKnob {
        name: "workload.unexpected_failure",
        read: |s| u32::from(!s.workload.unexpected_failure.is_never()),
        lower: |s, _| s.workload.unexpected_failure = Ratio::NEVER,
        shown: |s| on_off(!s.workload.unexpected_failure.is_never()),
    },
    FieldKnob {
        name: "workload.panic",
        read: |s| u32::from(!s.workload.panic.is_never()),
        lower: |s, _| s.workload.panic = Ratio::NEVER,
        shown: |s| on_off(!s.workload.panic.is_never()),
    },
    FieldKnob {
        name: "phases.heal_at",
        read: |s| u32::try_from(s.phases.heal_at.as_millis()).unwrap_or(u32::MAX),
        lower: |s, v| s.phases.heal_at = Duration::from_millis(u64::from(v)),
        shown: |s| format_duration(s.phases.heal_at),
    },
];

/// The knobs of `scenario`.
pub fn read(scenario: &Scenario) -> Vec<u32> {
    knobs().iter().map(|k| k.read(scenario)).collect()
}

/// `base` with the knobs that are lower than its own set to their value, or `None` if the
/// result is not a valid scenario.
pub fn apply(base: &Scenario, knobs: &[u32]) -> Option<Scenario> {
    assert_eq!(knobs.len(), self::knobs().len(), "one value per knob");
    let mut scenario = base.clone();
    for (knob, &value) in self::knobs().iter().zip(knobs) {
        let current = knob.read(base);
        assert!(value <= current, "knob {} only moves down: {value} > {current}", knob.name());
        if value < current {
            knob.lower(&mut scenario, value);
        }
    }
    scenario.validate().ok()?;
    Some(scenario)
}

/// What shrinking changed between two scenarios, one `key before→after` per knob that
/// moved, in the scenario file's own words (for notes and reports).
pub fn describe_changes(before: &Scenario, after: &Scenario) -> Vec<String> {
    knobs()
        .iter()
        .filter(|k| k.read(before) != k.read(after))
        .map(|k| format!("{} {}→{}", k.name(), k.shown(before), k.shown(after)))
        .collect()
}

fn on_off(on: bool) -> String {
    if on { "on" } else { "off" }.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_scenario_reads_back_unchanged() {
        for s in Scenario::all_built_in() {
            let knobs = read(&s);
            assert_eq!(apply(&s, &knobs).as_ref(), Some(&s), "{}", s.name);
        }
    }

    #[test]
    fn all_knobs_at_zero_is_the_simplest_valid_scenario() {
        let s = Scenario::built_in("smoke").unwrap();
        let zeros = vec![0; knobs().len()];
        let simplest = apply(&s, &zeros).expect("one relay-step instance on one lane, no faults, is valid");
        assert_eq!(read(&simplest), zeros);
        assert_eq!((simplest.topology.replicas, simplest.topology.lanes), (1, 1));
        assert_eq!((simplest.workload.instances, simplest.workload.steps), (1, 1));
        for kind in FaultKind::ALL {
            assert!(!simplest.faults.configured_on(*kind), "{}", kind.name());
        }
    }

    #[test]
    fn an_invalid_combination_is_no_scenario() {
        let s = Scenario::built_in("pull-workers").unwrap();
        let mut knobs = read(&s);
        let pull_workers = super::knobs().iter().position(|k| k.name() == "topology.pull_workers").unwrap();
        knobs[pull_workers] = 0;
        assert!(apply(&s, &knobs).is_none(), "pull steps need a pull worker");
    }

    #[test]
    fn changes_read_in_the_scenario_files_words() {
        let s = Scenario::built_in("smoke").unwrap();
        let simplest = apply(&s, &vec![0; knobs().len()]).unwrap();
        let changes = describe_changes(&s, &simplest);
        assert!(changes.contains(&"workload.instances 6→1".to_string()), "{changes:?}");
        assert!(changes.contains(&"faults.replica_crash on→off".to_string()), "{changes:?}");
        assert!(changes.contains(&"phases.heal_at 40s→0ms".to_string()), "{changes:?}");
    }
}

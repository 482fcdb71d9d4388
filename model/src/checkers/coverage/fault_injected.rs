//! One property per fault kind, named by the fault table (`fault-replica-crash`, …): a
//! fault of the kind was injected. Expected wherever the scenario configures the kind.

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::faults::kind::FaultKind;

use super::prelude::*;

/// The property for one fault kind; it keeps no books.
pub struct FaultInjected {
    kind: FaultKind,
    name: &'static str,
}

impl Checker<E, ModelView> for FaultInjected {
    fn interest(&self) -> u64 {
        sutra_sim_core::tag_mask(&[tag::FAULT_INJECTED])
    }

    fn name(&self) -> &str {
        self.name
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Sometimes
    }

    fn on_event(&mut self, event: &Event<E>, _view: &ModelView) -> Check {
        match event.kind {
            E::FaultInjected { fault, .. } if fault == self.kind => Check::Reached,
            _ => Check::Ok,
        }
    }
}

/// The registrations, in the fault table's order.
pub fn specs() -> impl Iterator<Item = CheckerSpec<E, ModelView>> {
    FaultKind::ALL.iter().map(|&kind| {
        let d = kind.descriptor();
        let name = d.coverage;
        CheckerSpec {
            name,
            kind: CheckerKind::Sometimes,
            description: d.coverage_description,
            rules: &[],
            factory: Arc::new(move || Box::new(FaultInjected { kind, name }) as Box<dyn Checker<E, ModelView>>),
        }
    })
}

/// The names expected in `scenario`: a kind it configures.
pub fn expected(scenario: &Scenario) -> impl Iterator<Item = &'static str> + '_ {
    FaultKind::ALL.iter().filter(|&&kind| super::on(scenario, kind)).map(|kind| kind.descriptor().coverage)
}

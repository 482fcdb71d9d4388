//! `sometimes-prefetch-window-full`: a consumer held as many unsettled deliveries as its
//! prefetch window allows (broker witnesses): flow control bound.
//!
//! It reads the books `prefetch-window` keeps, shared in the view's ledger
//! ([`crate::checkers::ledger`]) rather than kept a second time; so it reads every event
//! they are made from, the dead-letters included (a copy of its own that missed them
//! counted a dead-lettered relay as still held). A ledger reader needs the event's
//! sequence number, which [`Property::reached`] does not see, so this property is a
//! checker of its own rather than a [`Property`].

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use super::prelude::*;
use crate::checkers::ledger::{Reader, PREFETCH_READS};

/// The property's name.
pub const NAME: &str = "sometimes-prefetch-window-full";

/// The property; its books are in the view's ledger.
pub struct PrefetchWindowFull;

/// The registration.
pub fn spec() -> CheckerSpec<E, ModelView> {
    CheckerSpec {
        name: NAME,
        kind: CheckerKind::Sometimes,
        description: "a consumer held a full prefetch window of unsettled deliveries",
        rules: &[],
        factory: Arc::new(|| Box::new(PrefetchWindowFull) as Box<dyn Checker<E, ModelView>>),
    }
}

/// True if the scenario can be expected to fill a window.
pub fn expected(s: &Scenario) -> bool {
    // A window fills when relays for one replica arrive faster than its lanes settle them:
    // with the default window of 8 no built-in scenario ever gets there (at most 5 unsettled
    // in sweeps); process-pause runs with a window of 2 so that flow control is exercised,
    // and checked, somewhere.
    s.topology.prefetch <= 2 && s.workload.relay_weight > 0
}

impl Checker<E, ModelView> for PrefetchWindowFull {
    fn interest(&self) -> u64 {
        sutra_sim_core::tag_mask(PREFETCH_READS)
    }

    fn name(&self) -> &str {
        NAME
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Sometimes
    }

    fn on_event(&mut self, event: &Event<E>, view: &ModelView) -> Check {
        let held = view.ledger().prefetch(Reader::PrefetchWindowFull, event).map(|(_, _, held)| held);
        if held.is_some_and(|h| h >= view.scenario().topology.prefetch) {
            Check::Reached
        } else {
            Check::Ok
        }
    }
}

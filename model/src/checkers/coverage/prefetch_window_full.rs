//! `sometimes-prefetch-window-full`: a consumer held as many unsettled deliveries as its
//! prefetch window allows (broker witnesses, booked as `prefetch-window` books them): flow
//! control bound.

use crate::checkers::prefetch_window::PrefetchWindow;

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct PrefetchWindowFull {
    /// Unsettled deliveries per consumer.
    window: PrefetchWindow,
}

impl Property for PrefetchWindowFull {
    const NAME: &'static str = "sometimes-prefetch-window-full";
    const DESCRIPTION: &'static str = "a consumer held a full prefetch window of unsettled deliveries";
    const READS: &'static [u8] = &[tag::RELAY_DELIVERED, tag::RELAY_ACKED, tag::RELAY_REQUEUED, tag::RELAY_RECLAIMED];

    fn expected(s: &Scenario) -> bool {
        // A window fills when relays for one replica arrive faster than its lanes settle them:
        // with the default window of 8 no built-in scenario ever gets there (at most 5 unsettled
        // in sweeps); process-pause runs with a window of 2 so that flow control is exercised,
        // and checked, somewhere.
        s.topology.prefetch <= 2 && s.workload.relay_weight > 0
    }

    fn reached(&mut self, event: &E, view: &ModelView) -> bool {
        let held = self.window.observe(event).map(|(_, _, held)| held);
        held.is_some_and(|h| h >= view.scenario().topology.prefetch)
    }
}

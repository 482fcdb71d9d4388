//! `sometimes-broker-redelivered`: the broker redelivered a relay.

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct BrokerRedelivered;

impl Property for BrokerRedelivered {
    const NAME: &'static str = "sometimes-broker-redelivered";
    const DESCRIPTION: &'static str = "the broker redelivered a relay";
    const READS: &'static [u8] = &[tag::RELAY_DELIVERED];

    fn expected(s: &Scenario) -> bool {
        super::crashes(s) || super::contends(s)
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        matches!(event, E::RelayDelivered { redelivery: true, .. })
    }
}

//! `sometimes-paused-consumer-redelivered`: the broker took a paused (alive, silent)
//! consumer's relay back, and redelivered it.

use crate::dense::DenseSet;
use crate::faults::kind::FaultKind;
use crate::ids::MessageId;

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct PausedConsumerRedelivered {
    /// Relays taken back from a silent (paused) consumer.
    taken_from_silent: DenseSet<MessageId>,
}

impl Property for PausedConsumerRedelivered {
    const NAME: &'static str = "sometimes-paused-consumer-redelivered";
    const DESCRIPTION: &'static str = "a paused consumer's unacked relay was taken back and redelivered";
    const READS: &'static [u8] = &[tag::RELAY_RECLAIMED, tag::RELAY_DELIVERED];

    fn expected(s: &Scenario) -> bool {
        // A paused consumer holds unacked relays only if relays flow to it.
        super::on(s, FaultKind::ProcessPause)
            && !s.faults.broker.paused_consumer_timeout.is_zero()
            && s.workload.relay_weight > 0
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        match event {
            E::RelayReclaimed { message, silent: true, .. } => {
                self.taken_from_silent.insert(*message);
                false
            }
            E::RelayDelivered { message, redelivery: true, .. } => self.taken_from_silent.contains(*message),
            _ => false,
        }
    }
}

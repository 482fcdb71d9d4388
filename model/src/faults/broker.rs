//! Broker faults: duplicate delivery, delayed delivery and reordering — at-least-once
//! delivery at its least convenient. (Redelivery after consumer death is the broker's own
//! behaviour, provoked by replica crashes.)

use std::rc::Rc;
use std::time::Duration;

use sutra_sim_core::executor;

use super::kind::FaultKind;
use crate::ctx::{Context, FaultGate};
use crate::streams;

/// Broker faults draw from the broker's own stream.
const GATE: FaultGate = FaultGate { kind: FaultKind::Broker, stream: streams::BROKER };

/// The broker's view of its own faults.
#[derive(Clone)]
pub struct BrokerFaults {
    ctx: Rc<Context>,
}

impl BrokerFaults {
    /// The broker's faults as the context configures them (off once healed).
    pub fn new(ctx: Rc<Context>) -> BrokerFaults {
        BrokerFaults { ctx }
    }

    /// Extra delay for a publish (zero unless the delay fault fires).
    pub fn extra_delay(&self) -> Duration {
        if !self.ctx.fires(GATE, self.ctx.faults().broker.delay_per_delivery) {
            return Duration::ZERO;
        }
        let d = streams::millis_up_to(streams::BROKER, self.ctx.faults().broker.delay_max);
        self.ctx.report(GATE.kind, None, d);
        d
    }

    /// Which of the `ready` relays to deliver next: the oldest, unless reordering fires.
    pub fn pick(&self, ready: usize) -> usize {
        if ready < 2 || !self.ctx.fires(GATE, self.ctx.faults().broker.reorder_per_delivery) {
            return 0;
        }
        self.ctx.report(GATE.kind, None, Duration::ZERO);
        1 + executor::choose_in(streams::BROKER, ready as u32 - 1) as usize
    }

    /// True if a first delivery should be duplicated.
    pub fn duplicates(&self) -> bool {
        let dup = self.ctx.fires(GATE, self.ctx.faults().broker.duplicate_per_delivery);
        if dup {
            self.ctx.report(GATE.kind, None, Duration::ZERO);
        }
        dup
    }
}

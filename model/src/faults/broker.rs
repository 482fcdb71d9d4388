//! Broker faults: duplicate delivery, delayed delivery and reordering — at-least-once
//! delivery at its least convenient. (Redelivery after consumer death is the broker's own
//! behaviour, provoked by replica crashes.)

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use sutra_sim_core::{executor, Tracer};

use super::options::BrokerOptions;
use super::FaultKind;
use crate::event::ModelEvent;
use crate::streams;

/// The broker's view of its own faults.
#[derive(Clone)]
pub struct BrokerFaults {
    options: BrokerOptions,
    gate: super::FaultGate,
}

impl BrokerFaults {
    /// Faults with these options, off once `healed` is set.
    pub fn new(options: BrokerOptions, healed: Rc<Cell<bool>>, tracer: Tracer<ModelEvent>) -> BrokerFaults {
        BrokerFaults { options, gate: super::FaultGate::new(FaultKind::Broker, streams::BROKER, healed, tracer) }
    }

    /// Extra delay for a publish (zero unless the delay fault fires).
    pub fn extra_delay(&self) -> Duration {
        if !self.gate.fires(self.options.delay_per_delivery) {
            return Duration::ZERO;
        }
        let d = streams::millis_up_to(streams::BROKER, self.options.delay_max);
        self.gate.report(d);
        d
    }

    /// Which of the `ready` relays to deliver next: the oldest, unless reordering fires.
    pub fn pick(&self, ready: usize) -> usize {
        if ready < 2 || !self.gate.fires(self.options.reorder_per_delivery) {
            return 0;
        }
        self.gate.report(Duration::ZERO);
        1 + executor::choose_in(streams::BROKER, ready as u32 - 1) as usize
    }

    /// True if a first delivery should be duplicated.
    pub fn duplicates(&self) -> bool {
        let dup = self.gate.fires(self.options.duplicate_per_delivery);
        if dup {
            self.gate.report(Duration::ZERO);
        }
        dup
    }
}

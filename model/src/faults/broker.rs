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
    healed: Rc<Cell<bool>>,
    tracer: Tracer<ModelEvent>,
}

impl BrokerFaults {
    /// Faults with these options, off once `healed` is set.
    pub fn new(options: BrokerOptions, healed: Rc<Cell<bool>>, tracer: Tracer<ModelEvent>) -> BrokerFaults {
        BrokerFaults { options, healed, tracer }
    }

    fn fires(&self, rate: crate::ratio::Ratio) -> bool {
        !self.healed.get() && !rate.is_never() && rate.draw(streams::BROKER)
    }

    fn report(&self, detail: Duration) {
        self.tracer.emit(ModelEvent::FaultInjected {
            fault: FaultKind::Broker,
            replica: None,
            detail_ms: detail.as_millis() as u64,
        });
    }

    /// Extra delay for a publish (zero unless the delay fault fires).
    pub fn extra_delay(&self) -> Duration {
        if !self.fires(self.options.delay_per_delivery) {
            return Duration::ZERO;
        }
        let d = streams::millis_up_to(streams::BROKER, self.options.delay_max);
        self.report(d);
        d
    }

    /// Which of the `ready` relays to deliver next: the oldest, unless reordering fires.
    pub fn pick(&self, ready: usize) -> usize {
        if ready < 2 || !self.fires(self.options.reorder_per_delivery) {
            return 0;
        }
        self.report(Duration::ZERO);
        1 + executor::choose_in(streams::BROKER, ready as u32 - 1) as usize
    }

    /// True if a first delivery should be duplicated.
    pub fn duplicates(&self) -> bool {
        let dup = self.fires(self.options.duplicate_per_delivery);
        if dup {
            self.report(Duration::ZERO);
        }
        dup
    }
}

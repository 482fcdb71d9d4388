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
/// Lost acks draw from the broker's stream too.
const ACK_LOSS_GATE: FaultGate = FaultGate { kind: FaultKind::AckLoss, stream: streams::BROKER };

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

    /// If this ack is lost on its way, how long the broker waits before redelivering.
    pub fn ack_lost(&self) -> Option<Duration> {
        let options = &self.ctx.faults().ack_loss;
        if !self.ctx.fires(ACK_LOSS_GATE, options.per_ack) {
            return None;
        }
        self.ctx.report(ACK_LOSS_GATE.kind, None, options.redeliver_after);
        Some(options.redeliver_after)
    }
}

#[cfg(test)]
mod tests {
    use crate::ratio::Ratio;
    use crate::{run, RunOptions, Scenario};

    /// `smoke` with one ack in three lost, and the broker's ack timeout short enough to
    /// redeliver within the run.
    fn lossy_smoke() -> Scenario {
        let mut s = Scenario::built_in("smoke").unwrap();
        s.faults.ack_loss.per_ack = Ratio::parse("1/3").unwrap();
        s.faults.ack_loss.redeliver_after = std::time::Duration::from_secs(2);
        s.validate().unwrap();
        s
    }

    #[test]
    fn a_lost_ack_is_redelivered_and_the_correct_model_absorbs_the_duplicate() {
        let scenario = lossy_smoke();
        let mut lost = 0;
        for seed in 0..40 {
            let outcome = run(&scenario, &RunOptions::seeded(seed));
            assert!(outcome.verdict.is_pass(), "seed {seed}: {:?}", outcome.verdict);
            if outcome.reached.iter().any(|name| name == "fault-ack-loss") {
                lost += 1;
                assert!(
                    outcome.reached.iter().any(|name| name == "sometimes-broker-redelivered"),
                    "seed {seed}: an ack was lost but nothing was redelivered"
                );
            }
        }
        assert!(lost > 20, "acks were lost in only {lost} of 40 seeds");
    }

    #[test]
    fn a_paused_consumers_relays_are_redelivered_and_the_correct_model_stays_clean() {
        let scenario = Scenario::built_in("real-world").unwrap();
        assert!(!scenario.faults.broker.paused_consumer_timeout.is_zero());
        let mut redelivered = 0;
        for seed in 0..40 {
            let outcome = run(&scenario, &RunOptions::seeded(seed));
            assert!(outcome.verdict.is_pass(), "seed {seed}: {:?}", outcome.verdict);
            if outcome.reached.iter().any(|name| name == "sometimes-paused-consumer-redelivered") {
                redelivered += 1;
            }
        }
        assert!(redelivered > 0, "no paused consumer's relay was redelivered in 40 seeds");
    }

    #[test]
    fn without_the_liveness_timeout_a_paused_consumer_keeps_its_relays() {
        let mut scenario = Scenario::built_in("real-world").unwrap();
        scenario.faults.broker.paused_consumer_timeout = std::time::Duration::ZERO;
        for seed in 0..20 {
            let outcome = run(&scenario, &RunOptions::seeded(seed));
            assert!(!outcome.reached.iter().any(|name| name == "sometimes-paused-consumer-redelivered"), "seed {seed}");
        }
    }

    #[test]
    fn an_unconfigured_ack_loss_changes_no_run() {
        let plain = Scenario::built_in("smoke").unwrap();
        let mut configured_off = plain.clone();
        configured_off.faults.ack_loss.redeliver_after = std::time::Duration::from_secs(3);
        for seed in 0..5 {
            let a = run(&plain, &RunOptions::seeded(seed));
            let b = run(&configured_off, &RunOptions::seeded(seed));
            assert_eq!(a.fingerprint, b.fingerprint, "seed {seed}");
        }
    }
}

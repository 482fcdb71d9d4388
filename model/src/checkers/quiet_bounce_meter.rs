//! quiet-bounce-meter (eventually; R13): without mis-routing or contention faults, the
//! claim-bounce meter (split by relay and timer) stays under the scenario's threshold. A
//! mis-route shows up as a number going up, not as a support ticket weeks later.

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::ModelEvent;
use crate::view::ModelView;

/// The meter's final reading.
#[derive(Default)]
pub struct QuietBounceMeter {
    reading: Option<(u32, u32)>,
}

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "quiet-bounce-meter",
        kind: CheckerKind::Eventually,
        description: "without mis-routing or contention faults, claim bounces stay under the threshold",
        rules: &["R13"],
        factory: Arc::new(|| Box::new(QuietBounceMeter::default())),
    }
}

impl Checker<ModelEvent, ModelView> for QuietBounceMeter {
    fn interest(&self) -> u64 {
        sutra_sim_core::tag_mask(&[crate::event::tag::BOUNCE_METER])
    }

    fn name(&self) -> &str {
        "quiet-bounce-meter"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Eventually
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, _view: &ModelView) -> Check {
        if let ModelEvent::BounceMeter { relay, timer } = event.kind {
            self.reading = Some((relay, timer));
        }
        Check::Ok
    }

    fn at_end(&mut self, view: &ModelView) -> Check {
        if view.faults().contention_expected() {
            return Check::Ok;
        }
        let threshold = view.scenario().run.bounce_threshold;
        match self.reading {
            Some((relay, timer)) if relay > threshold || timer > threshold => Check::Fail(format!(
                "claim bounces relay={relay} timer={timer} in a run without contention faults exceed the threshold {threshold}"
            )),
            _ => Check::Ok,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::testing::{fails, feed_with};
    use crate::scenario::{Faults, Scenario};
    use crate::store::StoreState;
    use std::cell::RefCell;
    use std::rc::Rc;

    fn quiet_view() -> ModelView {
        let s = Scenario::built_in("smoke").unwrap();
        ModelView::new(
            Rc::new(crate::ctx::Config { scenario: s, faults: Faults::default() }),
            Rc::new(RefCell::new(StoreState::default())),
        )
    }

    #[test]
    fn fires_on_a_loud_meter_without_faults() {
        let h = vec![(1, ModelEvent::BounceMeter { relay: 9, timer: 0 })];
        assert!(fails(&feed_with(&mut QuietBounceMeter::default(), h, &quiet_view())));
    }

    #[test]
    fn accepts_a_quiet_meter() {
        let h = vec![(1, ModelEvent::BounceMeter { relay: 0, timer: 1 })];
        assert_eq!(feed_with(&mut QuietBounceMeter::default(), h, &quiet_view()), Check::Ok);
    }
}

//! tickets-follow-routes (always; L7, L11): the binding table registers a delivery under
//! the lane its route names *in the turn that registers it*, and the registration has
//! happened by the time the delivery's work claims its instance.
//!
//! Why: the relay path reads an instance's route and must register the delivery's ticket
//! in the same turn (spec 003 §3: a value read in a turn and acted on after an await is a
//! stale snapshot), and the registration it promises must be finished when the method
//! returns (spec 003 §5: `Reserve` versus `Reserve_WRONG`). Neither is told by what the
//! relay path says about itself: the table is read through the read-only view after every
//! turn of its lane, and the store's grant witnesses that the delivery's work is running.
//! Events are judged after the poll that emitted them, when later turns of the same poll
//! may have changed the table; so the order of a registration and a route change is read
//! from the table's own write numbers, not from when the checker looks.
//!
//! A real bug that would still pass: a ticket registered under the right lane for the
//! wrong delivery tag (the checker matches tickets to grants by instance only).

use std::sync::Arc;

use sutra_sim_core::{Check, Checker, CheckerKind, CheckerSpec, Event};

use crate::event::{Component, LaneAction, ModelEvent};
use crate::ids::ResumePath;
use crate::view::{ModelView, RouteView, TicketView};

/// The checker: stateless, the table's own write order tells what came first.
#[derive(Default)]
pub struct TicketsFollowRoutes;

/// The registration.
pub fn spec() -> CheckerSpec<ModelEvent, ModelView> {
    CheckerSpec {
        name: "tickets-follow-routes",
        kind: CheckerKind::Always,
        description: "a delivery's ticket names the route current in the turn that registers it, \
                      and exists before the delivery's work claims its instance",
        rules: &["L7", "L11"],
        factory: Arc::new(|| Box::new(TicketsFollowRoutes)),
    }
}

impl Checker<ModelEvent, ModelView> for TicketsFollowRoutes {
    fn interest(&self) -> u64 {
        sutra_sim_core::tag_mask(&[crate::event::tag::LANE, crate::event::tag::CLAIM_GRANTED])
    }

    fn name(&self) -> &str {
        "tickets-follow-routes"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, view: &ModelView) -> Check {
        match &event.kind {
            ModelEvent::Lane { process, component: Component::Bindings, action: LaneAction::TurnEnded(_), .. } => {
                // The misfiled ticket with the lowest tag, if any (allocation-free visit).
                let mut misfiled: Option<(TicketView, RouteView)> = None;
                view.for_each_binding_ticket_with_route(*process, |t, route| {
                    if let Some(route) = route {
                        // A route changed after the registration leaves the ticket right when made.
                        if route.lane != t.lane
                            && route.changed < t.registered
                            && misfiled.is_none_or(|(m, _)| t.tag < m.tag)
                        {
                            misfiled = Some((t, route));
                        }
                    }
                    true
                });
                match misfiled {
                    Some((t, route)) => Check::Fail(format!(
                        "p{}: delivery {} of instance {} was registered under lane {} while the binding \
                         table already routed it to lane {} (a route read before an await, L7)",
                        process.0, t.tag, t.instance.0, t.lane, route.lane
                    )),
                    None => Check::Ok,
                }
            }
            ModelEvent::ClaimGranted {
                instance,
                exec,
                process: Some(process),
                path: ResumePath::Relay | ResumePath::PullCompletion,
                ..
            } => {
                let mut held = false;
                let table = view.for_each_binding_ticket(*process, |t| {
                    held |= t.instance == *instance;
                    !held
                });
                if table.is_some() && !held {
                    Check::Fail(format!(
                        "p{}: execution {} of a delivery claimed instance {} while the binding table holds no \
                         ticket for it (the registration was not done when the relay path went on, L11)",
                        process.0, exec.0, instance.0
                    ))
                } else {
                    Check::Ok
                }
            }
            _ => Check::Ok,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::collections::BTreeMap;
    use std::rc::Rc;

    use sutra_sim_core::{NodeId, SimTime};

    use super::*;
    use crate::checkers::testing::view;
    use crate::ids::{ExecId, InstanceId, OwnerId, ProcessId};
    use crate::view::{RouteView, TableView, TicketView};

    const P: ProcessId = ProcessId(1);

    fn turn_ended() -> ModelEvent {
        ModelEvent::Lane { process: P, component: Component::Bindings, action: LaneAction::TurnEnded(1), task: None }
    }

    fn granted(instance: u32) -> ModelEvent {
        ModelEvent::ClaimGranted {
            instance: InstanceId(instance),
            exec: ExecId(7),
            owner: OwnerId::lane(P, 0),
            process: Some(P),
            path: ResumePath::Relay,
            previous: None,
            stale_age_ns: None,
            epoch: 1,
            task: None,
        }
    }

    /// Feeds each event after putting the table in the state given beside it.
    fn judge(steps: Vec<(TableView, ModelEvent)>) -> Check {
        let tables = Rc::new(RefCell::new(BTreeMap::new()));
        let view = view().with_tables(tables.clone());
        let mut checker = TicketsFollowRoutes;
        for (seq, (table, kind)) in steps.into_iter().enumerate() {
            tables.borrow_mut().insert(P, table);
            let event = Event { seq: seq as u64, time: SimTime(seq as u64), node: NodeId(1), kind };
            if let Check::Fail(m) = checker.on_event(&event, &view) {
                return Check::Fail(m);
            }
        }
        Check::Ok
    }

    /// The table routes instance 3 to `route` since write `changed`; tickets are (tag, lane, write).
    fn table(route: u16, changed: u64, tickets: &[(u32, u16, u64)]) -> TableView {
        TableView {
            routes: [(InstanceId(3), RouteView { lane: route, changed })].into_iter().collect(),
            tickets: tickets
                .iter()
                .map(|&(tag, lane, registered)| TicketView { tag, instance: InstanceId(3), lane, registered })
                .collect(),
        }
    }

    #[test]
    fn a_ticket_registered_under_the_current_route_passes() {
        let c = judge(vec![(table(1, 0, &[(5, 1, 1)]), turn_ended()), (table(1, 0, &[(5, 1, 1)]), granted(3))]);
        assert_eq!(c, Check::Ok);
    }

    #[test]
    fn a_ticket_that_keeps_its_lane_after_a_later_rebind_passes() {
        // Registered under lane 1 at write 1; a migration moved the route at write 2 — even if
        // the checker only looks after both: the ticket was right when made.
        let c = judge(vec![(table(1, 0, &[(5, 1, 1)]), turn_ended()), (table(2, 2, &[(5, 1, 1)]), turn_ended())]);
        assert_eq!(c, Check::Ok);
    }

    #[test]
    fn fires_when_a_ticket_is_registered_under_a_lane_the_table_no_longer_routes_to() {
        // The route moved to lane 2 at write 1; the ticket was registered under lane 1 at write 2.
        let c = judge(vec![(table(2, 1, &[]), turn_ended()), (table(2, 1, &[(5, 1, 2)]), turn_ended())]);
        assert!(matches!(c, Check::Fail(m) if m.contains("L7")));
    }

    #[test]
    fn fires_when_a_delivery_claims_before_its_ticket_exists() {
        let c = judge(vec![(table(1, 0, &[]), turn_ended()), (table(1, 0, &[]), granted(3))]);
        assert!(matches!(c, Check::Fail(m) if m.contains("L11")));
    }

    #[test]
    fn a_timer_fire_needs_no_ticket() {
        let mut timer = granted(3);
        if let ModelEvent::ClaimGranted { path, .. } = &mut timer {
            *path = ResumePath::Timer;
        }
        assert_eq!(judge(vec![(table(1, 0, &[]), timer)]), Check::Ok);
    }
}

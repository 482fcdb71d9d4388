//! Mis-routing, the gate: work lands on the wrong lane — or, for a timer fire, the wrong
//! replica. (The routing hash changing mid-run is the injector's side:
//! [`crate::injector::misroute`].) Routing is affinity only (R12): the claim bounces
//! mis-routed work as visible, retry-safe contention.

use sutra_sim_core::executor;

use super::kind::FaultKind;
use crate::ctx::{Context, FaultGate};
use crate::streams;

/// Mis-routing decisions (per dispatch, and the hash change on the tick) draw from the
/// injector's stream.
pub(crate) const GATE: FaultGate = FaultGate::tick(FaultKind::Misroute);

/// Where a dispatch goes after the misroute fault had its say.
pub struct Destination {
    /// Replica index (for timers, which any replica's poller may fire).
    pub replica: Option<u32>,
    /// Lane index.
    pub lane: u16,
    /// True if the fault moved it.
    pub misrouted: bool,
}

/// Maybe moves a dispatch meant for `lane`: to another lane of the same replica, or (when
/// `other_replica_ok`) to a lane of another replica.
pub fn route(ctx: &Context, lane: u16, other_replica_ok: bool) -> Destination {
    let lanes = ctx.scenario().topology.lanes;
    let replicas = ctx.scenario().topology.replicas;
    if !ctx.fires(GATE, ctx.faults().misroute.per_delivery) {
        return Destination { replica: None, lane, misrouted: false };
    }
    if other_replica_ok && replicas > 1 && ctx.faults().misroute.wrong_replica.draw(streams::ROUTING) {
        let replica = executor::choose_in(streams::ROUTING, replicas);
        let lane = executor::choose_in(streams::ROUTING, lanes) as u16;
        ctx.report(FaultKind::Misroute, Some(replica), Default::default());
        return Destination { replica: Some(replica), lane, misrouted: true };
    }
    if lanes < 2 {
        return Destination { replica: None, lane, misrouted: false };
    }
    let moved = ((u32::from(lane) + 1 + executor::choose_in(streams::ROUTING, lanes - 1)) % lanes) as u16;
    ctx.report(FaultKind::Misroute, None, Default::default());
    Destination { replica: None, lane: moved, misrouted: true }
}

//! The injector's side of mis-routing: the routing hash changing mid-run (the per-dispatch
//! side is the gate [`crate::faults::misroute`]). Routing is affinity only (R12).

use sutra_sim_core::executor;

use crate::ctx::Context;
use crate::faults::kind::FaultKind;
use crate::faults::misroute::GATE;
use crate::routing::Routing;
use crate::streams;

/// Draws whether the routing hash changes this tick.
pub fn maybe_change_hash(ctx: &Context, routing: &Routing) {
    if !ctx.fires(GATE, ctx.faults().misroute.hash_change_per_tick) {
        return;
    }
    let salt = u64::from(executor::choose_in(streams::ROUTING, u32::MAX)) + 1;
    routing.change_salt(salt);
    ctx.report(FaultKind::Misroute, None, Default::default());
}

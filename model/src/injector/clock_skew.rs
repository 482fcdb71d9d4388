//! Clock skew: each replica's clock gets an offset and a drift either way at start, and may
//! step mid-run. The store's clock stays authoritative; a correct replica never decides
//! anything about claims by its own clock (R2, R18), so only careless code notices.
//!
//! A replica's own timers do follow its clock (the executor's sleeps are by the node's
//! clock): its poll loop, its sweeps and lease renewals run early on a fast clock, late on
//! a slow one, and a step moves the timers pending across it; the gate
//! [`crate::faults::timeout_watch`] witnesses such a timer firing early or late.

use std::rc::Rc;

use sutra_sim_core::executor;
use sutra_sim_core::NodeClock;

use crate::ctx::FaultGate;
use crate::event::ModelEvent;
use crate::faults::kind::FaultKind;
use crate::streams;
use crate::world::World;

/// A signed draw in `[-max, max]`. (A zero draw maps to `-max`: the shrinker simplifies
/// skew by switching the fault off in the scenario, not through the tape.)
fn signed_up_to(max: u32) -> i64 {
    i64::from(executor::choose_in(streams::FAULTS, 2 * max + 1)) - i64::from(max)
}

/// Draws every replica's offset and drift at the start of the run.
pub fn skew_clocks(world: &Rc<World>) {
    let options = &world.ctx.faults().clock_skew;
    let offset_max_ms = options.offset_max.as_millis() as u32;
    let drift_max = options.drift_ppm_max;
    if offset_max_ms == 0 && drift_max == 0 {
        return;
    }
    let nodes: Vec<_> = world.cluster.slots.borrow().iter().map(|r| r.node).collect();
    for (index, node) in nodes.into_iter().enumerate() {
        let offset_ms = if offset_max_ms > 0 { signed_up_to(offset_max_ms) } else { 0 };
        let drift_ppm = if drift_max > 0 { signed_up_to(drift_max) as i32 } else { 0 };
        if offset_ms == 0 && drift_ppm == 0 {
            continue;
        }
        executor::set_clock(node, NodeClock { offset_ns: offset_ms * 1_000_000, drift_ppm });
        world.cluster.slots.borrow_mut()[index].skew_ms = offset_ms;
        world.ctx.tracer.emit_on(node, ModelEvent::ClockSkewed { replica: index as u32, offset_ms });
        world.ctx.report(
            FaultKind::ClockSkew,
            Some(index as u32),
            std::time::Duration::from_millis(offset_ms.unsigned_abs()),
        );
    }
}

/// Draws whether a replica's clock steps this tick, and by how much.
pub fn maybe_step(world: &Rc<World>) {
    let options = &world.ctx.faults().clock_skew;
    let step_max_ms = options.step_max.as_millis() as u32;
    if step_max_ms == 0 || !world.ctx.fires(FaultGate::tick(FaultKind::ClockSkew), options.step_per_tick) {
        return;
    }
    let replicas = world.cluster.slots.borrow().len() as u32;
    let index = executor::choose_in(streams::FAULTS, replicas);
    let node = world.cluster.slots.borrow()[index as usize].node;
    let step_ms = signed_up_to(step_max_ms);
    let mut clock = executor::clock(node);
    clock.offset_ns += step_ms * 1_000_000;
    executor::set_clock(node, clock);
    let offset_ms = clock.offset_ns / 1_000_000;
    world.cluster.slots.borrow_mut()[index as usize].skew_ms = offset_ms;
    world.ctx.tracer.emit_on(node, ModelEvent::ClockSkewed { replica: index, offset_ms });
    world.ctx.report(FaultKind::ClockSkew, Some(index), std::time::Duration::from_millis(step_ms.unsigned_abs()));
}

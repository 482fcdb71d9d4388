//! Clock skew: each replica's clock gets an offset either way, up to the scenario's
//! maximum. The store's clock stays authoritative; a correct replica never decides
//! anything about claims by its own clock.

use std::rc::Rc;

use sutra_sim_core::executor;
use sutra_sim_core::NodeClock;

use crate::event::ModelEvent;
use crate::streams;
use crate::world::World;

/// Draws every replica's offset at the start of the run.
pub fn skew_clocks(world: &Rc<World>) {
    let max_ms = world.faults.clock_skew_max.as_millis() as u32;
    if max_ms == 0 {
        return;
    }
    let nodes: Vec<_> = world.replicas.borrow().iter().map(|r| r.node).collect();
    for (index, node) in nodes.into_iter().enumerate() {
        // Draws in [0, 2*max]; the middle (max) is no skew, and 0 draws the largest lag.
        let draw = executor::choose_in(streams::FAULTS, 2 * max_ms + 1);
        let offset_ms = i64::from(draw) - i64::from(max_ms);
        if offset_ms == 0 {
            continue;
        }
        executor::set_clock(node, NodeClock { offset_ns: offset_ms * 1_000_000, drift_ppm: 0 });
        world.replicas.borrow_mut()[index].skew_ms = offset_ms;
        world.tracer.emit_on(node, ModelEvent::ClockSkewed { replica: index as u32, offset_ms });
    }
}

//! Shrinking the knobs: for each knob, try its simplest value (0), then search for the
//! lowest value that still fails by bisection. Knobs come first in every round because a
//! smaller scenario (fewer replicas, no faults of a kind, a shorter faulty phase) shrinks
//! the tape more than any tape edit can. A knob change is tried with the best tape first,
//! then with the property's own tapes for the new knobs (see `Property::reseeds`).

use crate::search::{Property, Search};

/// Lowers each knob in turn as far as it will go.
pub(crate) fn lower_each_knob<P: Property + ?Sized>(search: &mut Search<'_, P>) {
    for index in 0..search.best.knobs.len() {
        let value = search.best.knobs[index];
        if value == 0 || search.stopped() {
            continue;
        }
        if search.try_knobs(search.best.with_knob(index, 0)) {
            continue;
        }
        // Invariant: `low` did not fail (or was not simpler), `high` is the knob's value in
        // the best candidate, which fails.
        let (mut low, mut high) = (0u32, value);
        while high > low + 1 && !search.stopped() {
            let middle = low + (high - low) / 2;
            if search.try_knobs(search.best.with_knob(index, middle)) {
                high = search.best.knobs[index];
            } else {
                low = middle;
            }
        }
    }
}

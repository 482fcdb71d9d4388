//! The limits of one shrink. Shrinking calls the property (one simulated run) many times;
//! every loop in it has a bound, and the whole search has two: property calls and wall time.

use std::time::Duration;

/// Default most property calls in one shrink. At well under a millisecond per run of a
/// small scenario this is a few seconds; large runs hit the time budget first.
pub const ORACLE_CALLS_MAX: u64 = 20_000;

/// Default wall-clock budget of one shrink.
pub const TIME_BUDGET_DEFAULT: Duration = Duration::from_secs(10);

/// Most rounds of all passes. A round that changes nothing ends the search before this; a
/// round that changes something strictly simplified the candidate.
pub const ROUNDS_MAX: u32 = 12;

/// Most tape positions one pass visits (per span size, for the span passes). On a longer
/// tape the positions are spread evenly over it, so that one pass over a long tape costs a
/// bounded number of runs instead of one per draw, and the next round still comes.
pub const POSITIONS_PER_PASS_MAX: usize = 256;

/// How far one shrink may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most calls of the property, the initial check included.
    pub oracle_calls_max: u64,
    /// Wall-clock budget. When it runs out the best candidate so far is returned; the
    /// result then depends on the machine's speed, and [`crate::Shrunk::stop`] says so.
    pub time_budget: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { oracle_calls_max: ORACLE_CALLS_MAX, time_budget: TIME_BUDGET_DEFAULT }
    }
}

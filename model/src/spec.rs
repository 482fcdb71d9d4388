//! The spec's parameters and the model's fixed limits, in one leaf that components,
//! scenario validation and checkers may all read. Checkers compute their expectations from
//! these and from the scenario's parameters — never by calling the component code they
//! judge, which would make a wrong formula agree with itself.

use std::time::Duration;

/// First wait before the store client retries a call the store refused (aborted or
/// unavailable: nothing was written, so a retry is safe).
pub const RETRY_BACKOFF_BASE: Duration = Duration::from_millis(20);
/// Longest wait between the store client's retries.
pub const RETRY_BACKOFF_MAX: Duration = Duration::from_secs(1);
/// Most attempts of one store call.
pub const RETRY_ATTEMPTS_MAX: u32 = 24;
/// A lower bound on how long the store client keeps retrying one call: the sum of its
/// backoffs (20+40+…+640 ms, then 1 s each). Store unavailability must stay below it.
pub const RETRY_HORIZON: Duration = Duration::from_secs(15);

/// Most attempts the operator's admin client makes of one migration (its attempt budget):
/// a migration answered `SUTRA.ADMIN.MIGRATE.CLAIM_HELD` ("you lost a race, try again") is
/// sent again, with backoff, until it gets another answer or this many were sent. Spec 000
/// says "try again", not "try forever": a budget keeps the client bounded, and a migration
/// that loses this many races in a row is handed back to its operator.
pub const ADMIN_ATTEMPTS_MAX: u32 = 8;

/// Most work items queued at one execution lane before its feeders wait (the prefetch
/// window does the rest of the flow control).
pub const LANE_BACKLOG_MAX: usize = 2;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_retry_horizon_is_below_the_sum_of_the_retry_backoffs() {
        let mut backoff = RETRY_BACKOFF_BASE;
        let mut total = Duration::ZERO;
        for _ in 0..RETRY_ATTEMPTS_MAX {
            total += backoff;
            backoff = (backoff * 2).min(RETRY_BACKOFF_MAX);
        }
        assert!(RETRY_HORIZON <= total, "{RETRY_HORIZON:?} > {total:?}");
    }
}

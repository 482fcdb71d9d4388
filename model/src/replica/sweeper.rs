//! The sweeper role: lease-gated (one holder at a time, with expiry), it clears claims
//! older than the claim timeout by the store's clock, by age and owner-blind (R14, R18).
//! It is the only backstop for a process that stopped existing.

use std::rc::Rc;

use sutra_sim_core::executor::{self, sleep};

use crate::ctx::Context;
use crate::ids::{OwnerId, ProcessId};
use crate::mutant::Mutant;
use crate::store::Store;
use crate::store::{OwnerFilter, SweepCutoff};

/// The careless sweeper's owner parser, written when a replica had one lane: it clears
/// only owners that look like a bare process or its lane 0.
fn looks_like_a_known_owner(owner: OwnerId) -> bool {
    let text = owner.display_string();
    match text.split_once('#') {
        None => text.starts_with('p'),
        Some((_, lane)) => lane == "lane-0",
    }
}

/// The sweeper loop of one process.
pub async fn run(ctx: Rc<Context>, store: Store, process: ProcessId) {
    let t = ctx.scenario().timeouts.clone();
    // The role's phase (zero unless drawn): its first period starts this much after boot.
    let phase = crate::faults::phase(&ctx, t.sweep_interval);
    if !phase.is_zero() {
        sleep(phase).await;
    }
    let watch = crate::faults::clock_skew::TimeoutWatch::default();
    loop {
        watch.sleep(&ctx, process, t.sweep_interval).await;
        let unleased = ctx.mutant_is(Mutant::SweeperUnleased);
        if !unleased && !store.acquire_lease(process, t.lease_duration).await {
            continue;
        }
        let cutoff = if ctx.mutant_is(Mutant::LocalClockStaleness) {
            let local = executor::local_now();
            SweepCutoff::TakenBefore(sutra_sim_core::SimTime(local.0.saturating_sub(t.claim_timeout.as_nanos() as u64)))
        } else {
            SweepCutoff::StoreAge
        };
        let filter: Option<OwnerFilter> =
            ctx.mutant_is(Mutant::SweeperParsesOwner).then_some(looks_like_a_known_owner as OwnerFilter);
        store.sweep(process, cutoff, !unleased, filter).await;
    }
}

//! The sweeper role: lease-gated (one holder at a time, with expiry), it clears claims
//! older than the claim timeout by the store's clock, by age and owner-blind (R14, R18).
//! It is the only backstop for a process that stopped existing.
//!
//! Its shape is a design choice (`[design] sweep`, spec 000 "The sweep is the only
//! backstop"). Real code checks its lease in one statement and then, as often as not,
//! selects the stale ids in a second and clears each in a third: the process can pause, and
//! the lease lapse, between any two of them. The correct two-step shape re-checks in the
//! clear what the select saw (the claim's epoch, its age by the store's clock, the lease);
//! the careless one clears what it selected, whatever happened meanwhile. The one-update
//! shape selects and clears in a single conditional statement.
//!
//! Every statement crosses the store's faulty boundary, and a reply can be lost after the
//! store applied the statement. A lease acquisition or renewal whose reply was lost may
//! have made this process the holder: it acts as not leased this round (spec 000: the role
//! acts only under a lease it holds; one it does not know of lapses unused, and holds the
//! other processes off no longer than its duration). A lost select selected nothing this
//! round. A lost clear (or one-statement sweep) may or may not have cleared: the clear is
//! the store's own conditional judgement either way, so there is nothing to redo — a claim
//! still stale is selected again next round.
//!
//! A process shutting down stops sweeping at its next wait (a round under way finishes); the
//! lease it may hold is left to expire, as spec 000's lease-gated role allows for a holder
//! that goes away.

use std::rc::Rc;

use sutra_sim_core::executor::{self, sleep};

use crate::ctx::{Context, FaultGate};
use crate::design::SweepShape;
use crate::faults::kind::FaultKind;
use crate::ids::{OwnerId, ProcessId};
use crate::mutant::Mutant;
use crate::replica::shutdown::Shutdown;
use crate::store::{OwnerFilter, SweepCutoff};
use crate::store::{Reply, Store};

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
pub async fn run(ctx: Rc<Context>, store: Store, process: ProcessId, shutdown: Rc<Shutdown>) {
    let t = ctx.scenario().timeouts.clone();
    let shape = ctx.scenario().design.sweep;
    let _role = shutdown.role();
    // The role's phase (zero unless drawn): its first period starts this much after boot.
    let phase = crate::faults::phase(&ctx, t.sweep_interval);
    if !phase.is_zero() && shutdown.unless_requested(sleep(phase)).await.is_none() {
        return;
    }
    let watch = crate::faults::timeout_watch::TimeoutWatch::default();
    loop {
        if shutdown.unless_requested(watch.sleep(&ctx, process, t.sweep_interval)).await.is_none() {
            return;
        }
        let unleased = ctx.mutant_is(Mutant::SweeperUnleased);
        let asked_at = executor::local_now();
        if !unleased && store.acquire_lease(process, t.lease_duration).await != Reply::Answered(true) {
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
        // "We renewed the lease a moment ago, well within its duration by our own clock":
        // the sweep no longer asks the store to check it.
        let fresh =
            ctx.mutant_is(Mutant::SweepTrustsRenewal) && executor::local_now().since(asked_at) < t.lease_duration / 2;
        let require_lease = !unleased && !fresh;
        let recheck = match shape {
            SweepShape::OneUpdate => {
                let _unknown_if_lost = store.sweep(process, cutoff, require_lease, filter).await;
                continue;
            }
            SweepShape::SelectThenClear => true,
            SweepShape::SelectThenClearUnchecked => false,
        };
        let Reply::Answered(stale) = store.select_stale(process, cutoff, filter).await else { continue };
        if stale.is_empty() {
            continue;
        }
        if ctx.fires(FaultGate::tick(FaultKind::Lease), ctx.faults().lease.holder_pause_mid_sweep) {
            ctx.pause_process(process);
            // Frozen from here: the next await returns once the process resumes.
            executor::yield_now().await;
        }
        for (instance, epoch) in stale {
            let _unknown_if_lost = store.clear_stale(process, instance, epoch, cutoff, require_lease, recheck).await;
        }
    }
}

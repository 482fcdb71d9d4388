//! Mutants: known-bad variants of the model, each a runtime switch breaking one rule at
//! the place where that rule lives (DESIGN.md §7). Checkers never see which mutant is on;
//! they judge only the events. The framework earns trust by catching every one.

use serde::{Deserialize, Serialize};

/// A known-bad variant of the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mutant {
    /// Owner ids name the process, not the lane (breaks R11).
    PerProcessOwner,
    /// The claim is released before the commit, in its own transaction (breaks R8).
    ReleaseBeforeCommit,
    /// The commit leaves the claim in place; a second transaction releases it (breaks R8).
    ReleaseAfterCommit,
    /// A validation error or unexpected failure exits without releasing (breaks R9).
    NoReleaseOnError,
    /// A panicking step re-raises without releasing (breaks R9).
    NoReleaseOnPanic,
    /// A refused claim is retried in place until the holder lets go (breaks R3).
    WaitOnHeldClaim,
    /// Migration claims under the owner id of the instance's lane (breaks R15).
    MigrateWithLaneOwner,
    /// A lane trusts routing: work routed to an instance's home lane skips the claim (breaks R12).
    RoutingAsMutex,
    /// The commit does not check that its writer still owns the row (breaks R19).
    UnconditionalCommit,
    /// The sweeper judges age by its own replica's clock (breaks R2, R18).
    LocalClockStaleness,
    /// The sweeper parses owner ids and only clears the ones it recognises (breaks R14).
    SweeperParsesOwner,
    /// Every replica sweeps, lease or not (breaks R18).
    SweeperUnleased,
    /// A relay is acked on receipt, before the step commits (breaks R4).
    AckBeforeCommit,
    /// A refused timer fire is deferred with no backoff (breaks R5).
    TimerDeferNoBackoff,
    /// An instance parked for a pull worker keeps its claim (breaks R17).
    ParkedKeepsClaim,
    /// The relay path reads the binding table in a turn and acts on it after an await (breaks L7).
    SnapshotAcrossAwait,
    /// The binding table's rebind calls its own public unbind from inside its turn (breaks L3).
    ReentrantCall,
    /// As `reentrant-call`, on a lane whose reentrancy check is missing (breaks L3, as a hang).
    ReentrantCallUndetected,
    /// Registering a delivery's ticket is posted to the lane: the method returns before it
    /// happened (breaks L11).
    RegistrationAfterReturn,
    /// The lane runs a step for any trigger of an unfinished instance, ignoring the version
    /// the trigger was issued for: a duplicate relay advances the next step (breaks R25).
    DuplicateAdvancesStep,
    /// Release is handed to a spawned task ("a destructor cannot await"): it can land after
    /// the lane re-claimed the same instance, and clears that newer claim (breaks R9, R21).
    ReleaseInSpawnedTask,
    /// The claim's staleness is judged by the claiming replica's own clock, which the
    /// store takes from the request (breaks R2).
    ClientClockStaleness,
    /// A refused relay is acked and re-published at once under a new execution, a busy
    /// loop against the holder (breaks R3, R4).
    RefusedRelayRepublished,
    /// Migration rewrites the binding table before it claims, and a 409 leaves the
    /// override behind (breaks R6).
    MigrationRebindsBeforeClaim,
    /// The binding table registers a ticket in one turn and counts it per lane in a second
    /// turn: between the two the table's invariant is broken (breaks L9).
    PerLaneCountSecondTurn,
    /// Deep. The store client retries a commit the store refused (a transient abort, a
    /// short unavailability) with its ownership condition widened to "ours, or free", in
    /// case the first attempt had released: harmless unless the writer's claim was swept
    /// meanwhile and nobody has claimed the row since (breaks R19). The rare events, in
    /// order: a commit's transaction aborts (`sometimes-commit-retried-after-abort`), its
    /// process freezes within the retry's backoff (`sometimes-froze-retrying-commit`) for
    /// longer than the claim timeout, the sweep clears the claim, and no other resume
    /// claims the row before the frozen process wakes.
    CommitRetryAcceptsFreeRow,
    /// Deep. The sweep drops its lease condition because the sweeper renewed the lease
    /// just before: harmless unless the sweeper freezes between the renewal and the sweep
    /// for longer than the lease, while some claim is stale (breaks R18). The freeze falls
    /// between the lease grant and the select (`sometimes-lease-holder-froze-before-select`)
    /// or, where the lease fault pauses a holder mid-sweep, between the select and the
    /// clears (`sometimes-sweep-interrupted-between-steps`).
    SweepTrustsRenewal,
    /// Deep. A delivery of a message already queued for one of this process's lanes is
    /// acked unseen, "the queued copy will do the step": harmless while the broker still
    /// holds the queued copy's delivery, wrong for a zombie — a process replaced while
    /// frozen, whose deliveries the broker took back — when its queued copy then fails
    /// (breaks R4). On the way: a replaced process resumes with a lane busy
    /// (`sometimes-zombie-resumed-mid-step`), and a delivery the broker took back from it
    /// reaches it again while a copy still waits in a lane
    /// (`sometimes-relay-back-while-copy-queued`).
    QueuedCopyAcked,
    /// A store call that times out is taken as failed: an ambiguous commit is reported as a
    /// failed step — released and retried — though the store may have applied it (breaks
    /// R8, R9: the exit of a step that did not commit).
    AmbiguousCommitAsFailure,
    /// An aborted execution's future is dropped and nothing else happens: a destructor
    /// cannot await, so its claim is left to the sweeper while the process lives (breaks
    /// R9, R22).
    NoReleaseOnCancel,
    /// A gracefully shutting-down replica exits at its drain deadline with executions still
    /// in flight, dropping them without their awaited exit path: their claims are left to
    /// the sweeper by a process that had every chance to release (breaks R9, R22).
    ShutdownSkipsDrainRelease,
    /// Migration's rebind checks the instance's row in the store from inside the binding
    /// table's turn, "so the check and the table write are one atomic step": the turn
    /// waits for a store round trip (breaks L8).
    StoreReadInTurn,
    /// A migration that fails validation (the instance already completed) returns its 422
    /// without releasing, and one whose client hung up is simply dropped — "the request is
    /// over" — leaving its claim to the sweeper while the replica lives (breaks R9, R22).
    MigrationExitKeepsClaim,
    /// A refused relay is handed back after a backoff: the lane sleeps the runtime's retry
    /// backoff (`timer_backoff_base`) and only then requeues the delivery — holding its
    /// prefetch slot and the lane meanwhile (breaks R3, R4).
    RefusalSleepsBeforeRequeue,
    /// The store's claim predicate forgets the same owner: `owner IS NULL OR claimed_at <
    /// cutoff`, so a lane's own re-claim (a claim sent again after its reply was lost, an
    /// aborted execution's exit path) is refused (breaks R2, R10).
    ClaimRefusesOwnOwner,
    /// The claim-bounce meter is counted where a trigger is handed back rather than where
    /// the claim is refused, so failed, cancelled and handed-back work reads as bounces
    /// (breaks R13).
    MeterCountsGiveBacks,
    /// The relay path's error mapping retries the step failures it lists and dead-letters
    /// every other code — `CLAIM_HELD` included, so a relay that only lost a race is parked
    /// for good (breaks R4, R7).
    ClaimHeldDeadLettered,
    /// The lane's store client sends an unanswered release again as a new request (a fresh
    /// idempotency key per attempt): a delayed first copy is then no duplicate to the store,
    /// lands after the lane re-claimed the same instance and, matching the owner id, clears
    /// the newer claim mid-step — the owner-keyed ABA (breaks R9, R21).
    ReleaseResentAsNewRequest,
    /// The lane's store client sends its claims unnumbered, so the store has nothing to
    /// fence on: an aborted worker's claim still on the wire lands after the lane's exit
    /// path or next worker claimed and is granted re-entrantly over that newer claim, or
    /// after its release, to a task that is gone — the owner-keyed ABA on the claim
    /// (breaks R11, R20, R22).
    ClaimsNotNumbered,
    /// The operator's admin client retries every answer that is not a success: a 422
    /// `SUTRA.ADMIN.MIGRATE.VALIDATION` ("this will never work") is sent again until the
    /// attempt budget runs out (breaks R7).
    AdminRetriesValidation,
    /// The operator's admin client takes every 4xx as the caller's mistake and retries only
    /// server errors: a 409 `SUTRA.ADMIN.MIGRATE.CLAIM_HELD` ("you lost a race, try again")
    /// ends the migration (breaks R7).
    AdminGivesUpOnClaimHeld,
}

/// What a mutant breaks and who is expected to catch it.
#[derive(Clone, Copy, Debug)]
pub struct MutantInfo {
    /// The mutant.
    pub mutant: Mutant,
    /// Its name on the CLI.
    pub name: &'static str,
    /// The rule ids it breaks.
    pub rules: &'static str,
    /// The checker (or verdict class) expected to catch it; alternatives joined by " or ".
    pub caught_by: &'static str,
    /// The careless code, in one line.
    pub description: &'static str,
    /// A *deep* mutant: its careless code only goes wrong when two or more rare events
    /// coincide (a pause with a replacement, a store abort on a commit whose claim was
    /// stolen, a clock step under a cached lease), so a plain sweep needs on the order of
    /// a thousand seeds or more to kill it. The multiverse benchmarks (`bench --explore`)
    /// measure exploration against a sweep on these; `mutants` still kills them from seed 0.
    pub deep: bool,
}

/// Every mutant, in the order of DESIGN.md §7.
pub const MUTANTS: [MutantInfo; 41] = [
    MutantInfo {
        mutant: Mutant::PerProcessOwner,
        name: "per-process-owner",
        rules: "R11",
        caught_by: "owner-scope or no-double-resume",
        description: "owner ids name the process, not the lane",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::ReleaseBeforeCommit,
        name: "release-before-commit",
        rules: "R8",
        caught_by: "commit-by-owner or no-double-resume",
        description: "release the claim, then commit in a second transaction",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::ReleaseAfterCommit,
        name: "release-after-commit",
        rules: "R8",
        caught_by: "release-with-commit",
        description: "commit, then release in a second transaction",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::NoReleaseOnError,
        name: "no-release-on-error",
        rules: "R9",
        caught_by: "exits-release",
        description: "validation errors and failures exit without releasing",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::NoReleaseOnPanic,
        name: "no-release-on-panic",
        rules: "R9",
        caught_by: "exits-release",
        description: "a panic is re-raised without releasing",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::WaitOnHeldClaim,
        name: "wait-on-held-claim",
        rules: "R3",
        caught_by: "refusal-contract",
        description: "a refused claim is retried in place",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::MigrateWithLaneOwner,
        name: "migrate-with-lane-owner",
        rules: "R15",
        caught_by: "owner-scope or no-double-resume",
        description: "migration claims under the lane's owner id",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::RoutingAsMutex,
        name: "routing-as-mutex",
        rules: "R12",
        caught_by: "no-double-resume",
        description: "work on its home lane skips the claim",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::UnconditionalCommit,
        name: "unconditional-commit",
        rules: "R19",
        caught_by: "commit-by-owner",
        description: "the commit does not check ownership",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::LocalClockStaleness,
        name: "local-clock-staleness",
        rules: "R2, R18",
        caught_by: "stale-steal or sweep-by-age",
        description: "the sweeper's cutoff comes from its local clock",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::SweeperParsesOwner,
        name: "sweeper-parses-owner",
        rules: "R14",
        caught_by: "eventual-completion",
        description: "the sweeper clears only owners it can parse as lane 0",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::SweeperUnleased,
        name: "sweeper-unleased",
        rules: "R18",
        caught_by: "sweep-by-age or lease-exclusive",
        description: "every replica sweeps without the lease",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::AckBeforeCommit,
        name: "ack-before-commit",
        rules: "R4",
        caught_by: "eventual-completion or refusal-contract",
        description: "relays are acked on receipt",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::TimerDeferNoBackoff,
        name: "timer-defer-no-backoff",
        rules: "R5",
        caught_by: "refusal-contract",
        description: "refused timer fires are deferred without backoff",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::ParkedKeepsClaim,
        name: "parked-keeps-claim",
        rules: "R17",
        caught_by: "parked-holds-no-claim",
        description: "parking for a pull worker claims the instance again to hold it",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::SnapshotAcrossAwait,
        name: "snapshot-across-await",
        rules: "L7",
        caught_by: "tickets-follow-routes",
        description: "the relay path reads its route in one turn and registers under it after an await",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::ReentrantCall,
        name: "reentrant-call",
        rules: "L3",
        caught_by: "lane-contract",
        description: "rebind calls the public unbind inside its turn",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::ReentrantCallUndetected,
        name: "reentrant-call-undetected",
        rules: "L3",
        caught_by: "hang",
        description: "reentrant rebind on a lane without the reentrancy check",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::RegistrationAfterReturn,
        name: "registration-after-return",
        rules: "L11",
        caught_by: "tickets-follow-routes",
        description: "ticket registration posted to the lane; the method returns before it lands",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::DuplicateAdvancesStep,
        name: "duplicate-advances-step",
        rules: "R25",
        caught_by: "one-trigger-one-step",
        description: "the lane ignores the version a trigger expects and runs the current step",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::ReleaseInSpawnedTask,
        name: "release-in-spawned-task",
        rules: "R9, R21",
        caught_by: "no-double-resume or commit-by-owner",
        description: "release handed to a spawned task, landing after the lane re-claimed",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::ClientClockStaleness,
        name: "client-clock-staleness",
        rules: "R2",
        caught_by: "stale-steal",
        description: "the store judges a claim's staleness by the claimant's clock",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::RefusedRelayRepublished,
        name: "refused-relay-republished",
        rules: "R3, R4",
        caught_by: "refusal-contract",
        description: "a refused relay is acked and re-published at once (a busy loop)",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::MigrationRebindsBeforeClaim,
        name: "migration-rebinds-before-claim",
        rules: "R6",
        caught_by: "refused-migration-touches-nothing",
        description: "migration rewrites the binding table before its claim is refused",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::PerLaneCountSecondTurn,
        name: "per-lane-count-second-turn",
        rules: "L9",
        caught_by: "bindings-consistent",
        description: "the per-lane ticket count is updated in a second turn",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::CommitRetryAcceptsFreeRow,
        name: "commit-retry-accepts-free-row",
        rules: "R19",
        caught_by: "commit-by-owner or no-double-resume",
        description: "a commit retried after a store abort is also accepted on a free row",
        deep: true,
    },
    MutantInfo {
        mutant: Mutant::SweepTrustsRenewal,
        name: "sweep-trusts-renewal",
        rules: "R18",
        caught_by: "sweep-by-age",
        description: "the sweep skips the store's lease check right after renewing the lease",
        deep: true,
    },
    MutantInfo {
        mutant: Mutant::QueuedCopyAcked,
        name: "queued-copy-acked",
        rules: "R4",
        caught_by: "eventual-completion",
        description: "a delivery of a message already queued for a lane of the process is acked unseen",
        deep: true,
    },
    MutantInfo {
        mutant: Mutant::AmbiguousCommitAsFailure,
        name: "ambiguous-commit-as-failure",
        rules: "R8, R9",
        caught_by: "commit-once",
        description: "a commit whose reply was lost is reported failed: released and retried",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::NoReleaseOnCancel,
        name: "no-release-on-cancel",
        rules: "R9, R22",
        caught_by: "live-leak",
        description: "an aborted execution's future is dropped without an awaited release",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::ShutdownSkipsDrainRelease,
        name: "shutdown-skips-drain-release",
        rules: "R9, R22",
        caught_by: "live-leak",
        description:
            "a replica shutting down exits at its drain deadline, dropping executions still in flight unreleased",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::StoreReadInTurn,
        name: "store-read-in-turn",
        rules: "L8",
        caught_by: "no-wait-in-turn",
        description: "migration's rebind awaits a store read of the row inside the binding table's turn",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::MigrationExitKeepsClaim,
        name: "migration-exit-keeps-claim",
        rules: "R9, R22",
        caught_by: "exits-release or live-leak",
        description: "a migration's validation error or hung-up client exits without releasing its claim",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::RefusalSleepsBeforeRequeue,
        name: "refusal-sleeps-before-requeue",
        rules: "R3, R4",
        caught_by: "refusal-contract",
        description: "a refused relay is requeued only after the lane sleeps a backoff",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::ClaimRefusesOwnOwner,
        name: "claim-refuses-own-owner",
        rules: "R2, R10",
        caught_by: "refusal-grounds",
        description: "the claim predicate grants a free or stale row only, refusing its own owner's re-claim",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::MeterCountsGiveBacks,
        name: "meter-counts-give-backs",
        rules: "R13",
        caught_by: "bounce-meter-agrees",
        description: "the bounce meter counts every trigger handed back, not every refused claim",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::ClaimHeldDeadLettered,
        name: "claim-held-dead-lettered",
        rules: "R4, R7",
        caught_by: "refusal-contract",
        description: "the relay path dead-letters every code but the step failures it lists, CLAIM_HELD included",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::ReleaseResentAsNewRequest,
        name: "release-resent-as-new-request",
        rules: "R9, R21",
        caught_by: "no-double-resume or commit-by-owner",
        description:
            "an unanswered release is sent again under a new key; its delayed first copy lands after the re-claim",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::ClaimsNotNumbered,
        name: "claims-not-numbered",
        rules: "R11, R20, R22",
        caught_by: "no-double-resume or owner-scope or live-leak",
        description:
            "the lane sends its claims unnumbered: an aborted worker's late claim is granted over the lane's newer one",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::AdminRetriesValidation,
        name: "admin-retries-validation",
        rules: "R7",
        caught_by: "codes-acted-on",
        description: "the admin client retries every answer that is not a success, a 422 validation error included",
        deep: false,
    },
    MutantInfo {
        mutant: Mutant::AdminGivesUpOnClaimHeld,
        name: "admin-gives-up-on-claim-held",
        rules: "R7",
        caught_by: "codes-acted-on",
        description: "the admin client takes every 4xx as final, a 409 CLAIM_HELD included, and retries only 5xx",
        deep: false,
    },
];

/// Verdict classes a mutant may be expected to end in instead of a checker's violation
/// (DESIGN.md §7: `reentrant-call-undetected` hangs). A crash or a budget overrun is never
/// a kill, so neither is listed.
pub const VERDICT_CLASSES: [&str; 1] = ["hang"];

impl MutantInfo {
    /// True if `checker` (a checker's name, or a verdict class such as `hang`) is one of
    /// those expected to catch this mutant. Alternatives in `caught_by` are joined by " or ".
    pub fn expects(&self, checker: &str) -> bool {
        self.alternatives().any(|c| c == checker)
    }

    /// The expected catchers, one by one.
    pub fn alternatives(&self) -> impl Iterator<Item = &'static str> {
        self.caught_by.split(" or ")
    }

    /// The expected catchers that are checkers (not verdict classes): the only checkers a
    /// kill search needs to run.
    pub fn expected_checkers(&self) -> impl Iterator<Item = &'static str> {
        self.alternatives().filter(|c| !VERDICT_CLASSES.contains(c))
    }

    /// True if `verdict` is a kill of this mutant: a violation of an expected checker, or
    /// an expected verdict class. A crash, a budget overrun or another checker's violation
    /// is not a kill.
    pub fn killed_by(&self, verdict: &sutra_sim_core::Verdict) -> bool {
        match verdict {
            sutra_sim_core::Verdict::Pass
            | sutra_sim_core::Verdict::Crash { .. }
            | sutra_sim_core::Verdict::BudgetExceeded { .. } => false,
            other => other.checker().is_some_and(|c| self.expects(c)),
        }
    }
}

impl Mutant {
    /// The mutant's facts.
    pub fn info(self) -> &'static MutantInfo {
        MUTANTS.iter().find(|m| m.mutant == self).expect("every mutant is listed")
    }

    /// The CLI name.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// Looks a mutant up by its CLI name.
    pub fn parse(name: &str) -> Result<Mutant, String> {
        MUTANTS.iter().find(|m| m.name == name).map(|m| m.mutant).ok_or_else(|| {
            let known: Vec<&str> = MUTANTS.iter().map(|m| m.name).collect();
            format!("unknown mutant {name:?}; known mutants: {}", known.join(", "))
        })
    }
}

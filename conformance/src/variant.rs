//! The SQL shapes a run can switch to: the correct statements of `sql/statements.sql`, a
//! correct two-step sweep, and known-bad shapes from real bug reports, each a replacement
//! of one named statement (`Statements::with_replaced`), so the bad SQL is the only
//! difference. And one shape spec 000 calls safe: a claim timeout shorter than the steps.

use sutra_sql::{SqlFileError, Statements};

/// A run's SQL shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// The statements file as it is, one-statement sweep.
    Correct,
    /// The file's two-step sweep: select the stale claims, then clear each with a re-check.
    TwoStepSweep,
    /// River #1302: a two-step sweep whose clear is by id alone, without re-checking that
    /// the selected claim is still there and still stale.
    SweepUncheckedClear,
    /// R19 broken: the commit's WHERE forgets the owner.
    CommitOwnerBlind,
    /// A release without the owner predicate.
    ReleaseOwnerBlind,
    /// Spec 000's tuning trade: a claim timeout shorter than the steps, the commit still
    /// owner-conditional. Safe.
    ShortClaimTimeout,
    /// The short claim timeout with the owner-blind commit: hexpm #1825's double runs.
    ShortClaimTimeoutCommitOwnerBlind,
    /// Not SQL, a lane's behaviour (the statements are the file's): a refused relay is
    /// requeued only after the lane sleeps a "backoff", holding the delivery and the lane
    /// (R3, R4: a refusal hands its delivery back at once).
    RefusalSleepsBeforeRequeue,
}

impl Variant {
    /// Every variant, in listing order.
    pub const ALL: [Variant; 8] = [
        Variant::Correct,
        Variant::TwoStepSweep,
        Variant::SweepUncheckedClear,
        Variant::CommitOwnerBlind,
        Variant::ReleaseOwnerBlind,
        Variant::ShortClaimTimeout,
        Variant::ShortClaimTimeoutCommitOwnerBlind,
        Variant::RefusalSleepsBeforeRequeue,
    ];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Correct => "correct",
            Variant::TwoStepSweep => "two-step-sweep",
            Variant::SweepUncheckedClear => "sweep-unchecked-clear",
            Variant::CommitOwnerBlind => "commit-owner-blind",
            Variant::ReleaseOwnerBlind => "release-owner-blind",
            Variant::ShortClaimTimeout => "short-claim-timeout",
            Variant::ShortClaimTimeoutCommitOwnerBlind => "short-claim-timeout-commit-owner-blind",
            Variant::RefusalSleepsBeforeRequeue => "refusal-sleeps-before-requeue",
        }
    }

    /// The variant called `name`.
    pub fn parse(name: &str) -> Result<Variant, String> {
        Variant::ALL.into_iter().find(|v| v.name() == name).ok_or_else(|| {
            let names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
            format!("unknown variant {name:?}; known: {}", names.join(", "))
        })
    }

    /// Whether the protocol is correct under this shape (the runs must be clean).
    pub fn is_safe(self) -> bool {
        matches!(self, Variant::Correct | Variant::TwoStepSweep | Variant::ShortClaimTimeout)
    }

    /// The checkers expected to flag an unsafe shape, the first one the natural one: where
    /// two judge the same event, `check` names whichever it asked first.
    pub fn expected_checkers(self) -> &'static [&'static str] {
        match self {
            // The clear wipes a claim granted after the select: too young to sweep. (It
            // re-checks the lease no more than the claim: a clear after the lease lapsed is
            // lease-exclusive's, when that comes first.)
            Variant::SweepUncheckedClear => &["sweep-by-age", "lease-exclusive"],
            // A commit by a writer that no longer holds the row: commit-by-owner; if the
            // row was re-granted meanwhile, no-double-resume sees a stale epoch act first.
            Variant::CommitOwnerBlind | Variant::ShortClaimTimeoutCommitOwnerBlind => {
                &["commit-by-owner", "no-double-resume"]
            }
            // A release that clears a newer claim: a write under a stale epoch.
            Variant::ReleaseOwnerBlind => &["no-double-resume"],
            // The refused delivery is requeued later than the refusal's reply and the
            // requeue take, in the refusing process's running time.
            Variant::RefusalSleepsBeforeRequeue => &["refusal-contract"],
            _ => &[],
        }
    }

    /// Whether the sweeper runs the two-step sweep (select, then clear each).
    pub fn two_step_sweep(self) -> bool {
        matches!(self, Variant::TwoStepSweep | Variant::SweepUncheckedClear)
    }

    /// Whether the statements are the file's, whatever the lane does: a safe shape, or a
    /// lane behaviour rather than a SQL shape.
    pub fn sql_is_the_file_s(self) -> bool {
        self.is_safe() || self == Variant::RefusalSleepsBeforeRequeue
    }

    /// Whether a lane sleeps before requeueing a refused relay.
    pub fn refusal_sleeps(self) -> bool {
        self == Variant::RefusalSleepsBeforeRequeue
    }

    /// Whether the claim timeout is shorter than the steps.
    pub fn short_claim_timeout(self) -> bool {
        matches!(self, Variant::ShortClaimTimeout | Variant::ShortClaimTimeoutCommitOwnerBlind)
    }

    /// The statements this variant runs: the shared file, with its one bad statement.
    pub fn statements(self, file: &Statements) -> Result<Statements, SqlFileError> {
        match self {
            Variant::Correct
            | Variant::TwoStepSweep
            | Variant::ShortClaimTimeout
            | Variant::RefusalSleepsBeforeRequeue => Ok(file.clone()),
            Variant::SweepUncheckedClear => file.with_replaced("sweep_clear", SWEEP_CLEAR_BY_ID),
            Variant::CommitOwnerBlind | Variant::ShortClaimTimeoutCommitOwnerBlind => {
                file.with_replaced("commit", COMMIT_OWNER_BLIND)
            }
            Variant::ReleaseOwnerBlind => file.with_replaced("release", RELEASE_OWNER_BLIND),
        }
    }
}

/// River #1302's rescuer: clear the selected row by id, re-checking nothing (not the epoch
/// it selected, not its age, not the lease).
const SWEEP_CLEAR_BY_ID: &str = "UPDATE instance SET prev_owner = owner, owner = NULL
 WHERE id = $1
RETURNING id, prev_owner, epoch, claimed_at, version, parked";

/// The commit with R19's owner predicate forgotten: the owner is passed, and only checked
/// for being there.
const COMMIT_OWNER_BLIND: &str = "UPDATE instance
   SET prev_owner = owner, prev_version = version,
       version = CAST($3 AS BIGINT) + 1,
       owner = CASE WHEN CAST($4 AS BIGINT) = 1 THEN NULL ELSE owner END,
       parked = CASE WHEN (SELECT p.trigger FROM plan p WHERE p.instance = $1 AND p.step = CAST($3 AS BIGINT) + 1) = 'pull'
                THEN 1 ELSE 0 END
 WHERE id = $1 AND CAST($2 AS TEXT) IS NOT NULL
RETURNING version, steps, owner, epoch, parked, prev_owner, prev_version,
          (SELECT p.trigger FROM plan p WHERE p.instance = instance.id AND p.step = instance.version) AS next_trigger";

/// The release without the owner predicate: clears whoever holds the row.
const RELEASE_OWNER_BLIND: &str = "UPDATE instance SET prev_owner = owner, owner = NULL
 WHERE id = $1
RETURNING version, epoch, parked";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_s_statements_pass_the_loader_and_sqlite() {
        let file = Statements::default();
        for v in Variant::ALL {
            let s = v.statements(&file).unwrap_or_else(|e| panic!("{}: {e}", v.name()));
            s.check_on_sqlite().unwrap_or_else(|e| panic!("{}: {e}", v.name()));
        }
    }

    #[test]
    fn each_bad_shape_differs_from_the_file_in_one_statement() {
        let file = Statements::default();
        for v in Variant::ALL {
            let s = v.statements(&file).unwrap();
            let changed = s.statements.iter().zip(&file.statements).filter(|(a, b)| a.text != b.text).count();
            assert_eq!(changed, usize::from(!v.sql_is_the_file_s()), "{}", v.name());
        }
    }

    #[test]
    fn names_round_trip() {
        for v in Variant::ALL {
            assert_eq!(Variant::parse(v.name()), Ok(v));
        }
        assert!(Variant::parse("nope").is_err());
    }
}

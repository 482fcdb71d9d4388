//! The careless shapes of store statements that the model's mutants and `[design]`
//! alternatives call for, written as the SQL a careless engineer would ship. On the SQL
//! engine a mutant or design that changes a store predicate does not act in Rust beside
//! the statement: the Rust around asks for the careless statement in the very call where
//! the model's store takes its careless branch, and the database then decides. Each text is
//! checked like a file's statement (its contract, the determinism lint, SQLite's prepare)
//! when the engine starts.

/// A careless alternative of one named statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Careless {
    /// `commit` without the owner predicate (unconditional-commit, release-before-commit).
    CommitUnowned,
    /// `commit` that also matches a free row (commit-retry-accepts-free-row, on a retry).
    CommitOwnedOrFree,
    /// `claim` judging staleness by the claimant's clock, `$5` (client-clock-staleness).
    ClaimByClaimantClock,
    /// `claim` that takes a free or stale row only, refusing its own owner's re-claim
    /// (claim-refuses-own-owner).
    ClaimRefusesOwnOwner,
    /// `sweep` without the lease (sweeper-unleased, sweep-trusts-renewal).
    SweepUnleased,
    /// `sweep` by the caller's cutoff instant `$4` (local-clock-staleness).
    SweepTakenBefore,
    /// `sweep` of the owners the careless parser knows (sweeper-parses-owner).
    SweepParsesOwner,
    /// `sweep_select` by the caller's cutoff instant `$3`.
    SelectTakenBefore,
    /// `sweep_select` of the owners the careless parser knows.
    SelectParsesOwner,
    /// `sweep_clear` with no re-check at all (`[design] sweep = "select-then-clear-unchecked"`).
    ClearUnchecked,
    /// `sweep_clear` re-checking the epoch and age, not the lease.
    ClearUnleased,
    /// `sweep_clear` re-checking by the caller's cutoff instant `$6`.
    ClearTakenBefore,
}

/// The owners the careless parser knows: a bare process, or lane 0 of one.
const PARSES_OWNER: &str = "((owner LIKE 'p%' AND owner NOT LIKE '%#%') OR owner LIKE '%#lane-0')";

const SWEPT: &str = "RETURNING id, prev_owner, epoch, claimed_at, version, parked";
const LEASED: &str = "EXISTS (SELECT 1 FROM lease l WHERE l.name = 'sweeper' AND l.holder = $1 AND l.expires > $2)";

impl Careless {
    /// Every alternative.
    pub const ALL: [Careless; 12] = [
        Careless::CommitUnowned,
        Careless::CommitOwnedOrFree,
        Careless::ClaimByClaimantClock,
        Careless::ClaimRefusesOwnOwner,
        Careless::SweepUnleased,
        Careless::SweepTakenBefore,
        Careless::SweepParsesOwner,
        Careless::SelectTakenBefore,
        Careless::SelectParsesOwner,
        Careless::ClearUnchecked,
        Careless::ClearUnleased,
        Careless::ClearTakenBefore,
    ];

    /// The statement it stands in for.
    pub fn statement(self) -> &'static str {
        match self {
            Careless::CommitUnowned | Careless::CommitOwnedOrFree => "commit",
            Careless::ClaimByClaimantClock | Careless::ClaimRefusesOwnOwner => "claim",
            Careless::SweepUnleased | Careless::SweepTakenBefore | Careless::SweepParsesOwner => "sweep",
            Careless::SelectTakenBefore | Careless::SelectParsesOwner => "sweep_select",
            Careless::ClearUnchecked | Careless::ClearUnleased | Careless::ClearTakenBefore => "sweep_clear",
        }
    }

    /// Its SQL, built from the default statement's own where it only drops or swaps a
    /// predicate.
    pub fn text(self, default: &str) -> String {
        let swap = |from: &str, to: &str| {
            assert!(default.contains(from), "the careless {self:?} edits `{from}`, which the default lacks");
            default.replace(from, to)
        };
        match self {
            Careless::CommitUnowned => swap("WHERE id = $1 AND owner = $2", "WHERE id = $1 AND $2 = $2"),
            Careless::CommitOwnedOrFree => swap("WHERE id = $1 AND owner = $2", "WHERE id = $1 AND (owner = $2 OR owner IS NULL)"),
            Careless::ClaimByClaimantClock => swap("OR $3 - claimed_at > $4)", "OR $5 - claimed_at > $4)"),
            Careless::ClaimRefusesOwnOwner => swap("(owner IS NULL OR owner = $2 OR", "(owner IS NULL OR"),
            Careless::SweepUnleased => format!(
                "UPDATE instance SET prev_owner = owner, owner = NULL WHERE owner IS NOT NULL AND $2 - claimed_at > $3 AND $1 = $1 {SWEPT}"
            ),
            Careless::SweepTakenBefore => format!(
                "UPDATE instance SET prev_owner = owner, owner = NULL WHERE owner IS NOT NULL AND claimed_at < $4 AND $3 = $3 AND {LEASED} {SWEPT}"
            ),
            Careless::SweepParsesOwner => format!(
                "UPDATE instance SET prev_owner = owner, owner = NULL WHERE owner IS NOT NULL AND $2 - claimed_at > $3 AND {PARSES_OWNER} AND {LEASED} {SWEPT}"
            ),
            Careless::SelectTakenBefore => {
                "SELECT id, epoch FROM instance WHERE owner IS NOT NULL AND claimed_at < $3 AND $1 = $1 AND $2 = $2 ORDER BY id".into()
            }
            Careless::SelectParsesOwner => format!(
                "SELECT id, epoch FROM instance WHERE owner IS NOT NULL AND $1 - claimed_at > $2 AND {PARSES_OWNER} ORDER BY id"
            ),
            Careless::ClearUnchecked => format!("UPDATE instance SET prev_owner = owner, owner = NULL WHERE id = $1 AND owner IS NOT NULL {SWEPT}"),
            Careless::ClearUnleased => format!(
                "UPDATE instance SET prev_owner = owner, owner = NULL WHERE id = $1 AND owner IS NOT NULL AND epoch = $2 AND $4 - claimed_at > $5 AND $3 = $3 {SWEPT}"
            ),
            Careless::ClearTakenBefore => format!(
                "UPDATE instance SET prev_owner = owner, owner = NULL WHERE id = $1 AND owner IS NOT NULL AND epoch = $2 AND claimed_at < $6 AND $5 = $5 \
                 AND EXISTS (SELECT 1 FROM lease l WHERE l.name = 'sweeper' AND l.holder = $3 AND l.expires > $4) {SWEPT}"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_careless_statement_passes_the_loader_and_differs_from_the_default() {
        let careless = crate::sql_store::engine::careless_statements().expect("careless statements load");
        let defaults = sutra_sql::Statements::default();
        for kind in Careless::ALL {
            let text = &careless[&kind].text;
            assert_ne!(text, &defaults.get(kind.statement()).unwrap().text, "{kind:?} is the default");
        }
    }
}

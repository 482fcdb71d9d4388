//! Variants: the design-decision matrix (DESIGN.md §7). Spec 000 argues for each of its
//! choices against named alternatives; a variant is one side of such a choice — a design a
//! team might pick on purpose, not a careless slip — with the spec section that decides it
//! and the verdict the spec predicts: `safe`, or `unsafe` and the checker expected to
//! catch it. `sutra-sim variants` runs every variant and reports whether the prediction
//! holds, so "may we use pod names as owner ids?" gets an answer and a reproducer.
//!
//! A variant's setting is either a `[design]` choice of the scenario or, where the
//! alternative already exists in the model as a mutant, that mutant: one code path per
//! alternative, never two. The spec's own side of every choice is the default design, so
//! the safe variants of different questions often run the very same model.

use crate::design::{ClaimSpan, Design, OwnerIds, SweepShape};
use crate::faults::kind::FaultKind;
use crate::mutant::Mutant;
use crate::scenario::Scenario;

/// The design spec 000 settles on: every `[design]` default.
const SPEC: Design =
    Design { owner_ids: OwnerIds::PerIncarnation, sweep: SweepShape::SelectThenClear, claim_span: ClaimSpan::PerStep };

/// What a variant switches on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    /// A `[design]` section for every scenario it runs in.
    Design(Design),
    /// An existing mutant that is this alternative (on the spec's default design).
    Mutant(Mutant),
    /// A statements file run by the SQL store engine, with a `[design]` section: the
    /// alternative is a SQL choice (`sql/variants/`), judged on the team's own shape of
    /// statement rather than on the model's Rust.
    Sql(SqlFile),
}

/// A statements file of a SQL variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SqlFile {
    /// Its path in the repository, as the reproducer names it.
    pub path: &'static str,
    /// Its text.
    pub text: &'static str,
    /// The design it runs under.
    pub design: Design,
}

/// The shipped default statements, as a SQL variant's file.
const DEFAULT_SQL: SqlFile = SqlFile { path: "sql/statements.sql", text: sutra_sql::DEFAULT_FILE, design: SPEC };

/// A statements file of `sql/variants/` (an override file, layered over the default when a
/// scenario takes it), run under the spec's design.
macro_rules! sql_variant_file {
    ($name:literal) => {
        SqlFile {
            path: concat!("sql/variants/", $name, ".sql"),
            text: include_str!(concat!("../../sql/variants/", $name, ".sql")),
            design: SPEC,
        }
    };
}

/// The verdict spec 000 predicts for a variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expected {
    /// Clean over every scenario.
    Safe,
    /// Caught — by one of these checkers (alternatives joined by " or "); another checker,
    /// a crash or a budget overrun does not count.
    Unsafe(&'static str),
}

impl Expected {
    /// `safe` or `unsafe`.
    pub fn as_str(self) -> &'static str {
        match self {
            Expected::Safe => "safe",
            Expected::Unsafe(_) => "unsafe",
        }
    }

    /// The checkers expected to catch an unsafe variant, one by one (none for a safe one).
    pub fn checkers(self) -> impl Iterator<Item = &'static str> {
        let caught_by = match self {
            Expected::Safe => None,
            Expected::Unsafe(c) => Some(c),
        };
        caught_by.into_iter().flat_map(|c| c.split(" or "))
    }
}

/// One side of one design decision.
#[derive(Clone, Copy, Debug)]
pub struct VariantInfo {
    /// Its name on the command line.
    pub name: &'static str,
    /// The section of spec 000 that decides it.
    pub spec: &'static str,
    /// The question it answers, in one line.
    pub description: &'static str,
    /// What the spec predicts.
    pub expected: Expected,
    /// What it switches on.
    pub setting: Setting,
}

impl VariantInfo {
    /// `scenario` as this variant runs it, and the mutant to switch on: the variant's
    /// design replaces the scenario's (a mutant variant runs the spec's design).
    pub fn apply(&self, scenario: &Scenario) -> (Scenario, Option<Mutant>) {
        let mut s = scenario.clone();
        match self.setting {
            Setting::Design(design) => {
                s.design = design;
                (s, None)
            }
            Setting::Mutant(mutant) => {
                s.design = SPEC;
                (s, Some(mutant))
            }
            Setting::Sql(file) => {
                s.design = file.design;
                s.store.engine = crate::sql_store::StoreEngine::Sqlite;
                s.store.sql = Some(file.path.to_string());
                s.store.sql_text = Some(file.text.to_string());
                s.store.layer().expect("a shipped variant's statements layer over the default");
                (s, None)
            }
        }
    }

    /// The fault the spec's argument against this variant turns on, if it turns on one: a
    /// scenario that does not configure it runs no situation that tells the variant from
    /// the spec's design, so the matrix reports the variant there as not exercised rather
    /// than safe. The mid-step heartbeat differs only for a step that never ends: spec 000,
    /// "the condition that would change the answer is a genuinely long-running step".
    pub fn exercised_only_by(&self) -> Option<FaultKind> {
        match self.setting {
            Setting::Design(d) if d.claim_span == ClaimSpan::HeartbeatMidStep => Some(FaultKind::HungStep),
            _ => None,
        }
    }

    /// True if `checker` is one the variant is expected to be caught by.
    pub fn expects(&self, checker: &str) -> bool {
        self.expected.checkers().any(|c| c == checker)
    }
}

/// Every variant, the spec's side of each decision first.
pub const VARIANTS: &[VariantInfo] = &[
    VariantInfo {
        name: "owner-id-per-incarnation",
        spec: "Re-entrancy, and the invariant that makes it safe",
        description: "owner ids name one process incarnation and one lane",
        expected: Expected::Safe,
        setting: Setting::Design(SPEC),
    },
    VariantInfo {
        name: "owner-id-stable-name",
        spec: "Re-entrancy, and the invariant that makes it safe",
        description: "owner ids are a stable replica name plus the lane (a StatefulSet pod name)",
        expected: Expected::Unsafe("owner-scope or no-double-resume"),
        setting: Setting::Design(Design { owner_ids: OwnerIds::StableName, ..SPEC }),
    },
    VariantInfo {
        name: "claim-age-by-store-clock",
        spec: "The claim is a compare-and-set, and a failure is a refusal",
        description: "a held claim's staleness is judged by the store's clock",
        expected: Expected::Safe,
        setting: Setting::Design(SPEC),
    },
    VariantInfo {
        name: "claim-age-by-client-timestamp",
        spec: "The claim is a compare-and-set, and a failure is a refusal",
        description: "the claimant sends its own clock's time and the store judges staleness by it",
        expected: Expected::Unsafe("stale-steal"),
        setting: Setting::Mutant(Mutant::ClientClockStaleness),
    },
    VariantInfo {
        name: "sweep-one-conditional-update",
        spec: "The sweep is the only backstop that can exist",
        description: "the sweep selects and clears stale claims in one conditional statement",
        expected: Expected::Safe,
        setting: Setting::Design(Design { sweep: SweepShape::OneUpdate, ..SPEC }),
    },
    VariantInfo {
        name: "sweep-select-then-clear-rechecked",
        spec: "The sweep is the only backstop that can exist",
        description: "select stale ids, then clear each conditionally, re-checking epoch, age and lease",
        expected: Expected::Safe,
        setting: Setting::Design(SPEC),
    },
    VariantInfo {
        name: "sweep-select-then-clear-unchecked",
        spec: "The sweep is the only backstop that can exist",
        description: "select stale ids, then clear them without re-checking what was selected",
        expected: Expected::Unsafe("sweep-by-age"),
        setting: Setting::Design(Design { sweep: SweepShape::SelectThenClearUnchecked, ..SPEC }),
    },
    VariantInfo {
        name: "release-inside-commit",
        spec: "Release is part of the commit, and part of every other exit",
        description: "the commit releases the claim in the same transaction",
        expected: Expected::Safe,
        setting: Setting::Design(SPEC),
    },
    VariantInfo {
        name: "release-in-own-transaction",
        spec: "Release is part of the commit, and part of every other exit",
        description: "commit, then release in a transaction of its own",
        expected: Expected::Unsafe("release-with-commit"),
        setting: Setting::Mutant(Mutant::ReleaseAfterCommit),
    },
    VariantInfo {
        name: "routing-as-affinity",
        spec: "Routing is affinity; claims are correctness",
        description: "work routed to its home lane still takes the claim",
        expected: Expected::Safe,
        setting: Setting::Design(SPEC),
    },
    VariantInfo {
        name: "routing-as-mutex",
        spec: "Routing is affinity; claims are correctness",
        description: "work routed to its home lane skips the claim: routing is the mutual exclusion",
        expected: Expected::Unsafe("no-double-resume"),
        setting: Setting::Mutant(Mutant::RoutingAsMutex),
    },
    VariantInfo {
        name: "refuse-on-held-claim",
        spec: "The claim is a compare-and-set, and a failure is a refusal",
        description: "a claim that matches nothing is a refusal: requeue, defer or 409",
        expected: Expected::Safe,
        setting: Setting::Design(SPEC),
    },
    VariantInfo {
        name: "wait-on-held-claim",
        spec: "The claim is a compare-and-set, and a failure is a refusal",
        description: "a refused claim is retried in place until the holder lets go",
        expected: Expected::Unsafe("refusal-contract"),
        setting: Setting::Mutant(Mutant::WaitOnHeldClaim),
    },
    VariantInfo {
        name: "claim-per-step",
        spec: "Heartbeats: deliberately not wired",
        description: "a claim spans one step; a task parked for a pull worker releases with the commit",
        expected: Expected::Safe,
        setting: Setting::Design(SPEC),
    },
    VariantInfo {
        name: "heartbeat-across-parked-pull-task",
        spec: "Heartbeats: deliberately not wired",
        description: "the claim is held across a parked pull task and renewed by a heartbeat",
        // Where the parked claim is kept alive past any step (steps that hang, tasks that
        // wait long for their worker) claim-tenure sees it too (R24).
        expected: Expected::Unsafe("parked-holds-no-claim or claim-tenure"),
        setting: Setting::Design(Design { claim_span: ClaimSpan::HeartbeatAcrossPark, ..SPEC }),
    },
    VariantInfo {
        name: "mid-step-heartbeat",
        spec: "Heartbeats: deliberately not wired",
        description: "the execution renews its claim while its step runs, so a hung step keeps the instance",
        expected: Expected::Unsafe("claim-tenure"),
        setting: Setting::Design(Design { claim_span: ClaimSpan::HeartbeatMidStep, ..SPEC }),
    },
];

/// The SQL choices (issue 25): the same decisions taken in the statements a team ships,
/// each a statements file run by the SQL store engine. `sutra-sim variants --store sqlite`
/// runs them after [`VARIANTS`] (which then run on the SQL engine too).
pub const SQL_VARIANTS: &[VariantInfo] = &[
    VariantInfo {
        name: "sql-sweep-one-statement",
        spec: "The sweep is the only backstop that can exist",
        description: "SQL: the sweep is one UPDATE ... WHERE age > timeout AND the lease is held",
        expected: Expected::Safe,
        setting: Setting::Sql(SqlFile { design: Design { sweep: SweepShape::OneUpdate, ..SPEC }, ..DEFAULT_SQL }),
    },
    VariantInfo {
        name: "sql-sweep-select-then-clear-rechecked",
        spec: "The sweep is the only backstop that can exist",
        description: "SQL: SELECT the stale ids, then an UPDATE per id re-checking epoch, age and lease",
        expected: Expected::Safe,
        setting: Setting::Sql(DEFAULT_SQL),
    },
    VariantInfo {
        name: "sql-sweep-select-then-clear-unchecked",
        spec: "The sweep is the only backstop that can exist",
        description: "SQL: SELECT the stale ids, then UPDATE ... WHERE id = $1 (River #1302)",
        expected: Expected::Unsafe("sweep-by-age"),
        setting: Setting::Sql(sql_variant_file!("sweep-clear-unchecked")),
    },
    VariantInfo {
        name: "sql-commit-without-owner",
        spec: "The sweep is the only backstop that can exist",
        description: "SQL: the commit's WHERE forgets the owner, so a stolen claim's commit still matches",
        expected: Expected::Unsafe("commit-by-owner or no-double-resume"),
        setting: Setting::Sql(sql_variant_file!("commit-without-owner")),
    },
    VariantInfo {
        name: "sql-claim-age-by-store-time",
        spec: "The claim is a compare-and-set, and a failure is a refusal",
        description: "SQL: the claim judges staleness by the store's time, bound as a parameter",
        expected: Expected::Safe,
        setting: Setting::Sql(DEFAULT_SQL),
    },
    VariantInfo {
        name: "sql-claim-by-client-timestamp",
        spec: "The claim is a compare-and-set, and a failure is a refusal",
        description: "SQL: the claim judges staleness by a timestamp the claimant sends (fabric8 #7258)",
        expected: Expected::Unsafe("stale-steal"),
        setting: Setting::Sql(sql_variant_file!("claim-by-client-timestamp")),
    },
    VariantInfo {
        name: "sql-release-by-owner",
        spec: "Release is part of the commit, and part of every other exit",
        description: "SQL: a release matches only while the row shows the releaser's owner id",
        expected: Expected::Safe,
        setting: Setting::Sql(DEFAULT_SQL),
    },
    VariantInfo {
        name: "sql-release-by-id-only",
        spec: "Release is part of the commit, and part of every other exit",
        description: "SQL: a release is UPDATE ... SET owner = NULL WHERE id = $1, whoever holds it",
        expected: Expected::Unsafe("no-double-resume"),
        setting: Setting::Sql(sql_variant_file!("release-by-id-only")),
    },
    VariantInfo {
        name: "sql-claim-grants-same-owner",
        spec: "Re-entrancy, and the invariant that makes it safe",
        description: "SQL: the claim's WHERE takes a free, stale or same-owner row (R10)",
        expected: Expected::Safe,
        setting: Setting::Sql(DEFAULT_SQL),
    },
    VariantInfo {
        name: "sql-claim-refuses-same-owner",
        spec: "Re-entrancy, and the invariant that makes it safe",
        description: "SQL: the claim takes only a free or stale row, refusing its own owner (R10, R21)",
        expected: Expected::Unsafe("exits-release or live-leak"),
        setting: Setting::Sql(sql_variant_file!("claim-refuses-same-owner")),
    },
];

/// The variants `sutra-sim variants` runs: [`VARIANTS`], and with the SQL store engine
/// ([`SQL_VARIANTS`]) the SQL choices after them.
pub fn all(sql: bool) -> impl Iterator<Item = &'static VariantInfo> {
    VARIANTS.iter().chain(SQL_VARIANTS.iter().filter(move |_| sql))
}

/// Looks a variant up by its name.
pub fn parse(name: &str) -> Result<&'static VariantInfo, String> {
    all(true).find(|v| v.name == name).ok_or_else(|| {
        let known: Vec<&str> = all(true).map(|v| v.name).collect();
        format!("unknown variant {name:?}; known variants: {}", known.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers;

    #[test]
    fn the_spec_design_is_the_default_design() {
        assert_eq!(SPEC, Design::default());
    }

    #[test]
    fn there_are_at_least_eight_variants_with_distinct_names_and_both_sides_of_each_decision() {
        assert!(VARIANTS.len() >= 8);
        let names: std::collections::BTreeSet<&str> = all(true).map(|v| v.name).collect();
        assert_eq!(names.len(), all(true).count());
        let sections: std::collections::BTreeSet<&str> = all(true).map(|v| v.spec).collect();
        for section in sections {
            let sides: Vec<Expected> = all(true).filter(|v| v.spec == section).map(|v| v.expected).collect();
            assert!(sides.contains(&Expected::Safe), "{section}: no safe side");
            assert!(sides.iter().any(|e| *e != Expected::Safe), "{section}: no unsafe side");
        }
    }

    #[test]
    fn every_expected_checker_is_registered_and_a_mutant_variant_expects_what_its_mutant_does() {
        let registry = checkers::registry();
        for v in all(true) {
            for c in v.expected.checkers() {
                assert!(registry.get(c).is_ok(), "variant {}: checker {c} is not registered", v.name);
            }
            if let (Setting::Mutant(m), Expected::Unsafe(caught_by)) = (v.setting, v.expected) {
                assert_eq!(caught_by, m.info().caught_by, "variant {} and mutant {}", v.name, m.name());
            }
            if v.expected == Expected::Safe {
                let runs_a_design = matches!(v.setting, Setting::Design(_) | Setting::Sql(_));
                assert!(runs_a_design, "a safe variant runs a design, not a mutant");
            }
        }
    }

    #[test]
    fn a_variant_design_replaces_the_scenario_design_and_a_mutant_variant_runs_the_spec_design() {
        let mut smoke = Scenario::built_in("smoke").unwrap();
        smoke.design.sweep = SweepShape::OneUpdate;
        let stable = parse("owner-id-stable-name").unwrap();
        let (s, m) = stable.apply(&smoke);
        assert_eq!((s.design.owner_ids, s.design.sweep, m), (OwnerIds::StableName, SweepShape::SelectThenClear, None));
        let (s, m) = parse("routing-as-mutex").unwrap().apply(&smoke);
        assert_eq!((s.design, m), (Design::default(), Some(Mutant::RoutingAsMutex)));
        assert!(parse("no-such-variant").unwrap_err().contains("known variants"));
    }
}

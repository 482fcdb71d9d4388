//! The invariant of the README's walk-through, "Write your own invariant" — rule R15, a
//! migration claims under an owner id that no execution lane ever uses — as one file:
//! the checker, its registration, its tests, and a sweep with it. The README shows this
//! file in three pieces; `tests/readme.rs` checks that they are this file and that the
//! outputs the README shows are what it prints.
//!
//! ```sh
//! cargo test --example migration_owner
//! cargo run --release --example migration_owner                            # a sweep
//! cargo run --release --example migration_owner -- migrate-with-lane-owner # the mutant
//! ```

use std::collections::BTreeSet;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use sutra_sim::plugin::*;
use sutra_sim::sweep::{self, SweepPlan};

/// R15: owner ids seen on lanes and on migrations; one id on both sides breaks it.
#[derive(Default)]
struct MigrationOwnerIsDistinct {
    lane_owners: BTreeSet<OwnerId>,
    migration_owners: BTreeSet<OwnerId>,
}

impl Checker<ModelEvent, ModelView> for MigrationOwnerIsDistinct {
    fn name(&self) -> &str {
        "migration-owner-is-distinct"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, _view: &ModelView) -> Check {
        if let ModelEvent::ClaimGranted { instance, owner, path, .. } = &event.kind {
            let (mine, theirs) = if *path == ResumePath::Migration {
                (&mut self.migration_owners, &self.lane_owners)
            } else {
                (&mut self.lane_owners, &self.migration_owners)
            };
            if theirs.contains(owner) {
                return Check::Fail(format!(
                    "instance {} claimed by {owner} on both a lane and a migration",
                    instance.0
                ));
            }
            mine.insert(*owner);
        }
        Check::Ok
    }
}

/// The registration: the name must match `Checker::name`, the kind `Checker::kind`.
pub fn migration_owner_is_distinct() -> ModelCheckerSpec {
    ModelCheckerSpec {
        name: "migration-owner-is-distinct",
        kind: CheckerKind::Always,
        description: "a migration claims under an owner id that no lane uses",
        rules: &["R15"],
        factory: Arc::new(|| Box::new(MigrationOwnerIsDistinct::default())),
    }
}

fn main() -> ExitCode {
    // Only yours: the built-in owner-scope judges R15 too, and would report first.
    let checkers =
        CheckerSet::built_in().with(migration_owner_is_distinct()).only(["migration-owner-is-distinct"]).unwrap();
    // Unknown checker names in scenario files are refused here, listing the known ones.
    let scenarios = sutra_sim::scenario_arg::resolve_with("all", &checkers).unwrap();
    let mutant = std::env::args().nth(1).map(|name| Mutant::parse(&name).unwrap());
    let plan = SweepPlan {
        scenarios,
        start: 0,
        count: 200,
        shard: None,
        mutant,
        strategy: None,
        jobs: 4,
        time_budget: None,
        checkers,
    };
    let started = Instant::now();
    let (results, stopped_early) = sweep::run(&plan, &AtomicBool::new(false), &|_, _| {});
    let report = sweep::report(&plan, &results, started.elapsed(), stopped_early);
    print!("{}", report.summary());
    // Like `sutra-sim sweep`: 0 for GREEN, 1 for RED, so CI notices.
    report.exit_code()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sutra_sim::testing::SimTest;

    #[test]
    fn holds_on_the_correct_model() {
        SimTest::scenario("migration").seeds(0..200).checker(migration_owner_is_distinct()).run();
    }

    #[test]
    fn catches_a_migration_under_a_lane_owner() {
        let failure = SimTest::scenario("migration")
            .seeds(0..20)
            .checker(migration_owner_is_distinct())
            // Only yours: the built-in owner-scope judges R15 too, and would report first.
            .only_checkers(["migration-owner-is-distinct"])
            .mutant(Mutant::MigrateWithLaneOwner)
            .try_run()
            .unwrap_err();
        assert!(failure.to_string().contains("migration-owner-is-distinct"), "{failure}");
    }
}

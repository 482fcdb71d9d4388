//! The admin surface's callers act on structured codes (R7, issue #23), shown from the
//! admin server's witnesses alone: a migration answered 409 `SUTRA.ADMIN.MIGRATE.CLAIM_HELD`
//! is sent again and can then succeed; one answered 422 `SUTRA.ADMIN.MIGRATE.VALIDATION` is
//! never sent again. The careless clients do the opposite, and `codes-acted-on` says so.

use std::collections::{BTreeMap, BTreeSet};

use sutra_sim_core::{Check, Checker, CheckerKind, Event};
use sutra_sim_model::event::AdminStatus;
use sutra_sim_model::ids::{Code, ProcessId};
use sutra_sim_model::{run_with, ModelEvent, ModelView, Mutant, RunOptions, Scenario};

/// Seeds of the `migration` scenario each test looks at.
const SEEDS: u64 = 40;

/// What the admin server witnessed over one run, per (client, request id).
#[derive(Default)]
struct AdminBooks {
    handling: BTreeMap<(ProcessId, u64), (u32, u32)>,
    /// Each request's answers' codes, in order (`None`: a 200 or a hang-up).
    answers: BTreeMap<(u32, u32), Vec<(AdminStatus, Option<Code>)>>,
    /// Requests received again after a permanent answer.
    resent_after_permanent: BTreeSet<(u32, u32)>,
}

/// A user checker that only keeps the books and reports them through its failure
/// message at the end (the one way out of a run for a user checker's state).
struct Witnessed(AdminBooks);

impl Checker<ModelEvent, ModelView> for Witnessed {
    fn name(&self) -> &str {
        "admin-books"
    }

    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }

    fn on_event(&mut self, event: &Event<ModelEvent>, _: &ModelView) -> Check {
        let books = &mut self.0;
        match &event.kind {
            ModelEvent::AdminRequestReceived { process, task, client, request, .. } => {
                let key = (*client, *request);
                let permanent =
                    books.answers.get(&key).is_some_and(|a| a.iter().any(|(_, c)| c.is_some_and(Code::is_permanent)));
                if permanent {
                    books.resent_after_permanent.insert(key);
                }
                books.handling.insert((*process, *task), key);
            }
            ModelEvent::AdminRequestEnded { process, task, status, code, .. } => {
                if let Some(key) = books.handling.remove(&(*process, *task)) {
                    books.answers.entry(key).or_default().push((*status, *code));
                }
            }
            _ => {}
        }
        Check::Ok
    }

    fn at_end(&mut self, _: &ModelView) -> Check {
        let books = &self.0;
        let retried_to_success = books
            .answers
            .values()
            .filter(|a| a.first().is_some_and(|(_, c)| *c == Some(Code::MigrateClaimHeld)))
            .filter(|a| a.iter().any(|(s, _)| *s == AdminStatus::Migrated))
            .count();
        let validation_errors =
            books.answers.values().filter(|a| a.iter().any(|(_, c)| *c == Some(Code::MigrateValidation))).count();
        Check::Fail(format!(
            "retried-to-success={retried_to_success} validation-errors={validation_errors} resent-after-permanent={}",
            books.resent_after_permanent.len()
        ))
    }
}

/// Sums of (retried to success, validation errors, resent after a permanent answer) over
/// the seeds, with `mutant` on.
fn tally(mutant: Option<Mutant>) -> (u64, u64, u64) {
    let scenario = Scenario::built_in("migration").unwrap();
    let mut sums = (0, 0, 0);
    for seed in 0..SEEDS {
        let mut options = RunOptions::seeded(seed);
        options.mutant = mutant;
        let books: Box<dyn Checker<ModelEvent, ModelView>> = Box::new(Witnessed(AdminBooks::default()));
        let message = run_with(&scenario, &options, vec![books]).verdict.message();
        let field = |name: &str| -> u64 {
            let start = message.find(&format!("{name}=")).unwrap_or_else(|| panic!("seed {seed}: {message}"));
            let rest = &message[start + name.len() + 1..];
            rest.split(' ').next().unwrap().parse().unwrap()
        };
        sums.0 += field("retried-to-success");
        sums.1 += field("validation-errors");
        sums.2 += field("resent-after-permanent");
    }
    sums
}

#[test]
fn a_migration_that_lost_a_race_is_sent_again_and_succeeds_and_a_validation_error_never_is() {
    let (retried, validation, resent) = tally(None);
    assert!(retried > 0, "no migration answered CLAIM_HELD was retried to success in {SEEDS} seeds");
    assert!(validation > 0, "no validation error in {SEEDS} seeds: the other half went untested");
    assert_eq!(resent, 0, "the correct client sent a request again after a permanent answer");
}

#[test]
fn the_careless_clients_do_the_opposite_and_codes_acted_on_catches_them() {
    let (retried, ..) = tally(Some(Mutant::AdminGivesUpOnClaimHeld));
    assert_eq!(retried, 0, "a client that takes a 409 as final never retries one to success");
    let (.., resent) = tally(Some(Mutant::AdminRetriesValidation));
    assert!(resent > 0, "a client that retries every failure sends a 422'd request again");
    let scenario = Scenario::built_in("migration").unwrap();
    for mutant in [Mutant::AdminGivesUpOnClaimHeld, Mutant::AdminRetriesValidation] {
        let caught = (0..SEEDS).any(|seed| {
            let mut options = RunOptions::seeded(seed);
            options.mutant = Some(mutant);
            let registry = sutra_sim_model::checkers::registry();
            let checker = registry.build(&["codes-acted-on".to_string()]).unwrap();
            run_with(&scenario, &options, checker).verdict.checker() == Some("codes-acted-on")
        });
        assert!(caught, "codes-acted-on never caught {} in {SEEDS} seeds", mutant.name());
    }
}

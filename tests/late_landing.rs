//! A request the client gave up on may land at the store later (issue #23, "the store
//! boundary is still kind"): `real-world` and `swarm` delay half of their lost requests
//! past the client's timeout. The correct model stays clean under it — one logical request
//! is applied once, and an aborted execution's exit path sends its unanswered commit again
//! as the same request instead of reading the step history — and the client that keys each
//! resend anew (`release-resent-as-new-request`) is caught by behaviour.

use sutra_sim::plugin::CheckerSet;
use sutra_sim_core::Verdict;
use sutra_sim_model::mutant::Mutant;
use sutra_sim_model::{RunOptions, Scenario};

fn verdict(scenario: &Scenario, seed: u64, mutant: Option<Mutant>) -> Verdict {
    CheckerSet::built_in().run(scenario, &RunOptions::for_seed(seed, None, mutant)).unwrap().verdict
}

/// Seeds of `real-world` on which the correct model failed before an aborted execution's
/// exit path sent its unanswered commit again: it read the step history, found nothing,
/// released and handed its trigger back — and the delayed commit landed after the read
/// (`commit-once`: released after its commit was accepted) or after the same lane had
/// claimed the instance again (`no-double-resume`).
const COMMIT_LANDED_AFTER_THE_EXIT_PATH: [u64; 5] = [193, 247, 303, 568, 572];

#[test]
fn an_aborted_executions_commit_landing_late_is_resolved_by_sending_it_again() {
    let scenario = Scenario::built_in("real-world").unwrap();
    for seed in COMMIT_LANDED_AFTER_THE_EXIT_PATH {
        let v = verdict(&scenario, seed, None);
        assert!(matches!(v, Verdict::Pass), "real-world seed {seed}: {v:?}");
    }
}

/// Seeds on which the correct model failed (`no-double-resume`, 11 of 240,000 seeds of
/// `sweep --scenario all --count 20000`) before an exit path recorded the claim it took
/// again under an execution of its own: aborted in turn with that claim's release
/// unanswered, the next exit path claimed once more under yet another execution and
/// released that, and the first release's delayed copy — a request of its own — landed
/// after the second grant and cleared it.
const RELEASE_OF_AN_ABORTED_EXIT_PATH: [(&str, u64); 11] = [
    ("real-world", 6217),
    ("real-world", 9429),
    ("real-world", 10952),
    ("swarm", 3100),
    ("swarm", 3662),
    ("swarm", 5235),
    ("swarm", 8328),
    ("swarm", 11585),
    ("swarm", 14181),
    ("swarm", 18748),
    ("swarm", 19043),
];

#[test]
fn an_exit_path_aborted_in_turn_releases_its_claim_as_the_same_request() {
    for (name, seed) in RELEASE_OF_AN_ABORTED_EXIT_PATH {
        let v = verdict(&Scenario::built_in(name).unwrap(), seed, None);
        assert!(matches!(v, Verdict::Pass), "{name} seed {seed}: {v:?}");
    }
}

#[test]
fn a_release_resent_as_a_new_request_is_caught_where_the_correct_client_is_clean() {
    let scenario = Scenario::built_in("real-world").unwrap();
    let mutant = Mutant::ReleaseResentAsNewRequest;
    let kills: Vec<u64> =
        (0..2_000).filter(|&seed| mutant.info().killed_by(&verdict(&scenario, seed, Some(mutant)))).take(3).collect();
    assert!(!kills.is_empty(), "no real-world seed in 2000 catches {}", mutant.name());
    for seed in kills {
        let v = verdict(&scenario, seed, None);
        assert!(matches!(v, Verdict::Pass), "the correct model on the kill seed {seed}: {v:?}");
    }
}

//! The example invariant of `examples/custom_checker.rs` under `cargo test`, exactly as a
//! user runs their own: registered with `SimTest::checker`, it holds on the correct model,
//! it catches the mutant that livelocks a relay, and the replay command a failure prints
//! replays that failure — same checker, same seed, same fingerprint, that seed alone.

#[path = "../examples/custom_checker.rs"]
#[allow(dead_code)] // the example's `main` and its sweep sizes are not used here
mod example;

use std::process::Command;

use example::{
    bounded_redelivery, relay_outlasted_contention, BOUNDED_REDELIVERY, MUTANT_CAUGHT, RELAY_OUTLASTED_CONTENTION,
};
use sutra_sim::testing::{SimTest, SimTestError, SimTestFailure, SEED_VARIABLE};

/// Correct-model seeds run here; the example's own sweep runs thousands in release.
const CORRECT_SEEDS: u64 = 120;

fn with_our_checkers(test: SimTest) -> SimTest {
    test.checker(bounded_redelivery()).checker(relay_outlasted_contention())
}

/// Every checker but the built-in `refusal-contract`, which judges each refused copy's
/// requeue from the broker's witnesses and so fails this mutant (which acks the refused
/// copy and publishes a new one) at its first refusal, before any relay can go round: the
/// mutant then shows what ours adds over the checkers left, eventual-completion included.
fn with_our_checkers_for_the_mutant(test: SimTest) -> SimTest {
    with_our_checkers(test).skip_checker("refusal-contract")
}

fn failure_of(test: SimTest) -> Box<SimTestFailure> {
    match test.try_run() {
        Err(SimTestError::Failed(failure)) => failure,
        other => panic!("expected a failing seed, got {other:?}"),
    }
}

#[test]
fn bounded_redelivery_holds_on_the_correct_model_and_is_not_vacuous() {
    let summary = with_our_checkers(SimTest::scenario("smoke").seeds(0..CORRECT_SEEDS)).run();
    assert_eq!(summary.seeds_run, CORRECT_SEEDS);
    // `run` already refuses a registered sometimes-property that no seed reached; this
    // says how often relays went round under contention and still got through.
    assert!(summary.coverage[RELAY_OUTLASTED_CONTENTION] > 0, "{summary:?}");
}

/// The first of smoke's seeds on which the mutant spins a refused relay long enough for our
/// checker to be the first to fail, with every checker on but `refusal-contract`. Searched rather than pinned, so
/// that a change of the model's timing does not break the test.
fn first_seed_our_checker_catches() -> u64 {
    (0..32)
        .find(|&seed| {
            let test = with_our_checkers_for_the_mutant(
                SimTest::scenario("smoke").seeds(seed..seed + 1).mutant(MUTANT_CAUGHT),
            );
            matches!(test.try_run(), Err(SimTestError::Failed(f)) if f.checker == BOUNDED_REDELIVERY)
        })
        .expect("one of smoke's first 32 seeds has a refused relay for the mutant to spin on")
}

#[test]
fn bounded_redelivery_catches_the_relay_livelock_before_the_end_of_the_run() {
    // Beside eventual-completion, which would only see the livelock at the end of the run,
    // ours reports it mid-run. (The built-in refusal-contract catches this mutant too,
    // from the broker's witnesses; it is left out to compare with the end-of-run check.)
    let failure =
        failure_of(with_our_checkers(SimTest::scenario("smoke").seeds(0..8).mutant(MUTANT_CAUGHT)).only_checkers([
            BOUNDED_REDELIVERY,
            RELAY_OUTLASTED_CONTENTION,
            "eventual-completion",
        ]));
    // Only seeds with a refused relay give the mutant something to spin on; the first of
    // them is reported, by our checker.
    assert_eq!(failure.checker.as_str(), BOUNDED_REDELIVERY, "{failure}");
    assert!(failure.message.contains("going round"), "{failure}");
    assert_eq!(failure.failing_seeds.first(), Some(&failure.seed), "{failure}");
}

#[test]
fn the_printed_replay_command_replays_the_failure() {
    // In the replay the parent starts, the variable names the seed (and would override
    // every seed range of a search).
    let seed = match std::env::var(SEED_VARIABLE) {
        Ok(text) => text.parse().expect("the replay's seed is a number"),
        Err(_) => first_seed_our_checker_catches(),
    };
    let failure = failure_of(with_our_checkers_for_the_mutant(
        SimTest::scenario("smoke").seeds(seed..seed + 1).mutant(MUTANT_CAUGHT),
    ));
    let printed = failure.to_string(); // exactly what `SimTest::run` panics with
    assert!(
        printed.contains(&format!("checker {BOUNDED_REDELIVERY} failed on scenario smoke, seed {seed}")),
        "{printed}"
    );
    if std::env::var_os(SEED_VARIABLE).is_some() {
        // This is the replay the parent below started: report what it saw.
        assert!(failure.replayed && failure.seeds_run == 1, "{printed}");
        println!("replayed: {} seed {} fingerprint {:016x}", failure.checker, failure.seed, failure.fingerprint);
        return;
    }
    let command = printed.lines().last().expect("the message ends with the command").trim();
    let (assignment, rest) = command.split_once(' ').expect("VARIABLE=SEED cargo test …");
    assert_eq!(assignment, format!("{SEED_VARIABLE}={seed}"), "{command}");
    let (cargo, test_arguments) = rest.split_once(" -- ").expect("cargo test … -- TEST --exact");
    assert_eq!(cargo, "cargo test -p sutra-sim --test custom_checker", "{command}");
    // `cargo test` builds this binary, then runs it with the arguments after `--`; it is
    // built already, so run it the same way.
    let replay = Command::new(std::env::current_exe().expect("the test binary"))
        .args(test_arguments.split_whitespace())
        .arg("--nocapture")
        .env(SEED_VARIABLE, seed.to_string())
        .output()
        .expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&replay.stdout);
    assert!(replay.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&replay.stderr));
    assert!(stdout.contains("running 1 test"), "{stdout}");
    let expected = format!("replayed: {BOUNDED_REDELIVERY} seed {seed} fingerprint {:016x}", failure.fingerprint);
    assert!(stdout.contains(&expected), "expected {expected:?} in\n{stdout}");
}

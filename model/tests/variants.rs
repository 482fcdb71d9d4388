//! Every unsafe variant of the design-decision matrix is caught by the checker spec 000's
//! argument predicts, on a known seed (found by `sutra-sim variants --scenario S`), judged
//! by that checker alone; and the designs the spec settles on pass the same seeds.

use sutra_sim_model::variant::{parse, Expected, VARIANTS};
use sutra_sim_model::{run_variant, Scenario};

/// A scenario and seed on which each unsafe variant is caught. The unchecked two-step sweep
/// needs a pause between its statements or a re-grant racing them: `real-world` pauses
/// sweepers mid-sweep. The mid-step heartbeat needs a hung step: `hung-steps` hangs them.
const KNOWN_SEEDS: &[(&str, &str, u64)] = &[
    ("owner-id-stable-name", "smoke", 1),
    ("claim-age-by-client-timestamp", "smoke", 7),
    ("sweep-select-then-clear-unchecked", "smoke", 60),
    ("release-in-own-transaction", "smoke", 0),
    ("routing-as-mutex", "smoke", 0),
    ("wait-on-held-claim", "smoke", 0),
    ("heartbeat-across-parked-pull-task", "smoke", 0),
    // Only a step that never ends tells the mid-step heartbeat from the spec's design.
    ("mid-step-heartbeat", "hung-steps", 4),
];

#[test]
fn every_unsafe_variant_has_a_known_seed() {
    for v in VARIANTS.iter().filter(|v| v.expected != Expected::Safe) {
        assert!(KNOWN_SEEDS.iter().any(|(n, ..)| *n == v.name), "{} has no known seed", v.name);
    }
}

#[test]
fn every_unsafe_variant_is_caught_by_its_expected_checker_on_its_known_seed() {
    for &(name, scenario, seed) in KNOWN_SEEDS {
        let info = parse(name).unwrap();
        let out = run_variant(&Scenario::built_in(scenario).unwrap(), seed, info);
        let checker = out.verdict.checker().unwrap_or("pass");
        assert!(
            info.expects(checker),
            "{name} on {scenario} seed {seed}: {} (expected {:?})",
            out.verdict,
            info.expected
        );
    }
}

#[test]
fn the_safe_variants_pass_the_known_seeds_of_the_unsafe_ones() {
    for info in VARIANTS.iter().filter(|v| v.expected == Expected::Safe) {
        for &(_, scenario, seed) in KNOWN_SEEDS {
            let out = run_variant(&Scenario::built_in(scenario).unwrap(), seed, info);
            assert!(out.verdict.is_pass(), "{} on {scenario} seed {seed}: {}", info.name, out.verdict);
        }
    }
}

#[test]
fn under_stable_names_a_replacement_started_during_a_pause_is_granted_the_frozen_process_claim() {
    // owner-scope sees the stable name's fault first (the replacement's first request under
    // the frozen process's owner id); the harm itself — a re-entrant grant to another
    // process while the frozen one still holds the claim — is no-double-resume's to see.
    // process-pause has pauses with replacements and no crashes.
    let pause = Scenario::built_in("process-pause").unwrap();
    let info = parse("owner-id-stable-name").unwrap();
    let (scenario, mutant) = info.apply(&pause);
    let checkers = sutra_sim_model::checkers::registry().build(&["no-double-resume".to_string()]).unwrap();
    let mut options = sutra_sim_model::RunOptions::seeded(21);
    options.mutant = mutant;
    let out = sutra_sim_model::run_with(&scenario, &options, checkers);
    assert_eq!(out.verdict.checker(), Some("no-double-resume"), "{}", out.verdict);
    assert!(out.verdict.message().contains("one owner id on two lanes"), "{}", out.verdict);
    // The spec's own design passes the same seed.
    let correct = sutra_sim_model::run(&pause, &sutra_sim_model::RunOptions::seeded(21));
    assert!(correct.verdict.is_pass(), "{}", correct.verdict);
}

#[test]
fn the_mid_step_heartbeat_keeps_a_hung_steps_instance_past_the_claim_tenure_bound_where_the_spec_design_lets_go() {
    let hung = Scenario::built_in("hung-steps").unwrap();
    let info = parse("mid-step-heartbeat").unwrap();
    let out = run_variant(&hung, 4, info);
    assert_eq!(out.verdict.checker(), Some("claim-tenure"), "{}", out.verdict);
    assert!(out.verdict.message().contains("longer than the claim-tenure bound 408000ms"), "{}", out.verdict);
    // The spec's design on the same seed: the hung step's claim goes stale and is let go.
    let correct = sutra_sim_model::run(&hung, &sutra_sim_model::RunOptions::seeded(4));
    assert!(correct.verdict.is_pass(), "{}", correct.verdict);
    // Without hung steps the heartbeat has nothing to keep alive past a step.
    assert_eq!(info.exercised_only_by(), Some(sutra_sim_model::faults::FaultKind::HungStep));
    let smoke = Scenario::built_in("smoke").unwrap();
    assert!(!smoke.faults.configured_on(sutra_sim_model::faults::FaultKind::HungStep));
    for seed in 0..20 {
        assert!(run_variant(&smoke, seed, info).verdict.is_pass(), "smoke seed {seed}");
    }
}

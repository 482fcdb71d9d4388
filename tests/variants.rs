//! `sutra-sim variants` and `list variants`: the design-decision matrix's JSON shape, its
//! reproducers, and its exit code (0 only if every observed verdict is the expected one).

mod common;

use common::{s, scratch, sutra_sim, sutra_sim_in};
use sutra_sim_model::variant::VARIANTS;

#[test]
fn variants_json_has_every_variant_with_the_documented_fields_and_exits_0_when_all_are_as_expected() {
    let dir = scratch("variants", "json");
    // Seed 203 of real-world (which pauses sweepers between their statements) is the first
    // to catch the unchecked two-step sweep.
    let (code, out, err) =
        sutra_sim_in(&dir, &["variants", "--scenario", "real-world", "--count", "204", "--no-shrink", "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = doc["variants"].as_array().unwrap();
    assert_eq!(rows.len(), VARIANTS.len());
    assert!(rows.len() >= 8);
    for row in rows {
        for key in ["name", "spec", "expected", "observed", "checker", "seeds_to_fail", "reproducer"] {
            assert!(row.get(key).is_some(), "{key} missing in {row}");
        }
        let expected = row["expected"].as_str().unwrap();
        assert!(["safe", "unsafe"].contains(&expected));
        assert_eq!(row["as_expected"], true, "{row}");
        if row["observed"] == "not exercised" {
            // real-world hangs no step: the mid-step heartbeat runs there as the spec's design.
            assert_eq!(row["needs"], "hung-step", "{row}");
            assert!(row["checker"].is_null() && row["reproducer"].is_null(), "{row}");
            continue;
        }
        assert_eq!(row["observed"], row["expected"], "{row}");
        if expected == "unsafe" {
            let checker = row["checker"].as_str().unwrap();
            let expected_checker = row["expected_checker"].as_str().unwrap();
            assert!(expected_checker.split(" or ").any(|c| c == checker), "{row}");
            assert!(row["seeds_to_fail"].as_u64().unwrap() >= 1);
            // The reproducer replays to the same checker.
            let path = dir.join(row["reproducer"].as_str().unwrap());
            let (replayed, replay_out, _) = sutra_sim(&["replay", s(&path), "--json"]);
            assert_eq!(replayed, 1, "{replay_out}");
            let replay: serde_json::Value = serde_json::from_str(&replay_out).unwrap();
            assert_eq!(replay["checker"].as_str(), Some(checker), "{replay_out}");
        } else {
            assert!(row["checker"].is_null() && row["reproducer"].is_null(), "{row}");
        }
    }
}

#[test]
fn variants_exits_1_when_an_unsafe_variant_is_not_caught() {
    let dir = scratch("variants", "uncaught");
    // Two seeds of the fault-free scenario cannot show a stable name's restart.
    let (code, out, _) = sutra_sim_in(&dir, &["variants", "--scenario", "quiet", "--count", "2", "--no-shrink"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("owner-id-stable-name") && out.contains("NOT AS EXPECTED"), "{out}");
}

#[test]
fn variants_refuses_a_zero_count_with_exit_2() {
    let (code, _, err) = sutra_sim(&["variants", "--count", "0"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn list_variants_names_every_variant_with_its_spec_section_and_verdict() {
    let (code, out, _) = sutra_sim(&["list", "variants", "--json"]);
    assert_eq!(code, 0);
    let rows: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    assert_eq!(rows.len(), VARIANTS.len());
    for (row, v) in rows.iter().zip(VARIANTS) {
        assert_eq!(row["name"], v.name);
        assert_eq!(row["spec"], v.spec);
        assert_eq!(row["expected"], v.expected.as_str());
    }
}

#[test]
fn a_variant_whose_fault_no_scenario_injects_is_not_exercised_and_one_that_does_is_caught() {
    let dir = scratch("variants", "exercised");
    // (Two seeds catch few variants: the exit code is not what this is about.)
    let (_, out, err) =
        sutra_sim_in(&dir, &["variants", "--scenario", "smoke", "--count", "2", "--no-shrink", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    let row = doc["variants"].as_array().unwrap().iter().find(|r| r["name"] == "mid-step-heartbeat").unwrap().clone();
    assert_eq!(row["observed"], "not exercised", "{row}");
    assert_eq!((row["needs"].as_str(), row["as_expected"].as_bool()), (Some("hung-step"), Some(true)), "{row}");
    // Where steps hang, it is caught by claim-tenure (hung-steps seed 4 is the first).
    let (_, out, err) =
        sutra_sim_in(&dir, &["variants", "--scenario", "hung-steps", "--count", "5", "--no-shrink", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    let row = doc["variants"].as_array().unwrap().iter().find(|r| r["name"] == "mid-step-heartbeat").unwrap().clone();
    assert_eq!((row["observed"].as_str(), row["checker"].as_str()), (Some("unsafe"), Some("claim-tenure")), "{row}");
    assert_eq!(row["seeds_to_fail"], 5, "{row}");
}

//! The SQL store engine end to end (issue 25): a bad statements file is refused before
//! anything runs, a team's own file named by a scenario travels inside its reproducers, and
//! `--store differential` turns a statement that disagrees with the model's store into a
//! `store-divergence` verdict. Bounded: a few seeds of smoke each.

mod common;

use common::{s, scratch, sutra_sim, sutra_sim_in};

const DEFAULT: &str = include_str!("../sql/statements.sql");
const COMMIT_WITHOUT_OWNER: &str = include_str!("../sql/variants/commit-without-owner.sql");

/// The default file with the SQL of statement `name` replaced by `text`.
fn with_statement(name: &str, text: &str) -> String {
    let start = DEFAULT.find(&format!("-- name: {name}\n")).unwrap();
    let end = DEFAULT[start + 1..].find("-- name: ").map_or(DEFAULT.len(), |e| start + 1 + e);
    format!("{}-- name: {name}\n{text}\n\n{}", &DEFAULT[..start], &DEFAULT[end..])
}

#[test]
fn a_bad_statements_file_exits_2_naming_the_statement_before_anything_runs() {
    let dir = scratch("sql_store", "bad_files");
    let cases = [
        (
            "syntax.sql",
            with_statement("commit", "UPDATE instance SET version = WHERE id = $1"),
            "commit",
            "syntax error",
        ),
        ("missing.sql", with_statement("release", ""), "release", "has no SQL"),
        (
            "params.sql",
            with_statement(
                "release",
                "UPDATE instance SET owner = NULL WHERE id = $1 AND owner = $3 RETURNING version, epoch, parked",
            ),
            "release",
            "takes 2 parameter",
        ),
        (
            "random.sql",
            with_statement(
                "read",
                "SELECT version, steps, owner, epoch, parked FROM instance WHERE id = $1 AND random() <> 0",
            ),
            "read",
            "random()",
        ),
    ];
    let no_release = {
        let start = DEFAULT.find("-- name: release\n").unwrap();
        let end = DEFAULT.find("-- name: migrate_commit\n").unwrap();
        format!("{}{}", &DEFAULT[..start], &DEFAULT[end..])
    };
    let bad_override =
        "-- base: default\n\n-- name: release\nUPDATE instance SET owner = WHERE id = $1 AND owner = $2\n";
    let unknown_override = "-- base: default\n-- name: schema_index\nCREATE INDEX by_owner ON instance (owner)\n";
    let cases = cases.into_iter().chain([
        ("absent.sql", no_release, "release", "missing"),
        ("override.sql", unknown_override.to_string(), "schema_index", "default does not have"),
        ("override-syntax.sql", bad_override.to_string(), "release", "override-syntax.sql:3: statement `release`"),
    ]);
    for (file, text, statement, why) in cases {
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        let report = dir.join(format!("{file}.report.json"));
        let (code, out, err) =
            sutra_sim(&["sweep", "--scenario", "smoke", "--count", "1", "--sql", s(&path), "--report", s(&report)]);
        assert_eq!(code, 2, "{file}: {out}{err}");
        assert!(err.contains(&format!("statement `{statement}`")) && err.contains(why), "{file}: {err}");
        assert!(out.is_empty(), "{file}: nothing runs: {out}");
        assert!(!report.exists(), "{file}: nothing is written");
    }
}

#[test]
fn the_sqlite_engine_runs_a_seed_as_the_model_store_does_and_twice_the_same() {
    let (code, model, _) = sutra_sim(&["run", "--scenario", "smoke", "--seed", "3", "--store", "model"]);
    assert_eq!(code, 0, "{model}");
    let (code, sqlite, err) =
        sutra_sim(&["run", "--scenario", "smoke", "--seed", "3", "--store", "sqlite", "--check-determinism"]);
    assert_eq!(code, 0, "{sqlite}{err}");
    let fingerprint =
        |out: &str| out.lines().find(|l| l.starts_with("fingerprint")).unwrap().split(',').next().unwrap().to_string();
    assert_eq!(fingerprint(&model), fingerprint(&sqlite), "the default statements decide as the model's store does");
}

#[test]
fn a_scenario_names_a_teams_own_file_and_its_reproducer_replays_without_it() {
    let dir = scratch("sql_store", "own_file");
    std::fs::write(dir.join("ours.sql"), COMMIT_WITHOUT_OWNER).unwrap();
    let scenario =
        format!("{}\n[store]\nengine = \"sqlite\"\nsql = \"ours.sql\"\n", include_str!("../scenarios/smoke.toml"));
    std::fs::write(dir.join("ours.toml"), scenario).unwrap();
    let (code, out, err) = sutra_sim_in(
        &dir,
        &["sweep", "--scenario", "ours.toml", "--count", "25", "--save-failures", "found", "--no-shrink"],
    );
    assert_eq!(code, 1, "the owner-blind commit is caught: {out}{err}");
    let saved: Vec<_> = std::fs::read_dir(dir.join("found")).unwrap().map(|e| e.unwrap().path()).collect();
    let reproducer = saved.iter().find(|p| p.extension().is_some_and(|e| e == "toml")).expect("a reproducer");
    let text = std::fs::read_to_string(reproducer).unwrap();
    assert!(text.contains("sql_text") && text.contains("AND $2 = $2"), "the reproducer carries the SQL it ran");
    assert!(
        text.contains("Layered statements:")
            && !text.contains("-- base: default")
            && text.contains("name: sweep_clear"),
        "an override file's reproducer carries the whole layered file, not the override: {text}"
    );
    std::fs::remove_file(dir.join("ours.sql")).unwrap();
    let (code, out, err) = sutra_sim_in(&dir, &["replay", s(reproducer)]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.starts_with("REPRODUCED"), "the reproducer replays without ours.sql: {out}");
}

#[test]
fn differential_mode_is_clean_on_the_default_statements_and_flags_a_statement_that_disagrees() {
    let (code, out, err) =
        sutra_sim(&["sweep", "--scenario", "smoke", "--count", "10", "--store", "differential", "--no-shrink"]);
    assert_eq!(code, 0, "{out}{err}");
    let dir = scratch("sql_store", "differential");
    let path = dir.join("owner-blind.sql");
    std::fs::write(&path, COMMIT_WITHOUT_OWNER).unwrap();
    let (code, out, err) = sutra_sim(&[
        "sweep",
        "--scenario",
        "smoke",
        "--count",
        "40",
        "--store",
        "differential",
        "--sql",
        s(&path),
        "--no-shrink",
        "--json",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let failures = doc["failures"].as_array().unwrap();
    assert!(
        failures.iter().all(|f| f["checker"] == "store-divergence"),
        "the model's store decides, so only the comparison fails: {failures:?}"
    );
    let message = failures[0]["message"].as_str().unwrap();
    assert!(
        message.contains("commit") && message.contains("SQLite gave") && message.contains("UPDATE instance"),
        "{message}"
    );
}

/// A team's file whose step plan is a TEMP table: SQLite lists it in
/// `sqlite_temp_schema`, not `sqlite_schema`, so nothing that empties the listed tables
/// of a kept connection reaches it (the next run's `plan_create` then meets the last
/// run's rows) — only a new connection per run starts it empty.
fn temp_plan_table() -> String {
    DEFAULT.replacen("CREATE TABLE plan (", "CREATE TEMP TABLE plan (", 1)
}

#[test]
fn a_seed_after_other_seeds_on_the_same_thread_runs_as_it_runs_alone() {
    use sutra_sim_model::sql_store::StoreEngine;
    use sutra_sim_model::{RunOptions, Scenario};
    let mut scenario = Scenario::built_in("smoke").unwrap();
    scenario.store.engine = StoreEngine::Sqlite;
    scenario.store.sql_text = Some(temp_plan_table());
    let fingerprint = |seed: u64| sutra_sim_model::run(&scenario, &RunOptions::seeded(seed)).fingerprint;
    // Each seed alone on a thread of its own: nothing ran on it before.
    let alone: Vec<u64> = (1..=12)
        .map(|seed| {
            let scenario = scenario.clone();
            std::thread::spawn(move || sutra_sim_model::run(&scenario, &RunOptions::seeded(seed)).fingerprint)
                .join()
                .unwrap()
        })
        .collect();
    // The same seeds one after the other on this thread, as a sweep's worker runs them.
    let in_a_row: Vec<u64> = (1..=12).map(fingerprint).collect();
    assert_eq!(in_a_row, alone, "a seed's run depends on the seeds run before it on the same thread");
}

/// A mutant that changes the claim's predicate acts on the SQL engine as a careless `claim`
/// statement, not in Rust beside it: `claim-refuses-own-owner` (its statement takes a free
/// or stale row only) is flagged by `refusal-grounds` at the seed and fingerprint where the
/// model's store is. It passed on the SQL engine before its careless statement existed.
#[test]
fn claim_refuses_own_owner_acts_on_the_sql_engine_as_a_careless_statement() {
    let verdict = |store: &str| {
        let (code, out, err) = sutra_sim(&[
            "run",
            "--scenario",
            "smoke",
            "--seed",
            "15",
            "--mutant",
            "claim-refuses-own-owner",
            "--store",
            store,
        ]);
        assert_eq!(code, 1, "{store}: {out}{err}");
        let line =
            |key: &str| out.lines().find(|l| l.starts_with(key)).unwrap_or_else(|| panic!("{key}?\n{out}")).to_string();
        (line("fingerprint"), out.contains("refusal-grounds"))
    };
    let model = verdict("model");
    assert!(model.1, "the model's store: refusal-grounds");
    assert_eq!(verdict("sqlite"), model, "the SQL engine flags it as the model's store does");
}

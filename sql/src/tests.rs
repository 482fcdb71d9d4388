//! The loader's promises, each on a file broken in one way, and the default statements'
//! behaviour on a real SQLite database.

use rusqlite::{params, Connection, OptionalExtension};

use super::*;

fn replaced(name: &str, text: &str) -> String {
    let s = Statements::default();
    let old = s.get(name).unwrap();
    // Swap the block's SQL for `text`, leaving the rest of the file as it is.
    let start = DEFAULT_FILE.find(&format!("-- name: {name}\n")).unwrap();
    let body = &DEFAULT_FILE[start..];
    let at = body.find(&old.text).unwrap();
    format!("{}{}{}", &DEFAULT_FILE[..start + at], text, &body[at + old.text.len()..])
}

fn refused(text: &str) -> SqlFileError {
    Statements::parse("ours.sql", text)
        .and_then(|s| s.check_on_sqlite().map(|_| s))
        .expect_err("the file should be refused")
}

#[test]
fn the_default_file_parses_and_every_statement_cites_its_rule() {
    let s = Statements::default();
    assert_eq!(s.statements.len(), CONTRACTS.len());
    for st in &s.statements {
        assert!(st.rule.starts_with('R'), "{} cites no rule", st.name);
    }
    s.check_on_sqlite().unwrap();
}

#[test]
fn a_missing_statement_is_named() {
    let start = DEFAULT_FILE.find("-- name: release\n").unwrap();
    let end = DEFAULT_FILE.find("-- name: migrate_commit\n").unwrap();
    let text = format!("{}{}", &DEFAULT_FILE[..start], &DEFAULT_FILE[end..]);
    let e = refused(&text);
    assert_eq!(e.statement.as_deref(), Some("release"), "{e}");
    assert!(e.message.contains("missing"), "{e}");
}

#[test]
fn a_syntax_error_is_named_with_sqlites_message() {
    let e = refused(&replaced("commit", "UPDATE instance SET version = WHERE id = $1"));
    assert_eq!(e.statement.as_deref(), Some("commit"), "{e}");
    assert!(e.message.contains("SQLite says") && e.message.contains("syntax error"), "{e}");
}

#[test]
fn an_unknown_column_is_found_by_sqlite() {
    let e = refused(&replaced("read", "SELECT versoin FROM instance WHERE id = $1"));
    assert_eq!(e.statement.as_deref(), Some("read"));
    assert!(e.message.contains("no such column"), "{e}");
}

#[test]
fn a_call_to_random_or_a_clock_is_refused() {
    let e = refused(&replaced("read", "SELECT version FROM instance WHERE id = $1 AND random() > 0"));
    assert_eq!(e.statement.as_deref(), Some("read"));
    assert!(e.message.contains("random()"), "{e}");
    let e =
        refused(&replaced("claim", "UPDATE instance SET owner = $2, claimed_at = now() WHERE id = $1 RETURNING owner"));
    assert!(e.message.contains("now()"), "{e}");
    let e =
        refused(&replaced("lease_held", "SELECT holder FROM lease WHERE holder = $1 AND expires > CURRENT_TIMESTAMP"));
    assert!(e.message.contains("current_timestamp"), "{e}");
}

#[test]
fn a_function_name_inside_a_string_is_not_a_call() {
    let text = replaced("read", "SELECT version, 'random()' FROM instance WHERE id = $1");
    Statements::parse("ours.sql", &text).unwrap().check_on_sqlite().unwrap();
}

#[test]
fn a_placeholder_past_the_contract_or_a_gap_is_refused() {
    let e = refused(&replaced("release", "UPDATE instance SET owner = NULL WHERE id = $1 AND owner = $3"));
    assert!(e.message.contains("takes 2 parameter"), "{e}");
    let e = refused(&replaced("claim", "UPDATE instance SET owner = $2 WHERE id = $1 AND $4 > 0 RETURNING owner"));
    assert!(e.message.contains("not $3"), "{e}");
}

#[test]
fn a_leading_run_of_parameters_is_enough() {
    let text = replaced("release", "UPDATE instance SET owner = NULL WHERE id = $1 RETURNING version, epoch, parked");
    let s = Statements::parse("ours.sql", &text).unwrap();
    s.check_on_sqlite().unwrap();
    assert_eq!(s.get("release").unwrap().param_count, 1);
}

#[test]
fn several_rows_without_order_by_are_refused() {
    let e = refused(&replaced("sweep_select", "SELECT id, epoch FROM instance WHERE owner IS NOT NULL"));
    assert!(e.message.contains("ORDER BY"), "{e}");
    let unordered_pick = "UPDATE task SET locked_by = $1 WHERE instance = (SELECT t.instance FROM task t LIMIT 1) RETURNING instance, expects";
    let e = refused(&replaced("task_lock", unordered_pick));
    assert!(e.message.contains("LIMIT"), "{e}");
}

#[test]
fn two_statements_in_one_block_an_unknown_name_or_a_name_twice_are_refused() {
    let e = refused(&replaced("read", "SELECT 1; SELECT 2"));
    assert!(e.message.contains("more than one statement"), "{e}");
    let e = refused(&format!("{DEFAULT_FILE}\n-- name: claim_fast\nSELECT 1\n"));
    assert_eq!(e.statement.as_deref(), Some("claim_fast"));
    let e = refused(&format!("{DEFAULT_FILE}\n-- name: read\nSELECT 1\n"));
    assert!(e.message.contains("named twice"), "{e}");
}

#[test]
fn an_oversized_file_is_refused_unparsed() {
    let e = Statements::parse("big.sql", &"-".repeat(FILE_BYTES_MAX + 1)).unwrap_err();
    assert!(e.message.contains("larger than"), "{e}");
}

#[test]
fn sqlite_rendering_numbers_placeholders_and_leaves_literals_alone() {
    let s = Statements::default();
    let claim = s.get("claim").unwrap();
    assert!(claim.sqlite().contains("owner = ?2") && !claim.sqlite().contains('$'));
    assert_eq!(claim.postgres(), claim.text);
    let put = s.get("task_complete").unwrap().sqlite();
    assert!(put.contains("'pull-completion'"), "{put}");
}

/// A fresh database with the default schema, one instance of two relay steps.
fn database() -> (Connection, Statements) {
    let s = Statements::default();
    let db = Connection::open_in_memory().unwrap();
    for st in s.schema() {
        db.execute(&st.sqlite(), []).unwrap();
    }
    db.execute(&s.get("lease_create").unwrap().sqlite(), []).unwrap();
    db.execute(&s.get("instance_create").unwrap().sqlite(), params![0, 2]).unwrap();
    for step in 0..2 {
        db.execute(&s.get("plan_create").unwrap().sqlite(), params![0, step, "relay"]).unwrap();
    }
    (db, s)
}

fn claim(db: &Connection, s: &Statements, owner: &str, now: i64) -> Option<(String, i64)> {
    let sql = s.get("claim").unwrap().sqlite();
    db.query_row(&sql, s.get("claim").unwrap().bound(params![0, owner, now, 30, now]), |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()
        .unwrap()
}

#[test]
fn the_claim_grants_a_free_row_refuses_a_fresh_holder_and_takes_a_stale_one() {
    let (db, s) = database();
    assert_eq!(claim(&db, &s, "a", 100), Some(("a".into(), 1)));
    assert_eq!(claim(&db, &s, "b", 130), None, "30ns old is not older than the 30ns timeout");
    assert_eq!(claim(&db, &s, "a", 130), Some(("a".into(), 2)), "the same owner is re-granted (R10)");
    assert_eq!(claim(&db, &s, "b", 161), Some(("b".into(), 3)), "31ns old is stale");
}

#[test]
fn the_commit_matches_only_its_owner_and_releases_in_the_same_statement() {
    let (db, s) = database();
    claim(&db, &s, "a", 100);
    let sql = s.get("commit").unwrap().sqlite();
    let by = |owner: &str| {
        db.query_row(&sql, params![0, owner, 0, 1], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, Option<String>>(2)?, r.get::<_, Option<String>>(7)?))
        })
        .optional()
        .unwrap()
    };
    assert_eq!(by("b"), None);
    assert_eq!(by("a"), Some((1, None, Some("relay".into()))));
    assert_eq!(by("a"), None, "released: the owner no longer matches");
}

#[test]
fn the_sweep_clears_only_stale_claims_and_only_under_the_lease() {
    let (db, s) = database();
    claim(&db, &s, "a", 100);
    let sweep = s.get("sweep").unwrap().sqlite();
    let swept = |now: i64| {
        db.prepare(&sweep)
            .unwrap()
            .query_map(s.get("sweep").unwrap().bound(params![7, now, 30, 0]), |r| r.get::<_, i64>(0))
            .unwrap()
            .count()
    };
    assert_eq!(swept(200), 0, "no lease");
    let lease = s.get("lease_acquire").unwrap().sqlite();
    let held: Option<i64> = db.query_row(&lease, params![7, 200, 300], |r| r.get(0)).optional().unwrap();
    assert_eq!(held, Some(7));
    assert_eq!(swept(120), 0, "not stale yet");
    assert_eq!(swept(200), 1);
    let other: Option<i64> = db.query_row(&lease, params![8, 250, 350], |r| r.get(0)).optional().unwrap();
    assert_eq!(other, None, "the lease is held until 300");
}

/// An override file (`-- base: default`) holding one statement.
fn override_file(name: &str, text: &str) -> String {
    format!("-- ours: one statement changed.\n-- base: default\n\n-- name: {name}\n-- rule: R9\n{text}\n")
}

#[test]
fn an_override_file_is_the_default_with_its_statements_in_place_and_its_text_the_whole_layered_file() {
    let release = "UPDATE instance SET prev_owner = owner, owner = NULL WHERE id = $1 AND $2 = $2\nRETURNING version, epoch, parked";
    let ours = Statements::parse("ours.sql", &override_file("release", release)).unwrap();
    ours.check_on_sqlite().unwrap();
    let default = Statements::default();
    assert_eq!(ours.statements.len(), default.statements.len());
    for (a, b) in ours.statements.iter().zip(&default.statements) {
        assert_eq!(a.name, b.name, "the default's order");
        assert_eq!(a.text == b.text, a.name != "release", "{}: only the override differs", a.name);
    }
    assert_eq!(ours.get("release").unwrap().text, release);
    assert_eq!(ours.get("release").unwrap().line, 4, "messages point into the override file");
    assert!(ours.source.starts_with(layer::LAYERED_MARK) && !ours.source.contains("-- base:"), "{}", ours.source);
    let replayed = Statements::parse("ours.sql", &ours.source).unwrap();
    let texts = |s: &Statements| s.statements.iter().map(|s| s.text.clone()).collect::<Vec<_>>();
    assert_eq!(texts(&replayed), texts(&ours), "the layered text alone runs the same statements");
}

#[test]
fn an_override_of_a_statement_the_default_lacks_is_refused_naming_it() {
    let e = Statements::parse("ours.sql", &override_file("schema_index", "CREATE INDEX i ON instance (owner)"))
        .expect_err("the default has no schema_index");
    assert_eq!((e.statement.as_deref(), e.line), (Some("schema_index"), Some(4)), "{e}");
    assert!(e.message.contains("default does not have"), "{e}");
    let e = Statements::parse("ours.sql", &override_file("relase", "SELECT 1")).unwrap_err();
    assert_eq!(e.statement.as_deref(), Some("relase"), "{e}");
}

#[test]
fn an_override_is_held_to_the_statement_checks_and_a_base_other_than_default_is_refused() {
    let random = "SELECT version, steps, owner, epoch, parked FROM instance WHERE id = $1 AND random() <> 0";
    let e = Statements::parse("ours.sql", &override_file("read", random)).unwrap_err();
    assert_eq!((e.statement.as_deref(), e.line), (Some("read"), Some(4)), "{e}");
    assert!(e.message.contains("random()"), "{e}");
    let syntax = Statements::parse("ours.sql", &override_file("read", "SELECT version FROM WHERE id = $1")).unwrap();
    let e = syntax.check_on_sqlite().unwrap_err();
    assert_eq!((e.statement.as_deref(), e.line), (Some("read"), Some(4)), "{e}");
    let e = Statements::parse("ours.sql", "-- base: yesterday\n-- name: read\nSELECT 1\n").unwrap_err();
    assert!(e.message.contains("the only base is `default`"), "{e}");
}

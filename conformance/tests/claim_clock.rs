//! A claim's witness is timed when the claim ran, not when it began waiting for its turn.
//! The fix of issue 24's third pass: a claim read the store's clock at the start of its
//! transaction and then waited on the audit counter's lock (PostgreSQL: behind a
//! concurrent witnessed transaction), so a claim that waited 530 ms was witnessed refused
//! 530 ms before it ran, and its lane's requeue looked that much late to
//! `refusal-contract`. Now the claim takes the audit lock first and reads the clock once it
//! holds it. Built deterministically: a second connection holds the counter's row lock
//! while the claim waits, and the claim's witness must not be older than that lock's end.
//! Needs PostgreSQL (SQLite's write lock is taken at the transaction's start, before any
//! clock read): the URL in `SUTRA_CONFORMANCE_POSTGRES`, else the one `.ci/postgres` sets
//! up; skipped, saying so, without a server — unless `CI=true`, where that fails.

use std::sync::Arc;
use std::time::Duration;

use sutra_conformance::clock::Clock;
use sutra_conformance::store::{Caller, Path, Store};
use sutra_conformance::{db, harness, Config, Statements, Target, Variant};

/// How long the counter's lock is held while the claim waits.
const HELD_MS: u64 = 300;

#[test]
fn a_claim_that_waited_for_the_audit_lock_is_witnessed_at_the_time_it_ran() {
    let Some(url) = db::test_postgres_url() else { return };
    let schema = db::run_schema("claim_clock");
    let target = Target::Postgres { url: url.clone(), schema: schema.clone() };
    let cfg = Config::new(0, Variant::Correct, target.clone());
    let sql = Arc::new(Statements::default());
    let mut conn = db::Conn::open(&target).unwrap();
    harness::set_up(&mut conn, &sql).unwrap();
    let mut store = Store::open(&target, sql.clone(), "replica-0", 300_000_000).unwrap();
    store.create_instance(0, &["relay"], 0).unwrap();
    let mut locker = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let mut lock = locker.transaction().unwrap();
    lock.batch_execute(&format!("UPDATE {schema}.audit_counter SET seq = seq")).unwrap();
    let claimer = std::thread::spawn(move || {
        let caller = Caller { exec: 1, owner: "p1-lane0".into(), process: 1, task: 1 };
        store.claim(0, &caller, Path::Relay).unwrap();
    });
    std::thread::sleep(Duration::from_millis(HELD_MS));
    let released_ns = Clock::store().now_ns();
    lock.commit().unwrap();
    claimer.join().unwrap();
    let dir = sutra_conformance::scratch_dir("claim-clock").unwrap();
    let history = dir.join("h.jsonl");
    sutra_conformance::history::export(&mut conn, &cfg, &sql, &history, false).unwrap();
    conn.drop_schema(&target).unwrap();
    let text = std::fs::read_to_string(&history).unwrap();
    let granted: serde_json::Value = text
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|e| e["kind"] == "claim-granted")
        .expect("the claim was granted");
    let at = granted["time_ns"].as_u64().unwrap();
    assert!(
        at >= released_ns,
        "the claim is witnessed at {at}, {} ms before the audit lock it waited for was released",
        (released_ns - at) / 1_000_000
    );
    let _ = std::fs::remove_dir_all(dir);
}

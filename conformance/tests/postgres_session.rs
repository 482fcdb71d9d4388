//! The runtime's PostgreSQL sessions commit without waiting for the disk flush
//! (`db::POSTGRES_SESSION`). With PostgreSQL's default every witnessed transaction waited
//! for its WAL flush while it held the audit counter's lock, so a run's transactions went
//! through the disk one at a time: on a loaded machine a correct run did not drain in 20 s
//! (issue 24: 12 of 50 PostgreSQL runs). Needs PostgreSQL: the URL in
//! `SUTRA_CONFORMANCE_POSTGRES`, else the one `.ci/postgres` sets up; skipped, saying so,
//! without a server — unless `CI=true`, where that fails.

use sutra_conformance::{db, Target};

#[test]
fn a_runtime_session_on_postgresql_commits_without_waiting_for_the_disk_flush() {
    let Some(url) = db::test_postgres_url() else { return };
    let target = Target::Postgres { url, schema: db::run_schema("session") };
    let mut conn = db::Conn::open(&target).unwrap();
    let db::Conn::Postgres(client) = &mut conn else { unreachable!("a PostgreSQL target") };
    let setting: String = client.query_one("SHOW synchronous_commit", &[]).unwrap().get(0);
    conn.drop_schema(&target).unwrap();
    assert_eq!(setting, "off");
}

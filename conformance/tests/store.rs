//! The store layer on the shared statements, call by call on SQLite: what the bad shapes do
//! to a row, and how the runtime reads the store's refusals.

use std::sync::Arc;

use sutra_conformance::lane::is_constraint_violation;
use sutra_conformance::store::{Caller, Claim, Commit, Path, Store, Trigger};
use sutra_conformance::{db, harness, Statements, Variant};

fn store(variant: Variant, label: &str) -> (Store, std::path::PathBuf) {
    let dir = sutra_conformance::scratch_dir(label).unwrap();
    let target = harness::sqlite_target(&dir);
    let sql = Arc::new(variant.statements(&Statements::default()).unwrap());
    let mut conn = db::Conn::open(&target).unwrap();
    harness::set_up(&mut conn, &sql).unwrap();
    (Store::open(&target, sql, "replica-0", 300_000_000).unwrap(), dir)
}

fn caller(exec: u32, owner: &str) -> Caller {
    Caller { exec, owner: owner.into(), process: 1, task: u64::from(exec) }
}

/// A second commit of one relay step that an owner-blind `WHERE` lets through writes the
/// next step's timer row a second time: the store refuses it on the row's key, and the
/// runtime must read that as the step failing (release, hand back), not as its database
/// failing (which stopped the whole run before).
#[test]
fn a_second_commit_of_a_step_the_owner_blind_commit_lets_through_is_refused_on_the_timer_row_key() {
    let (mut s, dir) = store(Variant::CommitOwnerBlind, "store-dup-timer");
    s.create_instance(0, &["relay", "timer", "timer"], 0).unwrap();
    let (a, b) = (caller(1, "p1-lane0"), caller(2, "p2-lane0"));
    let Claim::Granted { epoch } = s.claim(0, &a, Path::Relay).unwrap() else { panic!("a free row is granted") };
    let first = s.commit(0, &a, epoch, 0, Trigger::Message(0), 1_000_000).unwrap();
    assert_eq!(first, Commit::Accepted(Some("timer".into())));
    let err = s.commit(0, &b, epoch, 0, Trigger::Message(0), 1_000_000).unwrap_err();
    assert!(is_constraint_violation(&err), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// The correct commit rejects the same second commit: the row is not the writer's.
#[test]
fn the_owner_conditional_commit_rejects_a_writer_that_does_not_hold_the_row() {
    let (mut s, dir) = store(Variant::Correct, "store-reject");
    s.create_instance(0, &["timer", "timer"], 0).unwrap();
    let (a, b) = (caller(1, "p1-lane0"), caller(2, "p2-lane0"));
    let Claim::Granted { epoch } = s.claim(0, &a, Path::Timer).unwrap() else { panic!("a free row is granted") };
    assert_eq!(s.claim(0, &b, Path::Timer).unwrap(), Claim::Refused, "a live claim refuses another owner");
    assert_eq!(s.commit(0, &b, epoch, 0, Trigger::TimerRow { expects: 0 }, 1_000_000).unwrap(), Commit::Rejected);
    assert!(s.release(0, &a, epoch).unwrap(), "the holder's release matches");
    assert!(!s.release(0, &a, epoch).unwrap(), "a second release matches nothing");
    std::fs::remove_dir_all(dir).unwrap();
}

//! An example that sweeps exits like the command line (issue #22): 1 when its sweep is RED,
//! so a user who copies the README's walk-through into CI gets a red job for a red sweep.
//! Run through `cargo run`, as the README shows, so that `main`'s exit code is what is
//! judged.

use std::process::Command;

#[test]
fn the_walk_through_example_exits_1_on_a_red_sweep() {
    let out = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["run", "--quiet", "--locked", "--example", "migration_owner", "--", "migrate-with-lane-owner"])
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("RED"), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "a RED sweep must not exit 0:\n{stdout}");
}

//! Helpers the integration tests share: running the `sutra-sim` binary and making a scratch
//! directory. Each test crate uses some of them, so unused ones are allowed.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs the binary with `args`: (exit code, stdout, stderr).
pub fn sutra_sim(args: &[&str]) -> (i32, String, String) {
    output(Command::new(env!("CARGO_BIN_EXE_sutra-sim")).args(args))
}

/// As [`sutra_sim`], in the working directory `dir`.
pub fn sutra_sim_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    output(Command::new(env!("CARGO_BIN_EXE_sutra-sim")).current_dir(dir).args(args))
}

fn output(command: &mut Command) -> (i32, String, String) {
    let out = command.output().expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// An empty directory of its own for test `name` of the test file `area`, in this process.
pub fn scratch(area: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sutra-sim-{area}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A path as the `&str` a command line takes.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

//! Helpers the integration tests share: running the `sutra-sim` binary and making a scratch
//! directory. Each test crate uses some of them, so unused ones are allowed.
#![allow(dead_code)]

mod scratch;

use std::path::Path;
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

pub use scratch::Scratch;

/// An empty directory of its own for test `name` of the test file `area`, in this process,
/// removed when the returned guard drops.
pub fn scratch(area: &str, name: &str) -> Scratch {
    Scratch::new(&format!("{area}-{name}"))
}

/// A path as the `&str` a command line takes.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

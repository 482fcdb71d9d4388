//! Computes the model hash once per build (issue 26): a fold of the source that decides a
//! run's behaviour — the simulator, the model, the minimiser, the tool, the built-in
//! scenarios and `Cargo.lock` — so that reports of different models do not merge, at no
//! cost to any run. It was the trace fingerprints of two seeds of every built-in scenario,
//! run in every process that wrote a report (about 50 M instructions, more than a
//! hundred smoke seeds' worth); any change that changed those runs changes the source
//! too, and a change to a later seed's run that those two seeds missed now changes it
//! as well.
//!
//! Files are read in the order of their paths relative to the workspace root, with the
//! path folded in beside the text, so the hash is the same on any machine that has the
//! same tree.

use std::path::{Path, PathBuf};

/// The folders whose files decide a run, relative to the workspace root.
const SOURCE_DIRS: [&str; 5] = ["sim/src", "model/src", "shrink/src", "src", "scenarios"];
/// Single files that decide a run (dependency versions).
const SOURCE_FILES: [&str; 1] = ["Cargo.lock"];

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = SOURCE_FILES.iter().map(PathBuf::from).collect();
    for dir in SOURCE_DIRS {
        println!("cargo:rerun-if-changed={dir}");
        collect(&root, Path::new(dir), &mut files);
    }
    for file in SOURCE_FILES {
        println!("cargo:rerun-if-changed={file}");
    }
    files.sort();
    let mut hash = Fnv::default();
    for file in &files {
        let text = std::fs::read(root.join(file)).unwrap_or_default();
        hash.write(file.to_string_lossy().replace('\\', "/").as_bytes());
        hash.write(&(text.len() as u64).to_le_bytes());
        hash.write(&text);
    }
    println!("cargo:rustc-env=SUTRA_SIM_MODEL_HASH={:016x}", hash.0);
}

/// Every file under `dir` (relative to `root`), by its path relative to `root`.
fn collect(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else { return };
    for entry in entries.flatten() {
        let path = dir.join(entry.file_name());
        match entry.file_type() {
            Ok(t) if t.is_dir() => collect(root, &path, out),
            Ok(t) if t.is_file() => out.push(path),
            _ => {}
        }
    }
}

/// 64-bit FNV-1a: small, stable, and enough to tell two trees apart.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

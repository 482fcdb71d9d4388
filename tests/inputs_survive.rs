//! No command destroys what it was given or reads without limit (issue #22, "data that is
//! lost or damaged"): an output path that names an input — the same file, through a
//! symbolic or a hard link too — is refused before anything runs; a report or JUnit path
//! that is, or is inside, the save directory is refused up front; and scenarios,
//! reproducers and reports of unknown size are read only up to their named limits.

use std::path::Path;

mod common;
use common::sutra_sim_in;

/// A scratch directory of this file's own for test `name`.
fn scratch(name: &str) -> common::Scratch {
    common::scratch("inputs", name)
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every file of `dir` (not recursing) with its bytes.
fn contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = if path.is_dir() { b"<dir>".to_vec() } else { std::fs::read(&path).unwrap_or_default() };
            (name, bytes)
        })
        .collect();
    out.sort();
    out
}

#[cfg(unix)]
#[test]
fn an_output_that_names_an_input_is_refused_and_the_input_survives() {
    let dir = scratch("clash");
    std::fs::copy(root().join("scenarios/smoke.toml"), dir.join("sc.toml")).unwrap();
    std::fs::copy(root().join("seeds/sweeper-parses-owner.toml"), dir.join("in.toml")).unwrap();
    std::fs::hard_link(dir.join("sc.toml"), dir.join("hard.toml")).unwrap();
    std::os::unix::fs::symlink(dir.join("sc.toml"), dir.join("soft.toml")).unwrap();
    for (i, shard) in ["0/2", "1/2"].iter().enumerate() {
        let (code, _, err) =
            sutra_sim_in(&dir, &["sweep", "--count", "4", "--shard", shard, "--report", &format!("r{i}.json")]);
        assert_eq!(code, 0, "{err}");
    }
    let before = contents(&dir);
    let mutant = ["--mutant", "sweeper-parses-owner"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["sweep", "--scenario", "sc.toml", "--count", "3", "--report", "sc.toml"], "--report"),
        (vec!["sweep", "--scenario", "sc.toml", "--count", "3", "--junit", "hard.toml"], "--junit"),
        (vec!["sweep", "--scenario", "sc.toml", "--count", "3", "--report", "soft.toml"], "--report"),
        (vec!["explore", "--scenario", "sc.toml", "--runs", "3", "--junit", "sc.toml"], "--junit"),
        (vec!["run", "--scenario", "sc.toml", "--perfetto", "sc.toml"], "--perfetto"),
        (vec!["run", "--scenario", "soft.toml", "--history", "hard.toml"], "--history"),
        (vec!["replay", "in.toml", "--perfetto", "in.toml"], "--perfetto"),
        (vec!["replay", "in.toml", "--history", "./in.toml"], "--history"),
        (vec!["shrink", "in.toml", "-o", "in.toml"], "-o"),
        ([&["shrink", "--scenario", "sc.toml", "--seed", "358"][..], &mutant, &["-o", "hard.toml"]].concat(), "-o"),
        (vec!["merge", "r0.json", "r1.json", "-o", "r1.json"], "-o"),
        (vec!["mutants", "--scenario", "sc.toml", "--count", "1", "--report", "soft.toml"], "--report"),
    ];
    for (args, flag) in cases {
        let (code, out, err) = sutra_sim_in(&dir, &args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(out.is_empty(), "{args:?} ran: {out}");
        assert!(err.contains(flag), "{args:?}: the message names the output: {err}");
        let input = if args[0] == "replay" || (args[0] == "shrink" && args[1] == "in.toml") {
            "in.toml"
        } else if args[0] == "merge" {
            "r1.json"
        } else {
            "--scenario"
        };
        assert!(err.contains(input), "{args:?}: the message names the input: {err}");
        assert_eq!(contents(&dir), before, "{args:?} changed a file");
    }
}

#[test]
fn a_report_in_the_save_directory_is_refused_before_the_sweep() {
    let dir = scratch("save-dir");
    for outputs in [
        vec!["--save-failures", "x", "--report", "x"],
        vec!["--save-failures", "x", "--junit", "x"],
        vec!["--save-failures", "x", "--report", "x/report.json"],
        vec!["--save-failures", "./x/", "--junit", "x/sub/../junit.xml"],
    ] {
        if outputs[3].contains("sub") {
            std::fs::create_dir_all(dir.join("x/sub")).unwrap();
        }
        let before = contents(&dir);
        let args = [&["sweep", "--count", "3"][..], &outputs].concat();
        let (code, out, err) = sutra_sim_in(&dir, &args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(out.is_empty(), "{args:?} ran: {out}");
        assert!(err.contains("--save-failures"), "{err}");
        assert_eq!(contents(&dir), before, "{args:?} wrote something");
    }
}

/// A FIFO at `dir/name` that a thread fills with `bytes` bytes of `fill` (then closes),
/// for as long as a reader takes them: a file of unknown size.
#[cfg(unix)]
fn fifo_of(dir: &Path, name: &str, bytes: u64, fill: u8) -> Option<std::thread::JoinHandle<()>> {
    let path = dir.join(name);
    if !std::process::Command::new("mkfifo").arg(&path).status().is_ok_and(|s| s.success()) {
        return None;
    }
    Some(std::thread::spawn(move || {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        let chunk = vec![fill; 1 << 16];
        let mut left = bytes;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            // The reader stops at its limit and closes its end: the rest is refused.
            if f.write_all(&chunk[..n]).is_err() {
                return;
            }
            left -= n as u64;
        }
    }))
}

#[cfg(unix)]
#[test]
fn inputs_of_unknown_size_are_read_only_up_to_their_limit() {
    use sutra_sim::report::REPORT_BYTES_MAX;
    use sutra_sim::reproducer::REPRODUCER_BYTES_MAX;
    use sutra_sim::scenario_arg::SCENARIO_BYTES_MAX;
    let dir = scratch("limits");
    for (name, limit, args) in [
        ("sc.toml", SCENARIO_BYTES_MAX, vec!["sweep", "--count", "3", "--scenario", "sc.toml"]),
        ("in.toml", REPRODUCER_BYTES_MAX, vec!["replay", "in.toml"]),
        ("r.json", REPORT_BYTES_MAX, vec!["merge", "r.json", "-o", "m.json"]),
    ] {
        // A TOML comment or JSON whitespace, over the limit: only the size is wrong.
        let fill = if name.ends_with(".json") { b' ' } else { b'#' };
        let Some(writer) = fifo_of(&dir, name, limit + (1 << 20), fill) else {
            eprintln!("no mkfifo here; skipped");
            return;
        };
        let (code, out, err) = sutra_sim_in(&dir, &args);
        writer.join().unwrap();
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains(name) && err.contains(&limit.to_string()), "{args:?}: names the file and limit: {err}");
        assert!(!dir.join("m.json").exists());
        std::fs::remove_file(dir.join(name)).unwrap();
    }
}

#[test]
fn a_regular_input_over_its_limit_is_refused_without_reading_it() {
    let dir = scratch("sparse");
    let file = std::fs::File::create(dir.join("big.toml")).unwrap();
    file.set_len(sutra_sim::scenario_arg::SCENARIO_BYTES_MAX + 1).unwrap();
    let (code, out, err) = sutra_sim_in(&dir, &["run", "--scenario", "big.toml"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("big.toml") && err.contains(&sutra_sim::scenario_arg::SCENARIO_BYTES_MAX.to_string()),
        "{err}"
    );
}

#[cfg(unix)]
#[test]
fn shrink_writes_into_a_character_device_without_reading_it_first() {
    let dir = scratch("device");
    let shrink = ["shrink", "--scenario", "smoke", "--seed", "204", "--mutant", "sweeper-parses-owner"];
    let (code, out, err) = sutra_sim_in(&dir, &[&shrink[..], &["--time-budget", "2s", "-o", "/dev/null"]].concat());
    assert_eq!(code, 1, "a shrunk failure, written into /dev/null: {out}{err}");
    assert!(out.contains("saved /dev/null"), "{out}");
    // /dev/full reads as endless zeros: reading it "to compare" never ends. Writing into it
    // fails at once, after the shrink: an output lost (exit 3), naming the device.
    let (code, out, err) = sutra_sim_in(&dir, &[&shrink[..], &["--time-budget", "2s", "-o", "/dev/full"]].concat());
    assert_eq!(code, 3, "{out}{err}");
    assert!(err.contains("/dev/full"), "{err}");
    assert!(contents(&dir).is_empty(), "nothing else written");
}

//! What a sweep writes, and what it must never write, destroy or lose (issue #15, "data
//! safety"): output paths are checked before the first seed runs, nothing but a regular
//! file is ever replaced, every file stays inside the directory it was given, failure
//! output is bounded, and the exit code tells an interrupted or empty sweep from a green one.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

mod common;
use common::{s, sutra_sim};

/// A scratch directory of this file's own for test `name`.
fn scratch(name: &str) -> common::Scratch {
    common::scratch("safety", name)
}

/// Every entry of `dir`, recursively, relative to it.
fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.strip_prefix(dir).unwrap().display().to_string();
        if path.is_dir() {
            out.extend(listing(&path).into_iter().map(|n| format!("{name}/{n}")));
        }
        out.push(name);
    }
    out.sort();
    out
}

#[cfg(unix)]
#[test]
fn a_fifo_given_as_the_report_stays_a_fifo_and_the_sweep_exits_2_before_running() {
    use std::os::unix::fs::FileTypeExt;
    let dir = scratch("fifo");
    let fifo = dir.join("report.fifo");
    if !Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
        eprintln!("no mkfifo here; skipped");
        return;
    }
    let (code, out, err) = sutra_sim(&["sweep", "--count", "3", "--report", s(&fifo)]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("FIFO"), "{err}");
    assert!(out.is_empty(), "no seed ran: {out}");
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO was replaced");
}

#[cfg(unix)]
#[test]
fn a_character_device_given_as_the_report_stays_a_device() {
    use std::os::unix::fs::FileTypeExt;
    let dir = scratch("device");
    // A private copy of /dev/null (needs root): if the sweep replaced it, nothing is lost.
    let null = dir.join("null");
    if !Command::new("mknod").arg(&null).args(["c", "1", "3"]).status().is_ok_and(|s| s.success()) {
        eprintln!("cannot make a device node here (not root); skipped");
        return;
    }
    let (code, _, err) = sutra_sim(&["sweep", "--count", "3", "--report", s(&null), "--junit", s(&dir.join("j.xml"))]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::symlink_metadata(&null).unwrap().file_type().is_char_device(), "the device was replaced");
}

#[cfg(unix)]
#[test]
fn a_symbolic_link_given_as_the_report_is_followed_and_stays_a_link() {
    let dir = scratch("link");
    let real = dir.join("night-1.json");
    std::fs::write(&real, b"yesterday").unwrap();
    let link = dir.join("latest.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let (code, _, err) = sutra_sim(&["sweep", "--count", "3", "--report", s(&link)]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
    assert_eq!(doc["seeds_run"], 3);
}

#[test]
fn a_bad_junit_path_is_refused_before_anything_is_written() {
    let dir = scratch("junit");
    let report = dir.join("report.json");
    let junit = dir.join("no-such-dir").join("junit.xml");
    let (code, out, err) = sutra_sim(&["sweep", "--count", "3", "--report", s(&report), "--junit", s(&junit)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("junit.xml") && err.contains("does not exist"), "{err}");
    assert!(out.is_empty());
    assert!(listing(&dir).is_empty(), "wrote {:?}", listing(&dir));
}

#[test]
fn a_missing_report_directory_is_refused_before_the_first_seed() {
    let dir = scratch("early");
    let report = dir.join("missing").join("report.json");
    let started = Instant::now();
    // A sweep that would run for minutes: refused at once.
    let (code, out, err) = sutra_sim(&["sweep", "--scenario", "all", "--count", "1000000000", "--report", s(&report)]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty() && err.contains("missing"), "{out}{err}");
    assert!(started.elapsed() < Duration::from_secs(20), "took {:?}", started.elapsed());
}

#[test]
fn every_output_path_is_checked_before_the_first_seed() {
    let dir = scratch("outputs");
    let file = dir.join("a-file");
    std::fs::write(&file, b"").unwrap();
    let under_file = dir.join("a-file").join("x");
    for args in [
        vec!["sweep", "--count", "3", "--save-failures", s(&under_file)],
        vec!["run", "--perfetto", s(&under_file)],
        vec!["shrink", "--scenario", "smoke", "--seed", "1", "--mutant", "no-release-on-error", "-o", s(&under_file)],
        vec!["mutants", "--count", "1", "--report", s(&under_file)],
    ] {
        let (code, out, err) = sutra_sim(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert_eq!(listing(&dir), vec!["a-file".to_string()], "{args:?}");
    }
}

#[test]
fn the_same_file_for_report_and_junit_is_refused() {
    let dir = scratch("same");
    let both = dir.join("out");
    let (code, _, err) = sutra_sim(&["sweep", "--count", "3", "--report", s(&both), "--junit", s(&both)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--report") && err.contains("--junit"), "{err}");
    assert!(listing(&dir).is_empty());
}

#[test]
fn a_scenario_name_that_is_not_an_identifier_is_refused() {
    let dir = scratch("names");
    let smoke = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/smoke.toml")).unwrap();
    for bad in ["../../x", "", "Smoke", "-smoke", "a b", "x/y"] {
        let file = dir.join("bad.toml");
        let text = smoke.replacen("name = \"smoke\"", &format!("name = {bad:?}"), 1);
        assert_ne!(text, smoke, "the scenario file names itself smoke");
        std::fs::write(&file, text).unwrap();
        let saves = dir.join("saves");
        let (code, _, err) = sutra_sim(&[
            "sweep",
            "--scenario",
            s(&file),
            "--count",
            "5",
            "--mutant",
            "no-release-on-error",
            "--save-failures",
            s(&saves),
        ]);
        assert_eq!(code, 2, "{bad:?}: {err}");
        assert!(err.contains("name"), "{bad:?}: {err}");
        assert_eq!(listing(&dir), vec!["bad.toml".to_string()], "{bad:?} wrote files");
    }
}

#[test]
fn failures_kept_in_the_report_are_capped_per_checker_with_exact_counts() {
    let dir = scratch("cap");
    let report = dir.join("r.json");
    let (code, _, err) = sutra_sim(&[
        "sweep",
        "--count",
        "1000",
        "--jobs",
        "2",
        "--mutant",
        "no-release-on-error",
        "--report",
        s(&report),
    ]);
    assert_eq!(code, 1, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let failing = doc["violations"].as_u64().unwrap();
    let kept = doc["failures"].as_array().unwrap().len() as u64;
    // More failures than the report keeps, so that the cap is tested.
    assert!(failing > 2 * sutra_sim::report::FAILURES_KEPT_PER_CHECKER as u64, "the mutant fails often: {failing}");
    assert_eq!(kept, sutra_sim::report::FAILURES_KEPT_PER_CHECKER as u64);
    assert_eq!(doc["failures_left_out"].as_u64().unwrap(), failing - kept);
    assert_eq!(doc["failures_by_checker"]["exits-release"].as_u64().unwrap(), failing);
}

#[test]
fn saved_reproducers_are_capped_one_per_checker_first() {
    let dir = scratch("save-max");
    let saves = dir.join("saves");
    let report = dir.join("r.json");
    let (code, out, err) = sutra_sim(&[
        "sweep",
        "--count",
        "200",
        "--mutant",
        "unconditional-commit",
        "--no-shrink",
        "--save-failures",
        s(&saves),
        "--save-failures-max",
        "2",
        "--report",
        s(&report),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let files = listing(&saves);
    assert_eq!(files.len(), 2, "{files:?}");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let saved: Vec<&str> = doc["failures"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| !f["reproducer"].is_null())
        .map(|f| f["checker"].as_str().unwrap())
        .collect();
    assert_eq!(saved.len(), 2);
    assert_ne!(saved[0], saved[1], "one per distinct checker first: {saved:?}");
}

#[test]
fn a_sweep_that_ran_no_seed_is_not_green() {
    let (code, out, err) = sutra_sim(&["sweep", "--count", "50", "--time-budget", "0s"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(!out.contains("GREEN"), "{out}");
    assert!(err.contains("no seed ran"), "{err}");
}

#[cfg(unix)]
fn interrupted_with(signal: &str) -> (i32, serde_json::Value) {
    let dir = scratch(&format!("signal-{signal}"));
    let report = dir.join("r.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_sutra-sim"))
        .args(["sweep", "--scenario", "all", "--count", "100000000", "--report", s(&report)])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert!(Command::new("kill").args([format!("-{signal}"), child.id().to_string()]).status().unwrap().success());
    let status = child.wait().unwrap();
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    (status.code().unwrap_or(-1), doc)
}

#[cfg(unix)]
#[test]
fn an_interrupted_sweep_exits_130_or_143_and_still_writes_its_report() {
    for (signal, code) in [("INT", 130), ("TERM", 143)] {
        let (exit, doc) = interrupted_with(signal);
        assert_eq!(exit, code, "SIG{signal}");
        assert_eq!(doc["stopped_early"], true);
        assert!(doc["seeds_run"].as_u64().unwrap() > 0);
    }
}

#[test]
fn the_time_budget_covers_shrinking_and_saving_failures() {
    let dir = scratch("budget");
    let saves = dir.join("saves");
    let started = Instant::now();
    let (code, out, err) = sutra_sim(&[
        "sweep",
        "--scenario",
        "all",
        "--count",
        "100000000",
        "--mutant",
        "no-release-on-error",
        "--time-budget",
        "2s",
        "--save-failures",
        s(&saves),
    ]);
    let took = started.elapsed();
    assert_eq!(code, 1, "{out}{err}");
    // Sixteen shrinks of up to 10 s each would take far longer.
    assert!(took < Duration::from_secs(8), "took {took:?}");
    let files = listing(&saves);
    assert!(!files.is_empty() && files.len() <= sutra_sim::save_failures::SAVED_FAILURES_DEFAULT, "{files:?}");
}

#[cfg(unix)]
#[test]
fn a_second_signal_ends_the_sweep_at_once_with_its_own_code() {
    let dir = scratch("second-signal");
    let report = dir.join("r.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_sutra-sim"))
        .args(["sweep", "--scenario", "all", "--count", "100000000", "--report", s(&report)])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let pid = child.id() as libc::pid_t;
    // Either signal alone asks for an orderly stop, which writes the report and then exits.
    // Sent back to back, whichever the process handles second must not wait for that: it
    // ends the process at once, before any report is written, with 128 + that signal.
    // SAFETY: plain kill(2) calls on our own child's pid.
    unsafe {
        assert_eq!(libc::kill(pid, libc::SIGINT), 0);
        assert_eq!(libc::kill(pid, libc::SIGTERM), 0);
    }
    let status = child.wait().unwrap();
    assert!(matches!(status.code(), Some(130 | 143)), "{status:?}");
    assert!(!report.exists(), "the orderly stop ran to its end: the second signal did not force the exit");
}

/// Runs a failing sweep for a second and a half; `sabotage` runs half a second in, while
/// seeds are running (after every output path was checked).
fn sweep_then_sabotage(name: &str, extra: &[&str], sabotage: impl FnOnce(&Path)) -> (i32, common::Scratch, PathBuf) {
    let dir = scratch(name);
    std::fs::create_dir(dir.join("ci")).unwrap();
    let report = dir.join("r.json");
    let mut args = vec![
        "sweep",
        "--scenario",
        "smoke",
        "--count",
        "100000000",
        "--mutant",
        "no-release-on-error",
        "--time-budget",
        "1500ms",
        "--no-shrink",
        "--report",
        s(&report),
    ];
    let extra: Vec<String> = extra.iter().map(|a| a.replace("DIR", s(&dir))).collect();
    args.extend(extra.iter().map(String::as_str));
    let mut child = Command::new(env!("CARGO_BIN_EXE_sutra-sim"))
        .args(&args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    sabotage(&dir);
    let code = child.wait().unwrap().code().unwrap_or(-1);
    (code, dir, report)
}

#[test]
fn the_json_report_is_written_even_when_saving_the_failures_fails() {
    let (code, _dir, report) = sweep_then_sabotage("save-fails", &["--save-failures", "DIR/saves"], |dir| {
        // A regular file where the directory was: nothing can be created inside it, even as root.
        std::fs::remove_dir_all(dir.join("saves")).ok();
        std::fs::write(dir.join("saves"), "in the way").unwrap();
    });
    assert_eq!(code, 3, "saving failed after the sweep: an output lost");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert!(doc["violations"].as_u64().unwrap() > 0, "the report holds the sweep's failures");
}

#[test]
fn the_json_report_is_written_even_when_the_junit_file_cannot_be() {
    let (code, dir, report) = sweep_then_sabotage("junit-fails", &["--junit", "DIR/ci/junit.xml"], |dir| {
        std::fs::remove_dir_all(dir.join("ci")).ok();
        std::fs::write(dir.join("ci"), "in the way").unwrap();
    });
    assert_eq!(code, 3, "the JUnit file was lost after the sweep");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert!(doc["seeds_run"].as_u64().unwrap() > 0);
    assert!(!dir.join("ci").is_dir());
}

#[test]
fn a_red_sweep_whose_report_is_lost_exits_3_and_writes_its_other_outputs() {
    let dir = scratch("report-lost");
    std::fs::create_dir(dir.join("ci")).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_sutra-sim"))
        .args(["sweep", "--count", "100000000", "--mutant", "no-release-on-error", "--time-budget", "1500ms"])
        .args(["--no-shrink", "--report", s(&dir.join("ci/r.json")), "--junit", s(&dir.join("j.xml"))])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    // After every path was checked, the report's directory becomes a file.
    std::fs::remove_dir_all(dir.join("ci")).unwrap();
    std::fs::write(dir.join("ci"), "in the way").unwrap();
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(3), "not 2 (something was written), not 1 (an output is missing): {stderr}");
    assert!(stdout.starts_with("RED"), "the verdict is still printed: {stdout}");
    assert!(stderr.contains("r.json") && stderr.contains("OUTPUT LOST"), "{stderr}");
    assert!(std::fs::read_to_string(dir.join("j.xml")).unwrap().contains("<failure"), "the JUnit file is written");
}

/// Polls `ready` every tenth of a millisecond, for at most `limit` (then panics).
fn wait_until(limit: Duration, what: &str, ready: impl Fn() -> bool) {
    let started = Instant::now();
    while !ready() {
        assert!(started.elapsed() < limit, "waited {limit:?} for {what}");
        std::thread::sleep(Duration::from_micros(100));
    }
}

#[cfg(unix)]
#[test]
fn a_second_ctrl_c_while_reproducers_are_saved_leaves_no_temporary_file() {
    // Three tries: each second signal lands while the first file is being written, which
    // before the fix left its hidden temporary file behind about half the time.
    for attempt in 0..3 {
        let dir = scratch(&format!("second-signal-saving-{attempt}"));
        let saves = dir.join("saves");
        let child = Command::new(env!("CARGO_BIN_EXE_sutra-sim"))
            .args(["sweep", "--count", "300", "--jobs", "2", "--mutant", "no-release-on-error"])
            .args(["--save-failures", s(&saves)])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id() as libc::pid_t;
        // The save directory is made before shrinking starts: the first Ctrl-C lands while
        // failures are being shrunk, and ends the shrinking; saving follows.
        wait_until(Duration::from_secs(120), "shrinking", || saves.is_dir());
        // SAFETY: plain kill(2) calls on our own child's pid.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
        // The first entry to appear is the first reproducer's temporary file.
        wait_until(Duration::from_secs(60), "saving", || std::fs::read_dir(&saves).unwrap().next().is_some());
        // SAFETY: as above.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
        let status = child.wait_with_output().unwrap().status;
        let left: Vec<String> = listing(&saves).into_iter().filter(|name| name.starts_with('.')).collect();
        assert!(left.is_empty(), "attempt {attempt} ({status:?}) left {left:?}");
    }
}

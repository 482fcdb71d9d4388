//! The `sutra-conformance` command line: bad input is refused with exit 2 and nothing
//! written; a run writes a history whose header and lines are what `docs/history.md` says.

use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sutra-conformance"))
}

fn scratch(label: &str) -> std::path::PathBuf {
    sutra_conformance::scratch_dir(label).unwrap()
}

#[test]
fn variants_lists_every_shape_with_what_is_expected_of_it() {
    let out = bin().arg("variants").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for v in sutra_conformance::Variant::ALL {
        let line = text.lines().find(|l| l.split_whitespace().next() == Some(v.name())).expect(v.name());
        assert_eq!(line.contains("safe: must pass"), v.is_safe(), "{line}");
    }
}

#[test]
fn bad_arguments_exit_2_and_write_nothing() {
    let dir = scratch("cli-bad");
    let out = dir.join("h.jsonl");
    let cases: Vec<Vec<String>> = vec![
        vec!["run".into()],
        vec!["run".into(), "--variant".into(), "nope".into(), "--out".into(), out.display().to_string()],
        vec!["run".into(), "--seed".into(), "x".into(), "--out".into(), out.display().to_string()],
        vec!["run".into(), "--out".into(), dir.join("missing/h.jsonl").display().to_string()],
        vec!["frobnicate".into()],
    ];
    for args in cases {
        let o = bin().args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(!String::from_utf8_lossy(&o.stderr).is_empty(), "{args:?} says why");
    }
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "nothing written");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_postgresql_url_without_a_server_exits_2_and_writes_nothing() {
    let dir = scratch("cli-pg");
    let out = dir.join("h.jsonl");
    let url = "postgresql://nobody:secret@127.0.0.1:1/none";
    let o = bin().args(["run", "--postgres", url, "--out"]).arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("PostgreSQL") && !err.contains("secret"), "names the server, not the password: {err}");
    assert!(!out.exists());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_quiet_run_writes_a_history_of_witnesses_in_seq_order() {
    let dir = scratch("cli-run");
    let out = dir.join("h.jsonl");
    let o = bin().args(["run", "--no-faults", "--fault-phase-ms", "600", "--out"]).arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&out).unwrap();
    let mut lines = text.lines();
    let header: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(header["history"], "sutra-sim");
    assert_eq!(header["version"], 1);
    assert_eq!(header["complete"], true);
    assert!(header["scenario_toml"].as_str().unwrap().contains("claim_timeout = \"300ms\""));
    let mut last = 0;
    for line in lines {
        assert!(line.starts_with("{\"seq\":"), "{line}");
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let seq = v["seq"].as_u64().unwrap();
        assert!(seq > last, "seq rises");
        last = seq;
        assert!(matches!(v["witness"].as_str(), Some("store" | "broker" | "executor")));
    }
    assert!(last > 100, "a run of 40 instances writes hundreds of witnesses");
    std::fs::remove_dir_all(dir).unwrap();
}

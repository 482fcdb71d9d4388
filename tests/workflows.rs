//! The CI workflows cannot go green by accident (issue #22): a `run:` step runs under
//! `bash -e`, which checks only the last command of a pipeline, so `sutra-sim merge … | tee
//! summary.txt` is green whatever the merge says, and in a script of several commands an
//! unset variable is an empty string. Every `run:` step of more than one command, or with a
//! pipe, must begin with `set -euo pipefail`.
//!
//! The workflows are read line by line, not with a YAML library: a step's script is the
//! value of its `run:` key, on that line or, after `|` or `>`, the lines indented deeper.

use std::path::Path;

/// One `run:` script: the line its key is on (from 1) and its lines.
struct Script {
    line: usize,
    lines: Vec<String>,
}

/// The `run:` scripts of a workflow's text.
fn scripts(text: &str) -> Vec<Script> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(at) = line.find("run:") else { continue };
        let before = line[..at].trim();
        if !(before.is_empty() || before == "-") || line.trim_start().starts_with('#') {
            continue;
        }
        let value = line[at + "run:".len()..].trim();
        let block = value.starts_with('|') || value.starts_with('>');
        let script = if block {
            lines[i + 1..]
                .iter()
                .take_while(|l| l.trim().is_empty() || indent(l) > at)
                .map(|l| l.trim().to_string())
                .collect()
        } else {
            vec![value.to_string()]
        };
        out.push(Script { line: i + 1, lines: script });
    }
    out
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The script's commands: continuation lines joined, blank lines and comments dropped.
fn commands(script: &Script) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut continued = false;
    for line in script.lines.iter().filter(|l| !l.is_empty() && !l.starts_with('#')) {
        if continued {
            let command = out.last_mut().expect("a continued command");
            command.push(' ');
            command.push_str(line);
        } else {
            out.push(line.clone());
        }
        continued = line.ends_with('\\');
    }
    out
}

/// True if a command pipes into another (`a | b`; `a || b` is not a pipe).
fn pipes(command: &str) -> bool {
    command.replace("||", "").contains('|')
}

/// The steps of `text` that need `set -euo pipefail` and lack it, as `line N: first command`.
fn unguarded(text: &str) -> Vec<String> {
    scripts(text)
        .iter()
        .filter_map(|script| {
            let commands = commands(script);
            let needs = commands.len() > 1 || commands.iter().any(|c| pipes(c));
            let guarded = commands.first().is_some_and(|c| c == "set -euo pipefail");
            (needs && !guarded)
                .then(|| format!("line {}: {}", script.line, commands.first().cloned().unwrap_or_default()))
        })
        .collect()
}

#[test]
fn every_multi_command_or_piped_run_step_sets_pipefail() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(".github/workflows");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if !matches!(path.extension().and_then(|e| e.to_str()), Some("yml" | "yaml")) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!scripts(&text).is_empty(), "{} has no run: step this test can see", path.display());
        let bad = unguarded(&text);
        assert!(
            bad.is_empty(),
            "{}: these steps lose exit codes without `set -euo pipefail` first:\n{}",
            path.display(),
            bad.join("\n")
        );
        checked += 1;
    }
    assert!(checked > 0, "no workflow in {}", dir.display());
}

#[test]
fn the_lint_finds_a_pipe_or_a_second_command_without_pipefail() {
    let workflow = "jobs:\n  merge:\n    steps:\n      - name: Build\n        run: cargo build --locked\n      - name: Merge\n        run: |\n          ./sutra-sim merge r.json -o m.json | tee s.txt\n      - run: |\n          # two commands\n          a \\\n            --flag\n          b\n      - name: Guarded\n        run: |\n          set -euo pipefail\n          a | b\n      - run: a || true\n";
    assert_eq!(
        unguarded(workflow),
        vec!["line 7: ./sutra-sim merge r.json -o m.json | tee s.txt", "line 9: a \\ --flag"]
    );
}

/// The text of job `name` of a workflow: from its key to the next job's (a line indented by
/// exactly two spaces), or to the end.
fn nightly_job<'a>(workflow: &'a str, name: &str) -> &'a str {
    let start =
        workflow.find(&format!("\n  {name}:\n")).unwrap_or_else(|| panic!("a {name} job in the nightly workflow"));
    let body = &workflow[start + name.len() + 5..];
    let end = body
        .match_indices('\n')
        .map(|(at, _)| at)
        .find(|&at| body[at + 1..].starts_with("  ") && !body[at + 1..].starts_with("   "))
        .unwrap_or(body.len());
    &body[..end]
}

#[test]
fn the_nightly_draws_scaled_worlds_from_the_date_in_a_release_build() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let nightly = std::fs::read_to_string(root.join(".github/workflows/nightly.yml")).unwrap();
    let job = nightly_job(&nightly, "scaled");
    assert!(job.contains("cargo test --release --locked --test scaled_scenarios"), "the property test, optimised");
    assert!(job.contains("SUTRA_SIM_SCALED_DRAW=\"$(date -u +%Y%m%d)\""), "a new draw every night");
    assert!(!job.contains("conformance") && !job.contains("merge"), "the job's own text, not the next job's: {job}");
    let scaled = std::fs::read_to_string(root.join("tests/scaled_scenarios.rs")).unwrap();
    for variable in ["SUTRA_SIM_SCALED_DRAW", "SUTRA_SIM_SCALED_CASES", "SUTRA_SIM_SCALED_STEPS"] {
        assert!(job.contains(variable), "the job sets {variable}");
        assert!(scaled.contains(&format!("\"{variable}\"")), "the test reads {variable}");
    }
}

#[test]
fn the_nightly_runs_the_reference_runtime_against_a_postgresql_service_container() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let nightly = std::fs::read_to_string(root.join(".github/workflows/nightly.yml")).unwrap();
    let job = nightly_job(&nightly, "conformance");
    assert!(job.contains("services:") && job.contains("image: postgres:15"), "a PostgreSQL 15 service container");
    assert!(job.contains("SUTRA_CONFORMANCE_POSTGRES:"), "the URL the conformance tests read");
    assert!(job.contains("--test conformance"), "the suite's conformance runs");
    assert!(job.contains("conformance-runs.sh correct 200 --postgres"), "200 correct runs on PostgreSQL");
}

#[test]
fn ci_starts_postgresql_before_the_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let run = std::fs::read_to_string(root.join(".ci/run")).unwrap();
    let start = run.find("bash .ci/postgres").expect(".ci/run starts PostgreSQL");
    let test = run.find("cargo test --workspace --locked").expect(".ci/run runs the tests");
    assert!(start < test, "PostgreSQL is up before the tests that need it");
}

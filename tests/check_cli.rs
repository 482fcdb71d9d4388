//! `sutra-sim check` on the command line: the verdict of `run` from its history (text and
//! `--json`), and every kind of bad input refused with exit 2 naming the file and the line,
//! nothing written. What the schema promises a writer — unknown kinds and fields ignored,
//! several files merged by `seq`, gzip, string owner ids — holds.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};

use common::{s, scratch, sutra_sim};
use serde_json::Value;

/// Writes smoke seed 0's history under `mutant` into `dir`, returns its path and `run --json`.
fn history(dir: &Path, mutant: Option<&str>) -> (PathBuf, Value) {
    let path = dir.join("run.jsonl");
    let mut args = vec!["run", "--scenario", "smoke", "--seed", "0", "--json", "--history", s(&path)];
    if let Some(m) = mutant {
        args.extend(["--mutant", m]);
    }
    let (_, out, err) = sutra_sim(&args);
    (path.clone(), serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}")))
}

fn check_json(files: &[&Path]) -> (i32, Value, String) {
    let mut args = vec!["check", "--json"];
    args.extend(files.iter().map(|p| s(p)));
    let (code, out, err) = sutra_sim(&args);
    (code, serde_json::from_str(&out).unwrap_or(Value::Null), err)
}

fn header_failing_seq(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    header["failing_seq"].clone()
}

#[test]
fn check_gives_runs_verdict_checker_message_and_failing_event_with_the_story() {
    let dir = scratch("check_cli", "verdict");
    let (path, run) = history(&dir, Some("release-before-commit"));
    let (code, doc, err) = check_json(&[&path]);
    assert_eq!(code, 1, "{doc}{err}");
    assert_eq!(doc["verdict"], "violation");
    assert_eq!(doc["checker"], run["checker"]);
    assert_eq!(doc["message"], run["message"]);
    assert_eq!(doc["failing_seq"], header_failing_seq(&path));
    let story = doc["story"].as_array().unwrap();
    assert!(story.iter().any(|l| l.as_str().unwrap().contains("◀ commit-by-owner")), "{story:?}");
    // The story finds its failing event by seq in the history's sparse trace.
    let failing = format!("failing event #{} ", header_failing_seq(&path));
    assert!(story.iter().any(|l| l.as_str().unwrap().contains(&failing)), "{story:?}");
    let unable: Vec<&str> = doc["unable"].as_array().unwrap().iter().map(|u| u["checker"].as_str().unwrap()).collect();
    assert_eq!(unable, ["tickets-follow-routes", "bindings-consistent", "store-divergence"]);
    // The text form: run's words, the failing seq, who judged and who could not.
    let (code, out, _) = sutra_sim(&["check", s(&path)]);
    assert_eq!(code, 1);
    assert!(out.starts_with(&format!("violation of commit-by-owner: {}", run["message"].as_str().unwrap())), "{out}");
    assert!(
        out.contains("failing event: seq ")
            && out.contains("could not judge: bindings-consistent: reads the replicas' binding tables"),
        "{out}"
    );
    assert!(out.contains("STORY"), "{out}");
}

#[test]
fn a_passing_run_passes_and_no_checker_that_could_not_judge_is_named_as_judging() {
    let dir = scratch("check_cli", "pass");
    let (path, _) = history(&dir, None);
    let (code, doc, err) = check_json(&[&path]);
    assert_eq!(code, 0, "{doc}{err}");
    assert!(doc["cut"].is_null(), "{doc}");
    let judged: Vec<&str> = doc["judged"].as_array().unwrap().iter().map(|j| j["checker"].as_str().unwrap()).collect();
    assert!(judged.contains(&"eventual-completion") && !judged.contains(&"bindings-consistent"), "{judged:?}");
}

/// A copy of `path`'s lines with `edit` applied to the lines after the header, written to `name`.
fn edited(path: &Path, name: &str, edit: impl Fn(Vec<String>) -> Vec<String>) -> PathBuf {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let header = lines.remove(0);
    let mut out = vec![header];
    out.extend(edit(lines));
    let target = path.with_file_name(name);
    std::fs::write(&target, out.join("\n") + "\n").unwrap();
    target
}

fn refused(path: &Path, line: usize, says: &str) {
    let dir = path.parent().unwrap();
    let before: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    let (code, out, err) = sutra_sim(&["check", s(path)]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.is_empty(), "{out}");
    let place = format!("{} line {line}: ", path.display());
    assert!(err.contains(&place) && err.contains(says), "expected {place}…{says}, got {err}");
    let after: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(before, after, "check wrote something");
}

#[test]
fn bad_input_exits_2_naming_file_and_line_and_writes_nothing() {
    let dir = scratch("check_cli", "bad");
    let (path, _) = history(&dir, None);
    let text = std::fs::read_to_string(&path).unwrap();
    // A truncated last line (the writer was cut mid-line).
    let cut = dir.join("cut.jsonl");
    std::fs::write(&cut, &text[..text.len() - 10]).unwrap();
    refused(&cut, text.lines().count(), "truncated last line");
    // A seq that goes backwards.
    let back = edited(&path, "back.jsonl", |mut l| {
        l.swap(3, 4);
        l
    });
    refused(&back, 6, "does not follow seq");
    // A malformed line.
    let bad = edited(&path, "bad.jsonl", |mut l| {
        l[6] = l[6].replacen(',', ";", 1);
        l
    });
    refused(&bad, 8, "malformed JSON");
    // An event the checkers cannot read (a field of the wrong type).
    let typed = edited(&path, "typed.jsonl", |mut l| {
        let i = l.iter().position(|x| x.contains("\"kind\":\"claim-granted\"")).unwrap();
        l[i] = l[i].replace("\"epoch\":", "\"epoch\":\"x\",\"was\":");
        l
    });
    let i = std::fs::read_to_string(&typed).unwrap().lines().position(|x| x.contains("\"epoch\":\"x\"")).unwrap();
    refused(&typed, i + 1, "a claim-granted event");
    // An unknown version.
    let newer = dir.join("newer.jsonl");
    std::fs::write(&newer, text.replacen("\"version\":1", "\"version\":2", 1)).unwrap();
    refused(&newer, 1, "history version 2");
    // A declared broker call latency that is not a number of nanoseconds.
    let latency = dir.join("latency.jsonl");
    std::fs::write(&latency, text.replacen("\"version\":1", "\"version\":1,\"broker_call_latency_max_ns\":\"1s\"", 1))
        .unwrap();
    refused(&latency, 1, "broker_call_latency_max_ns");
    // A line longer than the bound, with no newline anywhere.
    let long = dir.join("long.jsonl");
    let mut f = std::fs::File::create(&long).unwrap();
    f.write_all(text.lines().next().unwrap().as_bytes()).unwrap();
    f.write_all(b"\n{\"seq\":").unwrap();
    f.write_all(&vec![b'1'; sutra_sim::check::reader::LINE_BYTES_MAX + 10]).unwrap();
    drop(f);
    refused(&long, 2, "longer than");
    // A missing file names the file.
    let (code, _, err) = sutra_sim(&["check", s(&dir.join("nope.jsonl"))]);
    assert_eq!(code, 2);
    assert!(err.contains("nope.jsonl"), "{err}");
}

#[test]
fn unknown_kinds_and_fields_are_ignored_and_files_merge_by_seq_and_gzip_is_read() {
    let dir = scratch("check_cli", "promises");
    let (path, run) = history(&dir, Some("release-before-commit"));
    let seq = header_failing_seq(&path);
    // Every line gains an unknown field; after each comes a line of a kind this reader does
    // not know (a newer writer's); seqs are doubled to make room.
    let extended = edited(&path, "extended.jsonl", |lines| {
        let mut out = Vec::new();
        for l in lines {
            let mut v: Value = serde_json::from_str(&l).unwrap();
            let seq = v["seq"].as_u64().unwrap() * 2;
            v["seq"] = seq.into();
            v["shard"] = "eu-1".into();
            out.push(v.to_string());
            out.push(format!(
                r#"{{"seq":{},"time_ns":0,"node":"world","kind":"gc-paused","witness":"executor","for_ns":5}}"#,
                seq + 1
            ));
        }
        out
    });
    let (code, doc, err) = check_json(&[&extended]);
    assert_eq!(code, 1, "{doc}{err}");
    assert_eq!((&doc["checker"], &doc["message"]), (&run["checker"], &run["message"]));
    assert_eq!(doc["failing_seq"].as_u64(), seq.as_u64().map(|s| s * 2));
    assert!(doc["skipped_lines"].as_u64().unwrap() > 0);
    // Two files, alternate lines each, both with the header.
    let odd = edited(&path, "odd.jsonl", |l| l.into_iter().step_by(2).collect());
    let even = edited(&path, "even.jsonl", |l| l.into_iter().skip(1).step_by(2).collect());
    let (code, doc, _) = check_json(&[&even, &odd]);
    assert_eq!((code, &doc["checker"], &doc["failing_seq"]), (1, &run["checker"], &seq));
    // The same seq in two files is refused.
    let (code, _, err) = sutra_sim(&["check", s(&odd), s(&odd)]);
    assert_eq!(code, 2);
    assert!(err.contains("merged files must not share a seq"), "{err}");
    // Gzip, by the name.
    let gz = dir.join("run.jsonl.gz");
    let mut enc = flate2::write::GzEncoder::new(std::fs::File::create(&gz).unwrap(), flate2::Compression::fast());
    enc.write_all(&std::fs::read(&path).unwrap()).unwrap();
    enc.finish().unwrap();
    let (code, doc, _) = check_json(&[&gz]);
    assert_eq!(
        (code, &doc["checker"], &doc["message"], &doc["failing_seq"]),
        (1, &run["checker"], &run["message"], &seq)
    );
}

#[test]
fn string_owner_ids_are_opaque_and_judged_the_same() {
    let dir = scratch("check_cli", "strings");
    let (path, run) = history(&dir, Some("per-process-owner"));
    let seq = header_failing_seq(&path);
    let owners = ["owner", "holder", "previous", "writer", "owner_before", "claim_owner"];
    let named = edited(&path, "named.jsonl", |lines| {
        lines
            .into_iter()
            .map(|l| {
                let mut v: Value = serde_json::from_str(&l).unwrap();
                for k in owners {
                    if let Some(n) = v.get(k).and_then(Value::as_u64) {
                        v[k] = format!("pod-{n:x}").into();
                    }
                }
                v.to_string()
            })
            .collect()
    });
    let (code, doc, err) = check_json(&[&named]);
    assert_eq!((code, &doc["checker"], &doc["failing_seq"]), (1, &run["checker"], &seq), "{doc}{err}");
    assert!(doc["owner_names"].as_object().unwrap().values().any(|n| n.as_str().unwrap().starts_with("pod-")));
}

/// A string-owner history's verdict and story name each owner by the history's own string,
/// never by the number the checkers judged it under (`src/check/names.rs`).
#[test]
fn the_verdict_and_the_story_speak_the_history_s_own_owner_ids() {
    let dir = scratch("check_cli", "spoken");
    let (path, run) = history(&dir, Some("per-process-owner"));
    let named = edited(&path, "named.jsonl", |lines| {
        lines
            .into_iter()
            .map(|l| {
                let mut v: Value = serde_json::from_str(&l).unwrap();
                for k in ["owner", "holder", "previous", "writer", "owner_before", "claim_owner"] {
                    if let Some(n) = v.get(k).and_then(Value::as_u64) {
                        v[k] = format!("pod-{n:x}").into();
                    }
                }
                v.to_string()
            })
            .collect()
    });
    let (code, doc, err) = check_json(&[&named]);
    assert_eq!(code, 1, "{doc}{err}");
    let numbered = run["message"].as_str().unwrap();
    let spoken = doc["message"].as_str().unwrap();
    assert!(numbered.starts_with("owner p"), "the run's message names an owner: {numbered}");
    assert!(spoken.starts_with("owner pod-"), "{spoken}");
    let story: Vec<&str> = doc["story"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    assert!(story.iter().any(|l| l.contains("CLAIM GRANTED to pod-")), "{story:#?}");
    // 2^44 (the display form's process of a string id) and 2^60 (its number) never show.
    for line in story.iter().copied().chain([spoken]) {
        assert!(!line.contains("17592186044416") && !line.contains("115292150460684"), "{line}");
    }
    let (_, text, _) = sutra_sim(&["check", s(&named)]);
    assert!(text.starts_with(&format!("violation of {}: {spoken}", doc["checker"].as_str().unwrap())), "{text}");
}

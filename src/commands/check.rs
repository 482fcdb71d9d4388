//! `sutra-sim check FILE…`: the checkers judging a history file (or several, merged by
//! `seq`), from the simulation or from a real runtime (`docs/check.md`). Exit 0 when no
//! checker that could judge failed, 1 on a violation, 2 on bad input (naming file and line).

use std::path::PathBuf;

use serde_json::json;
use sutra_sim::check::CheckReport;
use sutra_sim::plugin::CheckerSet;
use sutra_sim::scenario_arg;

use super::*;

/// The arguments of `sutra-sim check`.
#[derive(clap::Args)]
pub struct CheckArgs {
    /// History files (JSON Lines, docs/history.md; `.gz` is read through gzip). Several are
    /// merged by `seq`.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The scenario whose parameters the checkers read (a built-in name or a TOML file),
    /// instead of the one in the first file's header.
    #[arg(long)]
    pub scenario: Option<String>,
    /// Judge with only this checker (repeatable).
    #[arg(long = "checker", value_name = "NAME")]
    pub checker: Vec<String>,
    /// Do not judge with this checker (repeatable).
    #[arg(long = "skip-checker", value_name = "NAME")]
    pub skip_checker: Vec<String>,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
}

/// Judges the history and prints the verdict.
pub fn run(args: CheckArgs) -> Outcome {
    let scenario = args.scenario.as_deref().map(scenario_arg::resolve_one).transpose().map_err(|e| Usage(e.0))?;
    let set =
        CheckerSet::built_in().only(args.checker).and_then(|c| c.skip(args.skip_checker)).map_err(|e| Usage(e.0))?;
    let report = set.check_history(&args.files, scenario.as_ref()).map_err(|e| Usage(e.to_string()))?;
    if args.json {
        println!("{}", json_of(&report));
    } else {
        print!("{}", text_of(&report));
    }
    Ok(exit_for(&report.verdict))
}

/// The report as `run --json` shapes a verdict, with what judged and what could not.
fn json_of(r: &CheckReport) -> serde_json::Value {
    json!({
        "verdict": r.verdict.class(),
        "checker": r.verdict.checker(),
        "message": r.verdict.message(),
        "failing_seq": r.failing_seq,
        "events": r.events,
        "skipped_lines": r.skipped,
        "scenario": r.scenario,
        "judged": r.judged.iter().map(|j| json!({
            "checker": j.name, "kind": j.kind.as_str(), "events": j.events, "end_judged": j.end_judged,
        })).collect::<Vec<_>>(),
        "unable": r.unable.iter().map(|u| json!({"checker": u.name, "reason": u.reason})).collect::<Vec<_>>(),
        "cut": r.cut,
        "notes": r.notes,
        "run_verdict": r.header.verdict,
        "owner_names": r.owner_names.iter().map(|(id, name)| (id.to_string(), json!(name))).collect::<serde_json::Map<_, _>>(),
        "story": r.story.as_ref().map(|s| s.lines.clone()),
    })
}

/// The report for people: the verdict in `run`'s words, then who judged and who could not.
fn text_of(r: &CheckReport) -> String {
    let mut out = format!("{}\n", r.verdict);
    if let Some(seq) = r.failing_seq {
        out.push_str(&format!("failing event: seq {seq}\n"));
    }
    out.push_str(&format!(
        "{} events judged ({} lines of unknown kinds skipped), scenario {}\n",
        r.events,
        r.skipped,
        r.scenario.as_deref().unwrap_or("(none)")
    ));
    let names: Vec<&str> = r.judged.iter().map(|j| j.name.as_str()).collect();
    out.push_str(&format!("judged by {} checker(s): {}\n", names.len(), names.join(", ")));
    for u in &r.unable {
        out.push_str(&format!("could not judge: {}: {}\n", u.name, u.reason));
    }
    if let Some(cut) = &r.cut {
        out.push_str(&format!("end of run not judged: {cut}\n"));
    }
    for note in &r.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    for (id, name) in &r.owner_names {
        out.push_str(&format!("owner {id} = {name:?}\n"));
    }
    if let Some(story) = &r.story {
        out.push_str(&story.to_string());
    }
    out
}

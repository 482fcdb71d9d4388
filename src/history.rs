//! A run's history as JSON Lines: every *witness* event of the run — what the store, the
//! broker and the executor saw — so anyone can re-check a run with a checker of their own,
//! in any language, without this crate (issue #12). `docs/history.md` is the schema.
//!
//! The first line is a [`Header`] (the run: scenario, seed, mutant, fingerprint, verdict);
//! each further line is one event: `seq`, `time_ns`, `node`, `kind`, `witness`, then the
//! event's own fields, as serde writes them for [`ModelEvent`]. Narrative events (the code
//! under test about itself) are left out: a re-check that reads the file can only rest on
//! witnesses, like the built-in checkers.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sutra_sim_core::{Event, EventKind, Outcome};
use sutra_sim_model::event::Source;
use sutra_sim_model::ModelEvent;

/// The value of the header's `history` field: what kind of file this is.
pub const FORMAT: &str = "sutra-sim";

/// The schema version. Raised when a field is removed or renamed, or changes its meaning
/// or unit; a new field (in the header, in a line, in an event) keeps the version —
/// readers ignore fields they do not know. See `docs/history.md`.
pub const VERSION: u32 = 1;

/// The keys every event line has before the event's own fields; no event field may share
/// one (a test checks).
pub const LINE_KEYS: [&str; 5] = ["seq", "time_ns", "node", "kind", "witness"];

/// The first line of a history file: which run it is and how it ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Always [`FORMAT`].
    pub history: String,
    /// The schema version, [`VERSION`].
    pub version: u32,
    /// The sutra-sim version that wrote the file.
    pub framework: String,
    /// The scenario's name.
    pub scenario: String,
    /// The seed (for a replay: the reproducer's seed; its tape drove the run).
    pub seed: u64,
    /// The mutant switched on, by name, if any.
    pub mutant: Option<String>,
    /// The scheduling strategy, as `--strategy` takes it.
    pub strategy: String,
    /// The run's fingerprint, 16 hex digits (as `run` prints it).
    pub fingerprint: String,
    /// `pass`, `violation`, `hang`, `budget` or `crash` (as `run --json` says).
    pub verdict: String,
    /// The checker that failed, if one did.
    pub checker: Option<String>,
    /// The verdict's message (empty for a pass).
    pub message: String,
    /// The `seq` of the event that failed an always-checker, if one did: the last event of
    /// the run (nothing after it happened). It is in the file if it is a witness.
    pub failing_seq: Option<u64>,
    /// Events in the run, narrative ones included (`seq` runs from 0 below this).
    pub events: u64,
    /// Event lines that follow this header.
    pub witness_events: u64,
    /// Simulated time at the end of the run, in nanoseconds.
    pub sim_time_ns: u64,
    /// The name of every node, by node id (`node` in the event lines is one of these).
    pub nodes: Vec<String>,
    /// The scenario, inline as TOML: the parameters the checkers read (`sutra-sim check`
    /// needs nothing else). Absent in files written before it was added.
    #[serde(default)]
    pub scenario_toml: Option<String>,
    /// The witness kinds the writer records (every one, for the simulation): a checker
    /// reading a kind not listed cannot judge the file. Absent in older files.
    #[serde(default)]
    pub emits: Vec<String>,
    /// Whether the history runs to the end of the workload, so that end-of-run
    /// obligations may be judged: true for a run that passed or failed an
    /// eventually-checker at its end; false for one cut at a violation, a hang, a budget
    /// or a crash.
    #[serde(default)]
    pub complete: bool,
}

/// What identifies a run beside its outcome.
pub struct RunInfo<'a> {
    /// The scenario.
    pub scenario: &'a sutra_sim_model::Scenario,
    /// The seed.
    pub seed: u64,
    /// The mutant's name, if any.
    pub mutant: Option<&'a str>,
    /// The strategy's label.
    pub strategy: String,
}

/// The header of `outcome`'s history.
pub fn header(info: &RunInfo<'_>, outcome: &Outcome<ModelEvent>) -> Header {
    Header {
        history: FORMAT.to_string(),
        version: VERSION,
        framework: crate::VERSION.to_string(),
        scenario: info.scenario.name.clone(),
        seed: info.seed,
        mutant: info.mutant.map(str::to_string),
        strategy: info.strategy.clone(),
        fingerprint: format!("{:016x}", outcome.fingerprint),
        verdict: outcome.verdict.class().to_string(),
        checker: outcome.verdict.checker().map(str::to_string),
        message: outcome.verdict.message(),
        failing_seq: outcome.failing_event,
        events: outcome.events,
        witness_events: outcome.trace.iter().filter(|e| e.kind.source().is_witness()).count() as u64,
        sim_time_ns: outcome.sim_time.as_nanos(),
        nodes: outcome.node_names.clone(),
        scenario_toml: Some(info.scenario.to_toml()),
        emits: witness_kinds(),
        // A pass, or an eventually-checker's failure at the end: the run reached its end.
        complete: outcome.verdict.is_pass()
            || (outcome.failing_event.is_none()
                && matches!(outcome.verdict, sutra_sim_core::Verdict::Violation { .. })),
    }
}

/// Every witness kind's name, in tag order: what the simulation's history records.
pub fn witness_kinds() -> Vec<String> {
    use sutra_sim_model::event::tag;
    (0..tag::COUNT)
        .filter(|&t| tag::source(t).is_some_and(Source::is_witness))
        .filter_map(tag::name)
        .map(str::to_string)
        .collect()
}

/// The line of one event (no newline), or `None` for a narrative event (not part of a
/// history). The line's own keys come first, in [`LINE_KEYS`] order, then the event's fields.
pub fn event_line(event: &Event<ModelEvent>, nodes: &[String]) -> Option<String> {
    let Source::Witness(witness) = event.kind.source() else {
        return None;
    };
    let node = nodes.get(event.node.0 as usize).cloned().unwrap_or_else(|| format!("node-{}", event.node.0));
    let head: [Value; 5] = [
        event.seq.into(),
        event.time.as_nanos().into(),
        node.into(),
        event.kind.name().into(),
        witness.as_str().into(),
    ];
    let mut line = String::from("{");
    for (i, (key, value)) in LINE_KEYS.iter().zip(head).enumerate() {
        if i > 0 {
            line.push(',');
        }
        line.push_str(&format!("{}:{value}", Value::from(*key)));
    }
    // Serde writes a variant with fields as `{"Variant": {fields}}` and one without as
    // `"Variant"`: the fields go beside the line's own keys.
    if let Value::Object(outer) = serde_json::to_value(&event.kind).expect("events serialise") {
        for (_, fields) in outer {
            if let Value::Object(fields) = fields {
                for (key, value) in fields {
                    debug_assert!(!LINE_KEYS.contains(&key.as_str()), "event field {key} shadows a line key");
                    line.push_str(&format!(",{}:{value}", Value::from(key)));
                }
            }
        }
    }
    line.push('}');
    Some(line)
}

/// The whole history of `outcome` (run with its trace kept): the header line, then one
/// line per witness event, each ending in a newline.
pub fn render(info: &RunInfo<'_>, outcome: &Outcome<ModelEvent>) -> String {
    let mut text = serde_json::to_string(&header(info, outcome)).expect("headers serialise");
    text.push('\n');
    for line in outcome.trace.iter().filter_map(|e| event_line(e, &outcome.node_names)) {
        text.push_str(&line);
        text.push('\n');
    }
    text
}

/// Writes the history of `outcome` to `path`, atomically ([`crate::files::write_atomically`]).
pub fn write(info: &RunInfo<'_>, outcome: &Outcome<ModelEvent>, path: &std::path::Path) -> std::io::Result<()> {
    crate::files::write_atomically(path, render(info, outcome).as_bytes())
}

/// A history file read back: its header and its event lines, as JSON objects.
#[derive(Debug)]
pub struct History {
    /// The first line.
    pub header: Header,
    /// The event lines, in order.
    pub events: Vec<Map<String, Value>>,
}

/// Most bytes a history file may hold (1 GiB: a run of the largest event budget writes
/// less than that in witness lines); one of unknown size is read only this far.
pub const HISTORY_BYTES_MAX: u64 = 1 << 30;

/// Reads and parses the history file at `path`, reading at most [`HISTORY_BYTES_MAX`] bytes.
pub fn load(path: &std::path::Path) -> Result<History, String> {
    parse(&crate::files::read_text_bounded(path, HISTORY_BYTES_MAX, "history", "HISTORY_BYTES_MAX")?)
}

/// Parses a history file's text, checking its format and version.
pub fn parse(text: &str) -> Result<History, String> {
    let mut lines = text.lines().enumerate();
    let (_, first) = lines.next().ok_or("empty history: no header line")?;
    let header: Header = serde_json::from_str(first).map_err(|e| format!("line 1: not a history header: {e}"))?;
    if header.history != FORMAT {
        return Err(format!("line 1: history {:?}, expected {FORMAT:?}", header.history));
    }
    if header.version != VERSION {
        return Err(format!("line 1: history version {}, this reader knows version {VERSION}", header.version));
    }
    let mut events = Vec::new();
    for (i, line) in lines {
        match serde_json::from_str(line) {
            Ok(Value::Object(event)) => events.push(event),
            Ok(_) => return Err(format!("line {}: not a JSON object", i + 1)),
            Err(e) => return Err(format!("line {}: {e}", i + 1)),
        }
    }
    Ok(History { header, events })
}

#[cfg(test)]
mod tests {
    use sutra_sim_core::{NodeId, SimTime};
    use sutra_sim_model::event::tag;

    use super::*;

    #[test]
    fn no_event_field_shadows_a_line_key_and_every_witness_kind_makes_a_line() {
        let nodes = vec!["world".to_string()];
        for t in 0..tag::COUNT {
            let kind = ModelEvent::example(t).unwrap();
            let witness = kind.source().is_witness();
            let fields = match serde_json::to_value(&kind).unwrap() {
                Value::Object(outer) => outer.into_iter().next().map(|(_, f)| f),
                _ => None,
            };
            if let Some(Value::Object(fields)) = fields {
                for key in fields.keys() {
                    assert!(!LINE_KEYS.contains(&key.as_str()), "{} has a field {key}", kind.name());
                }
            }
            let event = Event { seq: 3, time: SimTime(5), node: NodeId(0), kind };
            let line = event_line(&event, &nodes);
            assert_eq!(line.is_some(), witness);
            if let Some(line) = line {
                let line: Value = serde_json::from_str(&line).unwrap();
                assert_eq!(line["kind"], tag::name(t).unwrap());
                assert_eq!((line["seq"].as_u64(), line["time_ns"].as_u64()), (Some(3), Some(5)));
                assert_eq!(line["node"], "world");
            }
        }
    }

    #[test]
    fn a_file_of_another_format_or_version_is_refused() {
        assert!(parse("").is_err());
        assert!(parse("{\"history\": \"other\"}\n").is_err());
        let scenario = sutra_sim_model::Scenario::built_in("smoke").unwrap();
        let options = sutra_sim_model::RunOptions { keep_trace: true, ..sutra_sim_model::RunOptions::seeded(0) };
        let outcome = crate::plugin::CheckerSet::built_in().run(&scenario, &options).ok().unwrap();
        let info = RunInfo { scenario: &scenario, seed: 0, mutant: None, strategy: "random".into() };
        let text = render(&info, &outcome);
        assert!(parse(&text).is_ok());
        let newer = text.replacen("\"version\":1", "\"version\":2", 1);
        assert!(parse(&newer).unwrap_err().contains("version 2"));
    }
}

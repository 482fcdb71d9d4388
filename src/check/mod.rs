//! `sutra-sim check`: the built-in checkers (and a user's, through [`CheckerSet`]) judging a
//! history — the simulation's own (`run --history`) or one a real runtime wrote in the
//! schema of `docs/history.md`. The checkers read witness events and the scenario's
//! parameters only, so the same verdict follows from the file as from the run.
//!
//! A checker that cannot judge a history says why and is never counted as passed: it reads
//! narrative events (no history holds them), or live replica state (binding tables), or a
//! witness kind the writer does not emit, or scenario parameters nobody gave. A history cut
//! before the end (a violation, a hang, a budget, a crash, or a real system's file that
//! does not say `"complete": true`) is judged event by event, never for obligations still
//! pending at the cut (the end-of-run half of the eventually-checkers).

pub mod decode;
pub mod names;
pub mod reader;
pub mod view;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use sutra_sim_core::{Check, Checker, CheckerKind, Event, EventKind, Outcome, SimTime, Verdict};
use sutra_sim_model::event::{tag, Source};
use sutra_sim_model::{ModelEvent, ModelView, Scenario};

use crate::plugin::CheckerSet;
use decode::{Decoded, Decoder, HeaderInfo};
use reader::{InputError, LineReader, Merged};
use view::HistoryView;

/// Built-in checkers that read replica state no history holds (the binding tables).
pub const LIVE_STATE_READERS: [&str; 2] = ["bindings-consistent", "tickets-follow-routes"];

/// Built-in checkers that compare the two store engines of a differential run: a history
/// holds one store's witnesses, never a second store to compare with.
pub const DIFFERENTIAL_READERS: [&str; 1] = ["store-divergence"];

/// Built-in checkers that read the scenario's parameters (timeouts, prefetch, thresholds,
/// the progress bound, fault spans): they cannot judge without a scenario.
pub const SCENARIO_READERS: [&str; 8] = [
    "eventual-completion",
    "live-leak",
    "prefetch-window",
    "quiet-bounce-meter",
    "refusal-contract",
    "refusal-grounds",
    "stale-steal",
    "sweep-by-age",
];

/// Witness kinds a built-in checker reads where the history records them and judges
/// without otherwise, by a bound the scenario declares: refusal-contract adds each store
/// latency spike witnessed (`fault-injected`) to a refused relay's requeue bound, and
/// without that witness allows the scenario's longest spike on every reply
/// (`refusal_contract::unwitnessed_spike`). owner-scope reads the ends of tasks (an admin
/// request's handler ended, a process crashed or stopped) only to forget a task whose
/// requests have all landed, where the header declares `store_call_latency_max_ns`; without
/// them it keeps every task, as without that declaration.
pub const OPTIONAL_READS: [(&str, u8); 4] = [
    ("refusal-contract", tag::FAULT_INJECTED),
    ("owner-scope", tag::ADMIN_REQUEST_ENDED),
    ("owner-scope", tag::REPLICA_CRASHED),
    ("owner-scope", tag::REPLICA_STOPPED),
];

/// At most this many events are kept to tell the story of a failure (the failing
/// instance's and the environment's, the latest ones).
pub const STORY_EVENTS_MAX: usize = 20_000;

/// Why a history could not be judged at all: bad input, named by file and line.
pub type CheckError = InputError;

/// A checker that judged the history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judged {
    /// Its name.
    pub name: String,
    /// always or eventually.
    pub kind: CheckerKind,
    /// Events it was handed.
    pub events: u64,
    /// Whether its end-of-run judgement ran (eventually-checkers on a complete history).
    pub end_judged: bool,
}

/// A checker that could not judge the history, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unable {
    /// Its name.
    pub name: String,
    /// Why.
    pub reason: String,
}

/// What `check` found.
pub struct CheckReport {
    /// `Pass` or the first violation.
    pub verdict: Verdict,
    /// The `seq` of the event that failed an always- or eventually-checker, if one did.
    pub failing_seq: Option<u64>,
    /// Event lines judged (read and known).
    pub events: u64,
    /// Lines skipped: kinds this reader does not know, or narrative ones.
    pub skipped: u64,
    /// The checkers that judged, in judging order.
    pub judged: Vec<Judged>,
    /// The checkers that could not.
    pub unable: Vec<Unable>,
    /// Why the end of the run was not judged (the history is cut), if it was not.
    pub cut: Option<String>,
    /// What the reader of the verdict should know about how it was judged (a declaration
    /// the header lacks, and what that costs).
    pub notes: Vec<String>,
    /// The first file's header.
    pub header: HeaderInfo,
    /// The scenario the checkers read, if there was one.
    pub scenario: Option<String>,
    /// The story of the failing instance, from the history alone.
    pub story: Option<crate::story::Story>,
    /// The instance of the failing event, if it names one.
    pub failing_instance: Option<u64>,
    /// String owner ids by the number the checkers' messages name them with.
    pub owner_names: std::collections::BTreeMap<u64, String>,
}

impl CheckerSet {
    /// Judges the history in `files` (JSON Lines, `docs/history.md`; gzip if a name ends
    /// in `.gz`; several files are merged by `seq`) with this set's always- and
    /// eventually-checkers — the built-in ones and any added with [`CheckerSet::with`].
    /// `scenario` overrides the header's. Streams: memory stays bounded whatever the size.
    pub fn check_history(&self, files: &[PathBuf], scenario: Option<&Scenario>) -> Result<CheckReport, CheckError> {
        let open = |p: &PathBuf| LineReader::open(p);
        let readers = files.iter().map(open).collect::<Result<Vec<_>, _>>()?;
        let mut report = judge(self, readers, scenario)?;
        if let Some(seq) = report.failing_seq {
            let readers = files.iter().map(open).collect::<Result<Vec<_>, _>>()?;
            report.story = Some(story(readers, &report, seq)?);
        }
        speak_owner_names(&mut report);
        Ok(report)
    }

    /// As [`CheckerSet::check_history`], from one history already in memory (`name` is
    /// used in messages).
    pub fn check_history_text(
        &self,
        name: &str,
        text: &str,
        scenario: Option<&Scenario>,
    ) -> Result<CheckReport, CheckError> {
        let reader =
            |t: &str| LineReader::from_reader(Path::new(name), Box::new(std::io::Cursor::new(t.as_bytes().to_vec())));
        let mut report = judge(self, vec![reader(text)], scenario)?;
        if let Some(seq) = report.failing_seq {
            report.story = Some(story(vec![reader(text)], &report, seq)?);
        }
        speak_owner_names(&mut report);
        Ok(report)
    }
}

/// The verdict's message and the story in the history's own owner ids ([`names::speak`]).
fn speak_owner_names(report: &mut CheckReport) {
    if let Verdict::Violation { message, .. } = &mut report.verdict {
        *message = names::speak(message, &report.owner_names);
    }
    if let Some(story) = &mut report.story {
        for line in &mut story.lines {
            *line = names::speak(line, &report.owner_names);
        }
    }
}

/// Reads every file's header (the first decides the scenario; each must be a history of
/// this version) and returns the first one's.
fn headers(readers: &mut [LineReader]) -> Result<HeaderInfo, CheckError> {
    let mut first = None;
    for r in readers.iter_mut() {
        let fields = r.next_object()?.ok_or_else(|| r.error("empty file: no header line"))?;
        let info = decode::header(&fields).map_err(|m| r.error(m))?;
        first.get_or_insert(info);
    }
    first.ok_or_else(|| InputError { file: PathBuf::from("-"), line: 0, message: "no history given".into() })
}

/// The scenario the checkers read: the caller's, the header's inline one, or a built-in
/// of the header's name.
fn scenario_of(
    header: &HeaderInfo,
    given: Option<&Scenario>,
    first: &LineReader,
) -> Result<Option<Scenario>, CheckError> {
    if let Some(s) = given {
        return Ok(Some(s.clone()));
    }
    if let Some(text) = &header.scenario_toml {
        let at_line_1 = InputError { file: first.error("").file, line: 1, message: String::new() };
        return Scenario::from_toml(text, "the history header's scenario_toml")
            .map(Some)
            .map_err(|e| InputError { message: format!("scenario_toml: {e}"), ..at_line_1 });
    }
    Ok(header.scenario.as_deref().and_then(|name| Scenario::built_in(name).ok()))
}

/// The checkers that can judge and those that cannot.
fn select(
    set: &CheckerSet,
    scenario: Option<&Scenario>,
    emits: Option<u64>,
) -> (Vec<Box<dyn Checker<ModelEvent, ModelView>>>, Vec<Unable>) {
    let placeholder;
    let names_scenario = match scenario {
        Some(s) => s,
        None => {
            placeholder = Scenario::built_in("smoke").expect("smoke is built in");
            &placeholder
        }
    };
    let names = set.names_for(names_scenario).unwrap_or_default();
    let narrative: u64 =
        (0..tag::COUNT).filter(|&t| tag::source(t) == Some(Source::Narrative)).map(|t| 1u64 << t).sum();
    let (mut judges, mut unable) = (Vec::new(), Vec::new());
    for name in names {
        let Ok(spec) = set.registry().get(&name) else { continue };
        if spec.kind == CheckerKind::Sometimes {
            continue;
        }
        let checker = (spec.factory)();
        let optional: u64 = OPTIONAL_READS.iter().filter(|(n, _)| *n == name).map(|(_, t)| 1u64 << t).sum();
        let mask = checker.interest() & !optional;
        let why = if mask & narrative != 0 {
            Some(format!("reads narrative events ({}), which no history holds", names_of(mask & narrative)))
        } else if LIVE_STATE_READERS.contains(&name.as_str()) {
            Some("reads the replicas' binding tables, live state that no history holds".to_string())
        } else if DIFFERENTIAL_READERS.contains(&name.as_str()) {
            Some("compares two store engines run side by side (--store differential); a history holds one".to_string())
        } else if scenario.is_none()
            && (SCENARIO_READERS.contains(&name.as_str()) || set.user_names().contains(&spec.name))
        {
            Some("needs the scenario's parameters: the header has no scenario_toml or built-in scenario name; give --scenario FILE".to_string())
        } else {
            emits
                .filter(|e| mask & !e != 0)
                .map(|e| format!("reads {}, which the writer does not emit (header `emits`)", names_of(mask & !e)))
        };
        match why {
            Some(reason) => unable.push(Unable { name, reason }),
            None => judges.push(checker),
        }
    }
    (judges, unable)
}

/// The kebab-case names of the tags in `mask`.
fn names_of(mask: u64) -> String {
    tag::in_mask(mask).into_iter().filter_map(tag::name).collect::<Vec<_>>().join(", ")
}

/// Streams the merged history through the checkers.
fn judge(set: &CheckerSet, mut readers: Vec<LineReader>, given: Option<&Scenario>) -> Result<CheckReport, CheckError> {
    let header = headers(&mut readers)?;
    let scenario = scenario_of(&header, given, &readers[0])?;
    let (mut checkers, unable) = select(set, scenario.as_ref(), header_emits(&header));
    let mut listeners: Vec<Vec<usize>> = vec![Vec::new(); 64];
    for (i, c) in checkers.iter().enumerate() {
        for t in tag::in_mask(c.interest()) {
            listeners[usize::from(t)].push(i);
        }
    }
    let mut counts = vec![0u64; checkers.len()];
    let mut view = HistoryView::new(scenario.clone().unwrap_or_else(|| Scenario::built_in("smoke").expect("built in")))
        .with_unwitnessed(header_emits(&header).map_or(0, |emits| !emits))
        .with_broker_call_latency(std::time::Duration::from_nanos(header.broker_call_latency_ns.unwrap_or(0)))
        .with_store_call_latency(header.store_call_latency_ns.map(std::time::Duration::from_nanos))
        .keeping_rows(!set.user_names().is_empty());
    let mut decoder = Decoder::new(&header.nodes);
    let mut merged = Merged::new(readers)?;
    let (mut events, mut skipped) = (0u64, 0u64);
    let mut verdict = Verdict::Pass;
    let (mut failing_seq, mut failing_instance) = (None, None);
    'lines: while let Some(raw) = merged.next_line()? {
        let at = |m: String| InputError { file: merged.paths()[raw.file].clone(), line: raw.line, message: m };
        let decoded = decoder.event(&raw.head, raw.fields()).map_err(at)?;
        let observed = match &decoded {
            Decoded::Event(e) => view.observe(e).map_err(at),
            Decoded::Skipped => Ok(()),
        };
        merged.give_back(raw);
        observed?;
        let event = match decoded {
            Decoded::Event(e) => e,
            Decoded::Skipped => {
                skipped += 1;
                continue;
            }
        };
        events += 1;
        for &i in &listeners[usize::from(event.kind.tag())] {
            counts[i] += 1;
            if let Check::Fail(message) = checkers[i].on_event(&event, view.view()) {
                verdict = Verdict::Violation { checker: checkers[i].name().to_string(), message };
                failing_seq = Some(event.seq);
                failing_instance = event.kind.instance();
                break 'lines;
            }
        }
    }
    let cut = cut_reason(&header, &verdict);
    if verdict.is_pass() && cut.is_none() {
        for c in checkers.iter_mut() {
            if let Check::Fail(message) = c.at_end(view.view()) {
                verdict = Verdict::Violation { checker: c.name().to_string(), message };
                break;
            }
        }
    }
    let judged: Vec<Judged> = checkers
        .iter()
        .zip(counts)
        .map(|(c, events)| Judged {
            name: c.name().to_string(),
            kind: c.kind(),
            events,
            end_judged: cut.is_none() && c.kind() == CheckerKind::Eventually,
        })
        .collect();
    let notes = notes_on(&header, &judged);
    Ok(CheckReport {
        verdict,
        failing_seq,
        events,
        skipped,
        judged,
        unable,
        cut,
        notes,
        header,
        scenario: scenario.map(|s| s.name),
        story: None,
        failing_instance,
        owner_names: decoder.owner_names,
    })
}

/// What the header leaves undeclared that changes how the checkers judging it work.
fn notes_on(header: &HeaderInfo, judged: &[Judged]) -> Vec<String> {
    let mut notes = Vec::new();
    if header.store_call_latency_ns.is_none() && judged.iter().any(|j| j.name == "owner-scope") {
        notes.push(
            "the header declares no store_call_latency_max_ns: owner-scope kept every task the history showed, ended or not (its memory grows with the history; docs/history.md)"
                .to_string(),
        );
    }
    notes
}

/// The header's `emits` list (the witness kinds the writer records) as a tag mask.
fn header_emits(header: &HeaderInfo) -> Option<u64> {
    header.emits.as_ref().map(|kinds| {
        (0..tag::COUNT).filter(|&t| tag::name(t).is_some_and(|n| kinds.iter().any(|k| k == n))).map(|t| 1u64 << t).sum()
    })
}

/// Why the history's end is not the workload's, if it is not: its obligations still
/// pending there must not be judged.
fn cut_reason(header: &HeaderInfo, verdict: &Verdict) -> Option<String> {
    if !verdict.is_pass() {
        return Some("a checker failed: nothing after the failing event is judged".into());
    }
    if header.complete {
        return None;
    }
    Some(match header.verdict.as_deref() {
        Some("pass") | None => {
            "the header does not say \"complete\": true: end-of-run obligations are not judged".into()
        }
        Some(class) => format!(
            "the run stopped early ({class}{}): end-of-run obligations are not judged",
            header.checker.as_deref().map(|c| format!(", {c}")).unwrap_or_default()
        ),
    })
}

/// The story of the failing instance: a second pass keeps its events and the environment's
/// up to the failing one (the latest [`STORY_EVENTS_MAX`]), and tells them.
fn story(mut readers: Vec<LineReader>, report: &CheckReport, failing: u64) -> Result<crate::story::Story, CheckError> {
    let header = headers(&mut readers)?;
    let mut decoder = Decoder::new(&header.nodes);
    let mut merged = Merged::new(readers)?;
    let mut kept: VecDeque<Event<ModelEvent>> = VecDeque::new();
    while let Some(raw) = merged.next_line()? {
        if raw.head.seq > failing {
            break;
        }
        let decoded = decoder.event(&raw.head, raw.fields());
        merged.give_back(raw);
        let Ok(Decoded::Event(e)) = decoded else { continue };
        let instance = e.kind.instance();
        if e.seq == failing || instance.is_none() || instance == report.failing_instance {
            kept.push_back(e);
            if kept.len() > STORY_EVENTS_MAX {
                kept.pop_front();
            }
        }
    }
    let outcome = Outcome {
        verdict: report.verdict.clone(),
        fingerprint: 0,
        events: report.events,
        polls: 0,
        sim_time: SimTime(kept.back().map_or(0, |e| e.time.as_nanos())),
        tape: sutra_sim_core::Tape(Vec::new()),
        replay_position: None,
        trace: kept.into(),
        reached: Vec::new(),
        failing_event: Some(failing),
        node_names: decoder.node_names,
        marks: Vec::new(),
    };
    Ok(crate::story::tell(&outcome))
}

//! Turning a history's JSON lines back into the events the checkers judge: the header's
//! run parameters, and each event line into an [`Event<ModelEvent>`] — by its kebab-case
//! `kind`, its fields as serde names them, owner ids given as numbers or as opaque strings.
//! Unknown kinds and fields are skipped, as `docs/history.md` promises a reader will.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};
use sutra_sim_core::{Event, NodeId, SimTime};
use sutra_sim_model::event::{tag, Source};
use sutra_sim_model::ModelEvent;

use crate::history::{FORMAT, LINE_KEYS, VERSION};

/// The first string owner id is given this number; later ones count up from it. The
/// simulation's own ids never reach this range (a lane's is a process id, 32 bits, above 16
/// lane bits; a stable name's sets bit 62, a migration's bit 63): a file may mix the two.
pub const STRING_OWNER_BASE: u64 = 1 << 60;

/// The event fields that hold an owner id (`OwnerId`, or an optional one).
const OWNER_FIELDS: [&str; 6] = ["owner", "holder", "previous", "writer", "owner_before", "claim_owner"];

/// What the header of a history says, read leniently: only `history` and `version` are
/// required, so a real system's writer need not know the simulation's run fields.
#[derive(Clone, Debug, Default)]
pub struct HeaderInfo {
    /// The scenario's name, if given.
    pub scenario: Option<String>,
    /// The scenario inline, as TOML (`scenario_toml`), if given.
    pub scenario_toml: Option<String>,
    /// The run's verdict class as the writer saw it (`pass`, `violation`, `hang`, …).
    pub verdict: Option<String>,
    /// The failing checker the writer named.
    pub checker: Option<String>,
    /// The `seq` the writer says failed.
    pub failing_seq: Option<u64>,
    /// Whether the history runs to the end of the workload (end-of-run obligations may be
    /// judged): `complete` if given, else true for a `pass` verdict and false otherwise.
    pub complete: bool,
    /// Node names by id.
    pub nodes: Vec<String>,
    /// Time at the end of the run, if given.
    pub end_ns: Option<u64>,
    /// The witness kinds the writer records (`emits`), if it says: a checker reading a kind
    /// not in it cannot judge.
    pub emits: Option<Vec<String>>,
}

/// Reads a header line: refuses another format or an unknown version.
pub fn header(fields: &Map<String, Value>) -> Result<HeaderInfo, String> {
    match fields.get("history").and_then(Value::as_str) {
        Some(FORMAT) => {}
        Some(other) => return Err(format!("not a history: \"history\" is {other:?}, expected {FORMAT:?}")),
        None => return Err(format!("not a history header: no \"history\": {FORMAT:?}")),
    }
    match fields.get("version").and_then(Value::as_u64) {
        Some(v) if v == u64::from(VERSION) => {}
        Some(v) => return Err(format!("history version {v}, this reader knows version {VERSION}")),
        None => return Err("history header without an unsigned integer \"version\"".into()),
    }
    let text = |k: &str| fields.get(k).and_then(Value::as_str).map(str::to_string);
    let verdict = text("verdict");
    let complete = fields.get("complete").and_then(Value::as_bool).unwrap_or(verdict.as_deref() == Some("pass"));
    let nodes = match fields.get("nodes") {
        Some(Value::Array(names)) => names.iter().map(|n| n.as_str().unwrap_or("?").to_string()).collect(),
        _ => Vec::new(),
    };
    Ok(HeaderInfo {
        scenario: text("scenario"),
        scenario_toml: text("scenario_toml"),
        verdict,
        checker: text("checker"),
        failing_seq: fields.get("failing_seq").and_then(Value::as_u64),
        complete,
        nodes,
        end_ns: fields.get("sim_time_ns").and_then(Value::as_u64),
        emits: match fields.get("emits") {
            Some(Value::Array(kinds)) => Some(kinds.iter().filter_map(Value::as_str).map(str::to_string).collect()),
            _ => None,
        },
    })
}

/// What a line became.
pub enum Decoded {
    /// An event to judge.
    Event(Event<ModelEvent>),
    /// A kind this reader does not know, or a narrative one (no history should carry it;
    /// no verdict may rest on it): skipped.
    Skipped,
}

/// Decodes event lines, keeping the names it has seen: nodes, string owner ids.
pub struct Decoder {
    /// Serde's variant name of each known witness kind, by its kebab-case name.
    variants: HashMap<&'static str, (String, u8)>,
    nodes: HashMap<String, NodeId>,
    /// Node names by id, the header's first.
    pub node_names: Vec<String>,
    owners: HashMap<String, u64>,
    /// String owner ids by the number given to them, for messages.
    pub owner_names: BTreeMap<u64, String>,
}

impl Decoder {
    /// A decoder whose nodes start with the header's.
    pub fn new(header_nodes: &[String]) -> Decoder {
        let variants = (0..tag::COUNT)
            .filter(|&t| tag::source(t).is_some_and(Source::is_witness))
            .filter_map(|t| tag::name(t).map(|name| (name, (pascal_case(name), t))))
            .collect();
        let mut decoder = Decoder {
            variants,
            nodes: HashMap::new(),
            node_names: Vec::new(),
            owners: HashMap::new(),
            owner_names: BTreeMap::new(),
        };
        for name in header_nodes {
            decoder.node(name);
        }
        decoder
    }

    fn node(&mut self, name: &str) -> NodeId {
        if let Some(&id) = self.nodes.get(name) {
            return id;
        }
        let id = NodeId(self.node_names.len() as u32);
        self.nodes.insert(name.to_string(), id);
        self.node_names.push(name.to_string());
        id
    }

    fn owner(&mut self, name: &str) -> u64 {
        if let Some(&id) = self.owners.get(name) {
            return id;
        }
        let id = STRING_OWNER_BASE + self.owners.len() as u64;
        self.owners.insert(name.to_string(), id);
        self.owner_names.insert(id, name.to_string());
        id
    }

    /// The event of one line (its `seq` already read), or why it is malformed.
    pub fn event(&mut self, seq: u64, mut fields: Map<String, Value>) -> Result<Decoded, String> {
        let kind = match fields.get("kind") {
            Some(Value::String(k)) => k.clone(),
            _ => return Err("no string `kind`".into()),
        };
        let Some((variant, _)) = self.variants.get(kind.as_str()) else { return Ok(Decoded::Skipped) };
        let variant = variant.clone();
        let time = fields.get("time_ns").and_then(Value::as_u64).ok_or("no unsigned integer `time_ns`")?;
        let node = match fields.get("node") {
            Some(Value::String(n)) => self.node(n),
            _ => return Err("no string `node`".into()),
        };
        for key in LINE_KEYS {
            fields.remove(key);
        }
        for key in OWNER_FIELDS {
            if let Some(Value::String(name)) = fields.get(key) {
                let id = self.owner(&name.clone());
                fields.insert(key.to_string(), Value::from(id));
            }
        }
        let value = if fields.is_empty() && kind == "healed" {
            Value::String(variant.clone())
        } else {
            Value::Object(Map::from_iter([(variant, Value::Object(fields))]))
        };
        let kind: ModelEvent = serde_json::from_value(value).map_err(|e| format!("a {kind} event: {e}"))?;
        Ok(Decoded::Event(Event { seq, time: SimTime(time), node, kind }))
    }
}

/// `commit-accepted` → `CommitAccepted`: serde's name of the variant.
fn pascal_case(kebab: &str) -> String {
    kebab
        .split('-')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use sutra_sim_core::EventKind;

    use super::*;

    #[test]
    fn every_witness_kind_decodes_from_the_line_the_history_writes() {
        let nodes = vec!["world".to_string()];
        let mut decoder = Decoder::new(&nodes);
        for t in 0..tag::COUNT {
            let kind = ModelEvent::example(t).unwrap();
            let event = Event { seq: 7, time: SimTime(9), node: NodeId(0), kind };
            let Some(line) = crate::history::event_line(&event, &nodes) else { continue };
            let Value::Object(fields) = serde_json::from_str(&line).unwrap() else { panic!() };
            match decoder.event(7, fields).unwrap() {
                Decoded::Event(back) => assert_eq!(back, event, "{}", event.kind.name()),
                Decoded::Skipped => panic!("{} skipped", event.kind.name()),
            }
        }
    }

    #[test]
    fn string_owner_ids_are_numbered_in_order_of_appearance_and_unknown_kinds_skipped() {
        let mut decoder = Decoder::new(&[]);
        let line = r#"{"seq":1,"time_ns":5,"node":"n1","kind":"swept","witness":"store","instance":0,"owner":"proc-a/lane-1","epoch":1,"age_ns":9,"by":0,"lease_held":true,"task":null,"extra":1}"#;
        let Value::Object(fields) = serde_json::from_str(line).unwrap() else { panic!() };
        let Decoded::Event(e) = decoder.event(1, fields).unwrap() else { panic!() };
        assert!(matches!(e.kind, ModelEvent::Swept { owner, .. } if owner.0 == STRING_OWNER_BASE));
        assert_eq!(decoder.owner_names[&STRING_OWNER_BASE], "proc-a/lane-1");
        let unknown = r#"{"seq":2,"time_ns":5,"node":"n1","kind":"gc-paused","witness":"executor"}"#;
        let Value::Object(fields) = serde_json::from_str(unknown).unwrap() else { panic!() };
        assert!(matches!(decoder.event(2, fields).unwrap(), Decoded::Skipped));
    }
}

//! Turning a history's JSON lines back into the events the checkers judge: the header's
//! run parameters, and each event line into an [`Event<ModelEvent>`] — by its kebab-case
//! `kind`, its fields as serde names them, owner ids given as numbers or as opaque strings.
//! Unknown kinds and fields are skipped, as `docs/history.md` promises a reader will.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};
use sutra_sim_core::{Event, NodeId, SimTime};
use sutra_sim_model::event::{tag, Source};
use sutra_sim_model::ModelEvent;

use serde::Deserialize;

use super::reader::Head;
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
    /// The longest one broker call takes, as the writer declares it
    /// (`broker_call_latency_max_ns`), if it does.
    pub broker_call_latency_ns: Option<u64>,
    /// The longest one store request takes from its sender to the store's witness of it,
    /// as the writer declares it (`store_call_latency_max_ns`), if it does.
    pub store_call_latency_ns: Option<u64>,
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
        broker_call_latency_ns: match fields.get("broker_call_latency_max_ns") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.as_u64().ok_or("\"broker_call_latency_max_ns\" is not an unsigned integer (ns)")?),
        },
        store_call_latency_ns: match fields.get("store_call_latency_max_ns") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.as_u64().ok_or("\"store_call_latency_max_ns\" is not an unsigned integer (ns)")?),
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
        node_id(&mut self.nodes, &mut self.node_names, name)
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

    /// The event of one line (its head already read), or why it is malformed. `bytes` is
    /// the line's fields as one JSON object ([`super::reader::RawLine::fields`]: the line
    /// after its head, or the whole line; the line's own keys are fields no variant has,
    /// so any still in it are passed over). They are read straight from the bytes as the
    /// variant its kind names; a line that does not read so — string owner ids — is read
    /// again through a JSON value.
    pub fn event(&mut self, head: &Head, bytes: &[u8]) -> Result<Decoded, String> {
        let Some((variant, _)) = self.variants.get(head.kind.as_str()) else {
            return Ok(Decoded::Skipped);
        };
        let node = node_id(&mut self.nodes, &mut self.node_names, &head.node);
        let (seq, time) = (head.seq, SimTime(head.time_ns));
        let mut json = serde_json::Deserializer::from_slice(bytes);
        let kind = match ModelEvent::deserialize(Variant { name: variant, inner: &mut json }) {
            Ok(kind) => kind,
            Err(_) => self.slow(&head.kind, bytes)?,
        };
        Ok(Decoded::Event(Event { seq, time, node, kind }))
    }

    /// Reads the event through a JSON value, numbering string owner ids.
    fn slow(&mut self, kind: &str, bytes: &[u8]) -> Result<ModelEvent, String> {
        let mut fields: Map<String, Value> =
            serde_json::from_slice(bytes).map_err(|e| format!("malformed JSON: {e}"))?;
        let variant = self.variants[kind].0.clone();
        for key in LINE_KEYS {
            fields.remove(key);
        }
        for key in OWNER_FIELDS {
            if let Some(Value::String(name)) = fields.get(key) {
                let id = self.owner(&name.clone());
                fields.insert(key.to_string(), Value::from(id));
            }
        }
        let value = if kind == "healed" {
            Value::String(variant)
        } else {
            Value::Object(Map::from_iter([(variant, Value::Object(fields))]))
        };
        serde_json::from_value(value).map_err(|e| format!("a {kind} event: {e}"))
    }
}

/// The id of node `name`, numbering a new name next (apart from [`Decoder`], so that an
/// event's variant name stays borrowed from it meanwhile).
fn node_id(nodes: &mut HashMap<String, NodeId>, names: &mut Vec<String>, name: &str) -> NodeId {
    if let Some(&id) = nodes.get(name) {
        return id;
    }
    let id = NodeId(names.len() as u32);
    nodes.insert(name.to_string(), id);
    names.push(name.to_string());
    id
}

/// Presents one line to serde as the enum variant `name` whose fields are the line's keys:
/// `ModelEvent`'s derived `Deserialize` then reads the line in one pass.
struct Variant<'a, 'de> {
    name: &'a str,
    inner: &'a mut serde_json::Deserializer<serde_json::de::SliceRead<'de>>,
}

impl<'de> serde::Deserializer<'de> for Variant<'_, 'de> {
    type Error = serde_json::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(serde::de::Error::custom("an event is an enum"))
    }

    fn deserialize_enum<V: serde::de::Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_enum(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

impl<'de> serde::de::EnumAccess<'de> for Variant<'_, 'de> {
    type Error = serde_json::Error;
    type Variant = Self;

    fn variant_seed<S: serde::de::DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self), Self::Error> {
        use serde::de::IntoDeserializer;
        let name: serde::de::value::StrDeserializer<'_, serde_json::Error> = self.name.into_deserializer();
        Ok((seed.deserialize(name)?, self))
    }
}

impl<'de> serde::de::VariantAccess<'de> for Variant<'_, 'de> {
    type Error = serde_json::Error;

    fn unit_variant(self) -> Result<(), Self::Error> {
        serde::de::IgnoredAny::deserialize(&mut *self.inner).map(drop)
    }

    fn newtype_variant_seed<S: serde::de::DeserializeSeed<'de>>(self, _: S) -> Result<S::Value, Self::Error> {
        Err(serde::de::Error::custom("no event is a newtype variant"))
    }

    fn tuple_variant<V: serde::de::Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Self::Error> {
        Err(serde::de::Error::custom("no event is a tuple variant"))
    }

    fn struct_variant<V: serde::de::Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        serde::Deserializer::deserialize_struct(&mut *self.inner, "", fields, visitor)
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
            let head: Head = serde_json::from_str(&line).unwrap();
            match decoder.event(&head, line.as_bytes()).unwrap() {
                Decoded::Event(back) => assert_eq!(back, event, "{}", event.kind.name()),
                Decoded::Skipped => panic!("{} skipped", event.kind.name()),
            }
        }
    }

    #[test]
    fn the_header_s_declared_broker_call_latency_is_read_and_absent_means_none() {
        let read = |text: &str| header(&serde_json::from_str(text).unwrap());
        let declared = read(r#"{"history":"sutra-sim","version":1,"broker_call_latency_max_ns":1000000000}"#);
        assert_eq!(declared.unwrap().broker_call_latency_ns, Some(1_000_000_000));
        assert_eq!(read(r#"{"history":"sutra-sim","version":1}"#).unwrap().broker_call_latency_ns, None);
        assert_eq!(
            read(r#"{"history":"sutra-sim","version":1,"broker_call_latency_max_ns":null}"#)
                .unwrap()
                .broker_call_latency_ns,
            None
        );
        assert!(read(r#"{"history":"sutra-sim","version":1,"broker_call_latency_max_ns":-1}"#).is_err());
        let store = read(r#"{"history":"sutra-sim","version":1,"store_call_latency_max_ns":500000000}"#);
        assert_eq!(store.unwrap().store_call_latency_ns, Some(500_000_000));
        assert_eq!(read(r#"{"history":"sutra-sim","version":1}"#).unwrap().store_call_latency_ns, None);
        assert!(read(r#"{"history":"sutra-sim","version":1,"store_call_latency_max_ns":"1s"}"#).is_err());
    }

    #[test]
    fn string_owner_ids_are_numbered_in_order_of_appearance_and_unknown_kinds_skipped() {
        let mut decoder = Decoder::new(&[]);
        let line = r#"{"seq":1,"time_ns":5,"node":"n1","kind":"swept","witness":"store","instance":0,"owner":"proc-a/lane-1","epoch":1,"age_ns":9,"by":0,"lease_held":true,"task":null,"extra":1}"#;
        let head: Head = serde_json::from_str(line).unwrap();
        let Decoded::Event(e) = decoder.event(&head, line.as_bytes()).unwrap() else { panic!() };
        assert!(matches!(e.kind, ModelEvent::Swept { owner, .. } if owner.0 == STRING_OWNER_BASE));
        assert_eq!(decoder.owner_names[&STRING_OWNER_BASE], "proc-a/lane-1");
        let unknown = r#"{"seq":2,"time_ns":5,"node":"n1","kind":"gc-paused","witness":"executor"}"#;
        let head: Head = serde_json::from_str(unknown).unwrap();
        assert!(matches!(decoder.event(&head, unknown.as_bytes()).unwrap(), Decoded::Skipped));
    }
}

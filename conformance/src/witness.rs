//! Witness events and the audit table they go into. A store witness is written in the same
//! transaction as the change it witnesses (`docs/history.md`, *Order*): the store layer
//! collects the transaction's witnesses and [`record`] reserves their `seq`s from the
//! audit counter and inserts them, last, just before the commit. Broker and harness
//! witnesses take their `seq`s from the same counter in a transaction of their own
//! ([`record_alone`]), at the instant the broker or the harness acts.

use serde_json::{Map, Value as Json};
use sutra_sql::Statements;

use crate::clock::{sql_ns, Clock};
use crate::db::{Conn, Tx, Value};

/// Who witnesses an event (the history's `witness`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The claim store.
    Store,
    /// The broker.
    Broker,
    /// The harness: the environment of the runtime (crashes, pauses, kills, offsets).
    Executor,
}

impl Source {
    fn as_str(self) -> &'static str {
        match self {
            Source::Store => "store",
            Source::Broker => "broker",
            Source::Executor => "executor",
        }
    }
}

/// One witness event, before it has a `seq`.
#[derive(Clone, Debug)]
pub struct Witness {
    /// The node whose thread sent the request (`replica-N`, or `world` for the harness).
    pub node: String,
    /// The kebab-case kind.
    pub kind: &'static str,
    /// Who witnesses it.
    pub source: Source,
    /// The event's own fields, named as `docs/history.md` names them.
    pub fields: Map<String, Json>,
}

impl Witness {
    /// A witness of `kind` from `source`, its fields given as a JSON object.
    pub fn new(node: &str, kind: &'static str, source: Source, fields: Json) -> Witness {
        let fields = match fields {
            Json::Object(m) => m,
            Json::Null => Map::new(),
            other => panic!("a witness's fields are an object, not {other}"),
        };
        Witness { node: node.to_string(), kind, source, fields }
    }
}

/// Writes `witnesses` into the audit table inside `tx`, at store time `time_ns`, taking
/// consecutive `seq`s. Call it last in the transaction: the counter's row lock is then
/// held only to the commit, and `seq` follows the commit order.
pub fn record(tx: &mut Tx<'_>, sql: &Statements, time_ns: u64, witnesses: &[Witness]) -> Result<(), String> {
    if witnesses.is_empty() {
        return Ok(());
    }
    let count = i64::try_from(witnesses.len()).expect("a handful per transaction");
    let last = tx
        .row(statement(sql, "audit_reserve"), &[Value::Int(count)])?
        .and_then(|r| r[0].int())
        .ok_or("the audit counter row is missing")?;
    for (i, w) in witnesses.iter().enumerate() {
        let seq = last - count + 1 + i64::try_from(i).expect("small");
        let fields = Json::Object(w.fields.clone()).to_string();
        let params = [
            Value::Int(seq),
            Value::Int(sql_ns(time_ns)),
            Value::Text(w.node.clone()),
            Value::Text(w.kind.to_string()),
            Value::Text(w.source.as_str().to_string()),
            Value::Text(fields),
        ];
        tx.query(statement(sql, "audit_write"), &params)?;
    }
    Ok(())
}

/// Writes one broker or harness witness in a transaction of its own, at the store clock's
/// time read inside it, and returns that time.
pub fn record_alone(conn: &mut Conn, sql: &Statements, witness: Witness) -> Result<u64, String> {
    conn.transaction(|tx| {
        let now = Clock::store().now_ns();
        record(tx, sql, now, std::slice::from_ref(&witness))?;
        Ok(now)
    })
}

/// The statement `name` of the file (the loader checked every contract is there).
pub fn statement<'s>(sql: &'s Statements, name: &str) -> &'s sutra_sql::Statement {
    sql.get(name).unwrap_or_else(|| panic!("the statements file has no `{name}`: the loader checks it does"))
}

/// One line of the history for an audit row: the five line keys, then the event's fields.
pub fn history_line(seq: i64, time_ns: i64, node: &str, kind: &str, witness: &str, fields: &str) -> String {
    let inner = fields.trim().strip_prefix('{').and_then(|f| f.strip_suffix('}')).unwrap_or("").trim();
    let node = Json::String(node.to_string());
    let sep = if inner.is_empty() { "" } else { "," };
    format!("{{\"seq\":{seq},\"time_ns\":{time_ns},\"node\":{node},\"kind\":\"{kind}\",\"witness\":\"{witness}\"{sep}{inner}}}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_starts_with_the_five_keys_in_order() {
        let line = history_line(7, 1_000, "replica-0", "released", "store", r#"{"instance":3,"released":true}"#);
        assert_eq!(
            line,
            r#"{"seq":7,"time_ns":1000,"node":"replica-0","kind":"released","witness":"store","instance":3,"released":true}"#
        );
    }

    #[test]
    fn an_event_without_fields_has_the_five_keys_only() {
        let line = history_line(1, 2, "world", "healed", "executor", "{}");
        assert_eq!(line, r#"{"seq":1,"time_ns":2,"node":"world","kind":"healed","witness":"executor"}"#);
    }
}

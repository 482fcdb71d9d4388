//! The SQL engine of the store: one in-memory SQLite connection per run, created with the
//! world and dropped with it, running the named statements of one file. It only talks to
//! the database: each method binds the call's values (the store's time among them) to one
//! named statement and hands back what the statement returned — the rows of its
//! `RETURNING` or `SELECT`, nothing computed beside them. The store turns those rows into
//! its answers and witnesses.
//!
//! Nothing nondeterministic reaches a decision: the statements were linted (no clock, no
//! random, ORDER BY wherever a SELECT returns several rows or a LIMIT picks), times are
//! bound parameters, and the rows of an UPDATE ... RETURNING of several rows (which cannot
//! ORDER BY) are ordered here by their first column, the instance id.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags, Row};
use sutra_sql::{Statement, Statements};

use super::careless::Careless;
use super::load::Loaded;
use crate::ids::OwnerId;

/// A statement's parameters, in contract order (the statement binds a leading run).
pub type Params = Vec<Value>;

/// The SQL engine of one run.
pub struct SqlEngine {
    /// Taken back into the thread's pool when the engine drops.
    db: Option<Connection>,
    /// The checked statements and their careless alternatives.
    loaded: Rc<Loaded>,
    /// Owner ids as the store wrote them (opaque text, R14) back to the model's ids: the
    /// client library's table, not the store's.
    owners: BTreeMap<String, OwnerId>,
}

/// The tables of a database, in name order.
const TABLES: &str = "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name";

thread_local! {
    /// The connection of this thread's last run, with the statements it was made for.
    /// Preparing every statement again on a new connection was a fifth of a run's time;
    /// a reused connection is emptied before each run, so each run still starts from
    /// empty tables and nothing of one run reaches the next.
    static POOL: RefCell<Option<(Rc<Loaded>, Connection)>> = const { RefCell::new(None) };
}

/// A new in-memory database with `loaded`'s schema.
fn fresh_connection(loaded: &Loaded) -> Connection {
    // One connection, one thread: SQLite's own mutexes would only cost.
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let db = Connection::open_in_memory_with_flags(flags).expect("an in-memory SQLite database opens");
    // Every statement stays prepared for the connection's life.
    db.set_prepared_statement_cache_capacity(sutra_sql::CONTRACTS.len() + Careless::ALL.len() + 16);
    for s in loaded.statements.schema() {
        db.execute(s.sqlite(), []).unwrap_or_else(|e| panic!("schema statement `{}`: {e}", s.name));
    }
    db
}

impl Drop for SqlEngine {
    fn drop(&mut self) {
        if let Some(db) = self.db.take() {
            let loaded = self.loaded.clone();
            // A thread ending drops its pool first; the connection then just closes.
            let _ = POOL.try_with(|p| *p.borrow_mut() = Some((loaded, db)));
        }
    }
}

/// The integer of a time or count, for binding.
pub fn int(v: u64) -> Value {
    Value::Integer(i64::try_from(v).expect("a store value fits in BIGINT"))
}

/// An owner id as the store sees it: opaque text.
pub fn owner_text(owner: OwnerId) -> Value {
    Value::Text(owner.display_string())
}

/// The careless alternatives, built from the built-in statements and checked like them.
pub fn careless_statements() -> Result<BTreeMap<Careless, Statement>, sutra_sql::SqlFileError> {
    let defaults = Statements::default();
    let mut out = BTreeMap::new();
    for kind in Careless::ALL {
        let name = kind.statement();
        let text = kind.text(&defaults.get(name).expect("a built-in statement").text);
        let replaced = defaults.with_replaced(name, &text)?;
        replaced.check_on_sqlite()?;
        out.insert(kind, replaced.get(name).expect("just replaced").clone());
    }
    Ok(out)
}

impl SqlEngine {
    /// An empty database with `loaded`'s schema and the sweeper's free lease row.
    pub fn new(loaded: Rc<Loaded>) -> SqlEngine {
        let db = match POOL.with(|p| p.borrow_mut().take()) {
            Some((of, db)) if Rc::ptr_eq(&of, &loaded) => db,
            _ => fresh_connection(&loaded),
        };
        let engine = SqlEngine { db: Some(db), loaded, owners: BTreeMap::new() };
        engine.empty_every_table();
        engine.execute("lease_create", vec![]);
        engine
    }

    fn db(&self) -> &Connection {
        self.db.as_ref().expect("the connection is kept until the engine drops")
    }

    /// Deletes every row of every table (in name order): a reused connection starts the
    /// run as empty as a fresh one.
    fn empty_every_table(&self) {
        let tables: Vec<String> = {
            let mut q = self.db().prepare_cached(TABLES).expect("the schema lists its tables");
            let names = q.query_map([], |r| r.get(0)).expect("the schema lists its tables");
            names.collect::<rusqlite::Result<_>>().expect("table names are text")
        };
        for t in tables {
            let delete = format!("DELETE FROM \"{}\"", t.replace('"', "\"\""));
            self.db()
                .prepare_cached(&delete)
                .and_then(|mut d| d.execute([]))
                .unwrap_or_else(|e| panic!("emptying {t}: {e}"));
        }
    }

    /// The statement `name`, or its careless alternative.
    fn statement(&self, name: &str, careless: Option<Careless>) -> &Statement {
        if let Some(kind) = careless {
            assert_eq!(kind.statement(), name, "a careless {kind:?} for `{name}`");
            return &self.loaded.careless[&kind];
        }
        self.loaded.statements.get(name).expect("a checked file has every statement")
    }

    /// The text `name` runs with (for divergence reports).
    pub fn text_of(&self, name: &str, careless: Option<Careless>) -> &str {
        &self.statement(name, careless).text
    }

    /// Runs a statement that returns nothing; the count of rows it changed.
    pub fn execute(&self, name: &str, params: Params) -> usize {
        let s = self.statement(name, None);
        let mut prepared = self.db().prepare_cached(s.sqlite()).unwrap_or_else(|e| panic!("statement `{name}`: {e}"));
        prepared
            .execute(rusqlite::params_from_iter(s.bound(&params)))
            .unwrap_or_else(|e| panic!("statement `{name}` failed: {e}"))
    }

    /// Runs a statement and reads every row it returns with `read`, in the order the
    /// statement gives them.
    pub fn rows<T>(
        &self,
        name: &str,
        careless: Option<Careless>,
        params: Params,
        read: impl Fn(&SqlEngine, &Row<'_>) -> rusqlite::Result<T>,
    ) -> Vec<T> {
        let s = self.statement(name, careless);
        let mut prepared = self.db().prepare_cached(s.sqlite()).unwrap_or_else(|e| panic!("statement `{name}`: {e}"));
        let mut rows = prepared
            .query(rusqlite::params_from_iter(s.bound(&params)))
            .unwrap_or_else(|e| panic!("statement `{name}` failed: {e}"));
        let mut out = Vec::new();
        while let Some(row) = rows.next().unwrap_or_else(|e| panic!("statement `{name}` failed: {e}")) {
            out.push(read(self, row).unwrap_or_else(|e| panic!("statement `{name}` returned an unexpected row: {e}")));
        }
        out
    }

    /// Runs a statement that returns at most one row.
    pub fn row<T>(
        &self,
        name: &str,
        careless: Option<Careless>,
        params: Params,
        read: impl Fn(&SqlEngine, &Row<'_>) -> rusqlite::Result<T>,
    ) -> Option<T> {
        let mut rows = self.rows(name, careless, params, read);
        assert!(rows.len() <= 1, "statement `{name}` returned {} rows where it promises at most one", rows.len());
        rows.pop()
    }

    /// Runs an UPDATE ... RETURNING of several rows and orders them by `key`, since the
    /// statement itself cannot say ORDER BY.
    pub fn rows_ordered<T, K: Ord>(
        &self,
        name: &str,
        careless: Option<Careless>,
        params: Params,
        read: impl Fn(&SqlEngine, &Row<'_>) -> rusqlite::Result<T>,
        key: impl Fn(&T) -> K,
    ) -> Vec<T> {
        let mut rows = self.rows(name, careless, params, read);
        rows.sort_by_key(|r| key(r));
        rows
    }

    /// Remembers the text an owner id is written as, and returns it for binding.
    pub fn bind_owner(&mut self, owner: OwnerId) -> Value {
        let text = owner.display_string();
        self.owners.entry(text.clone()).or_insert(owner);
        Value::Text(text)
    }

    /// The owner id the store returned as `text` (`None` for NULL).
    pub fn owner(&self, text: Option<String>) -> Option<OwnerId> {
        let text = text?;
        Some(
            *self
                .owners
                .get(&text)
                .unwrap_or_else(|| panic!("the store returned owner {text:?}, which no client wrote")),
        )
    }

    /// Column `i` of `row` as a u64 (a BIGINT the store wrote).
    pub fn u(row: &Row<'_>, i: usize) -> rusqlite::Result<u64> {
        let v: i64 = row.get(i)?;
        Ok(u64::try_from(v).expect("the store's integers are never negative"))
    }

    /// Column `i` of `row` as an owner id.
    pub fn owner_at(&self, row: &Row<'_>, i: usize) -> rusqlite::Result<Option<OwnerId>> {
        Ok(self.owner(row.get(i)?))
    }
}

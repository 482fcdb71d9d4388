//! The SQL engine of the store: one in-memory SQLite database per run — the run's
//! transaction on a connection that starts as the schema left it, rolled back when the
//! world drops — running the named statements of one file. It only talks to
//! the database: each method binds the call's values (the store's time among them) to one
//! named statement and hands back what the statement returned — the rows of its
//! `RETURNING` or `SELECT`, nothing computed beside them. The store turns those rows into
//! its answers and witnesses.
//!
//! Nothing nondeterministic reaches a decision: the statements were linted (no clock, no
//! random, ORDER BY wherever a SELECT returns several rows or a LIMIT picks), times are
//! bound parameters, and the rows of an UPDATE ... RETURNING of several rows (which cannot
//! ORDER BY) are ordered here by their first column, the instance id.

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
    /// The run's database, inside the run's transaction (see [`fresh_connection`]);
    /// always `Some` until the engine drops.
    db: Option<Connection>,
    /// The checked statements and their careless alternatives.
    loaded: Rc<Loaded>,
    /// Owner ids as the store wrote them (opaque text, R14) back to the model's ids: the
    /// client library's table, not the store's.
    owners: BTreeMap<String, OwnerId>,
}

/// A new, empty in-memory connection (no schema yet).
fn open() -> Connection {
    sutra_sql::tune_sqlite();
    // One connection, one thread: SQLite's own mutexes would only cost.
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let db = Connection::open_in_memory_with_flags(flags).expect("an in-memory SQLite database opens");
    // The query planner's stability guarantee: a statement's plan does not depend on the
    // values bound to it. Without it SQLite marks a statement whose plan could use a bound
    // value (a LIMIT, a comparison it could estimate) to be compiled again whenever that
    // value changes — most of the store's statements, on most calls. Plans change no answer.
    db.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
        .expect("the query planner's stability guarantee is on");
    // Statements are prepared when a run first uses one, and stay prepared for its life.
    db.set_prepared_statement_cache_capacity(sutra_sql::CONTRACTS.len() + Careless::ALL.len() + 16);
    db
}

/// Runs `statements`' schema and writes the sweeper's free lease row: what every run's
/// database holds before its first operation.
fn build_schema(db: &Connection, statements: &Statements) {
    for s in statements.schema() {
        db.execute(s.sqlite(), []).unwrap_or_else(|e| panic!("schema statement `{}`: {e}", s.name));
    }
    let lease = statements.get("lease_create").expect("a checked file has every statement");
    db.execute(lease.sqlite(), []).unwrap_or_else(|e| panic!("statement `lease_create` failed: {e}"));
}

/// The image of a database just built by `statements`' schema, to start each run's own
/// connection from (copying its pages costs a small part of running the schema again);
/// `None` if the schema made anything the image of the main database would not carry (a
/// TEMP table, an attached database): each run then runs the schema itself.
pub fn schema_image(statements: &Statements) -> Option<Vec<u8>> {
    let mut db = open();
    // A run's tables hold a few dozen rows: small pages are fewer bytes for SQLite to zero
    // and copy each time it loads one (it changes no answer).
    db.execute_batch("PRAGMA page_size = 512").ok()?;
    build_schema(&db, statements);
    let temp: i64 = db.query_row("SELECT count(*) FROM sqlite_temp_schema", [], |r| r.get(0)).ok()?;
    let databases: i64 =
        db.query_row("SELECT count(*) FROM pragma_database_list WHERE name <> 'temp'", [], |r| r.get(0)).ok()?;
    if temp != 0 || databases != 1 {
        return None;
    }
    let image = db.serialize(rusqlite::MAIN_DB).ok()?;
    Some(image.to_vec())
}

/// A new in-memory database with `loaded`'s schema and the free lease row.
fn new_connection(loaded: &Loaded) -> Connection {
    let mut db = open();
    match &loaded.image {
        Some(image) => db
            .deserialize_read_exact(rusqlite::MAIN_DB, image.as_slice(), image.len(), false)
            .expect("the schema's image loads into a new database"),
        None => build_schema(&db, &loaded.statements),
    }
    db
}

/// The run's database, as the schema and the free lease row leave it: the connection the
/// last run on this thread rolled back (its statements still prepared), or a new one.
///
/// The run's statements all run inside one transaction, never committed: no other
/// connection exists to see a commit, so where a transaction ends changes no answer, while
/// a transaction per statement copied every page it touched into the rollback journal
/// again. Each statement is still atomic (SQLite's statement journal). When the run ends
/// its transaction is rolled back ([`SqlEngine`]'s drop), which takes every change of the
/// run away — rows, AUTOINCREMENT counters, a TEMP table's rows, a table a statement made —
/// and leaves nothing of it for the next run but the prepared statements, which SQLite
/// would otherwise compile again for every run.
fn fresh_connection(loaded: &Loaded) -> Connection {
    let db = loaded.spare.borrow_mut().take().unwrap_or_else(|| new_connection(loaded));
    if !db.is_autocommit() {
        // A run that ended without its drop (a panic caught mid-run): its changes go now.
        db.execute_batch("ROLLBACK").expect("a run's transaction rolls back");
    }
    db.execute_batch("BEGIN").expect("the run's transaction opens");
    db
}

impl Drop for SqlEngine {
    /// Rolls the run's transaction back and keeps the connection for the next run on this
    /// thread with the same statements (a connection that will not roll back is closed).
    fn drop(&mut self) {
        let Some(db) = self.db.take() else { return };
        if db.execute_batch("ROLLBACK").is_ok() {
            *self.loaded.spare.borrow_mut() = Some(db);
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
    /// A new database of its own with `loaded`'s schema and the sweeper's free lease row.
    pub fn new(loaded: Rc<Loaded>) -> SqlEngine {
        let db = fresh_connection(&loaded);
        SqlEngine { db: Some(db), loaded, owners: BTreeMap::new() }
    }

    fn db(&self) -> &Connection {
        self.db.as_ref().expect("the run's connection")
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

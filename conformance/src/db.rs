//! The database under the runtime: SQLite (a file in a temporary directory, WAL, a busy
//! timeout, so threads on their own connections really interleave) or PostgreSQL at its
//! default READ COMMITTED (a connection URL). Every thread opens its own [`Conn`]. The SQL
//! is never written here: it comes from the shared statements file (`sql/statements.sql`,
//! the `sutra-sql` crate), rendered for each engine by its loader.

use std::path::PathBuf;
use std::time::Duration;

use sutra_sql::Statement;

/// How long a SQLite connection waits for the write lock before it reports busy.
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// How many times a transaction that lost a lock race (SQLite busy, a PostgreSQL
/// serialization failure or deadlock) is run again before the error is reported.
const TRANSACTION_ATTEMPTS_MAX: u32 = 20;

/// A value bound to or read from a statement: the store uses BIGINT and TEXT only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A BIGINT.
    Int(i64),
    /// A TEXT.
    Text(String),
    /// SQL NULL.
    Null,
}

impl Value {
    /// The integer, or `None` for NULL (a TEXT here is a bug in the statements file).
    pub fn int(&self) -> Option<i64> {
        match self {
            Value::Int(v) => Some(*v),
            _ => None,
        }
    }

    /// The text, or `None` for NULL.
    pub fn text(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Text(v.to_string())
    }
}

/// A row a statement returned, columns in the statement's order.
pub type Row = Vec<Value>;

/// Where the store lives.
#[derive(Clone, Debug)]
pub enum Target {
    /// A SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL database (a connection URL) and the schema of this run in it, so runs
    /// sharing one database never see each other's tables.
    Postgres {
        /// The connection URL.
        url: String,
        /// The run's schema (every connection's `search_path`).
        schema: String,
    },
}

impl Target {
    /// `sqlite` or `postgres`.
    pub fn engine(&self) -> &'static str {
        match self {
            Target::Sqlite(_) => "sqlite",
            Target::Postgres { .. } => "postgres",
        }
    }
}

/// One connection, owned by one thread.
pub enum Conn {
    /// SQLite.
    Sqlite(rusqlite::Connection),
    /// PostgreSQL.
    Postgres(Box<postgres::Client>),
}

/// An open transaction on a [`Conn`].
pub enum Tx<'c> {
    /// SQLite (`BEGIN IMMEDIATE`: the write lock is taken first, so the store's clock read
    /// next is in commit order).
    Sqlite(rusqlite::Transaction<'c>),
    /// PostgreSQL (READ COMMITTED).
    Postgres(postgres::Transaction<'c>),
}

/// Whether an error is a lost lock race worth running the transaction again for.
struct Retryable(bool);

impl Conn {
    /// Opens a connection to `target`.
    pub fn open(target: &Target) -> Result<Conn, String> {
        match target {
            Target::Sqlite(path) => {
                let c = rusqlite::Connection::open(path).map_err(|e| format!("SQLite {}: {e}", path.display()))?;
                c.busy_timeout(SQLITE_BUSY_TIMEOUT).map_err(|e| e.to_string())?;
                c.pragma_update(None, "journal_mode", "WAL").map_err(|e| e.to_string())?;
                c.pragma_update(None, "synchronous", "NORMAL").map_err(|e| e.to_string())?;
                Ok(Conn::Sqlite(c))
            }
            Target::Postgres { url, schema } => {
                let mut c = postgres::Client::connect(url, postgres::NoTls)
                    .map_err(|e| format!("PostgreSQL {}: {e}", redact(url)))?;
                c.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {schema}; SET search_path TO {schema}"))
                    .map_err(|e| format!("PostgreSQL schema {schema}: {}", pg_error_text(&e)))?;
                Ok(Conn::Postgres(Box::new(c)))
            }
        }
    }

    /// Runs `body` in one transaction and commits it; a lost lock race runs it again
    /// (bounded), any other error rolls back and is returned.
    pub fn transaction<T>(&mut self, mut body: impl FnMut(&mut Tx<'_>) -> Result<T, String>) -> Result<T, String> {
        let mut last = String::new();
        for _ in 0..TRANSACTION_ATTEMPTS_MAX {
            match self.attempt(&mut body) {
                Ok(v) => return Ok(v),
                Err((Retryable(true), e)) => last = e,
                Err((Retryable(false), e)) => return Err(e),
            }
        }
        Err(format!("gave up after {TRANSACTION_ATTEMPTS_MAX} lost lock races: {last}"))
    }

    fn attempt<T>(
        &mut self,
        body: &mut impl FnMut(&mut Tx<'_>) -> Result<T, String>,
    ) -> Result<T, (Retryable, String)> {
        match self {
            Conn::Sqlite(c) => {
                let tx = c
                    .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                    .map_err(|e| (sqlite_retryable(&e), e.to_string()))?;
                let mut tx = Tx::Sqlite(tx);
                let v = body(&mut tx).map_err(|e| (Retryable(e.contains("database is locked")), e))?;
                let Tx::Sqlite(tx) = tx else { unreachable!("opened as SQLite") };
                tx.commit().map_err(|e| (sqlite_retryable(&e), e.to_string()))?;
                Ok(v)
            }
            Conn::Postgres(c) => {
                let tx = c.transaction().map_err(|e| (Retryable(false), e.to_string()))?;
                let mut tx = Tx::Postgres(tx);
                let v = body(&mut tx).map_err(|e| (Retryable(pg_retryable_text(&e)), e))?;
                let Tx::Postgres(tx) = tx else { unreachable!("opened as PostgreSQL") };
                tx.commit().map_err(|e| (Retryable(pg_retryable(&e)), e.to_string()))?;
                Ok(v)
            }
        }
    }

    /// Runs a schema statement outside any transaction.
    pub fn execute_schema(&mut self, statement: &Statement) -> Result<(), String> {
        match self {
            Conn::Sqlite(c) => c.execute_batch(&statement.sqlite()).map_err(|e| format!("{}: {e}", statement.name)),
            Conn::Postgres(c) => c.batch_execute(statement.postgres()).map_err(|e| format!("{}: {e}", statement.name)),
        }
    }

    /// Drops the run's PostgreSQL schema and everything in it (nothing for SQLite, whose
    /// file goes with its directory).
    pub fn drop_schema(&mut self, target: &Target) -> Result<(), String> {
        match (self, target) {
            (Conn::Postgres(c), Target::Postgres { schema, .. }) => {
                c.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE")).map_err(|e| pg_error_text(&e))
            }
            _ => Ok(()),
        }
    }

    /// Drops every table of the store (a store left by an earlier run).
    pub fn drop_tables(&mut self, tables: &[&str]) -> Result<(), String> {
        for table in tables {
            let sql = format!("DROP TABLE IF EXISTS {table}");
            match self {
                Conn::Sqlite(c) => c.execute_batch(&sql).map_err(|e| e.to_string())?,
                Conn::Postgres(c) => c.batch_execute(&sql).map_err(|e| e.to_string())?,
            }
        }
        Ok(())
    }
}

impl Tx<'_> {
    /// Runs `statement` with `params` (the leading run it uses) and returns its rows.
    pub fn query(&mut self, statement: &Statement, params: &[Value]) -> Result<Vec<Row>, String> {
        let params = statement.bound(params);
        let at = |e: String| format!("statement {}: {e}", statement.name);
        match self {
            Tx::Sqlite(tx) => sqlite_query(tx, &statement.sqlite(), params).map_err(at),
            Tx::Postgres(tx) => pg_query(tx, statement.postgres(), params).map_err(at),
        }
    }

    /// Runs `statement` and returns its one row, if any.
    pub fn row(&mut self, statement: &Statement, params: &[Value]) -> Result<Option<Row>, String> {
        let mut rows = self.query(statement, params)?;
        if rows.len() > 1 {
            return Err(format!(
                "statement {} returned {} rows, its contract says one at most",
                statement.name,
                rows.len()
            ));
        }
        Ok(rows.pop())
    }
}

fn sqlite_retryable(e: &rusqlite::Error) -> Retryable {
    Retryable(matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    ))
}

fn sqlite_query(tx: &rusqlite::Transaction<'_>, sql: &str, params: &[Value]) -> Result<Vec<Row>, String> {
    let mut stmt = tx.prepare_cached(sql).map_err(|e| e.to_string())?;
    let bound: Vec<rusqlite::types::Value> = params
        .iter()
        .map(|p| match p {
            Value::Int(v) => rusqlite::types::Value::Integer(*v),
            Value::Text(s) => rusqlite::types::Value::Text(s.clone()),
            Value::Null => rusqlite::types::Value::Null,
        })
        .collect();
    let columns = stmt.column_count();
    let mut rows = stmt.query(rusqlite::params_from_iter(bound)).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(|e| e.to_string())? {
        let mut values = Vec::with_capacity(columns);
        for i in 0..columns {
            values.push(match row.get_ref(i).map_err(|e| e.to_string())? {
                rusqlite::types::ValueRef::Integer(v) => Value::Int(v),
                rusqlite::types::ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                rusqlite::types::ValueRef::Null => Value::Null,
                other => return Err(format!("column {i} is {:?}, not BIGINT or TEXT", other.data_type())),
            });
        }
        out.push(values);
    }
    Ok(out)
}

fn pg_retryable(e: &postgres::Error) -> bool {
    use postgres::error::SqlState;
    matches!(e.code(), Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED)
}

fn pg_retryable_text(e: &str) -> bool {
    // 23505: two commits put outbox rows under one MAX(seq)+1 at READ COMMITTED.
    e.contains("could not serialize")
        || e.contains("deadlock detected")
        || e.starts_with("23505")
        || e.contains(": 23505")
}

fn pg_query(tx: &mut postgres::Transaction<'_>, sql: &str, params: &[Value]) -> Result<Vec<Row>, String> {
    use postgres::types::{ToSql, Type};
    let owned: Vec<Box<dyn ToSql + Sync>> = params
        .iter()
        .map(|p| -> Box<dyn ToSql + Sync> {
            match p {
                Value::Int(v) => Box::new(*v),
                Value::Text(s) => Box::new(s.clone()),
                Value::Null => Box::new(None::<i64>),
            }
        })
        .collect();
    let refs: Vec<&(dyn ToSql + Sync)> = owned.iter().map(|b| b.as_ref()).collect();
    let rows = tx.query(sql, &refs).map_err(|e| pg_error_text(&e))?;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let mut values = Vec::with_capacity(row.len());
        for (i, column) in row.columns().iter().enumerate() {
            let value = match *column.type_() {
                Type::INT8 => row.try_get::<_, Option<i64>>(i).map(|v| v.map_or(Value::Null, Value::Int)),
                Type::INT4 => row.try_get::<_, Option<i32>>(i).map(|v| v.map_or(Value::Null, |v| Value::Int(v.into()))),
                _ => row.try_get::<_, Option<String>>(i).map(|v| v.map_or(Value::Null, Value::Text)),
            };
            values.push(value.map_err(|e| format!("column {i}: {e}"))?);
        }
        out.push(values);
    }
    Ok(out)
}

/// PostgreSQL's message with its detail (the bare `Display` says only "db error").
fn pg_error_text(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.code().code(), db.message()),
        None => e.to_string(),
    }
}
/// The URL `.ci/postgres` creates, used unless `SUTRA_CONFORMANCE_POSTGRES` names another.
pub const TEST_POSTGRES_URL: &str = "postgresql://sutra:sutra@127.0.0.1:5432/sutra_conformance";

/// The PostgreSQL server the tests run against, or `None` (skipped, said on stderr) when
/// there is none and this is not CI; under `CI=true` a missing server fails the test.
pub fn test_postgres_url() -> Option<String> {
    let url = std::env::var("SUTRA_CONFORMANCE_POSTGRES").unwrap_or_else(|_| TEST_POSTGRES_URL.to_string());
    match postgres::Client::connect(&url, postgres::NoTls) {
        Ok(_) => Some(url),
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("CI=true and no PostgreSQL at {}: {e} (.ci/run starts it with .ci/postgres)", redact(&url))
        }
        Err(e) => {
            eprintln!(
                "SKIPPED: the PostgreSQL runs need a server ({}: {e}); run .ci/postgres or set SUTRA_CONFORMANCE_POSTGRES",
                redact(&url)
            );
            None
        }
    }
}

/// A connection URL with its password left out, for messages.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let creds = &url[scheme + 3..at];
            let user = creds.split(':').next().unwrap_or("");
            format!("{}{user}:***{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_string(),
    }
}

/// A schema name for one run: lower-case letters, digits and underscores only.
pub fn run_schema(label: &str) -> String {
    let clean: String =
        label.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
    format!("sutra_run_{clean}_{}_{}", std::process::id(), crate::clock::Clock::store().now_ns() % 1_000_000_000_000)
}

//! SQLite's own judgement of a statements file: every statement prepared on a fresh
//! in-memory database after the file's schema ran, and its parameters counted by SQLite.
//! Nothing is executed but the schema.

use rusqlite::Connection;

use crate::{SqlFileError, Statements};

/// Runs the schema of `statements` on a fresh in-memory database, then prepares every
/// other statement there.
pub fn check(statements: &Statements) -> Result<(), SqlFileError> {
    crate::tune_sqlite();
    let file = statements.file.as_str();
    let err = |name: &str, line: usize, msg: String| SqlFileError::new(file, Some(name), Some(line), msg);
    let db = Connection::open_in_memory().map_err(|e| SqlFileError::new(file, None, None, format!("SQLite: {e}")))?;
    for s in statements.schema() {
        db.execute(&s.sqlite(), []).map_err(|e| err(&s.name, s.line, format!("SQLite says: {e}")))?;
    }
    for s in statements.statements.iter().filter(|s| !s.name.starts_with(crate::SCHEMA_PREFIX)) {
        let prepared = db.prepare(&s.sqlite()).map_err(|e| err(&s.name, s.line, format!("SQLite says: {e}")))?;
        let counted = prepared.parameter_count();
        if counted != s.param_count {
            let msg = format!("SQLite counts {counted} parameter(s), the file's placeholders {}", s.param_count);
            return Err(err(&s.name, s.line, msg));
        }
    }
    Ok(())
}

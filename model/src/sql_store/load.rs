//! Loading a statements file for the runs of a process: parsed, linted and prepared on
//! SQLite once (a file that fails any of it is refused before anything runs, naming the
//! statement), then kept for every run with the same text. The cache holds no state of any
//! run: each run's changes are rolled back when it ends, and the next run on the thread
//! takes the connection as the schema's image left it, its statements still prepared.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use sutra_sql::{SqlFileError, Statement, Statements};

use super::careless::Careless;
use super::section::StoreSection;

/// A checked file and the careless alternatives, ready for runs.
pub struct Loaded {
    /// The checked statements file.
    pub statements: Statements,
    /// The careless alternatives, by kind.
    pub careless: BTreeMap<Careless, Statement>,
    /// The database as the schema leaves it, each run's starting copy (see
    /// [`super::engine::schema_image`]); `None`: each run runs the schema.
    pub image: Option<Vec<u8>>,
    /// The connection the last run rolled back, kept for the next run (see
    /// [`super::engine`]'s `fresh_connection`).
    pub spare: RefCell<Option<rusqlite::Connection>>,
}

thread_local! {
    /// The last file loaded on this thread, by its text.
    static LAST: RefCell<Option<(Option<String>, Rc<Loaded>)>> = const { RefCell::new(None) };
}

/// Parses and checks `section`'s statements (the built-in ones if it names none).
pub fn check(section: &StoreSection) -> Result<Rc<Loaded>, SqlFileError> {
    let key = section.sql_text.clone();
    if let Some(hit) = LAST.with(|l| l.borrow().as_ref().filter(|(k, _)| *k == key).map(|(_, v)| v.clone())) {
        return Ok(hit);
    }
    let statements = match &section.sql_text {
        Some(text) => Statements::parse(section.sql_name(), text)?,
        None => Statements::default(),
    };
    statements.check_on_sqlite()?;
    let careless = super::engine::careless_statements()?;
    let image = super::engine::schema_image(&statements);
    let loaded = Rc::new(Loaded { statements, careless, image, spare: RefCell::new(None) });
    LAST.with(|l| *l.borrow_mut() = Some((key, loaded.clone())));
    Ok(loaded)
}

/// A fresh engine for one run of a scenario with `section`.
pub fn engine(section: &StoreSection) -> super::SqlEngine {
    let loaded = check(section).expect("a scenario's statements were checked when it was loaded");
    super::SqlEngine::new(loaded)
}

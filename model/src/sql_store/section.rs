//! The scenario's `[store]` section: which engine runs the store's operations, and with
//! which statements. A scenario file names its statements file (`sql = "ours.sql"`,
//! relative to the scenario); at load the file's text is read into `sql_text`, which is
//! what every run uses and what a reproducer's inline scenario carries, so a reproducer
//! replays its SQL without the file.

use serde::{Deserialize, Serialize};

/// Which engine runs the store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StoreEngine {
    /// The Rust store over in-memory rows.
    #[default]
    Model,
    /// Every store operation as named SQL statements on an in-memory SQLite database.
    Sqlite,
    /// Both in lockstep: the model's store answers, SQLite runs the same operation, and
    /// any difference in outcome or row is a `store-divergence` verdict.
    Differential,
}

impl StoreEngine {
    /// Every engine, as `--store` takes them.
    pub const ALL: [StoreEngine; 3] = [StoreEngine::Model, StoreEngine::Sqlite, StoreEngine::Differential];

    /// Its name, as `--store` and `[store] engine` take it.
    pub fn name(self) -> &'static str {
        match self {
            StoreEngine::Model => "model",
            StoreEngine::Sqlite => "sqlite",
            StoreEngine::Differential => "differential",
        }
    }

    /// The engine called `name`.
    pub fn parse(name: &str) -> Result<StoreEngine, String> {
        StoreEngine::ALL
            .into_iter()
            .find(|e| e.name() == name)
            .ok_or_else(|| format!("unknown store engine {name:?}; known engines: model, sqlite, differential"))
    }

    /// True if SQLite runs (alone or beside the model).
    pub fn runs_sql(self) -> bool {
        self != StoreEngine::Model
    }
}

/// The `[store]` section.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreSection {
    /// `model` (the default), `sqlite` or `differential`.
    pub engine: StoreEngine,
    /// The statements file, relative to the scenario file; read into `sql_text` at load.
    /// Absent: the built-in statements (`sql/statements.sql`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sql: Option<String>,
    /// The statements file's text, carried inline (a reproducer needs nothing else).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sql_text: Option<String>,
}

impl StoreSection {
    /// True when the section says nothing (the model store, no statements).
    pub fn is_default(&self) -> bool {
        *self == StoreSection::default()
    }

    /// The name of the statements file, for messages.
    pub fn sql_name(&self) -> &str {
        match (&self.sql, &self.sql_text) {
            (Some(name), _) => name,
            (None, Some(_)) => "store.sql_text",
            (None, None) => sutra_sql::DEFAULT_FILE_NAME,
        }
    }
}

impl StoreSection {
    /// Replaces an override file's text (`-- base: default`, holding only the statements
    /// it changes) by the whole file it stands for, the default with its statements in
    /// place: the text every run uses and a reproducer carries, so a replay does not
    /// depend on the default of the day. A whole file stays as it is.
    pub fn layer(&mut self) -> Result<(), String> {
        let Some(text) = &self.sql_text else { return Ok(()) };
        let name = self.sql_name();
        let layered = sutra_sql::effective(name, text).map_err(|e| format!("store.sql: {e}"))?;
        if let std::borrow::Cow::Owned(whole) = layered {
            // Checked here, while its messages can still point into the override file; the
            // layered text is checked again as any file when the scenario validates.
            let checked = sutra_sql::Statements::parse(name, text).and_then(|s| s.check_on_sqlite());
            checked.map_err(|e| format!("store.sql: {e}"))?;
            self.sql_text = Some(whole);
        }
        Ok(())
    }

    /// Refuses a statements file that fails to load — parse, lint, SQLite's prepare —
    /// naming the statement and quoting SQLite. Nothing has run yet.
    pub fn validate(&self) -> Result<(), String> {
        if !self.engine.runs_sql() && self.sql_text.is_none() {
            return Ok(());
        }
        super::load::check(self).map(|_| ()).map_err(|e| format!("store.sql: {e}"))
    }
}

/// Reads the statements file `section` names (relative to the scenario file `origin`)
/// into `sql_text`, unless the text is already inline, an override file layered over the
/// default ([`StoreSection::layer`]). Bounded: a file past
/// [`sutra_sql::FILE_BYTES_MAX`] is refused.
pub fn read_sql_file(section: &mut StoreSection, origin: &str) -> Result<(), String> {
    if let Some(name) = section.sql.as_ref().filter(|_| section.sql_text.is_none()) {
        let base = std::path::Path::new(origin).parent().unwrap_or(std::path::Path::new(""));
        let path = base.join(name);
        section.sql_text = Some(read_bounded(&path).map_err(|e| format!("{origin}: store.sql: {e}"))?);
    }
    section.layer().map_err(|e| format!("{origin}: {e}"))
}

/// The text of the statements file at `path`, refused past [`sutra_sql::FILE_BYTES_MAX`].
pub fn read_bounded(path: &std::path::Path) -> Result<String, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    let limit = sutra_sql::FILE_BYTES_MAX as u64 + 1;
    file.take(limit).read_to_end(&mut bytes).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() > sutra_sql::FILE_BYTES_MAX {
        return Err(format!("{} is larger than {} bytes", path.display(), sutra_sql::FILE_BYTES_MAX));
    }
    String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8 text", path.display()))
}

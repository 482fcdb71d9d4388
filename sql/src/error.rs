//! The one error a statements file can cause: which file, which statement, which line,
//! and what is wrong — in SQLite's own words when SQLite found it.

use std::fmt;

/// Why a statements file was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlFileError {
    /// The file's name, as the caller gave it.
    pub file: String,
    /// The statement at fault, if one is.
    pub statement: Option<String>,
    /// The 1-based line the statement (or the fault) starts at, if known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl SqlFileError {
    pub(crate) fn new(file: &str, statement: Option<&str>, line: Option<usize>, message: impl Into<String>) -> Self {
        SqlFileError { file: file.to_string(), statement: statement.map(str::to_string), line, message: message.into() }
    }
}

impl fmt::Display for SqlFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(name) = &self.statement {
            write!(f, ": statement `{name}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for SqlFileError {}

//! # sutra-sql: the claim store's statements, as data
//!
//! The claim store of spec 000 is a database row and a handful of conditional statements.
//! This crate holds them as one file of named statements ([`DEFAULT_FILE`], the text of
//! `sql/statements.sql`), so that the same SQL runs in two places: inside sutra-sim's
//! deterministic simulation (`--store sqlite`, every fault, every seed) and in the reference
//! runtime of `conformance/` (real threads, SQLite or PostgreSQL 15). A team can point either
//! at its own file; [`Statements::parse`] holds that file to the same contracts.
//!
//! ## The file
//! Blocks start with `-- name: NAME`; `-- rule: …` names the rule the statement serves;
//! other `--` lines are comments; the rest is exactly one SQL statement (a trailing `;` is
//! allowed). Parameters are positional `$1`..`$n`, as PostgreSQL spells them
//! ([`Statement::postgres`]); [`Statement::sqlite`] renders `?n`. Statements named
//! `schema_…` create the tables, in file order. Every time is BIGINT nanoseconds of the
//! store's clock, bound by the caller; owner ids are opaque TEXT (R14).
//!
//! A file whose header says `-- base: default` is an override file: it holds only the
//! statements it replaces and [`layer::effective`] layers it over the default before any
//! other check; [`Statements::source`] is then the layered whole.
//!
//! ## The contracts (parameters in order → what comes back)
//! | statement | parameters | returns | rule |
//! |---|---|---|---|
//! | `lease_create` | — | — (the free lease row) | R18 |
//! | `instance_create` | instance, steps | — | R2 |
//! | `plan_create` | instance, step, trigger (`relay`/`timer`/`pull`) | — | R25 |
//! | `claim` | instance, owner, now, claim timeout, claimant's clock | the row granted: owner, epoch, version, parked, prev_owner, prev_claimed_at; none = refused | R2, R10, R21 |
//! | `read` | instance | version, steps, owner, epoch, parked | R1, R3 |
//! | `commit` | instance, owner, based-on version, release (1/0) | version, steps, owner, epoch, parked, prev_owner, prev_version, next_trigger; none = rejected | R8, R19 |
//! | `step_forget` / `step_record` | instance, based-on (, epoch) | — | R8, R19 |
//! | `timer_clear` / `task_clear` | instance | — | R25, R17 |
//! | `timer_schedule` | instance, expects, due | — | R5 |
//! | `task_park` | instance, expects | — | R17 |
//! | `outbox_put` | instance, expects, path | — | R4, R8 |
//! | `outbox_take` | — | seq, instance, expects, path (the oldest) | R4 |
//! | `release` / `migrate_commit` | instance, owner | version, epoch, parked; none = no match | R9, R22 / R6, R15 |
//! | `committed_under` | instance, based-on | epoch; none = not committed | R8, R19 |
//! | `lease_acquire` | process, now, expires | holder, expires, prev_holder, prev_expires; none = held by another | R18 |
//! | `lease_held` | process, now | holder; none = not held | R18 |
//! | `sweep` | process, now, claim timeout, caller's cutoff | id, prev_owner, epoch, claimed_at, version, parked per cleared claim | R18, R14 |
//! | `sweep_select` | now, claim timeout, caller's cutoff | id, epoch, ORDER BY id | R18 |
//! | `sweep_clear` | instance, epoch, process, now, claim timeout, caller's cutoff | like `sweep`, one row; none = missed | R18, R19 |
//! | `timer_due` | now, limit | instance, expects, due, attempt, ORDER BY instance | R5 |
//! | `timer_pick` | instance, now, hidden until | instance, expects, attempt | R5 |
//! | `timer_refuse` | instance, expects, refused (1/0) | attempt | R5 |
//! | `timer_defer` | instance, expects, due | attempt, due | R5 |
//! | `task_lock` | worker, now, locked until | instance, expects | R17 |
//! | `task_complete` | worker, instance, expects, now | instance, expects (the outbox row) | R17 |
//!
//! A statement may use a leading run of its parameters and leave the rest out (the default
//! `claim` ignores the claimant's clock: staleness is the store's to judge); it may not use
//! more, nor skip one (PostgreSQL could not type the gap).
//!
//! ## What the loader refuses
//! A missing statement, an unknown name, two statements under one name, more than one
//! statement in a block, a placeholder past the contract or a gap, and anything
//! nondeterministic ([`lint`]): a clock or random function, several rows without ORDER BY,
//! LIMIT without ORDER BY. [`Statements::check_on_sqlite`] then prepares every statement
//! on a fresh in-memory database (after its schema), quoting SQLite's message on failure.

mod contract;
mod error;
pub mod layer;
pub mod lint;
mod scan;
mod sqlite;
mod tune;

pub use contract::{contract_of, Contract, Returns, CONFORMANCE_ONLY, CONTRACTS, SCHEMA_PREFIX};
pub use error::SqlFileError;
pub use layer::effective;
pub use tune::tune_sqlite;

use std::borrow::Cow;

use scan::Token;

/// The default statements file, shipped with the crate.
pub const DEFAULT_FILE: &str = include_str!("../statements.sql");

/// The name the default file goes by in messages.
pub const DEFAULT_FILE_NAME: &str = "statements.sql (built in)";

/// Files larger than this are refused unread past it: no unbounded reads.
pub const FILE_BYTES_MAX: usize = 1 << 20;

/// One named statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    /// Its name.
    pub name: String,
    /// Its rule comment (`-- rule:`), empty if none.
    pub rule: String,
    /// The 1-based line of its `-- name:`.
    pub line: usize,
    /// The SQL as written, comments and the trailing `;` removed, `$n` placeholders.
    pub text: String,
    /// The highest placeholder it uses (0: none).
    pub param_count: usize,
    /// The text for SQLite, rendered once at load.
    sqlite_text: String,
    /// Its contract.
    pub contract: Contract,
}

impl Statement {
    /// The text for PostgreSQL (`$n` placeholders, as written).
    pub fn postgres(&self) -> &str {
        &self.text
    }

    /// The leading run of `params` (all a caller has, in contract order) that this
    /// statement uses: what to bind.
    pub fn bound<'a, T>(&self, params: &'a [T]) -> &'a [T] {
        &params[..self.param_count.min(params.len())]
    }

    /// The text for SQLite: `$n` rendered `?n`, literals and comments untouched.
    pub fn sqlite(&self) -> &str {
        &self.sqlite_text
    }
}

/// `text` with `$n` rendered `?n`, literals and comments untouched.
fn render_sqlite(text: &str) -> String {
    {
        scan::tokens(text)
            .into_iter()
            .map(|t| match t {
                Token::Placeholder(n) => format!("?{n}"),
                Token::Word(w) => w,
                Token::Punct(c) => c.to_string(),
                Token::Opaque(s) | Token::Space(s) => s,
            })
            .collect()
    }
}

/// A checked statements file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statements {
    /// The file's name, for messages.
    pub file: String,
    /// The file's text as it runs (a reproducer carries it): verbatim, or for an override
    /// file the default with its statements in place.
    pub source: String,
    /// Its statements, in file order.
    pub statements: Vec<Statement>,
}

impl Default for Statements {
    fn default() -> Self {
        Statements::parse(DEFAULT_FILE_NAME, DEFAULT_FILE).expect("the built-in statements file is valid")
    }
}

impl Statements {
    /// Parses and checks `text`, the file called `file` (for messages): every statement
    /// the store needs is there once, names are known, one statement per block, placeholders
    /// within the contract, nothing nondeterministic. SQLite's own check is
    /// [`Statements::check_on_sqlite`].
    pub fn parse(file: &str, text: &str) -> Result<Statements, SqlFileError> {
        if text.len() > FILE_BYTES_MAX {
            return Err(SqlFileError::new(file, None, None, format!("larger than {FILE_BYTES_MAX} bytes")));
        }
        let layered = layer::effective(file, text)?;
        let mut statements: Vec<Statement> = Vec::new();
        for block in blocks(file, &layered)? {
            if let Some(first) = statements.iter().find(|s| s.name == block.name) {
                let msg = format!("named twice (first at line {})", first.line);
                return Err(SqlFileError::new(file, Some(&block.name), Some(block.line), msg));
            }
            statements.push(statement(file, block)?);
        }
        for contract in CONTRACTS.iter().filter(|c| !CONFORMANCE_ONLY.contains(&c.name)) {
            if !statements.iter().any(|s| s.name == contract.name) {
                let msg = format!("missing (rule {}): the store cannot run without it", contract.rule);
                return Err(SqlFileError::new(file, Some(contract.name), None, msg));
            }
        }
        if let Cow::Owned(_) = layered {
            point_at_overrides(&mut statements, text);
        }
        Ok(Statements { file: file.to_string(), source: layered.into_owned(), statements })
    }

    /// The statement called `name`.
    pub fn get(&self, name: &str) -> Option<&Statement> {
        self.statements.iter().find(|s| s.name == name)
    }

    /// The schema statements, in file order.
    pub fn schema(&self) -> impl Iterator<Item = &Statement> {
        self.statements.iter().filter(|s| s.name.starts_with(SCHEMA_PREFIX))
    }

    /// A copy with the statement `name` replaced by `text` (a design variant or a mutant
    /// that is a different SQL choice), checked like the rest of the file.
    pub fn with_replaced(&self, name: &str, text: &str) -> Result<Statements, SqlFileError> {
        let line = self.get(name).map_or(0, |s| s.line);
        let block = Block { name: name.to_string(), rule: String::new(), line, body: text.to_string() };
        let replacement = statement(&self.file, block)?;
        let mut out = self.clone();
        let slot = out.statements.iter_mut().find(|s| s.name == name);
        let slot = slot.ok_or_else(|| SqlFileError::new(&self.file, Some(name), None, "no such statement"))?;
        *slot = replacement;
        Ok(out)
    }

    /// Prepares every statement on a fresh in-memory SQLite database after running the
    /// schema, and checks SQLite counts the same parameters: the file's syntax, its tables
    /// and columns, judged by SQLite itself, before anything runs.
    pub fn check_on_sqlite(&self) -> Result<(), SqlFileError> {
        sqlite::check(self)
    }
}

/// Gives each statement an override file replaced the line of its block in that file (the
/// file the messages name), not its line in the layered text.
fn point_at_overrides(statements: &mut [Statement], override_text: &str) {
    let Ok(overrides) = blocks("", override_text) else { return };
    for block in overrides {
        if let Some(s) = statements.iter_mut().find(|s| s.name == block.name) {
            s.line = block.line;
        }
    }
}

/// One `-- name:` block, before its checks.
#[derive(Clone)]
struct Block {
    name: String,
    rule: String,
    line: usize,
    body: String,
}

/// Splits `text` into its named blocks.
fn blocks(file: &str, text: &str) -> Result<Vec<Block>, SqlFileError> {
    let mut out: Vec<Block> = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if let Some(name) = line.strip_prefix("-- name:") {
            let name = name.trim();
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(SqlFileError::new(file, None, Some(index + 1), format!("bad statement name `{name}`")));
            }
            out.push(Block { name: name.to_string(), rule: String::new(), line: index + 1, body: String::new() });
            continue;
        }
        match out.last_mut() {
            Some(block) => {
                if let Some(rule) = line.strip_prefix("-- rule:") {
                    block.rule = rule.trim().to_string();
                }
                block.body.push_str(raw);
                block.body.push('\n');
            }
            None if line.is_empty() || line.starts_with("--") => {}
            None => {
                let msg = "SQL before the first `-- name:` line belongs to no statement";
                return Err(SqlFileError::new(file, None, Some(index + 1), msg));
            }
        }
    }
    Ok(out)
}

/// Checks one block and makes it a statement.
fn statement(file: &str, block: Block) -> Result<Statement, SqlFileError> {
    let Block { name, rule, line, body } = block;
    let err = |msg: String| SqlFileError::new(file, Some(&name), Some(line), msg);
    let contract = contract_of(&name).ok_or_else(|| err("not a statement the store runs".into()))?;
    let text = code_only(&body);
    if text.is_empty() {
        return Err(err("has no SQL".into()));
    }
    let tokens = scan::tokens(&text);
    if tokens.contains(&Token::Punct(';')) {
        return Err(err("holds more than one statement: give each its own `-- name:`".into()));
    }
    if tokens.contains(&Token::Punct('?')) {
        return Err(err("uses `?` placeholders: write `$1`..`$n`".into()));
    }
    let used: Vec<usize> =
        tokens.iter().filter_map(|t| if let Token::Placeholder(n) = t { Some(*n as usize) } else { None }).collect();
    let param_count = used.iter().copied().max().unwrap_or(0);
    check_params(&used, param_count, &contract).map_err(err)?;
    if let Some(why) = lint::nondeterminism(&tokens, &contract) {
        return Err(err(why));
    }
    let sqlite_text = render_sqlite(&text);
    Ok(Statement { name, rule, line, text, param_count, sqlite_text, contract })
}

/// The placeholders `used` (highest `count`) fit `contract`: none past its parameters,
/// none skipped.
fn check_params(used: &[usize], count: usize, contract: &Contract) -> Result<(), String> {
    let allowed = contract.params.len();
    if count > allowed {
        let names = if allowed == 0 { "none".to_string() } else { contract.params.join(", ") };
        return Err(format!("uses ${count}, but takes {allowed} parameter(s): {names}"));
    }
    if let Some(gap) = (1..=count).find(|n| !used.contains(n)) {
        return Err(format!("uses ${count} but not ${gap}: parameters must be a leading run $1..$n"));
    }
    Ok(())
}

/// The block's SQL: comment lines dropped, trimmed, one trailing `;` removed.
fn code_only(body: &str) -> String {
    let kept: Vec<&str> = body.lines().filter(|l| !l.trim_start().starts_with("--")).collect();
    let text = kept.join("\n");
    let text = text.trim();
    text.strip_suffix(';').unwrap_or(text).trim_end().to_string()
}

#[cfg(test)]
mod tests;

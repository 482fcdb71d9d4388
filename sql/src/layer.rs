//! Override files: a statements file whose header says `-- base: default` holds only the
//! statements it changes, and is layered over the built-in default ([`crate::DEFAULT_FILE`])
//! before anything else looks at it. A design variant or a team's one-predicate change then
//! says what it changes and nothing else, instead of repeating the other thirty statements
//! (copies that drift when the default moves on).
//!
//! The result of layering is a whole file: the default's text with each overridden block
//! (from its `-- name:` line to its last line of SQL) replaced by the override's block, the
//! override's header comments on top. That text is what runs and what a scenario carries
//! inline, so a reproducer replays the SQL it ran even if the default changes afterwards.
//! A file without the directive is a whole file and must be complete, as before.

use std::borrow::Cow;

use crate::{blocks, statement, Block, SqlFileError, DEFAULT_FILE, DEFAULT_FILE_NAME};

/// The header directive that makes a file an override file.
pub const BASE_DIRECTIVE: &str = "-- base:";

/// The one base an override file may name.
pub const DEFAULT_BASE: &str = "default";

/// The first line of a layered file's text, before the names of its overrides.
pub const LAYERED_MARK: &str = "-- Layered statements:";

/// `text` (the file called `file`) as a whole statements file: itself when its header
/// has no `-- base:` line, else the default with the file's statements in place of the
/// default's. An override is checked on its own first — a name the default lacks, a name
/// given twice, and the per-statement checks (parameters, determinism) refuse it with the
/// override file's line.
pub fn effective<'a>(file: &str, text: &'a str) -> Result<Cow<'a, str>, SqlFileError> {
    let Some((line, base)) = base_directive(text) else {
        return Ok(Cow::Borrowed(text));
    };
    if base != DEFAULT_BASE {
        let msg = format!("`{BASE_DIRECTIVE} {base}`: the only base is `{DEFAULT_BASE}`, the built-in statements");
        return Err(SqlFileError::new(file, None, Some(line), msg));
    }
    let overrides = checked_overrides(file, text)?;
    Ok(Cow::Owned(splice(file, text, &overrides)))
}

/// The line and value of the header's `-- base:` directive, if the file has one.
fn base_directive(text: &str) -> Option<(usize, &str)> {
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.starts_with("-- name:") {
            return None;
        }
        if let Some(base) = line.strip_prefix(BASE_DIRECTIVE) {
            return Some((index + 1, base.trim()));
        }
    }
    None
}

/// The override file's blocks, each checked: one the default has, named once, valid on its
/// own.
fn checked_overrides(file: &str, text: &str) -> Result<Vec<Block>, SqlFileError> {
    let default = blocks(DEFAULT_FILE_NAME, DEFAULT_FILE)?;
    let overrides = blocks(file, text)?;
    if overrides.is_empty() {
        return Err(SqlFileError::new(file, None, None, "an override file with no statement overrides nothing"));
    }
    for (k, block) in overrides.iter().enumerate() {
        let err = |msg: String| SqlFileError::new(file, Some(&block.name), Some(block.line), msg);
        if let Some(first) = overrides[..k].iter().find(|b| b.name == block.name) {
            return Err(err(format!("named twice (first at line {})", first.line)));
        }
        if !default.iter().any(|d| d.name == block.name) {
            let msg = "overrides a statement the built-in default does not have: an override file \
                       (`-- base: default`) may only replace the default's statements";
            return Err(err(msg.into()));
        }
        statement(file, block.clone())?;
    }
    Ok(overrides)
}

/// The default's text with each of `overrides` in place of the default's block of its name,
/// under a header naming `file` and what it replaced.
fn splice(file: &str, text: &str, overrides: &[Block]) -> String {
    let names: Vec<&str> = overrides.iter().map(|b| b.name.as_str()).collect();
    let mut out = format!(
        "{LAYERED_MARK} {DEFAULT_FILE_NAME} with these statements of {file} in place of its own: {}.\n",
        names.join(", ")
    );
    out.push_str("-- This whole text is what ran: a reproducer replays it without either file.\n");
    for raw in text.lines().take_while(|l| !l.trim().starts_with("-- name:")) {
        if !raw.trim().starts_with(BASE_DIRECTIVE) {
            out.push_str(raw);
            out.push('\n');
        }
    }
    let default_lines: Vec<&str> = DEFAULT_FILE.lines().collect();
    let override_lines: Vec<&str> = text.lines().collect();
    let default = blocks(DEFAULT_FILE_NAME, DEFAULT_FILE).expect("the built-in statements file is valid");
    let mut next = 0;
    for block in &default {
        let Some(over) = overrides.iter().find(|o| o.name == block.name) else { continue };
        let start = block.line - 1;
        push_lines(&mut out, &default_lines[next..start]);
        push_lines(&mut out, &override_lines[over.line - 1..last_code_line(over)]);
        next = last_code_line(block);
    }
    push_lines(&mut out, &default_lines[next..]);
    out
}

/// One past the 0-based index of the block's last line of SQL (its `-- name:` line if it
/// has none): the comments after it belong to what follows.
fn last_code_line(block: &Block) -> usize {
    let body_lines = block.body.lines().enumerate();
    let last = body_lines.filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with("--")).last();
    block.line + last.map_or(0, |(k, _)| k + 1)
}

fn push_lines(out: &mut String, lines: &[&str]) {
    for line in lines {
        out.push_str(line);
        out.push('\n');
    }
}

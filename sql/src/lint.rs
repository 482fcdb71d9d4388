//! The determinism lint: nothing nondeterministic may reach a decision of the store. A
//! statement that reads a clock or draws a random number is refused (the store's time is
//! always a bound parameter), and so is a statement that can return several rows, or pick
//! one with LIMIT, in an order the database is free to choose.

use crate::contract::{Contract, Returns};
use crate::scan::{words_and_calls, Token};

/// Functions whose result depends on a clock, a random source or the connection's history.
const NONDETERMINISTIC_CALLS: &[&str] = &[
    "random",
    "randomblob",
    "now",
    "date",
    "time",
    "datetime",
    "julianday",
    "unixepoch",
    "strftime",
    "timediff",
    "clock_timestamp",
    "statement_timestamp",
    "transaction_timestamp",
    "timeofday",
    "gen_random_uuid",
    "uuid_generate_v4",
    "setseed",
    "changes",
    "total_changes",
    "last_insert_rowid",
];

/// Keywords that read the clock without parentheses.
const CLOCK_KEYWORDS: &[&str] = &["current_timestamp", "current_date", "current_time", "localtime", "localtimestamp"];

/// Why `tokens`, the statement of `contract`, could decide differently on two runs of
/// the same seed; `None` if it cannot.
pub fn nondeterminism(tokens: &[Token], contract: &Contract) -> Option<String> {
    let words = words_and_calls(tokens);
    for &(word, called) in &words {
        if called && NONDETERMINISTIC_CALLS.contains(&word) {
            return Some(format!(
                "calls {word}(), which is not deterministic: bind the store's time as a parameter instead"
            ));
        }
        if CLOCK_KEYWORDS.contains(&word) {
            return Some(format!("reads {word}, the database's clock: bind the store's time as a parameter instead"));
        }
    }
    let ordered = words.windows(2).any(|w| w[0].0 == "order" && w[1].0 == "by");
    let is_select = words.first().is_some_and(|(w, _)| *w == "select" || *w == "with");
    if contract.returns == Returns::Rows && is_select && !ordered {
        return Some("returns several rows without ORDER BY: their order would be the database's choice".into());
    }
    if words.iter().any(|(w, _)| *w == "limit") && !ordered {
        return Some("LIMIT without ORDER BY: which rows it keeps would be the database's choice".into());
    }
    None
}

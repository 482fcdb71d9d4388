//! Process-wide SQLite settings that change no answer, only what SQLite spends: it keeps
//! no memory statistics (by default every allocation and free takes a global mutex to count
//! bytes, a quarter of the SQL engine's allocation cost), so many short runs, each with its
//! own connection, pay less. SQLite takes such settings only before its first use in the
//! process; after that the call is refused and changes nothing, which is also correct.

use std::sync::Once;

static TUNED: Once = Once::new();

/// Applies the settings if SQLite has not been used yet in this process. Call it before
/// opening a connection.
pub fn tune_sqlite() {
    TUNED.call_once(|| {
        // SAFETY: sqlite3_config with SQLITE_CONFIG_MEMSTATUS takes one int; before
        // sqlite3_initialize it only sets a flag, after it returns SQLITE_MISUSE and does
        // nothing. `Once` keeps two threads from calling it at the same time.
        let _ = unsafe { rusqlite::ffi::sqlite3_config(rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS, 0 as std::ffi::c_int) };
    });
}

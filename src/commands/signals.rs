//! Stop requests: SIGINT and SIGTERM end a sweep early, and the exit code says so.
//!
//! The first signal asks the sweep (and the shrinking and saving after it) to stop: seeds
//! in flight finish, the report and the failures found so far are written, and the exit
//! code is 1 if a failure was found, otherwise 128 + the signal (130 for SIGINT, 143 for
//! SIGTERM), so CI never mistakes an interrupted sweep for a green one. A second signal
//! ends the process at once with that code: a user pressing Ctrl-C twice means it — after
//! removing any temporary file being written ([`sutra_sim::temporary`]), so that none is
//! left hidden in a save directory. The handlers only touch atomics, `unlink` and `_exit`,
//! all async-signal-safe.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// Set by the first SIGINT or SIGTERM.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// The first signal received, 0 for none.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// SIGINT's number, for platforms where `ctrlc` reports no number.
const SIGINT: i32 = 2;

/// Installs the handlers. Call once, before the work that the signals stop.
pub fn install() {
    #[cfg(unix)]
    {
        extern "C" fn on_signal(signal: libc::c_int) {
            if SIGNAL.swap(signal, Ordering::SeqCst) != 0 {
                // A file being written atomically now would leave its temporary behind.
                sutra_sim::temporary::remove_all();
                // SAFETY: `_exit` is async-signal-safe; it ends the process without
                // running anything else.
                unsafe { libc::_exit(128 + signal) };
            }
            STOP.store(true, Ordering::SeqCst);
        }
        for signal in [libc::SIGINT, libc::SIGTERM] {
            // SAFETY: the handler only touches atomics and calls `_exit`, both
            // async-signal-safe; `signal` with a valid number and handler cannot fail
            // in a way that breaks memory safety.
            unsafe { libc::signal(signal, on_signal as *const () as libc::sighandler_t) };
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrlc::set_handler(|| {
            if SIGNAL.swap(SIGINT, Ordering::SeqCst) != 0 {
                sutra_sim::temporary::remove_all();
                std::process::exit(128 + SIGINT);
            }
            STOP.store(true, Ordering::SeqCst);
        });
    }
}

/// The exit code an interrupted command ends with when it found no failure: 128 + the
/// signal, or `None` if no signal came.
pub fn interrupted_exit_code() -> Option<u8> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(u8::try_from(128 + signal).unwrap_or(128 + SIGINT as u8)),
    }
}

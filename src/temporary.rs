//! Temporary files that a forced exit takes with it.
//!
//! Files are written atomically through a temporary file beside the target
//! ([`crate::files::write_atomically`]). A second Ctrl-C ends the process at once, from the
//! signal handler, and a temporary file being written at that moment would stay behind —
//! hidden, in a save directory that CI uploads and a later run lists. So every temporary
//! file is registered here for as long as it exists, and [`remove_all`] removes whatever is
//! registered: the handler calls it just before it exits. It only touches atomics and calls
//! `unlink`, both async-signal-safe.
//!
//! The registry is a fixed array of slots (no allocation, no lock), each a path as
//! NUL-terminated bytes and a state: free, filling, live, or taken by the handler. A
//! slot's bytes are written only by the thread that moved it from free to filling, and
//! read only by the handler after it moved it from live to taken, so a path is never read
//! while it is written.

use std::cell::UnsafeCell;
use std::path::Path;
use std::sync::atomic::{AtomicU8, Ordering};

/// Temporary files that can be registered at once; one more waits for a slot to free.
/// A command writes its outputs one at a time; tests writing in parallel need a few more.
pub const SLOTS: usize = 32;

/// Longest path a slot holds, with its NUL; a longer path is not registered (and no file
/// system this runs on takes one: Linux's `PATH_MAX` is 4096).
pub const PATH_BYTES: usize = 4096;

const FREE: u8 = 0;
const FILLING: u8 = 1;
const LIVE: u8 = 2;
const TAKEN: u8 = 3;

struct Slot {
    state: AtomicU8,
    /// The path, NUL-terminated. Invariant: written only in state FILLING, by the thread
    /// that set it; read only in state TAKEN, by the thread that set it.
    path: UnsafeCell<[u8; PATH_BYTES]>,
}

// SAFETY: access to `path` is serialised by `state` (see the field's invariant).
unsafe impl Sync for Slot {}

/// The slots. One per process ([`register`], [`remove_all`]); tests make their own.
struct Registry {
    slots: [Slot; SLOTS],
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Slot = Slot { state: AtomicU8::new(FREE), path: UnsafeCell::new([0; PATH_BYTES]) };

static REGISTRY: Registry = Registry::new();

/// A registered temporary file: dropping it unregisters the path (after the file was
/// renamed away or removed).
#[must_use = "the path is unregistered when this drops"]
pub struct Registration {
    registry: &'static Registry,
    slot: Option<usize>,
}

/// Registers `path` as a temporary file about to be created, so that [`remove_all`]
/// removes it if the process is forced to end while it exists. Waits for a free slot if
/// all [`SLOTS`] are in use.
pub fn register(path: &Path) -> Registration {
    Registration { registry: &REGISTRY, slot: REGISTRY.register(path) }
}

/// Removes every registered temporary file. Async-signal-safe: for the handler of a
/// signal that ends the process at once.
pub fn remove_all() {
    REGISTRY.remove_all();
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            self.registry.release(i);
        }
    }
}

impl Registry {
    const fn new() -> Registry {
        Registry { slots: [EMPTY; SLOTS] }
    }

    /// The slot now holding `path`; none for a path no slot can hold.
    fn register(&self, path: &Path) -> Option<usize> {
        let bytes = path_bytes(path).filter(|b| b.len() < PATH_BYTES && !b.contains(&0))?;
        loop {
            for (i, slot) in self.slots.iter().enumerate() {
                if slot.state.compare_exchange(FREE, FILLING, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                    // SAFETY: this thread moved the slot to FILLING; nobody else touches `path`.
                    let buffer = unsafe { &mut *slot.path.get() };
                    buffer[..bytes.len()].copy_from_slice(&bytes);
                    buffer[bytes.len()] = 0;
                    slot.state.store(LIVE, Ordering::Release);
                    return Some(i);
                }
            }
            std::thread::yield_now();
        }
    }

    fn release(&self, i: usize) {
        // If the handler took the slot, the process is ending; the slot stays taken.
        let _ = self.slots[i].state.compare_exchange(LIVE, FREE, Ordering::Release, Ordering::Relaxed);
    }

    fn remove_all(&self) {
        for slot in &self.slots {
            if slot.state.compare_exchange(LIVE, TAKEN, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                // SAFETY: this thread moved the slot to TAKEN; nobody writes `path` any more.
                let buffer = unsafe { &*slot.path.get() };
                unlink(buffer);
            }
        }
    }
}

#[cfg(unix)]
fn path_bytes(path: &Path) -> Option<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    Some(path.as_os_str().as_bytes().to_vec())
}

#[cfg(not(unix))]
fn path_bytes(path: &Path) -> Option<Vec<u8>> {
    path.to_str().map(|s| s.as_bytes().to_vec())
}

#[cfg(unix)]
fn unlink(nul_terminated: &[u8; PATH_BYTES]) {
    // SAFETY: the buffer holds a NUL-terminated path (written before the slot went LIVE).
    unsafe { libc::unlink(nul_terminated.as_ptr().cast()) };
}

#[cfg(not(unix))]
fn unlink(nul_terminated: &[u8; PATH_BYTES]) {
    // Elsewhere the stop request runs on an ordinary thread (`ctrlc`), not in a handler.
    let end = nul_terminated.iter().position(|&b| b == 0).unwrap_or(0);
    if let Ok(path) = std::str::from_utf8(&nul_terminated[..end]) {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registered_file_is_removed_and_a_released_one_is_not() {
        let dir = crate::test_scratch::Scratch::new("temporary");
        let kept = dir.join(".kept.tmp");
        let gone = dir.join(".gone.tmp");
        // A registry of the test's own: the process's one holds other tests' files.
        let registry = Box::new(Registry::new());
        let released = registry.register(&kept).unwrap();
        std::fs::write(&kept, b"renamed away, say").unwrap();
        registry.release(released);
        registry.register(&gone).unwrap();
        std::fs::write(&gone, b"half written").unwrap();
        registry.remove_all();
        assert!(!gone.exists(), "the registered file was removed");
        assert!(kept.exists(), "a released path is not touched");
    }
}

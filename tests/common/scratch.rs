//! A scratch directory that removes itself. Every test that needs files gets one of its
//! own in the system's temporary directory, and the guard's drop takes it away with
//! everything in it — when the test passes, and when it fails too (the drop runs while the
//! failing test unwinds) — so a test run leaves nothing behind.
//!
//! One file, shared: the integration tests reach it through `tests/common`, the library's
//! unit tests through a `#[path]` module in `src/lib.rs`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// An empty directory of its own, removed on drop. Derefs to its [`Path`].
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    /// A fresh, empty `sutra-sim-{name}-{process id}` in the temporary directory (what a
    /// crashed earlier run of this process id left there is cleared first).
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("sutra-sim-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<OsStr> for Scratch {
    fn as_ref(&self) -> &OsStr {
        self.0.as_os_str()
    }
}

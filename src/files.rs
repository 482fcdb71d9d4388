//! Writing files so that nothing is lost, half-written or destroyed.
//!
//! A regular file is written atomically: a temporary file beside the target, flushed, then
//! renamed over it, so a reader sees the old file or the new one, never a torn one. But a
//! rename replaces whatever has the name, and a sweep run as root in a CI container with
//! `--report /dev/null` must not turn `/dev/null` into a plain file. So the rename is only
//! ever done over a regular file or over nothing, and the other kinds of target are
//! handled as a user would expect:
//!
//! - a **symbolic link is followed**: the file it points to is replaced atomically and the
//!   link stays a link (so `latest.json -> 2026-12-01.json` keeps working); a link that
//!   points nowhere is refused, since it is unclear what was meant;
//! - a **character device** (`/dev/null`, `/dev/stdout` on a terminal, `/dev/full`) is
//!   written into, like any program's output would be; its errors are reported;
//! - a **FIFO, socket, block device or directory** is refused: writing into a FIFO blocks
//!   until someone reads, and the others are never what a report path means.
//!
//! [`check_writable`] applies the same rules without writing anything, so that commands
//! can refuse a bad output path before the first seed runs (exit 2, nothing written)
//! instead of throwing a night's work away at the end.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// What an output path names, once symbolic links are followed.
enum Target {
    /// Nothing yet: a file will be created at this path.
    Missing(PathBuf),
    /// A regular file, replaced atomically.
    Regular(PathBuf),
    /// A character device, written into.
    Device(PathBuf),
}

/// Follows `path` to what it names, refusing what must never be replaced or written.
fn target(path: &Path) -> std::io::Result<Target> {
    let refuse = |why: String| std::io::Error::other(why);
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Target::Missing(path.to_path_buf())),
        Err(e) => return Err(e),
    };
    let (resolved, meta) = if meta.file_type().is_symlink() {
        let resolved = fs::canonicalize(path)
            .map_err(|e| refuse(format!("{} is a symbolic link to nothing usable ({e})", path.display())))?;
        let meta = fs::metadata(&resolved)?;
        (resolved, meta)
    } else {
        (path.to_path_buf(), meta)
    };
    let kind = meta.file_type();
    if kind.is_file() {
        return Ok(Target::Regular(resolved));
    }
    if kind.is_dir() {
        return Err(refuse(format!("{} is a directory, not a file", path.display())));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_char_device() {
            return Ok(Target::Device(resolved));
        }
        let what = if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_socket() {
            "a socket"
        } else if kind.is_block_device() {
            "a block device"
        } else {
            "not a regular file"
        };
        Err(refuse(format!("{} is {what}; sutra-sim writes only regular files and character devices", path.display())))
    }
    #[cfg(not(unix))]
    Err(refuse(format!("{} is not a regular file", path.display())))
}

/// The directory a new file at `path` goes into.
fn parent_of(path: &Path) -> &Path {
    path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// Writes `contents` to `path`: a regular file (or a new one) atomically — temporary
/// file, fsync, rename — following a symbolic link; a character device by writing into
/// it. FIFOs, sockets, block devices, directories and dangling links are refused, and
/// nothing but a regular file is ever renamed over (see the module docs).
pub fn write_atomically(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let file = match target(path)? {
        Target::Device(device) => {
            let mut f = fs::OpenOptions::new().write(true).open(device)?;
            f.write_all(contents)?;
            return f.flush();
        }
        Target::Missing(file) | Target::Regular(file) => file,
    };
    let dir = parent_of(&file);
    let name = file.file_name().ok_or_else(|| std::io::Error::other(format!("{} names no file", path.display())))?;
    let tmp = dir.join(format!(".{}.tmp-{}", name.to_string_lossy(), std::process::id()));
    // Until it is renamed or removed, a forced exit removes it (see `crate::temporary`).
    let _registered = crate::temporary::register(&tmp);
    let result = (|| {
        let mut f = fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(contents)?;
        f.sync_all()?;
        // Between the check above and this rename another process could put something
        // else at the name; sutra-sim never writes one name from two places.
        fs::rename(&tmp, &file)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Checks, without writing anything that stays, that [`write_atomically`] could write
/// `path`: its target is a regular file, a character device or nothing, and its directory
/// exists and takes a new file (tried by creating and removing an empty probe file, the
/// only test that also holds for root and for read-only mounts). Errors say what is wrong
/// with the path, for a usage error before any work is done.
pub fn check_writable(path: &Path) -> Result<(), String> {
    let fail = |why: String| format!("{}: {why}", path.display());
    match target(path).map_err(|e| fail(e.to_string()))? {
        Target::Device(device) => {
            fs::OpenOptions::new().write(true).open(device).map_err(|e| fail(format!("cannot write: {e}")))?;
            Ok(())
        }
        Target::Missing(file) | Target::Regular(file) => {
            let dir = parent_of(&file);
            if !dir.is_dir() {
                return Err(fail(format!("the directory {} does not exist", dir.display())));
            }
            probe_directory(dir).map_err(fail)
        }
    }
}

/// Checks that `dir` could hold new files once created: it is a directory that takes a new
/// file, or it does not exist yet and its nearest existing ancestor is such a directory
/// (nothing is created). For `--save-failures DIR`.
pub fn check_directory_writable(dir: &Path) -> Result<(), String> {
    let fail = |why: String| format!("{}: {why}", dir.display());
    let mut existing = dir;
    loop {
        match fs::metadata(existing) {
            Ok(meta) if meta.is_dir() => return probe_directory(existing).map_err(fail),
            Ok(_) => return Err(fail(format!("{} is not a directory", existing.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                existing = match existing.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p,
                    _ => Path::new("."),
                };
                if existing == Path::new(".") && fs::metadata(existing).is_err() {
                    return Err(fail("no existing directory to create it in".into()));
                }
            }
            Err(e) => return Err(fail(format!("cannot read {}: {e}", existing.display()))),
        }
    }
}

/// Creates and removes an empty file in `dir`.
fn probe_directory(dir: &Path) -> Result<(), String> {
    let probe = dir.join(format!(".sutra-sim-probe-{}", std::process::id()));
    let _registered = crate::temporary::register(&probe);
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map_err(|e| format!("cannot create files in {}: {e}", dir.display()))?;
    fs::remove_file(&probe).map_err(|e| format!("cannot remove the probe file {}: {e}", probe.display()))
}

/// What makes a path one file: its device and inode where it exists (so a symbolic link,
/// a hard link and another spelling of the path are all the same file), its canonical
/// directory and name where it does not yet (so `./r.json` and `r.json` are one).
#[derive(Debug, PartialEq, Eq)]
enum Identity {
    #[cfg(unix)]
    Inode {
        device: u64,
        inode: u64,
    },
    Path(PathBuf),
}

fn identity(path: &Path) -> Option<Identity> {
    #[cfg(unix)]
    if let Ok(meta) = fs::metadata(path) {
        use std::os::unix::fs::MetadataExt;
        return Some(Identity::Inode { device: meta.dev(), inode: meta.ino() });
    }
    let resolved = fs::canonicalize(path).ok().or_else(|| {
        let dir = fs::canonicalize(parent_of(path)).ok()?;
        Some(dir.join(path.file_name()?))
    })?;
    Some(Identity::Path(resolved))
}

/// True if `a` and `b` name the same file, through symbolic and hard links too (see
/// [`Identity`]): an output must never be another output, nor an input.
pub fn same_file(a: &Path, b: &Path) -> bool {
    a == b || matches!((identity(a), identity(b)), (Some(x), Some(y)) if x == y)
}

/// True if `path` names a character device (`/dev/null`, `/dev/stdout` on a terminal): a
/// stream that is written into, never replaced, so two outputs may share it.
pub fn is_device(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        fs::metadata(path).is_ok_and(|m| m.file_type().is_char_device())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// `path` made absolute and free of `.`, `..` and links as far as it exists, the rest
/// appended as written (so a directory not created yet still has a place).
fn resolved(path: &Path) -> PathBuf {
    let absolute = std::env::current_dir().map(|cwd| cwd.join(path)).unwrap_or_else(|_| path.to_path_buf());
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = fs::canonicalize(existing) {
            let mut out = real;
            for part in rest.iter().rev() {
                match part {
                    std::path::Component::ParentDir => {
                        out.pop();
                    }
                    std::path::Component::Normal(name) => out.push(name),
                    _ => {}
                }
            }
            return out;
        }
        match (existing.parent(), existing.components().next_back()) {
            (Some(parent), Some(last)) => {
                rest.push(last);
                existing = parent;
            }
            _ => return absolute,
        }
    }
}

/// True if `path` is `dir` or lies inside it, after following links (either may not exist
/// yet): a report must not land among a sweep's saved reproducers.
pub fn is_within(path: &Path, dir: &Path) -> bool {
    same_file(path, dir) || resolved(path).starts_with(resolved(dir))
}

/// Reads the file at `path`, but never more than `limit` bytes: a regular file larger than
/// that is refused before anything is read, and a file of unknown size (a FIFO, a device
/// such as `/dev/zero`) is read through [`Read::take`] one byte past the limit and refused
/// if that byte comes. `what` names the kind of file and `limit_name` the constant, for
/// the error: `sc.toml: more than 1048576 bytes, the most a scenario file may hold
/// (SCENARIO_BYTES_MAX)`.
pub fn read_bounded(path: &Path, limit: u64, what: &str, limit_name: &str) -> Result<Vec<u8>, String> {
    let shown = path.display();
    let too_big = || format!("{shown}: more than {limit} bytes, the most a {what} may hold ({limit_name})");
    let meta = fs::metadata(path).map_err(|e| format!("{shown}: cannot read: {e}"))?;
    if meta.is_dir() {
        return Err(format!("{shown}: is a directory, not a {what}"));
    }
    if meta.is_file() && meta.len() > limit {
        return Err(too_big());
    }
    let file = fs::File::open(path).map_err(|e| format!("{shown}: cannot read: {e}"))?;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes).map_err(|e| format!("{shown}: cannot read: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(too_big());
    }
    Ok(bytes)
}

/// As [`read_bounded`], as UTF-8 text.
pub fn read_text_bounded(path: &Path, limit: u64, what: &str, limit_name: &str) -> Result<String, String> {
    let bytes = read_bounded(path, limit, what, limit_name)?;
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "{}: not UTF-8 text (corrupted?): invalid byte at offset {}",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
}

/// Whether a regular file at `path` holds exactly `contents`, reading at most one byte more
/// than `contents` has; `None` if nothing is there or it is not a regular file (a device
/// such as `/dev/full` reads forever and is never "already there").
pub fn holds_exactly(path: &Path, contents: &[u8]) -> std::io::Result<Option<bool>> {
    match fs::metadata(path) {
        Ok(meta) if meta.is_file() => {
            if meta.len() != contents.len() as u64 {
                return Ok(Some(false));
            }
            let mut existing = Vec::new();
            fs::File::open(path)?.take(contents.len() as u64 + 1).read_to_end(&mut existing)?;
            Ok(Some(existing == contents))
        }
        Ok(_) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> crate::test_scratch::Scratch {
        crate::test_scratch::Scratch::new(&format!("files-{name}"))
    }

    #[test]
    fn writes_and_replaces_whole_files() {
        let dir = scratch("whole");
        let p = dir.join("report.json");
        write_atomically(&p, b"one").unwrap();
        write_atomically(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        let leftovers: Vec<_> =
            fs::read_dir(&dir).unwrap().filter(|e| e.as_ref().unwrap().file_name() != "report.json").collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn a_missing_directory_is_an_error_and_leaves_nothing() {
        let p = std::env::temp_dir().join("sutra-sim-no-such-dir-xyz").join("r.json");
        assert!(write_atomically(&p, b"x").is_err());
        assert!(check_writable(&p).unwrap_err().contains("does not exist"));
    }

    #[cfg(unix)]
    #[test]
    fn a_character_device_is_written_into_and_stays_a_device() {
        use std::os::unix::fs::FileTypeExt;
        let null = Path::new("/dev/null");
        check_writable(null).unwrap();
        write_atomically(null, b"into the void").unwrap();
        assert!(fs::symlink_metadata(null).unwrap().file_type().is_char_device());
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_is_followed_and_stays_a_link() {
        let dir = scratch("link");
        let real = dir.join("real.json");
        fs::write(&real, b"old").unwrap();
        let link = dir.join("latest.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        check_writable(&link).unwrap();
        write_atomically(&link, b"new").unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(fs::read(&real).unwrap(), b"new");
        let dangling = dir.join("dangling.json");
        std::os::unix::fs::symlink(dir.join("nowhere/x.json"), &dangling).unwrap();
        assert!(write_atomically(&dangling, b"x").is_err());
        assert!(check_writable(&dangling).is_err());
        assert!(fs::symlink_metadata(&dangling).unwrap().file_type().is_symlink());
    }

    #[test]
    fn a_directory_is_refused_and_left_alone() {
        let dir = scratch("dir");
        assert!(write_atomically(&dir, b"x").is_err());
        assert!(check_writable(&dir).unwrap_err().contains("directory"));
        assert!(dir.is_dir());
    }

    #[test]
    fn a_save_directory_may_be_missing_but_not_a_file() {
        let dir = scratch("save");
        check_directory_writable(&dir.join("a/b")).unwrap();
        assert!(!dir.join("a").exists(), "nothing is created");
        fs::write(dir.join("file"), b"").unwrap();
        assert!(check_directory_writable(&dir.join("file/sub")).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn links_of_one_file_are_the_same_file() {
        let dir = scratch("links");
        let real = dir.join("real.toml");
        fs::write(&real, b"x").unwrap();
        fs::hard_link(&real, dir.join("hard.toml")).unwrap();
        std::os::unix::fs::symlink(&real, dir.join("soft.toml")).unwrap();
        assert!(same_file(&real, &dir.join("hard.toml")));
        assert!(same_file(&dir.join("soft.toml"), &dir.join("hard.toml")));
        assert!(is_within(&dir.join("x/../y/r.json"), &dir.join("y")));
        assert!(!is_within(&dir.join("yy/r.json"), &dir.join("y")));
    }

    #[test]
    fn a_file_over_its_limit_is_refused_naming_the_limit() {
        let dir = scratch("limit");
        let p = dir.join("f");
        fs::write(&p, b"12345").unwrap();
        assert_eq!(read_bounded(&p, 5, "thing", "THING_MAX").unwrap(), b"12345");
        let err = read_bounded(&p, 4, "thing", "THING_MAX").unwrap_err();
        assert!(err.contains("more than 4 bytes") && err.contains("THING_MAX"), "{err}");
        #[cfg(unix)]
        assert!(read_bounded(Path::new("/dev/zero"), 1000, "thing", "THING_MAX").unwrap_err().contains("1000"));
    }

    #[test]
    fn two_spellings_of_one_path_are_the_same_file() {
        let dir = scratch("same");
        assert!(same_file(&dir.join("r.json"), &dir.join(".").join("r.json")));
        assert!(!same_file(&dir.join("r.json"), &dir.join("j.xml")));
    }
}

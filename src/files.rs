//! Writing files so that nothing is lost or half-written: a temporary file beside the
//! target, flushed, then renamed over it. A reader sees the old file or the new one, never
//! a torn one.

use std::fs;
use std::io::Write;
use std::path::Path;

/// Writes `contents` to `path` atomically (temporary file, fsync, rename).
pub fn write_atomically(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| std::io::Error::other(format!("{} names no file", path.display())))?;
    let tmp = dir.join(format!(".{}.tmp-{}", name.to_string_lossy(), std::process::id()));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(contents)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_replaces_whole_files() {
        let dir = std::env::temp_dir().join(format!("sutra-sim-files-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let p = dir.join("report.json");
        write_atomically(&p, b"one").unwrap();
        write_atomically(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        let leftovers: Vec<_> =
            fs::read_dir(&dir).unwrap().filter(|e| e.as_ref().unwrap().file_name() != "report.json").collect();
        assert!(leftovers.is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_directory_is_an_error_and_leaves_nothing() {
        let p = std::env::temp_dir().join("sutra-sim-no-such-dir-xyz").join("r.json");
        assert!(write_atomically(&p, b"x").is_err());
    }
}

//! Quoted outputs in the README and its docs pages, checked like snapshots. A fenced block
//! right after a line `<!-- tests/readme.rs regenerates this: COMMAND -->` is what COMMAND
//! prints; a test re-derives it and, on a mismatch, fails with a line diff. After a model
//! change moves a figure, `SUTRA_SIM_BLESS=1 cargo test --test readme` rewrites the blocks
//! from real runs instead (review the diff before committing it).
#![allow(dead_code)]

use std::path::Path;
use std::sync::Mutex;

/// The comment that introduces a quoted output.
const MARKER: &str = "<!-- tests/readme.rs regenerates this: ";

/// One quoted output: the command that prints it and the block's text.
pub struct Quoted {
    pub command: String,
    pub body: String,
}

/// Whether this run rewrites quoted outputs instead of checking them.
pub fn blessing() -> bool {
    std::env::var("SUTRA_SIM_BLESS").is_ok_and(|v| v == "1")
}

/// Whether this run re-derives even the outputs that take minutes in a debug build
/// (`SUTRA_SIM_README_FULL=1`, or blessing).
pub fn full() -> bool {
    blessing() || std::env::var("SUTRA_SIM_README_FULL").is_ok_and(|v| v == "1")
}

/// Every quoted output in `text`, in order, with the byte range of its body.
fn quoted_with_ranges(text: &str) -> Vec<(Quoted, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(MARKER) {
        let line_start = from + at + MARKER.len();
        let line_end = line_start + text[line_start..].find('\n').expect("a marker ends its line");
        let command = text[line_start..line_end].strip_suffix(" -->").expect("a marker ends with -->").trim();
        let fence_end = line_end + 1 + text[line_end + 1..].find('\n').expect("a fence follows the marker");
        assert!(text[line_end + 1..fence_end].starts_with("```"), "no fenced block after the marker for {command:?}");
        let body_start = fence_end + 1;
        let body_end = body_start + text[body_start..].find("```").expect("a closed fence");
        out.push((
            Quoted { command: command.to_string(), body: text[body_start..body_end].to_string() },
            body_start..body_end,
        ));
        from = body_end;
    }
    out
}

/// Every quoted output in `text`, in order.
pub fn quoted(text: &str) -> Vec<Quoted> {
    quoted_with_ranges(text).into_iter().map(|(q, _)| q).collect()
}

/// The one quoted output of `command` in the page at `path`.
pub fn quoted_in(path: &Path, command: &str) -> Quoted {
    let text = std::fs::read_to_string(path).unwrap();
    let mut found: Vec<Quoted> = quoted(&text).into_iter().filter(|q| q.command == command).collect();
    assert_eq!(found.len(), 1, "{} quotes `{command}` {} times, not once", path.display(), found.len());
    found.pop().unwrap()
}

/// Serialises rewrites: several tests may bless blocks of the same page.
static REWRITING: Mutex<()> = Mutex::new(());

/// Replaces the body of `command`'s quoted output in `path` with `body`.
pub fn rewrite(path: &Path, command: &str, body: &str) {
    let _guard = REWRITING.lock().unwrap_or_else(|e| e.into_inner());
    let text = std::fs::read_to_string(path).unwrap();
    let (_, range) = quoted_with_ranges(&text).into_iter().find(|(q, _)| q.command == command).unwrap();
    let body = if body.ends_with('\n') { body.to_string() } else { format!("{body}\n") };
    let new = format!("{}{body}{}", &text[..range.start], &text[range.end..]);
    std::fs::write(path, new).unwrap();
    eprintln!("blessed {}: `{command}`", path.display());
}

/// Checks that `command`'s quoted output in `path` is `got` (or, blessing, makes it so).
pub fn check_exact(path: &Path, command: &str, got: &str) {
    let want = quoted_in(path, command).body;
    if want == got {
        return;
    }
    if blessing() {
        return rewrite(path, command, got);
    }
    panic!(
        "{} quotes another output of `{command}` than it prints now (- quoted, + printed):\n{}\n\
         If the change is meant, refresh the quoted outputs: SUTRA_SIM_BLESS=1 cargo test --test readme",
        path.display(),
        line_diff(&want, got)
    );
}

/// A line diff of `want` against `got`: unchanged lines with two spaces, the rest with
/// `-` (only in `want`) or `+` (only in `got`), by a longest common subsequence.
pub fn line_diff(want: &str, got: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
    // common[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut common = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            common[i][j] = if a[i] == b[j] { common[i + 1][j + 1] + 1 } else { common[i + 1][j].max(common[i][j + 1]) };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            out += &format!("  {}\n", a[i]);
            (i, j) = (i + 1, j + 1);
        } else if i < a.len() && (j == b.len() || common[i + 1][j] >= common[i][j + 1]) {
            out += &format!("- {}\n", a[i]);
            i += 1;
        } else {
            out += &format!("+ {}\n", b[j]);
            j += 1;
        }
    }
    out
}

/// The first text in `haystack` that reads as `piece` with other figures (runs of digits)
/// in the places of `piece`'s: how a blessing finds a claim's new figures.
pub fn same_words_other_figures(haystack: &str, piece: &str) -> Option<String> {
    let (hay, want) = (haystack.as_bytes(), piece.as_bytes());
    (0..hay.len()).find_map(|start| {
        let (mut h, mut w) = (start, 0);
        while w < want.len() {
            if want[w].is_ascii_digit() {
                let digits = hay[h..].iter().take_while(|b| b.is_ascii_digit()).count();
                if digits == 0 {
                    return None;
                }
                h += digits;
                w += want[w..].iter().take_while(|b| b.is_ascii_digit()).count();
            } else if hay.get(h) == Some(&want[w]) {
                (h, w) = (h + 1, w + 1);
            } else {
                return None;
            }
        }
        Some(haystack[start..h].to_string())
    })
}

/// Replaces the one occurrence of `old` in the page at `path` with `new` (blessing a claim
/// quoted inline rather than in a block).
pub fn replace_once(path: &Path, old: &str, new: &str) {
    let _guard = REWRITING.lock().unwrap_or_else(|e| e.into_inner());
    let text = std::fs::read_to_string(path).unwrap();
    assert_eq!(text.matches(old).count(), 1, "{} has {old:?} more than once, or not at all", path.display());
    std::fs::write(path, text.replacen(old, new, 1)).unwrap();
    eprintln!("blessed {}: {old:?} -> {new:?}", path.display());
}

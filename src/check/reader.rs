//! Reading history files as a stream: one line at a time, each bounded by
//! [`LINE_BYTES_MAX`], gzip when the name ends in `.gz`, several files merged by `seq`.
//! Nothing holds a whole file, so a history of any length is read in bounded memory; every
//! refusal names the file and the line.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// The longest line a history may have, newline included: far above any event the
/// simulation writes (under 1 KiB), low enough that a file with no newline in it cannot
/// make the reader hold it whole.
pub const LINE_BYTES_MAX: usize = 1 << 20;

/// A refusal of the input: which file, which line (1-based; 0 for the file itself), why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// The file.
    pub file: PathBuf,
    /// The line, from 1; 0 when the file as a whole is refused.
    pub line: u64,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file.display(), self.message)
        } else {
            write!(f, "{} line {}: {}", self.file.display(), self.line, self.message)
        }
    }
}

/// The keys every event line starts with, read before the event's own fields.
#[derive(Debug, Default, serde::Deserialize)]
pub struct Head {
    /// The line's `seq`.
    pub seq: u64,
    /// The store's (or the harness's) time, nanoseconds.
    pub time_ns: u64,
    /// The node that emitted it.
    pub node: String,
    /// The event kind, kebab-case.
    pub kind: String,
    /// Where the event's own fields start in the line as read (see [`RawLine::fields`]);
    /// 0 when they are read from the whole line.
    #[serde(skip)]
    pub fields_at: usize,
}

impl Head {
    /// The head of a line that starts as `docs/history.md` says a writer should start it —
    /// `{"seq":N,"time_ns":N,"node":"…","kind":"…",` with no escapes in the names — read
    /// without a JSON parser into `self` (its strings' memory reused, so a stream of lines
    /// allocates nothing here); false for any other line (a parser reads that one), `self`
    /// then left in no particular state.
    fn read_written(&mut self, line: &[u8]) -> bool {
        self.read_written_parts(line).is_some()
    }

    fn read_written_parts(&mut self, line: &[u8]) -> Option<()> {
        let rest = line.strip_prefix(b"{\"seq\":")?;
        let (seq, rest) = digits(rest)?;
        let rest = rest.strip_prefix(b",\"time_ns\":")?;
        let (time_ns, rest) = digits(rest)?;
        let rest = rest.strip_prefix(b",\"node\":\"")?;
        let rest = plain_string(rest, &mut self.node)?;
        let rest = rest.strip_prefix(b",\"kind\":\"")?;
        let rest = plain_string(rest, &mut self.kind)?;
        self.fields_at = if rest.first() == Some(&b',') { line.len() - rest.len() } else { 0 };
        self.seq = seq;
        self.time_ns = time_ns;
        Some(())
    }
}

/// A decimal u64 at the start of `bytes` (no leading zero but 0 itself), and what follows.
fn digits(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let end = bytes.iter().position(|b| !b.is_ascii_digit()).unwrap_or(bytes.len());
    if end == 0 || (end > 1 && bytes[0] == b'0') {
        return None;
    }
    let mut value: u64 = 0;
    for &digit in &bytes[..end] {
        value = value.checked_mul(10)?.checked_add(u64::from(digit - b'0'))?;
    }
    Some((value, &bytes[end..]))
}

/// A string's text up to its closing quote, if it has no escape or control character,
/// written into `into`; what follows the quote.
fn plain_string<'a>(bytes: &'a [u8], into: &mut String) -> Option<&'a [u8]> {
    let end = bytes.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
    if bytes[end] != b'"' {
        return None;
    }
    let text = std::str::from_utf8(&bytes[..end]).ok()?;
    into.clear();
    into.push_str(text);
    Some(&bytes[end + 1..])
}

/// One event line read: its head, its place, and its bytes (the event's fields are read
/// from these once its kind is known).
#[derive(Debug, Default)]
pub struct RawLine {
    /// The line's keys.
    pub head: Head,
    /// The file it came from, as an index into the files given.
    pub file: usize,
    /// Its line number, from 1.
    pub line: u64,
    /// The line, without its newline (its byte at the head's `fields_at`, if that is not 0,
    /// turned from `,` into `{`).
    pub bytes: Vec<u8>,
}

impl RawLine {
    /// The event's fields as one JSON object: the line after its head, which the reader
    /// has already read, so the event's decoder does not read the head's keys again —
    /// `{"witness":…,…}`, the comma after the head's `kind` made the object's brace. A
    /// line not written as `docs/history.md` says a writer should is given whole.
    pub fn fields(&self) -> &[u8] {
        &self.bytes[self.head.fields_at..]
    }
}

/// One file's lines, read one at a time.
pub struct LineReader {
    path: PathBuf,
    input: Box<dyn BufRead>,
    line: u64,
    buf: Vec<u8>,
}

impl LineReader {
    /// Opens `path`, through a gzip decoder if its name ends in `.gz`.
    pub fn open(path: &Path) -> Result<LineReader, InputError> {
        let file = File::open(path).map_err(|e| InputError { file: path.into(), line: 0, message: e.to_string() })?;
        let raw: Box<dyn Read> = if path.extension().is_some_and(|e| e == "gz") {
            Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(file)))
        } else {
            Box::new(file)
        };
        Ok(LineReader::from_reader(path, raw))
    }

    /// Reads lines from `input`, named `path` in errors.
    pub fn from_reader(path: &Path, input: Box<dyn Read>) -> LineReader {
        LineReader {
            path: path.into(),
            input: Box::new(BufReader::with_capacity(1 << 16, input)),
            line: 0,
            buf: Vec::new(),
        }
    }

    /// An error at the current line.
    pub fn error(&self, message: impl Into<String>) -> InputError {
        InputError { file: self.path.clone(), line: self.line, message: message.into() }
    }

    /// The next line's bytes without its newline, or `None` at the end of the file. A last
    /// line without a newline is refused as truncated; a line longer than
    /// [`LINE_BYTES_MAX`] is refused without being read to its end.
    pub fn next_line(&mut self) -> Result<Option<&[u8]>, InputError> {
        self.buf.clear();
        self.line += 1;
        let limit = LINE_BYTES_MAX as u64 + 1;
        let read =
            (&mut self.input).take(limit).read_until(b'\n', &mut self.buf).map_err(|e| self.error(e.to_string()))?;
        if read == 0 {
            return Ok(None);
        }
        if self.buf.last() != Some(&b'\n') {
            if read as u64 == limit {
                return Err(self.error(format!("line longer than {LINE_BYTES_MAX} bytes")));
            }
            return Err(self.error("truncated last line (no newline at its end): the file was cut while written"));
        }
        self.buf.pop();
        Ok(Some(&self.buf))
    }

    /// The next line as a JSON object, or `None` at the end.
    pub fn next_object(&mut self) -> Result<Option<Map<String, Value>>, InputError> {
        let Some(bytes) = self.next_line()? else { return Ok(None) };
        match serde_json::from_slice(bytes) {
            Ok(Value::Object(map)) => Ok(Some(map)),
            Ok(_) => Err(self.error("not a JSON object")),
            Err(e) => Err(self.error(format!("malformed JSON: {e}"))),
        }
    }

    /// The number of the line last read.
    pub fn line(&self) -> u64 {
        self.line
    }
}

/// The event lines of one file, after its header, checked for a rising `seq`.
struct EventLines {
    reader: LineReader,
    last_seq: Option<u64>,
    next: Option<RawLine>,
    index: usize,
}

impl EventLines {
    /// Reads the next line into `into` (a line given back, its memory reused).
    fn advance(&mut self, mut into: RawLine) -> Result<(), InputError> {
        self.next = None;
        let Some(line) = self.reader.next_line()? else { return Ok(()) };
        into.bytes.clear();
        into.bytes.extend_from_slice(line);
        let bytes = &mut into.bytes;
        if !into.head.read_written(bytes) {
            into.head = serde_json::from_slice(bytes).map_err(|e| {
                let json = serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok();
                self.reader.error(format!("{}: {e}", if json { "not an event line" } else { "malformed JSON" }))
            })?;
        }
        if into.head.fields_at > 0 {
            bytes[into.head.fields_at] = b'{';
        }
        let seq = into.head.seq;
        if let Some(last) = self.last_seq.filter(|&last| seq <= last) {
            return Err(self.reader.error(format!("seq {seq} does not follow seq {last}: a history's seq must rise")));
        }
        self.last_seq = Some(seq);
        into.file = self.index;
        into.line = self.reader.line();
        self.next = Some(into);
        Ok(())
    }
}

/// Several files' event lines merged into one order by `seq` (each file's own must rise;
/// no `seq` may be in two files). Holds one line per file.
pub struct Merged {
    files: Vec<EventLines>,
    paths: Vec<PathBuf>,
    /// A line given back ([`Merged::give_back`]), to be read into next.
    spare: Option<RawLine>,
}

impl Merged {
    /// Merges `readers`, each positioned after its header.
    pub fn new(readers: Vec<LineReader>) -> Result<Merged, InputError> {
        let paths = readers.iter().map(|r| r.path.clone()).collect();
        let mut files: Vec<EventLines> = readers
            .into_iter()
            .enumerate()
            .map(|(index, reader)| EventLines { reader, last_seq: None, next: None, index })
            .collect();
        for f in &mut files {
            f.advance(RawLine::default())?;
        }
        Ok(Merged { files, paths, spare: None })
    }

    /// Gives a line back once it is judged: the next line is read into its memory, so a
    /// stream of lines allocates nothing per line.
    pub fn give_back(&mut self, line: RawLine) {
        self.spare = Some(line);
    }

    /// The file names, by index.
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    /// The next line in `seq` order, or `None` when every file is read.
    pub fn next_line(&mut self) -> Result<Option<RawLine>, InputError> {
        let mut best: Option<usize> = None;
        for (i, f) in self.files.iter().enumerate() {
            let Some(line) = &f.next else { continue };
            match best {
                Some(b) => {
                    let other = self.files[b].next.as_ref().expect("best has a line");
                    if line.head.seq == other.head.seq {
                        return Err(InputError {
                            file: self.paths[i].clone(),
                            line: line.line,
                            message: format!(
                                "seq {} is also at {} line {}: merged files must not share a seq",
                                line.head.seq,
                                self.paths[b].display(),
                                other.line
                            ),
                        });
                    }
                    if line.head.seq < other.head.seq {
                        best = Some(i);
                    }
                }
                None => best = Some(i),
            }
        }
        let Some(b) = best else { return Ok(None) };
        let line = self.files[b].next.take();
        self.files[b].advance(self.spare.take().unwrap_or_default())?;
        Ok(line)
    }
}

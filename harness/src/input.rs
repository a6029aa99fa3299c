//! Reading input files safely, one policy for every file pinscope reads (scenario, results CSV,
//! samples CSV, sidecar, nvbandwidth JSON):
//! - it must be a regular file (a symbolic link to one is fine), checked from its metadata
//!   before it is opened, so a FIFO, a device (`/dev/zero`) or a folder is refused at once and
//!   never read;
//! - at most a stated number of bytes is read ([`InputKind::max_bytes`]), and for text read line
//!   by line, no line longer than [`InputKind::max_line`]; over either it is refused in one
//!   sentence;
//! - a file that cannot be read (`/proc/self/mem`) is a bad input (exit 2), not an I/O fault.

use crate::Error;
use crate::units::{KIB, MIB, format_size};
use std::io::Read;
use std::path::Path;

/// What an input is and how much of it pinscope reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputKind {
    /// In a sentence: "a scenario file".
    pub what: &'static str,
    /// Largest file read, in bytes.
    pub max_bytes: u64,
    /// Longest line, in bytes (for files read line by line).
    pub max_line: Option<u64>,
}

impl InputKind {
    const fn new(what: &'static str, max_bytes: u64, max_line: Option<u64>) -> InputKind {
        InputKind {
            what,
            max_bytes,
            max_line,
        }
    }
}

/// Scenario files (the shipped ones are under 20 KiB; the largest sweep allowed is ~3.7 MB).
pub const SCENARIO_FILE: InputKind = InputKind::new("a scenario file", 4 * MIB, None);

/// Results CSVs: about 680 bytes a row, so 1.5 M rows fit. Memory while one is read: the file's
/// bytes plus about 1.3 KB per row held (about 3 times the file: 2.2 GiB for 1 GiB).
pub const RESULTS_CSV: InputKind = InputKind::new("a results CSV", 1024 * MIB, Some(64 * KIB));

/// Samples CSVs (about 200 bytes a sample; the published ones are under 2 MiB).
pub const SAMPLES_CSV: InputKind = InputKind::new("a samples CSV", 1024 * MIB, Some(64 * KIB));

/// Samples CSVs as `report` and `compare` stream them (`results::Samples::read`): read in
/// blocks keeping only the series a view needs, so memory does not grow with the file's size.
/// A real run records about 180 samples (36 KB) per row: 1 M rows are about 37 GB.
pub const STREAMED_SAMPLES_CSV: InputKind =
    InputKind::new("a samples CSV", 64 * 1024 * MIB, Some(64 * KIB));

/// JSON sidecars (the scenario text, up to 4 MiB, is one string inside).
pub const SIDECAR_JSON: InputKind = InputKind::new("a sidecar", 64 * MIB, None);

/// nvbandwidth `-j` output.
pub const NVBANDWIDTH_JSON: InputKind = InputKind::new("an nvbandwidth JSON file", 16 * MIB, None);

fn refused(path: &Path, reason: String) -> Error {
    Error::Input {
        path: path.to_path_buf(),
        reason,
    }
}

/// Refuses `path` unless it is a regular file no larger than `kind` allows; returns its size.
/// Only metadata is read: nothing is opened.
pub fn check_input(path: &Path, kind: &InputKind) -> Result<u64, Error> {
    let len = check_regular(path, kind)?;
    if len > kind.max_bytes {
        return Err(too_large(path, kind, format_size(len)));
    }
    Ok(len)
}

/// Refuses `path` unless it is a regular file; returns its size. Only metadata is read.
pub fn check_regular(path: &Path, kind: &InputKind) -> Result<u64, Error> {
    let m = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    let t = m.file_type();
    if t.is_dir() {
        return Err(Error::io(
            path,
            std::io::Error::from(std::io::ErrorKind::IsADirectory),
        ));
    }
    if !t.is_file() {
        return Err(refused(
            path,
            format!(
                "it is {}, not a regular file: give the path of {}",
                special_kind(&t),
                kind.what
            ),
        ));
    }
    Ok(m.len())
}

fn too_large(path: &Path, kind: &InputKind, size: String) -> Error {
    refused(
        path,
        format!(
            "it is {size}, and pinscope reads {} of at most {} ({} bytes): split it or give the right file",
            plural(kind.what),
            format_size(kind.max_bytes),
            kind.max_bytes
        ),
    )
}

/// "a results CSV" → "results CSVs".
fn plural(what: &str) -> String {
    let one = what
        .strip_prefix("a ")
        .or_else(|| what.strip_prefix("an "))
        .unwrap_or(what);
    format!("{one}s")
}

/// What a non-regular file is, in words.
fn special_kind(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    let _ = t;
    "not a regular file"
}

/// Reads a whole input after [`check_input`], never more than `kind.max_bytes` (a file that
/// grows while it is read is refused too), and checks the longest line.
pub fn read_input(path: &Path, kind: &InputKind) -> Result<Vec<u8>, Error> {
    let size = check_input(path, kind)?;
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(kind.max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| unreadable(path, e))?;
    if bytes.len() as u64 > kind.max_bytes {
        return Err(too_large(path, kind, "over the limit".into()));
    }
    if let Some(max) = kind.max_line {
        check_lines(path, &bytes, kind, max)?;
    }
    Ok(bytes)
}

/// An error while reading an input that was opened: a path that cannot be read is bad input
/// (exit 2), such as `/proc/self/mem`, which opens but answers every read with EIO.
pub fn unreadable(path: &Path, e: std::io::Error) -> Error {
    match e.kind() {
        std::io::ErrorKind::Interrupted | std::io::ErrorKind::StorageFull => Error::io(path, e),
        _ => refused(
            path,
            format!("reading it failed ({e}): give a results or scenario file you can read"),
        ),
    }
}

/// Refuses text with a line longer than `max` bytes, naming the line.
fn check_lines(path: &Path, bytes: &[u8], kind: &InputKind, max: u64) -> Result<(), Error> {
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if line.len() as u64 > max {
            return Err(refused(
                path,
                format!(
                    "line {} is {} bytes long; lines of {} are limited to {max} bytes ({}): is it the right file?",
                    i + 1,
                    line.len(),
                    plural(kind.what),
                    format_size(max)
                ),
            ));
        }
    }
    Ok(())
}

/// Characters that must never reach a terminal or a table raw: control characters (C0, DEL,
/// C1: ESC starts terminal sequences, a newline splits a table row), bidirectional formatting
/// (they reorder what is shown) and the Unicode line and paragraph separators.
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
                | '\u{2028}' | '\u{2029}'
        )
}

/// Text read from a file someone else may have written (a results CSV), with every
/// [`is_unsafe_char`] written as a visible escape (`\n`, `\u{1b}`), so it prints as one line
/// and changes nothing on a terminal.
pub fn escape_text(s: &str) -> std::borrow::Cow<'_, str> {
    // Printable ASCII (every field of a results CSV pinscope writes) needs no char decoding.
    if s.bytes().all(|b| (b' '..=b'~').contains(&b)) || !s.chars().any(is_unsafe_char) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' | '\r' | '\t' => out.extend(c.escape_default()),
            c if is_unsafe_char(c) => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {

    #[test]
    fn unsafe_characters_become_visible_escapes() {
        let evil = "\u{1b}[31mRED\u{1b}]0;pwned\u{7}\nrow\u{202e}txt\u{0}";
        let shown = escape_text(evil);
        assert_eq!(
            shown,
            "\\u{1b}[31mRED\\u{1b}]0;pwned\\u{7}\\nrow\\u{202e}txt\\u{0}"
        );
        assert!(!shown.chars().any(is_unsafe_char));
        assert!(matches!(
            escape_text("plain ünïcode 😀"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
    use super::*;
    use crate::test_files::temp_path;

    /// A sparse file of `len` bytes (no disk used) in a fresh folder, and its path.
    fn sparse_file(name: &str, len: u64) -> (tempfile::TempDir, std::path::PathBuf, std::fs::File) {
        let (d, p) = temp_path(name);
        let f = std::fs::File::create(&p).expect("create");
        f.set_len(len).expect("set_len");
        (d, p, f)
    }

    #[test]
    fn a_folder_is_refused_as_a_folder() {
        let d = tempfile::tempdir().expect("tempdir");
        let e = read_input(d.path(), &RESULTS_CSV).expect_err("folder");
        e.assert_bad_input("is a folder");
    }

    #[cfg(unix)]
    #[test]
    fn devices_are_refused_without_being_read() {
        for dev in ["/dev/zero", "/dev/urandom", "/dev/null"] {
            let e = read_input(Path::new(dev), &SCENARIO_FILE).expect_err(dev);
            e.assert_bad_input("it is a device");
        }
    }

    #[test]
    fn a_file_over_its_bound_is_refused_before_reading() {
        let (_d, p, _f) = sparse_file("big.json", NVBANDWIDTH_JSON.max_bytes + 1);
        let e = read_input(&p, &NVBANDWIDTH_JSON).expect_err("too big");
        e.assert_bad_input("nvbandwidth JSON files of at most 16 MiB");
    }

    #[test]
    fn a_line_over_its_bound_is_refused_with_its_number() {
        let (_d, p) = temp_path("long.csv");
        let mut text = b"a,b\n1,2\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', 64 * 1024 + 1));
        std::fs::write(&p, &text).expect("write");
        let e = read_input(&p, &RESULTS_CSV).expect_err("long line");
        assert!(e.to_string().contains("line 3 is 65537 bytes long"), "{e}");
        std::fs::write(&p, b"a,b\n1,2\n").expect("write");
        assert_eq!(read_input(&p, &RESULTS_CSV).expect("fine"), b"a,b\n1,2\n");
    }

    /// A results CSV of 1 GiB (1.5 M rows) is read; one byte more is refused from its metadata,
    /// before anything is read or held.
    #[test]
    #[cfg_attr(
        windows,
        ignore = "set_len allocates the whole GiB on Windows (not sparse)"
    )]
    fn a_results_csv_over_its_bound_is_refused_before_it_is_read() {
        let (_d, p, f) = sparse_file("big.csv", RESULTS_CSV.max_bytes);
        assert_eq!(
            check_input(&p, &RESULTS_CSV).expect("at the bound"),
            1 << 30
        );
        f.set_len(RESULTS_CSV.max_bytes + 1).expect("set_len");
        let e = read_input(&p, &RESULTS_CSV).expect_err("over the bound");
        e.assert_bad_input("pinscope reads results CSVs of at most 1 GiB (1073741824 bytes)");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_file_that_cannot_be_read_is_bad_input() {
        let e = read_input(Path::new("/proc/self/mem"), &SCENARIO_FILE).expect_err("EIO");
        assert_eq!(e.exit_code(), 2, "{e}");
        assert!(
            e.to_string().starts_with("/proc/self/mem cannot be read"),
            "{e}"
        );
    }
}

//! Writing output files safely, one policy for every file pinscope writes:
//! - only regular files or new names: a symbolic link, a FIFO, a device node, a socket or a
//!   folder at an output path is refused with one sentence (exit 2) and left as it was;
//! - never a file the same command reads ([`Inputs`], compared by file identity — device and
//!   inode, or the Windows file index — not by spelling), nor the sidecar or samples name of one;
//! - never over a read-only file unless `--force` (as `cp` refuses one);
//! - replaced atomically: a uniquely named temporary file, created exclusively in the target's
//!   folder, then renamed over the target. Two writers of one path never share a temporary file,
//!   so each one that succeeds leaves a complete file (the last rename wins); pinscope never
//!   deletes a file it did not create.
//!
//! Every error names the path the user gave, never the temporary file.

use crate::Error;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Something at an output path that pinscope must not replace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NotRegular {
    Folder,
    SymbolicLink,
    /// A device, FIFO or socket.
    Special,
}

impl NotRegular {
    /// What it is, in words that follow "is".
    fn words(self) -> &'static str {
        match self {
            NotRegular::Folder => "a folder",
            NotRegular::SymbolicLink => "a symbolic link",
            NotRegular::Special => "not a regular file (a device, FIFO or socket)",
        }
    }

    /// What to do instead of writing at `path`.
    fn hint(self, path: &Path) -> String {
        match self {
            NotRegular::Folder => format!(
                ": name a file inside it, such as {}",
                path.join("index.html").display()
            ),
            NotRegular::SymbolicLink | NotRegular::Special => {
                ": pinscope only replaces regular files, so choose another path".to_string()
            }
        }
    }
}

/// What is at `path` when it is something pinscope must not replace.
fn not_regular(path: &Path) -> Result<Option<NotRegular>, Error> {
    match std::fs::symlink_metadata(path) {
        Ok(m) => {
            let t = m.file_type();
            Ok(if t.is_file() {
                None
            } else if t.is_dir() {
                Some(NotRegular::Folder)
            } else if t.is_symlink() {
                Some(NotRegular::SymbolicLink)
            } else {
                Some(NotRegular::Special)
            })
        }
        // Nothing there yet, or a file where a folder of the path should be: `create_parent`
        // says which folder cannot be made.
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(output_io(path, e)),
    }
}

/// An I/O error while writing `path`, in a sentence about the output (exit 2 when the path is
/// the problem, 1 for a fault such as a full disk).
fn output_io(path: &Path, e: std::io::Error) -> Error {
    use std::io::ErrorKind::*;
    let why = match e.kind() {
        NotFound | NotADirectory => "its folder does not exist or cannot hold files",
        PermissionDenied => "permission denied",
        ReadOnlyFilesystem => "the file system is read-only",
        InvalidFilename => "the name is not valid here",
        _ => return Error::io(path, e),
    };
    Error::Output(format!(
        "{} cannot be written ({why}): choose a path in a folder you can write",
        path.display()
    ))
}

/// The identity of a file: device and inode on Unix, volume and file index on Windows.
#[cfg(unix)]
#[derive(Debug, PartialEq, Eq)]
struct FileId(u64, u64);

#[cfg(unix)]
fn file_id(path: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    // metadata, not open: a FIFO or device is never opened to learn what it is.
    let m = std::fs::metadata(path).ok()?;
    Some(FileId(m.dev(), m.ino()))
}

#[cfg(windows)]
type FileId = same_file::Handle;

#[cfg(windows)]
fn file_id(path: &Path) -> Option<FileId> {
    // Only regular files have an identity worth comparing (and opening them never blocks).
    std::fs::metadata(path).ok().filter(|m| m.is_file())?;
    same_file::Handle::from_path(path).ok()
}

#[cfg(not(any(unix, windows)))]
#[derive(Debug, PartialEq, Eq)]
struct FileId;

#[cfg(not(any(unix, windows)))]
fn file_id(_: &Path) -> Option<FileId> {
    None
}

/// One file a command reads: the path as given, what it is, and its identity (when it exists).
#[derive(Debug)]
struct Input {
    shown: PathBuf,
    what: &'static str,
    id: Option<FileId>,
    /// The folder it is in and its name, so a name not created yet (a missing sidecar) is known.
    folder: Option<FileId>,
    name: Option<std::ffi::OsString>,
}

/// The files a command reads. No output of the same command may be one of them.
#[derive(Debug, Default)]
pub struct Inputs {
    files: Vec<Input>,
}

fn folder_of(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

impl Inputs {
    /// Records one input; `what` names it in a refusal ("results CSV", "scenario file").
    pub fn add(&mut self, path: &Path, what: &'static str) {
        self.files.push(Input {
            shown: path.to_path_buf(),
            what,
            id: file_id(path),
            folder: file_id(folder_of(path)),
            name: path.file_name().map(ToOwned::to_owned),
        });
    }

    /// Records a results CSV with the samples file and sidecar read with it, present or not.
    pub fn add_results(&mut self, csv: &Path) {
        self.add(csv, "results CSV");
        self.add(&super::samples_path(csv), "samples file");
        self.add(&super::sidecar_path(csv), "sidecar");
    }

    /// The input that `out` would replace: the same file, or the same name in the same folder.
    fn clash(&self, out: &Path) -> Option<&Input> {
        let id = file_id(out);
        let folder = file_id(folder_of(out));
        let name = out.file_name();
        self.files.iter().find(|i| {
            (id.is_some() && i.id == id)
                || (folder.is_some() && i.folder == folder && i.name.as_deref() == name)
        })
    }
}

/// How a command writes its outputs: which files it reads (never replaced) and whether
/// `--force` lets it replace a read-only file.
#[derive(Debug, Default)]
pub struct OutputPolicy {
    pub inputs: Inputs,
    pub force: bool,
}

impl OutputPolicy {
    pub fn new(inputs: Inputs, force: bool) -> Self {
        Self { inputs, force }
    }

    /// Everything that can be checked before anything is written: a usable path, not an input,
    /// not read-only (unless forced).
    pub fn check(&self, path: &Path) -> Result<(), Error> {
        check_output_path(path)?;
        let shown = path.display();
        if let Some(i) = self.inputs.clash(path) {
            let same = if i.shown == path {
                String::new()
            } else {
                format!(" ({})", i.shown.display())
            };
            return Err(Error::Output(format!(
                "{shown} is the {} this command reads{same}, so pinscope will not write over it: choose another output path",
                i.what
            )));
        }
        if !self.force && is_read_only(path) {
            return Err(Error::Output(format!(
                "{shown} is read-only, so pinscope will not replace it: choose another path, or pass --force to replace it"
            )));
        }
        Ok(())
    }

    /// Writes `bytes` to `path` through a temporary file and a rename, so a reader never sees
    /// half a file and a concurrent writer never sees this one's temporary file.
    pub fn write(&self, path: &Path, bytes: &[u8]) -> Result<(), Error> {
        self.check(path)?;
        create_parent(path)?;
        let keep = std::fs::metadata(path).ok().map(|m| m.permissions());
        let mut tmp = temp_beside(path)?;
        tmp.write_all(bytes)
            // On disk before the rename, so the new name never points at a half-written file.
            .and_then(|()| tmp.as_file().sync_all())
            .map_err(|e| output_io(path, e))?;
        if let Some(p) = keep {
            // A replaced file keeps its mode (the temporary file is private until renamed).
            tmp.as_file()
                .set_permissions(p)
                .map_err(|e| output_io(path, e))?;
        }
        // Checked again just before the rename: the window for a swap is as small as it gets.
        self.check(path)?;
        persist(tmp, path)
    }

    /// Creates a new file at `path` for streaming output; an existing file is never replaced.
    pub fn create_new(&self, path: &Path) -> Result<File, Error> {
        self.check(path)?;
        create_parent(path)?;
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => Error::Output(format!(
                    "{} already exists (another run wrote it at the same second): run again, or choose another folder with --out",
                    path.display()
                )),
                _ => output_io(path, e),
            })
    }
}

/// True when the user could not write `path` in place: no write permission bit at all, or the
/// OS refuses to open it for writing (what makes `cp` refuse).
fn is_read_only(path: &Path) -> bool {
    let Ok(m) = std::fs::metadata(path) else {
        return false;
    };
    // Only a regular file is ever opened here (check_output_path refused anything else), and
    // opening without truncation changes nothing.
    m.is_file()
        && (m.permissions().readonly()
            || OpenOptions::new()
                .write(true)
                .open(path)
                .is_err_and(|e| e.kind() == std::io::ErrorKind::PermissionDenied))
}

/// Renames `tmp` over `path`. On Windows a rename over a file that another writer is renaming at
/// that moment fails with "permission denied" for a few milliseconds: it is tried again, up to 20
/// times 5 ms apart, so that both writers succeed and the last rename wins, as on Linux. On
/// failure the temporary file (ours) is removed when `persist`'s error is dropped.
fn persist(mut tmp: tempfile::NamedTempFile, path: &Path) -> Result<(), Error> {
    for _ in 0..20 {
        match tmp.persist(path) {
            Ok(_) => return Ok(()),
            Err(e) if cfg!(windows) && e.error.kind() == std::io::ErrorKind::PermissionDenied => {
                tmp = e.file;
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Err(e) => return Err(output_io(path, e.error)),
        }
    }
    tmp.persist(path)
        .map(|_| ())
        .map_err(|e| output_io(path, e.error))
}

/// A new, uniquely named, exclusively created temporary file in the folder of `path`; it is
/// deleted when dropped unless renamed over `path`.
fn temp_beside(path: &Path) -> Result<tempfile::NamedTempFile, Error> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let prefix = format!(".{name}.");
    let mut b = tempfile::Builder::new();
    b.prefix(&prefix).suffix(".pinscope-tmp");
    // A new file gets the mode any new file gets here (0666 less the umask), not 0600.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o666));
    }
    b.tempfile_in(folder_of(path))
        .map_err(|e| output_io(path, e))
}

/// Refuses an output path that is not a regular file or a new name: a folder, a symbolic link,
/// a FIFO, a device; also a path ending in a separator (`out/`), which names a folder.
pub fn check_output_path(path: &Path) -> Result<(), Error> {
    let shown = path.display();
    let text = path.as_os_str().to_string_lossy();
    if text.is_empty() {
        return Err(Error::Output(
            "the output path is empty: name a file".into(),
        ));
    }
    if text.ends_with(std::path::is_separator) {
        return Err(Error::Output(format!(
            "{shown} names a folder: name the output file, such as {shown}index.html"
        )));
    }
    if let Some(what) = not_regular(path)? {
        return Err(Error::Output(format!(
            "{shown} is {}, so pinscope will not write over it{}",
            what.words(),
            what.hint(path)
        )));
    }
    Ok(())
}

/// Creates the folder an output file goes in, with a sentence that names the file.
pub fn create_parent(path: &Path) -> Result<(), Error> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| {
            let why = match e.kind() {
                std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
                std::io::ErrorKind::AlreadyExists | std::io::ErrorKind::NotADirectory => {
                    "a file is in the way".to_string()
                }
                _ => e.to_string(),
            };
            Error::Output(format!(
                "cannot create the folder {} for {} ({why}): check the path and the permissions of the folder above it",
                dir.display(),
                path.display()
            ))
        })?;
    }
    Ok(())
}

/// Checks, before any work, that `dir` can be the folder of new output files: a folder or a
/// name that can become one, in which files can be created. Nothing is left behind.
pub fn check_output_folder(dir: &Path) -> Result<(), Error> {
    let shown = dir.display();
    let mut existing = dir;
    while !existing.as_os_str().is_empty() && std::fs::symlink_metadata(existing).is_err() {
        existing = existing.parent().unwrap_or(Path::new(""));
    }
    let existing = if existing.as_os_str().is_empty() {
        Path::new(".")
    } else {
        existing
    };
    if !existing.is_dir() {
        return Err(Error::Output(format!(
            "{shown} cannot be the results folder: {} is a file, not a folder: choose a folder with --out",
            existing.display()
        )));
    }
    // An unnamed temporary file where possible; removed at once in any case.
    tempfile::tempfile_in(existing).map_err(|e| {
        Error::Output(format!(
            "{shown} cannot hold the results files ({}): choose a folder you can write with --out",
            match e.kind() {
                std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
                std::io::ErrorKind::ReadOnlyFilesystem =>
                    "the file system is read-only".to_string(),
                _ => format!("no file can be created in {}", existing.display()),
            }
        ))
    })?;
    Ok(())
}

/// Writes `bytes` to `path` atomically with no inputs to protect (see [`OutputPolicy::write`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    OutputPolicy::default().write(path, bytes)
}

#[cfg(test)]
mod tests;

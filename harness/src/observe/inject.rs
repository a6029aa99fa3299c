//! Giving the observed command pinscope's CUPTI injection library. The library
//! (`harness/inject/`) is built by the build script and embedded in pinscope, so nothing has
//! to be installed beside it: here it is written to a per-user cache file named by its hash
//! (`$XDG_CACHE_HOME/pinscope/` or `~/.cache/pinscope/`; written whole under a temporary name
//! and renamed, never replacing a file whose bytes are not the library's — then a private copy
//! for this run is used), and named to the command in `CUDA_INJECTION64_PATH`, with the CUPTI
//! that was found (`PINSCOPE_CUPTI_LIBRARY`) and the socket (Linux) or named pipe (Windows) its
//! events go to (`PINSCOPE_EVENTS_PIPE`). On Windows the cache folder is
//! `%LOCALAPPDATA%\pinscope\`.

use crate::results::CuptiRecord;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The library built for this target and its FNV-1a hash; `None` where it is not built.
const LIBRARY: Option<(&[u8], u64)> = include!(concat!(env!("OUT_DIR"), "/inject_library.rs"));

/// The variable the CUDA driver reads the injection library's path from.
pub const INJECTION_ENV: &str = "CUDA_INJECTION64_PATH";
/// The variable that names CUPTI to the library.
pub const CUPTI_ENV: &str = "PINSCOPE_CUPTI_LIBRARY";

/// The library given to the command, and what receives its events.
pub struct Injection {
    pub library: PathBuf,
    cupti: PathBuf,
    /// The run's private copy of the library, when the cache could not hold it.
    _private: Option<tempfile::TempPath>,
    #[cfg(any(target_os = "linux", windows))]
    receiver: super::events::Receiver,
}

/// What the events came to, by the time the command exited.
#[derive(Debug, Default)]
pub struct Outcome {
    #[cfg(any(target_os = "linux", windows))]
    pub received: super::events::Received,
}

impl Injection {
    /// Prepares the library for a command started now (`origin_ns` on CLOCK_MONOTONIC), or
    /// says in one sentence why it is not given.
    pub fn prepare(cupti: &CuptiRecord, origin_ns: u64) -> Result<Injection, String> {
        let Some((bytes, hash)) = LIBRARY else {
            return Err("pinscope's CUPTI injection library is not built for this platform yet, so who allocated what is not recorded (only the memory observers are)".into());
        };
        let Some(cupti) = cupti.found.clone() else {
            return Err(
                "CUPTI was not found, so the injection library was not given to the command".into(),
            );
        };
        if let Some(v) = std::env::var_os(INJECTION_ENV) {
            return Err(format!(
                "{INJECTION_ENV} is already set (to {}), so pinscope leaves it and records no allocations: unset it to have them recorded",
                Path::new(&v).display()
            ));
        }
        let (library, private) = install(bytes, hash).map_err(|e| {
            format!("pinscope could not write its injection library ({e}), so who allocated what is not recorded: check that the cache folder or the temporary folder is writable")
        })?;
        Self::with_receiver(library, cupti, private, origin_ns)
    }

    #[cfg(any(target_os = "linux", windows))]
    fn with_receiver(
        library: PathBuf,
        cupti: PathBuf,
        private: Option<tempfile::TempPath>,
        origin_ns: u64,
    ) -> Result<Injection, String> {
        let receiver = super::events::Receiver::start(origin_ns).map_err(|e| {
            if cfg!(windows) {
                format!("pinscope could not create the named pipe its injection library sends to ({e}), so who allocated what is not recorded")
            } else {
                format!("pinscope could not open the socket its injection library sends to ({e}), so who allocated what is not recorded: check that the temporary folder (TMPDIR) is writable and its path short")
            }
        })?;
        Ok(Injection {
            library,
            cupti,
            _private: private,
            receiver,
        })
    }

    #[cfg(not(any(target_os = "linux", windows)))]
    fn with_receiver(
        library: PathBuf,
        cupti: PathBuf,
        private: Option<tempfile::TempPath>,
        _origin_ns: u64,
    ) -> Result<Injection, String> {
        let _ = (library, cupti, private);
        Err("pinscope cannot receive the injection library's events on this OS yet".into())
    }

    /// The variables the command is started with.
    pub fn env(&self) -> Vec<(&'static str, OsString)> {
        let mut out = vec![
            (INJECTION_ENV, self.library.clone().into_os_string()),
            (CUPTI_ENV, self.cupti.clone().into_os_string()),
        ];
        out.extend(self.endpoint());
        out
    }

    /// The socket's variable.
    #[cfg(any(target_os = "linux", windows))]
    fn endpoint(&self) -> Option<(&'static str, OsString)> {
        let endpoint = self.receiver.endpoint().to_owned();
        Some((super::wire::EVENTS_PIPE_ENV, endpoint))
    }

    #[cfg(not(any(target_os = "linux", windows)))]
    fn endpoint(&self) -> Option<(&'static str, OsString)> {
        None
    }

    /// Collects the events (the command has exited).
    pub fn finish(self) -> Outcome {
        Outcome {
            #[cfg(any(target_os = "linux", windows))]
            received: self.receiver.finish(),
        }
    }
}

/// The library's file name for its hash: `libpinscope_inject-<hash>.so` (Linux),
/// `pinscope_inject-<hash>.dll` (Windows).
fn library_name(hash: u64) -> String {
    if cfg!(windows) {
        format!("pinscope_inject-{hash:016x}.dll")
    } else {
        format!("libpinscope_inject-{hash:016x}.so")
    }
}

/// The library's cache folder: `%LOCALAPPDATA%\pinscope` on Windows; elsewhere
/// `$XDG_CACHE_HOME/pinscope` or `$HOME/.cache/pinscope`.
fn cache_dir() -> Option<PathBuf> {
    if cfg!(windows) {
        let base = PathBuf::from(std::env::var_os("LOCALAPPDATA")?);
        return base.is_absolute().then(|| base.join("pinscope"));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| Some(PathBuf::from(std::env::var_os("HOME")?).join(".cache")))?;
    Some(base.join("pinscope"))
}

/// The library on disk: the cache file, or a private copy for this run (kept until dropped).
fn install(bytes: &[u8], hash: u64) -> std::io::Result<(PathBuf, Option<tempfile::TempPath>)> {
    let name = library_name(hash);
    if let Some(path) = cache_dir().and_then(|d| install_in(&d, &name, bytes).ok()) {
        return Ok((path, None));
    }
    let mut f = tempfile::Builder::new()
        .prefix(if cfg!(windows) {
            "pinscope_inject-"
        } else {
            "libpinscope_inject-"
        })
        .suffix(if cfg!(windows) { ".dll" } else { ".so" })
        .tempfile()?;
    std::io::Write::write_all(&mut f, bytes)?;
    f.as_file().sync_all()?;
    let path = f.into_temp_path();
    Ok((path.to_path_buf(), Some(path)))
}

/// `dir/name` holding `bytes`: found there already, or written whole and renamed into place.
/// A different file of that name is never replaced (an error).
pub fn install_in(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let path = dir.join(name);
    let ours = |p: &Path| std::fs::read(p).is_ok_and(|b| b == bytes);
    if ours(&path) {
        return Ok(path);
    }
    if path.symlink_metadata().is_ok() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!(
                "{} exists and is not this pinscope's library",
                path.display()
            ),
        ));
    }
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut tmp, bytes)?;
    tmp.as_file().sync_all()?;
    match tmp.persist_noclobber(&path) {
        Ok(_) => Ok(path),
        // Another pinscope wrote it a moment ago.
        Err(_) if ours(&path) => Ok(path),
        Err(e) => Err(e.error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_file_is_written_once_and_a_foreign_file_is_never_replaced() {
        let d = tempfile::tempdir().expect("dir");
        let dir = d.path().join("pinscope");
        let p = install_in(&dir, "lib-1.so", b"library").expect("written");
        assert_eq!(std::fs::read(&p).expect("read"), b"library");
        assert_eq!(install_in(&dir, "lib-1.so", b"library").expect("found"), p);
        std::fs::write(dir.join("lib-2.so"), b"someone else's").expect("foreign");
        let e = install_in(&dir, "lib-2.so", b"library").expect_err("not replaced");
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(
            std::fs::read(dir.join("lib-2.so")).expect("read"),
            b"someone else's"
        );
        let left: Vec<_> = std::fs::read_dir(&dir).expect("ls").collect();
        assert_eq!(left.len(), 2, "no temporary file left behind");
    }

    #[cfg(any(target_os = "linux", windows))]
    #[test]
    fn the_library_is_built_into_pinscope_and_exports_its_entry_point() {
        let (bytes, _) = LIBRARY.expect("built for Linux and Windows");
        let magic: &[u8] = if cfg!(windows) { b"MZ" } else { b"\x7fELF" };
        assert_eq!(&bytes[..magic.len()], magic);
        let needle = b"InitializeInjection";
        assert!(bytes.windows(needle.len()).any(|w| w == needle));
    }
}

//! The library's error type. Every message is one sentence for the user: what went wrong, where,
//! and how to fix it. `exit_code` maps each kind to the process exit status.

use std::fmt;
use std::path::{Path, PathBuf};

/// One problem in an input file, with its location (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Problems found in one scenario file, all of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problems {
    pub path: PathBuf,
    pub items: Vec<Problem>,
}

impl fmt::Display for Problems {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.items.len();
        write!(
            f,
            "{} has {n} problem{}",
            self.path.display(),
            if n == 1 { "" } else { "s" }
        )?;
        for p in &self.items {
            write!(
                f,
                "\n  {}:{}:{}: {}",
                self.path.display(),
                p.line,
                p.column,
                p.message
            )?;
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A scenario file did not validate.
    #[error("{0}")]
    Scenario(Problems),

    /// Bad command-line use.
    #[error("{0}")]
    Usage(String),

    /// No usable CUDA driver or GPU; the text says which and what to do.
    #[error("{0}")]
    NoGpu(String),

    /// A CUDA driver call failed while pinscope was `doing` something outside a case (inside a
    /// case it becomes the row's status): the call and its typed code.
    #[error("{}", cuda_sentence(doing, error))]
    Cuda {
        doing: &'static str,
        error: crate::cuda::CudaError,
    },

    /// The operating system refused what pinscope needs to run (a thread, for instance).
    #[error("{0}")]
    System(String),

    #[error("{}", io_sentence(path, source))]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A results file that cannot be used.
    #[error("{} cannot be used: {reason}", path.display())]
    BadResults { path: PathBuf, reason: String },

    /// An input that pinscope will not read: not a regular file, over its size bound, unreadable.
    #[error("{} cannot be read: {reason}", path.display())]
    Input { path: PathBuf, reason: String },

    /// A model file (GGUF, safetensors) whose tensor table cannot be read: the byte where the
    /// reader stopped and what it found there.
    #[error(
        "{} is not a readable {format} file: at byte {offset}, {problem}: check that it is a complete {format} file (a download may have been cut short)",
        path.display()
    )]
    BadModel {
        path: PathBuf,
        format: &'static str,
        offset: u64,
        problem: ModelProblem,
    },

    /// An output path that pinscope will not write to (not a regular file, a folder, ...).
    #[error("{0}")]
    Output(String),

    /// A guard refused the run before anything was allocated.
    #[error("{0}")]
    Refused(String),

    /// The run was interrupted (Ctrl-C); partial results are where the message says.
    #[error("interrupted: {0}")]
    Interrupted(String),

    /// The command `observe` was to run could not be started.
    #[error("{}", not_started_sentence(program, why))]
    NotStarted { program: String, why: StartFailure },
}

/// Why a command could not be started; exit statuses as shells give them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartFailure {
    /// No such program (exit 127).
    NotFound,
    /// Found but not executable (exit 126).
    NotExecutable,
    /// Anything else the OS said (exit 2).
    Other(String),
}

fn not_started_sentence(program: &str, why: &StartFailure) -> String {
    match why {
        StartFailure::NotFound => format!(
            "`{program}` was not found: check its name, or give its full path (it is looked up in PATH)"
        ),
        StartFailure::NotExecutable => format!(
            "`{program}` cannot be run (permission denied, or not a program): check that it is an executable file"
        ),
        StartFailure::Other(e) => format!("`{program}` could not be started: {e}"),
    }
}

/// What is wrong in a model file's header, as data; [`Error::BadModel`] says where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelProblem {
    /// The first bytes are not the format's magic.
    BadMagic,
    /// A format version this reader does not know.
    Version(u32),
    /// The header needs `needed` bytes from here and the file ends first.
    Truncated { needed: u64 },
    /// A count (`what`) that the rest of the file could not hold.
    Count { what: &'static str, count: u64 },
    /// A length field larger than pinscope reads (`limit` bytes).
    TooLong {
        what: &'static str,
        length: u64,
        limit: u64,
    },
    /// Text that is not UTF-8.
    NotUtf8 { what: &'static str },
    /// A value type or tensor type this reader does not know.
    UnknownType { what: &'static str, code: u32 },
    /// A value the format forbids (`what` says which and why).
    Invalid { what: String },
    /// A tensor whose bytes run past the end of the file.
    PastEnd { tensor: String, end: u64, file: u64 },
    /// Two tensors whose bytes overlap.
    Overlap { tensor: String, other: String },
}

impl fmt::Display for ModelProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Names come from the file: control characters are shown escaped, never raw.
        let esc = |s: &str| s.escape_debug().to_string();
        match self {
            ModelProblem::BadMagic => write!(f, "the file does not start with the format's magic"),
            ModelProblem::Version(v) => write!(f, "version {v} is not one pinscope reads"),
            ModelProblem::Truncated { needed } => {
                write!(f, "the header needs {needed} more bytes than the file has")
            }
            ModelProblem::Count { what, count } => {
                write!(f, "{count} {what} cannot fit in the rest of the file")
            }
            ModelProblem::TooLong {
                what,
                length,
                limit,
            } => {
                write!(
                    f,
                    "a {what} of {length} bytes is longer than the {limit} pinscope reads"
                )
            }
            ModelProblem::NotUtf8 { what } => write!(f, "a {what} is not UTF-8 text"),
            ModelProblem::UnknownType { what, code } => write!(f, "{what} {code} is unknown"),
            // Built by the readers, with any name from the file already escaped.
            ModelProblem::Invalid { what } => write!(f, "{what}"),
            ModelProblem::PastEnd { tensor, end, file } => write!(
                f,
                "tensor `{}` ends at byte {end}, past the end of the file ({file} bytes)",
                esc(tensor)
            ),
            ModelProblem::Overlap { tensor, other } => write!(
                f,
                "tensor `{}` overlaps tensor `{}`",
                esc(tensor),
                esc(other)
            ),
        }
    }
}

/// What failed, where (the call and the driver's code) and what to do about it, in one sentence.
fn cuda_sentence(doing: &str, e: &crate::cuda::CudaError) -> String {
    format!(
        "pinscope could not {doing}: {} returned {}; {}",
        e.call,
        e.code,
        e.code.remedy()
    )
}

/// The same sentence on every OS for the common cases (the OS's own wording differs).
fn io_sentence(path: &Path, e: &std::io::Error) -> String {
    use std::io::ErrorKind::*;
    let p = path.display();
    // Windows answers "access denied" when a folder is opened as a file.
    if matches!(e.kind(), IsADirectory | PermissionDenied) && path.is_dir() {
        return format!("{p} is a folder, not a file: name a file");
    }
    match e.kind() {
        NotFound => format!("{p} does not exist: check the path"),
        PermissionDenied => format!(
            "{p} cannot be accessed (permission denied): check its permissions and those of the folder it is in"
        ),
        NotADirectory => format!(
            "{p} cannot be used: part of it that should be a folder is a file: check the path"
        ),
        _ if is_loop(e) => format!(
            "{p} cannot be opened: it goes through symbolic links that form a loop: check the links"
        ),
        ReadOnlyFilesystem => format!("{p} cannot be written: the file system is read-only"),
        StorageFull => format!("{p} could not be written: the disk is full"),
        InvalidFilename => format!("{p} is not a valid file name here: check the path"),
        _ => format!("could not read or write {p}: {e}"),
    }
}

/// ELOOP / ERROR_CANT_RESOLVE_FILENAME (`ErrorKind::FilesystemLoop` is not stable yet).
fn is_loop(e: &std::io::Error) -> bool {
    format!("{:?}", e.kind()) == "FilesystemLoop"
}

/// True for errors that mean the path given is wrong (the user can fix it): exit 2, not 1.
fn is_path_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        NotFound | PermissionDenied | IsADirectory | NotADirectory | InvalidFilename
    ) || is_loop(e)
}

impl Error {
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// Whether this is standard output closed by its reader (`pinscope plan x | head -1`).
    pub fn is_closed_output(&self) -> bool {
        matches!(self, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe)
    }

    /// The process exit status for this error: 2 invalid input (including a file that does not
    /// exist, a folder, a loop, no permission), 3 no GPU/driver, 130 interrupted, 1 anything else.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Scenario(_)
            | Error::Usage(_)
            | Error::BadResults { .. }
            | Error::Input { .. }
            | Error::BadModel { .. }
            | Error::Refused(_)
            | Error::Output(_) => 2,
            // A path that does not exist, is a folder, loops or may not be read is bad input,
            // not an I/O fault.
            Error::Io { source, .. } if is_path_error(source) => 2,
            Error::NoGpu(_) => 3,
            Error::Interrupted(_) => 130,
            Error::NotStarted { why, .. } => match why {
                StartFailure::NotFound => 127,
                StartFailure::NotExecutable => 126,
                StartFailure::Other(_) => 2,
            },
            Error::Cuda { .. } | Error::System(_) | Error::Io { .. } => 1,
        }
    }
}

#[cfg(test)]
impl Error {
    /// Asserts that this error refuses bad input (exit status 2) and that its message says `says`.
    pub(crate) fn assert_bad_input(&self, says: &str) {
        assert!(self.to_string().contains(says), "{self}");
        assert_eq!(self.exit_code(), 2, "{self}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::CudaError;
    use cudarc::driver::sys::CUresult;

    #[test]
    fn a_cuda_failure_at_start_says_what_where_and_how_to_fix_it() {
        let e = Error::Cuda {
            doing: "load its kernels (pinscope.ptx, embedded in the binary) into the GPU",
            error: CudaError::driver(
                "cuModuleLoadData",
                CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
            ),
        };
        assert_eq!(
            e.to_string(),
            "pinscope could not load its kernels (pinscope.ptx, embedded in the binary) into the GPU: cuModuleLoadData returned CUDA_ERROR_UNSUPPORTED_PTX_VERSION; the NVIDIA driver is older than the PTX of pinscope's kernels (PTX 7.0, CUDA 11.0): update the driver"
        );
        assert_eq!(e.exit_code(), 1);
        // A code with no advice of its own still says where to look.
        let e = Error::Cuda {
            doing: "allocate the page-locked flag its timed copies start on",
            error: CudaError::driver("cuMemHostAlloc", CUresult::CUDA_ERROR_NOT_PERMITTED),
        };
        assert!(e.to_string().ends_with("run `pinscope info` to check the driver and the GPU, and update the driver if it is old"), "{e}");
    }

    #[test]
    fn only_a_closed_pipe_is_a_closed_output() {
        use std::io::{Error as IoError, ErrorKind};
        let closed = Error::io(Path::new("-"), IoError::from(ErrorKind::BrokenPipe));
        assert!(closed.is_closed_output());
        let full = Error::io(Path::new("-"), IoError::from(ErrorKind::StorageFull));
        assert!(!full.is_closed_output());
        assert_eq!(Error::System("no thread".into()).exit_code(), 1);
    }
}

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

    /// A CUDA driver call failed outside a case (inside a case it becomes the row's status).
    #[error("CUDA call {call} failed with {code}{context}")]
    Cuda {
        call: &'static str,
        code: String,
        context: String,
    },

    #[error("{}", io_sentence(path, source))]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A results file that cannot be used.
    #[error("{} cannot be used: {reason}", path.display())]
    BadResults { path: PathBuf, reason: String },

    /// A guard refused the run before anything was allocated.
    #[error("{0}")]
    Refused(String),

    /// The run was interrupted (Ctrl-C); partial results are where the message says.
    #[error("interrupted: {0}")]
    Interrupted(String),
}

/// The same sentence on every OS for the common cases (the OS's own wording differs).
fn io_sentence(path: &Path, e: &std::io::Error) -> String {
    use std::io::ErrorKind::*;
    match e.kind() {
        NotFound => format!("{} does not exist: check the path", path.display()),
        PermissionDenied => format!(
            "{} cannot be accessed (permission denied): check its permissions",
            path.display()
        ),
        _ => format!("could not read or write {}: {e}", path.display()),
    }
}

impl Error {
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// The process exit status for this error: 2 invalid input (including a file that does not
    /// exist), 3 no GPU/driver, 130 interrupted, 1 anything else.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Scenario(_) | Error::Usage(_) | Error::BadResults { .. } | Error::Refused(_) => {
                2
            }
            // A file named on the command line that does not exist is bad input, not an I/O fault.
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => 2,
            Error::NoGpu(_) => 3,
            Error::Interrupted(_) => 130,
            Error::Cuda { .. } | Error::Io { .. } => 1,
        }
    }
}

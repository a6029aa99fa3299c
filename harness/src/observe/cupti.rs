//! Where CUPTI is on this machine. It ships with the CUDA toolkit and in PyPI's
//! `nvidia-cuda-cupti` wheel (what PyTorch installs), not with the driver. Looked for, in order:
//! `--cupti PATH` (the library or its folder); the toolkit folders of `CUDA_PATH` and
//! `CUDA_HOME` (`extras/CUPTI/lib64`, `targets/x86_64-linux/lib`, `lib64`) and the default
//! toolkit folder; the Python environment of the command (the prefix of its interpreter when the
//! command is `python…`, `VIRTUAL_ENV`, `CONDA_PREFIX`: `site-packages/nvidia/cuda_cupti/lib`).
//! Library names: `libcupti.so*` (Linux), `cupti64_*.dll` (Windows).

use crate::Error;
use crate::results::CuptiRecord;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Folders under a toolkit root where CUPTI lives.
const TOOLKIT_SUBDIRS: [&str; 3] = ["extras/CUPTI/lib64", "targets/x86_64-linux/lib", "lib64"];

/// What the search reads of the world: injected, so tests run on fixture folders.
pub struct Search<'a> {
    /// `--cupti PATH`.
    pub explicit: Option<&'a Path>,
    /// An environment variable's value.
    pub env: &'a dyn Fn(&str) -> Option<OsString>,
    /// The command's program as written (`python3`, `./venv/bin/python`).
    pub program: Option<&'a Path>,
    /// Toolkit folders looked in after the environment's (`/usr/local/cuda`).
    pub default_toolkits: Vec<PathBuf>,
    /// Windows library names instead of Linux ones.
    pub windows: bool,
}

impl Search<'_> {
    /// The search on this machine, for this command.
    pub fn here<'a>(explicit: Option<&'a Path>, program: Option<&'a Path>) -> Search<'a> {
        static ENV: fn(&str) -> Option<OsString> = |k| std::env::var_os(k);
        Search {
            explicit,
            env: &ENV,
            program,
            default_toolkits: if cfg!(windows) {
                Vec::new()
            } else {
                vec![PathBuf::from("/usr/local/cuda")]
            },
            windows: cfg!(windows),
        }
    }

    fn is_cupti(&self, name: &str) -> bool {
        if self.windows {
            let n = name.to_ascii_lowercase();
            n.starts_with("cupti64_") && n.ends_with(".dll")
        } else {
            name.starts_with("libcupti.so")
        }
    }

    /// The CUPTI library in `dir`, the first by name.
    fn in_folder(&self, dir: &Path) -> Option<PathBuf> {
        let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
            .ok()?
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_str().is_some_and(|n| self.is_cupti(n)))
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        found.sort();
        found.into_iter().next()
    }

    /// Every (folder, how it was found) to look in, in order.
    fn candidates(&self) -> Vec<(PathBuf, String)> {
        let mut out = Vec::new();
        let mut toolkits: Vec<(PathBuf, String)> = ["CUDA_PATH", "CUDA_HOME"]
            .into_iter()
            .filter_map(|k| Some(((self.env)(k)?.into(), k.to_string())))
            .collect();
        toolkits.extend(
            self.default_toolkits
                .iter()
                .map(|d| (d.clone(), format!("the CUDA toolkit at {}", d.display()))),
        );
        for (root, via) in toolkits {
            for sub in TOOLKIT_SUBDIRS {
                out.push((root.join(sub), via.clone()));
            }
        }
        for (prefix, via) in self.python_prefixes() {
            for dir in cupti_wheel_folders(&prefix, self.windows) {
                out.push((dir, via.clone()));
            }
        }
        out
    }

    /// The Python environments the command may run in, with how each was found.
    fn python_prefixes(&self) -> Vec<(PathBuf, String)> {
        let mut out = Vec::new();
        if let Some(p) = self.program.and_then(|p| self.interpreter(p))
            && let Some(prefix) = p.parent().and_then(Path::parent)
        {
            out.push((
                prefix.to_path_buf(),
                format!("the environment of {}", p.display()),
            ));
        }
        for k in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
            if let Some(v) = (self.env)(k) {
                out.push((PathBuf::from(v), k.to_string()));
            }
        }
        out
    }

    /// The command's program as a path when it is a Python interpreter (`python`, `python3.12`).
    fn interpreter(&self, program: &Path) -> Option<PathBuf> {
        let name = program.file_name()?.to_str()?.to_ascii_lowercase();
        if !name.starts_with("python") {
            return None;
        }
        if program.components().count() > 1 {
            return Some(program.to_path_buf());
        }
        which(program, &(self.env)("PATH")?, self.windows)
    }

    /// Finds CUPTI, or says what is missing; an unusable `--cupti` is refused.
    pub fn find(&self) -> Result<CuptiRecord, Error> {
        if let Some(path) = self.explicit {
            return self.explicit_record(path);
        }
        let mut searched = Vec::new();
        for (dir, via) in self.candidates() {
            if let Some(found) = self.in_folder(&dir) {
                return Ok(CuptiRecord {
                    found: Some(found),
                    found_via: Some(via),
                    missing: None,
                    searched,
                });
            }
            searched.push(dir);
        }
        Ok(CuptiRecord {
            found: None,
            found_via: None,
            missing: Some(MISSING.into()),
            searched,
        })
    }

    fn explicit_record(&self, path: &Path) -> Result<CuptiRecord, Error> {
        let found = if path.is_dir() {
            self.in_folder(path)
        } else {
            path.is_file().then(|| path.to_path_buf())
        };
        let found = found.ok_or_else(|| {
            Error::Usage(format!(
                "--cupti {} is neither the CUPTI library nor a folder holding it ({}): give the path of the library, or leave --cupti out to have pinscope look for it",
                path.display(),
                if self.windows {
                    "cupti64_*.dll"
                } else {
                    "libcupti.so*"
                }
            ))
        })?;
        Ok(CuptiRecord {
            found: Some(found),
            found_via: Some("--cupti".into()),
            missing: None,
            searched: vec![path.to_path_buf()],
        })
    }
}

/// The one sentence recorded when CUPTI was not found.
pub const MISSING: &str = "CUPTI was not found, so who allocated what is not recorded (only the memory observers are): install it with `pip install nvidia-cuda-cupti-cu12` in the command's Python environment, or install the CUDA toolkit, or pass --cupti PATH";

/// The folders of the `nvidia-cuda-cupti` wheel under a Python prefix.
fn cupti_wheel_folders(prefix: &Path, windows: bool) -> Vec<PathBuf> {
    if windows {
        return vec![prefix.join("Lib/site-packages/nvidia/cuda_cupti/bin")];
    }
    let mut out = Vec::new();
    for lib in ["lib", "lib64"] {
        let Ok(dir) = std::fs::read_dir(prefix.join(lib)) else {
            continue;
        };
        let mut pythons: Vec<PathBuf> = dir
            .filter_map(Result::ok)
            .filter(|e| {
                e.file_name()
                    .to_str()
                    .is_some_and(|n| n.starts_with("python"))
            })
            .map(|e| e.path().join("site-packages/nvidia/cuda_cupti/lib"))
            .collect();
        pythons.sort();
        out.extend(pythons);
    }
    out
}

/// `program` looked up in the folders of `path_var` (the value of PATH).
pub fn which(program: &Path, path_var: &std::ffi::OsStr, windows: bool) -> Option<PathBuf> {
    std::env::split_paths(path_var).find_map(|dir| {
        let p = dir.join(program);
        if p.is_file() {
            return Some(p);
        }
        let exe = dir.join(format!("{}.exe", program.display()));
        (windows && exe.is_file()).then_some(exe)
    })
}

#[cfg(test)]
mod tests;

//! How much of a file the page cache holds, and making it cold without root.
//!
//! Counting: the kernel's `mincore` over a read-only mapping of the file. The mapping and the
//! call are `unsafe`, which pinscope allows only in its CUDA and Windows layers, so the callers
//! that may use that layer pass its count in ([`drop_cached`]); [`resident`] here asks
//! util-linux's `fincore` (which does exactly that), a program not every machine has. Reading the
//! file with `preadv2(RWF_NOWAIT)` is no substitute: measured on Linux 6.18 (ext4), a pass of
//! such reads over a cold 381 MiB file returned 7 MiB and left all of it cached, so the count
//! itself warms the file. Dropping:
//! `fdatasync` (dirty pages cannot be dropped), then `posix_fadvise(POSIX_FADV_DONTNEED)` on the
//! whole file, then counting again. `/proc/sys/vm/drop_caches` is not used: it needs root and
//! drops every file's cache on the machine. Some file systems (tmpfs) keep their pages whatever
//! is advised: the record then says the file stayed resident, and the run is warm.

use std::path::Path;

/// Why the resident bytes could not be counted.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unavailable {
    /// Not Linux.
    ThisOs,
    /// `fincore` (util-linux) is not installed or could not be started.
    NoFincore,
    /// `fincore` ran and failed or printed no number.
    FincoreFailed,
    /// `mincore` over a mapping of the file failed, and so did `fincore`.
    MincoreFailed,
}

impl Unavailable {
    pub fn sentence(&self) -> &'static str {
        match self {
            Unavailable::ThisOs => {
                "unavailable on this OS: pinscope counts and drops a file's cached pages with Linux's mincore and posix_fadvise"
            }
            Unavailable::NoFincore => {
                "not counted: util-linux's `fincore` is not installed (util-linux-extra on Debian and Ubuntu, util-linux elsewhere)"
            }
            Unavailable::FincoreFailed => "not counted: `fincore` failed on this file",
            Unavailable::MincoreFailed => {
                "not counted: mapping the file for mincore failed, and util-linux's `fincore` could not count it either"
            }
        }
    }
}

/// Bytes of the file in the page cache, or why they are not known.
pub type Resident = Result<u64, Unavailable>;

/// What the drop did, from the counts before and after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Nothing was resident before: the file was already cold.
    AlreadyCold,
    /// Fewer bytes are resident after.
    Dropped,
    /// As many bytes are resident after: the file system keeps its pages (tmpfs, for instance)
    /// and the file stays warm.
    Kept,
    /// The counts are not both known.
    Unknown,
}

impl Effect {
    pub fn of(before: &Resident, after: &Resident) -> Effect {
        match (before, after) {
            (Ok(0), Ok(_)) => Effect::AlreadyCold,
            (Ok(b), Ok(a)) if a < b => Effect::Dropped,
            (Ok(_), Ok(_)) => Effect::Kept,
            _ => Effect::Unknown,
        }
    }
}

/// How a file was made cold, and what was resident before and after.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DropRecord {
    /// `posix_fadvise(POSIX_FADV_DONTNEED)` after `fdatasync`.
    pub method: &'static str,
    /// How resident pages were counted.
    pub counted_with: &'static str,
    pub file_bytes: u64,
    #[serde(serialize_with = "resident_field")]
    pub resident_before: Resident,
    #[serde(serialize_with = "resident_field")]
    pub resident_after: Resident,
    pub effect: Effect,
}

/// Resident bytes as JSON: the number, or the sentence saying why there is none.
pub fn resident_field<S: serde::Serializer>(r: &Resident, s: S) -> Result<S::Ok, S::Error> {
    match r {
        Ok(bytes) => s.serialize_u64(*bytes),
        Err(why) => s.serialize_str(why.sentence()),
    }
}

pub const DROP_METHOD: &str = "posix_fadvise(POSIX_FADV_DONTNEED) after fdatasync";
pub const COUNTED_WITH: &str =
    "mincore over a mapping of the file (util-linux fincore where that fails)";

/// Bytes of `path` in the page cache now.
pub fn resident(path: &Path) -> Resident {
    imp::resident(path)
}

/// Asks the kernel to drop `path`'s cached pages, counting before and after with `count` (the
/// scenario layer's `resident`: `mincore`, else [`resident`] here). An error is a file that could
/// not be opened or advised.
pub fn drop_cached(path: &Path, count: fn(&Path) -> Resident) -> Result<DropRecord, crate::Error> {
    let file_bytes = std::fs::metadata(path)
        .map_err(|e| crate::Error::io(path, e))?
        .len();
    let resident_before = count(path);
    imp::advise_dont_need(path)?;
    let resident_after = count(path);
    Ok(DropRecord {
        method: DROP_METHOD,
        counted_with: COUNTED_WITH,
        file_bytes,
        effect: Effect::of(&resident_before, &resident_after),
        resident_before,
        resident_after,
    })
}

#[cfg(target_os = "linux")]
mod imp {
    use super::{Resident, Unavailable};
    use std::path::Path;

    pub fn resident(path: &Path) -> Resident {
        let out = std::process::Command::new("fincore")
            .args(["--bytes", "--noheadings", "--raw", "--output", "RES", "--"])
            .arg(path)
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|_| Unavailable::NoFincore)?;
        if !out.status.success() {
            return Err(Unavailable::FincoreFailed);
        }
        std::str::from_utf8(&out.stdout)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .ok_or(Unavailable::FincoreFailed)
    }

    pub fn advise_dont_need(path: &Path) -> Result<(), crate::Error> {
        let file = std::fs::File::open(path).map_err(|e| crate::Error::io(path, e))?;
        let fail = |e: rustix::io::Errno| crate::Error::io(path, e.into());
        rustix::fs::fdatasync(&file).map_err(fail)?;
        rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed).map_err(fail)
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::{Resident, Unavailable};
    use std::path::Path;

    pub fn resident(_: &Path) -> Resident {
        Err(Unavailable::ThisOs)
    }

    pub fn advise_dont_need(_: &Path) -> Result<(), crate::Error> {
        Err(crate::Error::Usage(Unavailable::ThisOs.sentence().into()))
    }
}

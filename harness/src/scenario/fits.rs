//! Whether a case fits a machine: the pinned cap (`--allow-pinned`), host memory and free device
//! memory. `plan` and `run` ask these questions here, so they refuse the same cases in the same
//! words.

use super::Case;
use crate::units::format_size;
use std::fmt;

/// `--allow-pinned`: the largest fraction of physical RAM one case may pin, above 0 and at most
/// [`AllowPinned::MAX`]. Checked once, when the value is read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AllowPinned(f64);

impl AllowPinned {
    /// The largest share of RAM a case may pin: the rest is left to the OS and the process.
    pub const MAX: f64 = 0.9;
    /// The share used when none is given.
    pub const DEFAULT: AllowPinned = AllowPinned(0.5);

    /// `fraction` when it is above 0 and at most [`AllowPinned::MAX`]; else the sentence that
    /// says so.
    pub fn new(fraction: f64) -> Result<AllowPinned, String> {
        if fraction > 0.0 && fraction <= Self::MAX {
            Ok(AllowPinned(fraction))
        } else {
            Err(format!(
                "{fraction} is not a share of RAM a case may pin: give a fraction above 0 and at most {}, such as 0.5",
                Self::MAX
            ))
        }
    }

    pub fn fraction(self) -> f64 {
        self.0
    }
}

impl Default for AllowPinned {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl std::str::FromStr for AllowPinned {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let fraction: f64 = s.trim().parse().map_err(|_| {
            format!(
                "`{s}` is not a number: give a fraction of RAM above 0 and at most {}, such as 0.5",
                Self::MAX
            )
        })?;
        Self::new(fraction)
    }
}

impl fmt::Display for AllowPinned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Why a case would not run on a machine, decided before anything is allocated.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// It would pin more than `allow_pinned` × RAM.
    PinnedOverCap {
        pinned: u64,
        cap: u64,
        allow_pinned: f64,
    },
    /// Its host memory is more than 90% of RAM.
    HostOverRam { host: u64, ram: u64 },
    /// Its device memory is more than is free (a case with `guard = true`).
    PastTheCard { need: u64, free: u64 },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Refusal::PinnedOverCap {
                pinned,
                cap,
                allow_pinned,
            } => write!(
                f,
                "pins {}, over the cap of {} ({allow_pinned} × RAM; raise it with --allow-pinned)",
                format_size(pinned),
                format_size(cap)
            ),
            Refusal::HostOverRam { host, ram } => write!(
                f,
                "needs {} of host memory, over 90% of RAM ({})",
                format_size(host),
                format_size(ram)
            ),
            Refusal::PastTheCard { need, free } => write!(
                f,
                "past the card: needs {} of {} free",
                format_size(need),
                format_size(free)
            ),
        }
    }
}

/// Why `c` would not run on a machine with `ram_bytes` of RAM (unknown or 0: not checked) and
/// `device_free` bytes of free device memory (unknown: not checked), or `None`. Device memory is
/// checked only for cases with `guard = true`; `device_hold` is the runner's own step.
pub fn refusal(
    c: &Case,
    ram_bytes: Option<u64>,
    allow_pinned: f64,
    device_free: Option<u64>,
) -> Option<Refusal> {
    if let Some(ram) = ram_bytes.filter(|&r| r > 0) {
        let cap = (allow_pinned * ram as f64) as u64;
        let pinned = c.pinned_bytes();
        if pinned > cap {
            return Some(Refusal::PinnedOverCap {
                pinned,
                cap,
                allow_pinned,
            });
        }
        let host = c.host_bytes();
        if host > ram.saturating_mul(9) / 10 {
            return Some(Refusal::HostOverRam { host, ram });
        }
    }
    let need = c.device_bytes();
    match device_free {
        Some(free) if c.guard && need > free => Some(Refusal::PastTheCard { need, free }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::GIB;

    fn case(lines: &str) -> Case {
        let text = format!("name = \"t\"\ndescription = \"d\"\n[[case]]\nlabel = \"c\"\n{lines}\n");
        crate::scenario::parse("t.toml", &text)
            .expect("valid")
            .cases
            .remove(0)
    }

    #[test]
    fn allow_pinned_is_above_zero_and_at_most_nine_tenths() {
        for ok in ["0.5", "0.9", "0.01", " 0.25 "] {
            assert!(ok.parse::<AllowPinned>().is_ok(), "{ok}");
        }
        for bad in ["0", "-0.1", "0.91", "2", "NaN", "inf"] {
            let e = bad.parse::<AllowPinned>().expect_err(bad);
            assert!(e.contains("above 0 and at most 0.9"), "{bad}: {e}");
        }
        let e = "lots".parse::<AllowPinned>().expect_err("not a number");
        assert!(e.starts_with("`lots` is not a number"), "{e}");
        assert_eq!(AllowPinned::default().fraction(), 0.5);
    }

    #[test]
    fn a_pageable_case_larger_than_free_device_memory_is_past_the_card() {
        let c = case("host = \"pageable\"\nsize = \"8GiB\"");
        let r = refusal(&c, Some(64 * GIB), 0.5, Some(GIB));
        assert_eq!(
            r.map(|r| r.to_string()).as_deref(),
            Some("past the card: needs 8 GiB of 1 GiB free")
        );
        assert_eq!(refusal(&c, Some(64 * GIB), 0.5, Some(8 * GIB)), None);
        assert_eq!(refusal(&c, Some(64 * GIB), 0.5, None), None);
        // guard = false lets the runner's overflow step decide.
        let c = case("host = \"pageable\"\nsize = \"8GiB\"\nguard = false");
        assert_eq!(refusal(&c, Some(64 * GIB), 0.5, Some(GIB)), None);
    }

    #[test]
    fn pinned_and_host_memory_are_checked_against_ram() {
        let c = case("host = \"alloc\"\nsize = \"4GiB\"");
        assert_eq!(
            refusal(&c, Some(8 * GIB), 0.25, None)
                .map(|r| r.to_string())
                .as_deref(),
            Some("pins 4 GiB, over the cap of 2 GiB (0.25 × RAM; raise it with --allow-pinned)")
        );
        // RAM unknown (or reported as 0): not checked.
        assert_eq!(refusal(&c, None, 0.25, None), None);
        assert_eq!(refusal(&c, Some(0), 0.25, None), None);
        let c = case("host = \"pageable\"\nsize = \"8GiB\"");
        assert_eq!(
            refusal(&c, Some(8 * GIB), 0.5, None),
            Some(Refusal::HostOverRam {
                host: 8 * GIB,
                ram: 8 * GIB
            })
        );
    }
}

//! Keys of the device-memory experiments: `device_hold` (device memory held while a case
//! runs, absolute or relative to free device memory), and the pinned-churn keys `cycles` and
//! `pause`; their values, and the rules about combining them with the other keys.

use super::{Case, Engine, HostKind, Mode};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// Device memory a case holds (plain `cuMemAlloc`, never managed memory) before its own buffers
/// are allocated, kept until the case and its probes end.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub enum DeviceHold {
    /// Nothing held (`"0"`, the default).
    #[default]
    None,
    /// A fixed number of bytes (`"8GiB"`).
    Bytes(u64),
    /// Free device memory at the start of the case, plus or minus a percentage of it
    /// (`"free-10%"`: 90% of free, `"free+5%"`: 105%). The value is the factor, 0.9 or 1.05.
    FreeFactor(f64),
    /// Free device memory plus (or minus) a number of bytes (`"free-2GiB"`).
    FreeBytes(i64),
}

/// The keys of this module, as a [`Case`] holds them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VramKeys {
    pub device_hold: DeviceHold,
    /// `device_hold` as written, for plans and messages.
    pub device_hold_written: String,
    /// Copies of a `mode = "churn"` case.
    pub cycles: u32,
    /// Pause between pinning a buffer and copying it (`mode = "churn"`).
    pub pause: Duration,
}

/// Default `cycles`.
pub const DEFAULT_CYCLES: u32 = 20;
/// Default `pause`: 5 ms, the pause at which WSL2 users saw 19 of 20 churned copies return
/// success and leave wrong data.
pub const DEFAULT_PAUSE: Duration = Duration::from_millis(5);
/// Largest percentage `free+P%` may add: twice the free memory at most.
pub const MAX_OVER_PERCENT: f64 = 100.0;

impl Default for VramKeys {
    fn default() -> Self {
        Self {
            device_hold: DeviceHold::None,
            device_hold_written: "0".into(),
            cycles: DEFAULT_CYCLES,
            pause: DEFAULT_PAUSE,
        }
    }
}

impl VramKeys {
    /// What [`Case::key`] adds for these keys: nothing when they are at their defaults, so the
    /// keys of existing results stay the same.
    pub fn key_suffix(&self, mode: Mode) -> String {
        let mut s = String::new();
        if self.device_hold != DeviceHold::None {
            s.push_str(&format!(",device_hold={}", self.device_hold_written));
        }
        if mode == Mode::Churn {
            s.push_str(&format!(
                ",cycles={},pause={}ms",
                self.cycles,
                self.pause.as_millis()
            ));
        }
        s
    }
}

/// The text every `device_hold` message shows as the accepted forms.
pub const HOLD_FORMS: &str = "a size like \"8GiB\", \"0\" for none, or free device memory plus or minus a part of it, like \"free-10%\", \"free+5%\" or \"free-2GiB\"";

impl DeviceHold {
    /// Parses what the user wrote (a string, or a whole number of bytes as text).
    pub fn parse(s: &str) -> Result<DeviceHold, String> {
        let t = s.trim();
        let Some(rest) = t.strip_prefix("free") else {
            return match crate::units::parse_size(t) {
                Ok(0) => Ok(DeviceHold::None),
                Ok(b) => Ok(DeviceHold::Bytes(b)),
                Err(_) => Err(format!("must be {HOLD_FORMS}, not \"{s}\"")),
            };
        };
        let rest = rest.trim();
        if rest.is_empty() {
            return Ok(DeviceHold::FreeFactor(1.0));
        }
        let (sign, amount) = match (rest.strip_prefix('+'), rest.strip_prefix('-')) {
            (Some(a), _) => (1.0, a.trim()),
            (_, Some(a)) => (-1.0, a.trim()),
            _ => return Err(format!("must be {HOLD_FORMS}, not \"{s}\"")),
        };
        if let Some(p) = amount.strip_suffix('%') {
            let p: f64 = p
                .trim()
                .parse()
                .ok()
                .filter(|p: &f64| p.is_finite() && *p >= 0.0)
                .ok_or_else(|| format!("must be {HOLD_FORMS}, not \"{s}\""))?;
            if sign < 0.0 && p > 100.0 {
                return Err(format!(
                    "\"{s}\" takes away more than all free device memory: use at most free-100%"
                ));
            }
            if sign > 0.0 && p > MAX_OVER_PERCENT {
                return Err(format!(
                    "\"{s}\" asks for more than twice the free device memory: use at most free+100%"
                ));
            }
            return Ok(DeviceHold::FreeFactor(1.0 + sign * p / 100.0));
        }
        let b = crate::units::parse_size(amount)
            .map_err(|_| format!("must be {HOLD_FORMS}, not \"{s}\""))?;
        let b = i64::try_from(b).map_err(|_| format!("\"{s}\" is too large"))?;
        Ok(DeviceHold::FreeBytes(if sign < 0.0 { -b } else { b }))
    }

    /// Bytes held on a device with `free` bytes of free device memory (rounded down to 1 MiB).
    pub fn resolve(self, free: u64) -> u64 {
        let raw = match self {
            DeviceHold::None => 0,
            DeviceHold::Bytes(b) => b,
            DeviceHold::FreeFactor(f) => (free as f64 * f.max(0.0)) as u64,
            DeviceHold::FreeBytes(d) => {
                if d >= 0 {
                    free.saturating_add(d.unsigned_abs())
                } else {
                    free.saturating_sub(d.unsigned_abs())
                }
            }
        };
        raw / crate::units::MIB * crate::units::MIB
    }

    /// True when the hold alone, whatever the card, reaches all free device memory: `free`,
    /// `free+...`; then the case's own buffers can only go past the card.
    pub fn reaches_free(self) -> bool {
        match self {
            DeviceHold::FreeFactor(f) => f >= 1.0,
            DeviceHold::FreeBytes(d) => d >= 0,
            DeviceHold::None | DeviceHold::Bytes(_) => false,
        }
    }

    pub fn is_none(self) -> bool {
        self == DeviceHold::None
    }
}

impl fmt::Display for DeviceHold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceHold::None => f.write_str("0"),
            DeviceHold::Bytes(b) => f.write_str(&crate::units::format_size(*b)),
            DeviceHold::FreeFactor(x) if *x == 1.0 => f.write_str("free"),
            DeviceHold::FreeFactor(x) => {
                let p = (x - 1.0) * 100.0;
                write!(
                    f,
                    "free{}{}%",
                    if p < 0.0 { "-" } else { "+" },
                    round2(p.abs())
                )
            }
            DeviceHold::FreeBytes(d) => write!(
                f,
                "free{}{}",
                if *d < 0 { "-" } else { "+" },
                crate::units::format_size(d.unsigned_abs())
            ),
        }
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The exact rule texts, shared with the tests.
pub const HOLD_PAST_FREE: &str = "holds all free device memory or more, so the case's memory goes past the card: set guard = false in this case to try it (`pinscope run` also needs --allow-vram-overflow)";
pub const HOLD_WITH_MANAGED: &str = "`device_hold` with host = \"managed\" could push managed memory past free device memory, which can hang the GPU: hold device memory only in cases without managed memory";
pub const CHURN_NEEDS_COPY: &str = "mode = \"churn\" needs engine = \"copy\"";

/// The rules of this module about combinations of keys: (keys involved, message). `written` says
/// whether a key was given (in `[defaults]`, a `[[case]]` or a sweep).
pub(super) fn rules(
    c: &Case,
    written: &dyn Fn(&str) -> bool,
) -> Vec<(&'static [&'static str], String)> {
    let mut v: Vec<(&'static [&'static str], String)> = Vec::new();
    if c.engine.is_device() {
        // The empty kernel moves nothing, so it takes no size either.
        let empty = c.engine == Engine::Empty;
        let keys: &[&str] = if empty {
            &["host", "flags", "direction", "size"]
        } else {
            &["host", "flags", "direction"]
        };
        let given: Vec<&str> = keys.iter().copied().filter(|k| written(k)).collect();
        if !given.is_empty() {
            let list: Vec<String> = given.iter().map(|k| format!("`{k}`")).collect();
            let what = if empty {
                "moves nothing (no host buffer, no direction, no size)"
            } else {
                "works on device memory only (no host buffer, no direction)"
            };
            v.push((
                &["engine", "host", "flags", "direction", "size"],
                format!(
                    "engine = \"{}\" {what}: remove {}",
                    c.engine,
                    list.join(", ")
                ),
            ));
        }
    }
    if c.vram.device_hold.reaches_free() && c.guard {
        v.push((
            &["device_hold", "guard"],
            format!(
                "device_hold = \"{}\" {HOLD_PAST_FREE}",
                c.vram.device_hold_written
            ),
        ));
    }
    if !c.vram.device_hold.is_none() && c.host == HostKind::Managed {
        v.push((&["device_hold", "host"], HOLD_WITH_MANAGED.into()));
    }
    if c.mode == Mode::Churn {
        if !c.host.is_pinned() {
            v.push((
                &["mode", "host"],
                format!(
                    "mode = \"churn\" allocates, copies from and frees page-locked memory each cycle: it needs host = \"alloc\" or \"register\", not \"{}\"",
                    c.host
                ),
            ));
        }
        if c.engine != Engine::Copy {
            v.push((&["mode", "engine"], CHURN_NEEDS_COPY.into()));
        }
    } else {
        for key in ["cycles", "pause"] {
            if written(key) {
                v.push((
                    if key == "cycles" { &["cycles", "mode"] } else { &["pause", "mode"] },
                    format!(
                        "`{key}` applies only to mode = \"churn\": remove it or set mode = \"churn\""
                    ),
                ));
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{GIB, MIB};

    #[test]
    fn hold_forms_parse_and_resolve() {
        let free = 100 * GIB;
        assert_eq!(DeviceHold::parse("0"), Ok(DeviceHold::None));
        assert_eq!(DeviceHold::parse("8GiB"), Ok(DeviceHold::Bytes(8 * GIB)));
        assert_eq!(DeviceHold::parse("free"), Ok(DeviceHold::FreeFactor(1.0)));
        let h = DeviceHold::parse("free+10%").unwrap();
        assert_eq!(h.resolve(free), 110 * GIB);
        assert!(h.reaches_free());
        let h = DeviceHold::parse("free-10%").unwrap();
        assert_eq!(h.resolve(free), 90 * GIB);
        assert!(!h.reaches_free());
        assert_eq!(
            DeviceHold::parse("free-50%").unwrap().resolve(free),
            50 * GIB
        );
        assert_eq!(
            DeviceHold::parse("free-2GiB").unwrap().resolve(free),
            98 * GIB
        );
        assert_eq!(
            DeviceHold::parse("free+512MiB").unwrap().resolve(free),
            free + 512 * MIB
        );
        assert_eq!(DeviceHold::parse("free-100%").unwrap().resolve(free), 0);
        assert_eq!(DeviceHold::parse("free-2GiB").unwrap().resolve(GIB), 0);
        // Rounded down to whole MiB.
        assert_eq!(DeviceHold::parse("free-50%").unwrap().resolve(3 * MIB), MIB);
    }

    #[test]
    fn hold_shows_what_it_means() {
        for s in ["free", "free-10%", "free+5%", "free-2 GiB", "0", "8 GiB"] {
            let h = DeviceHold::parse(s).unwrap();
            assert_eq!(h.to_string(), s);
        }
    }

    #[test]
    fn bad_holds_say_which_forms_exist() {
        let forms = format!("must be {HOLD_FORMS}, not \"half\"");
        assert_eq!(DeviceHold::parse("half"), Err(forms));
        assert_eq!(
            DeviceHold::parse("free*2"),
            Err(format!("must be {HOLD_FORMS}, not \"free*2\""))
        );
        assert_eq!(
            DeviceHold::parse("free-150%"),
            Err(
                "\"free-150%\" takes away more than all free device memory: use at most free-100%"
                    .into()
            )
        );
        assert_eq!(
            DeviceHold::parse("free+150%"),
            Err("\"free+150%\" asks for more than twice the free device memory: use at most free+100%".into())
        );
    }
}

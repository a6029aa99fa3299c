//! Test-only fault injection (cargo feature `fault-injection`, off by default).
//!
//! With the feature, the allocation, registration and copy functions of `host_memory`,
//! `device_memory` and `streams` call
//! [`check`] before touching the driver; it fails the call with
//! `CudaError { call, code: "INJECTED_FAULT" }` when the spec says so. The spec comes from
//! [`set`] (tests, in-process) or else the environment variable `PINSCOPE_FAULT`: a comma list of
//!
//! - `alloc` — `HostBuffer::pinned` / `HostBuffer::managed`
//! - `register` — `HostBuffer::register` (and so `registered`) / `HostBuffer::register_range`
//! - `copy` — `Stream::copy_h2d` / `Stream::copy_d2h`
//! - `device-alloc` — `DeviceBuffer::new`
//!
//! each alone (every such call fails) or as `name@N` (only the N-th such call fails, counting
//! from 1 since the spec was last changed). `PINSCOPE_FAULT=copy@2,device-alloc@1`.
//!
//! Without the feature those hooks are not compiled; this parser is still built for
//! its unit tests.

use super::CudaError;
use std::sync::Mutex;

/// Name of the environment variable read when no spec was [`set`].
pub const ENV: &str = "PINSCOPE_FAULT";

/// The code of an injected failure.
pub const INJECTED: &str = "INJECTED_FAULT";

/// The kinds of driver call that can be made to fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    Alloc,
    Register,
    Copy,
    DeviceAlloc,
}

impl Call {
    pub const ALL: [Call; 4] = [Call::Alloc, Call::Register, Call::Copy, Call::DeviceAlloc];

    pub fn name(self) -> &'static str {
        match self {
            Call::Alloc => "alloc",
            Call::Register => "register",
            Call::Copy => "copy",
            Call::DeviceAlloc => "device-alloc",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One entry of the spec: fail every call of a kind, or only the `nth` (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub call: Call,
    pub nth: Option<u64>,
}

/// Parses a spec (`copy@2,alloc`); an empty or blank spec injects nothing. The error is one
/// sentence naming the bad entry.
pub fn parse(spec: &str) -> Result<Vec<Rule>, String> {
    let mut rules = Vec::new();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (name, nth) = match item.split_once('@') {
            Some((n, k)) => {
                let k: u64 = k.trim().parse().ok().filter(|k| *k >= 1).ok_or_else(|| {
                    format!("{ENV}: `{item}` must be `name@N` with N a whole number from 1")
                })?;
                (n.trim(), Some(k))
            }
            None => (item, None),
        };
        let call = Call::ALL
            .into_iter()
            .find(|c| c.name() == name)
            .ok_or_else(|| {
                format!(
                    "{ENV}: unknown call `{name}` in `{item}`: use alloc, register, copy or device-alloc"
                )
            })?;
        rules.push(Rule { call, nth });
    }
    Ok(rules)
}

/// Parsed spec plus how many calls of each kind were seen since it was last changed.
struct State {
    /// What the rules were parsed from (`None`: nothing seen yet).
    spec: Option<String>,
    rules: Result<Vec<Rule>, String>,
    counts: [u64; 4],
}

static STATE: Mutex<State> = Mutex::new(State {
    spec: None,
    rules: Ok(Vec::new()),
    counts: [0; 4],
});

/// An in-process spec that takes precedence over `PINSCOPE_FAULT` (`None`: use the environment).
static OVERRIDE: Mutex<Option<String>> = Mutex::new(None);

/// Sets the spec for this process (tests), resetting the call counts; `None` goes back to the
/// environment variable.
pub fn set(spec: Option<&str>) {
    let mut o = OVERRIDE.lock().unwrap_or_else(|p| p.into_inner());
    *o = spec.map(str::to_string);
    let mut st = STATE.lock().unwrap_or_else(|p| p.into_inner());
    st.spec = None;
}

fn current_spec() -> String {
    let o = OVERRIDE.lock().unwrap_or_else(|p| p.into_inner());
    match &*o {
        Some(s) => s.clone(),
        None => std::env::var(ENV).unwrap_or_default(),
    }
}

/// Counts one call of kind `call` and decides whether it fails; `name` is the driver function
/// the error names. A spec that does not parse fails every hooked call, loudly, with its reason.
pub fn check(call: Call, name: &'static str) -> Result<(), CudaError> {
    let spec = current_spec();
    let mut st = STATE.lock().unwrap_or_else(|p| p.into_inner());
    if st.spec.as_deref() != Some(spec.as_str()) {
        st.rules = parse(&spec);
        st.counts = [0; 4];
        st.spec = Some(spec);
    }
    st.counts[call.index()] += 1;
    let n = st.counts[call.index()];
    match &st.rules {
        Err(why) => Err(CudaError::new(name, format!("INVALID_FAULT_SPEC ({why})"))),
        Ok(rules) => {
            let hit = rules
                .iter()
                .any(|r| r.call == call && r.nth.is_none_or(|k| k == n));
            if hit {
                Err(CudaError::new(name, INJECTED))
            } else {
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(call: Call, nth: Option<u64>) -> Rule {
        Rule { call, nth }
    }

    #[test]
    fn specs_parse() {
        assert_eq!(parse(""), Ok(vec![]));
        assert_eq!(parse("  "), Ok(vec![]));
        assert_eq!(parse("copy"), Ok(vec![r(Call::Copy, None)]));
        assert_eq!(
            parse("copy@2, alloc ,device-alloc@1,register@10"),
            Ok(vec![
                r(Call::Copy, Some(2)),
                r(Call::Alloc, None),
                r(Call::DeviceAlloc, Some(1)),
                r(Call::Register, Some(10)),
            ])
        );
        assert_eq!(parse("copy,,"), Ok(vec![r(Call::Copy, None)]));
    }

    #[test]
    fn bad_specs_say_which_entry() {
        let e = parse("copy,memcpy").expect_err("unknown call");
        assert!(e.contains("unknown call `memcpy`"), "{e}");
        assert!(e.starts_with("PINSCOPE_FAULT: "), "{e}");
        for bad in ["copy@0", "copy@", "copy@x", "copy@-1", "@3"] {
            assert!(parse(bad).is_err(), "{bad} was accepted");
        }
        assert!(parse("copy@0").is_err_and(|e| e.contains("`copy@0` must be `name@N`")));
    }

    /// The one test that changes the process-wide spec (tests run in parallel).
    #[test]
    fn check_counts_calls_per_kind_and_fails_the_nth() {
        set(Some("copy@2,device-alloc"));
        let copy = |_| check(Call::Copy, "cuMemcpyHtoDAsync");
        assert_eq!(copy(1), Ok(()));
        assert_eq!(
            copy(2),
            Err(CudaError::new("cuMemcpyHtoDAsync", INJECTED)),
            "the second copy fails"
        );
        assert_eq!(copy(3), Ok(()));
        assert_eq!(check(Call::Alloc, "cuMemHostAlloc"), Ok(()));
        for _ in 0..3 {
            assert_eq!(
                check(Call::DeviceAlloc, "cuMemAlloc").map_err(|e| e.code),
                Err(super::super::ErrorCode::Host(INJECTED.to_string()))
            );
        }
        // A new spec starts counting again.
        set(Some("alloc@1"));
        assert!(check(Call::Alloc, "cuMemHostAlloc").is_err());
        assert!(check(Call::Alloc, "cuMemHostAlloc").is_ok());
        assert!(check(Call::Copy, "cuMemcpyDtoHAsync").is_ok());
        // A spec that does not parse fails loudly instead of silently injecting nothing.
        set(Some("copy@zero"));
        let e = check(Call::Copy, "cuMemcpyDtoHAsync").expect_err("bad spec");
        assert!(e.code.to_string().starts_with("INVALID_FAULT_SPEC"), "{e}");
        set(Some(""));
        assert!(Call::ALL.iter().all(|c| check(*c, "x").is_ok()));
        set(None);
    }
}

//! Scenario text → `scenario::parse` (valid UTF-8), and raw bytes → `scenario::load` (the
//! non-UTF-8 path). Neither may panic; every rejection must carry a `path:line:col:` location.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::io::Write;

fn check(r: Result<pinscope::scenario::Scenario, pinscope::Error>, path: &str) {
    if let Err(e) = r {
        let text = e.to_string();
        match e {
            pinscope::Error::Scenario(p) => {
                assert!(!p.items.is_empty(), "a rejection with no problems: {text}");
                assert!(text.contains(&format!("{path}:")), "no location in: {text}");
                for item in &p.items {
                    assert!(
                        item.line >= 1 && item.column >= 1,
                        "0-based location: {text}"
                    );
                }
            }
            other => panic!("unexpected error kind for scenario text: {other}"),
        }
    }
}

thread_local! {
    static FILE: tempfile::NamedTempFile = tempfile::NamedTempFile::new().expect("temp file");
}

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        check(pinscope::scenario::parse("f.toml", text), "f.toml");
    }
    // The bytes path: every eighth input also goes through `load` (a temp file is slow).
    if data.first().is_some_and(|b| b % 8 == 0) || std::str::from_utf8(data).is_err() {
        FILE.with(|f| {
            let mut h = f.reopen().expect("reopen");
            h.set_len(0).expect("truncate");
            h.write_all(data).expect("write");
            let path = f.path();
            check(pinscope::scenario::load(path), &path.display().to_string());
        });
    }
});

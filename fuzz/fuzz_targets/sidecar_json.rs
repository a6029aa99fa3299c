//! `Sidecar::from_bytes` on arbitrary bytes: no panic; a rejection is `BadResults` naming the file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = pinscope::results::Sidecar::from_bytes(Path::new("r.json"), data) {
        let text = e.to_string();
        assert!(
            matches!(e, pinscope::Error::BadResults { .. }),
            "unexpected error kind: {text}"
        );
        assert!(text.starts_with("r.json "), "file not named: {text}");
    }
});

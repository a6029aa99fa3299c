//! `results::read_rows_from` on arbitrary bytes: no panic; a rejection is `BadResults` naming the
//! file, on one line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = pinscope::results::read_rows_from(Path::new("r.csv"), data) {
        let text = e.to_string();
        assert!(
            matches!(e, pinscope::Error::BadResults { .. }),
            "unexpected error kind: {text}"
        );
        assert!(text.starts_with("r.csv "), "file not named: {text}");
        assert!(!text.contains('\n'), "more than one line: {text}");
    }
});

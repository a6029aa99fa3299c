//! `units::parse_size` / `parse_duration` on arbitrary text: no panic, and an accepted size
//! written back as plain bytes parses to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pinscope::units::{parse_duration, parse_size};

fuzz_target!(|text: &str| {
    if let Ok(n) = parse_size(text) {
        assert_eq!(parse_size(&n.to_string()), Ok(n));
    }
    if let Ok(d) = parse_duration(text) {
        assert!(d.as_secs() <= 7 * 24 * 3600, "{text:?} gave {d:?}");
    }
});

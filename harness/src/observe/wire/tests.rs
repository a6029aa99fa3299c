//! The event stream reader on crafted byte streams (SYNTHETIC events).

use super::*;

fn event(call: CallKind, bytes: u64, library: Option<&str>) -> AllocEvent {
    AllocEvent {
        time_ns: 3_200_000_000,
        duration_ns: 4_000,
        pid: 4242,
        tid: 4243,
        call,
        bytes,
        flags: 0x1,
        result: 0,
        address: 0x7f12_3456_0000,
        library: library.map(String::from),
    }
}

/// A stream: header, library 7 = libtorch_cuda.so, a 1 GiB host alloc by it, a device alloc.
fn stream() -> (Vec<u8>, Vec<AllocEvent>) {
    let pin = event(CallKind::HostAlloc, 1 << 30, Some("libtorch_cuda.so"));
    let dev = event(CallKind::DeviceAlloc, 8 << 20, None);
    let mut s = encode_header().to_vec();
    s.extend(encode_library(7, "libtorch_cuda.so").expect("short path"));
    s.extend(encode_event(&pin, 7));
    s.extend(encode_event(&dev, 0));
    (s, vec![pin, dev])
}

#[test]
fn a_whole_stream_decodes_to_its_events_in_any_pieces() {
    let (bytes, want) = stream();
    let mut d = Decoder::default();
    assert_eq!(d.push(&bytes), want);
    assert_eq!(d.finish(), None);
    for piece in [1, 3, 7, 50] {
        let mut d = Decoder::default();
        let got: Vec<AllocEvent> = bytes.chunks(piece).flat_map(|c| d.push(c)).collect();
        assert_eq!(got, want, "pieces of {piece}");
        assert_eq!(d.finish(), None);
    }
}

#[test]
fn every_call_kind_survives_the_trip() {
    let mut s = encode_header().to_vec();
    let events: Vec<AllocEvent> = CallKind::ALL.iter().map(|&c| event(c, 64, None)).collect();
    for e in &events {
        s.extend(encode_event(e, 0));
    }
    let mut d = Decoder::default();
    assert_eq!(d.push(&s), events);
}

#[test]
fn a_truncated_stream_keeps_what_came_before_and_says_how_short() {
    let (bytes, want) = stream();
    let cut = bytes.len() - 10;
    let mut d = Decoder::default();
    assert_eq!(d.push(&bytes[..cut]), want[..1].to_vec());
    let e = d.finish().expect("truncated");
    assert_eq!(e.fault, Fault::Truncated { missing: 10 });
    assert!(e.to_string().contains("10 bytes short"), "{e}");
    let mut d = Decoder::default();
    d.push(b"PSE");
    assert_eq!(
        d.finish().map(|e| e.fault),
        Some(Fault::Truncated { missing: 5 })
    );
}

#[test]
fn garbage_is_one_sentence_never_a_panic() {
    let cases: Vec<(Vec<u8>, Fault)> = vec![
        (b"GET / HTTP/1.1\r\n".to_vec(), Fault::NotAStream),
        (b"PSEV\x09\x00\x00\x00".to_vec(), Fault::Version(9)),
        (
            [&encode_header()[..], &u32::MAX.to_le_bytes()].concat(),
            Fault::FrameLength(u32::MAX),
        ),
        (
            [&encode_header()[..], &0u32.to_le_bytes()].concat(),
            Fault::FrameLength(0),
        ),
        (
            [&encode_header()[..], &[2, 0, 0, 0, 9, 1]].concat(),
            Fault::UnknownTag(9),
        ),
        (
            [&encode_header()[..], &[2, 0, 0, 0, 2, 1]].concat(),
            Fault::FrameLength(2),
        ),
    ];
    for (bytes, fault) in cases {
        let mut d = Decoder::default();
        assert!(d.push(&bytes).is_empty());
        let e = d.fault().expect("a fault").clone();
        assert_eq!(e.fault, fault);
        let sentence = e.to_string();
        assert!(sentence.starts_with("the event stream "), "{sentence}");
        assert!(!sentence.contains('\n'), "{sentence}");
        assert!(d.push(&encode_header()).is_empty(), "nothing after a fault");
    }
}

#[test]
fn unknown_call_and_library_are_faults_at_their_frame() {
    let mut bad_call = encode_event(&event(CallKind::HostAlloc, 1, None), 0);
    bad_call[5 + 24..5 + 26].copy_from_slice(&99u16.to_le_bytes());
    let s = [&encode_header()[..], &bad_call].concat();
    let mut d = Decoder::default();
    assert!(d.push(&s).is_empty());
    assert_eq!(
        d.fault().cloned(),
        Some(StreamError {
            at: 8,
            fault: Fault::UnknownCall(99)
        })
    );
    let s = [
        &encode_header()[..],
        &encode_event(&event(CallKind::FreeHost, 0, None), 3),
    ]
    .concat();
    let mut d = Decoder::default();
    d.push(&s);
    assert_eq!(d.fault().map(|e| &e.fault), Some(&Fault::UnknownLibrary(3)));
    let mut lib = encode_library(1, "ab").expect("frame");
    lib[9] = 0xff;
    let mut d = Decoder::default();
    d.push(&[&encode_header()[..], &lib].concat());
    assert_eq!(d.fault().map(|e| &e.fault), Some(&Fault::LibraryPath));
}

#[test]
fn random_bytes_never_panic() {
    // A fixed pseudo-random sequence (xorshift), after a valid header and as a whole stream.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut noise = Vec::new();
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        noise.push(x as u8);
    }
    for start in [&[][..], &encode_header()[..]] {
        let mut d = Decoder::default();
        for c in [start, &noise[..]].concat().chunks(333) {
            d.push(c);
        }
        let _ = d.finish();
    }
    assert_eq!(encode_library(1, &"x".repeat(MAX_FRAME)), None);
}

#[test]
fn dropped_counts_add_up_and_a_header_is_version_2() {
    assert_eq!(&encode_header()[..6], b"PSEV\x02\x00");
    let s = [
        &encode_header()[..],
        &frame::dropped_frame(3),
        &encode_event(&event(CallKind::DeviceAlloc, 64, None), 0),
        &frame::dropped_frame(4),
    ]
    .concat();
    let mut d = Decoder::default();
    assert_eq!(d.push(&s).len(), 1);
    assert_eq!(d.dropped(), 7);
    assert_eq!(d.finish(), None);
}

//! The receiving end on a real socket, with test writers standing in for the library.

use super::*;
use crate::observe::wire::frame::{self, EventFields};
use crate::results::CallKind;
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::path::Path;

fn fields(time_ns: u64, pid: u32, call: CallKind, bytes: u64, library: u32) -> EventFields {
    EventFields {
        time_ns,
        duration_ns: 10,
        pid,
        tid: pid + 1,
        call: call.code(),
        flags: 0,
        result: 0,
        bytes,
        address: 0x7f00_0000_0000 + bytes,
        library,
    }
}

/// A writer as the library is: header, then frames.
fn writer(path: &Path) -> UnixStream {
    let mut s = UnixStream::connect(path).expect("connect");
    s.write_all(&frame::header()).expect("header");
    s
}

fn library(s: &mut UnixStream, id: u32, path: &str) {
    let mut buf = [0; frame::MAX_FRAME];
    let n = frame::library_frame(id, path.as_bytes(), &mut buf).expect("fits");
    s.write_all(&buf[..n]).expect("library");
}

#[test]
fn two_processes_with_the_same_library_ids_keep_their_own_libraries() {
    let origin = 1_000_000;
    let r = Receiver::start(origin).expect("listen");
    let mut a = writer(Path::new(r.endpoint()));
    let mut b = writer(Path::new(r.endpoint()));
    library(&mut a, 1, "/opt/torch/lib/libtorch_cuda.so");
    library(&mut b, 1, "/usr/bin/python3.12");
    a.write_all(&frame::event_frame(&fields(
        origin + 3_000,
        10,
        CallKind::HostAlloc,
        1 << 30,
        1,
    )))
    .expect("a");
    b.write_all(&frame::event_frame(&fields(
        origin + 2_000,
        20,
        CallKind::HostAlloc,
        8 << 20,
        1,
    )))
    .expect("b");
    b.write_all(&frame::dropped_frame(3)).expect("dropped");
    drop(a);
    let got = r.finish();
    assert_eq!(got.processes, 2);
    assert_eq!(got.dropped, 3);
    assert!(got.faults.is_empty(), "{:?}", got.faults);
    let seen: Vec<(u64, u32, Option<&str>)> = got
        .events
        .iter()
        .map(|e| (e.time_ns, e.pid, e.library.as_deref()))
        .collect();
    assert_eq!(
        seen,
        [
            (2_000, 20, Some("/usr/bin/python3.12")),
            (3_000, 10, Some("/opt/torch/lib/libtorch_cuda.so"))
        ]
    );
    drop(b);
}

#[test]
fn a_broken_stream_is_one_sentence_and_the_events_before_it_stay() {
    let r = Receiver::start(0).expect("listen");
    let mut a = writer(Path::new(r.endpoint()));
    a.write_all(&frame::event_frame(&fields(
        5,
        1,
        CallKind::DeviceAlloc,
        64,
        0,
    )))
    .expect("event");
    a.write_all(&[1, 0, 0, 0, 77]).expect("garbage");
    let got = r.finish();
    assert_eq!(got.events.len(), 1);
    assert_eq!(got.faults.len(), 1);
    assert!(
        got.faults[0].contains("unknown kind 77"),
        "{:?}",
        got.faults
    );
}

#[test]
fn nothing_sent_is_no_process_and_no_event() {
    let r = Receiver::start(0).expect("listen");
    let got = r.finish();
    assert_eq!((got.processes, got.events.len()), (0, 0));
}

#[test]
fn the_clock_is_the_one_instant_reads() {
    let a = monotonic_ns();
    let i = std::time::Instant::now();
    std::thread::sleep(Duration::from_millis(20));
    let (b, e) = (monotonic_ns(), i.elapsed());
    let diff = (b - a) as i128 - e.as_nanos() as i128;
    assert!(
        diff.abs() < 5_000_000,
        "monotonic and Instant differ by {diff} ns"
    );
}

use super::*;
use std::cell::{Cell, RefCell};

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

fn never() -> bool {
    false
}

/// A made-up allocator that accepts up to `limit` bytes in one call and records every size asked.
fn limited(limit: u64, asked: &RefCell<Vec<u64>>) -> impl FnMut(u64) -> Result<(), &'static str> {
    move |n| {
        asked.borrow_mut().push(n);
        if n <= limit { Ok(()) } else { Err("refused") }
    }
}

const SIZES: Sizes = Sizes {
    start: 256 * MIB,
    cap: 64 * GIB,
    resolution: 256 * MIB,
};

#[test]
fn with_room_the_cap_is_tried_once_and_ends_the_search() {
    let asked = RefCell::new(Vec::new());
    let r = largest(SIZES, &never, limited(u64::MAX, &asked));
    assert_eq!(r.bytes, 64 * GIB);
    assert_eq!(r.ended, Ended::Cap);
    assert_eq!(*asked.borrow(), vec![64 * GIB]);
    assert_eq!(r.tries, 1);
}

#[test]
fn a_refused_cap_doubles_then_bisects_to_the_resolution() {
    for limit in [
        3 * GIB + 100 * MIB,
        5 * GIB,
        256 * MIB,
        63 * GIB + 1,
        700 * MIB,
    ] {
        let asked = RefCell::new(Vec::new());
        let r = largest(SIZES, &never, limited(limit, &asked));
        assert!(
            r.bytes <= limit,
            "{limit}: found {} past the limit",
            r.bytes
        );
        assert!(
            limit - r.bytes < SIZES.resolution,
            "{limit}: found {}, further than the resolution",
            r.bytes
        );
        let Ended::Refused { at, error } = r.ended else {
            panic!("{limit}: {:?}", r.ended)
        };
        assert_eq!(error, "refused");
        assert!(at > limit && at - r.bytes <= SIZES.resolution, "{at}");
        let asked = asked.borrow();
        assert_eq!(asked[0], 64 * GIB, "the cap first");
        assert_eq!(asked[1], 256 * MIB, "then doubling from the start");
        assert!(asked.iter().all(|n| *n <= 64 * GIB && n % (256 * MIB) == 0));
        assert!(
            r.tries as usize == asked.len() && asked.len() < 20,
            "{asked:?}"
        );
    }
}

#[test]
fn nothing_accepted_is_zero_bytes_refused_at_the_smallest_size() {
    let asked = RefCell::new(Vec::new());
    let r = largest(SIZES, &never, limited(0, &asked));
    assert_eq!(r.bytes, 0);
    assert_eq!(
        r.ended,
        Ended::Refused {
            at: 256 * MIB,
            error: "refused"
        }
    );
}

#[test]
fn out_of_time_keeps_what_was_found_as_a_lower_bound() {
    let asked = RefCell::new(Vec::new());
    let calls = Cell::new(0);
    // Time runs out after the cap and two doubling steps were tried.
    let clock = || {
        calls.set(calls.get() + 1);
        calls.get() > 3
    };
    let r = largest(SIZES, &clock, limited(10 * GIB, &asked));
    assert_eq!(r.ended, Ended::Deadline);
    assert_eq!(r.bytes, 512 * MIB);
    assert_eq!(*asked.borrow(), vec![64 * GIB, 256 * MIB, 512 * MIB]);
    let r = largest(SIZES, &|| true, limited(10 * GIB, &asked));
    assert_eq!((r.bytes, r.tries, r.ended), (0, 0, Ended::Deadline));
}

#[test]
fn piling_up_holds_every_piece_until_the_refusal_then_frees_them() {
    let live = Cell::new(0u64);
    struct Piece<'a>(&'a Cell<u64>);
    impl Drop for Piece<'_> {
        fn drop(&mut self) {
            self.0.set(self.0.get() - 1);
        }
    }
    let pin = |_i: u64| {
        if live.get() >= 5 {
            return Err("full");
        }
        live.set(live.get() + 1);
        Ok(Piece(&live))
    };
    let t = pile_up(GIB, 64 * GIB, &never, pin);
    assert_eq!(t.amount, 5 * GIB);
    assert_eq!(t.pieces, 5);
    assert_eq!(
        t.ended,
        Ended::Refused {
            at: 6 * GIB,
            error: "full"
        }
    );
    assert_eq!(live.get(), 0, "every piece was freed");
}

#[test]
fn piling_up_stops_at_the_cap_or_the_deadline() {
    let t = pile_up(GIB, 3 * GIB + 5, &never, |_| Ok::<_, ()>(()));
    assert_eq!((t.amount, t.pieces, t.ended), (3 * GIB, 3, Ended::Cap));
    // Ranges: a piece of 1 counts them, the index is passed.
    let seen = RefCell::new(Vec::new());
    let t = pile_up(1, 70_000, &never, |i| {
        seen.borrow_mut().push(i);
        if i < 65_000 { Ok(()) } else { Err(i) }
    });
    assert_eq!(t.amount, 65_000);
    assert_eq!(
        t.ended,
        Ended::Refused {
            at: 65_001,
            error: 65_000
        }
    );
    assert_eq!(seen.borrow()[..3], [0, 1, 2]);
    let t = pile_up(GIB, 64 * GIB, &|| true, |_| Ok::<_, ()>(()));
    assert_eq!((t.amount, t.ended), (0, Ended::Deadline));
}

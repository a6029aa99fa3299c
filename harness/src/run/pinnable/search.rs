//! The searches of the pin-budget probe, generic over the call that pins: each takes a closure
//! that tries one size (or one more range) and answers `Ok` or the refusal, and a clock that says
//! when time is up. No GPU here: the GPU steps (`steps.rs`) hand these the driver calls, the
//! tests hand them closures with a made-up limit.

use serde::{Deserialize, Serialize};

/// Why a search stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Ended<E> {
    /// The call refused at this size (bytes) or this count (ranges); the largest that worked is
    /// the search's result.
    Refused { at: u64, error: E },
    /// The probe's own byte or count cap was reached without a refusal: the machine's limit is
    /// at least the result.
    Cap,
    /// The probe ran out of time: the result is what it had found by then (a lower bound).
    Deadline,
}

/// The sizes a search for the largest single pin tries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    /// The first size the doubling tries.
    pub start: u64,
    /// The largest size tried (tried first).
    pub cap: u64,
    /// The bisection stops when the sizes known to work and to fail are this close.
    pub resolution: u64,
}

/// The largest single pin found, and what ended the search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Largest<E> {
    /// The largest size that worked (0: none did).
    pub bytes: u64,
    /// How many sizes were tried.
    pub tries: u32,
    pub ended: Ended<E>,
}

/// The largest size `try_pin` accepts, up to `sizes.cap`: the cap first (the common case on a
/// machine with room ends there, after one try); on a refusal, doubling from `sizes.start` until
/// a size is refused, then bisecting between the largest that worked and the smallest refused
/// until they are `sizes.resolution` apart. Each try is released before the next (the closure's
/// business). `out_of_time` is asked before every try.
pub fn largest<E>(
    sizes: Sizes,
    out_of_time: &dyn Fn() -> bool,
    mut try_pin: impl FnMut(u64) -> Result<(), E>,
) -> Largest<E> {
    let resolution = sizes.resolution.max(1);
    let mut tries = 0;
    let mut attempt = |n: u64| {
        tries += 1;
        try_pin(n)
    };
    if out_of_time() {
        return Largest {
            bytes: 0,
            tries: 0,
            ended: Ended::Deadline,
        };
    }
    let mut refused = match attempt(sizes.cap) {
        Ok(()) => {
            return Largest {
                bytes: sizes.cap,
                tries,
                ended: Ended::Cap,
            };
        }
        Err(error) => (sizes.cap, error),
    };
    let mut lo = 0u64;
    let mut size = sizes.start.clamp(1, sizes.cap);
    let mut deadline = false;
    // Doubling: up to the first refusal below the cap.
    while size < refused.0 {
        if out_of_time() {
            deadline = true;
            break;
        }
        match attempt(size) {
            Ok(()) => {
                lo = size;
                size = size.saturating_mul(2);
            }
            Err(error) => refused = (size, error),
        }
    }
    // Bisection between `lo` (worked, or nothing) and the smallest refused size.
    while !deadline && refused.0 - lo > resolution {
        if out_of_time() {
            deadline = true;
            break;
        }
        let half = (refused.0 - lo) / 2 / resolution * resolution;
        let mid = lo + half.max(resolution);
        match attempt(mid) {
            Ok(()) => lo = mid,
            Err(error) => refused = (mid, error),
        }
    }
    let ended = if deadline {
        Ended::Deadline
    } else {
        Ended::Refused {
            at: refused.0,
            error: refused.1,
        }
    };
    Largest {
        bytes: lo,
        tries,
        ended,
    }
}

/// What pinning piece after piece added up to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Total<E> {
    /// Bytes (or ranges) held together when the search ended.
    pub amount: u64,
    /// Pieces held.
    pub pieces: u64,
    pub ended: Ended<E>,
}

/// Pins pieces of `piece` bytes (or counts ranges, with `piece` = 1) and holds them all until
/// `pin` refuses, or one more piece would pass `cap`, or time is up; then drops every piece held.
/// `pin` gets the index of the piece.
pub fn pile_up<T, E>(
    piece: u64,
    cap: u64,
    out_of_time: &dyn Fn() -> bool,
    mut pin: impl FnMut(u64) -> Result<T, E>,
) -> Total<E> {
    let piece = piece.max(1);
    let mut held = Vec::new();
    let mut amount = 0u64;
    let ended = loop {
        if amount.saturating_add(piece) > cap {
            break Ended::Cap;
        }
        if out_of_time() {
            break Ended::Deadline;
        }
        match pin(held.len() as u64) {
            Ok(t) => {
                held.push(t);
                amount += piece;
            }
            Err(error) => {
                break Ended::Refused {
                    at: amount + piece,
                    error,
                };
            }
        }
    };
    let pieces = held.len() as u64;
    drop(held);
    Total {
        amount,
        pieces,
        ended,
    }
}

#[cfg(test)]
mod tests;

//! The latency finding in words: the sentences of the answer (console and report page), and the
//! short form of a size curve's fit (the size curve's legend, the platform table). Formatting
//! only: every number and every verdict comes from the finding.

use super::approx_size;
use super::finding::{
    Chase, ChaseLoad, CopyFinding, DiffVerdict, Difference, FitFinding, LatencyFinding,
    MIN_FIT_SIZES, NoBandwidth, Timed,
};
use crate::results::Lane;
use crate::stats::DEFAULT_CONFIDENCE;
use crate::units::format_size;

impl LatencyFinding {
    /// One sentence per measured quantity, in the answer's order.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for c in &self.copies {
            out.push(smallest_copy(c));
            out.extend(c.fit.as_ref().map(|f| f.sentence(direction(c.lane))));
        }
        if let Some(call) = &self.copy_call {
            out.push(format!(
                "the copy call alone (pinned, {}, H2D, nothing waiting on it) costs the CPU {:.2} µs (p50).",
                format_size(call.bytes),
                call.p50_us
            ));
        }
        if let Some(l) = &self.launch {
            let mut s = format!(
                "an empty kernel launch + cuStreamSynchronize {}",
                takes(&l.with_sync)
            );
            if let Some(call) = l.call_alone_us {
                s.push_str(&format!("; the launch call alone {call:.2} µs"));
            }
            s.push('.');
            out.push(s);
        }
        if let Some(d) = &self.blocking_over_spin {
            out.push(blocking(d));
        }
        if let Some(us) = self.launch_rate_us {
            out.push(format!(
                "empty kernels launched back to back: {us:.2} µs each, {:.0} launches per second.",
                1e6 / us
            ));
        }
        out.extend(self.chase.as_ref().map(chase));
        out
    }
}

fn direction(lane: Lane) -> &'static str {
    if lane == Lane::H2d { "H2D" } else { "D2H" }
}

/// "takes 8.60 µs (p50; p99 10.10 µs)".
fn takes(t: &Timed) -> String {
    match t.p99_us {
        Some(p99) => format!("takes {:.2} µs (p50; p99 {p99:.2} µs)", t.p50_us),
        None => format!("takes {:.2} µs (p50)", t.p50_us),
    }
}

/// `4-byte`, `64 KiB`.
fn size_adjective(bytes: u64) -> String {
    match bytes {
        n if n < 1024 => format!("{n}-byte"),
        n => format_size(n),
    }
}

/// The smallest pinned copy of a direction, and what pageable memory changes at its size.
fn smallest_copy(c: &CopyFinding) -> String {
    let mut s = format!(
        "{}: a {} pinned copy {} here, from the call until the host sees it done",
        direction(c.lane),
        size_adjective(c.smallest.bytes),
        takes(&c.smallest)
    );
    if let Some(d) = &c.pageable {
        s.push_str("; ");
        s.push_str(&if d.is_stated() {
            format!(
                "pageable memory {} ({:.2} µs; {})",
                change(d),
                d.other_us,
                interval(d)
            )
        } else {
            format!(
                "pageable memory ({:.2} µs): {}",
                d.other_us,
                within_noise(d)
            )
        });
    }
    s.push('.');
    s
}

/// Blocking sync against spin.
fn blocking(d: &Difference) -> String {
    const WHAT: &str = "blocking sync (a CU_CTX_SCHED_BLOCKING_SYNC context)";
    let medians = format!("{:.2} against {:.2} µs, p50", d.other_us, d.base_us);
    if d.is_stated() {
        format!(
            "{WHAT} {} over spin ({medians}; {}).",
            change(d),
            interval(d)
        )
    } else {
        format!("{WHAT} against spin ({medians}): {}.", within_noise(d))
    }
}

/// `adds 4.71 µs`, `saves 0.73 µs`.
fn change(d: &Difference) -> String {
    let verb = if d.delta_us() >= 0.0 { "adds" } else { "saves" };
    format!("{verb} {:.2} µs", d.delta_us().abs())
}

/// `95% interval [+4.50, +4.90] µs`, or why there is none.
fn interval(d: &Difference) -> String {
    match d.interval_us {
        Some((lo, hi)) => format!(
            "{:.0}% interval [{lo:+.2}, {hi:+.2}] µs",
            DEFAULT_CONFIDENCE * 100.0
        ),
        None => "no interval: no per-sample times were read for these rows".into(),
    }
}

/// `no difference within noise (difference +0.64 µs, 95% interval [+0.60, +0.69] µs, below the
/// 1.00 µs noise floor)`.
fn within_noise(d: &Difference) -> String {
    let why = match d.verdict {
        DiffVerdict::IntervalHoldsZero => "the interval holds 0".to_string(),
        DiffVerdict::BelowFloor | DiffVerdict::Differs | DiffVerdict::NoInterval => {
            format!("below the {:.2} µs noise floor", d.floor_us)
        }
    };
    format!(
        "no difference within noise (difference {:+.2} µs, {}, {why})",
        d.delta_us(),
        interval(d)
    )
}

impl FitFinding {
    /// The sentence of a direction's pinned copies (`dir`: `H2D`, `D2H`).
    pub fn sentence(&self, dir: &str) -> String {
        match self {
            FitFinding::Bandwidth { fit, past_half } => format!(
                "{dir}: pinned copies cost a fixed {:.2} µs each (a) and stream at {:.1} GB/s (b): half of that bandwidth is reached at {} (n½ = a·b), fit T(V) = a + V/b over {} sizes, {past_half} of them past n½.",
                fit.fixed_us,
                fit.bandwidth_gbs,
                half(fit.half_bandwidth_bytes()),
                fit.points
            ),
            FitFinding::FixedOnly { smallest, why } => format!(
                "{dir}: the fixed cost of a pinned copy is at most {:.2} µs (the p50 of its smallest size, {}); bandwidth not determined here: {} (b is stated from {MIN_FIT_SIZES} sizes or more, some past n½ = a·b, the size at which half the time is fixed cost).",
                smallest.p50_us,
                format_size(smallest.bytes),
                no_bandwidth(why)
            ),
        }
    }

    /// The short form: `a = 7.32 µs, b = 54.1 GB/s, half bandwidth at 387 KiB (fit over 15
    /// sizes)`, or `fixed cost ≤ 5.62 µs (p50 of 4 B); no b: 2 sizes, none past n½ = 95 KiB`.
    pub fn short(&self) -> String {
        match self {
            FitFinding::Bandwidth { fit, .. } => format!(
                "a = {:.2} µs, b = {:.1} GB/s, half bandwidth at {} (fit over {} sizes)",
                fit.fixed_us,
                fit.bandwidth_gbs,
                half(fit.half_bandwidth_bytes()),
                fit.points
            ),
            FitFinding::FixedOnly { smallest, why } => format!(
                "fixed cost ≤ {:.2} µs (p50 of {}); no b: {}",
                smallest.p50_us,
                format_size(smallest.bytes),
                no_bandwidth(why)
            ),
        }
    }
}

fn half(bytes: Option<f64>) -> String {
    bytes.map_or_else(|| "no size (a ≤ 0)".into(), approx_size)
}

/// `2 sizes, none past n½ = 95 KiB`, `only 2 sizes`.
fn no_bandwidth(why: &NoBandwidth) -> String {
    let sizes = format!("{} sizes", why.sizes);
    match why.half_bytes {
        Some(h) if why.largest_bytes as f64 <= h => {
            format!("{sizes}, none past n½ = {}", approx_size(h))
        }
        Some(_) => format!("only {sizes}"),
        None => format!("{sizes}, whose medians give no positive fixed cost and bandwidth"),
    }
}

fn chase_order(c: &ChaseLoad) -> &'static str {
    if c.in_order { "in order" } else { "at random" }
}

/// The zero-copy read latency sentence.
fn chase(c: &Chase) -> String {
    let mut s = format!(
        "one GPU read of mapped host memory takes {:.0} ns ({} over {}, p50 of the per-load time)",
        c.first.ns,
        chase_order(&c.first),
        format_size(c.first.bytes)
    );
    if let Some(w) = &c.slowest {
        s.push_str(&format!(
            "; the slowest, {} over {}, {:.0} ns",
            chase_order(w),
            format_size(w.bytes),
            w.ns
        ));
    }
    s.push('.');
    s
}

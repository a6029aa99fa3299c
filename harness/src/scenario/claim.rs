//! Claims and derived results as a scenario states them (`[[claim]]`, `[[derived]]`); `claims`
//! evaluates them after a run.

use serde::{Deserialize, Serialize};

use super::model::named_enum;

named_enum! {
    /// How a claim's value is compared with its bound (written as the symbol).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum Op {
        #[serde(rename = ">=")]
        Ge,
        #[serde(rename = "<=")]
        Le,
        #[serde(rename = ">")]
        Gt,
        #[serde(rename = "<")]
        Lt,
    }
    names Ge = ">=", Le = "<=", Gt = ">", Lt = "<";
}

impl Op {
    pub fn holds(self, lhs: f64, rhs: f64) -> bool {
        match self {
            Op::Ge => lhs >= rhs,
            Op::Le => lhs <= rhs,
            Op::Gt => lhs > rhs,
            Op::Lt => lhs < rhs,
        }
    }
}

/// One expectation, as validated from a `[[claim]]` block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// The claim in words, with its source ("article 000: ...").
    pub text: String,
    /// Label of the case whose result is examined.
    pub case: String,
    /// Metric of that case (see `claims::metrics`).
    pub metric: String,
    pub op: Op,
    /// The bound: `factor × reference`, or `factor` alone when there is no reference.
    pub factor: f64,
    /// `None`: absolute bound. `Some("pinned_bytes")`, `Some("size")`, or `Some("<case>.<metric>")`.
    pub relative_to: Option<String>,
    /// Platforms where the claim applies (`linux`, `wsl2`, `windows-wddm`, `windows-tcc`); empty = all.
    pub platforms: Vec<String>,
}

/// A number computed from case results after a run, e.g. "model load time" or "tokens/s ceiling":
/// `scale × Σ metric(cases)`, or `scale / Σ metric(cases)` when `invert`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Derived {
    pub text: String,
    /// Case labels whose metric is summed (the first lane row of each).
    pub cases: Vec<String>,
    pub metric: String,
    pub scale: f64,
    pub invert: bool,
    /// Unit shown after the value (`s`, `ms`, `tokens/s`).
    pub unit: String,
}

//! Stage two for the blocks about results rather than cases: `[[claim]]` (an expectation the run
//! checks) and `[[derived]]` (a number computed from case results). Both name case labels and
//! metrics, so they share one reader ([`BlockReader`]) for their required keys, labels and
//! metrics; every problem is collected, none stops the others.

use super::raw::{self, Kind, Pos};
use super::suggest::{did_you_mean, did_you_mean_value, quoted_list, shown, unknown_keys};
use super::validate::{CaseBlock, DerivedBlock, File, string_of, tables_of};
use super::{Claim, ClaimMetric, Derived, Op, PlatformTag, Reference};
use crate::error::Problem;
use std::collections::HashSet;

const CLAIM_KEYS: &[&str] = &["text", "case", "metric", "op", "value", "of", "platforms"];
const DERIVED_KEYS: &[&str] = &["text", "cases", "metric", "scale", "invert", "unit"];

/// The name of every metric a `[[claim]]` or `[[derived]]` may name, for suggestions.
pub(super) fn metric_names() -> Vec<String> {
    ClaimMetric::all().map(|m| m.to_string()).collect()
}

/// The case labels of a file, for claims and derived results: membership in O(1); suggestions
/// from the first [`Labels::SUGGEST_FROM`] labels only, so a file of many bad names stays linear.
struct Labels<'a> {
    set: HashSet<&'a str>,
    list: &'a [CaseBlock],
}

impl<'a> Labels<'a> {
    const SUGGEST_FROM: usize = 1000;

    fn new(cases: &'a [CaseBlock]) -> Self {
        Labels {
            set: cases.iter().map(|c| c.label.as_str()).collect(),
            list: cases,
        }
    }
    fn contains(&self, s: &str) -> bool {
        self.set.contains(s)
    }
    fn suggest(&self, s: &str) -> String {
        did_you_mean(
            s,
            self.list
                .iter()
                .take(Self::SUGGEST_FROM)
                .map(|c| c.label.as_str()),
        )
    }
}

/// A number: finite, and not zero unless `zero_ok`.
fn number_of(key: &str, v: &raw::Value, zero_ok: bool, problems: &mut Vec<Problem>) -> Option<f64> {
    let x = match &v.kind {
        Kind::Float(f) => *f,
        Kind::Int(i) => *i as f64,
        other => {
            problems.push(v.pos.problem(format!(
                "`{key}` must be a number, not {}",
                other.type_name()
            )));
            return None;
        }
    };
    if x.is_finite() && (zero_ok || x != 0.0) {
        return Some(x);
    }
    let other_than_0 = if zero_ok { "" } else { " other than 0" };
    problems.push(v.pos.problem(format!(
        "`{key}` must be a finite number{other_than_0}, not {}",
        shown(v)
    )));
    None
}

/// Calls `each` with every string item of the array `v`. A problem for `v` when it is not an
/// array and for each item that is not a string, worded by `not` (given the type's name).
fn each_string<'v>(
    v: &'v raw::Value,
    not: impl Fn(&str) -> String,
    problems: &mut Vec<Problem>,
    mut each: impl FnMut(&'v raw::Value, &'v String, &mut Vec<Problem>),
) {
    let Kind::Array(items) = &v.kind else {
        problems.push(v.pos.problem(not(v.kind.type_name())));
        return;
    };
    for item in items {
        match &item.kind {
            Kind::Str(s) => each(item, s, problems),
            other => problems.push(item.pos.problem(not(other.type_name()))),
        }
    }
}

/// One `[[claim]]` or `[[derived]]` block being read: its table, its name in messages
/// (`[[claim]] #2`) and the case labels it may name.
struct BlockReader<'t, 'l> {
    t: &'t raw::Table,
    /// 1-based position among the blocks of its kind.
    number: usize,
    here: String,
    labels: &'l Labels<'l>,
}

impl<'t, 'l> BlockReader<'t, 'l> {
    /// Starts reading block `number` of `kind`; a problem for each key not among `known`.
    fn new(
        kind: &str,
        number: usize,
        t: &'t raw::Table,
        known: &[&str],
        labels: &'l Labels<'l>,
        problems: &mut Vec<Problem>,
    ) -> Self {
        let here = format!("[[{kind}]] #{number}");
        unknown_keys(t, &format!("in {here}"), known, problems);
        BlockReader {
            t,
            number,
            here,
            labels,
        }
    }

    /// The value of `key`, or a problem saying it is missing and `hint`.
    fn required(
        &self,
        key: &str,
        hint: &str,
        problems: &mut Vec<Problem>,
    ) -> Option<&'t raw::Value> {
        let v = self.t.get(key).map(|e| &e.value);
        if v.is_none() {
            problems.push(
                self.t
                    .pos
                    .problem(format!("{} has no `{key}`: {hint}", self.here)),
            );
        }
        v
    }

    /// The value of `key` when the block has it.
    fn optional(&self, key: &str) -> Option<&'t raw::Value> {
        self.t.get(key).map(|e| &e.value)
    }

    /// The required `text`, `hint` saying what it should say.
    fn text(&self, hint: &str, problems: &mut Vec<Problem>) -> Option<String> {
        let v = self.required("text", hint, problems)?;
        string_of("text", v, problems).map(str::to_string)
    }

    /// The required `metric`, one of the claim metrics.
    fn metric(&self, example: &str, problems: &mut Vec<Problem>) -> Option<ClaimMetric> {
        let hint = format!("name the measured quantity, like \"{example}\"");
        let v = self.required("metric", &hint, problems)?;
        let s = string_of("metric", v, problems)?;
        let metric = ClaimMetric::parse(s);
        if metric.is_none() {
            problems.push(v.pos.problem(format!(
                "unknown metric `{s}` in {}{}",
                self.here,
                did_you_mean(s, metric_names().iter().map(String::as_str))
            )));
        }
        metric
    }

    /// The optional `of`: what the bound is a factor of.
    fn reference(&self, problems: &mut Vec<Problem>) -> Option<Reference> {
        let v = self.optional("of")?;
        let s = string_of("of", v, problems)?;
        match s {
            "pinned_bytes" => return Some(Reference::PinnedBytes),
            "size" => return Some(Reference::Size),
            _ => {}
        }
        let Some((label, m)) = s.rsplit_once('.') else {
            problems.push(v.pos.problem(format!(
                "`of` must be \"pinned_bytes\", \"size\" or \"<label>.<metric>\", not \"{s}\"{}",
                did_you_mean_value(s, ["pinned_bytes", "size"])
            )));
            return None;
        };
        let here = &self.here;
        let is_label = self.is_label(label, v, &format!("`of` in {here} names"), problems);
        let metric = ClaimMetric::parse(m);
        if metric.is_none() {
            problems.push(v.pos.problem(format!(
                "`of` in {here} names unknown metric `{m}`{}",
                did_you_mean(m, metric_names().iter().map(String::as_str))
            )));
        }
        Some(Reference::Case {
            label: label.to_string(),
            metric: metric?,
        })
        .filter(|_| is_label)
    }

    /// The optional `platforms`: empty when the block has none.
    fn platforms(&self, problems: &mut Vec<Problem>) -> Vec<PlatformTag> {
        let mut platforms = Vec::new();
        let Some(v) = self.optional("platforms") else {
            return platforms;
        };
        let names: Vec<&str> = PlatformTag::ALL.iter().map(|p| p.name()).collect();
        let expected = format!("`platforms` must be an array of {}", quoted_list(&names));
        each_string(
            v,
            |ty| format!("{expected}, not {ty}"),
            problems,
            |item, s, problems| match PlatformTag::parse(s) {
                Some(p) => platforms.push(p),
                None => problems.push(item.pos.problem(format!(
                    "{expected}, not \"{s}\"{}",
                    did_you_mean_value(s, names.iter().copied())
                ))),
            },
        );
        platforms
    }

    /// Whether `label` (written at `at`) is a case label of the file; a problem when not,
    /// `what` saying where it was named (`{here} names` / `` `of` in {here} names ``).
    fn is_label(
        &self,
        label: &str,
        at: &raw::Value,
        what: &str,
        problems: &mut Vec<Problem>,
    ) -> bool {
        if self.labels.contains(label) {
            return true;
        }
        problems.push(at.pos.problem(format!(
            "{what} case `{label}`, which is not a label in this file{}",
            self.labels.suggest(label)
        )));
        false
    }
}

/// Reads the `[[claim]]` and `[[derived]]` blocks of `root` into `file`, whose case blocks are
/// read already (the labels the blocks may name).
pub(super) fn add_claims_and_derived(
    root: &raw::Table,
    file: &mut File,
    problems: &mut Vec<Problem>,
) {
    let labels = Labels::new(&file.cases);
    let claims = claims(root, &labels, problems);
    let derived = derived(root, &labels, problems);
    file.claims = claims;
    file.derived = derived;
}

/// The file's `[[claim]]` blocks, those without problems.
fn claims(root: &raw::Table, labels: &Labels<'_>, problems: &mut Vec<Problem>) -> Vec<Claim> {
    blocks(root, "claim", CLAIM_KEYS, labels, problems, claim)
}

/// The file's `[[derived]]` blocks, those without problems.
fn derived(
    root: &raw::Table,
    labels: &Labels<'_>,
    problems: &mut Vec<Problem>,
) -> Vec<DerivedBlock> {
    blocks(
        root,
        "derived",
        DERIVED_KEYS,
        labels,
        problems,
        derived_block,
    )
}

/// Every `[[kind]]` block of the file read by `read`, those that gave no problem.
fn blocks<T>(
    root: &raw::Table,
    kind: &str,
    known: &[&str],
    labels: &Labels<'_>,
    problems: &mut Vec<Problem>,
    read: fn(&BlockReader<'_, '_>, &mut Vec<Problem>) -> Option<T>,
) -> Vec<T> {
    let Some(e) = root.get(kind) else {
        return Vec::new();
    };
    let tables = tables_of(kind, &e.value, problems).unwrap_or_default();
    let mut out = Vec::new();
    for (i, t) in tables.into_iter().enumerate() {
        let before = problems.len();
        let b = BlockReader::new(kind, i + 1, t, known, labels, problems);
        let block = read(&b, problems);
        if problems.len() == before {
            out.extend(block);
        }
    }
    out
}

/// Reads a `[[derived]]` block.
fn derived_block(b: &BlockReader<'_, '_>, problems: &mut Vec<Problem>) -> Option<DerivedBlock> {
    let here = &b.here;
    let text = b.text("say what the number is, like \"model load time\"", problems);
    let list = b.required(
        "cases",
        "list the labels whose metric is summed, like cases = [\"load\"]",
        problems,
    );
    let metric = b.metric("time_median_ms", problems);
    let mut names: Vec<String> = Vec::new();
    let mut label_pos: Vec<Pos> = Vec::new();
    match list {
        Some(v) if matches!(&v.kind, Kind::Array(items) if items.is_empty()) => {
            problems.push(v.pos.problem(format!(
                "`cases` in {here} is empty: list at least one label"
            )))
        }
        Some(v) => {
            let not = |ty: &str| match v.kind {
                Kind::Array(_) => {
                    format!("`cases` must contain only case labels (strings), not {ty}")
                }
                _ => format!(
                    "`cases` must be an array of case labels, like cases = [\"load\"], not {ty}"
                ),
            };
            each_string(v, not, problems, |item, s, problems| {
                if names.contains(s) {
                    problems.push(
                        item.pos
                            .problem(format!("`cases` in {here} lists `{s}` twice")),
                    );
                } else if b.is_label(s, item, &format!("{here} names"), problems) {
                    names.push(s.clone());
                    label_pos.push(item.pos);
                }
            });
        }
        None => {}
    }
    let scale = match b.optional("scale") {
        Some(v) => number_of("scale", v, false, problems),
        None => Some(1.0),
    };
    let invert = match b.optional("invert") {
        Some(raw::Value {
            kind: Kind::Bool(x),
            ..
        }) => Some(*x),
        Some(v) => {
            problems.push(v.pos.problem(format!(
                "`invert` must be true or false, not {}",
                v.kind.type_name()
            )));
            None
        }
        None => Some(false),
    };
    let unit = match b.optional("unit") {
        Some(v) => string_of("unit", v, problems).map(|s| s.trim().to_string()),
        None => Some(String::new()),
    };
    Some(DerivedBlock {
        number: b.number,
        derived: Derived {
            text: text?,
            cases: names,
            metric: metric?,
            scale: scale?,
            invert: invert?,
            unit: unit?,
        },
        label_pos,
    })
}

/// Reads a `[[claim]]` block.
fn claim(b: &BlockReader<'_, '_>, problems: &mut Vec<Problem>) -> Option<Claim> {
    let here = &b.here;
    let text = b.text(
        "say what is claimed and where the claim comes from",
        problems,
    );
    let case = b.required("case", "give the label of the case it is about", problems);
    let metric = b.metric("bw_median_gbs", problems);
    let op = b.required("op", "use one of \">=\", \"<=\", \">\", \"<\"", problems);
    let value = b.required(
        "value",
        "give the bound (or the factor, with `of`)",
        problems,
    );

    let case = case.and_then(|v| {
        let s = string_of("case", v, problems)?;
        b.is_label(s, v, &format!("{here} names"), problems)
            .then(|| s.to_string())
    });
    let op = op.and_then(|v| {
        let s = string_of("op", v, problems)?;
        let op = Op::parse(s);
        if op.is_none() {
            problems.push(v.pos.problem(format!(
                "`op` must be one of \">=\", \"<=\", \">\", \"<\", not \"{s}\""
            )));
        }
        op
    });
    let factor = value.and_then(|v| number_of("value", v, true, problems));
    let relative_to = b.reference(problems);
    let platforms = b.platforms(problems);
    Some(Claim {
        text: text?,
        case: case?,
        metric: metric?,
        op: op?,
        factor: factor?,
        relative_to,
        platforms,
    })
}

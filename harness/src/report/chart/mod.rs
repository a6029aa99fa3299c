//! Drawing helpers shared by the plot files: palette, grouped horizontal bars (with optional CI
//! whiskers and reference lines), line charts, and the SVG clean-up that keeps pages offline.
//!
//! Everything renders through plotters' SVG backend into a `String`; text becomes `<text>`
//! elements with the explicit family `sans-serif`, so no font files are needed.

mod bars;
mod legend;
mod lines;

pub use bars::{Bars, ByCategory, hbars};
pub use lines::{
    Line, SizeTicks, XAxis, downsample, lines, series_left_out, size_plot_data, sizes_of,
};

use crate::report::html::escape;
use crate::report::labels::{display_width, ellipsize};
use plotters::coord::Shift;
use plotters::coord::combinators::LogCoord;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub type DrawResult<T> = Result<T, Box<dyn std::error::Error>>;

/// Tableau 10: distinguishable, colour-blind friendlier than the default palette.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];
/// Reference lines (nvbandwidth).
pub const REF_COLOR: RGBColor = RGBColor(0, 0, 0);

pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

pub const FAMILY: &str = "sans-serif";
/// Text sizes of a plot, in plotters' font units: its SVG backend writes `font-size` as 1/1.24
/// of the size asked for, so each is the pixel size wanted times 1.24. Readable at 100% zoom
/// beside the page's 16 px body text.
const PX: f64 = 1.24;
/// The title: 19 px.
pub const TITLE_PX: f64 = 19.0 * PX;
/// Category labels, tick labels and legend rows: 14 px.
pub const LABEL_PX: f64 = 14.0 * PX;
/// The value printed at the end of a bar: 13 px.
pub const VALUE_PX: f64 = 13.0 * PX;
/// Axis descriptions: 14 px.
pub const AXIS_PX: f64 = 14.0 * PX;
/// Height of the title row above the legend and the plot.
const TITLE_H: u32 = 34;
/// Height of one legend row.
const LEGEND_ROW: u32 = 20;
/// Most series one chart draws; the rest are named in the caption and stay in the tables.
pub const MAX_SERIES: usize = 10;
/// Most categories (cases) one bar chart draws.
pub const MAX_CATEGORIES: usize = 30;

/// A plot ready for the page, or the sentence that says why it is not there.
#[derive(Debug, Clone)]
pub enum Figure {
    Svg {
        title: String,
        caption: String,
        svg: String,
        /// `data-*` attributes of the `<figure>` that `scripts/check-report.sh` checks (the plot
        /// kind, the sizes measured, the direction of each series).
        data: Vec<(&'static str, String)>,
    },
    Omitted {
        title: String,
        reason: String,
    },
}

impl Figure {
    pub fn omitted(title: &str, reason: impl Into<String>) -> Figure {
        Figure::Omitted {
            title: title.to_string(),
            reason: reason.into(),
        }
    }

    /// A drawn figure, or the sentence saying why it could not be drawn.
    pub fn from_svg(
        title: String,
        caption: String,
        svg: DrawResult<String>,
        data: Vec<(&'static str, String)>,
    ) -> Figure {
        match svg {
            Ok(svg) => Figure::Svg {
                title,
                caption,
                svg,
                data,
            },
            Err(e) => Figure::omitted(&title, format!("The plot could not be drawn ({e}).")),
        }
    }

    /// A bar chart drawn by [`hbars`], titled with the chart's title; the caption ends by saying
    /// where the categories `left_out` are.
    pub fn bars(
        bars: &Bars,
        caption: &str,
        left_out: LeftOut,
        data: Vec<(&'static str, String)>,
    ) -> Figure {
        let caption = left_out.caption(caption);
        Figure::from_svg(bars.title.clone(), caption, hbars(bars), data)
    }

    /// The figure as HTML: the SVG inline, or a one-sentence note.
    pub fn to_html(&self) -> String {
        match self {
            Figure::Svg {
                title,
                caption,
                svg,
                data,
            } => {
                let attrs: String = data
                    .iter()
                    .map(|(k, v)| format!(" data-{k}=\"{}\"", escape(v)))
                    .collect();
                // The title is drawn inside the SVG; the attribute keeps it for readers of the HTML.
                format!(
                    "<figure data-title=\"{}\"{attrs}>\n{svg}\n<figcaption>{}</figcaption>\n</figure>\n",
                    escape(title),
                    escape(caption)
                )
            }
            Figure::Omitted { title, reason } => format!(
                "<h4>{}</h4>\n<p class=\"omitted\">{}</p>\n",
                escape(title),
                escape(reason)
            ),
        }
    }

    pub fn is_svg(&self) -> bool {
        matches!(self, Figure::Svg { .. })
    }
}

/// The `data-*` attributes of a figure known only by its plot kind (`data-plot`).
pub fn plot_kind(kind: impl Into<String>) -> Vec<(&'static str, String)> {
    vec![("plot", kind.into())]
}

/// Makes plotters' SVG fit inline in an offline page: drops the namespace URL (HTML5 does not
/// need it, and the page must not reference any URL).
pub fn finish(svg: String) -> String {
    svg.replace(" xmlns=\"http://www.w3.org/2000/svg\"", "")
}

/// Approximate width in pixels of `s` at [`LABEL_PX`] sans-serif (generous, so labels are never
/// cut; a wide character, such as a CJK one, counts twice).
pub fn text_px(s: &str) -> u32 {
    (display_width(s) as f64 * 7.6).ceil() as u32 + 4
}

/// Most columns a category label or a legend row of a plot shows (about 1200 px, past the longest labels of published runs); a longer one
/// ends in `…` and keeps its whole text in a tooltip, and the tables show it whole.
pub const MAX_LABEL_COLS: usize = 160;
/// Most columns of a plot's title.
pub const MAX_TITLE_COLS: usize = 110;

/// Texts a plot shortened ([`Shortened::text`]), each its whole text and what was drawn.
#[derive(Default)]
pub struct Shortened(Vec<(String, String)>);

impl Shortened {
    /// `s`, ellipsized to `cols` columns; remembered when shortened.
    pub fn text(&mut self, s: &str, cols: usize) -> String {
        let short = ellipsize(s, cols);
        if short != s && !self.0.iter().any(|(_, d)| *d == short) {
            self.0.push((s.to_string(), short.clone()));
        }
        short
    }

    /// The finished SVG with each shortened text's whole text as its tooltip (a `<title>` in the
    /// `<text>` element plotters wrote for it).
    pub fn tooltips(&self, mut svg: String) -> String {
        for (whole, short) in &self.0 {
            let drawn = format!(">\n{}\n</text>", svg_escape(short));
            let with_title = format!(
                ">\n<title>{}</title>{}\n</text>",
                escape(whole),
                svg_escape(short)
            );
            svg = svg.replace(&drawn, &with_title);
        }
        svg
    }
}

/// Text escaped as plotters' SVG backend escapes it.
fn svg_escape(s: &str) -> String {
    escape(s).replace("&#39;", "&apos;")
}

/// The area under the title row and the legend rows; draws the title across the top.
fn under_title_and_legend<'b>(
    root: &DrawingArea<SVGBackend<'b>, Shift>,
    title: &str,
    legend_h: u32,
) -> DrawResult<(
    DrawingArea<SVGBackend<'b>, Shift>,
    DrawingArea<SVGBackend<'b>, Shift>,
)> {
    let (title_area, rest) = root.split_vertically(TITLE_H);
    let (w, _) = title_area.dim_in_pixel();
    let style =
        TextStyle::from((FAMILY, TITLE_PX).into_font()).pos(Pos::new(HPos::Center, VPos::Center));
    title_area.draw(&Text::new(
        title.to_string(),
        (w as i32 / 2, TITLE_H as i32 / 2 + 2),
        style,
    ))?;
    Ok(rest.split_vertically(legend_h))
}

/// Categories a bar chart left out ([`keep_drawable`]), and where the page lists them.
#[derive(Debug, Clone, Copy)]
pub struct LeftOut {
    count: usize,
    /// Ends the caption's sentence `"{count} more {place}"`, e.g. `cases are in the tables.`
    place: &'static str,
}

impl LeftOut {
    /// `caption`, followed by the sentence naming what was left out, if anything was.
    pub fn caption(&self, caption: &str) -> String {
        if self.count > 0 {
            format!("{caption} {} more {}", self.count, self.place)
        } else {
            caption.to_string()
        }
    }
}

/// Keeps the first [`MAX_CATEGORIES`] of `categories` (those a bar chart draws); `place` says
/// where the page lists the rest, ending the caption's `"{count} more {place}"`.
pub fn keep_drawable<T>(categories: &mut Vec<T>, place: &'static str) -> LeftOut {
    let count = categories.len().saturating_sub(MAX_CATEGORIES);
    categories.truncate(MAX_CATEGORIES);
    LeftOut { count, place }
}

/// `v` with `digits` decimals; a value that rounds to zero is written without a sign (`0`, never
/// `-0`).
pub fn fixed(v: f64, digits: usize) -> String {
    let s = format!("{v:.digits$}");
    if s.parse::<f64>().is_ok_and(|r| r == 0.0) {
        format!("{:.digits$}", 0.0)
    } else {
        s
    }
}

/// A tick value without trailing noise: `55`, `2.5`, `0.125`, `12k`; never `-0`.
pub fn compact(v: f64) -> String {
    let v = if v == 0.0 { 0.0 } else { v };
    let a = v.abs();
    if a >= 10_000.0 {
        format!("{:.0}k", v / 1000.0)
    } else if a >= 100.0 || v == v.round() {
        fixed(v, 0)
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else {
        // Enough decimals for two significant digits: 0.125, 0.0005.
        let digits = ((-a.log10()).ceil() as usize + 1).clamp(3, 9);
        let s = fixed(v, digits);
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Tick values for a log axis from `lo` to `hi` (both > 0): 1, 2 and 5 times each power of ten
/// over up to 2.5 decades, 1 and 3 times over up to 5, powers of ten beyond. Every decade the
/// axis crosses has a labelled tick, the first below 10 included.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo > 0.0 && hi > lo && hi.is_finite()) {
        return Vec::new();
    }
    let decades = (hi / lo).log10();
    let steps: &[f64] = if decades <= 2.5 {
        &[1.0, 2.0, 5.0]
    } else if decades <= 5.0 {
        &[1.0, 3.0]
    } else {
        &[1.0]
    };
    let mut out = Vec::new();
    let mut k = lo.log10().floor() as i32;
    while 10f64.powi(k) <= hi {
        for m in steps {
            // Written from the decimal text, so 3 × 0.001 is 0.003 and not 0.0030000000000000005.
            let v: f64 = format!("{m}e{k}").parse().unwrap_or(m * 10f64.powi(k));
            if (lo..=hi).contains(&v) {
                out.push(v);
            }
        }
        k += 1;
    }
    out
}

#[cfg(test)]
mod tests;

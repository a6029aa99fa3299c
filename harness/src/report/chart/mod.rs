//! Drawing helpers shared by the plot files: palette, grouped horizontal bars (with optional CI
//! whiskers and reference lines), line charts, and the SVG clean-up that keeps pages offline.
//!
//! Everything renders through plotters' SVG backend into a `String`; text becomes `<text>`
//! elements with the explicit family `sans-serif`, so no font files are needed.
//!
//! Size: over 500 lines: the bar and line chart primitives share layout and SVG clean-up code that
//! would otherwise be passed between files.

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

/// Grouped horizontal bars: one group per category, one bar per series. `Default` is no
/// categories, no whiskers and no reference lines.
#[derive(Default, Clone)]
pub struct Bars {
    pub title: String,
    pub x_desc: String,
    pub series: Vec<String>,
    pub categories: Vec<String>,
    /// `[category][series]`.
    pub values: Vec<Vec<Option<f64>>>,
    /// `[category][series]` CI whiskers, or empty for none.
    pub whiskers: Vec<Vec<Option<(f64, f64)>>>,
    /// Vertical reference lines: label and x value.
    pub refs: Vec<(String, f64)>,
    /// Decimals of the value printed at the end of each bar.
    pub digits: usize,
    /// What a missing value means, printed in its place (e.g. `unavailable`); empty: nothing.
    pub missing: String,
    /// Bars coloured by a key of their category rather than by series (one-series charts).
    pub by_category: Option<ByCategory>,
    /// A value range the x axis covers at least: the scale shared by a page's plots of one
    /// unit, so a small change never draws as wide as a large one on the next plot.
    pub x_range: Option<(f64, f64)>,
}

/// Colours by category (e.g. the direction of a bandwidth bar): `keys` are the legend rows, each
/// its text and its palette index; `of[category]` is the palette index of each category's bars.
#[derive(Default, Clone)]
pub struct ByCategory {
    pub keys: Vec<(String, usize)>,
    pub of: Vec<usize>,
}

impl Bars {
    /// The bars with the title, category labels and series names a plot can show
    /// ([`MAX_TITLE_COLS`], [`MAX_LABEL_COLS`]), and the texts it shortened.
    fn shortened(&self) -> (Bars, Shortened) {
        let mut tips = Shortened::default();
        let mut b = self.clone();
        b.title = tips.text(&self.title, MAX_TITLE_COLS);
        for c in &mut b.categories {
            *c = tips.text(c, MAX_LABEL_COLS);
        }
        for c in &mut b.series {
            *c = tips.text(c, MAX_LABEL_COLS);
        }
        if let Some(by) = &mut b.by_category {
            for (k, _) in &mut by.keys {
                *k = tips.text(k, MAX_LABEL_COLS);
            }
        }
        for (r, _) in &mut b.refs {
            *r = tips.text(r, MAX_LABEL_COLS);
        }
        (b, tips)
    }

    /// The colour of the bar of category `ci`, series `si`.
    fn colour(&self, ci: usize, si: usize) -> RGBColor {
        match &self.by_category {
            Some(b) => color(b.of.get(ci).copied().unwrap_or(0)),
            None => color(si),
        }
    }

    /// The legend rows: one per colour key or per series, then the reference lines.
    fn legend(&self) -> Vec<LegendEntry> {
        match &self.by_category {
            Some(b) => b
                .keys
                .iter()
                .map(|(n, k)| (n.clone(), Some(color(*k))))
                .chain(refs_legend(&self.refs))
                .collect(),
            None => legend_entries(self.series.iter().map(String::as_str), &self.refs),
        }
    }

    /// The x range the bars, whiskers, reference lines and the shared scale cover, 0 included.
    fn extent(&self) -> (f64, f64) {
        let mut lo: f64 = 0.0;
        let mut hi: f64 = 0.0;
        let shared = self.x_range.iter().flat_map(|(l, h)| [*l, *h]);
        let values = self.values.iter().flatten().flatten().copied();
        let whiskers = self
            .whiskers
            .iter()
            .flatten()
            .flatten()
            .flat_map(|(l, h)| [*l, *h]);
        let refs = self.refs.iter().map(|(_, r)| *r);
        for v in values.chain(whiskers).chain(refs).chain(shared) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if hi - lo <= f64::EPSILON {
            hi = lo + 1.0;
        }
        (lo, hi)
    }
}

/// The chart a bar chart draws into: linear value axis, one unit of y per category.
type BarChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The sizes of a bar chart: legend height, category label width, the whole SVG, and the x range
/// with room for the value printed after the longest bar.
struct BarLayout {
    legend_h: u32,
    label_w: u32,
    size: (u32, u32),
    x: (f64, f64),
}

impl BarLayout {
    fn of(b: &Bars, legend: &[LegendEntry]) -> BarLayout {
        let ncat = b.categories.len().max(1);
        let nser = b.series.len().max(1);
        let per_bar = if nser > 3 { 15 } else { 19 };
        let group_h = (nser as u32 * per_bar + 12).max(26);
        let legend_h = if legend.len() > 1 || !b.refs.is_empty() || b.by_category.is_some() {
            LEGEND_ROW * legend.len() as u32 + 10
        } else {
            0
        };
        let height = TITLE_H + legend_h + 20 + ncat as u32 * group_h + 56;
        let label_w = b.categories.iter().map(|c| text_px(c)).max().unwrap_or(40) + 16;
        let legend_w = legend_width(legend);
        let width = (label_w + 620).max(label_w + 40 + legend_w).max(960);
        let (lo, hi) = b.extent();
        // Room for the value printed after the longest bar.
        let pad = (hi - lo) * 0.14;
        BarLayout {
            legend_h,
            label_w,
            size: (width, height),
            x: (if lo < 0.0 { lo - pad } else { lo }, hi + pad),
        }
    }
}

/// Grouped horizontal bars, titled, with the legend above the plot. Labels too long for a plot
/// are ellipsized, with their whole text as a tooltip.
pub fn hbars(b: &Bars) -> DrawResult<String> {
    let (b, tips) = b.shortened();
    let b = &b;
    let ncat = b.categories.len().max(1);
    let legend = b.legend();
    let layout = BarLayout::of(b, &legend);
    let (lo, hi) = layout.x;
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, layout.size).into_drawing_area();
        root.fill(&WHITE)?;
        // Title, then the legend, then the plot: the reader learns the colours first.
        let (legend_area, chart_area) = under_title_and_legend(&root, &b.title, layout.legend_h)?;
        let mut chart = ChartBuilder::on(&chart_area)
            .margin(12)
            .x_label_area_size(52)
            .y_label_area_size(layout.label_w)
            .build_cartesian_2d(lo..hi, 0f64..ncat as f64)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .disable_y_axis()
            .max_light_lines(0)
            .x_desc(b.x_desc.as_str())
            .x_label_formatter(&|v| compact(*v))
            .label_style((FAMILY, LABEL_PX))
            .axis_desc_style((FAMILY, AXIS_PX))
            .draw()?;
        let mut values = Vec::new();
        for ci in 0..b.categories.len() {
            values.extend(b.draw_group(&mut chart, &root, ci, lo)?);
        }
        if lo < 0.0 {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(0.0, 0.0), (0.0, ncat as f64)],
                BLACK.stroke_width(1),
            )))?;
        }
        for (_, x) in &b.refs {
            chart.draw_series(DashedLineSeries::new(
                vec![(*x, 0.0), (*x, ncat as f64)],
                6,
                4,
                REF_COLOR.stroke_width(2),
            ))?;
        }
        draw_values(&root, values)?;
        // Legend above the plot, so it never covers a bar and is read first.
        if layout.legend_h > 0 {
            let x0 = (layout.label_w as i32 - 20).max(12);
            draw_legend(&legend_area, x0, legend, Swatch::Box)?;
        }
        root.present()?;
    }
    Ok(tips.tooltips(finish(buf)))
}

impl Bars {
    /// Category `ci`: its label left of the axis (whose left end is `lo`), then per series its
    /// bar and its whisker; returns the values (or the missing-value word) to print after them,
    /// with where, drawn last so that no reference line crosses them ([`draw_values`]).
    fn draw_group(
        &self,
        chart: &mut BarChart<'_, '_>,
        root: &DrawingArea<SVGBackend<'_>, Shift>,
        ci: usize,
        lo: f64,
    ) -> DrawResult<Vec<(String, (i32, i32))>> {
        let ncat = self.categories.len().max(1);
        let nser = self.series.len().max(1);
        let band = 0.8 / nser as f64;
        let mut values = Vec::new();
        let top = (ncat - ci) as f64;
        let (px, py) = chart.backend_coord(&(lo, top - 0.5));
        let style = TextStyle::from((FAMILY, LABEL_PX).into_font())
            .pos(Pos::new(HPos::Right, VPos::Center));
        root.draw(&Text::new(self.categories[ci].clone(), (px - 6, py), style))?;
        for si in 0..nser {
            let y1 = top - 0.1 - si as f64 * band;
            let y0 = y1 - band * 0.88;
            let yc = (y0 + y1) / 2.0;
            let value = cell(&self.values, ci, si);
            if let Some(v) = value {
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(0.0, y0), (v, y1)],
                    self.colour(ci, si).filled(),
                )))?;
            }
            let whisker = cell(&self.whiskers, ci, si);
            if let Some((wl, wh)) = whisker {
                let d = band * 0.3;
                let st = BLACK.stroke_width(1);
                chart.draw_series([
                    PathElement::new(vec![(wl, yc), (wh, yc)], st),
                    PathElement::new(vec![(wl, yc - d), (wl, yc + d)], st),
                    PathElement::new(vec![(wh, yc - d), (wh, yc + d)], st),
                ])?;
            }
            let text = match value {
                Some(v) => fixed(v, self.digits),
                None if !self.missing.is_empty() => self.missing.clone(),
                None => continue,
            };
            let end = value
                .unwrap_or(0.0)
                .max(0.0)
                .max(whisker.map_or(0.0, |w| w.1));
            let (tx, ty) = chart.backend_coord(&(end, yc));
            values.push((text, (tx + 4, ty)));
        }
        Ok(values)
    }
}

/// The values at the ends of the bars, each on a white ground a little wider than its text, so a
/// dashed reference line passing under it never hides a digit.
fn draw_values(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    values: Vec<(String, (i32, i32))>,
) -> DrawResult<()> {
    let style =
        TextStyle::from((FAMILY, VALUE_PX).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    let half_h = (VALUE_PX / 2.0).ceil() as i32 + 1;
    for (text, (x, y)) in values {
        let w = (f64::from(text_px(&text)) * VALUE_PX / LABEL_PX).ceil() as i32;
        root.draw(&Rectangle::new(
            [(x - 1, y - half_h), (x + w, y + half_h)],
            WHITE.filled(),
        ))?;
        root.draw(&Text::new(text, (x, y), style.clone()))?;
    }
    Ok(())
}

/// The value of category `ci`, series `si` in a `[category][series]` grid (`None` where the grid
/// is shorter).
fn cell<T: Copy>(grid: &[Vec<Option<T>>], ci: usize, si: usize) -> Option<T> {
    grid.get(ci).and_then(|r| r.get(si)).copied().flatten()
}

/// One legend row: its text and its series colour, or `None` for a reference line.
type LegendEntry = (String, Option<RGBColor>);

/// The legend rows of a chart: one per series in palette order, then one per reference line
/// (`label: value`).
fn legend_entries<'a>(
    series: impl Iterator<Item = &'a str>,
    refs: &[(String, f64)],
) -> Vec<LegendEntry> {
    series
        .enumerate()
        .map(|(i, s)| (s.to_string(), Some(color(i))))
        .chain(refs_legend(refs))
        .collect()
}

/// The legend rows of reference lines (`label: value`).
fn refs_legend(refs: &[(String, f64)]) -> impl Iterator<Item = LegendEntry> + '_ {
    refs.iter().map(|(l, v)| (format!("{l}: {v:.2}"), None))
}

/// Width in pixels of the longest legend text (0 without rows).
fn legend_width(entries: &[LegendEntry]) -> u32 {
    entries.iter().map(|(n, _)| text_px(n)).max().unwrap_or(0)
}

/// How a legend row shows its series.
#[derive(Clone, Copy)]
enum Swatch {
    /// A filled box 14 px wide (bar charts).
    Box,
    /// A line 20 px wide, as thick as the chart's lines (line charts).
    Stroke,
}

impl Swatch {
    fn width(self) -> i32 {
        match self {
            Swatch::Box => 14,
            Swatch::Stroke => 20,
        }
    }
}

/// Draws the legend rows [`LEGEND_ROW`] px apart from `(x0, 4)`: the swatch (a reference line's is always
/// the dashed lines' black 2 px stroke), then the text 6 px after it.
fn draw_legend(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    x0: i32,
    entries: Vec<LegendEntry>,
    swatch: Swatch,
) -> DrawResult<()> {
    let w = swatch.width();
    let text_style =
        TextStyle::from((FAMILY, LABEL_PX).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    let mut y = 4;
    for (name, col) in entries {
        let line = vec![(x0, y + 7), (x0 + w, y + 7)];
        match (col, swatch) {
            (Some(c), Swatch::Box) => {
                area.draw(&Rectangle::new([(x0, y), (x0 + w, y + 14)], c.filled()))?
            }
            (Some(c), Swatch::Stroke) => area.draw(&PathElement::new(line, c.stroke_width(3)))?,
            (None, _) => area.draw(&PathElement::new(line, REF_COLOR.stroke_width(2)))?,
        }
        area.draw(&Text::new(name, (x0 + w + 6, y + 7), text_style.clone()))?;
        y += LEGEND_ROW as i32;
    }
    Ok(())
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

/// One line of a line chart: `(x, y, band_lo, band_hi)` points, sorted by x.
pub struct Line {
    pub name: String,
    pub points: Vec<(f64, f64, f64, f64)>,
}

/// The x axis of a line chart.
pub enum XAxis<'a> {
    /// Byte sizes on a log axis, labelled only at these sizes (the sizes measured), in binary
    /// units; a line never joins two points more than a decade apart (they stay points).
    LogBytes(&'a [u64]),
    /// A plain linear axis.
    Linear,
}

/// The sizes measured, each once, smallest first.
pub fn sizes_of(sizes: impl Iterator<Item = u64>) -> Vec<u64> {
    let mut sizes: Vec<u64> = sizes.collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// `caption`, followed by the sentence saying how many series were not drawn, if any were not.
pub fn series_left_out(mut caption: String, hidden: usize) -> String {
    if hidden > 0 {
        caption.push_str(&format!(
            " {hidden} more series are not drawn (see the parameter table)."
        ));
    }
    caption
}

/// The `data-*` attributes of a plot against size: its kind, the sizes measured and each
/// series' direction key, in the order drawn.
pub fn size_plot_data<'a>(
    kind: &str,
    sizes: &[u64],
    directions: impl Iterator<Item = &'a str>,
) -> Vec<(&'static str, String)> {
    let sizes: Vec<String> = sizes
        .iter()
        .map(|s| crate::units::format_size(*s))
        .collect();
    vec![
        ("plot", kind.to_string()),
        ("measured-sizes", sizes.join("|")),
        (
            "series-directions",
            directions.collect::<Vec<_>>().join("|"),
        ),
    ]
}

/// Largest x ratio a line may span between two neighbouring points.
pub const MAX_GAP: f64 = 10.0;

/// Splits sorted points where neighbours are more than [`MAX_GAP`] apart in x.
pub fn segments<T: Copy>(points: &[T], x: impl Fn(&T) -> f64) -> Vec<Vec<T>> {
    let mut out: Vec<Vec<T>> = Vec::new();
    for p in points {
        match out.last_mut() {
            Some(seg)
                if seg
                    .last()
                    .is_some_and(|q| x(q) > 0.0 && x(p) / x(q) <= MAX_GAP) =>
            {
                seg.push(*p)
            }
            _ => out.push(vec![*p]),
        }
    }
    out
}

/// A line chart. Bands (min–max) are drawn when `band_lo != band_hi`; `refs` are horizontal
/// dashed reference lines.
pub fn lines(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Line],
    refs: &[(String, f64)],
    x_axis: XAxis<'_>,
) -> DrawResult<String> {
    let log_x = matches!(x_axis, XAxis::LogBytes(_));
    let ((xmin, xmax), (ymin, ymax)) = line_extent(series, refs, log_x);
    // Every line is named, even a single one: a chart never leaves its reader guessing.
    let nleg = series.len() + refs.len();
    let legend_h = if nleg > 0 {
        LEGEND_ROW * nleg as u32 + 10
    } else {
        0
    };
    let mut tips = Shortened::default();
    let title = tips.text(title, MAX_TITLE_COLS);
    let names: Vec<String> = series
        .iter()
        .map(|l| tips.text(&l.name, MAX_LABEL_COLS))
        .collect();
    let legend = legend_entries(names.iter().map(String::as_str), refs);
    let legend_w = legend_width(&legend);
    let (width, height) = ((110 + legend_w).max(960), 470 + legend_h);
    let lines = LineSet {
        series,
        refs,
        log_x,
        x: (xmin, xmax),
    };
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (width, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let (legend_area, area) = under_title_and_legend(&root, &title, legend_h)?;
        let mut cb = ChartBuilder::on(&area);
        cb.margin(16)
            .x_label_area_size(if log_x { 66 } else { 52 })
            .y_label_area_size(78);
        match x_axis {
            XAxis::LogBytes(ticks) => {
                let mut chart = cb.build_cartesian_2d((xmin..xmax).log_scale(), ymin..ymax)?;
                chart
                    .configure_mesh()
                    .disable_x_mesh()
                    .max_light_lines(0)
                    .x_labels(0)
                    .set_tick_mark_size(LabelAreaPosition::Bottom, 0)
                    .x_label_formatter(&|_| String::new())
                    .x_desc(x_desc)
                    .y_desc(y_desc)
                    .y_label_formatter(&|v| compact(*v))
                    .label_style((FAMILY, LABEL_PX))
                    .axis_desc_style((FAMILY, AXIS_PX))
                    .draw()?;
                SizeTicks::STAGGERED.draw(&mut chart, &root, ticks, (ymin, ymax))?;
                lines.draw(&mut chart)?;
            }
            XAxis::Linear => {
                let mut chart = cb.build_cartesian_2d(xmin..xmax, ymin..ymax)?;
                chart
                    .configure_mesh()
                    .max_light_lines(0)
                    .x_desc(x_desc)
                    .y_desc(y_desc)
                    .x_label_formatter(&|v| compact(*v))
                    .y_label_formatter(&|v| compact(*v))
                    .label_style((FAMILY, LABEL_PX))
                    .axis_desc_style((FAMILY, AXIS_PX))
                    .draw()?;
                lines.draw(&mut chart)?;
            }
        }
        if legend_h > 0 {
            draw_legend(&legend_area, 74, legend, Swatch::Stroke)?;
        }
        root.present()?;
    }
    Ok(tips.tooltips(finish(buf)))
}

/// The x and y ranges a line chart covers: every point, band and reference line, 0 on the y
/// axis, a margin past the first and last size on a log axis and some room above the top.
fn line_extent(series: &[Line], refs: &[(String, f64)], log_x: bool) -> ((f64, f64), (f64, f64)) {
    let pts = series.iter().flat_map(|l| l.points.iter());
    // 0 is always on the y axis: bandwidth starts there, and a change is read against it.
    let (mut xmin, mut xmax, mut ymin, mut ymax) = (f64::MAX, f64::MIN, 0f64, 0f64);
    for p in pts {
        xmin = xmin.min(p.0);
        xmax = xmax.max(p.0);
        ymin = ymin.min(p.1.min(p.2));
        ymax = ymax.max(p.1.max(p.3));
    }
    for (_, r) in refs {
        ymax = ymax.max(*r);
        ymin = ymin.min(*r);
    }
    if log_x {
        // A margin so the first and last measured sizes are not on the frame.
        xmin /= 1.5;
        xmax *= 1.5;
    } else if xmin >= xmax {
        xmin -= 1.0;
        xmax += 1.0;
    }
    if ymax <= ymin {
        ymax = ymin + 1.0;
    }
    let ymax = ymax + (ymax - ymin) * 0.08;
    ((xmin, xmax), (ymin, ymax))
}

/// What a line chart draws inside its axes: the lines with their bands and points, and the
/// reference lines across the x range `x`.
struct LineSet<'a> {
    series: &'a [Line],
    refs: &'a [(String, f64)],
    /// Sizes on a log axis: points more than [`MAX_GAP`] apart are not joined.
    log_x: bool,
    x: (f64, f64),
}

impl LineSet<'_> {
    fn draw<X: Ranged<ValueType = f64>>(
        &self,
        chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, RangedCoordf64>>,
    ) -> DrawResult<()> {
        for (i, l) in self.series.iter().enumerate() {
            let c = color(i);
            let segs = if self.log_x {
                segments(&l.points, |p| p.0)
            } else {
                vec![l.points.clone()]
            };
            for seg in segs.iter().filter(|s| s.len() >= 2) {
                if seg.iter().any(|p| p.2 != p.3) {
                    let mut poly: Vec<(f64, f64)> = seg.iter().map(|p| (p.0, p.2)).collect();
                    poly.extend(seg.iter().rev().map(|p| (p.0, p.3)));
                    chart.draw_series(std::iter::once(Polygon::new(poly, c.mix(0.18).filled())))?;
                }
                chart.draw_series(LineSeries::new(
                    seg.iter().map(|p| (p.0, p.1)),
                    c.stroke_width(2),
                ))?;
            }
            if l.points.len() <= 60 || segs.iter().any(|s| s.len() == 1) {
                chart.draw_series(
                    l.points
                        .iter()
                        .map(|p| Circle::new((p.0, p.1), 4, c.filled())),
                )?;
            }
        }
        let (xmin, xmax) = self.x;
        for (_, r) in self.refs {
            chart.draw_series(DashedLineSeries::new(
                vec![(xmin, *r), (xmax, *r)],
                6,
                4,
                REF_COLOR.stroke_width(2),
            ))?;
        }
        Ok(())
    }
}

/// The ticks of a log axis of byte sizes: a grid line, a tick mark and a label (binary units) at
/// each size measured, a label left out where it would overlap one already placed.
pub struct SizeTicks {
    /// Label text size, plotters' font units.
    pub font: f64,
    /// Per label row, how far below the axis its labels start (px); the tick mark ends 2 px
    /// above. A size whose label fits no row gets no tick mark (its grid line still marks it),
    /// so no tick stands without a label.
    pub rows: &'static [i32],
    /// Least room between two labels of a row, px.
    pub gap: i32,
    /// Label the smallest and the largest size first, then the others in order.
    pub ends_first: bool,
}

impl SizeTicks {
    /// Two staggered rows, the ends labelled first (the line charts).
    pub const STAGGERED: SizeTicks = SizeTicks {
        font: LABEL_PX,
        rows: &[8, 22],
        gap: 8,
        ends_first: true,
    };

    /// The sizes in the order their labels are placed.
    fn order(&self, sizes: &[u64]) -> Vec<u64> {
        let mut sorted: Vec<u64> = sizes.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        if !self.ends_first || sorted.len() < 3 {
            return sorted;
        }
        let last = sorted.len() - 1;
        let mut order = vec![sorted[0], sorted[last]];
        order.extend(&sorted[1..last]);
        order
    }

    /// Draws the ticks on `chart` (x: a log axis of sizes, y from `y.0` to `y.1`); the tick
    /// marks and labels go on `area`, the drawing area the chart was built on or one holding it.
    pub fn draw<Y: Ranged<ValueType = f64>>(
        &self,
        chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<LogCoord<f64>, Y>>,
        area: &DrawingArea<SVGBackend<'_>, Shift>,
        sizes: &[u64],
        (y0, y1): (f64, f64),
    ) -> DrawResult<()> {
        let style =
            TextStyle::from((FAMILY, self.font).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
        // Per row, the spans of the labels placed on it.
        let mut placed: Vec<Vec<(i32, i32)>> = vec![Vec::new(); self.rows.len()];
        for s in self.order(sizes) {
            let x = s as f64;
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(x, y0), (x, y1)],
                RGBColor(215, 215, 215).stroke_width(1),
            )))?;
            let label = crate::units::format_size(s);
            // The chart's coordinates are the whole SVG's; `area` draws relative to its corner.
            let (px, py) = chart.backend_coord(&(x, y0));
            let (bx, by) = area.get_base_pixel();
            let (px, py) = (px - bx, py - by);
            let half = text_px(&label) as i32 / 2;
            let span = (px - half, px + half);
            let gap = self.gap;
            let row = placed.iter().position(|row| {
                row.iter()
                    .all(|(a, b)| span.1 + gap < *a || span.0 > b + gap)
            });
            if let Some(r) = row {
                let dy = self.rows[r];
                area.draw(&PathElement::new(
                    vec![(px, py), (px, py + dy - 2)],
                    BLACK.stroke_width(1),
                ))?;
                placed[r].push(span);
                area.draw(&Text::new(label, (px, py + dy), style.clone()))?;
            }
        }
        Ok(())
    }
}

/// Keeps at most about `max` points: splits the series into `max / 2` buckets and keeps each
/// bucket's lowest and highest point (in x order), so spikes survive.
pub fn downsample(points: &[(f64, f64)], max: usize) -> Vec<(f64, f64)> {
    if points.len() <= max || max < 4 {
        return points.to_vec();
    }
    let buckets = max / 2;
    let per = points.len().div_ceil(buckets);
    let mut out = Vec::with_capacity(max);
    for chunk in points.chunks(per) {
        let (mut lo, mut hi) = (0, 0);
        for (i, p) in chunk.iter().enumerate() {
            if p.1 < chunk[lo].1 {
                lo = i;
            }
            if p.1 > chunk[hi].1 {
                hi = i;
            }
        }
        let (a, b) = (lo.min(hi), lo.max(hi));
        out.push(chunk[a]);
        if b != a {
            out.push(chunk[b]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn downsample_keeps_spikes_and_bounds_size() {
        let mut pts: Vec<(f64, f64)> = (0..10_000).map(|i| (i as f64, 1.0)).collect();
        pts[5_000].1 = 99.0;
        let d = downsample(&pts, 2000);
        assert!(d.len() <= 2000);
        assert!(d.iter().any(|p| p.1 == 99.0));
        assert!(d.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn bars_render_text_without_urls() {
        let svg = hbars(&Bars {
            title: "t".into(),
            x_desc: "GB/s".into(),
            series: vec!["a".into(), "b".into()],
            categories: vec!["<case>".into()],
            values: vec![vec![Some(-2.0), None]],
            whiskers: vec![vec![Some((0.5, 1.5)), None]],
            refs: vec![("ref".into(), 1.2)],
            digits: 1,
            missing: "unavailable".into(),
            ..Bars::default()
        })
        .expect("draws");
        assert!(svg.starts_with("<svg"));
        assert!(!svg.contains("http"));
        assert!(svg.contains("sans-serif"));
        assert!(!svg.contains("<case>"));
        assert!(svg.contains("unavailable"));
    }

    #[test]
    fn bar_values_are_drawn_over_the_reference_lines_on_a_white_ground() {
        let svg = hbars(&Bars {
            title: "t".into(),
            x_desc: "GB/s".into(),
            series: vec!["a".into()],
            categories: vec!["c".into()],
            values: vec![vec![Some(49.5)]],
            whiskers: vec![vec![None]],
            refs: vec![("ref".into(), 50.0)],
            digits: 1,
            ..Bars::default()
        })
        .expect("draws");
        // Drawn in order: the bar, the dashed reference line across it, the value on its white
        // ground, then the legend.
        let value = svg.find("49.5").expect("the value is printed");
        let last_dash = svg[..value]
            .rfind("stroke-width=\"2\"")
            .expect("the reference line is drawn before the value");
        let ground = svg[..value]
            .rfind("<rect")
            .expect("a ground under the value");
        assert!(last_dash < ground, "the ground comes after the line: {svg}");
        assert!(svg[ground..value].contains("#FFFFFF"), "{svg}");
    }

    #[test]
    fn gaps_over_a_decade_split_lines() {
        let s = segments(&[1.0, 2.0, 40.0, 50.0, 5000.0], |x| *x);
        assert_eq!(s, vec![vec![1.0, 2.0], vec![40.0, 50.0], vec![5000.0]]);
    }

    #[test]
    fn log_axis_is_labelled_at_the_measured_sizes() {
        let sizes = [16u64 << 10, 512 << 20, 4 << 30];
        let svg = lines(
            "t",
            "size",
            "GB/s",
            &[Line {
                name: "pinned, copy engine, H2D".into(),
                points: sizes.iter().map(|s| (*s as f64, 5.0, 5.0, 5.0)).collect(),
            }],
            &[],
            XAxis::LogBytes(&sizes),
        )
        .expect("draws");
        for l in ["16 KiB", "512 MiB", "4 GiB"] {
            assert!(svg.contains(l), "{l} missing");
        }
        assert!(!svg.contains("953.67"));
    }

    #[test]
    fn values_are_never_written_as_minus_zero() {
        assert_eq!(fixed(-0.2, 0), "0");
        assert_eq!(fixed(-0.04, 1), "0.0");
        assert_eq!(fixed(-0.6, 0), "-1");
        assert_eq!(compact(-0.0), "0");
        assert_eq!(compact(-1e-13), "0");
        assert_eq!(compact(0.125), "0.125");
        assert_eq!(compact(0.0005), "0.0005");
        assert_eq!(compact(-2.0), "-2");
    }

    #[test]
    fn log_axes_label_every_decade_they_cross() {
        // ollama-like's GB/s panel: 1.9 to 88.
        assert_eq!(log_ticks(1.9, 88.0), vec![2.0, 5.0, 10.0, 20.0, 50.0]);
        // size-curve's: 0.0003 to 90 GB/s, over five decades: their powers of ten.
        assert_eq!(log_ticks(0.0003, 90.0), vec![0.001, 0.01, 0.1, 1.0, 10.0]);
        // Three decades: 1 and 3 times each.
        assert_eq!(
            log_ticks(0.5, 400.0),
            vec![1.0, 3.0, 10.0, 30.0, 100.0, 300.0]
        );
        assert_eq!(log_ticks(3.0, 2e5).first(), Some(&3.0));
        assert!(log_ticks(0.0, 1.0).is_empty());
    }

    #[test]
    fn every_size_tick_has_its_label() {
        // Sizes too close for their labels: the ones left unlabelled get no tick mark.
        let sizes: Vec<u64> = (10..30).map(|k| 1u64 << k).collect();
        let svg = lines(
            "t",
            "size",
            "GB/s",
            &[Line {
                name: "s".into(),
                points: sizes.iter().map(|s| (*s as f64, 5.0, 5.0, 5.0)).collect(),
            }],
            &[],
            XAxis::LogBytes(&sizes),
        )
        .expect("draws");
        let labels = sizes
            .iter()
            .filter(|s| svg.contains(&format!(">\n{}\n</text>", crate::units::format_size(**s))))
            .count();
        assert!(labels < sizes.len(), "some labels left out");
        // A tick mark is a short black vertical line below the axis.
        let ticks = svg
            .split("<polyline")
            .filter(|p| p.contains("stroke=\"#000000\" stroke-width=\"1\""))
            .filter_map(|p| {
                let pts = p.split("points=\"").nth(1)?.split('"').next()?;
                let xy: Vec<(i32, i32)> = pts
                    .split_whitespace()
                    .filter_map(|q| {
                        let (x, y) = q.split_once(',')?;
                        Some((x.parse().ok()?, y.parse().ok()?))
                    })
                    .collect();
                (xy.len() == 2
                    && xy[0].0 == xy[1].0
                    && (xy[1].1 - xy[0].1) < 30
                    && xy[1].1 > xy[0].1)
                    .then_some(())
            })
            .count();
        assert_eq!(ticks, labels, "{svg}");
    }

    #[test]
    fn long_labels_are_cut_with_their_whole_text_as_a_tooltip() {
        let long = "x".repeat(300);
        let svg = hbars(&Bars {
            title: "t".into(),
            x_desc: "GB/s".into(),
            series: vec!["a".into()],
            categories: vec![long.clone(), "short".into()],
            values: vec![vec![Some(1.0)], vec![Some(2.0)]],
            digits: 1,
            ..Bars::default()
        })
        .expect("draws");
        let cut = format!("{}…", "x".repeat(MAX_LABEL_COLS - 1));
        assert!(
            svg.contains(&format!("<title>{long}</title>{cut}\n</text>")),
            "{svg}"
        );
        assert!(svg.contains(">\nshort\n</text>"));
        let width: u32 = svg
            .split("width=\"")
            .nth(1)
            .and_then(|w| w.split('"').next())
            .and_then(|w| w.parse().ok())
            .expect("width");
        assert!(width < 2000, "{width}");
    }
}

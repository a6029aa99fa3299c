//! Drawing helpers shared by the plot files: palette, grouped horizontal bars (with optional CI
//! whiskers and reference lines), line charts, and the SVG clean-up that keeps pages offline.
//!
//! Everything renders through plotters' SVG backend into a `String`; text becomes `<text>`
//! elements with the explicit family `sans-serif`, so no font files are needed.
//!
//! Size: over 500 lines: the bar and line chart primitives share layout and SVG clean-up code that
//! would otherwise be passed between files.

use crate::report::html::escape;
use plotters::coord::Shift;
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
/// cut).
pub fn text_px(s: &str) -> u32 {
    (s.chars().count() as f64 * 7.6).ceil() as u32 + 4
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
#[derive(Default)]
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

#[expect(
    clippy::too_many_lines,
    reason = "written before the 80-line limit; to be split into named steps"
)]
pub fn hbars(b: &Bars) -> DrawResult<String> {
    let ncat = b.categories.len().max(1);
    let nser = b.series.len().max(1);
    let per_bar = if nser > 3 { 15 } else { 19 };
    let group_h = (nser as u32 * per_bar + 12).max(26);
    let legend = b.legend();
    let legend_h = if legend.len() > 1 || !b.refs.is_empty() || b.by_category.is_some() {
        LEGEND_ROW * legend.len() as u32 + 10
    } else {
        0
    };
    let height = TITLE_H + legend_h + 20 + ncat as u32 * group_h + 56;
    let label_w = b.categories.iter().map(|c| text_px(c)).max().unwrap_or(40) + 16;
    let legend_w = legend_width(&legend);
    let width = (label_w + 620).max(label_w + 40 + legend_w).max(960);
    let (lo, hi) = b.extent();
    // Room for the value printed after the longest bar.
    let pad = (hi - lo) * 0.14;
    let (lo, hi) = (if lo < 0.0 { lo - pad } else { lo }, hi + pad);

    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (width, height)).into_drawing_area();
        root.fill(&WHITE)?;
        // Title, then the legend, then the plot: the reader learns the colours first.
        let (legend_area, chart_area) = under_title_and_legend(&root, &b.title, legend_h)?;
        let mut chart = ChartBuilder::on(&chart_area)
            .margin(12)
            .x_label_area_size(52)
            .y_label_area_size(label_w)
            .build_cartesian_2d(lo..hi, 0f64..ncat as f64)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .disable_y_axis()
            .x_desc(b.x_desc.as_str())
            .x_label_formatter(&|v| compact(*v))
            .label_style((FAMILY, LABEL_PX))
            .axis_desc_style((FAMILY, AXIS_PX))
            .draw()?;
        let band = 0.8 / nser as f64;
        let value_style =
            TextStyle::from((FAMILY, VALUE_PX).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
        for (ci, cat) in b.categories.iter().enumerate() {
            let top = (ncat - ci) as f64;
            let centre = top - 0.5;
            let (px, py) = chart.backend_coord(&(lo, centre));
            let style = TextStyle::from((FAMILY, LABEL_PX).into_font())
                .pos(Pos::new(HPos::Right, VPos::Center));
            root.draw(&Text::new(cat.clone(), (px - 6, py), style))?;
            for si in 0..nser {
                let y1 = top - 0.1 - si as f64 * band;
                let y0 = y1 - band * 0.88;
                let yc = (y0 + y1) / 2.0;
                let value = b.values.get(ci).and_then(|r| r.get(si)).copied().flatten();
                if let Some(v) = value {
                    chart.draw_series(std::iter::once(Rectangle::new(
                        [(0.0, y0), (v, y1)],
                        b.colour(ci, si).filled(),
                    )))?;
                }
                let whisker = b
                    .whiskers
                    .get(ci)
                    .and_then(|r| r.get(si))
                    .copied()
                    .flatten();
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
                    Some(v) => format!("{v:.prec$}", prec = b.digits),
                    None if !b.missing.is_empty() => b.missing.clone(),
                    None => continue,
                };
                let end = value
                    .unwrap_or(0.0)
                    .max(0.0)
                    .max(whisker.map_or(0.0, |w| w.1));
                let (tx, ty) = chart.backend_coord(&(end, yc));
                root.draw(&Text::new(text, (tx + 4, ty), value_style.clone()))?;
            }
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
        // Legend above the plot, so it never covers a bar and is read first.
        if legend_h > 0 {
            let x0 = (label_w as i32 - 20).max(12);
            draw_legend(&legend_area, x0, legend, Swatch::Box)?;
        }
        root.present()?;
    }
    Ok(finish(buf))
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

/// A tick value without trailing noise: `55`, `2.5`, `0.125`, `12k`.
pub fn compact(v: f64) -> String {
    let a = v.abs();
    if a >= 10_000.0 {
        format!("{:.0}k", v / 1000.0)
    } else if a >= 100.0 || v == v.round() {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
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
#[expect(
    clippy::too_many_lines,
    reason = "written before the 80-line limit; to be split into named steps"
)]
pub fn lines(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Line],
    refs: &[(String, f64)],
    x_axis: XAxis<'_>,
) -> DrawResult<String> {
    let log_x = matches!(x_axis, XAxis::LogBytes(_));
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
    // Every line is named, even a single one: a chart never leaves its reader guessing.
    let nleg = series.len() + refs.len();
    let legend_h = if nleg > 0 {
        LEGEND_ROW * nleg as u32 + 10
    } else {
        0
    };
    let legend = legend_entries(series.iter().map(|l| l.name.as_str()), refs);
    let legend_w = legend_width(&legend);
    let (width, height) = ((110 + legend_w).max(960), 470 + legend_h);
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (width, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let (legend_area, area) = under_title_and_legend(&root, title, legend_h)?;
        let mut cb = ChartBuilder::on(&area);
        cb.margin(16)
            .x_label_area_size(if log_x { 66 } else { 52 })
            .y_label_area_size(78);
        macro_rules! body {
            ($chart:ident) => {{
                for (i, l) in series.iter().enumerate() {
                    let c = color(i);
                    let segs = if log_x {
                        segments(&l.points, |p| p.0)
                    } else {
                        vec![l.points.clone()]
                    };
                    for seg in &segs {
                        if seg.len() < 2 {
                            continue;
                        }
                        if seg.iter().any(|p| p.2 != p.3) {
                            let mut poly: Vec<(f64, f64)> =
                                seg.iter().map(|p| (p.0, p.2)).collect();
                            poly.extend(seg.iter().rev().map(|p| (p.0, p.3)));
                            $chart.draw_series(std::iter::once(Polygon::new(
                                poly,
                                c.mix(0.18).filled(),
                            )))?;
                        }
                        $chart.draw_series(LineSeries::new(
                            seg.iter().map(|p| (p.0, p.1)),
                            c.stroke_width(2),
                        ))?;
                    }
                    if l.points.len() <= 60 || segs.iter().any(|s| s.len() == 1) {
                        $chart.draw_series(
                            l.points
                                .iter()
                                .map(|p| Circle::new((p.0, p.1), 4, c.filled())),
                        )?;
                    }
                }
                for (_, r) in refs {
                    $chart.draw_series(DashedLineSeries::new(
                        vec![(xmin, *r), (xmax, *r)],
                        6,
                        4,
                        REF_COLOR.stroke_width(2),
                    ))?;
                }
            }};
        }
        match x_axis {
            XAxis::LogBytes(ticks) => {
                let mut chart = cb.build_cartesian_2d((xmin..xmax).log_scale(), ymin..ymax)?;
                chart
                    .configure_mesh()
                    .disable_x_mesh()
                    .x_labels(0)
                    .set_tick_mark_size(LabelAreaPosition::Bottom, 0)
                    .x_label_formatter(&|_| String::new())
                    .x_desc(x_desc)
                    .y_desc(y_desc)
                    .y_label_formatter(&|v| compact(*v))
                    .label_style((FAMILY, LABEL_PX))
                    .axis_desc_style((FAMILY, AXIS_PX))
                    .draw()?;
                // Ticks and grid lines at the sizes measured. Labels go on two staggered rows;
                // the smallest and largest sizes are labelled first, then the others where they
                // do not overlap a label already placed (the parameter table lists every size).
                let mut sorted: Vec<u64> = ticks.to_vec();
                sorted.sort_unstable();
                sorted.dedup();
                let tick_style = TextStyle::from((FAMILY, LABEL_PX).into_font())
                    .pos(Pos::new(HPos::Center, VPos::Top));
                let mut placed: [Vec<(i32, i32)>; 2] = [Vec::new(), Vec::new()];
                let mut order: Vec<u64> = Vec::with_capacity(sorted.len());
                if let (Some(first), Some(last)) = (sorted.first(), sorted.last()) {
                    order.push(*first);
                    if last != first {
                        order.push(*last);
                    }
                }
                order.extend(sorted.iter().skip(1).take(sorted.len().saturating_sub(2)));
                for t in order {
                    let x = t as f64;
                    chart.draw_series(std::iter::once(PathElement::new(
                        vec![(x, ymin), (x, ymax)],
                        RGBColor(215, 215, 215).stroke_width(1),
                    )))?;
                    let label = crate::units::format_size(t);
                    let (px, py) = chart.backend_coord(&(x, ymin));
                    let half = text_px(&label) as i32 / 2;
                    let span = (px - half - 4, px + half + 4);
                    let free =
                        |row: &Vec<(i32, i32)>| row.iter().all(|(a, b)| span.1 < *a || span.0 > *b);
                    let row = if free(&placed[0]) {
                        Some(0)
                    } else if free(&placed[1]) {
                        Some(1)
                    } else {
                        None
                    };
                    let dy = match row {
                        Some(1) => 22,
                        _ => 8,
                    };
                    root.draw(&PathElement::new(
                        vec![(px, py), (px, py + dy - 2)],
                        BLACK.stroke_width(1),
                    ))?;
                    if let Some(r) = row {
                        placed[r].push(span);
                        root.draw(&Text::new(label, (px, py + dy), tick_style.clone()))?;
                    }
                }
                body!(chart);
            }
            XAxis::Linear => {
                let mut chart = cb.build_cartesian_2d(xmin..xmax, ymin..ymax)?;
                chart
                    .configure_mesh()
                    .x_desc(x_desc)
                    .y_desc(y_desc)
                    .x_label_formatter(&|v| compact(*v))
                    .y_label_formatter(&|v| compact(*v))
                    .label_style((FAMILY, LABEL_PX))
                    .axis_desc_style((FAMILY, AXIS_PX))
                    .draw()?;
                body!(chart);
            }
        }
        if legend_h > 0 {
            draw_legend(&legend_area, 74, legend, Swatch::Stroke)?;
        }
        root.present()?;
    }
    Ok(finish(buf))
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
}

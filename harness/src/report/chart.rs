//! Drawing helpers shared by the plot files: palette, grouped horizontal bars (with optional CI
//! whiskers and reference lines), line charts, and the SVG clean-up that keeps pages offline.
//!
//! Everything renders through plotters' SVG backend into a `String`; text becomes `<text>`
//! elements with the explicit family `sans-serif`, so no font files are needed.

use crate::report::html::escape;
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

    /// The figure as HTML: the SVG inline, or a one-sentence note.
    pub fn to_html(&self) -> String {
        match self {
            Figure::Svg {
                title,
                caption,
                svg,
            } => format!(
                "<figure>\n<h3>{}</h3>\n{svg}\n<figcaption>{}</figcaption>\n</figure>\n",
                escape(title),
                escape(caption)
            ),
            Figure::Omitted { title, reason } => format!(
                "<h3>{}</h3>\n<p class=\"omitted\">{}</p>\n",
                escape(title),
                escape(reason)
            ),
        }
    }

    pub fn is_svg(&self) -> bool {
        matches!(self, Figure::Svg { .. })
    }
}

/// Makes plotters' SVG fit inline in an offline page: drops the namespace URL (HTML5 does not
/// need it, and the page must not reference any URL).
pub fn finish(svg: String) -> String {
    svg.replace(" xmlns=\"http://www.w3.org/2000/svg\"", "")
}

/// Shortens a label to `n` characters with an ellipsis.
pub fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// Grouped horizontal bars: one group per category, one bar per series.
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
}

pub fn hbars(b: &Bars) -> DrawResult<String> {
    let ncat = b.categories.len().max(1);
    let nser = b.series.len().max(1);
    let per_bar = if nser > 3 { 9 } else { 14 };
    let group_h = (nser as u32 * per_bar + 12).max(22);
    let legend_h = if nser > 1 || !b.refs.is_empty() {
        18 * (nser + b.refs.len()) as u32 + 10
    } else {
        0
    };
    let height = 70 + ncat as u32 * group_h + 50 + legend_h;
    let width = 960u32;
    let longest = b
        .categories
        .iter()
        .map(|c| c.chars().count())
        .max()
        .unwrap_or(4);
    let label_w = ((longest.min(56) as f64) * 6.6 + 16.0) as u32;

    let mut lo: f64 = 0.0;
    let mut hi: f64 = 0.0;
    for v in b.values.iter().flatten().flatten() {
        lo = lo.min(*v);
        hi = hi.max(*v);
    }
    for (l, h) in b.whiskers.iter().flatten().flatten() {
        lo = lo.min(*l);
        hi = hi.max(*h);
    }
    for (_, r) in &b.refs {
        lo = lo.min(*r);
        hi = hi.max(*r);
    }
    if hi - lo <= f64::EPSILON {
        hi = lo + 1.0;
    }
    let pad = (hi - lo) * 0.06;
    let (lo, hi) = (if lo < 0.0 { lo - pad } else { lo }, hi + pad);

    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (width, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let (chart_area, legend_area) = root.split_vertically(height - legend_h);
        let mut chart = ChartBuilder::on(&chart_area)
            .caption(&b.title, (FAMILY, 17))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(label_w)
            .build_cartesian_2d(lo..hi, 0f64..ncat as f64)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .disable_y_axis()
            .x_desc(b.x_desc.as_str())
            .label_style((FAMILY, 12))
            .axis_desc_style((FAMILY, 13))
            .draw()?;
        let band = 0.8 / nser as f64;
        for (ci, cat) in b.categories.iter().enumerate() {
            let top = (ncat - ci) as f64;
            let centre = top - 0.5;
            let (px, py) = chart.backend_coord(&(lo, centre));
            let style =
                TextStyle::from((FAMILY, 12).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
            chart_area.draw(&Text::new(clip(cat, 56), (px - 6, py), style))?;
            for si in 0..nser {
                let y1 = top - 0.1 - si as f64 * band;
                let y0 = y1 - band * 0.88;
                if let Some(v) = b.values.get(ci).and_then(|r| r.get(si)).copied().flatten() {
                    chart.draw_series(std::iter::once(Rectangle::new(
                        [(0.0, y0), (v, y1)],
                        color(si).filled(),
                    )))?;
                }
                if let Some((wl, wh)) = b
                    .whiskers
                    .get(ci)
                    .and_then(|r| r.get(si))
                    .copied()
                    .flatten()
                {
                    let yc = (y0 + y1) / 2.0;
                    let d = band * 0.3;
                    let st = BLACK.stroke_width(1);
                    chart.draw_series([
                        PathElement::new(vec![(wl, yc), (wh, yc)], st),
                        PathElement::new(vec![(wl, yc - d), (wl, yc + d)], st),
                        PathElement::new(vec![(wh, yc - d), (wh, yc + d)], st),
                    ])?;
                }
            }
        }
        if lo < 0.0 {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(0.0, 0.0), (0.0, ncat as f64)],
                BLACK.stroke_width(1),
            )))?;
        }
        for (label, x) in &b.refs {
            chart.draw_series(DashedLineSeries::new(
                vec![(*x, 0.0), (*x, ncat as f64)],
                6,
                4,
                REF_COLOR.stroke_width(2),
            ))?;
            let _ = label;
        }
        // Legend below the plot, so it never covers a bar.
        if legend_h > 0 {
            let mut y = 8;
            let entries = b
                .series
                .iter()
                .enumerate()
                .map(|(i, s)| (s.clone(), Some(color(i))))
                .chain(b.refs.iter().map(|(l, v)| (format!("{l}: {v:.2}"), None)));
            for (name, col) in entries {
                match col {
                    Some(c) => legend_area.draw(&Rectangle::new(
                        [(label_w as i32, y), (label_w as i32 + 14, y + 12)],
                        c.filled(),
                    ))?,
                    None => legend_area.draw(&PathElement::new(
                        vec![(label_w as i32, y + 6), (label_w as i32 + 14, y + 6)],
                        REF_COLOR.stroke_width(2),
                    ))?,
                }
                legend_area.draw(&Text::new(
                    clip(&name, 110),
                    (label_w as i32 + 20, y + 6),
                    TextStyle::from((FAMILY, 12).into_font())
                        .pos(Pos::new(HPos::Left, VPos::Center)),
                ))?;
                y += 18;
            }
        }
        root.present()?;
    }
    Ok(finish(buf))
}

/// One line of a line chart: `(x, y, band_lo, band_hi)` points, sorted by x.
pub struct Line {
    pub name: String,
    pub points: Vec<(f64, f64, f64, f64)>,
}

/// A line chart; `log_x` formats x as byte sizes on a log axis. Bands (min–max) are drawn when
/// `band_lo != band_hi`; `refs` are horizontal dashed reference lines.
pub fn lines(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Line],
    refs: &[(String, f64)],
    log_x: bool,
) -> DrawResult<String> {
    let pts = series.iter().flat_map(|l| l.points.iter());
    let (mut xmin, mut xmax, mut ymin, mut ymax) = (f64::MAX, f64::MIN, 0f64, f64::MIN);
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
    if xmin >= xmax {
        if log_x {
            xmin /= 2.0;
            xmax = xmin * 4.0;
        } else {
            xmin -= 1.0;
            xmax += 1.0;
        }
    }
    if ymax <= ymin {
        ymax = ymin + 1.0;
    }
    let ymax = ymax + (ymax - ymin) * 0.08;
    let nleg = series.len() + refs.len();
    let legend_h = if nleg > 1 { 18 * nleg as u32 + 10 } else { 0 };
    let (width, height) = (960u32, 460 + legend_h);
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (width, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let (area, legend_area) = root.split_vertically(height - legend_h);
        let mut cb = ChartBuilder::on(&area);
        cb.caption(title, (FAMILY, 17))
            .margin(12)
            .x_label_area_size(42)
            .y_label_area_size(62);
        macro_rules! body {
            ($chart:ident) => {{
                for (i, l) in series.iter().enumerate() {
                    let c = color(i);
                    if l.points.iter().any(|p| p.2 != p.3) && l.points.len() > 1 {
                        let mut poly: Vec<(f64, f64)> =
                            l.points.iter().map(|p| (p.0, p.2)).collect();
                        poly.extend(l.points.iter().rev().map(|p| (p.0, p.3)));
                        $chart.draw_series(std::iter::once(Polygon::new(
                            poly,
                            c.mix(0.18).filled(),
                        )))?;
                    }
                    $chart.draw_series(LineSeries::new(
                        l.points.iter().map(|p| (p.0, p.1)),
                        c.stroke_width(2),
                    ))?;
                    if l.points.len() <= 60 {
                        $chart.draw_series(
                            l.points
                                .iter()
                                .map(|p| Circle::new((p.0, p.1), 3, c.filled())),
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
        if log_x {
            let mut chart = cb.build_cartesian_2d((xmin..xmax).log_scale(), ymin..ymax)?;
            chart
                .configure_mesh()
                .x_desc(x_desc)
                .y_desc(y_desc)
                .x_label_formatter(&|x| crate::units::format_size(x.round().max(0.0) as u64))
                .label_style((FAMILY, 12))
                .axis_desc_style((FAMILY, 13))
                .draw()?;
            body!(chart);
        } else {
            let mut chart = cb.build_cartesian_2d(xmin..xmax, ymin..ymax)?;
            chart
                .configure_mesh()
                .x_desc(x_desc)
                .y_desc(y_desc)
                .label_style((FAMILY, 12))
                .axis_desc_style((FAMILY, 13))
                .draw()?;
            body!(chart);
        }
        if legend_h > 0 {
            let mut y = 8;
            let entries = series
                .iter()
                .enumerate()
                .map(|(i, l)| (l.name.clone(), Some(color(i))))
                .chain(refs.iter().map(|(l, v)| (format!("{l}: {v:.2}"), None)));
            for (name, col) in entries {
                let st = col.map_or(REF_COLOR.stroke_width(2), |c| c.stroke_width(3));
                legend_area.draw(&PathElement::new(vec![(74, y + 6), (94, y + 6)], st))?;
                legend_area.draw(&Text::new(
                    clip(&name, 120),
                    (100, y + 6),
                    TextStyle::from((FAMILY, 12).into_font())
                        .pos(Pos::new(HPos::Left, VPos::Center)),
                ))?;
                y += 18;
            }
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
            values: vec![vec![Some(1.0), Some(-2.0)]],
            whiskers: vec![vec![Some((0.5, 1.5)), None]],
            refs: vec![("ref".into(), 1.2)],
        })
        .expect("draws");
        assert!(svg.starts_with("<svg"));
        assert!(!svg.contains("http"));
        assert!(svg.contains("sans-serif"));
        assert!(!svg.contains("<case>"));
    }
}

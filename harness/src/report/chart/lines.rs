//! Line charts: one line per series over a linear or logarithmic x axis (sizes on a log axis get
//! ticks at the measured sizes), with confidence bands, reference lines, gaps split and
//! downsampling of long series.

use super::legend::{Swatch, draw_legend, legend_entries, legend_width};
use super::*;

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

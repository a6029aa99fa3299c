//! The size curve: the time of one copy and the bandwidth it reaches against its size, both on
//! log-log axes, one series per strategy and direction (`mode = "latency"` rows), the measured
//! medians as points and the fit `T(V) = a + V / b` as a dashed line, with `a`, `b` and the
//! half-bandwidth size `a·b` in the legend at the top.

use super::super::CaseRow;
use super::super::chart::{self, DrawResult, FAMILY, Figure, MAX_SERIES, SizeTicks};
use super::super::labels::{direction_key, strategy_words};
use super::FitFinding;
use crate::results::Row;
use crate::scenario::{Engine, Mode};
use crate::stats::SizeFit;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::collections::BTreeMap;

/// One series: its name, direction key, medians by size (µs, GB/s) and fit.
struct Curve {
    name: String,
    direction: String,
    /// size → (p50 µs, median GB/s).
    points: BTreeMap<u64, (f64, f64)>,
    /// What the series' sizes determine; its dashed line is drawn only where it gives `b`.
    fit: Option<FitFinding>,
}

/// The series of the rows: finished `mode = "latency"` copies with a median time, one per
/// run, strategy and direction; the fit over each series' sizes.
fn curves(rows: &[CaseRow<'_>], labels: &[String]) -> Vec<Curve> {
    let mut groups: BTreeMap<String, (String, Vec<&Row>)> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for (set, r) in rows {
        let timed = r.mode == Mode::Latency && r.engine == Engine::Copy && r.status.is_ok();
        if !timed || r.lat_p50_us.is_none() || r.placement().is_some() {
            continue;
        }
        let name = format!("{}{}", labels[*set], strategy_words(r));
        let g = groups.entry(name.clone()).or_insert_with(|| {
            order.push(name);
            (direction_key(r), Vec::new())
        });
        g.1.push(r);
    }
    order
        .into_iter()
        .filter_map(|name| {
            let (direction, rows) = groups.remove(&name)?;
            let points = rows
                .iter()
                .filter_map(|r| {
                    let us = r.lat_p50_us?;
                    let gbs = r.bw_median_gbs.unwrap_or(r.size_bytes as f64 / (us * 1e3));
                    Some((r.size_bytes, (us, gbs)))
                })
                .collect();
            let fit = FitFinding::of(&rows);
            Some(Curve {
                name,
                direction,
                points,
                fit,
            })
        })
        .collect()
}

/// The size curve of a scenario, when some series was measured at two sizes or more.
pub fn size_curve(scenario: &str, rows: &[CaseRow<'_>], labels: &[String]) -> Option<Figure> {
    let mut all = curves(rows, labels);
    if !all.iter().any(|c| c.points.len() >= 2) {
        return None;
    }
    all.sort_by_key(|c| std::cmp::Reverse(c.points.len()));
    let hidden = all.len().saturating_sub(MAX_SERIES);
    all.truncate(MAX_SERIES);
    let title = format!("{scenario}: how does the time of one copy grow with its size?");
    let caption = String::from(
        "Top: the time of one copy from the call until the host sees it done (host clock, median of the samples), µs. Bottom: the bandwidth one copy of that size reaches on its own, GB/s (1e9 B/s). Both axes logarithmic; points: measured; dashed: the fit T(V) = a + V/b (a: the fixed cost of one copy, b: the bandwidth large copies approach, a·b: the size at which a copy reaches half of b), drawn and stated only for a series of 3 sizes or more, some past a·b; any other series states its smallest size's median as its fixed cost and no b.",
    );
    let caption = chart::series_left_out(caption, hidden);
    let sizes = chart::sizes_of(all.iter().flat_map(|c| c.points.keys().copied()));
    let data = chart::size_plot_data(
        "latency-size-curve",
        &sizes,
        all.iter().map(|c| c.direction.as_str()),
    );
    let svg = draw(&title, &all, &sizes);
    Some(Figure::from_svg(title, caption, svg, data))
}

/// One legend row per series (its fit in words), then the fit's dashed line.
fn legend(curves: &[Curve]) -> Vec<(String, Option<RGBColor>)> {
    curves
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let fit = c
                .fit
                .as_ref()
                .map_or_else(|| "no fit (one size)".to_string(), FitFinding::short);
            (format!("{} — {fit}", c.name), Some(chart::color(i)))
        })
        .chain(std::iter::once((
            "dashed: the fit T(V) = a + V/b of the series of that colour, where it determines b"
                .to_string(),
            None,
        )))
        .collect()
}

/// Draws the legend rows 18 px apart from the top left of `area`.
fn draw_legend(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    rows: Vec<(String, Option<RGBColor>)>,
) -> DrawResult<()> {
    let style = TextStyle::from((FAMILY, chart::LABEL_PX).into_font())
        .pos(Pos::new(HPos::Left, VPos::Center));
    let mut y = 12;
    for (text, col) in rows {
        let line = vec![(90, y), (114, y)];
        match col {
            Some(c) => area.draw(&PathElement::new(line, c.stroke_width(3)))?,
            None => {
                for x in [90, 100, 110] {
                    area.draw(&PathElement::new(
                        vec![(x, y), (x + 5, y)],
                        BLACK.stroke_width(2),
                    ))?;
                }
            }
        }
        area.draw(&Text::new(text, (120, y), style.clone()))?;
        y += 20;
    }
    Ok(())
}

/// `(lo, hi)` of the values `f` gives over every point and fit, widened for a log axis.
fn log_range(curves: &[Curve], f: impl Fn(f64, f64) -> f64) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::MAX, f64::MIN);
    for c in curves {
        for (us, gbs) in c.points.values() {
            let v = f(*us, *gbs);
            if v > 0.0 {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
    }
    if lo > hi {
        return (0.1, 10.0);
    }
    (lo / 1.6, hi * 1.6)
}

/// The two panels under a legend at the top.
fn draw(title: &str, curves: &[Curve], sizes: &[u64]) -> DrawResult<String> {
    let rows = legend(curves);
    let legend_w = rows.iter().map(|r| chart::text_px(&r.0)).max().unwrap_or(0);
    let legend_h = 20 * rows.len() as u32 + 14;
    let (width, panel_h) = ((140 + legend_w).max(1000), 340);
    let height = 34 + legend_h + 2 * panel_h;
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (width, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let (head, rest) = root.split_vertically(34);
        head.draw(&Text::new(
            title.to_string(),
            (width as i32 / 2, 18),
            TextStyle::from((FAMILY, chart::TITLE_PX).into_font())
                .pos(Pos::new(HPos::Center, VPos::Center)),
        ))?;
        let (legend_area, panels) = rest.split_vertically(legend_h);
        draw_legend(&legend_area, rows)?;
        let (top, bottom) = panels.split_vertically(panel_h);
        panel(&top, curves, sizes, Panel::Time)?;
        panel(&bottom, curves, sizes, Panel::Bandwidth)?;
        root.present()?;
    }
    Ok(chart::finish(buf))
}

#[derive(Clone, Copy, PartialEq)]
enum Panel {
    Time,
    Bandwidth,
}

impl Panel {
    /// The panel's value of a point (p50 µs, GB/s).
    fn value(self, us: f64, gbs: f64) -> f64 {
        match self {
            Panel::Time => us,
            Panel::Bandwidth => gbs,
        }
    }
    /// The panel's value the fit predicts at `bytes`.
    fn fitted(self, fit: &SizeFit, bytes: f64) -> f64 {
        let us = fit.fixed_us + bytes / (fit.bandwidth_gbs * 1e3);
        self.value(us, bytes / (us * 1e3))
    }
    fn desc(self) -> &'static str {
        match self {
            Panel::Time => "µs per copy (p50)",
            Panel::Bandwidth => "GB/s (1e9 B/s)",
        }
    }
}

/// The size axis of a panel: one row of labels, each placed where it does not overlap the one
/// before.
const SIZE_TICKS: SizeTicks = SizeTicks {
    font: chart::LABEL_PX,
    rows: &[7, 21],
    gap: 6,
    ends_first: false,
};

/// One log-log panel: measured points joined by thin lines, the fit dashed, ticks at the sizes.
fn panel(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    curves: &[Curve],
    sizes: &[u64],
    which: Panel,
) -> DrawResult<()> {
    let (x0, x1) = (
        *sizes.first().unwrap_or(&1) as f64 / 1.6,
        *sizes.last().unwrap_or(&2) as f64 * 1.6,
    );
    let (y0, y1) = log_range(curves, |us, gbs| which.value(us, gbs));
    let mut chart = ChartBuilder::on(area)
        .margin(14)
        .x_label_area_size(if which == Panel::Bandwidth { 66 } else { 44 })
        .y_label_area_size(86)
        .build_cartesian_2d(
            (x0..x1).log_scale(),
            (y0..y1)
                .log_scale()
                .with_key_points(chart::log_ticks(y0, y1)),
        )?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(WHITE)
        .x_labels(0)
        .set_tick_mark_size(LabelAreaPosition::Bottom, 0)
        .x_label_formatter(&|_| String::new())
        .x_desc(if which == Panel::Bandwidth {
            "size of one copy (binary units: KiB, MiB, GiB)"
        } else {
            ""
        })
        .y_desc(which.desc())
        .y_label_formatter(&|v| chart::compact(*v))
        .label_style((FAMILY, chart::LABEL_PX))
        .axis_desc_style((FAMILY, chart::AXIS_PX))
        .draw()?;
    SIZE_TICKS.draw(&mut chart, area, sizes, (y0, y1))?;
    for (i, c) in curves.iter().enumerate() {
        let col = chart::color(i);
        let pts: Vec<(f64, f64)> = c
            .points
            .iter()
            .map(|(s, (us, gbs))| (*s as f64, which.value(*us, *gbs)))
            .collect();
        if let Some(fit) = c.fit.as_ref().and_then(FitFinding::bandwidth_fit) {
            let n = 64;
            let (lo, hi) = (pts[0].0.ln(), pts[pts.len() - 1].0.ln());
            let line: Vec<(f64, f64)> = (0..=n)
                .map(|k| (lo + (hi - lo) * f64::from(k) / f64::from(n)).exp())
                .map(|v| (v, which.fitted(fit, v)))
                .filter(|p| p.1 > 0.0 && p.1.is_finite())
                .collect();
            chart.draw_series(DashedLineSeries::new(line, 5, 3, col.stroke_width(2)))?;
        }
        chart.draw_series(LineSeries::new(pts.clone(), col.mix(0.5).stroke_width(1)))?;
        chart.draw_series(pts.iter().map(|p| Circle::new(*p, 4, col.filled())))?;
    }
    Ok(())
}

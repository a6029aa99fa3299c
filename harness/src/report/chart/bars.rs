//! Grouped horizontal bars: one group per category, one bar per series, with optional CI
//! whiskers, reference lines and values written at the bars' ends.

use super::legend::{LegendEntry, Swatch, draw_legend, legend_entries, legend_width, refs_legend};
use super::*;

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

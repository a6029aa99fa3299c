//! The legend drawn above a chart: one swatch and text per series, then one per reference line.

use super::*;

/// One legend row: its text and its series colour, or `None` for a reference line.
pub(super) type LegendEntry = (String, Option<RGBColor>);

/// The legend rows of a chart: one per series in palette order, then one per reference line
/// (`label: value`).
pub(super) fn legend_entries<'a>(
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
pub(super) fn refs_legend(refs: &[(String, f64)]) -> impl Iterator<Item = LegendEntry> + '_ {
    refs.iter().map(|(l, v)| (format!("{l}: {v:.2}"), None))
}

/// Width in pixels of the longest legend text (0 without rows).
pub(super) fn legend_width(entries: &[LegendEntry]) -> u32 {
    entries.iter().map(|(n, _)| text_px(n)).max().unwrap_or(0)
}

/// How a legend row shows its series.
#[derive(Clone, Copy)]
pub(super) enum Swatch {
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
pub(super) fn draw_legend(
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

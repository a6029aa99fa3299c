use super::lines::segments;
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
            (xy.len() == 2 && xy[0].0 == xy[1].0 && (xy[1].1 - xy[0].1) < 30 && xy[1].1 > xy[0].1)
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

//! The report's drawing: line charts (linear or log axes) and stacked horizontal bars as SVG strings,
//! their colors, legend and axis labels.

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

const SIZE: (u32, u32) = (1000, 560);

fn color(i: usize) -> RGBColor {
    const P: [RGBColor; 12] = [
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
        RGBColor(0, 0, 0),
        RGBColor(255, 187, 120),
    ];
    P[i % P.len()]
}

/// A line series: label and (x, y) points.
pub(super) type Line = (String, Vec<(f64, f64)>);

/// Draws lines (with point marks) on x/y axes; `log_x`/`log_y` choose log scales.
pub(super) fn line_chart(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[Line],
    log_x: bool,
    log_y: bool,
) -> Result<String, String> {
    let pts: Vec<(f64, f64)> = lines.iter().flat_map(|l| l.1.iter().copied()).collect();
    let pos = |v: f64, log: bool| if log { v > 0.0 } else { v.is_finite() };
    let xs: Vec<f64> = pts.iter().map(|p| p.0).filter(|&v| pos(v, log_x)).collect();
    let ys: Vec<f64> = pts.iter().map(|p| p.1).filter(|&v| pos(v, log_y)).collect();
    if xs.is_empty() || ys.is_empty() {
        return Err("no points".into());
    }
    let range = |v: &[f64], log: bool| {
        let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        if log {
            (lo / 1.5, hi * 1.5)
        } else {
            let pad = ((hi - lo) * 0.05).max(hi.abs() * 0.05).max(1e-9);
            // Amounts (MiB/s, shares) start at zero, so bars and lines compare by height.
            (if lo >= 0.0 { 0.0 } else { lo - pad }, hi + pad)
        }
    };
    let (x0, x1) = range(&xs, log_x);
    let (y0, y1) = range(&ys, log_y);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let num = |v: &f64| short_num(*v);
        let f = Frame {
            title,
            x_desc,
            y_desc,
            lines,
            x_label: &num,
            legend_at: SeriesLabelPosition::UpperRight,
        };
        match (log_x, log_y) {
            (false, false) => draw_lines(&root, &f, x0..x1, y0..y1),
            (true, false) => draw_lines(&root, &f, (x0..x1).log_scale(), y0..y1),
            (false, true) => draw_lines(&root, &f, x0..x1, (y0..y1).log_scale()),
            (true, true) => draw_lines(&root, &f, (x0..x1).log_scale(), (y0..y1).log_scale()),
        }?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// Draws lines on a log x axis with a tick at each of `ticks` (labelled as byte sizes) and a linear y.
pub(super) fn line_chart_at(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[Line],
    ticks: &[f64],
) -> Result<String, String> {
    let xs: Vec<f64> = ticks.iter().copied().filter(|v| *v > 0.0).collect();
    let hi_y = lines
        .iter()
        .flat_map(|l| l.1.iter().map(|p| p.1))
        .filter(|v| v.is_finite())
        .fold(f64::NAN, f64::max);
    if xs.is_empty() || hi_y.is_nan() {
        return Err("no points".into());
    }
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min) / 1.5;
    let hi = xs.iter().copied().fold(0.0, f64::max) * 1.5;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let f = Frame {
            title,
            x_desc,
            y_desc,
            lines,
            x_label: &|v| bytes_label(*v),
            // Shares grow with the block size: the upper left is where the lines are not.
            legend_at: SeriesLabelPosition::UpperLeft,
        };
        draw_lines(
            &root,
            &f,
            (lo..hi).log_scale().with_key_points(xs),
            0.0..(hi_y * 1.05).max(1e-9),
        )?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// What a line chart shows, whatever its axes' scales.
struct Frame<'a> {
    title: &'a str,
    x_desc: &'a str,
    y_desc: &'a str,
    lines: &'a [Line],
    /// The x axis's tick labels.
    x_label: &'a dyn Fn(&f64) -> String,
    legend_at: SeriesLabelPosition,
}

fn draw_lines<X, Y>(
    root: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    f: &Frame,
    x: X,
    y: Y,
) -> Result<(), String>
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(root)
        .caption(f.title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(x, y)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc(f.x_desc)
        .y_desc(f.y_desc)
        .axis_desc_style(("sans-serif", 16))
        .label_style(("sans-serif", 13))
        .x_label_formatter(f.x_label)
        .y_label_formatter(&|v| short_num(*v))
        .draw()
        .map_err(|e| e.to_string())?;
    for (i, (label, p)) in f.lines.iter().enumerate() {
        let c = color(i);
        chart
            .draw_series(LineSeries::new(p.iter().copied(), c.stroke_width(2)))
            .map_err(|e| e.to_string())?
            .label(label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
        chart
            .draw_series(p.iter().map(|&(a, b)| Circle::new((a, b), 3, c.filled())))
            .map_err(|e| e.to_string())?;
    }
    legend(&mut chart, f.legend_at.clone())
}

/// The legend every chart draws: its series' labels in a framed, half-transparent box at `pos`.
fn legend<'a, DB: DrawingBackend + 'a, CT: plotters::coord::CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    pos: SeriesLabelPosition,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(pos)
        .label_font(("sans-serif", 13))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())
}

/// Horizontal bars: one row per label, each row stacked from `parts` (name, value) in order.
pub(super) fn bar_chart(
    title: &str,
    x_desc: &str,
    rows: &[(String, Vec<f64>)],
    parts: &[&str],
) -> Result<String, String> {
    let max = rows
        .iter()
        .map(|r| r.1.iter().filter(|v| v.is_finite()).sum::<f64>())
        .fold(0.0, f64::max);
    if rows.is_empty() || max <= 0.0 {
        return Err("no bars".into());
    }
    let n = rows.len();
    let h = (140 + 34 * n as u32).max(260);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (SIZE.0, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(20)
            .build_cartesian_2d(0.0..max * 1.05, 0.0..n as f64)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_desc(x_desc)
            .axis_desc_style(("sans-serif", 16))
            .label_style(("sans-serif", 13))
            .x_label_formatter(&|v| short_num(*v))
            .draw()
            .map_err(|e| e.to_string())?;
        for (pi, part) in parts.iter().enumerate() {
            let c = color(pi);
            chart
                .draw_series(rows.iter().enumerate().map(|(i, (_, vals))| {
                    let start: f64 = vals[..pi].iter().filter(|v| v.is_finite()).sum();
                    let v = if vals[pi].is_finite() { vals[pi] } else { 0.0 };
                    let y = (n - 1 - i) as f64;
                    Rectangle::new([(start, y + 0.15), (start + v, y + 0.85)], c.filled())
                }))
                .map_err(|e| e.to_string())?
                .label(*part)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled()));
        }
        // Each row's label, inside the plot at its left.
        chart
            .draw_series(rows.iter().enumerate().map(|(i, (label, _))| {
                Text::new(
                    label.clone(),
                    (max * 0.005, (n - 1 - i) as f64 + 0.5),
                    ("sans-serif", 13).into_font().color(&BLACK),
                )
            }))
            .map_err(|e| e.to_string())?;
        legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

pub(super) fn short_num(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1e9 {
        format!("{}G", trim(v / 1e9))
    } else if a >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if a >= 1e3 {
        format!("{}k", trim(v / 1e3))
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

pub(super) fn bytes_label(v: f64) -> String {
    let b = v as u64;
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{}M", b >> 20)
    } else if b >= 1024 && b.is_multiple_of(1024) {
        format!("{}k", b >> 10)
    } else {
        format!("{b}")
    }
}

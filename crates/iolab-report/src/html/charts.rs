//! The report's drawing, with the plotters crate: figures of one or more panels (small multiples) of
//! lines, points and bars on the axes of `axis.rs`, and horizontal bar charts; a figure's legend sits in
//! a column of its own right of every plotting area, so it never hides data.
//!
//! Plotters draws the canvas, the grid, the axes with their tick labels, and the lines. The elements a
//! reader hovers or a test looks for are written here, each with a class: the title (`chart-title`), each
//! panel's (`panel-title`), each plotting area's frame (`plot-area`), the axis labels (`axis-label`),
//! every data point (`point`) and bar (`bar`) with a tooltip naming its series and values, bar labels
//! (`bar-label`, `bar-value`) and the legend (`legend`, its frame `legend-box`, each `legend-entry` with
//! its whole name as tooltip). Points and bars carry their values (`data-x`, `data-y`; a histogram's bar
//! spans `data-x` to `data-x1`). Tick labels are marked `tick-label` after plotters wrote them (it draws
//! them in two colors kept for the x and y axis).

use super::axis::{Axis, Scale};
use super::markup::esc;
use super::palette::color;
pub(super) use super::palette::Palette;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::fmt::Write;
use std::ops::Range;

const WIDTH: i32 = 1000;
const TITLE_H: i32 = 40;
const FONT: &str = "sans-serif";
/// Pixels per character of 13 px sans-serif text, a little wide so estimates err on the roomy side.
const CHAR_W: f64 = 7.2;
/// The colors plotters draws x and y tick labels in; replaced by `TICK` with a class afterwards.
const X_TICK: RGBColor = RGBColor(0x40, 0x40, 0x41);
const Y_TICK: RGBColor = RGBColor(0x40, 0x40, 0x42);
const TICK: &str = "#404040";

/// The colour of series `i` given a chart's palette indices (`cols`; none: the series' own index).
fn color_of(cols: &[usize], i: usize) -> RGBColor {
    color(cols.get(i).copied().unwrap_or(i))
}

fn hex(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// A linear coordinate with the ticks (bold grid lines, labelled) and light grid lines given: the drawing
/// space of an `Axis` (whose scale maps values into it).
struct Ticked {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
    light: Vec<f64>,
}

impl Ticked {
    /// The drawing space of `a`.
    fn of(a: &Axis) -> Ticked {
        let (lo, hi) = a.span();
        let pos = |v: &[f64]| v.iter().map(|t| a.fwd(*t)).collect::<Vec<f64>>();
        Ticked {
            lo,
            hi,
            ticks: pos(&a.ticks),
            light: pos(&a.minor),
        }
    }
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let span = if self.hi > self.lo {
            self.hi - self.lo
        } else {
            1.0
        };
        (limit.0 as f64 + (v - self.lo) / span * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.light.clone()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

/// What a series draws in a panel.
pub(super) enum Marks {
    /// Points joined in order (a line per series: values along a swept key, a distribution's quantiles).
    Line(Vec<(f64, f64)>),
    /// Bars from x0 to x1, from the bottom of the axis up to y (a histogram's buckets).
    Bars(Vec<(f64, f64, f64)>),
}

/// A series' marks; `series` indexes the figure's legend (and picks the color).
pub(super) struct Mark {
    pub(super) series: usize,
    pub(super) marks: Marks,
}

pub(super) struct Panel {
    /// Empty when the figure has one panel.
    pub(super) title: String,
    pub(super) x: Axis,
    pub(super) y: Axis,
    pub(super) marks: Vec<Mark>,
}

pub(super) struct Figure {
    pub(super) title: String,
    /// Series names; empty for a figure whose panels each hold one series (named by the panel's title).
    pub(super) legend: Vec<String>,
    pub(super) panels: Vec<Panel>,
}

/// A legend's entries, each wrapped to lines that fit its column, and the column's width.
struct Legend {
    /// (color index, name, its lines, whether a bar swatch)
    entries: Vec<(usize, String, Vec<String>, bool)>,
    width: i32,
    height: i32,
}

/// `names` (with each one's color index, and whether it is a bar swatch) as a legend at most 300 px wide.
fn legend_of(names: &[(usize, String, bool)]) -> Legend {
    if names.is_empty() {
        return Legend {
            entries: Vec::new(),
            width: 0,
            height: 0,
        };
    }
    let max_chars = 34;
    let entries: Vec<(usize, String, Vec<String>, bool)> = names
        .iter()
        .map(|(i, n, bar)| (*i, tip(n), wrap(&tip(n), max_chars), *bar))
        .collect();
    let longest = entries
        .iter()
        .flat_map(|e| e.2.iter().map(|l| l.chars().count()))
        .max()
        .unwrap_or(0);
    let lines: usize = entries.iter().map(|e| e.2.len()).sum();
    Legend {
        width: ((longest as f64 * CHAR_W) as i32 + 48).clamp(110, 300),
        height: lines as i32 * 17 + entries.len() as i32 * 4 + 14,
        entries,
    }
}

/// Words of `s` in lines of at most `n` characters (a longer word is cut with an ellipsis).
fn wrap(s: &str, n: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for w in s.split(' ') {
        let w = clip(w, n);
        match lines.last_mut() {
            Some(l) if l.chars().count() + 1 + w.chars().count() <= n => {
                l.push(' ');
                l.push_str(&w);
            }
            _ => lines.push(w),
        }
    }
    lines
}

/// `s` cut to `n` characters, the cut marked with an ellipsis.
fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut c: String = s.chars().take(n.saturating_sub(1)).collect();
        c.push('…');
        c
    }
}

/// The legend at (x, y): a framed column of swatches and names.
fn draw_legend(l: &Legend, x: i32, y: i32, o: &mut String) {
    if l.entries.is_empty() {
        return;
    }
    let _ = write!(
        o,
        "<g class=\"legend\"><rect class=\"legend-box\" x=\"{x}\" y=\"{y}\" width=\"{}\" height=\"{}\" \
         fill=\"white\" stroke=\"#999\"/>",
        l.width - 10,
        l.height
    );
    let mut cy = y + 16;
    for (i, name, lines, bar) in &l.entries {
        let c = hex(color(*i));
        let _ = write!(o, "<g class=\"legend-entry\"><title>{}</title>", esc(name));
        if *bar {
            let _ = write!(
                o,
                "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"10\" fill=\"{c}\"/>",
                x + 8,
                cy - 9
            );
        } else {
            let _ = write!(
                o,
                "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{c}\" stroke-width=\"2\"/>\
                 <circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{c}\"/>",
                x + 6,
                cy - 4,
                x + 26,
                cy - 4,
                x + 16,
                cy - 4
            );
        }
        for (k, line) in lines.iter().enumerate() {
            let _ = write!(
                o,
                "<text x=\"{}\" y=\"{}\" font-family=\"{FONT}\" font-size=\"12\">{}</text>",
                x + 32,
                cy + 17 * k as i32,
                esc(line)
            );
        }
        cy += 17 * lines.len() as i32 + 4;
        o.push_str("</g>");
    }
    o.push_str("</g>");
}

fn text(o: &mut String, class: &str, (x, y): (i32, i32), size: u32, anchor: &str, s: &str) {
    let _ = write!(
        o,
        "<text class=\"{class}\" x=\"{x}\" y=\"{y}\" font-family=\"{FONT}\" font-size=\"{size}\" \
         text-anchor=\"{anchor}\">{}</text>",
        esc(s)
    );
}

/// An axis's label centered at (x, y), in a size that fits `room` pixels (13 px, else down to 10 px,
/// else cut, the whole label then its tooltip); turned a quarter left for a y axis.
fn axis_label(o: &mut String, which: &str, (x, y): (i32, i32), room: i32, s: &str, turn: bool) {
    let turn = if turn {
        format!(" transform=\"rotate(-90 {x} {y})\"")
    } else {
        String::new()
    };
    let class = format!("axis-label {which}");
    fitted(o, &class, (x, y), (room, 13.0), s, &turn);
}

/// Text of `class` centered at (x, y) in `room` pixels: at `size` px, smaller (down to 10 px) where
/// that does not fit, else cut with the whole text as its tooltip; `extra` attributes added.
fn fitted(
    o: &mut String,
    class: &str,
    (x, y): (i32, i32),
    (room, size): (i32, f64),
    s: &str,
    extra: &str,
) {
    let per_px = CHAR_W / 13.0;
    let chars = s.chars().count() as f64;
    let mut size = size;
    while size > 10.0 && chars * size * per_px > room as f64 {
        size -= 1.0;
    }
    let shown = clip(s, (room as f64 / (size * per_px)) as usize);
    let _ = write!(
        o,
        "<text class=\"{class}\" x=\"{x}\" y=\"{y}\" font-family=\"{FONT}\" font-size=\"{size}\" \
         text-anchor=\"middle\"{extra}>{}{}</text>",
        esc(&shown),
        if shown != s {
            format!("<title>{}</title>", esc(&tip(s)))
        } else {
            String::new()
        }
    );
}

/// Plotters' SVG with `overlay` before its end and the tick labels classed.
fn finish(svg: String, overlay: &str) -> String {
    let svg = svg
        .replace(
            &format!("fill=\"{}\"", hex(X_TICK).to_uppercase()),
            &format!("fill=\"{TICK}\" class=\"tick-label tick-x\""),
        )
        .replace(
            &format!("fill=\"{}\"", hex(Y_TICK).to_uppercase()),
            &format!("fill=\"{TICK}\" class=\"tick-label tick-y\""),
        );
    match svg.rfind("</svg>") {
        Some(i) => {
            // Made at its size: a report holds many.
            let mut s = String::with_capacity(svg.len() + overlay.len() + 1);
            s.push_str(&svg[..i]);
            s.push_str(overlay);
            s.push('\n');
            s.push_str(&svg[i..]);
            s
        }
        None => svg,
    }
}

/// Columns of a figure of `n` panels in `width` px: one, two side by side, or as many of about 300 px as fit.
fn columns(n: usize, width: i32) -> usize {
    let most = ((width / 300).max(1)) as usize;
    match n {
        0 | 1 => 1,
        2 | 4 => 2.min(most),
        _ => 3.min(most).min(n),
    }
}

/// Draws a figure: its panels in a grid, the legend right of them.
/// Its series take their colours from the page's `palette`.
pub(super) fn draw(f: &Figure, palette: &mut Palette) -> Result<String, String> {
    if f.panels.is_empty() {
        return Err("no panels".into());
    }
    let tint = palette.colors(&f.legend);
    let names: Vec<(usize, String, bool)> = f
        .legend
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let bar = f.panels.iter().any(|p| {
                p.marks
                    .iter()
                    .any(|m| m.series == i && matches!(m.marks, Marks::Bars(_)))
            });
            (tint.get(i).copied().unwrap_or(i), n.clone(), bar)
        })
        .collect();
    let legend = legend_of(&names);
    let area_w = WIDTH - legend.width;
    let cols = columns(f.panels.len(), area_w);
    let rows = f.panels.len().div_ceil(cols);
    let panel_w = area_w / cols as i32;
    let panel_h = match (f.panels.len(), cols) {
        (1, _) => 440,
        (_, 1 | 2) => 320,
        _ => 270,
    };
    let height = (TITLE_H + rows as i32 * panel_h + 8).max(TITLE_H + legend.height + 20);
    let mut svg = String::new();
    let mut o = String::new();
    text(
        &mut o,
        "chart-title",
        (WIDTH / 2, 26),
        18,
        "middle",
        &f.title,
    );
    {
        let root =
            SVGBackend::with_string(&mut svg, (WIDTH as u32, height as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        for (k, p) in f.panels.iter().enumerate() {
            let (c, r) = ((k % cols) as i32, (k / cols) as i32);
            let cell = (c * panel_w, TITLE_H + r * panel_h, panel_w, panel_h);
            draw_panel(&root, p, cell, (f, &tint), &mut o)?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    draw_legend(&legend, area_w + 4, TITLE_H + 8, &mut o);
    Ok(finish(svg, &o))
}

/// The name of series `i` of a panel, for tooltips.
fn series_name(f: &Figure, p: &Panel, i: usize) -> String {
    tip(f.legend.get(i).unwrap_or(&p.title))
}

/// The most characters of a name a tooltip repeats: a run's label is written whole once, in the page's
/// table; each point of a chart repeats its series' name (64 point values of 4,000 bytes made a page 36
/// times its records).
pub(super) const TIP_MAX: usize = 300;

/// `s` as a tooltip repeats it: at most [`TIP_MAX`] characters.
pub(super) fn tip(s: &str) -> String {
    clip(s, TIP_MAX)
}

/// One panel in `cell` (x, y, width, height): its title, axes, frame, lines, points and bars.
fn draw_panel(
    root: &DrawingArea<SVGBackend, Shift>,
    p: &Panel,
    (x0, y0, w, h): (i32, i32, i32, i32),
    (f, cols): (&Figure, &[usize]),
    o: &mut String,
) -> Result<(), String> {
    let title_h = if p.title.is_empty() { 0 } else { 24 };
    let area = root
        .clone()
        .shrink((x0, y0 + title_h), (w as u32, (h - title_h) as u32));
    let mut chart = ChartBuilder::on(&area)
        .margin(8)
        .margin_right(20)
        .x_label_area_size(46)
        .y_label_area_size(76)
        .build_cartesian_2d(Ticked::of(&p.x), Ticked::of(&p.y))
        .map_err(|e| e.to_string())?;
    let every = label_stride(&p.x, w - 76 - 28);
    // Each tick's place along the axis with its index, sorted: a label's tick is found by a binary search
    // (a scan per label was quadratic in the ticks: a sweep of 80,000 block sizes took 34 s).
    let mut at: Vec<(f64, usize)> =
        p.x.ticks
            .iter()
            .enumerate()
            .map(|(i, v)| (p.x.fwd(*v), i))
            .collect();
    at.sort_by(|a, b| a.0.total_cmp(&b.0));
    let x_label = |t: &f64| {
        let from = at.partition_point(|(x, _)| *x < t - 1e-9);
        let i = at[from..]
            .iter()
            .take_while(|(x, _)| (x - t).abs() < 1e-9)
            .map(|(_, i)| *i)
            .min();
        match i {
            Some(i) if i % every != 0 => String::new(),
            _ => p.x.tick_label(p.x.inv(*t)),
        }
    };
    chart
        .configure_mesh()
        .x_label_formatter(&x_label)
        .y_label_formatter(&|t| p.y.tick_label(p.y.inv(*t)))
        .x_label_style((FONT, 15).into_font().color(&X_TICK))
        .y_label_style((FONT, 15).into_font().color(&Y_TICK))
        .bold_line_style(RGBColor(210, 210, 210))
        .light_line_style(RGBColor(238, 238, 238))
        .axis_style(RGBColor(110, 110, 110))
        .draw()
        .map_err(|e| e.to_string())?;
    let (rx, ry) = chart.plotting_area().get_pixel_range();
    panel_labels(p, (x0, y0, w), (rx, ry), o);
    let drawable = |pts: &[(f64, f64)]| -> Vec<(f64, f64)> {
        pts.iter()
            .copied()
            .filter(|(x, y)| p.x.holds(*x) && p.y.holds(*y))
            .collect()
    };
    for m in &p.marks {
        if let Marks::Line(pts) = &m.marks {
            chart
                .draw_series(LineSeries::new(
                    drawable(pts)
                        .iter()
                        .map(|(x, y)| (p.x.fwd(*x), p.y.fwd(*y))),
                    color_of(cols, m.series).stroke_width(2),
                ))
                .map_err(|e| e.to_string())?;
        }
    }
    let at = |x: f64, y: f64| chart.backend_coord(&(p.x.fwd(x), p.y.fwd(y)));
    draw_marks(p, (f, cols), &at, o);
    Ok(())
}

/// Every how many ticks an x axis `width` pixels wide labels one, so its 15 px labels do not overlap (1:
/// all of them).
fn label_stride(x: &Axis, width: i32) -> usize {
    let need: f64 = x
        .ticks
        .iter()
        .map(|t| x.tick_label(*t).chars().count() as f64 * CHAR_W * 15.0 / 13.0 + 12.0)
        .sum();
    ((need / width.max(1) as f64).ceil() as usize).max(1)
}

/// A panel's frame, title and axis labels, around the plotting area `(rx, ry)` of its cell (x, y, width).
fn panel_labels(
    p: &Panel,
    (x0, y0, w): (i32, i32, i32),
    (rx, ry): (Range<i32>, Range<i32>),
    o: &mut String,
) {
    let _ = write!(
        o,
        "<rect class=\"plot-area\" data-kind=\"xy\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" \
         fill=\"none\" stroke=\"#bbb\"/>",
        rx.start,
        ry.start,
        rx.end - rx.start,
        ry.end - ry.start
    );
    if !p.title.is_empty() {
        // Centered over the plotting area where it fits beside the cell's edges, else over the cell.
        let cx = ((rx.start + rx.end) / 2).clamp(x0 + w / 2 - 40, x0 + w / 2 + 40);
        let room = 2 * (cx - x0).min(x0 + w - cx) - 8;
        let (cx, room) = if p.title.chars().count() as f64 * CHAR_W * 14.0 / 13.0 <= room as f64 {
            (cx, room)
        } else {
            (x0 + w / 2, w - 8)
        };
        fitted(o, "panel-title", (cx, y0 + 17), (room, 14.0), &p.title, "");
    }
    let mid = (rx.start + rx.end) / 2;
    axis_label(
        o,
        "x-label",
        (mid, ry.end + 40),
        (rx.end - rx.start) + 60,
        &p.x.title,
        false,
    );
    let (lx, ly) = (x0 + 16, (ry.start + ry.end) / 2);
    axis_label(
        o,
        "y-label",
        (lx, ly),
        ry.end - ry.start + 30,
        &p.y.title,
        true,
    );
}

/// A panel's points and bars, each with its tooltip; `at` maps values to the canvas.
fn draw_marks(
    p: &Panel,
    (f, cols): (&Figure, &[usize]),
    at: &dyn Fn(f64, f64) -> (i32, i32),
    o: &mut String,
) {
    for m in &p.marks {
        let c = color_of(cols, m.series);
        let name = series_name(f, p, m.series);
        match &m.marks {
            Marks::Line(pts) => {
                for &(x, y) in pts.iter().filter(|(x, y)| p.x.holds(*x) && p.y.holds(*y)) {
                    let (cx, cy) = at(x, y);
                    let _ = write!(
                        o,
                        "<circle class=\"point\" cx=\"{cx}\" cy=\"{cy}\" r=\"3.5\" fill=\"{}\" data-x=\"{x}\" data-y=\"{y}\">\
                         <title>{}: {}, {}</title></circle>",
                        hex(c),
                        esc(&name),
                        esc(&p.x.value_text(x)),
                        esc(&p.y.value_text(y))
                    );
                }
            }
            Marks::Bars(bars) => {
                for &(a, b, y) in bars {
                    if !(p.x.holds(a) && p.x.holds(b) && p.y.holds(y)) {
                        continue;
                    }
                    let ((l, t), (r, bot)) = (at(a, y), at(b, p.y.lo));
                    let _ = write!(
                        o,
                        "<rect class=\"bar\" x=\"{}\" y=\"{t}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"white\" stroke-width=\"0.5\" \
                         data-x=\"{a}\" data-x1=\"{b}\" data-y=\"{y}\"><title>{}: {} to {}: {}</title></rect>",
                        l.min(r),
                        (r - l).abs().max(1),
                        (bot - t).max(0),
                        hex(c),
                        esc(&name),
                        esc(&p.x.value_text(a)),
                        esc(&p.x.value_text(b)),
                        esc(&p.y.value_text(y))
                    );
                }
            }
        }
    }
}

/// A row of a horizontal bar chart: its label and a value per part.
pub(super) struct BarRow {
    pub(super) label: String,
    pub(super) values: Vec<f64>,
}

/// Rows under a heading (an empty title: no heading).
pub(super) struct BarSection {
    pub(super) title: String,
    pub(super) rows: Vec<BarRow>,
}

/// Horizontal bars: `stacked` parts end to end in one bar per row, or side by side (one bar per part, its
/// value written after it).
pub(super) struct BarChart {
    pub(super) title: String,
    /// The value axis (linear, from 0).
    pub(super) axis: Axis,
    /// The parts' names: the legend (none for a single part, which the axis names).
    pub(super) parts: Vec<String>,
    pub(super) stacked: bool,
    pub(super) sections: Vec<BarSection>,
}

/// Pixel height of `row` of `b`: side by side, a slot for each part the row has a value of (a run has one
/// of several series: one slot, not a slot for each series).
fn row_h(b: &BarChart, row: &BarRow) -> i32 {
    if b.stacked {
        24
    } else {
        8 + 14 * row.values.iter().filter(|v| v.is_finite()).count().max(1) as i32
    }
}

/// A bar chart's legend, the width of its row labels, the height of its rows and of the whole chart.
fn bar_layout(b: &BarChart, cols: &[usize]) -> (Legend, i32, i32, i32) {
    let names: Vec<(usize, String, bool)> = if b.parts.len() > 1 {
        b.parts
            .iter()
            .enumerate()
            .map(|(i, n)| (cols.get(i).copied().unwrap_or(i), n.clone(), true))
            .collect()
    } else {
        Vec::new()
    };
    let legend = legend_of(&names);
    let longest = b
        .sections
        .iter()
        .flat_map(|s| s.rows.iter().map(|r| r.label.chars().count()))
        .max()
        .unwrap_or(0);
    let label_w = ((longest as f64 * CHAR_W) as i32 + 16).clamp(80, 340);
    let heads = b.sections.iter().filter(|s| !s.title.is_empty()).count() as i32;
    let rows: i32 = b
        .sections
        .iter()
        .flat_map(|s| s.rows.iter().map(|r| row_h(b, r)))
        .sum();
    let body = heads * 26 + rows;
    let height = (TITLE_H + body + 62).max(TITLE_H + legend.height + 20);
    (legend, label_w, body, height)
}

/// Draws a horizontal bar chart: row labels left of the plotting area, the legend right of it; its parts
/// in the palette's order (parts that are the same in every chart: read and write, a run's layers).
pub(super) fn bar_chart(b: &BarChart) -> Result<String, String> {
    bars(b, &[])
}

/// A bar chart whose parts are series (methods), coloured as the page's `palette` has them.
pub(super) fn series_bar_chart(b: &BarChart, palette: &mut Palette) -> Result<String, String> {
    bars(b, &palette.colors(&b.parts))
}

fn bars(b: &BarChart, cols: &[usize]) -> Result<String, String> {
    let rows: usize = b.sections.iter().map(|s| s.rows.len()).sum();
    if rows == 0 {
        return Err("no bars".into());
    }
    let (legend, label_w, body, height) = bar_layout(b, cols);
    let mut svg = String::new();
    let mut o = String::new();
    text(
        &mut o,
        "chart-title",
        (WIDTH / 2, 26),
        18,
        "middle",
        &b.title,
    );
    {
        let root =
            SVGBackend::with_string(&mut svg, (WIDTH as u32, height as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let right = if b.stacked { 20 } else { 90 };
        let plot_w = WIDTH - legend.width - label_w;
        let area = root.clone().shrink(
            (label_w, TITLE_H),
            (plot_w as u32, (height - TITLE_H) as u32),
        );
        let rows = Ticked {
            lo: 0.0,
            hi: body as f64,
            ticks: Vec::new(),
            light: Vec::new(),
        };
        let mut chart = ChartBuilder::on(&area)
            .margin_top(4)
            .margin_right(right)
            .x_label_area_size(50)
            .build_cartesian_2d(Ticked::of(&b.axis), rows)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_label_formatter(&|t| b.axis.tick_label(b.axis.inv(*t)))
            .x_label_style((FONT, 15).into_font().color(&X_TICK))
            .bold_line_style(RGBColor(215, 215, 215))
            .axis_style(RGBColor(110, 110, 110))
            .draw()
            .map_err(|e| e.to_string())?;
        let (rx, ry) = chart.plotting_area().get_pixel_range();
        let _ = write!(
            o,
            "<rect class=\"plot-area\" data-kind=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" \
             fill=\"none\" stroke=\"#bbb\"/>",
            if b.stacked { "stacked-bars" } else { "bars" },
            rx.start,
            ry.start,
            rx.end - rx.start,
            ry.end - ry.start
        );
        let mid = (rx.start + rx.end) / 2;
        axis_label(
            &mut o,
            "x-label",
            (mid, ry.end + 42),
            rx.end - rx.start,
            &b.axis.title,
            false,
        );
        let at = |v: f64, off: i32| chart.backend_coord(&(b.axis.fwd(v), (body - off) as f64));
        draw_bar_rows((b, cols), label_w, &at, &mut o);
        root.present().map_err(|e| e.to_string())?;
    }
    draw_legend(&legend, WIDTH - legend.width + 4, TITLE_H + 8, &mut o);
    Ok(finish(svg, &o))
}

/// The rows' bars, labels and values; `at(value, pixels from the top of the bars)` maps to the canvas.
fn draw_bar_rows(
    (b, cols): (&BarChart, &[usize]),
    label_w: i32,
    at: &dyn Fn(f64, i32) -> (i32, i32),
    o: &mut String,
) {
    let mut off = 0;
    let fit = ((label_w - 12) as f64 / CHAR_W) as usize;
    for s in &b.sections {
        if !s.title.is_empty() {
            let (_, y) = at(0.0, off + 18);
            let _ = write!(
                o,
                "<text class=\"section-title\" x=\"8\" y=\"{y}\" font-family=\"{FONT}\" font-size=\"13\" \
                 font-weight=\"bold\">{}</text>",
                esc(&s.title)
            );
            off += 26;
        }
        for row in &s.rows {
            let h = row_h(b, row);
            // Side by side: the row's values in consecutive slots, each in its part's colour.
            let mut slot = 0;
            let (_, mid) = at(0.0, off + h / 2);
            let _ = write!(
                o,
                "<text class=\"bar-label\" x=\"{}\" y=\"{}\" font-family=\"{FONT}\" font-size=\"12\" \
                 text-anchor=\"end\">{}<title>{}</title></text>",
                label_w - 6,
                mid + 4,
                esc(&clip(&row.label, fit)),
                esc(&tip(&row.label))
            );
            let mut start = 0.0;
            for (i, v) in row.values.iter().enumerate() {
                if !v.is_finite() {
                    continue;
                }
                // Side-by-side bars start at the axis's floor: zero, or a log axis's low end.
                let floor = if b.axis.scale == Scale::Log {
                    b.axis.lo
                } else {
                    0.0
                };
                let (top, bottom, a) = if b.stacked {
                    (off + 4, off + h - 4, start)
                } else {
                    slot += 1;
                    (
                        off + 4 + 14 * (slot - 1),
                        off + 4 + 14 * (slot - 1) + 12,
                        floor,
                    )
                };
                let end = if b.stacked { a + v } else { *v };
                let ((l, t), (r, bt)) = (at(a, top), at(end, bottom));
                let part = b.parts.get(i).map(|p| format!(" {p}")).unwrap_or_default();
                let _ = write!(
                    o,
                    "<rect class=\"bar\" x=\"{l}\" y=\"{t}\" width=\"{}\" height=\"{}\" fill=\"{}\" data-x=\"{v}\">\
                     <title>{}{}: {}</title></rect>",
                    (r - l).max(0),
                    bt - t,
                    hex(color_of(cols, i)),
                    esc(&tip(&row.label)),
                    esc(&part),
                    esc(&b.axis.value_text(*v))
                );
                if !b.stacked {
                    let _ = write!(
                        o,
                        "<text class=\"bar-value\" x=\"{}\" y=\"{}\" font-family=\"{FONT}\" font-size=\"11\">{}</text>",
                        r + 4,
                        bt - 2,
                        esc(&b.axis.value_text(*v))
                    );
                }
                start += v;
            }
            off += h;
        }
    }
}

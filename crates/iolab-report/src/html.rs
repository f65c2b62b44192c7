//! `iolab report`: one self-contained HTML file (inline SVG drawn with the plotters crate, no scripts, no
//! network) from result records, with as many of these charts as the data allows:
//!
//! - throughput vs block size (log axis), one line per workload that ran at two or more sizes;
//! - latency percentiles (p50, p90, p99, p99.9) per run, and the latency CDF;
//! - time between successive ops (the seed thesis's "time between writes") as a histogram;
//! - the CPU split, user and system shares of user + system time per run (the thesis's Figure 21);
//! - syscalls per op (iolab's own count);
//! - io_uring batch sizes (requests per io_uring_enter);
//! - open-to-close times per run of the decimal-lines workload;
//!
//! and a table of every record, the findings of each run, and each chart's spec (the keys all its runs
//! share; the legend names what differs).

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use serde_json::Value;
use std::fmt::Write;

/// Series one chart shows at most (the rest are named in its caption, and all are in the table).
const MAX_SERIES: usize = 12;
const SIZE: (u32, u32) = (1000, 560);

pub struct Chart {
    /// File-name stem for `--svg`.
    pub name: String,
    pub title: String,
    /// What the chart shows: spec shared by its runs, what was left out.
    pub caption: String,
    pub svg: String,
}

pub struct Report {
    pub html: String,
    pub charts: Vec<Chart>,
}

/// One record that has a result: its label and the result.
struct Run<'a> {
    label: String,
    r: &'a Value,
}

use iolab_core::series::num;

fn s_of(v: &Value) -> String {
    iolab_core::series::text(Some(v))
}

/// A `[[x, count], ...]` array as (x, share of all counts); None when it holds no counts.
fn shares(a: &Value) -> Option<Vec<(f64, f64)>> {
    let a = a.as_array()?;
    let total: f64 = a.iter().filter_map(|p| p.get(1)?.as_f64()).sum();
    (total > 0.0).then(|| {
        a.iter()
            .filter_map(|p| Some((p.get(0)?.as_f64()?, p.get(1)?.as_f64()? / total)))
            .collect()
    })
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn label_of(rec: &Value, r: &Value) -> String {
    let mut p = iolab_core::series::record_point(rec);
    // Suites mark --quick points; the report's title of each run need not repeat it.
    p.retain(|(k, _)| k != "quick");
    // The step first (records of older versions hold their keys sorted).
    p.sort_by_key(|(k, _)| k != "step");
    if p.is_empty() {
        iolab_core::series::workload_label(r)
    } else {
        p.iter()
            .map(|(k, v)| {
                if k == "step" {
                    v.clone()
                } else {
                    format!("{k}={v}")
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// "key=value" for the spec keys every run of a chart shares.
fn shared_spec(runs: &[&Run]) -> String {
    let keys = [
        "method", "op", "pattern", "bs", "threads", "qd", "batch", "direct", "target", "lines",
    ];
    let mut out = Vec::new();
    for k in keys {
        let vals: Vec<String> = runs
            .iter()
            .map(|x| {
                x.r.get("spec")
                    .and_then(|s| s.get(k))
                    .map(s_of)
                    .unwrap_or_default()
            })
            .collect();
        if let Some(first) = vals.first() {
            if !first.is_empty() && vals.iter().all(|v| v == first) {
                out.push(format!("{k}={first}"));
            }
        }
    }
    if out.is_empty() {
        "no spec key is shared by all runs; the legend names each".into()
    } else {
        out.join(" ")
    }
}

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
type Line = (String, Vec<(f64, f64)>);

/// Draws lines (with point marks) on x/y axes; `log_x`/`log_y` choose log scales.
fn line_chart(
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
        match (log_x, log_y) {
            (false, false) => draw_lines(&root, title, x_desc, y_desc, lines, x0..x1, y0..y1),
            (true, false) => draw_lines(
                &root,
                title,
                x_desc,
                y_desc,
                lines,
                (x0..x1).log_scale(),
                y0..y1,
            ),
            (false, true) => draw_lines(
                &root,
                title,
                x_desc,
                y_desc,
                lines,
                x0..x1,
                (y0..y1).log_scale(),
            ),
            (true, true) => draw_lines(
                &root,
                title,
                x_desc,
                y_desc,
                lines,
                (x0..x1).log_scale(),
                (y0..y1).log_scale(),
            ),
        }?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

fn draw_lines<X, Y>(
    root: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[Line],
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
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(x, y)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .axis_desc_style(("sans-serif", 16))
        .label_style(("sans-serif", 13))
        .x_label_formatter(&|v| short_num(*v))
        .y_label_formatter(&|v| short_num(*v))
        .draw()
        .map_err(|e| e.to_string())?;
    for (i, (label, p)) in lines.iter().enumerate() {
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
    legend(&mut chart, SeriesLabelPosition::UpperRight)
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
fn bar_chart(
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

fn short_num(v: f64) -> String {
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

fn bytes_label(v: f64) -> String {
    let b = v as u64;
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{}M", b >> 20)
    } else if b >= 1024 && b.is_multiple_of(1024) {
        format!("{}k", b >> 10)
    } else {
        format!("{b}")
    }
}

/// Keeps at most MAX_SERIES; says in `note` how many were left out.
fn cap<T>(mut v: Vec<T>, note: &mut String) -> Vec<T> {
    if v.len() > MAX_SERIES {
        *note = format!(
            " The first {MAX_SERIES} of {} runs are drawn; every run is in the table.",
            v.len()
        );
        v.truncate(MAX_SERIES);
    }
    v
}

pub fn build(recs: &[Value], sources: &[String]) -> Report {
    let runs: Vec<Run> = recs
        .iter()
        .filter_map(|rec| {
            rec.get("result").map(|r| Run {
                label: label_of(rec, r),
                r,
            })
        })
        .collect();
    let io_runs: Vec<&Run> = runs
        .iter()
        .filter(|x| x.r.get("workload").is_none() && x.r.get("latency").is_some())
        .collect();
    let mut charts = Vec::new();
    let mut add = |name: &str, title: &str, caption: String, svg: Result<String, String>| {
        if let Ok(svg) = svg {
            charts.push(Chart {
                name: name.into(),
                title: title.into(),
                caption,
                svg,
            });
        }
    };

    // Throughput vs block size: one line per workload (the label without its bs) with 2+ sizes.
    {
        let mut groups: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
        for x in &io_runs {
            let Some(bs) = num(x.r, &["spec", "bs"]) else {
                continue;
            };
            let Some(mib) = num(x.r, &["mib_s"]).filter(|v| *v > 0.0) else {
                continue;
            };
            let key = x
                .label
                .split(' ')
                .filter(|w| !w.starts_with("bs="))
                .collect::<Vec<_>>()
                .join(" ");
            match groups.iter_mut().find(|g| g.0 == key) {
                Some(g) => g.1.push((bs, mib)),
                None => groups.push((key, vec![(bs, mib)])),
            }
        }
        groups.retain(|g| {
            let mut b: Vec<u64> = g.1.iter().map(|p| p.0 as u64).collect();
            b.sort();
            b.dedup();
            b.len() >= 2
        });
        for g in &mut groups {
            g.1.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        if !groups.is_empty() {
            let mut note = String::new();
            let groups = cap(groups, &mut note);
            let members: Vec<&Run> = io_runs
                .iter()
                .copied()
                .filter(|x| num(x.r, &["spec", "bs"]).is_some())
                .collect();
            add(
                "throughput-vs-bs",
                "Throughput vs block size",
                format!(
                    "MiB/s (2^20 bytes per second of the timed loop's wall time) against bytes per op, log axis. \
                     Shared spec: {}. Sizes on the axis: {}.{note}",
                    shared_spec(&members),
                    {
                        let mut b: Vec<u64> = groups.iter().flat_map(|g| g.1.iter().map(|p| p.0 as u64)).collect();
                        b.sort();
                        b.dedup();
                        b.iter().map(|v| bytes_label(*v as f64)).collect::<Vec<_>>().join(", ")
                    }
                ),
                line_chart(
                    "Throughput vs block size",
                    "block size (bytes per op, log scale)",
                    "MiB/s",
                    &groups,
                    true,
                    false,
                ),
            );
        }
    }

    // Latency percentiles and CDF.
    if !io_runs.is_empty() {
        let mut note = String::new();
        let shown = cap(io_runs.clone(), &mut note);
        let lines: Vec<Line> = shown
            .iter()
            .map(|x| {
                (
                    x.label.clone(),
                    [
                        ("p50_ns", 50.0),
                        ("p90_ns", 90.0),
                        ("p99_ns", 99.0),
                        ("p999_ns", 99.9),
                    ]
                    .iter()
                    .filter_map(|(k, q)| num(x.r, &["latency", k]).map(|v| (*q, v)))
                    .collect(),
                )
            })
            .collect();
        add(
            "latency-percentiles",
            "Latency percentiles per run",
            format!(
                "Per-op latency in ns (log axis) at the 50th, 90th, 99th and 99.9th percentile. Synchronous \
                 methods: completion to completion; asynchronous: queued to completion seen. Shared spec: {}.{note}",
                shared_spec(&shown)
            ),
            line_chart(
                "Latency percentiles per run",
                "percentile",
                "latency (ns, log scale)",
                &lines,
                false,
                true,
            ),
        );
        let cdf: Vec<Line> = shown
            .iter()
            .map(|x| {
                (
                    x.label.clone(),
                    x.r["latency"]["cdf"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(|p| Some((p.get(1)?.as_f64()?, p.get(0)?.as_f64()?)))
                                .collect()
                        })
                        .unwrap_or_default(),
                )
            })
            .collect();
        add(
            "latency-cdf",
            "Latency CDF",
            format!(
                "Fraction of ops (y) completing within a latency (x, ns, log axis), from 21 quantiles per run. \
                 Shared spec: {}.{note}",
                shared_spec(&shown)
            ),
            line_chart("Latency CDF", "latency (ns, log scale)", "fraction of ops", &cdf, true, false),
        );
        let gaps: Vec<Line> = shown
            .iter()
            .filter_map(|x| Some((x.label.clone(), shares(&x.r["gap"]["buckets"])?)))
            .collect();
        if !gaps.is_empty() {
            add(
                "time-between-ops",
                "Time between ops (histogram)",
                format!(
                    "Share of ops (y) by the time from one op's start to the next op's start on the same \
                     thread (x: upper bound of a half-octave bucket, ns, log axis); the seed thesis's \"time \
                     between writes\". Shared spec: {}.{note}",
                    shared_spec(&shown)
                ),
                line_chart(
                    "Time between ops (histogram)",
                    "time between successive ops (ns, log scale)",
                    "share of ops",
                    &gaps,
                    true,
                    false,
                ),
            );
        }
        // CPU split, normalized (the thesis's Figure 21).
        // Bars grow the chart downwards, so every run gets one.
        let rows: Vec<(String, Vec<f64>)> = io_runs
            .iter()
            .filter_map(|x| {
                let u = num(x.r, &["cpu", "process", "user_s"])?;
                let s = num(x.r, &["cpu", "process", "sys_s"])?;
                (u + s > 0.0).then(|| {
                    (
                        x.label.clone(),
                        vec![u / (u + s) * 100.0, s / (u + s) * 100.0],
                    )
                })
            })
            .collect();
        add(
            "cpu-split",
            "CPU: user vs system share",
            format!(
                "User and system shares (%) of the process's user + system CPU time during the timed loop \
                 (getrusage, all threads including io_uring's SQPOLL and io-wq helpers), normalized like the seed \
                 thesis's Figure 21. Shared spec: {}.",
                shared_spec(&io_runs)
            ),
            bar_chart("CPU: user vs system share", "% of user + system CPU time", &rows, &["user", "system"]),
        );
        let rows: Vec<(String, Vec<f64>)> = io_runs
            .iter()
            .filter_map(|x| {
                Some((
                    x.label.clone(),
                    vec![num(x.r, &["syscalls", "method_per_op"])?],
                ))
            })
            .collect();
        add(
            "syscalls-per-op",
            "System calls per op",
            format!(
                "The method's own system calls per op, counted by iolab (io_uring: io_uring_enter calls; mmap: 0). \
                 Shared spec: {}.",
                shared_spec(&io_runs)
            ),
            bar_chart("System calls per op", "calls per op", &rows, &["syscalls/op"]),
        );
    }

    // io_uring batch sizes.
    {
        let ur: Vec<&Run> = io_runs
            .iter()
            .copied()
            .filter(|x| x.r.get("uring").is_some_and(|u| !u.is_null()))
            .collect();
        if !ur.is_empty() {
            let mut note = String::new();
            let ur = cap(ur, &mut note);
            let lines: Vec<Line> = ur
                .iter()
                .filter_map(|x| {
                    // Calls that carried no request (waits) are in the total, not drawn at x = 0.
                    let mut p = shares(&x.r["uring"]["batch_histogram"])?;
                    p.retain(|q| q.0 > 0.0);
                    Some((x.label.clone(), p))
                })
                .collect();
            add(
                "uring-batches",
                "io_uring batch sizes",
                format!(
                    "Share of io_uring_enter calls (y) by the requests each submitted (x, log axis), counted by \
                     iolab at every call. Shared spec: {}.{note}",
                    shared_spec(&ur)
                ),
                line_chart(
                    "io_uring batch sizes",
                    "requests per io_uring_enter (log scale)",
                    "share of calls",
                    &lines,
                    true,
                    false,
                ),
            );
        }
    }

    // Decimal lines: open-to-close time of every run, per method.
    {
        let mut groups: Vec<Line> = Vec::new();
        for x in runs
            .iter()
            .filter(|x| x.r["workload"].as_str() == Some("decimal-lines"))
        {
            let m = s_of(&x.r["spec"]["method"]);
            let ms = num(x.r, &["wall_s"]).unwrap_or(f64::NAN) * 1e3;
            match groups.iter_mut().find(|g| g.0 == m) {
                Some(g) => {
                    let k = g.1.len() as f64 + 1.0;
                    g.1.push((k, ms));
                }
                None => groups.push((m, vec![(1.0, ms)])),
            }
        }
        if !groups.is_empty() {
            add(
                "lines-runs",
                "Decimal lines: open to close per run",
                format!(
                    "Milliseconds from open to close including fsync (y, log axis) of each run (x) writing the \
                     numbers 0..{} as decimal lines to a fresh file, per method; every file was read back and checked.",
                    runs.iter()
                        .find_map(|x| num(x.r, &["spec", "lines"]))
                        .map(|n| (n as u64).saturating_sub(1).to_string())
                        .unwrap_or_else(|| "N-1".into())
                ),
                line_chart(
                    "Decimal lines: open to close per run",
                    "run",
                    "ms (open to close incl. fsync, log scale)",
                    &groups,
                    false,
                    true,
                ),
            );
        }
    }

    let html = page(recs, &runs, &charts, sources);
    Report { html, charts }
}

fn page(recs: &[Value], runs: &[Run], charts: &[Chart], sources: &[String]) -> String {
    let mut o = String::new();
    o.push_str(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>iolab report</title>\n<style>\
         body{font-family:sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse;font-size:13px}\
         td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}td:first-child,th:first-child{text-align:left}\
         figure{margin:2em 0}figcaption{font-size:13px;color:#333;max-width:1000px}.err{color:#a00}</style></head><body>\n",
    );
    let _ = writeln!(o, "<h1>iolab report</h1>");
    let _ = writeln!(
        o,
        "<p>From {} ({} records, {} with results). Units: MiB = 2<sup>20</sup> bytes; times are of the timed loop \
         (what each run timed and left out is in its JSON: <code>timed</code>, <code>excluded</code>).</p>",
        sources.iter().map(|s| format!("<code>{}</code>", esc(s))).collect::<Vec<_>>().join(", "),
        recs.len(),
        runs.len()
    );
    if let Some(h) = runs.iter().find_map(|x| x.r.get("host")) {
        let _ = writeln!(
            o,
            "<p>Host: kernel {}, {}, {} CPUs online.</p>",
            esc(&s_of(&h["kernel_release"])),
            esc(&s_of(&h["cpu_model"])),
            esc(&s_of(&h["cpus_online"]))
        );
    }
    o.push_str("<h2>Runs</h2>\n<table><tr><th>run</th><th>MiB/s</th><th>ops/s</th><th>ns/op</th><th>p50 ns</th><th>p99 ns</th><th>user s</th><th>sys s</th><th>calls/op</th><th>wall s</th></tr>\n");
    for rec in recs {
        let r = rec.get("result");
        let label = match r {
            Some(r) => label_of(rec, r),
            None => label_of(rec, &Value::Null),
        };
        match r {
            Some(r) => {
                let f = |p: &[&str], d: usize| {
                    num(r, p)
                        .map(|v| format!("{v:.d$}"))
                        .unwrap_or_else(|| "-".into())
                };
                let _ = writeln!(
                    o,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    esc(&label),
                    f(&["mib_s"], 1),
                    f(&["iops"], 0),
                    f(&["ns_per_op"], 1),
                    f(&["latency", "p50_ns"], 0),
                    f(&["latency", "p99_ns"], 0),
                    f(&["cpu", "process", "user_s"], 3),
                    f(&["cpu", "process", "sys_s"], 3),
                    f(&["syscalls", "method_per_op"], 3),
                    f(&["wall_s"], 4),
                );
            }
            None => {
                let _ = writeln!(
                    o,
                    "<tr><td>{}</td><td colspan=\"9\" class=\"err\">not run: {}</td></tr>",
                    esc(&label),
                    esc(rec.get("error").and_then(|e| e.as_str()).unwrap_or(""))
                );
            }
        }
    }
    o.push_str("</table>\n<h2>Charts</h2>\n");
    if charts.is_empty() {
        o.push_str("<p>The records hold nothing to chart.</p>\n");
    }
    for c in charts {
        let svg = c.svg.trim_start();
        let svg = if svg.starts_with("<?xml") {
            svg.split_once("?>").map(|x| x.1).unwrap_or(svg)
        } else {
            svg
        };
        let _ = writeln!(
            o,
            "<figure id=\"{}\">{}<figcaption><b>{}</b>. {}</figcaption></figure>",
            esc(&c.name),
            svg,
            esc(&c.title),
            esc(&c.caption)
        );
    }
    let mut findings = String::new();
    for x in runs {
        if let Some(fs) = x.r.get("findings").and_then(|f| f.as_array()) {
            if fs.is_empty() {
                continue;
            }
            let _ = writeln!(findings, "<h3>{}</h3><ul>", esc(&x.label));
            for f in fs {
                let _ = writeln!(findings, "<li>{}</li>", esc(&s_of(&f["text"])));
            }
            findings.push_str("</ul>\n");
        }
    }
    if !findings.is_empty() {
        o.push_str("<h2>Findings</h2>\n");
        o.push_str(&findings);
    }
    o.push_str("</body></html>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(method: &str, bs: u64, mib: f64) -> Value {
        serde_json::json!({
            "point": {"method": method, "bs": bs.to_string()},
            "result": {
                "spec": {"method": method, "bs": bs, "op": "write"},
                "mib_s": mib, "iops": mib * 1048576.0 / bs as f64, "ns_per_op": 100.0, "wall_s": 1.0,
                "latency": {"p50_ns": 100.0, "p90_ns": 150.0, "p99_ns": 300.0, "p999_ns": 900.0,
                            "cdf": [[0.0, 50.0], [0.5, 100.0], [1.0, 1000.0]]},
                "gap": {"buckets": [[64.0, 10], [128.0, 30]]},
                "cpu": {"process": {"user_s": 0.2, "sys_s": 0.8}},
                "syscalls": {"method_per_op": 1.0},
                "findings": [{"rule": "x", "text": "a <finding>"}]
            }
        })
    }

    #[test]
    fn axis_numbers_are_short() {
        assert_eq!(short_num(1_500_000_000.0), "1.5G");
        assert_eq!(short_num(2_000_000.0), "2M");
        assert_eq!(short_num(4096.0), "4.1k");
        assert_eq!(short_num(0.25), "0.25");
        assert_eq!(bytes_label(524288.0), "512k");
        assert_eq!(bytes_label(512.0), "512");
    }

    #[test]
    fn charts_are_xml_with_one_series_per_workload() {
        let recs = vec![
            fake("sync", 512, 10.0),
            fake("sync", 4096, 80.0),
            fake("mmap", 512, 20.0),
            fake("mmap", 4096, 160.0),
            serde_json::json!({"point": {"method": "aio", "bs": "512"}, "error": "not run: x", "exit_code": 2}),
        ];
        let rep = build(&recs, &["x.jsonl".into()]);
        let names: Vec<&str> = rep.charts.iter().map(|c| c.name.as_str()).collect();
        for want in [
            "throughput-vs-bs",
            "latency-percentiles",
            "latency-cdf",
            "time-between-ops",
            "cpu-split",
            "syscalls-per-op",
        ] {
            assert!(names.contains(&want), "{want} missing from {names:?}");
        }
        for c in &rep.charts {
            let doc =
                roxmltree::Document::parse(&c.svg).unwrap_or_else(|e| panic!("{}: {e}", c.name));
            let texts: Vec<String> = doc
                .descendants()
                .filter(|n| n.has_tag_name("text"))
                .filter_map(|n| n.text().map(|t| t.trim().to_string()))
                .collect();
            assert!(texts.iter().any(|t| t == &c.title), "{}: title", c.name);
        }
        let tp = rep
            .charts
            .iter()
            .find(|c| c.name == "throughput-vs-bs")
            .unwrap();
        let doc = roxmltree::Document::parse(&tp.svg).unwrap();
        let texts: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text().map(str::trim))
            .collect();
        assert!(
            texts.contains(&"method=sync") && texts.contains(&"method=mmap"),
            "{texts:?}"
        );
        assert!(rep.html.contains("not run: not run: x") && rep.html.contains("a &lt;finding&gt;"));
        assert!(
            !rep.html.contains("<script") && !rep.html.contains("http://")
                || rep.html.contains("xmlns=\"http://www.w3.org/2000/svg\"")
        );
    }
}

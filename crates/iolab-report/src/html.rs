//! `iolab report`: one self-contained HTML file (inline SVG drawn with the plotters crate, no scripts, no
//! network) from result records, with as many of these charts as the data allows:
//!
//! - throughput vs block size (log axis), one line per workload that ran at two or more sizes;
//! - latency percentiles (p50, p90, p99, p99.9) per run, and the latency CDF;
//! - time between successive ops (the seed thesis's "time between writes") as a histogram;
//! - the CPU split, user and system shares of user + system time per run (the thesis's Figure 21);
//! - syscalls per op (iolab's own count);
//! - io_uring batch sizes (requests per io_uring_enter);
//! - times per run of the decimal-lines workload;
//! - the share of profile samples copying to/from user space vs block size (the storage paper's
//!   Figure 4), of runs profiled at two or more sizes;
//!
//! and a table of every record, the findings of each run, and each chart's spec (the keys all its runs
//! share; the legend names what differs). Each profiled run (`--profile`) gets a section of its own: a
//! flame graph of its stacks (static SVG), its groups' shares and its top functions.
//!
//! One function below draws each chart kind; `html/charts.rs` draws lines and bars, `html/flame.rs`
//! the profiles, `html/page.rs` lays out the page, and every value is read from the records through
//! `crate::fields`.

mod charts;
mod flame;
mod page;

use crate::fields;
use charts::{bar_chart, bytes_label, line_chart, Line};
use serde_json::Value;

/// Series one chart shows at most (the rest are named in its caption, and all are in the table).
const MAX_SERIES: usize = 12;

pub struct Chart {
    /// File-name stem for `--svg`.
    pub name: String,
    pub title: String,
    /// What the chart shows: spec shared by its runs, what was left out.
    pub caption: String,
    pub svg: String,
    /// The profile section of the run it belongs to (an index into the report's runs), or None: a chart
    /// of the charts section.
    pub run: Option<usize>,
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
    let mut out = Vec::new();
    for f in fields::SHARED_SPEC {
        let vals: Vec<String> = runs.iter().map(|x| f.text(x.r)).collect();
        if let Some(first) = vals.first() {
            if !first.is_empty() && vals.iter().all(|v| v == first) {
                out.push(format!("{}={first}", f.key()));
            }
        }
    }
    if out.is_empty() {
        "no spec key is shared by all runs; the legend names each".into()
    } else {
        out.join(" ")
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

/// Keeps a chart of the charts section that could be drawn (one without points or bars is left out).
fn add(
    charts: &mut Vec<Chart>,
    name: &str,
    title: &str,
    caption: String,
    svg: Result<String, String>,
) {
    add_to(charts, None, name, title, caption, svg)
}

/// Keeps a chart that could be drawn, in the section of run `run` (None: the charts section).
fn add_to(
    charts: &mut Vec<Chart>,
    run: Option<usize>,
    name: &str,
    title: &str,
    caption: String,
    svg: Result<String, String>,
) {
    if let Ok(svg) = svg {
        charts.push(Chart {
            name: name.into(),
            title: title.into(),
            caption,
            svg,
            run,
        });
    }
}

/// The report of `recs`, read from the files `sources` (named on the page).
pub fn build(recs: &[Value], sources: &[String]) -> Report {
    let runs: Vec<Run> = recs
        .iter()
        .filter_map(|rec| {
            fields::RESULT.at(rec).map(|r| Run {
                label: label_of(rec, r),
                r,
            })
        })
        .collect();
    let io_runs: Vec<&Run> = runs
        .iter()
        .filter(|x| fields::WORKLOAD.at(x.r).is_none() && fields::LATENCY.at(x.r).is_some())
        .collect();
    let mut charts = Vec::new();
    throughput_chart(&io_runs, &mut charts);
    if !io_runs.is_empty() {
        latency_charts(&io_runs, &mut charts);
        cpu_split_chart(&io_runs, &mut charts);
        syscalls_chart(&io_runs, &mut charts);
    }
    uring_batches_chart(&io_runs, &mut charts);
    lines_chart(&runs, &mut charts);
    flame::copy_share_chart(&io_runs, &mut charts);
    flame::profile_charts(&runs, &mut charts);
    let html = page::page(recs, &runs, &charts, sources);
    Report { html, charts }
}

/// `y` of each run against its bs: one line per workload (the label without its bs) that ran at two or
/// more sizes.
fn lines_over_bs(io_runs: &[&Run], y: impl Fn(&Value) -> Option<f64>) -> Vec<Line> {
    let mut groups: Vec<Line> = Vec::new();
    for x in io_runs {
        let Some(bs) = fields::SPEC_BS.num(x.r) else {
            continue;
        };
        let Some(v) = y(x.r) else {
            continue;
        };
        let key = x
            .label
            .split(' ')
            .filter(|w| !w.starts_with("bs="))
            .collect::<Vec<_>>()
            .join(" ");
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.1.push((bs, v)),
            None => groups.push((key, vec![(bs, v)])),
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
    groups
}

/// Throughput vs block size: one line per workload (the label without its bs) with 2+ sizes.
fn throughput_chart(io_runs: &[&Run], charts: &mut Vec<Chart>) {
    // MiB/s of the runs that moved data.
    let groups = lines_over_bs(io_runs, |r| fields::MIB_S.num(r).filter(|v| *v > 0.0));
    if groups.is_empty() {
        return;
    }
    let mut note = String::new();
    let groups = cap(groups, &mut note);
    let members: Vec<&Run> = io_runs
        .iter()
        .copied()
        .filter(|x| fields::SPEC_BS.num(x.r).is_some())
        .collect();
    let mut sizes: Vec<u64> = groups
        .iter()
        .flat_map(|g| g.1.iter().map(|p| p.0 as u64))
        .collect();
    sizes.sort();
    sizes.dedup();
    add(
        charts,
        "throughput-vs-bs",
        "Throughput vs block size",
        format!(
            "MiB/s (2^20 bytes per second of the timed loop's wall time) against bytes per op, log axis. \
             Shared spec: {}. Sizes on the axis: {}.{note}",
            shared_spec(&members),
            sizes.iter().map(|v| bytes_label(*v as f64)).collect::<Vec<_>>().join(", ")
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

/// Latency percentiles, the latency CDF and the time between ops, of the first MAX_SERIES runs.
fn latency_charts(io_runs: &[&Run], charts: &mut Vec<Chart>) {
    let mut note = String::new();
    let shown = cap(io_runs.to_vec(), &mut note);
    latency_percentiles_chart(&shown, &note, charts);
    latency_cdf_chart(&shown, &note, charts);
    gaps_chart(&shown, &note, charts);
}

fn latency_percentiles_chart(shown: &[&Run], note: &str, charts: &mut Vec<Chart>) {
    let lines: Vec<Line> = shown
        .iter()
        .map(|x| {
            (
                x.label.clone(),
                [
                    (fields::LATENCY_P50, 50.0),
                    (fields::LATENCY_P90, 90.0),
                    (fields::LATENCY_P99, 99.0),
                    (fields::LATENCY_P999, 99.9),
                ]
                .iter()
                .filter_map(|(f, q)| f.num(x.r).map(|v| (*q, v)))
                .collect(),
            )
        })
        .collect();
    add(
        charts,
        "latency-percentiles",
        "Latency percentiles per run",
        format!(
            "Per-op latency in ns (log axis) at the 50th, 90th, 99th and 99.9th percentile. Synchronous \
             methods: completion to completion; asynchronous: queued to completion seen. Shared spec: {}.{note}",
            shared_spec(shown)
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
}

fn latency_cdf_chart(shown: &[&Run], note: &str, charts: &mut Vec<Chart>) {
    let cdf: Vec<Line> = shown
        .iter()
        .map(|x| {
            (
                x.label.clone(),
                fields::LATENCY_CDF
                    .at(x.r)
                    .and_then(|c| c.as_array())
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
        charts,
        "latency-cdf",
        "Latency CDF",
        format!(
            "Fraction of ops (y) completing within a latency (x, ns, log axis), from 21 quantiles per run. \
             Shared spec: {}.{note}",
            shared_spec(shown)
        ),
        line_chart("Latency CDF", "latency (ns, log scale)", "fraction of ops", &cdf, true, false),
    );
}

/// Time between ops as a histogram (drawn when some run has one).
fn gaps_chart(shown: &[&Run], note: &str, charts: &mut Vec<Chart>) {
    let gaps: Vec<Line> = shown
        .iter()
        .filter_map(|x| Some((x.label.clone(), shares(fields::GAP_BUCKETS.at(x.r)?)?)))
        .collect();
    if gaps.is_empty() {
        return;
    }
    add(
        charts,
        "time-between-ops",
        "Time between ops (histogram)",
        format!(
            "Share of ops (y) by the time from one op's start to the next op's start on the same \
             thread (x: upper bound of a half-octave bucket, ns, log axis); the seed thesis's \"time \
             between writes\". Shared spec: {}.{note}",
            shared_spec(shown)
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

/// CPU split, normalized (the thesis's Figure 21).
fn cpu_split_chart(io_runs: &[&Run], charts: &mut Vec<Chart>) {
    // Bars grow the chart downwards, so every run gets one.
    let rows: Vec<(String, Vec<f64>)> = io_runs
        .iter()
        .filter_map(|x| {
            let u = fields::CPU_USER_S.num(x.r)?;
            let s = fields::CPU_SYS_S.num(x.r)?;
            (u + s > 0.0).then(|| {
                (
                    x.label.clone(),
                    vec![u / (u + s) * 100.0, s / (u + s) * 100.0],
                )
            })
        })
        .collect();
    add(
        charts,
        "cpu-split",
        "CPU: user vs system share",
        format!(
            "User and system shares (%) of the process's user + system CPU time during the timed loop \
             (getrusage, all threads including io_uring's SQPOLL and io-wq helpers), normalized like the seed \
             thesis's Figure 21. Shared spec: {}.",
            shared_spec(io_runs)
        ),
        bar_chart("CPU: user vs system share", "% of user + system CPU time", &rows, &["user", "system"]),
    );
}

/// The method's own syscalls per op, a bar per run.
fn syscalls_chart(io_runs: &[&Run], charts: &mut Vec<Chart>) {
    let rows: Vec<(String, Vec<f64>)> = io_runs
        .iter()
        .filter_map(|x| Some((x.label.clone(), vec![fields::SYSCALLS_PER_OP.num(x.r)?])))
        .collect();
    add(
        charts,
        "syscalls-per-op",
        "System calls per op",
        format!(
            "The method's own system calls per op, counted by iolab (io_uring: io_uring_enter calls; mmap: 0). \
             Shared spec: {}.",
            shared_spec(io_runs)
        ),
        bar_chart("System calls per op", "calls per op", &rows, &["syscalls/op"]),
    );
}

/// io_uring batch sizes, of the runs that used io_uring.
fn uring_batches_chart(io_runs: &[&Run], charts: &mut Vec<Chart>) {
    let ur: Vec<&Run> = io_runs
        .iter()
        .copied()
        .filter(|x| fields::URING.at(x.r).is_some_and(|u| !u.is_null()))
        .collect();
    if ur.is_empty() {
        return;
    }
    let mut note = String::new();
    let ur = cap(ur, &mut note);
    let lines: Vec<Line> = ur
        .iter()
        .filter_map(|x| {
            // Calls that carried no request (waits) are in the total, not drawn at x = 0.
            let mut p = shares(fields::URING_BATCHES.at(x.r)?)?;
            p.retain(|q| q.0 > 0.0);
            Some((x.label.clone(), p))
        })
        .collect();
    add(
        charts,
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

/// Decimal lines: the time of every run, per method.
fn lines_chart(runs: &[Run], charts: &mut Vec<Chart>) {
    let mut groups: Vec<Line> = Vec::new();
    for x in runs
        .iter()
        .filter(|x| fields::WORKLOAD.at(x.r).and_then(|w| w.as_str()) == Some("decimal-lines"))
    {
        let m = fields::SPEC_METHOD.text(x.r);
        let ms = fields::WALL_S.num(x.r).unwrap_or(f64::NAN) * 1e3;
        match groups.iter_mut().find(|g| g.0 == m) {
            Some(g) => {
                let k = g.1.len() as f64 + 1.0;
                g.1.push((k, ms));
            }
            None => groups.push((m, vec![(1.0, ms)])),
        }
    }
    if groups.is_empty() {
        return;
    }
    add(
        charts,
        "lines-runs",
        "Decimal lines: time per run",
        format!(
            "Milliseconds (y, log axis) of each run (x) writing the numbers 0..{} as decimal lines to a fresh \
             file, per method; every file was read back and checked. What a run timed is in its record's \
             `timed` (since 2026-11-23: the first write until fsync returned; before: open to close).",
            runs.iter()
                .find_map(|x| fields::SPEC_LINES.num(x.r))
                .map(|n| (n as u64).saturating_sub(1).to_string())
                .unwrap_or_else(|| "N-1".into())
        ),
        line_chart(
            "Decimal lines: time per run",
            "run",
            "ms per run (log scale)",
            &groups,
            false,
            true,
        ),
    );
}

#[cfg(test)]
mod tests {
    use super::charts::{bytes_label, short_num};
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

//! `iolab report`: one self-contained HTML file (inline SVG drawn with the plotters crate, no scripts, no
//! network) from result records, with as many of these charts as the data allows:
//!
//! - each key figure (throughput, IOPS, p99 latency, CPU, syscalls per op, and the share of profile
//!   samples copying to/from user space) against each key the records vary (bs, qd, threads, batch:
//!   a log axis ticked at the values measured; method: ranked bars), one series per combination of the
//!   other keys that vary, in small multiples per suite step (or target) (`html/vary.rs`);
//! - latency percentiles on a "nines" axis (p50, p90, p99, p99.9 equally spaced) and the latency CDF on
//!   the same scale, so the tail shows; the time between successive ops and io_uring's requests per
//!   submission as histograms (bars), a panel per run (`html/dist.rs`);
//! - the timed pass over time (`--log-interval`): IOPS and p99 latency per interval against seconds
//!   since the run's first op, a line per run (`html/timeline.rs`);
//! - the CPU split, user and system shares of user + system time per run (the thesis's Figure 21);
//! - every way a suite ran one workload side by side, a bar per step: time and CPU per op (the thesis's
//!   Figures 18, 20 and 22 with their "dma" rows; `html/ways.rs`);
//! - syscalls per op per run (where no chart against a swept key shows them);
//! - times per run of the decimal-lines workload;
//!
//! and a table of every record, the findings of each run, each chart's spec (the keys all its runs share;
//! the legend and panel titles name what differs), and a line for every chart left out because it would
//! carry no information (one value, or all equal). Each profiled run (`--profile`) gets a section of its
//! own: a flame graph of its stacks (static SVG), its groups' shares and its top functions.
//!
//! `html/axis.rs` makes the axes (scales, ticks, units), `html/charts.rs` draws, `html/flame.rs` the
//! profiles, `html/page.rs` lays out the page, and every value is read from the records through
//! `crate::fields`.

mod answer;
mod axis;
mod charts;
mod coords;
mod dist;
mod flame;
mod layers;
pub(crate) mod markup;
mod model;
mod offload;
mod page;
mod palette;
mod repeats;
mod runs_table;
mod sweep_answer;
mod timeline;
mod vary;
mod ways;

use crate::html::model::uninformative;
pub use model::Report;
use model::{held, label_of, shared_spec, unwrap_survey_run, Has, Out, Run};

use crate::fields;
use axis::Axis;
use charts::{BarChart, BarRow, BarSection, Figure, Mark, Marks, Panel};
use serde_json::Value;

/// The report of `recs`, read from the files `sources` (named on the page; when there are several,
/// records are not told apart by file: use [`build_files`] for that).
pub fn build(recs: &[Value], sources: &[String]) -> Report {
    let recs = repeats::group(recs.to_vec());
    let from = vec![None; recs.len()];
    build_with(recs, &from, sources, true)
}

/// The report of the records of each file (name, records); runs of different files are told apart by
/// the file's name where their labels would be the same. Each chart's SVG is kept in
/// [`Report::charts`] only with `keep_svgs` (else it is in the page alone).
pub fn build_files(files: Vec<(String, Vec<Value>)>, keep_svgs: bool) -> Report {
    let names = file_names(files.iter().map(|f| f.0.as_str()).collect());
    let sources: Vec<String> = files.iter().map(|f| f.0.clone()).collect();
    let many = files.len() > 1;
    // Room for as many as there are (the doubling's room was 11 MB of a page of 157,000 runs).
    let total = files.iter().map(|f| f.1.len()).sum();
    let mut recs = Vec::with_capacity(total);
    let mut from = Vec::with_capacity(total);
    for ((_, r), n) in files.into_iter().zip(names) {
        // The repeats of one configuration (`run --repeat K --json`) are one run.
        let r = repeats::group(r);
        from.extend(r.iter().map(|_| many.then(|| n.clone())));
        recs.extend(r);
    }
    build_with(recs, &from, &sources, keep_svgs)
}

/// Each path by its file name, or whole where two file names are the same (each name counted once, so
/// that a fleet of 20,000 hosts' files is named in linear time, not 70 s).
fn file_names(paths: Vec<&str>) -> Vec<String> {
    let base = |p: &'_ str| -> String { p.rsplit('/').next().unwrap_or(p).to_string() };
    let mut n: std::collections::HashMap<String, usize> = Default::default();
    for p in &paths {
        *n.entry(base(p)).or_default() += 1;
    }
    paths
        .iter()
        .map(|p| match n[&base(p)] {
            1 => base(p),
            _ => p.to_string(),
        })
        .collect()
}

/// Labels for `recs` (from file `from[i]` where files are told apart), unique: a file's name is added
/// where records of different files would share one, a number where records still do. Only the labels
/// the page shows are made (a record's with a result, or in the runs table's first rows); the others are
/// empty, counted by their hash alone (a label holds a target's path: 207,000 labels of 800-byte targets
/// took 171 MB). Two labels whose hashes meet are numbered as if they were one: still told apart.
fn unique_labels(recs: &[Value], from: &[Option<String>]) -> Vec<String> {
    use std::hash::BuildHasher;
    let state = std::collections::hash_map::RandomState::new();
    let hash = |l: &str| state.hash_one(l);
    let base = |rec: &Value| {
        let rec = held(rec);
        short(label_of(
            &rec,
            fields::RESULT.at(&rec).unwrap_or(&Value::Null),
        ))
    };
    let count = |hs: &[u64]| {
        let mut n: std::collections::HashMap<u64, usize> = Default::default();
        for h in hs {
            *n.entry(*h).or_default() += 1;
        }
        n
    };
    // A file's name where the bare label is shared. Each record is read once for its label's hash and
    // whether it has a result (a record of JSON lines is parsed again each time it is read).
    let (hashes, results): (Vec<u64>, Vec<bool>) = recs
        .iter()
        .map(|rec| {
            let rec = held(rec);
            let r = fields::RESULT.at(&rec);
            let label = short(label_of(&rec, r.unwrap_or(&Value::Null)));
            (hash(&label), r.is_some())
        })
        .unzip();
    let n = count(&hashes);
    let filed = |i: usize| -> Option<String> {
        let f = from.get(i)?.as_ref().filter(|_| n[&hashes[i]] > 1)?;
        Some(format!("{} [{f}]", base(&recs[i])))
    };
    let hashes: Vec<u64> = (0..recs.len())
        .map(|i| filed(i).map_or(hashes[i], |l| hash(&l)))
        .collect();
    let n = count(&hashes);
    let mut seen: std::collections::HashMap<u64, usize> = Default::default();
    let shown = |i: usize| i < page::MAX_ROWS || results[i];
    (0..recs.len())
        .map(|i| {
            let k = (n[&hashes[i]] > 1).then(|| {
                let k = seen.entry(hashes[i]).or_default();
                *k += 1;
                *k
            });
            if !shown(i) {
                return String::new();
            }
            let mut l = filed(i).unwrap_or_else(|| base(&recs[i]));
            if let Some(k) = k {
                l.push_str(&format!(" #{k}"));
            }
            l
        })
        .collect()
}

/// A label as the page shows it: one longer than a tooltip holds (a point's values, forged or a long
/// target's) is cut, and told apart from others cut alike by its whole text's hash (64 point values of
/// 4,000 bytes, in each chart's legend and each point's tooltip, made a page 36 times its records).
fn short(label: String) -> String {
    use std::hash::{Hash, Hasher};
    if label.chars().count() <= charts::TIP_MAX {
        return label;
    }
    // A fixed hasher: the same label is cut to the same text in every report.
    let mut h = std::hash::DefaultHasher::new();
    label.hash(&mut h);
    let kept: String = label.chars().take(charts::TIP_MAX - 20).collect();
    format!("{kept}… #{:016x}", h.finish())
}

fn build_with(
    recs: Vec<Value>,
    from: &[Option<String>],
    sources: &[String],
    keep_svgs: bool,
) -> Report {
    // A survey's page opens with its answer, from its runs before they are read as records.
    let answer = answer::section(&recs);
    let recs: Vec<Value> = recs.into_iter().map(unwrap_survey_run).collect();
    let labels = unique_labels(&recs, from);
    let grouped = recs.iter().any(|r| repeats::count(&held(r)).is_some());
    // Each run's coordinates, stored once each (`coords`) as they are made and held by the runs as
    // numbers (a run's own copy of its keys is let go at once). The runs are made as their keys are
    // stored, each pointing at the whole of them after: made after, from a list of each run's numbers,
    // the two lists were held at once (157,000 runs: 12 MB more at the page's peak).
    let none_yet = coords::Coords::default();
    let mut coords = coords::Coords::default();
    // Room for one a record, not the doubling's room: 157,000 runs took 75 MB where 45 MB hold them.
    let mut runs: Vec<Run> = Vec::with_capacity(recs.len());
    for ((held_rec, label), file) in recs.iter().zip(&labels).zip(from) {
        let rec = held(held_rec);
        let Some(r) = fields::RESULT.at(&rec) else {
            continue;
        };
        let mut keys = vary::keys_of(&rec, r, file.as_deref());
        // Legends tell a configuration drawn at the median of its repeats from a single run.
        if grouped {
            let k = repeats::count(&rec).unwrap_or(1);
            keys.push(("repeats".into(), k.to_string()));
        }
        let spec = coords.values_of(&fields::SHARED_SPEC.map(|f| f.text(r)));
        let host = match fields::HOST.at(r) {
            Some(_) => coords.values_of(&[host_of(r)])[0],
            None => coords::NONE,
        };
        runs.push(Run {
            label: label.clone(),
            rec: held_rec,
            keys: coords.intern(&keys),
            spec,
            coords: &none_yet,
            figures: vary::figures_of(r),
            has: has_of(&rec, r),
            host,
        });
    }
    runs.shrink_to_fit();
    let coords = coords;
    for x in &mut runs {
        x.coords = &coords;
    }
    // A sweep's page opens with the best point of each line.
    let answer = match answer.is_empty() {
        true => sweep_answer::section(&recs, &runs),
        false => answer,
    };
    let io_runs: Vec<&Run> = runs.iter().filter(|x| x.has.io).collect();
    let mut out = Out::default();
    let against = vary::figure_charts(&io_runs, &mut out);
    if !io_runs.is_empty() {
        dist::latency_charts(&io_runs, &mut out);
        timeline::over_time_charts(&io_runs, &mut out);
        timeline::page_cache_chart(&io_runs, &mut out);
        cpu_split_chart(&io_runs, &mut out);
        ways::ways_charts(&io_runs, &mut out);
        if !against.contains(&"syscalls-per-op") {
            syscalls_chart(&io_runs, &mut out);
        }
    }
    dist::uring_batches_chart(&io_runs, &mut out);
    lines_chart(&runs, &mut out);
    flame::profile_charts(&runs, &mut out);
    let html = page::page(&recs, &labels, &runs, &mut out, sources, &answer, keep_svgs);
    Report {
        html,
        charts: out.charts,
        left_out: out.left_out,
    }
}

/// What a run's result holds that a chart or section looks for (`rec`: its record).
fn has_of(rec: &Value, r: &Value) -> Has {
    let workload = fields::WORKLOAD.at(r);
    let present = |f: fields::Field| f.at(r).is_some_and(|v| !v.is_null());
    Has {
        io: workload.is_none() && fields::LATENCY.at(r).is_some(),
        quantiles: !dist::quantiles(r).is_empty(),
        gap: fields::GAP_BUCKETS.at(r).is_some(),
        uring: present(fields::URING),
        intervals: timeline::series(r, fields::INTERVAL_IOPS).len() > 1,
        page_cache: timeline::page_cache(r).len() > 1,
        profile: flame::profile(r).is_some(),
        findings: fields::FINDINGS
            .at(r)
            .is_some_and(|f| !iolab_lab::series::items(f).is_empty()),
        emulated: page::is_emulated(r),
        lines: workload.and_then(Value::as_str) == Some("decimal-lines"),
        offload: present(fields::OFFLOAD_PATH),
        repeats: repeats::count(rec).is_some(),
    }
}

/// The machine a run ran on, as the page's head names it.
fn host_of(r: &Value) -> String {
    format!(
        "kernel {}, {}, {} CPUs online",
        fields::HOST_KERNEL_RELEASE.text(r),
        fields::HOST_CPU_MODEL.text(r),
        fields::HOST_CPUS_ONLINE.text(r)
    )
}

/// Horizontal bars of `rows_of` each group's runs, in sections per group (small multiples as in
/// `vary::split`), or left out with the reason when every bar would be the same.
fn per_run_bars(
    io_runs: &[&Run],
    value: impl Fn(&Run) -> Option<Vec<f64>>,
    mut chart: BarChart,
    name: &str,
    caption: String,
    out: &mut Out,
) {
    // Each run's values found once (a run's result may be parsed again for each look), by its place.
    let with: Vec<(&Run, Vec<f64>)> = io_runs
        .iter()
        .filter_map(|x| Some((*x, value(x)?)))
        .collect();
    let firsts: Vec<f64> = with.iter().filter_map(|x| x.1.first().copied()).collect();
    let values: std::collections::HashMap<*const Run, &Vec<f64>> =
        with.iter().map(|(x, v)| (*x as *const Run, v)).collect();
    let with: Vec<&Run> = with.iter().map(|x| x.0).collect();
    if with.is_empty() {
        return;
    }
    if let Some(why) = uninformative(&firsts, &|v| chart.axis.value_text(v)) {
        out.leave_out(&chart.title, why);
        return;
    }
    for (title, group) in vary::split(with, &[], 40, &|g| g.len()) {
        let keys = vary::independent(&group, vary::varying(&group, &[]));
        chart.sections.push(BarSection {
            title,
            rows: group
                .iter()
                .filter_map(|x| {
                    Some(BarRow {
                        label: vary::label_in(x, &keys),
                        values: values.get(&(*x as *const Run))?.to_vec(),
                    })
                })
                .collect(),
        });
    }
    let title = chart.title.clone();
    out.add(name, &title, caption, charts::bar_chart(&chart));
}

/// CPU split, normalized (the thesis's Figure 21).
fn cpu_split_chart(io_runs: &[&Run], out: &mut Out) {
    let split = |x: &Run| {
        let r = x.r();
        // No share of a CPU time its CPUs could not have spent in the span.
        if iolab_lab::series::cpu_withheld(&r).is_some() {
            return None;
        }
        let u = fields::CPU_USER_S.num(&r)?;
        let s = fields::CPU_SYS_S.num(&r)?;
        (u + s > 0.0).then(|| vec![u / (u + s) * 100.0, s / (u + s) * 100.0])
    };
    let chart = BarChart {
        title: "CPU: user vs system share".into(),
        axis: Axis::amount("share of user + system CPU time", "%", &[100.0]),
        parts: vec!["user".into(), "system".into()],
        stacked: true,
        sections: Vec::new(),
    };
    let caption = format!(
        "User and system shares (%) of the process's user + system CPU time during the timed loop \
         (getrusage, all threads including io_uring's SQPOLL and io-wq helpers), normalized like the seed \
         thesis's Figure 21; runs that used no measurable CPU time are left out. Shared spec: {}.",
        shared_spec(io_runs)
    );
    per_run_bars(io_runs, split, chart, "cpu-split", caption, out);
}

/// The method's own syscalls per op, a bar per run.
fn syscalls_chart(io_runs: &[&Run], out: &mut Out) {
    let values: Vec<f64> = io_runs
        .iter()
        .filter_map(|x| fields::SYSCALLS_PER_OP.num(&x.r()))
        .collect();
    let chart = BarChart {
        title: "System calls per op".into(),
        axis: Axis::amount("system calls per op", "calls/op", &values),
        parts: vec!["calls/op".into()],
        stacked: false,
        sections: Vec::new(),
    };
    let caption = format!(
        "The method's own system calls per op, counted by iolab (io_uring: io_uring_enter calls; mmap: 0). \
         Shared spec: {}.",
        shared_spec(io_runs)
    );
    let value = |x: &Run| Some(vec![fields::SYSCALLS_PER_OP.num(&x.r())?]);
    per_run_bars(io_runs, value, chart, "syscalls-per-op", caption, out);
}

/// Decimal lines: the time of every run, per method.
fn lines_chart(runs: &[Run], out: &mut Out) {
    let mut legend: Vec<String> = Vec::new();
    let mut lines: Vec<Vec<(f64, f64)>> = Vec::new();
    for x in runs.iter().filter(|x| x.has.lines) {
        let r = x.r();
        let m = fields::SPEC_METHOD.text(&r);
        let ns = fields::WALL_S.num(&r).unwrap_or(f64::NAN) * 1e9;
        let i = legend.iter().position(|l| *l == m).unwrap_or_else(|| {
            legend.push(m);
            lines.push(Vec::new());
            lines.len() - 1
        });
        let k = lines[i].len() as f64 + 1.0;
        lines[i].push((k, ns));
    }
    if lines.is_empty() {
        return;
    }
    let title = "Decimal lines: time per run";
    let ys: Vec<f64> = lines.iter().flatten().map(|p| p.1).collect();
    let n = lines.iter().map(Vec::len).max().unwrap_or(1);
    let y = Axis::time("time per run", &ys);
    if let Some(why) = uninformative(&ys, &|v| y.value_text(v)) {
        out.leave_out(title, why);
        return;
    }
    let fig = Figure {
        title: title.into(),
        legend,
        panels: vec![Panel {
            title: String::new(),
            x: Axis::ordinal("run", "ordinal, per method", n),
            y,
            marks: lines
                .into_iter()
                .enumerate()
                .map(|(series, l)| Mark {
                    series,
                    marks: Marks::Line(l),
                })
                .collect(),
        }],
    };
    out.figure(
        "lines-runs",
        title,
        format!(
            "Time (y, log axis) of each run (x, in the order run) writing the numbers 0..{} as decimal lines \
             to a fresh file, per method; every file was read back and checked. What a run timed is in its \
             record's `timed` (since 2026-11-23: the first write until fsync returned; before: open to close).",
            runs.iter()
                .find_map(|x| fields::SPEC_LINES.num(&x.r()))
                .map(|n| (n as u64).saturating_sub(1).to_string())
                .unwrap_or_else(|| "N-1".into())
        ),
        &fig,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::model::uninformative;

    fn fake(method: &str, bs: u64, mib: f64) -> Value {
        serde_json::json!({
            "point": {"method": method, "bs": bs.to_string()},
            "result": {
                "spec": {"method": method, "bs": bs, "op": "write"},
                "mib_s": mib, "iops": mib * 1048576.0 / bs as f64, "ns_per_op": 100.0, "wall_s": 1.0,
                "latency": {"count": 100000, "p50_ns": 100.0, "p90_ns": 150.0, "p99_ns": 300.0 * mib, "p999_ns": 900.0,
                            "cdf": [[0.0, 50.0], [0.5, 100.0], [0.99, 300.0 * mib], [1.0, 1000.0 * mib]]},
                "gap": {"buckets": [[64.0, 10], [128.0, 30]]},
                "cpu": {"process": {"user_s": 0.2 * mib, "sys_s": 0.8}},
                "syscalls": {"method_per_op": 1.0},
                "findings": [{"rule": "x", "text": "a <finding>"}]
            }
        })
    }

    /// A sweep that runs along no size or depth (methods by seeds) is one line, its points ranked; the
    /// harness's floor (nop) moves no data and is left out of it.
    #[test]
    fn a_sweep_of_methods_and_seeds_ranks_its_points_on_one_line() {
        let mut recs = Vec::new();
        for (m, mib) in [("psync", 100.0), ("aio", 300.0), ("nop", 9000.0)] {
            for seed in 1..=2 {
                let mut r = fake(m, 4096, mib + seed as f64);
                r["point"] = serde_json::json!({"method": m, "seed": seed.to_string()});
                recs.push(r);
            }
        }
        let page = build(&recs, &["s.jsonl".into()]).html;
        let a =
            &page[page.find("<h2>The answer</h2>").unwrap()..page.find("<h2>Runs</h2>").unwrap()];
        let rows: Vec<&str> = a.split("<tr><td>").skip(1).collect();
        assert_eq!(rows.len(), 1, "{a}");
        assert!(
            rows[0].starts_with("all points</td><td>method=aio seed=2"),
            "{}",
            rows[0]
        );
        assert!(!a.contains("nop"), "{a}");
    }

    /// The runs table lists the first 2,000 runs and says how many more the files hold; a survey's rows
    /// that did not run say why.
    #[test]
    fn the_runs_table_lists_at_most_its_bound_and_counts_the_rest() {
        let recs: Vec<Value> = (0..2003)
            .map(|i| {
                let mut r = fake("psync", 4096, 100.0);
                r["point"] = serde_json::json!({"seed": i.to_string()});
                r
            })
            .collect();
        let page = build(&recs, &["s.jsonl".into()]).html;
        let runs = &page[page.find("<h2>Runs</h2>").unwrap()..];
        let table = &runs[..runs.find("</table>").unwrap()];
        assert_eq!(table.matches("<tr><td>").count(), 2000);
        assert!(
            page.contains("The table lists the first 2,000 runs; 3 more are in the result files"),
            "the rest are counted"
        );
    }

    fn texts(svg: &str) -> Vec<String> {
        let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{e}: {svg}"));
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text().map(|t| t.trim().to_string()))
            .collect()
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
            "iops-vs-bs",
            "p99-latency-vs-bs",
            "throughput-vs-method",
            "latency-percentiles",
            "latency-cdf",
            "time-between-ops",
            "cpu-split",
        ] {
            assert!(names.contains(&want), "{want} missing from {names:?}");
        }
        for c in &rep.charts {
            assert!(
                texts(&c.svg).iter().any(|t| t == &c.title),
                "{}: title",
                c.name
            );
        }
        let tp = rep
            .charts
            .iter()
            .find(|c| c.name == "throughput-vs-bs")
            .unwrap();
        let t = texts(&tp.svg);
        for want in [
            "method=sync",
            "method=mmap",
            "512 B",
            "4 KiB",
            "throughput (MiB/s)",
        ] {
            assert!(t.contains(&want.to_string()), "{want}: {t:?}");
        }
        assert!(rep.html.contains("not run: not run: x") && rep.html.contains("a &lt;finding&gt;"));
        assert!(
            !rep.html.contains("<script") && !rep.html.contains("http://")
                || rep.html.contains("xmlns=\"http://www.w3.org/2000/svg\"")
        );
    }

    #[test]
    fn a_chart_of_equal_values_is_left_out_and_the_page_says_why() {
        let recs = vec![fake("sync", 512, 10.0), fake("sync", 4096, 80.0)];
        let rep = build(&recs, &["x.jsonl".into()]);
        // Every run made one call per op: no chart of it, against bs or per run.
        assert!(
            !rep.charts
                .iter()
                .any(|c| c.name.starts_with("syscalls-per-op")),
            "{:?}",
            rep.charts.iter().map(|c| &c.name).collect::<Vec<_>>()
        );
        for want in [
            "System calls per op against block size: all 2 values are equal (1 calls/op)",
            "System calls per op: all 2 values are equal (1 calls/op)",
        ] {
            assert!(
                rep.left_out.iter().any(|l| l == want),
                "{want}: {:?}",
                rep.left_out
            );
            assert!(rep.html.contains(&markup::esc(want)), "{want}");
        }
        assert_eq!(
            uninformative(&[1.0, 1.002, 1.001], &|v| format!("{v}")).as_deref(),
            Some("all 3 values are within 0.5% of each other (about 1.001)")
        );
        assert_eq!(uninformative(&[1.0, 1.02], &|v| format!("{v}")), None);
        // One run: nothing to compare along bs; its distributions are still drawn.
        let rep = build(&recs[..1], &["x.jsonl".into()]);
        assert!(!rep.charts.iter().any(|c| c.name.contains("-vs-")));
        assert!(rep.charts.iter().any(|c| c.name == "latency-percentiles"));
    }

    /// A line per run for more runs than a chart draws apart: the latency charts are left out, saying
    /// why, not drawn as a panel per dozen runs (105,000 runs drew 17,500 charts, a page of 363 MB).
    #[test]
    fn latency_lines_of_more_runs_than_a_chart_draws_are_left_out_saying_why() {
        let recs: Vec<Value> = (1..=450).map(|i| fake("sync", 512 * i, 10.0)).collect();
        let rep = build(&recs, &["x.jsonl".into()]);
        assert!(
            !rep.charts.iter().any(|c| c.name.starts_with("latency-")),
            "{:?}",
            rep.charts.iter().map(|c| &c.name).collect::<Vec<_>>()
        );
        let why = "450 runs, a line each: more than the 400 a chart draws apart";
        for title in ["Latency percentiles per run", "Latency CDF"] {
            assert!(
                rep.left_out
                    .iter()
                    .any(|l| l.starts_with(&format!("{title}: {why}"))),
                "{title}: {:?}",
                rep.left_out
            );
        }
        assert!(rep.charts.len() <= super::model::MAX_CHARTS);
        // Charts were left out, not missing: the page does not also say there was nothing to chart.
        let drawn = rep.charts.iter().any(|c| c.run.is_none());
        assert!(!rep.html.contains("hold nothing to chart"));
        assert_eq!(
            rep.html.contains("No chart is drawn: each is left out"),
            !drawn
        );
        let none = build(&recs[..0], &["x.jsonl".into()]);
        assert!(none.html.contains("The records hold nothing to chart."));
    }

    #[test]
    fn runs_of_several_files_are_told_apart_by_the_file() {
        let a = vec![fake("sync", 512, 10.0), fake("sync", 4096, 80.0)];
        let b = vec![fake("sync", 512, 12.0), fake("sync", 4096, 90.0)];
        let rep = build_files(vec![("x/a.jsonl".into(), a), ("y/b.jsonl".into(), b)], true);
        let tp = rep
            .charts
            .iter()
            .find(|c| c.name == "throughput-vs-bs")
            .unwrap();
        let t = texts(&tp.svg);
        assert!(
            t.contains(&"file=a.jsonl".to_string()) && t.contains(&"file=b.jsonl".to_string()),
            "{t:?}"
        );
        // The table's labels are unique.
        assert!(
            rep.html.contains("<td>method=sync bs=512 [a.jsonl]</td>"),
            "{}",
            rep.html
        );
        assert!(rep.html.contains("<td>method=sync bs=512 [b.jsonl]</td>"));
        // The same file twice: numbered.
        let a = vec![fake("sync", 512, 10.0)];
        let rep = build_files(
            vec![("a.jsonl".into(), a.clone()), ("a.jsonl".into(), a)],
            true,
        );
        assert!(rep.html.contains("[a.jsonl] #1") && rep.html.contains("[a.jsonl] #2"));
    }

    /// Only the labels the page shows are made, and those are numbered among all the records, shown or
    /// not: a run after the table's rows still has its own number.
    #[test]
    fn labels_are_made_where_shown_and_numbered_among_all() {
        let row = serde_json::json!({"point": {"x": "a"}, "error": "refused"});
        let mut recs = vec![row; page::MAX_ROWS + 2];
        let mut ran = serde_json::json!({"point": {"x": "a"}, "result": {"iops": 1.0}});
        recs.push(ran.clone());
        ran["point"]["x"] = serde_json::json!("b");
        recs.push(ran);
        let labels = unique_labels(&recs, &vec![None; recs.len()]);
        assert_eq!(labels[0], "x=a #1");
        assert_eq!(
            labels[page::MAX_ROWS - 1],
            format!("x=a #{}", page::MAX_ROWS)
        );
        assert!(labels[page::MAX_ROWS].is_empty() && labels[page::MAX_ROWS + 1].is_empty());
        assert_eq!(
            labels[page::MAX_ROWS + 2],
            format!("x=a #{}", page::MAX_ROWS + 3)
        );
        assert_eq!(labels[page::MAX_ROWS + 3], "x=b");
    }

    #[test]
    fn runs_from_an_emulated_guest_are_marked() {
        let mut emulated = fake("sync", 4096, 1.0);
        emulated["result"]["host"] = serde_json::json!({"kernel_release": "6.1.0-9-amd64", "emulated": true, "accelerator": "tcg"});
        let native = fake("psync", 4096, 2.0);
        let html = build(&[emulated, native.clone()], &["a.jsonl".into()]).html;
        assert!(
            html.contains("<b>Emulated:</b> 1 of 2 runs ran on an emulated CPU (QEMU TCG"),
            "{html}"
        );
        assert_eq!(html.matches("\u{2020} emulated</td>").count(), 1, "{html}");
        let html = build(&[native], &["b.jsonl".into()]).html;
        assert!(!html.contains("Emulated"), "{html}");
    }

    #[test]
    fn a_survey_document_is_read_as_its_runs() {
        let ran = |m: &str, bs: u64, mib: f64| {
            let mut r = fake(m, bs, mib)["result"].clone();
            r["spec"]["target"] = "/dev/null".into();
            serde_json::json!({"point": {}, "result": {"target": "/dev/null", "method": m, "bs": bs, "result": r, "unavailable": null}})
        };
        let recs = vec![
            ran("sync", 4, 1.0),
            ran("psync", 4, 2.0),
            ran("sync", 4096, 100.0),
            ran("psync", 4096, 150.0),
            serde_json::json!({"point": {}, "result": {"target": "/dev/null", "method": "mmap", "bs": 4, "result": null, "unavailable": "cannot map"}}),
        ];
        let rep = build(&recs, &["s.json".into()]);
        assert!(rep.html.contains("not run: cannot map"), "{}", rep.html);
        let m = rep
            .charts
            .iter()
            .find(|c| c.name == "throughput-vs-method")
            .expect("ranked by method");
        let t = texts(&m.svg);
        assert!(
            t.contains(&"bs=4 B".to_string()) && t.contains(&"psync".to_string()),
            "{t:?}"
        );
    }

    /// Side-by-side bars give a row a slot for each value it has: a run of one of several series is one
    /// bar high (a survey of 7 series was 7 slots a run, four times as tall, its bars off their labels).
    #[test]
    fn a_row_of_one_series_of_several_is_one_bar_high() {
        let rows = |values: &[Vec<f64>]| -> String {
            let chart = BarChart {
                title: "t".into(),
                axis: Axis::amount("x", "x", &[1.0, 2.0]),
                parts: (0..values[0].len()).map(|i| format!("s{i}")).collect(),
                stacked: false,
                sections: vec![charts::BarSection {
                    title: String::new(),
                    rows: values
                        .iter()
                        .enumerate()
                        .map(|(i, v)| charts::BarRow {
                            label: format!("r{i}"),
                            values: v.clone(),
                        })
                        .collect(),
                }],
            };
            charts::bar_chart(&chart).unwrap()
        };
        let height = |svg: &str| {
            let doc = roxmltree::Document::parse(svg).unwrap();
            let h = doc.root_element().attribute("height").unwrap();
            h.parse::<f64>().unwrap()
        };
        let nan = f64::NAN;
        let sparse = rows(&[
            vec![1.0, nan, nan],
            vec![nan, 2.0, nan],
            vec![nan, nan, 1.5],
        ]);
        let one = rows(&[vec![1.0], vec![2.0], vec![1.5]]);
        let full = rows(&vec![vec![1.0, 2.0, 1.5]; 3]);
        assert_eq!(height(&sparse), height(&one));
        assert!(height(&full) > height(&one));
        // Each bar of the sparse chart sits where the one-series chart's bar of its row is, in its
        // series' colour.
        let bars = |svg: &str| -> Vec<(String, String)> {
            let doc = roxmltree::Document::parse(svg).unwrap();
            doc.descendants()
                .filter(|n| n.attribute("class") == Some("bar"))
                .map(|n| {
                    (
                        n.attribute("y").unwrap().into(),
                        n.attribute("fill").unwrap().into(),
                    )
                })
                .collect()
        };
        let (b, o) = (bars(&sparse), bars(&one));
        assert_eq!(b.len(), 3);
        assert!(b.iter().zip(&o).all(|(x, y)| x.0 == y.0), "{b:?} {o:?}");
        assert!(b[0].1 != b[1].1 && b[1].1 != b[2].1, "{b:?}");
    }
}

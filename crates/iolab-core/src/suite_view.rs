//! A suite's table (one per step, columns as the seed's table has them), the profiled points' table and
//! the lines suite's per-method summary, as a [`Doc`]: printed to the terminal's width and exported as
//! Markdown (`--md`). Figures carry human units (`crate::units`); rates over spans too short to time say
//! so.

use crate::series::{self, num};
use crate::suite::{SuiteFile, TableKind, COPY_GROUP};
use crate::text::{Align, Doc, Table};
use crate::units::{fmt_mib_s, fmt_ns, fmt_size};
use serde_json::Value;

use Align::{Left as L, Right as R};

fn txt(v: &Value, path: &[&str]) -> String {
    series::text(series::at(v, path))
}

/// The record's point without the step (the step heads its rows) and the keys the command line set on
/// every point (the lead line names them).
fn point_rest(s: &SuiteFile, rec: &Value) -> String {
    series::record_point(rec)
        .into_iter()
        .filter(|(k, _)| k != "step" && k != "quick" && !s.overrides.contains_key(k))
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn step_of(rec: &Value) -> String {
    series::record_point(rec)
        .into_iter()
        .find(|(k, _)| k == "step")
        .map(|(_, v)| v)
        .unwrap_or_default()
}

/// The suite's document over its records (in file order): a table per step, the profiled points, the
/// notes and the seed's published figures.
pub fn doc(s: &SuiteFile, recs: &[Value]) -> Doc {
    let mut d = Doc::new();
    d.blank()
        .line(format!("{}: reproduces {}", s.name, s.reproduces))
        .blank();
    let emulated = recs.iter().find_map(|r| {
        let h = r.get("result")?.get("host")?;
        serde_json::from_value::<crate::result::Host>(h.clone())
            .ok()?
            .emulated_line()
    });
    if let Some(e) = emulated {
        d.line(format!("emulated: {e}")).blank();
    }
    let mut last_step: Option<String> = None;
    let mut table: Option<Table> = None;
    for rec in recs {
        let step = step_of(rec);
        if last_step.as_ref() != Some(&step) {
            if let Some(t) = table.take() {
                d.table(t);
            }
            d.line(step.clone());
            table = Some(new_table(s.table));
            last_step = Some(step);
        }
        let t = table.as_mut().expect("made above");
        let rest = point_rest(s, rec);
        match (rec.get("result"), rec.get("error").and_then(|e| e.as_str())) {
            (Some(r), _) => row(t, s.table, rest, r),
            (None, Some(e)) => t.note([rest], format!("not run: {e}")),
            _ => {}
        }
    }
    if let Some(t) = table {
        d.table(t);
    }
    if s.table == TableKind::Lines {
        lines_summary(recs, &mut d);
    }
    profile_table(s, recs, &mut d);
    if !s.notes.is_empty() {
        d.blank().line("How this differs from the seed:");
        for n in &s.notes {
            d.line(format!("  - {n}"));
        }
    }
    if let Some(p) = &s.published {
        d.blank()
            .line("Published by the seed (for comparison; other hardware):");
        let body: Vec<String> = p.trim_end().lines().map(|l| format!("  {l}")).collect();
        d.pre(body.join("\n"));
    }
    d
}

fn new_table(k: TableKind) -> Table {
    let cols: &[(&str, Align)] = match k {
        TableKind::Cpu => &[
            ("point", L),
            ("user s", R),
            ("sys s", R),
            ("total s", R),
            ("user %", R),
            ("sys %", R),
            ("time/op", R),
            ("calls/op", R),
        ],
        TableKind::Throughput => &[
            ("point", L),
            ("throughput", R),
            ("kernel %", R),
            ("user %", R),
            ("moved", R),
            ("wall s", R),
        ],
        TableKind::Latency => &[
            ("point", L),
            ("runtime s", R),
            ("avg latency", R),
            ("IOPS", R),
            ("throughput", R),
            ("syscalls", R),
            ("uring_enter", R),
        ],
        TableKind::Batches => &[
            ("point", L),
            ("runtime s", R),
            ("IOPS", R),
            ("throughput", R),
            ("avg latency", R),
            ("calls", R),
            ("reqs", R),
            ("big (32+)", R),
            ("avg batch", R),
        ],
        TableKind::Lines => &[("point", L), ("wall ms", R), ("user ms", R), ("sys ms", R)],
        TableKind::Nowait => &[
            ("point", L),
            ("time/op", R),
            ("would block", R),
            ("punted", R),
            ("ctx sw/op", R),
            ("io-wq CPU s", R),
        ],
        TableKind::Nop => &[
            ("point", L),
            ("time/op", R),
            ("cycles/op", R),
            ("p50", R),
            ("p99", R),
        ],
    };
    Table::new(cols, 1).indent(2)
}

/// IOPS as a count with a decimal multiplier ("123.5 k").
fn iops(v: f64) -> String {
    crate::units::fmt_ops_s(v)
        .trim_end_matches(" ops/s")
        .to_string()
}

/// A rate over the run's timed span, or "too short" where the span was too short to time.
fn rate(r: &Value, text: String) -> String {
    let c = |k: &str| num(r, &["clock", k]).unwrap_or(0.0);
    match crate::units::too_short(
        num(r, &["wall_s"]).unwrap_or(f64::NAN),
        c("overhead_ns"),
        c("ns_per_tick"),
    ) {
        Some(_) => "too short".into(),
        None => text,
    }
}

fn row(t: &mut Table, k: TableKind, rest: String, r: &Value) {
    let f = |p: &[&str]| num(r, p).unwrap_or(f64::NAN);
    let wall = f(&["wall_s"]);
    let (user, sys) = (
        f(&["cpu", "process", "user_s"]),
        f(&["cpu", "process", "sys_s"]),
    );
    let mib = rate(r, fmt_mib_s(f(&["mib_s"])));
    let io = rate(r, iops(f(&["iops"])));
    let cells: Vec<String> = match k {
        TableKind::Cpu => vec![
            rest,
            format!("{user:.3}"),
            format!("{sys:.3}"),
            format!("{wall:.3}"),
            format!("{:.1}%", user / wall * 100.0),
            format!("{:.1}%", sys / wall * 100.0),
            fmt_ns(f(&["ns_per_op"])),
            opt3(num(r, &["syscalls", "method_per_op"])),
        ],
        TableKind::Throughput => vec![
            rest,
            mib,
            format!("{:.1}%", sys / wall * 100.0),
            format!("{:.1}%", user / wall * 100.0),
            fmt_size(num(r, &["bytes"]).unwrap_or(0.0) as u64),
            format!("{wall:.3}"),
        ],
        TableKind::Latency => vec![
            rest,
            format!("{wall:.3}"),
            fmt_ns(f(&["latency", "mean_ns"])),
            io,
            mib,
            opt0(num(r, &["syscalls", "method_count"])),
            opt0(num(r, &["uring", "enters"])),
        ],
        TableKind::Batches => vec![
            rest,
            format!("{wall:.3}"),
            io,
            mib,
            fmt_ns(f(&["latency", "mean_ns"])),
            opt0(num(r, &["uring", "enters"])),
            opt0(num(r, &["uring", "requests"])),
            opt0(num(r, &["uring", "big_batches"])),
            opt3(num(r, &["uring", "mean_batch"])),
        ],
        TableKind::Lines => vec![
            rest,
            format!("{:.3}", wall * 1e3),
            format!("{:.3}", user * 1e3),
            format!("{:.3}", sys * 1e3),
        ],
        TableKind::Nowait => vec![
            rest,
            fmt_ns(f(&["ns_per_op"])),
            pct(num(r, &["nowait", "would_block_share"])),
            pct(num(r, &["derived", "punted_fraction"])),
            opt3(num(r, &["derived", "ctx_switches_per_op"])),
            format!("{:.3}", io_wq_cpu(r)),
        ],
        TableKind::Nop => return nop_row(t, rest, r),
    };
    t.row(cells);
}

/// A row of the offload suite's NOP table: a run, or the clock's own cost.
fn nop_row(t: &mut Table, rest: String, r: &Value) {
    let tsc = |c: &Value| txt(c, &["kind"]).to_ascii_lowercase().contains("tsc");
    if r.get("workload").and_then(|w| w.as_str()) == Some("clock") {
        let c = &r["clock"];
        let ticks = num(c, &["overhead_ticks_mean"]).unwrap_or(f64::NAN);
        t.row([
            "clock read (mean)".to_string(),
            fmt_ns(num(c, &["overhead_ns"]).unwrap_or(f64::NAN)),
            if tsc(c) {
                format!("{ticks:.1}")
            } else {
                "-".into()
            },
        ]);
        t.note(
            [""],
            format!("one clock read: {}", txt(c, &["description"])),
        );
        return;
    }
    let ns = num(r, &["ns_per_op"]).unwrap_or(f64::NAN);
    let hz = num(r, &["clock", "hz"]).unwrap_or(f64::NAN);
    t.row([
        rest,
        fmt_ns(ns),
        if tsc(&r["clock"]) {
            format!("{:.0}", ns * hz / 1e9)
        } else {
            "-".into()
        },
        fmt_ns(num(r, &["latency", "p50_ns"]).unwrap_or(f64::NAN)),
        fmt_ns(num(r, &["latency", "p99_ns"]).unwrap_or(f64::NAN)),
    ]);
}

/// Where the profiled points' time went: samples, kernel share, the copy share (`COPY_GROUP`) and the top
/// kernel function by self share, a row per point that asked for a profile or has one, under its step.
/// Nothing when no point did.
fn profile_table(s: &SuiteFile, recs: &[Value], d: &mut Doc) {
    let asked = |r: &Value| {
        series::at(r, &["profile"]).is_some_and(|p| !p.is_null())
            || series::at(r, &["spec", "profile"])
                .and_then(|p| p.as_str())
                .is_some_and(|p| p != "none")
    };
    let profiled: Vec<&Value> = recs
        .iter()
        .filter(|rec| rec.get("result").is_some_and(asked))
        .collect();
    if profiled.is_empty() {
        return;
    }
    d.blank().line(format!(
        "Where the time goes (sampled profiles{}): kernel % = samples in kernel code; copy % = in the \
         \"{COPY_GROUP}\" group",
        s.profile_figure.as_deref().map(|f| format!("; {f}")).unwrap_or_default()
    ));
    let mut table: Option<Table> = None;
    let mut last_step = None;
    for rec in &profiled {
        let step = step_of(rec);
        if last_step.as_ref() != Some(&step) {
            if let Some(t) = table.take() {
                d.table(t);
            }
            d.line(step.clone());
            table = Some(
                Table::new(
                    &[
                        ("point", L),
                        ("samples", R),
                        ("kernel %", R),
                        ("copy %", R),
                        ("top kernel function (self %)", Align::Wrap),
                    ],
                    1,
                )
                .indent(2),
            );
            last_step = Some(step);
        }
        profile_row(
            table.as_mut().expect("made above"),
            point_rest(s, rec),
            &rec["result"],
        );
    }
    if let Some(t) = table {
        d.table(t);
    }
    let few = |rec: &&Value| {
        num(&rec["result"], &["profile", "samples"]).is_some_and(|n| n > 0.0 && n < FEW_SAMPLES)
    };
    if profiled.iter().any(few) {
        d.line(format!(
            "  * fewer than {FEW_SAMPLES} samples: each moves a share by over 1%; a longer run (without \
             --quick) or a higher --profile-hz gives more"
        ));
    }
}

/// Below this many samples a share moves by a percent or more per sample: such rows are marked.
const FEW_SAMPLES: f64 = 100.0;

/// One point's row of the profile table.
fn profile_row(t: &mut Table, rest: String, r: &Value) {
    let Some(p) = r.get("profile").filter(|p| !p.is_null()) else {
        return t.note(
            [rest],
            "no profile recorded (the run's notes and fallbacks say why)",
        );
    };
    let list = |k: &str| -> Vec<&Value> {
        p.get(k)
            .and_then(|g| g.as_array())
            .map(|a| a.iter().collect())
            .unwrap_or_default()
    };
    let kernel = |g: &&Value| g.get("kernel").and_then(|k| k.as_bool()) == Some(true);
    let share = |g: &Value| num(g, &["share"]).unwrap_or(0.0);
    let groups = list("groups");
    let samples = num(p, &["samples"]).unwrap_or(0.0);
    if samples == 0.0 {
        return t.note(
            [rest],
            "0 samples: no samples (a pass shorter than the sampling period, or see the profile's notes)",
        );
    }
    let top = list("top_self")
        .into_iter()
        .find(kernel)
        .map(|f| format!("{} ({:.1}%)", txt(f, &["name"]), share(f) * 100.0))
        .unwrap_or_else(|| "-".into());
    let kernel_pct = groups
        .iter()
        .copied()
        .filter(kernel)
        .map(share)
        .sum::<f64>()
        * 100.0;
    let copy_pct = groups
        .iter()
        .find(|g| txt(g, &["name"]) == COPY_GROUP)
        .map_or(0.0, |g| share(g))
        * 100.0;
    t.row([
        rest,
        format!(
            "{samples:.0}{}",
            if samples < FEW_SAMPLES { "*" } else { "" }
        ),
        format!("{kernel_pct:.1}%"),
        format!("{copy_pct:.1}%"),
        top,
    ]);
}

fn pct(v: Option<f64>) -> String {
    v.map(|x| format!("{:.1}%", x * 100.0))
        .unwrap_or_else(|| "-".into())
}

/// CPU seconds of the run's io-wq workers (iou-wrk-*).
fn io_wq_cpu(r: &Value) -> f64 {
    let Some(hs) = r.pointer("/cpu/helpers").and_then(|h| h.as_array()) else {
        return 0.0;
    };
    hs.iter()
        .filter(|h| txt(h, &["comm"]).starts_with("iou-wrk"))
        .map(|h| num(h, &["user_s"]).unwrap_or(0.0) + num(h, &["sys_s"]).unwrap_or(0.0))
        .fold(0.0, |a, b| a + b)
}

fn opt0(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.0}")).unwrap_or_else(|| "-".into())
}

fn opt3(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.3}")).unwrap_or_else(|| "-".into())
}

/// Per method: runs, median, min, max and stdev of the run time (first write to fsync), and median CPU.
fn lines_summary(recs: &[Value], d: &mut Doc) {
    let mut methods: Vec<String> = Vec::new();
    for r in recs.iter().filter_map(|r| r.get("result")) {
        let m = txt(r, &["spec", "method"]);
        if !methods.contains(&m) {
            methods.push(m);
        }
    }
    d.blank()
        .line("Per method (first write to fsync done, ms):");
    let mut t = Table::new(
        &[
            ("method", L),
            ("runs", R),
            ("median", R),
            ("min", R),
            ("max", R),
            ("stdev", R),
            ("user med", R),
            ("sys med", R),
        ],
        1,
    )
    .indent(2);
    for m in &methods {
        let rs: Vec<&Value> = recs
            .iter()
            .filter_map(|r| r.get("result"))
            .filter(|r| txt(r, &["spec", "method"]) == *m)
            .collect();
        let get = |p: &[&str]| -> Vec<f64> {
            rs.iter()
                .filter_map(|r| num(r, p))
                .map(|x| x * 1e3)
                .collect()
        };
        if let Some(w) = series::stat(&get(&["wall_s"])) {
            let u =
                series::stat(&get(&["cpu", "process", "user_s"])).map_or(f64::NAN, |s| s.median);
            let k = series::stat(&get(&["cpu", "process", "sys_s"])).map_or(f64::NAN, |s| s.median);
            let f3 = |v: f64| format!("{v:.3}");
            t.row([
                m.clone(),
                w.n.to_string(),
                f3(w.median),
                f3(w.min),
                f3(w.max),
                f3(w.stdev),
                f3(u),
                f3(k),
            ]);
        }
    }
    d.table(t);
}

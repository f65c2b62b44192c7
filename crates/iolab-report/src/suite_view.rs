//! A suite's tables (one per step, columns as the seed's table has them, and those the redesigned suites
//! added: see `suite_cols`), the profiled points' table, the lines suite's per-method summary and what
//! the new columns mean, as a [`Doc`]: printed to the terminal's width and exported as Markdown
//! (`--md`). Figures carry human units (`iolab_engine::units`); rates over spans too short to time say so.
//!
//! With `iolab suite --repeat N` a step's table shows each point once (the run with the median time per
//! op) with how many ran and the range of the middle runs; decimal lines show every run.

use crate::suite_cols::{self as cols, iops, opt, rate, txt};
use crate::text::{Align, Doc, Table};
use iolab_engine::spec::MethodKind;
use iolab_engine::units::{fmt_mib_s, fmt_ns};
use iolab_lab::series::{self, num};
use iolab_lab::suite::{SuiteFile, TableKind, COPY_GROUP};
use iolab_lab::suite_rows::{self as rows, Group, FEW_TICKS};
use serde_json::Value;

use Align::{Left as L, Right as R};

/// The record's point without the step (the step heads its rows) and the keys the command line set on
/// every point (the lead line names them).
fn point_rest(s: &SuiteFile, rec: &Value) -> String {
    series::record_point(rec)
        .into_iter()
        .filter(|(k, _)| k != "step" && k != "quick" && !s.overrides.contains_key(k))
        .map(|(k, v)| match k.as_str() {
            "target" => format!("target={}", iolab_lab::series::shown(&v)),
            _ => format!("{k}={v}"),
        })
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

/// The table kind of step `step`: its own (`table = "syscalls"`) or the suite's.
fn kind_of(s: &SuiteFile, step: &str) -> TableKind {
    s.steps
        .iter()
        .find(|st| st.label == step)
        .and_then(|st| st.table)
        .unwrap_or(s.table)
}

/// The suite's document over its records (in file order): a table per step, what the new columns
/// mean, the profiled points, the notes and the seed's published figures.
pub fn doc(s: &SuiteFile, recs: &[Value]) -> Doc {
    let mut d = Doc::new();
    d.blank()
        .line(format!("{}: reproduces {}", s.name, s.reproduces))
        .blank();
    let emulated = recs.iter().find_map(|r| {
        let h = r.get("result")?.get("host")?;
        serde_json::from_value::<iolab_engine::result::Host>(h.clone())
            .ok()?
            .emulated_line()
    });
    if let Some(e) = emulated {
        d.line(format!("emulated: {e}")).blank();
    }
    let gs = rows::groups(recs);
    let repeated = rows::repeated(&gs);
    step_tables(s, &gs, repeated, &mut d);
    let of_kind = |k: TableKind| -> Vec<Value> {
        recs.iter()
            .filter(|r| kind_of(s, &step_of(r)) == k)
            .cloned()
            .collect()
    };
    let lines = of_kind(TableKind::Lines);
    if !lines.is_empty() {
        lines_summary(&lines, &mut d);
    }
    gap_legend(&of_kind(TableKind::Cpu), &mut d);
    let thr = of_kind(TableKind::Throughput);
    if thr.iter().any(|r| r.get("result").is_some()) {
        throughput_legend(&thr, &mut d);
    }
    if repeated {
        d.blank().line(format!(
            "Each point ran {} times, in rounds of alternating order: a row is the run with the median time \
             per op, and 'middle runs' the range of the middle runs (all of them up to 3, without the fastest \
             and slowest quarter above): differences inside it are noise on this machine.",
            gs.iter().map(|g| g.runs.len()).max().unwrap_or(1)
        ));
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

/// A table per step, a row per point: repeats of a point are one row (its median run, with the middle
/// runs' range); decimal lines show every run.
fn step_tables(s: &SuiteFile, gs: &[Group], repeated: bool, d: &mut Doc) {
    let mut rows: Vec<(&Value, Option<&Group>)> = Vec::new();
    for g in gs {
        if cols::shows_spread(kind_of(s, &step_of(g.rec))) {
            rows.push((g.rec, Some(g)));
        } else {
            rows.extend(g.runs.iter().map(|r| (*r, None)));
        }
    }
    let mut last_step: Option<String> = None;
    let mut table: Option<Table> = None;
    for (rec, g) in rows {
        let step = step_of(rec);
        let kind = kind_of(s, &step);
        let spread = g.filter(|_| repeated);
        if last_step.as_ref() != Some(&step) {
            if let Some(t) = table.take() {
                d.table(t);
            }
            d.line(step.clone());
            table = Some(new_table(kind, spread.is_some()));
            last_step = Some(step);
        }
        let t = table.as_mut().expect("made above");
        let mut rest = point_rest(s, rec);
        if g.is_some() {
            rest = rest
                .split(' ')
                .filter(|w| !w.starts_with("repeat="))
                .collect::<Vec<_>>()
                .join(" ");
        }
        match (rec.get("result"), rec.get("error").and_then(|e| e.as_str())) {
            (Some(r), _) => {
                let (mut cells, note) = row(kind, rest, r);
                if let Some(g) = spread.filter(|_| num(r, &["ns_per_op"]).is_some()) {
                    cells.resize(columns(kind).len(), String::new());
                    cells.extend(cols::spread_cells(kind, g));
                }
                t.row(cells);
                if let Some(n) = note {
                    t.note([""], n);
                }
            }
            (None, Some(e)) if iolab_lab::suite::point_failed(rec) => {
                t.note([rest], format!("failed: {e}"))
            }
            (None, Some(e)) => t.note([rest], format!("not run: {e}")),
            _ => {}
        }
    }
    if let Some(t) = table {
        d.table(t);
    }
}

/// The heads of a table of kind `k` (without the repeats' columns).
fn columns(k: TableKind) -> &'static [(&'static str, Align)] {
    match k {
        TableKind::Cpu => cols::CPU,
        TableKind::Throughput => cols::THROUGHPUT,
        TableKind::Latency => &[
            ("point", L),
            ("runtime s", R),
            ("avg latency", R),
            ("IOPS", R),
            ("throughput", R),
            ("syscalls", R),
            ("uring_enter", R),
        ],
        TableKind::Batches => cols::BATCHES,
        TableKind::Lines => cols::LINES,
        TableKind::Nowait => &[
            ("point", L),
            ("time/op", R),
            ("would block", R),
            ("punted", R),
            ("ctx sw/op", R),
            ("io-wq CPU s", R),
        ],
        TableKind::Nop => crate::suite_nop::COLUMNS,
        TableKind::Syscalls => cols::SYSCALLS,
    }
}

/// A step's table; `spread`: with the repeats' columns.
fn new_table(k: TableKind, spread: bool) -> Table {
    let mut heads = columns(k).to_vec();
    if spread {
        heads.extend(cols::spread_heads(k));
    }
    Table::new(&heads, 1).indent(2)
}

/// One row's cells, and a note to print under it (the clock row's description).
fn row(k: TableKind, rest: String, r: &Value) -> (Vec<String>, Option<String>) {
    let f = |p: &[&str]| num(r, p).unwrap_or(f64::NAN);
    let wall = f(&["wall_s"]);
    let cells: Vec<String> = match k {
        TableKind::Cpu => cols::cpu_cells(rest, r),
        TableKind::Throughput => cols::throughput_cells(rest, r),
        TableKind::Latency => vec![
            rest,
            format!("{wall:.3}"),
            fmt_ns(f(&["latency", "mean_ns"])),
            rate(r, iops(f(&["iops"]))),
            rate(r, fmt_mib_s(f(&["mib_s"]))),
            opt(num(r, &["syscalls", "method_count"]), 0),
            opt(num(r, &["uring", "enters"]), 0),
        ],
        TableKind::Batches => cols::batches_cells(rest, r),
        TableKind::Lines => cols::lines_cells(rest, r),
        TableKind::Nowait => vec![
            rest,
            fmt_ns(f(&["ns_per_op"])),
            pct(num(r, &["nowait", "would_block_share"])),
            pct(num(r, &["derived", "punted_fraction"])),
            opt(num(r, &["derived", "ctx_switches_per_op"]), 3),
            format!("{:.3}", io_wq_cpu(r)),
        ],
        TableKind::Syscalls => cols::syscalls_cells(rest, r),
        TableKind::Nop => return crate::suite_nop::nop_row(rest, r),
    };
    (cells, None)
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
    // Read as `report` holds them too (packed: `series::items`).
    let list = |k: &str| -> Vec<Value> {
        p.get(k)
            .map(|g| iolab_lab::series::items(g).into_owned())
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
        .iter()
        .find(kernel)
        .map(|f| format!("{} ({:.1}%)", txt(f, &["name"]), share(f) * 100.0))
        .unwrap_or_else(|| "-".into());
    let kernel_pct = groups.iter().filter(kernel).map(share).sum::<f64>() * 100.0;
    let copy_pct = groups
        .iter()
        .find(|g| txt(g, &["name"]) == COPY_GROUP)
        .map_or(0.0, share)
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

/// Per method over its runs: the wall time's median, min, max and stdev; the median write time, fsync
/// time, CPU (the note's clock()) and write calls.
fn lines_summary(recs: &[Value], d: &mut Doc) {
    let mut methods: Vec<String> = Vec::new();
    for r in recs.iter().filter_map(|r| r.get("result")) {
        let m = txt(r, &["spec", "method"]);
        if !methods.contains(&m) {
            methods.push(m);
        }
    }
    d.blank().line(
        "Per method, ms (wall: the timed span; cpu: user + sys, what the note's clock() counted):",
    );
    let mut t = Table::new(
        &[
            ("method", L),
            ("runs", R),
            ("wall med", R),
            ("min", R),
            ("max", R),
            ("stdev", R),
            ("writes med", R),
            ("fsync med", R),
            ("cpu med", R),
            ("write calls", R),
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
        let get = |f: &dyn Fn(&Value) -> Option<f64>| -> Vec<f64> {
            rs.iter().filter_map(|r| f(r)).collect()
        };
        let med = |v: Vec<f64>| iolab_engine::stats::stat(&v).map(|s| s.median);
        let ms = |p: &'static [&'static str]| move |r: &Value| num(r, p).map(|v| v * 1e3);
        let Some(w) = iolab_engine::stats::stat(&get(&ms(&["wall_s"]))) else {
            continue;
        };
        let cpu = |r: &Value| {
            Some(
                (num(r, &["cpu", "process", "user_s"])? + num(r, &["cpu", "process", "sys_s"])?)
                    * 1e3,
            )
        };
        let f3 = |v: f64| format!("{v:.3}");
        t.row([
            m.clone(),
            w.n.to_string(),
            f3(w.median),
            f3(w.min),
            f3(w.max),
            f3(w.stdev),
            opt(med(get(&ms(&["write_s"]))), 3),
            opt(med(get(&ms(&["fsync_s"]))), 3),
            opt(med(get(&cpu)), 3),
            opt(med(get(&|r: &Value| num(r, &["write_calls"]))), 0),
        ]);
    }
    d.table(t);
}

/// What the throughput table's columns are, after it.
fn throughput_legend(recs: &[Value], d: &mut Doc) {
    let rough = recs
        .iter()
        .filter_map(|r| r.get("result"))
        .any(|r| num(r, &["cpu", "system_wide", "ticks"]).is_some_and(|t| t < FEW_TICKS));
    d.blank().line(format!(
        "sys % and user %: the process's own CPU time over the timed span's wall time. core kern: the busiest \
         CPU's kernel share system-wide over the same span (/proc/stat: system, irq and softirq ticks of every \
         task, kworkers included; the paper's \"busier core\"){}. device: the bytes the device read or wrote over \
         the timed span (its /sys/block/DEV/stat sectors, the whole disk's); \"cache\": a buffered read that \
         took less than half its bytes from the device, a page-cache row; \"part\": less than 90%; neither \
         is a device figure. fsync: the time in fsync inside the timed span (writes that reach the device).",
        if rough {
            "; * a run under 0.1 s, whose share counts fewer than 10 ticks of 10 ms: rough"
        } else {
            ""
        }
    ));
}

/// What the time between writes means for each way of writing in `recs`, as the thesis's Figure 19 read
/// it for io_uring and its Figures 37-38 for write().
fn gap_legend(recs: &[Value], d: &mut Doc) {
    let mut seen: Vec<String> = Vec::new();
    let mut lines = Vec::new();
    for r in recs.iter().filter_map(|r| r.get("result")) {
        let Some(m) = MethodKind::parse(&txt(r, &["spec", "method"])) else {
            continue;
        };
        let one = num(r, &["spec", "qd"]) == Some(1.0);
        let key = format!("{}{}", m.name(), if one { " qd 1" } else { "" });
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let meaning = gap_meaning(m, one, txt(r, &["spec", "ring", "sqpoll"]) == "true");
        if !meaning.is_empty() {
            lines.push(meaning);
        }
    }
    if lines.is_empty() {
        return;
    }
    d.blank().line(
        "Time between writes (gap: from one op's start to the next op's start on the same thread, the \
         thesis's Figure 19; gap p50 and gap p99 its median and 99th percentile):",
    );
    for l in lines {
        d.line(format!("  - {l}"));
    }
}

/// What the gap is for method `m` (`one`: one request in flight at a time), as its file says.
fn gap_meaning(m: MethodKind, one: bool, sqpoll: bool) -> String {
    let info = m.info();
    (info.gap)(info, one, sqpoll)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_gap_means_what_each_method_does() {
        let r = |method: &str, qd: u32, sqpoll: bool| json!({"result": {"spec": {"method": method, "qd": qd, "ring": {"sqpoll": sqpoll}}}});
        let mut d = Doc::new();
        gap_legend(
            &[
                r("sync", 1, false),
                r("io_uring", 64, true),
                r("io_uring", 1, true),
                r("mmap", 1, false),
                r("sync", 1, false),
            ],
            &mut d,
        );
        let l = d.render(None);
        assert_eq!(l.matches("\n  - ").count(), 4, "{l}");
        for want in [
            "sync: one call after the other",
            "0 within a batch",
            "Figure 36 blocking loop",
            "the SQPOLL thread noticing it",
            "mmap: one memcpy",
        ] {
            assert!(l.contains(want), "{want}: {l}");
        }
        // At 80 columns every item hangs under its text and no line is longer.
        for line in d.render(Some(80)).lines() {
            assert!(line.chars().count() <= 80, "{line}");
        }
        let mut none = Doc::new();
        gap_legend(&[], &mut none);
        assert!(none.blocks.is_empty());
    }

    #[test]
    fn a_short_runs_busier_core_share_is_said_rough_after_the_table() {
        let r = |ticks: u64| json!({"result": {"cpu": {"system_wide": {"ticks": ticks}}}});
        let mut d = Doc::new();
        throughput_legend(&[r(50)], &mut d);
        assert!(!d.render(None).contains("rough"));
        let mut d = Doc::new();
        throughput_legend(&[r(50), r(3)], &mut d);
        assert!(d.render(None).contains("* a run under 0.1 s"));
    }

    use iolab_lab::series;
    use iolab_lab::suite::load;

    /// The suite's tables as the unwrapped text the tests read.
    fn table(s: &SuiteFile, recs: &[Value]) -> String {
        doc(s, recs).render(None)
    }

    #[test]
    fn profiled_points_get_the_figure_4_table() {
        let s = load("blocksize").unwrap();
        let share = |name: &str, kernel: bool, share: f64| serde_json::json!({"name": name, "kernel": kernel, "samples": 1, "share": share});
        let rec = |bs: &str, profile: Value| {
            series::record(
                &[
                    ("step".into(), "disk".into()),
                    ("op".into(), "write".into()),
                    ("bs".into(), bs.into()),
                ],
                Ok(serde_json::json!({
                    "spec": {"profile": "separate"},
                    "wall_s": 1.0, "mib_s": 1.0, "bytes": 1,
                    "profile": profile,
                })),
            )
        };
        let recs = vec![
            rec(
                "512",
                serde_json::json!({
                    "samples": 1000,
                    "groups": [share(COPY_GROUP, true, 0.25), share("syscall entry/exit", true, 0.5),
                               share("iolab", false, 0.25)],
                    "top_self": [share("main", false, 0.3), share("rep_movs_alternative", true, 0.2)],
                    "notes": [],
                }),
            ),
            rec(
                "1m",
                serde_json::json!({"samples": 0, "groups": [], "top_self": [], "notes": ["not permitted"]}),
            ),
            rec("4m", Value::Null),
            rec(
                "8m",
                serde_json::json!({"samples": 50, "groups": [share(COPY_GROUP, true, 1.0)],
                                   "top_self": [share("copy_page", true, 1.0)]}),
            ),
        ];
        let t = table(&s, &recs);
        assert!(t.contains("Figure 4"), "{t}");
        let row = |bs: &str| {
            t.lines()
                .rfind(|l| l.contains(&format!("bs={bs} ")))
                .unwrap_or_else(|| panic!("{bs}: {t}"))
                .to_string()
        };
        let r = row("512");
        assert!(
            r.contains("1000") && r.contains("75.0%") && r.contains("25.0%"),
            "{r}"
        );
        assert!(r.contains("rep_movs_alternative (20.0%)"), "{r}");
        assert!(row("1m").contains("no samples ("), "{t}");
        assert!(row("4m").contains("no profile recorded"), "{t}");
        // Few samples are marked, and the mark is explained.
        let r8 = row("8m");
        let words: Vec<&str> = r8.split_whitespace().collect();
        assert_eq!(words[2..6], ["50*", "100.0%", "100.0%", "copy_page"], "{t}");
        assert!(
            !r.contains('*') && t.contains("* fewer than 100 samples"),
            "{t}"
        );
        // Without profiles, no such table.
        let plain = series::record(&[("step".into(), "disk".into())], Ok(serde_json::json!({})));
        assert!(!table(&s, &[plain]).contains("Where the time goes"));
    }

    #[test]
    fn repeated_points_are_one_row_with_the_middle_runs() {
        let s = load("shared-ring").unwrap();
        let rec = |ring: &str, k: u32, iops: f64| {
            series::record(
                &[
                    ("step".into(), "Table 4: 1 thread".into()),
                    ("repeat".into(), k.to_string()),
                    ("ring".into(), ring.into()),
                ],
                Ok(serde_json::json!({
                    "wall_s": 1.0, "iops": iops, "ns_per_op": 1e9 / iops, "mib_s": 1.0,
                    "latency": {"mean_ns": 1000.0},
                    "spec": {"ring": {"design": ring}},
                    "uring": {"enters": 10, "requests": 20, "big_batches": 0, "mean_batch": 2.0,
                              "mean_inflight": 3.5, "lock_contended": 7},
                })),
            )
        };
        let recs = vec![
            rec("per-thread", 1, 1000.0),
            rec("shared", 1, 500.0),
            rec("per-thread", 2, 1200.0),
            rec("shared", 2, 400.0),
            rec("per-thread", 3, 1100.0),
            rec("shared", 3, 450.0),
        ];
        let t = table(&s, &recs);
        let rows: Vec<&str> = t.lines().filter(|l| l.contains("ring=")).collect();
        assert_eq!(rows.len(), 2, "{t}");
        assert!(!t.contains("repeat="), "{t}");
        assert!(t.contains("middle runs IOPS"), "{t}");
        let w: Vec<&str> = rows[1].split_whitespace().collect();
        // The median run (450 IOPS), its in-flight and mutex-wait columns, then 3 runs and their range.
        assert_eq!(w[0], "ring=shared");
        assert_eq!(w[2], "450.0");
        assert_eq!(w[w.len() - 4..], ["3.5", "7", "3", "400.0-500.0"], "{t}");
        assert!(t.contains("Each point ran 3 times, in rounds"), "{t}");
    }
}

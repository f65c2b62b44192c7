//! What suite tables show beyond the seeds' own columns, and repeated runs:
//! - `iolab suite --repeat N` runs every point N times; a table shows each point once, as the run with the
//!   median ns/op, with the range of its middle runs (`survey::middle_range`, as the survey shows its
//!   rounds), and the findings and answers read the same median rows ([`rows_of`], each with its
//!   [`Spread`]);
//! - the columns the redesigned suites need: the busier core's kernel share system-wide, the bytes read
//!   from the device and the fsync time (blocksize); requests in flight and mutex waits (shared-ring);
//!   the time between writes and what it means per method (writes); write and fsync apart, and the write
//!   calls, of the decimal lines (kernel-user); the kernel's syscall totals, like `strace -c` (uring's
//!   Table 3).

use crate::findings_compare::{Row, Spread};
use crate::series::{self, num};
use crate::spec::MethodKind;
use crate::suite::TableKind;
use crate::units::fmt_size;
use serde_json::Value;

fn txt(v: &Value, path: &[&str]) -> String {
    series::text(series::at(v, path))
}

/// A record's point without its `repeat` key: the point its repeats share.
pub fn shared_point(rec: &Value) -> Vec<(String, String)> {
    series::record_point(rec)
        .into_iter()
        .filter(|(k, _)| k != "repeat")
        .collect()
}

/// One point's records: every repeat, and the one a table shows.
pub struct Group<'a> {
    /// The run with the median ns/op (the lower middle of an even count), else the first record.
    pub rec: &'a Value,
    pub runs: Vec<&'a Value>,
}

fn ns_of(rec: &Value) -> Option<f64> {
    num(rec.get("result")?, &["ns_per_op"]).filter(|v| v.is_finite())
}

impl<'a> Group<'a> {
    /// The records that have an iolab run's result, by ns/op.
    fn ran(&self) -> Vec<&'a Value> {
        let mut v: Vec<&Value> = self
            .runs
            .iter()
            .copied()
            .filter(|r| ns_of(r).is_some())
            .collect();
        v.sort_by(|a, b| ns_of(a).unwrap_or(0.0).total_cmp(&ns_of(b).unwrap_or(0.0)));
        v
    }

    /// The lowest and highest of figure `path` over the middle runs, and how many ran.
    pub fn middle(&self, path: &[&str]) -> Option<(usize, f64, f64)> {
        let xs: Vec<f64> = self
            .ran()
            .iter()
            .filter_map(|r| num(r.get("result")?, path))
            .collect();
        (xs.len() > 1).then(|| {
            let (lo, hi) = crate::survey::middle_range(xs.clone());
            (xs.len(), lo, hi)
        })
    }

    /// The spread of ns/op over the repeats, when there were some.
    pub fn spread(&self) -> Option<Spread> {
        self.middle(&["ns_per_op"])
            .map(|(runs, low_ns, high_ns)| Spread {
                runs,
                low_ns,
                high_ns,
            })
    }
}

/// The records grouped by point (repeats together), in the order each point first appears.
pub fn groups(recs: &[Value]) -> Vec<Group<'_>> {
    let mut keys: Vec<Vec<(String, String)>> = Vec::new();
    let mut out: Vec<Vec<&Value>> = Vec::new();
    for r in recs {
        let k = shared_point(r);
        match keys.iter().position(|x| *x == k) {
            Some(i) => out[i].push(r),
            None => {
                keys.push(k);
                out.push(vec![r]);
            }
        }
    }
    out.into_iter()
        .map(|runs| {
            let mut g = Group { rec: runs[0], runs };
            let ran = g.ran();
            if !ran.is_empty() {
                g.rec = ran[(ran.len() - 1) / 2];
            }
            g
        })
        .collect()
}

/// The comparing rules' rows: one per point, its median run, with the spread of its repeats.
pub fn rows_of(recs: &[Value]) -> Vec<Row> {
    groups(recs)
        .iter()
        .filter_map(|g| {
            let mut row = Row::of_record(g.rec)?;
            row.spread = g.spread();
            Some(row)
        })
        .collect()
}

/// Whether any point ran more than once.
pub fn repeated(gs: &[Group]) -> bool {
    gs.iter().any(|g| g.runs.len() > 1)
}

/// The figure whose spread a table shows for repeated points: its heading and its path.
fn spread_figure(k: TableKind) -> Option<(&'static str, &'static [&'static str])> {
    match k {
        TableKind::Throughput => Some(("MiB/s", &["mib_s"])),
        TableKind::Latency | TableKind::Batches | TableKind::Syscalls => Some(("IOPS", &["iops"])),
        TableKind::Cpu | TableKind::Nowait | TableKind::Nop => Some(("ns/op", &["ns_per_op"])),
        TableKind::Lines => None,
    }
}

/// The heading of the repeats' columns.
pub fn spread_header(k: TableKind) -> String {
    match spread_figure(k) {
        Some((unit, _)) => format!(" {:>4} {:>21}", "runs", format!("middle runs {unit}")),
        None => String::new(),
    }
}

/// A point's repeats' columns: how many ran and the range of the middle runs.
pub fn spread_cells(k: TableKind, g: &Group) -> String {
    let Some((_, path)) = spread_figure(k) else {
        return String::new();
    };
    match g.middle(path) {
        Some((n, lo, hi)) => {
            let digits = if hi >= 100.0 { 0 } else { 1 };
            format!(" {n:>4} {:>21}", format!("{lo:.digits$}-{hi:.digits$}"))
        }
        None => format!(" {:>4} {:>21}", g.ran().len(), "-"),
    }
}

// ---------------------------------------------------------------------------------------------------
// Columns of the redesigned tables.

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map(|x| format!("{x:.digits$}"))
        .unwrap_or_else(|| "-".into())
}

/// The busiest CPU counted fewer ticks than this over the run: its kernel share is rough (marked *).
pub const FEW_TICKS: f64 = 10.0;

pub fn throughput_header() -> String {
    format!(
        "  {:<34} {:>10} {:>7} {:>7} {:>10} {:>9} {:>8} {:>9} {:>8}",
        "point", "MiB/s", "sys %", "user %", "core kern", "dev read", "fsync s", "moved", "wall s"
    )
}

/// MiB/s; the process's system and user share of the wall time; the busiest CPU's kernel share
/// system-wide; the bytes read from the device; the time in fsync; bytes moved; wall seconds.
pub fn throughput_row(rest: &str, r: &Value) -> String {
    let f = |p: &[&str]| num(r, p).unwrap_or(f64::NAN);
    let wall = f(&["wall_s"]);
    let core = num(r, &["cpu", "system_wide", "busiest_kernel_share"]).map(|s| {
        let rough = num(r, &["cpu", "system_wide", "ticks"]).is_some_and(|t| t < FEW_TICKS);
        format!("{:.1}%{}", s * 100.0, if rough { "*" } else { " " })
    });
    let read = num(r, &["syscalls", "kernel_rw", "read_bytes"]).unwrap_or(0.0);
    let reads = txt(r, &["spec", "op"]) == "read";
    let flush = num(r, &["flushes", "total_s"]).filter(|_| f(&["flushes", "calls"]) > 0.0);
    format!(
        "  {rest:<34} {:>10.1} {:>6.1}% {:>6.1}% {:>10} {:>9} {:>8} {:>9} {wall:>8.3}",
        f(&["mib_s"]),
        f(&["cpu", "process", "sys_s"]) / wall * 100.0,
        f(&["cpu", "process", "user_s"]) / wall * 100.0,
        core.unwrap_or_else(|| "-".into()),
        if reads {
            fmt_size(read as u64)
        } else {
            "-".into()
        },
        opt(flush, 3),
        fmt_size(num(r, &["bytes"]).unwrap_or(0.0) as u64),
    )
}

/// What the throughput table's columns are, after it.
pub fn throughput_legend(recs: &[Value]) -> String {
    let rough = recs
        .iter()
        .filter_map(|r| r.get("result"))
        .any(|r| num(r, &["cpu", "system_wide", "ticks"]).is_some_and(|t| t < FEW_TICKS));
    format!(
        "\nsys % and user %: the process's own CPU time over the timed span's wall time. core kern: the busiest \
         CPU's kernel share system-wide over the same span (/proc/stat: system, irq and softirq ticks of every \
         task, kworkers included; the paper's \"busier core\"){}. dev read: bytes the storage layer fetched for \
         the process (/proc/self/io read_bytes): a buffered read that came from the page cache fetched none. \
         fsync s: the time in fsync inside the timed span (writes that reach the device).\n",
        if rough {
            "; * a run under 0.1 s, whose share counts fewer than 10 ticks of 10 ms: rough"
        } else {
            ""
        }
    )
}

pub fn batches_header() -> String {
    format!(
        "  {:<34} {:>9} {:>10} {:>9} {:>10} {:>8} {:>8} {:>8} {:>9} {:>9} {:>11}",
        "point",
        "runtime s",
        "IOPS",
        "MiB/s",
        "avg lat us",
        "calls",
        "reqs",
        "big 32+",
        "avg batch",
        "in flight",
        "mutex waits"
    )
}

/// The course report's Tables 4-6 columns, then the mean requests in flight and, for the shared ring,
/// how often a thread found its mutex taken.
pub fn batches_row(rest: &str, r: &Value) -> String {
    let f = |p: &[&str]| num(r, p).unwrap_or(f64::NAN);
    let shared = txt(r, &["spec", "ring", "design"]) == "shared";
    format!(
        "  {rest:<34} {:>9.3} {:>10.0} {:>9.1} {:>10.2} {:>8} {:>8} {:>8} {:>9} {:>9} {:>11}",
        f(&["wall_s"]),
        f(&["iops"]),
        f(&["mib_s"]),
        f(&["latency", "mean_ns"]) / 1000.0,
        opt(num(r, &["uring", "enters"]), 0),
        opt(num(r, &["uring", "requests"]), 0),
        opt(num(r, &["uring", "big_batches"]), 0),
        opt(num(r, &["uring", "mean_batch"]), 3),
        opt(num(r, &["uring", "mean_inflight"]), 1),
        if shared {
            opt(num(r, &["uring", "lock_contended"]), 0)
        } else {
            "-".into()
        }
    )
}

pub fn cpu_header() -> String {
    format!(
        "  {:<34} {:>8} {:>8} {:>8} {:>7} {:>7} {:>10} {:>9} {:>10} {:>10}",
        "point",
        "user s",
        "sys s",
        "total s",
        "user %",
        "sys %",
        "ns/op",
        "calls/op",
        "gap p50",
        "gap p99"
    )
}

/// The Pi thesis's Figures 18 and 20 columns, then the time between writes (the gap between successive
/// op starts, its Figure 19): median and 99th percentile, ns.
pub fn cpu_row(rest: &str, r: &Value) -> String {
    let f = |p: &[&str]| num(r, p).unwrap_or(f64::NAN);
    let wall = f(&["wall_s"]);
    let (user, sys) = (
        f(&["cpu", "process", "user_s"]),
        f(&["cpu", "process", "sys_s"]),
    );
    format!(
        "  {rest:<34} {user:>8.3} {sys:>8.3} {wall:>8.3} {:>6.1}% {:>6.1}% {:>10.1} {:>9} {:>10} {:>10}",
        user / wall * 100.0,
        sys / wall * 100.0,
        f(&["ns_per_op"]),
        opt(num(r, &["syscalls", "method_per_op"]), 3),
        opt(num(r, &["gap", "p50_ns"]), 0),
        opt(num(r, &["gap", "p99_ns"]), 0),
    )
}

/// What the time between writes means for each way of writing in `recs`, as the thesis's Figure 19 read
/// it for io_uring and its Figures 37-38 for write().
pub fn gap_legend(recs: &[Value]) -> String {
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
        if let Some(l) = gap_meaning(m, one, txt(r, &["spec", "ring", "sqpoll"]) == "true") {
            lines.push(l);
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    let mut o = "\nTime between writes (gap: from one op's start to the next op's start on the same thread, the \
                 thesis's Figure 19; p50 and p99 in ns):\n"
        .to_string();
    for l in lines {
        o.push_str(&crate::answers::wrap(&format!("- {l}"), 2, 118));
    }
    o
}

/// What the gap is for method `m` (`one`: one request in flight at a time).
fn gap_meaning(m: MethodKind, one: bool, sqpoll: bool) -> Option<String> {
    Some(match m {
        MethodKind::Sync | MethodKind::Psync | MethodKind::Pv2 | MethodKind::Vectored => {
            format!(
                "{}: one call after the other, so a gap is one whole call (entering the kernel, the write, \
                 returning) plus iolab's few ns between calls; its p50 is the typical call",
                m.name()
            )
        }
        MethodKind::Stdio => "stdio: one fwrite after the other: most only copy into the FILE buffer (the p50), \
                              and every buffer-full adds a write(2) (the tail)"
            .into(),
        MethodKind::Mmap => "mmap: one memcpy into the mapping after the other (the p50 is the copy); the first \
                             touch of each page adds a page fault (the tail), and no call is made"
            .into(),
        MethodKind::IoUring if one => format!(
            "io_uring at qd 1: one request submitted and waited for at a time (the thesis's Figure 36 blocking \
             loop), so a gap is a whole round trip: queueing, {}the kernel's write, the completion and the \
             wake-up",
            if sqpoll {
                "the SQPOLL thread noticing it, "
            } else {
                "io_uring_enter, "
            }
        ),
        MethodKind::IoUring => "io_uring: between the starts of successive requests of one thread, so 0 within a \
                                batch queued in one round, then the round's submission and wait; with SQPOLL \
                                and the producer-consumer ring it is how fast the producer queues, not when \
                                the kernel wrote (the thesis's Figure 19)"
            .into(),
        MethodKind::Aio => "aio: as io_uring, 0 within a batch of io_submit, then io_submit (which did the \
                            writes inline where they could not be asynchronous) and io_getevents"
            .into(),
        MethodKind::Epoll => "epoll: write(2) after write(2) on a non-blocking stream; where the stream was \
                              full, the epoll_wait for the reader is in the gap (the tail)"
            .into(),
        MethodKind::Nop => "nop: the harness's own floor between ops".into(),
        _ => format!(
            "{}: one kernel-side copy after the other, no data through user space",
            m.name()
        ),
    })
}

pub fn lines_header() -> String {
    format!(
        "  {:<34} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>11}",
        "point", "wall ms", "writes ms", "fsync ms", "user ms", "sys ms", "cpu ms", "write calls"
    )
}

/// A decimal-lines run: wall time, its writes and its fsync apart, CPU, and the write-family calls the
/// kernel counted.
pub fn lines_row(rest: &str, r: &Value) -> String {
    let ms = |p: &[&str]| num(r, p).map(|v| v * 1e3);
    let (user, sys) = (
        ms(&["cpu", "process", "user_s"]),
        ms(&["cpu", "process", "sys_s"]),
    );
    format!(
        "  {rest:<34} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>11}",
        opt(ms(&["wall_s"]), 3),
        opt(ms(&["write_s"]), 3),
        if num(r, &["fsync_s"]).is_some() {
            opt(ms(&["fsync_s"]), 3)
        } else {
            "none".into()
        },
        opt(user, 3),
        opt(sys, 3),
        opt(user.zip(sys).map(|(u, s)| u + s), 3),
        opt(num(r, &["write_calls"]), 0),
    )
}

/// Per method over its runs: the wall time's median, min, max and stdev; the median write time, fsync
/// time, CPU (the note's clock()) and write calls.
pub fn lines_summary(recs: &[Value]) -> String {
    let mut methods: Vec<String> = Vec::new();
    for r in recs.iter().filter_map(|r| r.get("result")) {
        let m = txt(r, &["spec", "method"]);
        if !methods.contains(&m) {
            methods.push(m);
        }
    }
    let mut o = format!(
        "\nPer method, ms (wall: the timed span; cpu: user + sys, what the note's clock() counted):\n  {:<20} {:>4} \
         {:>9} {:>9} {:>9} {:>9} {:>10} {:>10} {:>9} {:>11}\n",
        "method", "runs", "wall med", "min", "max", "stdev", "writes med", "fsync med", "cpu med", "write calls"
    );
    for m in &methods {
        let rs: Vec<&Value> = recs
            .iter()
            .filter_map(|r| r.get("result"))
            .filter(|r| txt(r, &["spec", "method"]) == *m)
            .collect();
        let get = |f: &dyn Fn(&Value) -> Option<f64>| -> Vec<f64> {
            rs.iter().filter_map(|r| f(r)).collect()
        };
        let med = |v: Vec<f64>| series::stat(&v).map(|s| s.median);
        let ms = |p: &'static [&'static str]| move |r: &Value| num(r, p).map(|v| v * 1e3);
        let Some(w) = series::stat(&get(&ms(&["wall_s"]))) else {
            continue;
        };
        let cpu = |r: &Value| {
            Some(
                (num(r, &["cpu", "process", "user_s"])? + num(r, &["cpu", "process", "sys_s"])?)
                    * 1e3,
            )
        };
        o.push_str(&format!(
            "  {m:<20} {:>4} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>10} {:>10} {:>9} {:>11}\n",
            w.n,
            w.median,
            w.min,
            w.max,
            w.stdev,
            opt(med(get(&ms(&["write_s"]))), 3),
            opt(med(get(&ms(&["fsync_s"]))), 3),
            opt(med(get(&cpu)), 3),
            opt(med(get(&|r: &Value| num(r, &["write_calls"]))), 0),
        ));
    }
    o
}

pub fn syscalls_header() -> String {
    format!(
        "  {:<34} {:>11} {:>10} {:>8} {:>24} {:>9} {:>10}",
        "point", "ops counted", "syscalls", "per op", "main call", "timed s", "IOPS"
    )
}

/// Table 3: the kernel's count of every system call over the counting pass (like `strace -c`, without
/// its cost in the timed pass), the I/O call made most (not the runner's futex or getrusage), and the
/// timed pass's time and IOPS.
pub fn syscalls_row(rest: &str, r: &Value) -> String {
    let total = series::at(r, &["kernel", "tracepoints"])
        .and_then(|t| t.as_array())
        .and_then(|a| {
            a.iter()
                .find(|c| txt(c, &["name"]) == "raw_syscalls:sys_enter")
        })
        .and_then(|c| num(c, &["value"]));
    let ops = num(r, &["kernel", "tracepoint_pass_ops"]);
    let main = series::at(r, &["kernel", "syscalls_by_name"])
        .and_then(|a| a.as_array())
        .and_then(|a| {
            a.iter()
                .filter_map(|p| Some((p.get(0)?.as_str()?, p.get(1)?.as_f64()?)))
                // The runner's own bookkeeping (its threads' barriers, its CPU snapshots) is not the I/O.
                .filter(|(n, _)| !["other", "futex", "getrusage", "mmap", "munmap"].contains(n))
                .max_by(|a, b| a.1.total_cmp(&b.1))
        })
        .map(|(n, c)| format!("{n} {}", crate::answers::thousands(c)))
        .unwrap_or_else(|| "-".into());
    format!(
        "  {rest:<34} {:>11} {:>10} {:>8} {main:>24} {:>9.3} {:>10.0}",
        opt(ops, 0),
        opt(total, 0),
        opt(total.zip(ops).map(|(t, o)| t / o.max(1.0)), 3),
        num(r, &["wall_s"]).unwrap_or(f64::NAN),
        num(r, &["iops"]).unwrap_or(f64::NAN),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rec(step: &str, repeat: u32, ns: f64) -> Value {
        json!({"point": {"step": step, "repeat": repeat.to_string()},
               "result": {"ns_per_op": ns, "iops": 1e9 / ns, "mib_s": 4e3 / ns, "wall_s": 1.0}})
    }

    #[test]
    fn repeats_are_one_point_shown_by_its_median_run_with_the_middle_range() {
        let recs = vec![
            rec("a", 1, 300.0),
            rec("b", 1, 50.0),
            rec("a", 2, 100.0),
            rec("b", 2, 60.0),
            rec("a", 3, 200.0),
            json!({"point": {"step": "b", "repeat": "3"}, "error": "refused"}),
        ];
        let gs = groups(&recs);
        assert_eq!(gs.len(), 2);
        assert!(repeated(&gs));
        assert_eq!(gs[0].runs.len(), 3);
        assert_eq!(ns_of(gs[0].rec), Some(200.0));
        assert_eq!(
            gs[0].spread(),
            Some(Spread {
                runs: 3,
                low_ns: 100.0,
                high_ns: 300.0
            })
        );
        // Of two that ran, the lower middle; the one not run is not in the range.
        assert_eq!(ns_of(gs[1].rec), Some(50.0));
        assert_eq!(gs[1].middle(&["ns_per_op"]), Some((2, 50.0, 60.0)));
        assert_eq!(
            spread_cells(TableKind::Throughput, &gs[0])
                .split_whitespace()
                .collect::<Vec<_>>(),
            ["3", "13.3-40.0"]
        );
        assert_eq!(
            spread_cells(TableKind::Cpu, &gs[0])
                .split_whitespace()
                .collect::<Vec<_>>(),
            ["3", "100-300"]
        );
        assert!(spread_header(TableKind::Latency).contains("middle runs IOPS"));
        assert_eq!(spread_header(TableKind::Lines), "");
        // A point run once has no spread.
        let once = groups(&recs[..2]);
        assert!(!repeated(&once) && once[0].spread().is_none());
    }

    #[test]
    fn the_gap_means_what_each_method_does() {
        let r = |method: &str, qd: u32, sqpoll: bool| json!({"result": {"spec": {"method": method, "qd": qd, "ring": {"sqpoll": sqpoll}}}});
        let l = gap_legend(&[
            r("sync", 1, false),
            r("io_uring", 64, true),
            r("io_uring", 1, true),
            r("mmap", 1, false),
            r("sync", 1, false),
        ]);
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
        assert_eq!(gap_legend(&[]), "");
    }

    #[test]
    fn table_3_is_the_kernels_count() {
        let r = json!({
            "wall_s": 0.08, "iops": 24777.0,
            "kernel": {
                "tracepoints": [{"name": "raw_syscalls:sys_enter", "value": 2072}],
                "syscalls_by_name": [["futex", 5600], ["pread64", 2000], ["other", 9000]],
                "tracepoint_pass_ops": 2000
            }
        });
        let row = syscalls_row("", &r);
        let w: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            w,
            ["2000", "2072", "1.036", "pread64", "2,000", "0.080", "24777"],
            "{row}"
        );
        // Without a counting pass: dashes, never made-up figures.
        let row = syscalls_row("", &json!({"wall_s": 0.1, "iops": 10.0}));
        let w: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(w, ["-", "-", "-", "-", "0.100", "10"], "{row}");
    }

    #[test]
    fn blocksize_columns_say_where_the_bytes_came_from() {
        let r = json!({
            "wall_s": 0.5, "mib_s": 100.0, "bytes": 4194304,
            "spec": {"op": "read"},
            "cpu": {"process": {"user_s": 0.0, "sys_s": 0.25},
                    "system_wide": {"busiest_kernel_share": 0.9, "ticks": 50}},
            "syscalls": {"kernel_rw": {"read_bytes": 4194304}},
            "flushes": {"calls": 0, "total_s": 0.0}
        });
        let w: Vec<String> = throughput_row("", &r)
            .split_whitespace()
            .map(String::from)
            .collect();
        assert_eq!(
            w,
            ["100.0", "50.0%", "0.0%", "90.0%", "4", "MiB", "-", "4", "MiB", "0.500"]
        );
        // A short run's share is marked rough, and the legend says why.
        let mut short = r.clone();
        short["cpu"]["system_wide"]["ticks"] = json!(3);
        assert!(throughput_row("", &short).contains("90.0%*"));
        let l = throughput_legend(&[json!({ "result": short })]);
        assert!(l.contains("* a run under 0.1 s"), "{l}");
    }
}

//! What suite tables show beyond the seeds' own columns, and repeated runs, as the cells of the
//! `text::Table`s `suite_view` lays out:
//! - `iolab suite --repeat N` runs every point N times; a table shows each point once, as the run with the
//!   median time per op, with the range of its middle runs (`stats::middle_range`, as the survey shows
//!   its rounds), and the findings and answers read the same median rows ([`rows_of`], each with its
//!   [`Spread`]);
//! - the columns the redesigned suites need: the busier core's kernel share system-wide, the bytes read
//!   from the device and the fsync time (blocksize); requests in flight and mutex waits (shared-ring);
//!   the time between writes (writes); write and fsync apart, and the write calls, of the decimal lines
//!   (kernel-user); the kernel's syscall totals, like `strace -c` (uring's Table 3).
//!
//! Figures carry human units (`iolab_engine::units`); rates over spans too short to time say so.

use crate::text::Align;
use iolab_engine::units::{cpu_share, fmt_mib_s, fmt_ns, fmt_range, fmt_size};
use iolab_lab::series::{self, num};
use iolab_lab::suite::TableKind;
use iolab_lab::suite_rows::{Group, FEW_TICKS};
use serde_json::Value;

pub(crate) fn txt(v: &Value, path: &[&str]) -> String {
    series::text(series::at(v, path))
}

/// How a spread's ends are written.
type Fmt = fn(f64) -> String;

/// The figure whose spread a table shows for repeated points: its column's head, its path and how its
/// figures are written. `None`: the table shows every run (decimal lines).
fn spread_figure(k: TableKind) -> Option<(&'static str, &'static [&'static str], Fmt)> {
    match k {
        TableKind::Throughput => Some(("middle runs throughput", &["mib_s"], fmt_mib_s)),
        TableKind::Latency | TableKind::Batches | TableKind::Syscalls => {
            Some(("middle runs IOPS", &["iops"], iops))
        }
        TableKind::Cpu | TableKind::Nowait | TableKind::Nop => {
            Some(("middle runs time/op", &["ns_per_op"], fmt_ns))
        }
        TableKind::Lines => None,
    }
}

/// Whether a table of kind `k` shows a point's repeats as one row (with [`spread_heads`]).
pub fn shows_spread(k: TableKind) -> bool {
    spread_figure(k).is_some()
}

/// The heads of the repeats' columns.
pub fn spread_heads(k: TableKind) -> Vec<(&'static str, Align)> {
    match spread_figure(k) {
        Some((head, ..)) => vec![("runs", Align::Right), (head, Align::Right)],
        None => Vec::new(),
    }
}

/// A point's repeats' cells: how many ran and the range of the middle runs.
pub fn spread_cells(k: TableKind, g: &Group) -> Vec<String> {
    let Some((_, path, f)) = spread_figure(k) else {
        return Vec::new();
    };
    match g.middle(path) {
        Some((n, lo, hi)) => vec![n.to_string(), fmt_range(lo, hi, f)],
        None => vec![g.ran().len().to_string(), "-".into()],
    }
}

// ---------------------------------------------------------------------------------------------------
// Cells of the tables.

pub(crate) fn opt(v: Option<f64>, digits: usize) -> String {
    v.map(|x| format!("{x:.digits$}"))
        .unwrap_or_else(|| "-".into())
}

/// IOPS as a count with a decimal multiplier ("123.5 k").
pub(crate) fn iops(v: f64) -> String {
    iolab_engine::units::fmt_ops_s(v)
        .trim_end_matches(" ops/s")
        .to_string()
}

/// A rate over the run's timed span, or "too short" where the span was too short to time.
pub(crate) fn rate(r: &Value, text: String) -> String {
    let c = |k: &str| num(r, &["clock", k]).unwrap_or(0.0);
    match iolab_engine::units::too_short(
        num(r, &["wall_s"]).unwrap_or(f64::NAN),
        c("overhead_ns"),
        c("ns_per_tick"),
    ) {
        Some(_) => "too short".into(),
        None => text,
    }
}

/// The throughput table's heads (blocksize, the storage paper's figures).
pub const THROUGHPUT: &[(&str, Align)] = &[
    ("point", Align::Left),
    ("throughput", Align::Right),
    ("sys %", Align::Right),
    ("user %", Align::Right),
    ("core kern", Align::Right),
    ("device", Align::Right),
    ("fsync", Align::Right),
    ("moved", Align::Right),
    ("wall s", Align::Right),
];

/// The throughput; the process's system and user share of the wall time; the busiest CPU's kernel share
/// system-wide; the bytes read from the device; the time in fsync; bytes moved; wall seconds.
pub fn throughput_cells(rest: String, r: &Value) -> Vec<String> {
    let f = |p: &[&str]| num(r, p).unwrap_or(f64::NAN);
    let wall = f(&["wall_s"]);
    let core = num(r, &["cpu", "system_wide", "busiest_kernel_share"]).map(|s| {
        let rough = num(r, &["cpu", "system_wide", "ticks"]).is_some_and(|t| t < FEW_TICKS);
        format!("{:.1}%{}", s * 100.0, if rough { "*" } else { "" })
    });
    let flush = num(r, &["flushes", "total_s"]).filter(|_| f(&["flushes", "calls"]) > 0.0);
    vec![
        rest,
        rate(r, fmt_mib_s(f(&["mib_s"]))),
        cpu_share(f(&["cpu", "process", "sys_s"]), wall),
        cpu_share(f(&["cpu", "process", "user_s"]), wall),
        core.unwrap_or_else(|| "-".into()),
        device_cell(r),
        flush.map_or_else(|| "-".into(), iolab_engine::units::fmt_s),
        fmt_size(num(r, &["bytes"]).unwrap_or(0.0) as u64),
        format!("{wall:.3}"),
    ]
}

/// What the device moved for a run: the bytes it read (a read) or wrote (a write) over the timed span
/// (`device_io`; older records: the bytes the storage layer fetched for the process), "cache" after a
/// read whose verdict is page-cache, "part" after one partly cached; "-" where nothing counted them.
fn device_cell(r: &Value) -> String {
    let reads = txt(r, &["spec", "op"]) == "read";
    let dev = match reads {
        true => num(r, &["device_io", "read_bytes"])
            .or_else(|| num(r, &["syscalls", "kernel_rw", "read_bytes"])),
        false => num(r, &["device_io", "written_bytes"]),
    };
    let Some(d) = dev else {
        return "-".into();
    };
    let mark = match txt(r, &["verdict", "kind"]).as_str() {
        "page-cache" => " cache",
        "partly-cached" => " part",
        "holes" => " holes",
        _ => "",
    };
    format!("{}{mark}", fmt_size(d as u64))
}

/// The batches table's heads (shared-ring, the course report's Tables 4-6).
pub const BATCHES: &[(&str, Align)] = &[
    ("point", Align::Left),
    ("runtime s", Align::Right),
    ("IOPS", Align::Right),
    ("throughput", Align::Right),
    ("avg latency", Align::Right),
    ("calls", Align::Right),
    ("reqs", Align::Right),
    ("big (32+)", Align::Right),
    ("avg batch", Align::Right),
    ("in flight (all rings)", Align::Right),
    ("mutex waits", Align::Right),
];

/// The mean requests in flight in all of a run's rings: the record's own sum, or for older records the
/// per-ring mean times the rings its design makes ([`iolab_engine::result::UringFigures::inflight_all_rings`]).
fn inflight_all_rings(r: &Value) -> Option<f64> {
    let u = iolab_engine::result::UringFigures {
        design: txt(r, &["spec", "ring", "design"]),
        mean_inflight: num(r, &["uring", "mean_inflight"])?,
        mean_inflight_all_rings: num(r, &["uring", "mean_inflight_all_rings"]),
        ..Default::default()
    };
    Some(u.inflight_all_rings(num(r, &["spec", "threads"]).unwrap_or(1.0) as u32))
}

/// The course report's Tables 4-6 columns, then the mean requests in flight and, for the shared ring,
/// how often a thread found its mutex taken.
pub fn batches_cells(rest: String, r: &Value) -> Vec<String> {
    let f = |p: &[&str]| num(r, p).unwrap_or(f64::NAN);
    let shared = txt(r, &["spec", "ring", "design"]) == "shared";
    vec![
        rest,
        format!("{:.3}", f(&["wall_s"])),
        rate(r, iops(f(&["iops"]))),
        rate(r, fmt_mib_s(f(&["mib_s"]))),
        fmt_ns(f(&["latency", "mean_ns"])),
        opt(num(r, &["uring", "enters"]), 0),
        opt(num(r, &["uring", "requests"]), 0),
        opt(num(r, &["uring", "big_batches"]), 0),
        opt(num(r, &["uring", "mean_batch"]), 3),
        opt(inflight_all_rings(r), 1),
        if shared {
            opt(num(r, &["uring", "lock_contended"]), 0)
        } else {
            "-".into()
        },
    ]
}

/// The CPU table's heads (writes, the Pi thesis's Figures 18-20).
pub const CPU: &[(&str, Align)] = &[
    ("point", Align::Left),
    ("user s", Align::Right),
    ("sys s", Align::Right),
    ("total s", Align::Right),
    ("user %", Align::Right),
    ("sys %", Align::Right),
    ("time/op", Align::Right),
    ("calls/op", Align::Right),
    ("gap p50", Align::Right),
    ("gap p99", Align::Right),
];

/// The Pi thesis's Figures 18 and 20 columns, then the time between writes (the gap between successive
/// op starts, its Figure 19): median and 99th percentile.
pub fn cpu_cells(rest: String, r: &Value) -> Vec<String> {
    let f = |p: &[&str]| num(r, p).unwrap_or(f64::NAN);
    let wall = f(&["wall_s"]);
    let (user, sys) = (
        f(&["cpu", "process", "user_s"]),
        f(&["cpu", "process", "sys_s"]),
    );
    let ns = |p: &[&str]| num(r, p).map_or_else(|| "-".into(), fmt_ns);
    vec![
        rest,
        format!("{user:.3}"),
        format!("{sys:.3}"),
        format!("{wall:.3}"),
        cpu_share(user, wall),
        cpu_share(sys, wall),
        fmt_ns(f(&["ns_per_op"])),
        opt(num(r, &["syscalls", "method_per_op"]), 3),
        ns(&["gap", "p50_ns"]),
        ns(&["gap", "p99_ns"]),
    ]
}

/// The decimal lines' heads (kernel-user).
pub const LINES: &[(&str, Align)] = &[
    ("point", Align::Left),
    ("wall ms", Align::Right),
    ("writes ms", Align::Right),
    ("fsync ms", Align::Right),
    ("user ms", Align::Right),
    ("sys ms", Align::Right),
    ("cpu ms", Align::Right),
    ("write calls", Align::Right),
];

/// A decimal-lines run: wall time, its writes and its fsync apart, CPU, and the write-family calls the
/// kernel counted.
pub fn lines_cells(rest: String, r: &Value) -> Vec<String> {
    let ms = |p: &[&str]| num(r, p).map(|v| v * 1e3);
    let (user, sys) = (
        ms(&["cpu", "process", "user_s"]),
        ms(&["cpu", "process", "sys_s"]),
    );
    vec![
        rest,
        opt(ms(&["wall_s"]), 3),
        opt(ms(&["write_s"]), 3),
        match (num(r, &["fsync_s"]), num(r, &["write_s"])) {
            (Some(f), _) => format!("{:.3}", f * 1e3),
            // Writes timed apart and no flush: a way that does not flush.
            (None, Some(_)) => "none".into(),
            // Writes and flush timed as one span (the in-kernel writer).
            (None, None) => "-".into(),
        },
        opt(user, 3),
        opt(sys, 3),
        opt(user.zip(sys).map(|(u, s)| u + s), 3),
        opt(num(r, &["write_calls"]), 0),
    ]
}

/// Table 3's heads (uring: the kernel's count of every system call).
pub const SYSCALLS: &[(&str, Align)] = &[
    ("point", Align::Left),
    ("ops counted", Align::Right),
    ("syscalls", Align::Right),
    ("per op", Align::Right),
    ("main call", Align::Right),
    ("timed s", Align::Right),
    ("IOPS", Align::Right),
];

/// Table 3: the kernel's count of every system call over the counting pass (like `strace -c`, without
/// its cost in the timed pass), the I/O call made most (not the runner's futex or getrusage), and the
/// timed pass's time and IOPS.
pub fn syscalls_cells(rest: String, r: &Value) -> Vec<String> {
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
        .map(|(n, c)| format!("{n} {}", iolab_engine::units::thousands(c)))
        .unwrap_or_else(|| "-".into());
    vec![
        rest,
        opt(ops, 0),
        opt(total, 0),
        opt(total.zip(ops).map(|(t, o)| t / o.max(1.0)), 3),
        main,
        format!("{:.3}", num(r, &["wall_s"]).unwrap_or(f64::NAN)),
        rate(r, iops(num(r, &["iops"]).unwrap_or(f64::NAN))),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_lab::findings_compare::Spread;
    use iolab_lab::suite_rows::{groups, repeated};
    use serde_json::json;

    fn ns_of(rec: &Value) -> Option<f64> {
        rec["result"]["ns_per_op"].as_f64()
    }

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
            spread_cells(TableKind::Throughput, &gs[0]),
            ["3", "13.3-40.0 MiB/s"]
        );
        assert_eq!(
            spread_cells(TableKind::Cpu, &gs[0]),
            ["3", "100.0-300.0 ns"]
        );
        assert_eq!(spread_heads(TableKind::Latency)[1].0, "middle runs IOPS");
        assert!(spread_heads(TableKind::Lines).is_empty());
        // A point run once has no spread.
        let once = groups(&recs[..2]);
        assert!(!repeated(&once) && once[0].spread().is_none());
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
        assert_eq!(
            syscalls_cells(String::new(), &r),
            [
                "",
                "2000",
                "2072",
                "1.036",
                "pread64 2,000",
                "0.080",
                "24.8 k"
            ]
        );
        // Without a counting pass: dashes, never made-up figures.
        let row = syscalls_cells(String::new(), &json!({"wall_s": 0.1, "iops": 10.0}));
        assert_eq!(row, ["", "-", "-", "-", "-", "0.100", "10.0"]);
        assert_eq!(row.len(), SYSCALLS.len());
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
        let cells = throughput_cells(String::new(), &r);
        assert_eq!(
            cells,
            [
                "",
                "100.0 MiB/s",
                "50.0%",
                "0.0%",
                "90.0%",
                "4 MiB",
                "-",
                "4 MiB",
                "0.500"
            ]
        );
        assert_eq!(cells.len(), THROUGHPUT.len());
        // A short run's share is marked rough.
        let mut short = r.clone();
        short["cpu"]["system_wide"]["ticks"] = json!(3);
        assert_eq!(throughput_cells(String::new(), &short)[4], "90.0%*");
        // Writes fsynced inside the span: the fsync time, in a human unit.
        let mut synced = r.clone();
        synced["flushes"] = json!({"calls": 1, "total_s": 0.0123});
        assert_eq!(throughput_cells(String::new(), &synced)[6], "12.30 ms");
    }

    #[test]
    fn every_row_fills_its_tables_columns() {
        let r = json!({"wall_s": 1.0, "spec": {"ring": {"design": "shared"}},
                       "uring": {"mean_inflight": 3.5, "lock_contended": 7},
                       "gap": {"p50_ns": 1500.0}});
        assert_eq!(batches_cells(String::new(), &r).len(), BATCHES.len());
        assert_eq!(batches_cells(String::new(), &r)[9..], ["3.5", "7"]);
        let c = cpu_cells(String::new(), &r);
        assert_eq!(
            (c.len(), &c[8], &c[9]),
            (CPU.len(), &"1.5 µs".to_string(), &"-".to_string())
        );
        assert_eq!(lines_cells(String::new(), &r).len(), LINES.len());
    }
}

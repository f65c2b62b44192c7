//! The report's table of every record: each figure in a scaled unit with the unit in the cell ("3.5 µs",
//! "1.09 GiB/s", "285.3 k ops/s", "66.46 ms"), the value as recorded in the cell's `data-v` (and its
//! tooltip) for whoever reads the page as data. A configuration run with `--repeat K` is one row: each
//! figure the median of its K repeats, the range (min-max) under it, and the middle range in the tooltip.

use super::markup::esc;
use super::repeats;
use crate::fields::{self, Field};
use iolab_engine::units::{fmt_mib_s, fmt_ns, fmt_ops_s, fmt_range, fmt_s};
use serde_json::Value;
use std::fmt::Write;

/// A column: header, where its value is, its raw unit (for the tooltip) and how it is shown.
struct Col {
    head: &'static str,
    field: Field,
    raw_unit: &'static str,
    show: fn(f64) -> String,
    /// A rate over the run's timed span: "too short" where the span was too short to time it.
    rate: bool,
}

fn secs(s: f64) -> String {
    if s == 0.0 {
        "0 s".into()
    } else {
        fmt_s(s)
    }
}

fn per_op(v: f64) -> String {
    format!("{v:.3}")
}

const COLS: [Col; 9] = [
    Col {
        head: "throughput",
        field: fields::MIB_S,
        raw_unit: "MiB/s",
        show: fmt_mib_s,
        rate: true,
    },
    Col {
        head: "IOPS",
        field: fields::IOPS,
        raw_unit: "ops/s",
        show: fmt_ops_s,
        rate: true,
    },
    Col {
        head: "time/op",
        field: fields::NS_PER_OP,
        raw_unit: "ns",
        show: fmt_ns,
        rate: true,
    },
    Col {
        head: "latency p50",
        field: fields::LATENCY_P50,
        raw_unit: "ns",
        show: fmt_ns,
        rate: false,
    },
    Col {
        head: "latency p99",
        field: fields::LATENCY_P99,
        raw_unit: "ns",
        show: fmt_ns,
        rate: false,
    },
    Col {
        head: "user CPU",
        field: fields::CPU_USER_S,
        raw_unit: "s",
        show: secs,
        rate: false,
    },
    Col {
        head: "system CPU",
        field: fields::CPU_SYS_S,
        raw_unit: "s",
        show: secs,
        rate: false,
    },
    Col {
        head: "calls/op",
        field: fields::SYSCALLS_PER_OP,
        raw_unit: "calls/op",
        show: per_op,
        rate: false,
    },
    Col {
        head: "wall",
        field: fields::WALL_S,
        raw_unit: "s",
        show: secs,
        rate: false,
    },
];

/// The table's heading row.
pub(super) fn head(o: &mut String) {
    o.push_str("<table class=\"runs\"><tr><th>run</th>");
    for c in &COLS {
        let _ = write!(o, "<th>{}</th>", c.head);
    }
    o.push_str("</tr>\n");
}

/// One record's row: its figures (of a group of repeats: medians and ranges), or why it did not run.
/// `label` is shown as it is (the caller marks emulated runs).
pub(super) fn row(rec: &Value, label: &str, o: &mut String) {
    let Some(r) = fields::RESULT.at(rec) else {
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td colspan=\"{}\" class=\"err\">not run: {}</td></tr>",
            esc(label),
            COLS.len(),
            esc(fields::ERROR.at(rec).and_then(|e| e.as_str()).unwrap_or(""))
        );
        return;
    };
    let _ = write!(o, "<tr><td>{}</td>", esc(label));
    let reps = repeats::runs(rec);
    let short = iolab_lab::series::span_too_short(r);
    // The process's CPU time where its CPUs could not have spent it in the span: not shown as the run's.
    let cpu_withheld = iolab_lab::series::cpu_withheld(r);
    for c in &COLS {
        let cpu = c.field.path().first() == Some(&"cpu");
        if reps.len() > 1 {
            repeat_cell(c, &reps, o);
        } else if let (true, Some(why)) = (c.rate, &short) {
            let _ = write!(o, "<td title=\"{}\">too short</td>", esc(why));
        } else if let (true, Some(why)) = (cpu, &cpu_withheld) {
            let _ = write!(o, "<td title=\"{}\">withheld</td>", esc(why));
        } else {
            match c.field.num(r) {
                Some(v) => {
                    let _ = write!(
                        o,
                        "<td data-v=\"{v}\" title=\"{v} {}\">{}</td>",
                        c.raw_unit,
                        esc(&(c.show)(v))
                    );
                }
                None => o.push_str("<td>-</td>"),
            }
        }
    }
    o.push_str("</tr>\n");
}

/// The median of a figure over repeats, the range (min-max) under it, and the middle range (the
/// survey's: the fastest and slowest quarter dropped) in the tooltip.
fn repeat_cell(c: &Col, reps: &[&Value], o: &mut String) {
    // A rate of the repeats whose spans were long enough to time it.
    let reps: Vec<&Value> = reps
        .iter()
        .copied()
        .filter(|r| !c.rate || iolab_lab::series::span_too_short(r).is_none())
        .collect();
    let xs: Vec<f64> = reps.iter().filter_map(|r| c.field.num(r)).collect();
    let Some(s) = repeats::stat(&reps, c.field) else {
        o.push_str(if c.rate {
            "<td>too short</td>"
        } else {
            "<td>-</td>"
        });
        return;
    };
    let (lo, hi) = iolab_engine::stats::middle_range(xs);
    let _ = write!(
        o,
        "<td data-v=\"{}\" data-min=\"{}\" data-max=\"{}\" title=\"median of {} repeats: {} {u}; min-max {}-{} {u}; \
         middle range {}\">{}<br><small>{}</small></td>",
        s.median,
        s.min,
        s.max,
        s.n,
        s.median,
        s.min,
        s.max,
        esc(&fmt_range(lo, hi, c.show)),
        esc(&(c.show)(s.median)),
        esc(&if (c.show)(s.min) == (c.show)(s.max) {
            "all equal".to_string()
        } else {
            fmt_range(s.min, s.max, c.show)
        }),
        u = c.raw_unit,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn figures_are_scaled_with_their_unit_and_keep_the_recorded_value() {
        let rec = json!({"point": {}, "result": {"mib_s": 923.58, "iops": 236437.3, "ns_per_op": 4229.45,
            "latency": {"p50_ns": 987.0, "p99_ns": 3.1e6}, "wall_s": 0.0846,
            "cpu": {"process": {"user_s": 0.0, "sys_s": 0.0835}}, "syscalls": {"method_per_op": 1.0}}});
        let mut o = String::new();
        row(&rec, "r", &mut o);
        for want in [
            ">923.6 MiB/s<",
            ">236.4 k ops/s<",
            "data-v=\"4229.45\" title=\"4229.45 ns\">4.2 µs<",
            ">987.0 ns<",
            ">3.10 ms<",
            ">0 s<",
            ">83.50 ms<",
            ">1.000<",
            ">84.60 ms<",
        ] {
            assert!(o.contains(want), "{want}: {o}");
        }
        assert!(!o.contains(">4229.5<") && !o.contains(">987<"), "{o}");
    }
}

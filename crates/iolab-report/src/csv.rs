//! Runs and points as CSV rows (`--csv`): one row per run or point, its point's keys first.

use iolab_lab::series::{at, record_point, text};
use serde_json::Value;

/// The CSV columns after the point's keys (one row per run; documented in the README).
pub const CSV_COLUMNS: &[&str] = &[
    "method",
    "op",
    "bs",
    "pattern",
    "target",
    "threads",
    "qd",
    "batch",
    "direct",
    "method_opts",
    "ops",
    "bytes",
    "wall_s",
    "iops",
    "mib_s",
    "ns_per_op",
    "lat_p50_ns",
    "lat_p99_ns",
    "cpu_user_s",
    "cpu_sys_s",
    "syscalls_per_op",
    "error",
    "withheld",
];

pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub fn csv_header(point_keys: &[String]) -> String {
    let mut cols: Vec<String> = point_keys.iter().map(|k| format!("point.{k}")).collect();
    cols.extend(CSV_COLUMNS.iter().map(|c| c.to_string()));
    cols.iter()
        .map(|c| csv_field(c))
        .collect::<Vec<_>>()
        .join(",")
        + "\n"
}

/// The values a record's point gives `keys`, in their order ("" where the point has no such key).
pub fn point_cells(rec: &Value, keys: &[String]) -> Vec<String> {
    let point = record_point(rec);
    keys.iter()
        .map(|k| {
            point
                .iter()
                .find(|(pk, _)| pk == k)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        })
        .collect()
}

pub fn csv_row(rec: &Value, point_keys: &[String]) -> String {
    let mut cells = point_cells(rec, point_keys);
    let r = rec.get("result");
    let txt = |path: &[&str]| text(r.and_then(|r| at(r, path)));
    // A rate over a span too short to time, and a CPU time its CPUs could not have spent in the span,
    // are left empty, and the last column says why.
    let short = r.and_then(iolab_lab::series::span_too_short);
    let cpu = r.and_then(iolab_lab::series::cpu_withheld);
    for c in CSV_COLUMNS {
        cells.push(match *c {
            "iops" | "mib_s" | "ns_per_op" if short.is_some() => String::new(),
            "cpu_user_s" | "cpu_sys_s" if cpu.is_some() => String::new(),
            "withheld" => {
                let rate = short
                    .as_ref()
                    .map(|why| format!("iops, mib_s, ns_per_op: {why}"));
                let cpu = cpu
                    .as_ref()
                    .map(|why| format!("cpu_user_s, cpu_sys_s: {why}"));
                [rate, cpu]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join("; ")
            }
            "method" | "op" | "bs" | "pattern" | "threads" | "qd" | "batch" | "direct" => {
                txt(&["spec", c])
            }
            "target" => txt(&["spec", "target"]),
            "method_opts" => method_opts(r),
            "lat_p50_ns" => txt(&["latency", "p50_ns"]),
            "lat_p99_ns" => txt(&["latency", "p99_ns"]),
            "cpu_user_s" => txt(&["cpu", "process", "user_s"]),
            "cpu_sys_s" => txt(&["cpu", "process", "sys_s"]),
            "syscalls_per_op" => txt(&["syscalls", "method_per_op"]),
            "error" => rec
                .get("error")
                .and_then(|e| e.as_str())
                .unwrap_or_default()
                .to_string(),
            other => txt(&[other]),
        });
    }
    cells
        .iter()
        .map(|c| csv_field(c))
        .collect::<Vec<_>>()
        .join(",")
        + "\n"
}

/// A run's method's own options as "key=value" (a flag on: its key alone), ";" between them: aio's
/// `reap-at-most=4`, io_uring's `provided-buffers`; empty where none was given.
fn method_opts(r: Option<&Value>) -> String {
    let opts = r.and_then(|r| at(r, &["spec", "method_opts"]));
    let Some(Value::Object(o)) = opts else {
        return String::new();
    };
    o.iter()
        .filter_map(|(k, v)| match v {
            Value::Bool(true) => Some(k.clone()),
            Value::Bool(false) | Value::Null => None,
            v => Some(format!("{k}={}", text(Some(v)))),
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// The CSV of records: the header, then a row per record.
pub fn of_records<'a>(records: impl IntoIterator<Item = &'a Value>, keys: &[String]) -> String {
    let mut text = csv_header(keys);
    for r in records {
        text += &csv_row(r, keys);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A method's own options have their column, after the spec's: two runs that differ only there are
    /// told apart in the CSV as in the report.
    #[test]
    fn a_methods_own_options_have_a_column() {
        let rec = |opts: Value| {
            serde_json::json!({"result": {"spec": {"method": "aio", "qd": 8,
            "method_opts": opts}, "iops": 5.0}})
        };
        let head = csv_header(&[]);
        let cols: Vec<&str> = head.trim_end().split(',').collect();
        let at = cols.iter().position(|c| *c == "method_opts").unwrap();
        assert_eq!(cols[at - 1], "direct");
        let cell = |opts| {
            csv_row(&rec(opts), &[])
                .trim_end()
                .split(',')
                .nth(at)
                .unwrap()
                .to_string()
        };
        assert_eq!(
            cell(serde_json::json!({"reap-at-most": 4})),
            "reap-at-most=4"
        );
        assert_eq!(cell(serde_json::json!({})), "");
        let both = serde_json::json!({"provided-buffers": true, "reap-at-most": 1});
        assert_eq!(cell(both), "provided-buffers;reap-at-most=1");
        assert_eq!(cell(serde_json::json!({"provided-buffers": false})), "");
    }
}

//! The figures of a result document that repeats, sweeps and compare read, and how to reach a value in
//! one (records are read as JSON values, so files of earlier versions and other commands read alike).

use serde_json::Value;

/// A figure of a run result: its name, unit, place in the result document, and which way is better.
pub struct Figure {
    pub name: &'static str,
    pub unit: &'static str,
    pub path: &'static [&'static str],
    pub higher_is_better: bool,
}

/// The figures `--repeat` summarizes and `compare` sets side by side.
pub const FIGURES: &[Figure] = &[
    Figure {
        name: "iops",
        unit: "ops/s",
        path: &["iops"],
        higher_is_better: true,
    },
    Figure {
        name: "mib_s",
        unit: "MiB/s",
        path: &["mib_s"],
        higher_is_better: true,
    },
    Figure {
        name: "ns_per_op",
        unit: "ns (wall / ops)",
        path: &["ns_per_op"],
        higher_is_better: false,
    },
    Figure {
        name: "lat_p50",
        unit: "ns",
        path: &["latency", "p50_ns"],
        higher_is_better: false,
    },
    Figure {
        name: "lat_p99",
        unit: "ns",
        path: &["latency", "p99_ns"],
        higher_is_better: false,
    },
    Figure {
        name: "cpu_user",
        unit: "s (process)",
        path: &["cpu", "process", "user_s"],
        higher_is_better: false,
    },
    Figure {
        name: "cpu_sys",
        unit: "s (process)",
        path: &["cpu", "process", "sys_s"],
        higher_is_better: false,
    },
    Figure {
        name: "syscalls_per_op",
        unit: "calls/op (iolab's count)",
        path: &["syscalls", "method_per_op"],
        higher_is_better: false,
    },
];

/// Spread (max - min, over the median) above which `--repeat` warns that single comparisons are noise.
pub const WIDE_SPREAD_PCT: f64 = 10.0;

pub fn figure(result: &Value, f: &Figure) -> Option<f64> {
    num(result, f.path)
}

/// The value at `path` (object keys) inside a result document.
pub fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |x, k| x.get(k))
}

/// The number at `path`.
pub fn num(v: &Value, path: &[&str]) -> Option<f64> {
    at(v, path)?.as_f64()
}

/// A value as table text: strings bare, null and absent empty, anything else as JSON.
pub fn text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => String::new(),
        Some(o) => o.to_string(),
    }
}

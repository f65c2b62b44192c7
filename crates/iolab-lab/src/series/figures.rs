//! The figures of a result document that repeats, sweeps and compare read, and how to reach a value in
//! one (records are read as JSON values, so files of earlier versions and other commands read alike).

use serde_json::Value;

/// A figure of a run result: its name, unit, place in the result document, and which way is better.
pub struct Figure {
    pub name: &'static str,
    pub unit: &'static str,
    pub path: &'static [&'static str],
    pub higher_is_better: bool,
    /// A rate over the run's timed span: none where the span was too short to time it.
    pub over_span: bool,
}

/// What tells whether a run's span was long enough to time a rate (`units::too_short`): kept with the
/// figures wherever they are.
pub const SPAN: [&[&str]; 3] = [
    &["wall_s"],
    &["clock", "overhead_ns"],
    &["clock", "ns_per_tick"],
];

/// The figures `--repeat` summarizes and `compare` sets side by side.
pub const FIGURES: &[Figure] = &[
    Figure {
        name: "iops",
        unit: "ops/s",
        path: &["iops"],
        higher_is_better: true,
        over_span: true,
    },
    Figure {
        name: "mib_s",
        unit: "MiB/s",
        path: &["mib_s"],
        higher_is_better: true,
        over_span: true,
    },
    Figure {
        name: "ns_per_op",
        unit: "ns (wall / ops)",
        path: &["ns_per_op"],
        higher_is_better: false,
        over_span: true,
    },
    Figure {
        name: "lat_p50",
        unit: "ns",
        path: &["latency", "p50_ns"],
        higher_is_better: false,
        over_span: false,
    },
    Figure {
        name: "lat_p99",
        unit: "ns",
        path: &["latency", "p99_ns"],
        higher_is_better: false,
        over_span: false,
    },
    Figure {
        name: "cpu_user",
        unit: "s (process)",
        path: &["cpu", "process", "user_s"],
        higher_is_better: false,
        over_span: false,
    },
    Figure {
        name: "cpu_sys",
        unit: "s (process)",
        path: &["cpu", "process", "sys_s"],
        higher_is_better: false,
        over_span: false,
    },
    Figure {
        name: "syscalls_per_op",
        unit: "calls/op (iolab's count)",
        path: &["syscalls", "method_per_op"],
        higher_is_better: false,
        over_span: false,
    },
];

/// Spread (max - min, over the median) above which `--repeat` warns that single comparisons are noise.
pub const WIDE_SPREAD_PCT: f64 = 10.0;

/// Figure `f` of a run's result; a rate over a span too short to time (`units::too_short`) is none, as
/// every view prints it ("too short"), so that no statistic, comparison or regression is made of it.
pub fn figure(result: &Value, f: &Figure) -> Option<f64> {
    if f.over_span && span_too_short(result).is_some() {
        return None;
    }
    // The process's CPU time is no figure of the run where it is more than its CPUs could spend in the
    // span (`units::cpu_beyond_span`), nor where the span was too short to time.
    if f.path.first() == Some(&"cpu") && cpu_withheld(result).is_some() {
        return None;
    }
    num(result, f.path)
}

/// Why a result's process CPU time cannot be put against its timed span (a span too short to time,
/// or more CPU time than its CPUs could spend in it), or none where it can.
pub fn cpu_withheld(result: &Value) -> Option<String> {
    let of = |p: &[&str]| num(result, p);
    let cpu = of(&["cpu", "process", "user_s"]).unwrap_or(0.0)
        + of(&["cpu", "process", "sys_s"]).unwrap_or(0.0);
    let (wall, cpus) = (of(&["wall_s"])?, of(&["host", "cpus_online"])?);
    span_too_short(result).or_else(|| iolab_engine::units::cpu_beyond_span(cpu, wall, cpus))
}

/// Why a rate over a run's timed span is not one (`units::too_short`), or none where it is. A result
/// without its span (another tool's, an older iolab's) is taken as it says.
pub fn span_too_short(result: &Value) -> Option<String> {
    let of = |p| num(result, p);
    let (overhead, tick) = (of(SPAN[1]).unwrap_or(0.0), of(SPAN[2]).unwrap_or(0.0));
    iolab_engine::units::too_short(of(SPAN[0])?, overhead, tick)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A rate over a span too short to time is no figure (no median, no comparison, no regression);
    /// what is not a rate over the span stays.
    #[test]
    fn a_rate_over_a_span_too_short_to_time_is_none() {
        let run = |wall_s: f64| {
            serde_json::json!({"wall_s": wall_s, "iops": 1.0 / wall_s, "mib_s": 1.0, "ns_per_op": wall_s * 1e9,
                "clock": {"overhead_ns": 10.0, "ns_per_tick": 0.4}, "latency": {"p99_ns": 200.0}})
        };
        let by = |name| FIGURES.iter().find(|f| f.name == name).unwrap();
        // 100 x (2 reads of 10 ns + a tick of 0.4 ns) = 2.04 µs.
        for (wall_s, timed) in [(1e-9, false), (2.0e-6, false), (2.1e-6, true), (1.0, true)] {
            let r = run(wall_s);
            for name in ["iops", "mib_s", "ns_per_op"] {
                assert_eq!(
                    figure(&r, by(name)).is_some(),
                    timed,
                    "{name} over {wall_s} s"
                );
            }
            assert_eq!(figure(&r, by("lat_p99")), Some(200.0));
        }
    }

    /// The process's CPU time is no figure where its CPUs could not have spent it in the span (16
    /// threads of one op each: 1.03 ms of CPU in 202 µs on 2 CPUs), nor over a span too short to time.
    #[test]
    fn cpu_time_beyond_what_the_cpus_could_spend_in_the_span_is_none() {
        let run = |wall_s: f64, cpu_s: f64| {
            serde_json::json!({"wall_s": wall_s, "host": {"cpus_online": 2},
                "clock": {"overhead_ns": 10.0, "ns_per_tick": 0.4},
                "cpu": {"process": {"user_s": cpu_s / 2.0, "sys_s": cpu_s / 2.0}}})
        };
        let user = FIGURES.iter().find(|f| f.name == "cpu_user").unwrap();
        for (wall_s, cpu_s, kept) in [
            (202e-6, 1.03e-3, false),
            (1.0, 2.3, false),
            (1.0, 2.2, true),
            (1.0, 0.5, true),
            (1e-6, 1e-7, false),
        ] {
            let r = run(wall_s, cpu_s);
            assert_eq!(
                figure(&r, user).is_some(),
                kept,
                "{cpu_s} s of CPU in {wall_s} s"
            );
        }
        // A record without its machine's CPUs (an older iolab's) is taken as it says.
        let mut r = run(1.0, 5.0);
        r["host"] = serde_json::json!({});
        assert!(figure(&r, user).is_some());
    }
}

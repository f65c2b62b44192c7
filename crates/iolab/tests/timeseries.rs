//! The timed pass over time (`--log-interval`): a 3 s run records an interval per half second whose ops
//! add up to the run's exactly, in time order, with rates and latencies; a short run records none by
//! default; `--csv-intervals` writes a row per interval; and the report of a run with intervals draws
//! IOPS and p99 latency against seconds, with labelled axes.

mod common;
use common::*;

fn intervals(r: &serde_json::Value) -> Vec<serde_json::Value> {
    r["intervals"].as_array().cloned().unwrap_or_default()
}

#[test]
fn a_timed_run_is_recorded_over_time_and_reported() {
    let dir = disk_dir();
    let json = file(&dir, "r.json");
    let csv = file(&dir, "i.csv");
    let r = iolab(&[
        "run",
        "--duration",
        "3",
        "--log-interval",
        "500",
        "--threads",
        "2",
        "--count",
        "none",
        "--json",
        &path_str(&json),
        "--csv-intervals",
        &path_str(&csv),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let res: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let iv = intervals(&res);
    // 3 s in intervals of 0.5 s.
    assert!((5..=7).contains(&iv.len()), "{} intervals", iv.len());
    let ops: u64 = iv.iter().map(|i| u64_of(i, &["ops"])).sum();
    assert_eq!(
        ops,
        u64_of(&res, &["ops"]),
        "the intervals' ops add up to the run's"
    );
    let mut last_end = 0.0;
    for i in &iv {
        let (s, e) = (f64_of(i, &["start_s"]), f64_of(i, &["end_s"]));
        assert!(s >= 0.0 && s < e && e > last_end, "{i} after {last_end}");
        last_end = e;
        assert!(
            f64_of(i, &["iops"]) > 0.0 && f64_of(i, &["mib_s"]) > 0.0,
            "{i}"
        );
        let (p50, p99, max) = (
            f64_of(i, &["lat_p50_ns"]),
            f64_of(i, &["lat_p99_ns"]),
            f64_of(i, &["lat_max_ns"]),
        );
        assert!(p50 > 0.0 && p50 <= p99 && p99 <= max * 1.02, "{i}");
        assert_eq!(u64_of(i, &["bytes"]), u64_of(i, &["ops"]) * 4096, "{i}");
    }
    // The last interval ends with the run.
    assert!(
        (last_end - f64_of(&res, &["wall_s"])).abs() < 1e-6,
        "{last_end}"
    );
    // The CSV: a header and a row per interval.
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("interval,start_s,end_s,ops,bytes,iops,mib_s,lat_p50_ns"),
        "{text}"
    );
    assert_eq!(lines.len(), iv.len() + 1, "{text}");
    assert!(lines[1].starts_with("1,0.0,"), "{text}");
    // The report draws both over time, with labelled axes and a point per interval.
    let page = report(&json, &file(&dir, "r.html"), &file(&dir, "svg"));
    for (name, y, key) in [
        ("iops-over-time", "operations per second (IOPS)", "iops"),
        ("p99-over-time", "p99 latency (", "lat_p99_ns"),
    ] {
        assert!(page.contains(name) || page.contains("over time"), "{name}");
        // On a quiet machine every interval's p99 can fall in one histogram bucket: the report then
        // leaves the flat chart out and says why, instead of drawing a line that shows nothing.
        let ys: Vec<f64> = iv.iter().map(|i| f64_of(i, &[key])).collect();
        let (lo, hi) = ys
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(l, h), &v| (l.min(v), h.max(v)));
        if hi - lo <= 0.005 * hi {
            assert!(
                page.contains(&format!("all {} values are", ys.len())),
                "{name}: a flat series ({ys:?}) is left out with its reason"
            );
            assert!(!file(&dir, &format!("svg/{name}.svg")).exists(), "{name}");
            continue;
        }
        let svg = std::fs::read_to_string(file(&dir, &format!("svg/{name}.svg")))
            .unwrap_or_else(|e| panic!("{name}.svg: {e}"));
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let labels: Vec<String> = doc
            .descendants()
            .filter(|n| {
                n.attribute("class")
                    .is_some_and(|c| c.contains("x-label") || c.contains("y-label"))
            })
            .map(|n| n.descendants().filter_map(|t| t.text()).collect::<String>())
            .collect();
        assert!(
            labels
                .iter()
                .any(|l| l.contains("time since the run's first op (s)")),
            "{name}: {labels:?}"
        );
        assert!(labels.iter().any(|l| l.contains(y)), "{name}: {labels:?}");
        let points = doc
            .descendants()
            .filter(|n| {
                n.attribute("class")
                    .is_some_and(|c| c.split(' ').any(|x| x == "point"))
            })
            .count();
        assert_eq!(points, iv.len(), "{name}");
    }
}

#[test]
fn a_short_run_records_no_intervals_unless_asked() {
    let r = run_json(&["--ops", "20000"]);
    assert!(r.get("intervals").is_none(), "{}", r["intervals"]);
    assert!(r["spec"].get("log_interval_ms").is_none());
    // Asked for: even a short run has them (at least one, covering its ops).
    let r = run_json(&["--ops", "20000", "--log-interval", "10"]);
    let iv = intervals(&r);
    assert!(!iv.is_empty());
    assert_eq!(iv.iter().map(|i| u64_of(i, &["ops"])).sum::<u64>(), 20_000);
    assert_eq!(r["spec"]["log_interval_ms"], 10);
}

#[test]
fn bad_intervals_are_refused_naming_the_flag() {
    let r = iolab(&["run", "--log-interval", "5", "--ops", "10"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("--log-interval: 5 ms is shorter than the 10 ms"),
        "{}",
        r.stderr
    );
    let r = iolab(&["run", "--log-interval", "1s", "--ops", "10"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--log-interval"), "{}", r.stderr);
    let r = iolab(&[
        "run",
        "--method",
        "offload",
        "--log-interval",
        "100",
        "--ops",
        "10",
    ]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--log-interval: --method offload"),
        "{}",
        r.stderr
    );
}

/// A paced run's intervals end on their boundaries and hold the ops due inside them: 4 ops a second
/// for 2 s in quarter seconds is 8 intervals of one op, each a quarter second long (the op due on a
/// boundary was the earlier interval's, which ended with it: 2 and 1 where 1 and 1 were due).
#[test]
fn a_paced_runs_intervals_hold_the_ops_due_in_them() {
    let args = [
        "--method",
        "psync",
        "--target",
        "/dev/null",
        "--bs",
        "4",
        "--rate-iops",
        "4",
        "--duration",
        "2",
        "--log-interval",
        "250",
    ];
    let v = run_json(&args);
    let iv = intervals(&v);
    let ops: Vec<u64> = iv.iter().map(|i| i["ops"].as_u64().unwrap()).collect();
    assert_eq!(ops, vec![1; 8], "{iv:?}");
    for (k, i) in iv.iter().enumerate() {
        let (s, e) = (i["start_s"].as_f64().unwrap(), i["end_s"].as_f64().unwrap());
        assert!(
            (s - k as f64 * 0.25).abs() < 0.01 && (e - (k + 1) as f64 * 0.25).abs() < 0.01,
            "interval {k}: {s} to {e}"
        );
    }
}

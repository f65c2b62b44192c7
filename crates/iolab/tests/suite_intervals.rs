//! `iolab suite --csv-intervals FILE`: every point's time series, a row per interval after the columns
//! naming the point (its repeat too), as `sweep --csv-intervals` writes them.

mod common;
use common::*;

/// A suite of one step (psync, 4 B and 4 KiB writes to a disk file, intervals of 20 ms) run twice.
const SUITE: &str = r#"
name = "intervals"
about = "psync writes with their time series"
reproduces = "nothing: a test of --csv-intervals"
table = "cpu"

[defaults]
ops = "300k"

[quick]
ops = "300k"

[[step]]
label = "psync"
spec = { method = "psync", target = "{disk}/t.dat", log-interval = "20" }
vary = ["bs=4,4k"]
"#;

#[test]
fn suite_csv_intervals_has_every_points_intervals_adding_up_to_its_ops() {
    let d = disk_dir();
    let toml = d.path().join("intervals.toml");
    std::fs::write(&toml, SUITE).unwrap();
    let (csv, out) = (d.path().join("i.csv"), d.path().join("rec.jsonl"));
    let args = |csv: &std::path::Path| {
        vec![
            "suite".to_string(),
            path_str(&toml),
            "--quick".into(),
            "--repeat".into(),
            "2".into(),
            "--disk-dir".into(),
            path_str(d.path()),
            "--csv-intervals".into(),
            path_str(csv),
        ]
    };
    let mut a = args(&csv);
    a.extend(["--out".to_string(), path_str(&out)]);
    let r = iolab(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| {
        head.iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("{name} in {head:?}"))
    };
    let (rep, bs, ops) = (col("point.repeat"), col("point.bs"), col("ops"));
    let mut sums = std::collections::BTreeMap::new();
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        *sums
            .entry((f[rep].to_string(), f[bs].to_string()))
            .or_insert(0u64) += f[ops].parse::<u64>().unwrap();
    }
    // Each point's intervals add up to the ops its record says it ran.
    let recs: Vec<serde_json::Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &serde_json::Value| v.get("result").is_some())
        .collect();
    assert_eq!(recs.len(), 4, "2 block sizes x 2 repeats");
    for v in &recs {
        let key = (
            v["point"]["repeat"].as_str().unwrap().to_string(),
            v["point"]["bs"].as_str().unwrap().to_string(),
        );
        assert_eq!(
            sums.get(&key).copied(),
            v["result"]["ops"].as_u64(),
            "{key:?}: {sums:?}"
        );
    }
    // An existing file is not replaced: exit 2, naming the flag.
    let again = iolab(&args(&csv).iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(again.code, 2, "{}", again.stderr);
    assert!(again.stderr.contains("--csv-intervals"), "{}", again.stderr);
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), text, "untouched");
}

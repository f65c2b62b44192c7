//! `report` and `compare` are linear in the records they read: twice the records is about twice the work
//! (CPU time and peak memory of the process, from wait4's rusage), never four times. Before they were made
//! linear, 1,000 records took 29 s and 2,000 did not finish in 120 s.
//!
//! Ratios measured in one run, not times: CPU time (not wall time) counts only the process's own work, so
//! another process on this shared machine slows it down without changing it much; each side is the least
//! of two runs.

mod common;
use common::*;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

/// A record file of `n` points (bs x qd, as a sweep of two lists records them), made from one real
/// record of a sweep.
fn records(template: &Value, n: usize, path: &Path) {
    let qds: Vec<String> = (1..=10).map(|q| q.to_string()).collect();
    let bss: Vec<String> = (1..=n / 10).map(|b| (b * 512).to_string()).collect();
    let mut text = String::new();
    for bs in &bss {
        for qd in &qds {
            let mut r = template.clone();
            r["point"] = json!({ "bs": bs, "qd": qd });
            r["result"]["spec"]["bs"] = json!(bs.parse::<u64>().unwrap());
            r["result"]["spec"]["qd"] = json!(qd.parse::<u64>().unwrap());
            r["settings"]["vary"] = json!({ "bs": bss, "qd": qds });
            text.push_str(&r.to_string());
            text.push('\n');
        }
    }
    std::fs::write(path, text).unwrap();
}

/// (CPU seconds, peak RSS in KiB) of `iolab ARGS(run)`, which must succeed: the least of two runs, each
/// with its arguments (a report needs a new page name every time).
fn cost(args_of: impl Fn(usize) -> Vec<String>) -> (f64, f64) {
    let mut best = (f64::INFINITY, f64::INFINITY);
    for run in 0..2 {
        let args = args_of(run);
        let mut child = Command::new(bin())
            .args(&args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut status = 0;
        // SAFETY: a zeroed rusage is a valid value for the kernel to fill.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: wait4 of the child this test started, with pointers to live locals.
        let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut ru) };
        assert_eq!(pid, child.id() as i32);
        // Reaped by wait4 already (this returns ECHILD): called so that no path leaves it unwaited.
        let _ = child.wait();
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "iolab {args:?} failed"
        );
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        best.0 = best.0.min(secs(ru.ru_utime) + secs(ru.ru_stime));
        best.1 = best.1.min(ru.ru_maxrss as f64);
    }
    best
}

#[test]
fn report_and_compare_are_linear_in_the_records() {
    let d = tempfile::tempdir().unwrap();
    let base = d.path().join("base.jsonl");
    let r = iolab(&[
        "sweep",
        "--vary",
        "bs=4,8",
        "--ops",
        "100",
        "--target",
        "/dev/null",
        "--count",
        "none",
        "--out",
        &path_str(&base),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let line = std::fs::read_to_string(&base).unwrap();
    let template: Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    let mut costs = Vec::new();
    for n in [1000, 2000] {
        let recs = d.path().join(format!("r{n}.jsonl"));
        records(&template, n, &recs);
        let rec = path_str(&recs);
        let report = cost(|run| {
            let html = path_str(&d.path().join(format!("r{n}-{run}.html")));
            vec!["report".into(), rec.clone(), "-o".into(), html]
        });
        let compare = cost(|_| vec!["compare".into(), rec.clone(), rec.clone()]);
        costs.push((n, report, compare));
    }
    let (_, r1, c1) = costs[0];
    let (_, r2, c2) = costs[1];
    let ratios = [
        ("report CPU", r2.0 / r1.0),
        ("report peak memory", r2.1 / r1.1),
        ("compare CPU", c2.0 / c1.0),
        ("compare peak memory", c2.1 / c1.1),
    ];
    for (what, ratio) in ratios {
        println!("{what}: 2,000 records / 1,000 records = {ratio:.2}x");
    }
    for (what, ratio) in ratios {
        // Linear is 2x (less where a fixed cost is part of it); quadratic would be 4x.
        assert!(
            ratio <= 3.0,
            "{what}: {ratio:.2}x for twice the records: {costs:?}"
        );
    }
}

//! Repeated runs, sweeps (product order, records kept per point, resume), CSV rows and compare.

mod common;
use common::*;

fn lines(p: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn repeat_reports_the_statistics_of_its_runs() {
    let dir = tmpfs_dir();
    let json = dir.path().join("r.json");
    let csv = dir.path().join("r.csv");
    let target = file(&dir, "rep.dat");
    let r = iolab(&[
        "run",
        "--target",
        &path_str(&target),
        "--ops",
        "2000",
        "--repeat",
        "4",
        "--verify",
        "--count",
        "none",
        "--json",
        &path_str(&json),
        "--csv",
        &path_str(&csv),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("repeat       4 runs"), "{}", r.stdout);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    let mut iops: Vec<f64> = runs.iter().map(|r| r["iops"].as_f64().unwrap()).collect();
    for r in runs {
        assert_eq!(r["ops"], 2000);
        assert_eq!(r["verify"]["mismatches"], 0);
    }
    iops.sort_by(|a, b| a.total_cmp(b));
    let fig = doc["repeat"]["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f[0] == "iops")
        .unwrap()[2]
        .clone();
    assert_eq!(fig["n"], 4);
    assert_eq!(fig["min"].as_f64().unwrap(), iops[0]);
    assert_eq!(fig["max"].as_f64().unwrap(), iops[3]);
    let median = fig["median"].as_f64().unwrap();
    assert!(
        (median / ((iops[1] + iops[2]) / 2.0) - 1.0).abs() < 1e-12,
        "{median}"
    );
    // One CSV row per run, with the run's ops.
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows.len(), 5, "{text}");
    let header: Vec<&str> = rows[0].split(',').collect();
    let ops_col = header.iter().position(|c| *c == "ops").unwrap();
    for row in &rows[1..] {
        assert_eq!(row.split(',').nth(ops_col), Some("2000"));
    }
    // An existing --csv file is never replaced, and 0 repeats are refused naming the flag.
    let again = iolab(&["run", "--ops", "10", "--csv", &path_str(&csv)]);
    assert_eq!(again.code, 2);
    assert!(
        again.stderr.starts_with("iolab: --csv:"),
        "{}",
        again.stderr
    );
    let zero = iolab(&["run", "--ops", "10", "--repeat", "0"]);
    assert_eq!(zero.code, 2);
    assert!(
        zero.stderr.starts_with("iolab: --repeat:"),
        "{}",
        zero.stderr
    );
}

#[test]
fn sweep_runs_the_product_in_order_and_resumes() {
    let dir = tmpfs_dir();
    let out = dir.path().join("s.jsonl");
    let csv = dir.path().join("s.csv");
    let target = file(&dir, "sweep.dat");
    let tgt = path_str(&target);
    let args = |out: &str, extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = [
            "sweep",
            "--vary",
            "method=psync,io_uring",
            "--vary",
            "bs=4k,16k",
            "--target",
            &tgt,
            "--ops",
            "500",
            "--verify",
            "--count",
            "none",
            "--out",
            out,
        ]
        .iter()
        .map(|x| x.to_string())
        .collect();
        a.extend(extra.iter().map(|x| x.to_string()));
        a
    };
    let run = |a: Vec<String>| iolab(&a.iter().map(|x| x.as_str()).collect::<Vec<_>>());
    let r = run(args(&path_str(&out), &["--csv", &path_str(&csv)]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let recs = lines(&out);
    let got: Vec<(String, String, u64)> = recs
        .iter()
        .map(|r| {
            (
                r["point"]["method"].as_str().unwrap().to_string(),
                r["point"]["bs"].as_str().unwrap().to_string(),
                r["result"]["bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("psync".into(), "4k".into(), 500 * 4096),
            ("psync".into(), "16k".into(), 500 * 16384),
            ("io_uring".into(), "4k".into(), 500 * 4096),
            ("io_uring".into(), "16k".into(), 500 * 16384),
        ]
    );
    for r in &recs {
        assert_eq!(r["result"]["verify"]["mismatches"], 0, "{}", r["point"]);
        assert_eq!(r["result"]["spec"]["method"], r["point"]["method"]);
    }
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().count(), 5, "{text}");
    assert!(text.starts_with("point.method,point.bs,method,"), "{text}");

    // An interrupted sweep: two whole records and a line cut short. --resume runs the other two only.
    let cut = dir.path().join("cut.jsonl");
    let whole = std::fs::read_to_string(&out).unwrap();
    let first_two: String = whole.split_inclusive('\n').take(2).collect();
    std::fs::write(&cut, format!("{first_two}{{\"point\":{{\"method\"")).unwrap();
    let r = run(args(&path_str(&cut), &["--resume"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("2 already recorded"), "{}", r.stdout);
    assert!(r.stderr.contains("cut short"), "{}", r.stderr);
    assert!(!r.stdout.contains("method=psync bs=4k "), "{}", r.stdout);
    let resumed = lines(&cut);
    assert_eq!(resumed.len(), 4);
    assert_eq!(resumed[0], recs[0]);
    assert_eq!(resumed[3]["point"]["method"], "io_uring");

    // Without --resume the record file is never appended to or replaced.
    let again = run(args(&path_str(&out), &[]));
    assert_eq!(again.code, 2);
    assert!(again.stderr.contains("--resume"), "{}", again.stderr);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), whole);
    // Bad keys and values name --vary before anything runs.
    let bad = iolab(&["sweep", "--vary", "colour=red"]);
    assert_eq!(bad.code, 2);
    // One run a side: the verdict says its noise was not measured.
    let one = dir.path().join("one.json");
    let r = iolab(&[
        "run",
        "--ops",
        "2000",
        "--count",
        "none",
        "--json",
        &path_str(&one),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let c = iolab(&["compare", &path_str(&one), &path_str(&one)]);
    assert_eq!(c.code, 0, "{}", c.stderr);
    assert!(
        c.stdout
            .contains("warning: 4 of 4 rows have a single run in A, 4 in B"),
        "{}",
        c.stdout
    );
    assert!(c.stdout.contains("(noise not measured)"), "{}", c.stdout);
    assert!(bad.stderr.starts_with("iolab: --vary:"), "{}", bad.stderr);
    let bad = iolab(&["sweep", "--method", "io_uring", "--vary", "qd=1,zero"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("qd=zero"), "{}", bad.stderr);
    // A combination that does not apply (--qd for psync) is recorded as not run, with the reason; the
    // points that apply run.
    let mixed = dir.path().join("mixed.jsonl");
    let r = iolab(&[
        "sweep",
        "--vary",
        "method=psync,io_uring",
        "--qd",
        "4",
        "--ops",
        "200",
        "--count",
        "none",
        "--out",
        &path_str(&mixed),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let recs = lines(&mixed);
    assert!(
        recs[0]["error"].as_str().unwrap().contains("--qd"),
        "{}",
        recs[0]
    );
    assert_eq!(recs[1]["result"]["ops"], 200);
    // --inflight instead: every method runs at every point, synchronous ones with as many threads.
    let even = dir.path().join("even.jsonl");
    let data = dir.path().join("r.dat");
    let r = iolab(&[
        "sweep",
        "--vary",
        "method=psync,io_uring,aio,pv2",
        "--vary",
        "inflight=1,4",
        "--op",
        "read",
        "--pattern",
        "rand",
        "--target",
        &path_str(&data),
        "--file-size",
        "1m",
        "--ops",
        "400",
        "--count",
        "none",
        "--out",
        &path_str(&even),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let recs = lines(&even);
    assert_eq!(recs.len(), 8);
    for rec in &recs {
        let res = &rec["result"];
        assert!(rec.get("error").is_none(), "every point runs: {rec}");
        let n = res["spec"]["inflight"].as_u64().unwrap();
        let (t, q) = (
            u64_of(res, &["spec", "threads"]),
            u64_of(res, &["spec", "qd"]),
        );
        let queued = ["io_uring", "aio"].contains(&res["spec"]["method"].as_str().unwrap());
        assert_eq!(if queued { (t, q) } else { (q, t) }, (1, n), "{rec}");
        assert_eq!(res["ops"], 400);
    }
}

#[test]
fn compare_calls_identical_runs_noise_and_flags_regressions() {
    let dir = tmpfs_dir();
    let a = dir.path().join("a.json");
    let r = iolab(&[
        "run",
        "--ops",
        "3000",
        "--repeat",
        "3",
        "--count",
        "none",
        "--json",
        &path_str(&a),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let same = iolab(&[
        "compare",
        &path_str(&a),
        &path_str(&a),
        "--fail-on-regression",
        "1",
    ]);
    assert_eq!(same.code, 0, "{}", same.stderr);
    assert!(same.stdout.contains("within noise"), "{}", same.stdout);
    assert!(
        same.stdout.contains("ops/s")
            && same.stdout.contains("(A: 3 runs, B: 3 runs)")
            && same.stdout.contains("time/op")
            && (same.stdout.contains(" ns ") || same.stdout.contains(" µs ")),
        "units: {}",
        same.stdout
    );
    assert!(
        !same.stdout.contains("single run"),
        "3 runs a side: {}",
        same.stdout
    );
    assert!(!same.stdout.contains("slower") && !same.stdout.contains("faster"));

    // A': the measured runs with throughput set to values 1% apart, and B: the same at half the throughput
    // (synthetic, so the verdict is certain: the measured spread of 3000-op runs on this shared host has
    // exceeded 50%, which would make even a 2x change "within noise").
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&a).unwrap()).unwrap();
    // Each run's wall time and MiB/s follow its rate, as compare refuses a rate its ops and wall
    // time cannot give (a loaded machine makes the measured 3000 ops take longer than 3 ms).
    let set_rate = |r: &mut serde_json::Value, iops: f64| {
        let (ops, bytes) = (r["ops"].as_f64().unwrap(), r["bytes"].as_f64().unwrap());
        let wall = ops / iops;
        r["iops"] = serde_json::json!(iops);
        r["ns_per_op"] = serde_json::json!(1e9 / iops);
        r["wall_s"] = serde_json::json!(wall);
        r["mib_s"] = serde_json::json!(bytes / wall / 1_048_576.0);
    };
    for (k, r) in doc["runs"].as_array_mut().unwrap().iter_mut().enumerate() {
        set_rate(r, 1e6 * [1.0, 1.01, 0.99][k % 3]);
    }
    let a = dir.path().join("a-steady.json");
    std::fs::write(&a, serde_json::to_string(&doc).unwrap()).unwrap();
    for r in doc["runs"].as_array_mut().unwrap() {
        let i = r["iops"].as_f64().unwrap();
        set_rate(r, i / 2.0);
    }
    let b = dir.path().join("b.json");
    std::fs::write(&b, serde_json::to_string(&doc).unwrap()).unwrap();
    let worse = iolab(&[
        "compare",
        &path_str(&a),
        &path_str(&b),
        "--fail-on-regression",
        "5",
    ]);
    assert_eq!(worse.code, 3, "{}{}", worse.stdout, worse.stderr);
    assert!(worse.stdout.contains("slower"), "{}", worse.stdout);
    let better = iolab(&[
        "compare",
        &path_str(&b),
        &path_str(&a),
        "--fail-on-regression",
        "5",
    ]);
    assert_eq!(better.code, 0, "{}", better.stderr);
    assert!(better.stdout.contains("faster"), "{}", better.stdout);
    let bad = iolab(&[
        "compare",
        &path_str(&a),
        &path_str(&a),
        "--fail-on-regression",
        "lots",
    ]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.starts_with("iolab: --fail-on-regression:"),
        "{}",
        bad.stderr
    );
}

/// A sweep whose every point was refused (its target immutable) did nothing it was asked: exit 1 with the
/// first reason, its record file holding each refusal.
#[test]
fn a_sweep_where_no_point_ran_says_so_and_fails() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("so.txt");
    std::fs::write(&t, b"").unwrap();
    let immutable = std::process::Command::new("chattr")
        .arg("+i")
        .arg(&t)
        .status()
        .is_ok_and(|s| s.success());
    if !immutable {
        skip(
            "chattr",
            "chattr +i failed (not root, or the file system has no such flag)",
        );
        return;
    }
    let out = d.path().join("s.jsonl");
    let r = iolab(&[
        "sweep",
        "--vary",
        "bs=512,4k",
        "--method",
        "psync",
        "--target",
        &path_str(&t),
        "--overwrite",
        "--ops",
        "100",
        "--out",
        &path_str(&out),
    ]);
    let _ = std::process::Command::new("chattr")
        .arg("-i")
        .arg(&t)
        .status();
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("no point ran to its end (each was refused); the first: --target:")
            && r.stderr.contains("immutable"),
        "{}",
        r.stderr
    );
    assert_eq!(lines(&out).len(), 2, "each refusal recorded");
}

/// A point refused for its target's state (a file it may not overwrite) is not done: the sweep exits 1
/// naming it, though another point ran; once the cause is gone, `--resume` runs it and exits 0. Resumed
/// with the cause still there, nothing runs this time and it exits 1 again.
#[test]
fn a_point_refused_for_its_targets_state_is_not_a_success_until_resumed() {
    let d = tmpfs_dir();
    let kept = d.path().join("kept.txt");
    std::fs::write(&kept, b"precious").unwrap();
    let out = d.path().join("s.jsonl");
    let targets = format!(
        "target={},{}",
        path_str(&kept),
        path_str(&d.path().join("new.dat"))
    );
    let sweep = |resume: bool| {
        let mut a = vec![
            "sweep", "--vary", &targets, "--ops", "10", "--count", "none",
        ];
        let o = path_str(&out);
        a.extend(["--out", &o]);
        if resume {
            a.push("--resume");
        }
        iolab(&a)
    };
    let r = sweep(false);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "1 of 2 points were not run for their target's state; the first: --overwrite:"
        ),
        "{}",
        r.stderr
    );
    let r = sweep(true);
    assert_eq!(r.code, 1, "still there: {}", r.stderr);
    assert_eq!(std::fs::read(&kept).unwrap(), b"precious", "never written");
    std::fs::remove_file(&kept).unwrap();
    let r = sweep(true);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // The refused point's new record, appended: its result.
    let last = lines(&out).pop().unwrap();
    assert_eq!(last["point"]["target"], path_str(&kept), "{last}");
    assert_eq!(last["result"]["ops"], 10, "{last}");
}

//! Fault injection, issue 15 class 9: the messages say what is wrong and where. TOML errors give line
//! and column, a negative number is the value of the flag it follows, a suite file's errors name the
//! file, EMFILE explains where the descriptors went, a dangling symlink target says so, aio errors are
//! aio's. (Errno names: `sys::errno` unit tests.)

mod common;
use common::*;
use std::process::Command;

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn toml_errors_give_line_and_column() {
    let d = tmp();
    let spec = d.path().join("spec.toml");
    std::fs::write(&spec, "qd = 4\nbs = \"4k\n").unwrap();
    let r = iolab(&["run", "--spec", &path_str(&spec)]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.starts_with(&format!(
            "iolab: --spec: {}: line 2, column ",
            spec.display()
        )),
        "{}",
        r.stderr
    );
}

#[test]
fn suite_file_errors_name_the_file() {
    let d = tmp();
    let head =
        "name = \"x\"\nabout = \"a\"\nreproduces = \"r\"\ntable = \"throughput\"\n[[step]]\n";
    let bad = d.path().join("bad-toml.toml");
    std::fs::write(
        &bad,
        format!("{head}label = \"s1\"\nspec = {{ method = = \"psync\" }}\n"),
    )
    .unwrap();
    let r = iolab(&["suite", &path_str(&bad)]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains(&format!("{}: line 7, column ", bad.display())),
        "{}",
        r.stderr
    );
    // An error found in a step (not by the TOML parser) names the file too, not suites/x.toml.
    let step = d.path().join("bad-step.toml");
    std::fs::write(
        &step,
        format!("{head}label = \"s1\"\nspec = {{ method = \"psync\", colour = \"red\" }}\n"),
    )
    .unwrap();
    let r = iolab(&["suite", &path_str(&step), "--quick"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains(&format!("{}, step 's1': ", step.display()))
            && !r.stderr.contains("suites/x.toml"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_negative_number_is_the_flags_value() {
    for (flag, needle) in [
        ("--ops", "'-1' is not a count"),
        ("--bs", "'-1' is not a size"),
        ("--threads", "'-1' is not a count"),
        ("--duration", "'-1' is not a duration"),
    ] {
        let r = iolab(&["run", flag, "-1", "--target", "/dev/null"]);
        assert_eq!(r.code, 2, "{flag} -1: {}", r.stderr);
        assert!(
            r.stderr.starts_with(&format!("iolab: {flag}: {needle}")),
            "{flag} -1: {}",
            r.stderr
        );
        assert!(!r.stderr.contains("unexpected argument"), "{}", r.stderr);
    }
    // So is a negative regression limit (refused by iolab, not taken for a flag by the parser).
    let r = iolab(&["compare", "--fail-on-regression", "-5", "a.json", "b.json"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.starts_with(
            "iolab: --fail-on-regression: '-5' is not accepted; expected a percentage"
        ),
        "{}",
        r.stderr
    );
    // A flag after a flag that wants a value is still a flag, not the value.
    let r = iolab(&["run", "--bs", "--ops", "5"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("'--bs <SIZE>'"), "{}", r.stderr);
    // In a sweep, a fixed flag that fails every point alike is bad input before anything runs.
    let d = tmp();
    let out = d.path().join("s.jsonl");
    let r = iolab(&[
        "sweep",
        "--vary",
        "bs=4,8",
        "--ops",
        "-1",
        "--out",
        &path_str(&out),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.starts_with("iolab: --ops: '-1'"), "{}", r.stderr);
    assert!(!out.exists(), "nothing recorded");
}

#[test]
fn a_dangling_symlink_target_says_so() {
    let d = tmp();
    let link = d.path().join("link");
    std::os::unix::fs::symlink(d.path().join("nowhere"), &link).unwrap();
    let r = iolab(&[
        "run",
        "--method",
        "psync",
        "--target",
        &path_str(&link),
        "--ops",
        "10",
        "--count",
        "none",
    ]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("dangling symlink") && r.stderr.contains("nowhere"),
        "{}",
        r.stderr
    );
    assert!(
        !d.path().join("nowhere").exists(),
        "nothing created through it"
    );
}

#[test]
fn emfile_names_the_breakdowns_descriptors() {
    let script = format!(
        "ulimit -n 16 && exec {} run --method psync --target /dev/null --ops 1000",
        bin()
    );
    let o = Command::new("sh").args(["-c", &script]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    if o.status.success() {
        skip(
            "tracepoints",
            "the counting pass needs no more than 16 descriptors here (no tracepoints?)",
        );
        return;
    }
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("EMFILE") && err.contains("--no-breakdown") && err.contains("ulimit -n"),
        "{err}"
    );
}

#[test]
fn aio_errors_are_labelled_aio() {
    if !is_root() {
        skip("root", "mounting a small tmpfs needs root");
        return;
    }
    let d = tmp();
    let st = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
        .arg(d.path())
        .status()
        .unwrap();
    if !st.success() {
        skip("mount", &format!("mount -t tmpfs failed: {st}"));
        return;
    }
    let target = d.path().join("f");
    let r = iolab(&[
        "run",
        "--method",
        "aio",
        "--target",
        &path_str(&target),
        "--file-size",
        "1m",
        "--bs",
        "4k",
        "--count",
        "none",
    ]);
    let _ = Command::new("umount").arg(d.path()).status();
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("aio write failed: ENOSPC") && !r.stderr.contains("io_uring"),
        "{}",
        r.stderr
    );
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

/// A rate over a span iolab calls too short to time is no figure anywhere: `compare` neither prints nor
/// counts it (two 1-op runs of nop were "slower" and exit 3 under --fail-on-regression), the report's
/// table says "too short" in its cells, and the `--repeat` summary has no median of it.
#[test]
fn rates_over_spans_too_short_to_time_are_compared_nowhere() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a.json"), d.path().join("b.json"));
    // One op of nop is too short to time unless a busy machine stretched it past the threshold (about
    // 2 µs here): a run that was rated is run again, and the record is what says which it was.
    let too_short = |p: &std::path::Path| {
        // iolab replaces no file: the last try's record goes first.
        let _ = std::fs::remove_file(p);
        let r = iolab(&[
            "run",
            "--method",
            "nop",
            "--ops",
            "1",
            "--count",
            "none",
            "--json",
            &path_str(p),
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        let withheld = v["derived"]["rate_withheld"].is_string();
        assert_eq!(
            withheld,
            r.stdout.contains("too short to time"),
            "{}",
            r.stdout
        );
        withheld
    };
    for p in [&a, &b] {
        if !(0..20).any(|_| too_short(p)) {
            skip(
                "timing",
                "20 runs of one nop op were each long enough to time on this busy machine",
            );
            return;
        }
    }
    let r = iolab(&[
        "compare",
        &path_str(&a),
        &path_str(&b),
        "--fail-on-regression",
        "1",
    ]);
    assert!(r.code == 0 || r.code == 3, "{}", r.stderr);
    for rate in ["ops/s", "time/op", "MiB/s"] {
        assert!(
            !r.stdout.contains(rate),
            "compare printed {rate}:\n{}",
            r.stdout
        );
    }
    // The report's table says so in the rate's cells.
    let html = d.path().join("r.html");
    let r = iolab(&["report", &path_str(&a), "-o", &path_str(&html)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let page = std::fs::read_to_string(&html).unwrap();
    let table = &page[page.find("class=\"runs\"").expect("a runs table")..];
    let row = &table[table.find("<tr><td>").unwrap()..table.find("</table>").unwrap()];
    assert_eq!(row.matches(">too short</td>").count(), 3, "{row}");
    assert!(!row.contains("ops/s"), "{row}");
    // One op: too short to time, unless a busy machine stretched a repeat's span past 100x the clock's
    // uncertainty (at least 1 µs), which the summary may then rate: it shows rates only where one did.
    let json = d.path().join("rep.json");
    let r = iolab(&[
        "run",
        "--method",
        "nop",
        "--ops",
        "1",
        "--count",
        "none",
        "--repeat",
        "3",
        "--json",
        &path_str(&json),
        "--csv",
        &path_str(&d.path().join("rep.csv")),
    ]);
    let summary = &r.stdout[r.stdout.find("repeat").expect("a summary")..];
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let timed = doc["runs"].as_array().unwrap().iter().any(|x| {
        let n = |p: &str| x.pointer(p).and_then(|v| v.as_f64()).unwrap_or(0.0);
        let min = (100.0 * (2.0 * n("/clock/overhead_ns") + n("/clock/ns_per_tick"))).max(1000.0);
        n("/wall_s") * 1e9 >= min
    });
    // The JSON says which runs' iops are no rate, and has no CPU per op for them; the CSV leaves them
    // empty and says why in its last column.
    let csv = std::fs::read_to_string(d.path().join("rep.csv")).unwrap();
    let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    assert_eq!(head.last(), Some(&"withheld"));
    for (line, x) in csv.lines().skip(1).zip(doc["runs"].as_array().unwrap()) {
        let withheld = x["derived"]["rate_withheld"].is_string();
        let iops = line.split(',').nth(col("iops")).unwrap();
        assert_eq!(iops.is_empty(), withheld, "{line}");
        assert_eq!(
            line.contains("iops, mib_s, ns_per_op: too short to time ("),
            withheld,
            "{line}"
        );
    }
    for x in doc["runs"].as_array().unwrap() {
        let n = |p: &str| x.pointer(p).and_then(|v| v.as_f64()).unwrap_or(0.0);
        let min = (100.0 * (2.0 * n("/clock/overhead_ns") + n("/clock/ns_per_tick"))).max(1000.0);
        let withheld = x["derived"]["rate_withheld"].as_str();
        assert_eq!(
            withheld.is_some(),
            n("/wall_s") * 1e9 < min,
            "{}",
            x["derived"]
        );
        if let Some(why) = withheld {
            assert!(why.starts_with("too short to time ("), "{why}");
            assert!(x["derived"]["cpu_ns_per_op"].is_null(), "{}", x["derived"]);
        }
    }
    let rated = summary.contains("ops/s") || summary.contains("IOPS");
    assert!(
        !rated || timed,
        "rates of spans too short to time:\n{summary}"
    );
    if timed {
        println!(
            "a repeat's span was long enough to time here (a busy machine): its rates may show"
        );
    }
}

//! Fault injection, issue 15 class 7: record files keep their integrity. A `--resume` onto a last line
//! without its newline, with other flags or --vary lists, while another iolab records into the same
//! file, or after points were refused because of a leftover target file.

mod common;
use common::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn records(p: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// `iolab sweep --vary bs=4k,16k` recorded in `out`, with `extra` flags, writing to /dev/null unless
/// they give a --target.
fn sweep(out: &Path, extra: &[&str]) -> Ran {
    let out = path_str(out);
    let mut a = vec![
        "sweep",
        "--vary",
        "bs=4k,16k",
        "--count",
        "none",
        "--out",
        &out,
    ];
    if !extra.contains(&"--target") {
        a.extend(["--target", "/dev/null"]);
    }
    a.extend_from_slice(extra);
    iolab(&a)
}

#[test]
fn resume_ends_a_last_line_that_has_no_newline() {
    let dir = tmpfs_dir();
    let whole = dir.path().join("whole.jsonl");
    let r = sweep(&whole, &["--ops", "100"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // The first record, its newline lost (a file edited by hand, or copied by a tool that trims).
    let first = std::fs::read_to_string(&whole).unwrap();
    let first = first.lines().next().unwrap();
    let out = dir.path().join("s.jsonl");
    std::fs::write(&out, first).unwrap();
    let r = sweep(&out, &["--ops", "100", "--resume"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("1 already recorded"), "{}", r.stdout);
    assert!(r.stderr.contains("no newline"), "{}", r.stderr);
    let recs = records(&out);
    assert_eq!(recs.len(), 2, "two records, one a line");
    assert_eq!(recs[0]["point"]["bs"], "4k");
    assert_eq!(recs[1]["point"]["bs"], "16k");
    assert!(std::fs::read_to_string(&out).unwrap().ends_with('\n'));
}

#[test]
fn resume_refuses_other_flags_or_vary_lists_naming_the_keys() {
    let dir = tmpfs_dir();
    let out = dir.path().join("s.jsonl");
    let r = sweep(&out, &["--ops", "100"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let before = std::fs::read_to_string(&out).unwrap();
    let r = sweep(&out, &["--ops", "200", "--resume"]);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("--resume:") && r.stderr.contains("ops (recorded 100, now 200)"),
        "{}",
        r.stderr
    );
    let r = sweep(&out, &["--ops", "100", "--pattern", "rand", "--resume"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("pattern (recorded not given, now rand)"),
        "{}",
        r.stderr
    );
    let r = iolab(&[
        "sweep",
        "--vary",
        "bs=4k,64k",
        "--target",
        "/dev/null",
        "--count",
        "none",
        "--ops",
        "100",
        "--out",
        &path_str(&out),
        "--resume",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("vary bs (recorded 4k,16k, now 4k,64k)"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        before,
        "a refused resume writes nothing"
    );
    // The same settings resume (nothing left to run).
    let r = sweep(&out, &["--ops", "100", "--resume"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("2 already recorded"), "{}", r.stdout);

    // A file of an older iolab (records without settings) resumes as before, with a note.
    let old = dir.path().join("old.jsonl");
    let first = &records(&out)[0];
    let mut rec = first.clone();
    rec.as_object_mut().unwrap().remove("settings");
    std::fs::write(&old, format!("{rec}\n")).unwrap();
    let r = sweep(&old, &["--ops", "300", "--resume"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("older iolab"), "{}", r.stderr);
    assert_eq!(records(&old).len(), 2);
}

#[test]
fn a_second_iolab_on_the_same_record_file_is_refused_while_the_first_runs() {
    let dir = tmpfs_dir();
    let out = dir.path().join("s.jsonl");
    let args = [
        "sweep",
        "--vary",
        "bs=4k,16k",
        "--target",
        "/dev/null",
        "--count",
        "none",
        "--duration",
        "2s",
        "--out",
    ];
    let mut first = Command::new(bin())
        .args(args)
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("iolab starts");
    let t0 = Instant::now();
    while !out.exists() && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(out.exists(), "the first sweep made its record file");
    // It locks the file just after making it.
    std::thread::sleep(Duration::from_millis(300));
    let mut second: Vec<&str> = args.to_vec();
    let o = path_str(&out);
    second.extend([o.as_str(), "--resume"]);
    let r = iolab(&second);
    let still_running = first.try_wait().unwrap().is_none();
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("another iolab holds"), "{}", r.stderr);
    assert!(still_running, "the first sweep (4 s) was still running");
    assert!(first.wait().unwrap().success());
    let recs = records(&out);
    assert_eq!(recs.len(), 2, "each point recorded once");
}

#[test]
fn points_refused_for_a_leftover_target_run_again_at_resume() {
    let dir = tmpfs_dir();
    let out = dir.path().join("s.jsonl");
    // A target left behind (as by a killed iolab): every point is refused and recorded as not run.
    let target = dir.path().join("t.dat");
    std::fs::write(&target, b"left behind").unwrap();
    let tgt = path_str(&target);
    let args = ["--op", "write", "--ops", "100", "--target", &tgt, "--csv"];
    let csv1 = path_str(&dir.path().join("1.csv"));
    let r = sweep(&out, &[&args[..], &[&csv1]].concat());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let recs = records(&out);
    assert!(recs.iter().all(|r| r["error"]
        .as_str()
        .unwrap()
        .contains("exists and was not made by this run")));
    // Once it is gone, --resume runs those points (the latest record of each point counts).
    std::fs::remove_file(&target).unwrap();
    let csv2 = path_str(&dir.path().join("2.csv"));
    let r = sweep(&out, &[&args[..], &[&csv2, "--resume"]].concat());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.contains("already recorded"), "{}", r.stdout);
    let recs = records(&out);
    assert_eq!(recs.len(), 4);
    assert_eq!(recs[2]["result"]["bytes"], 100 * 4096);
    assert_eq!(recs[3]["result"]["bytes"], 100 * 16384);
    let csv = std::fs::read_to_string(&csv2).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(!csv.contains("exists"), "{csv}");
    // The readers take the later record: compare finds both workloads.
    let r = iolab(&["compare", &path_str(&out), &path_str(&out)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("bs=16 KiB"), "{}", r.stdout);
    // Points that ran are not run again.
    let r = sweep(
        &out,
        &[
            "--op", "write", "--ops", "100", "--target", &tgt, "--resume",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("2 already recorded"), "{}", r.stdout);
    assert!(!target.exists());
}

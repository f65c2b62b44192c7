//! Fault injection, issue 15 class 7: record files keep their integrity. A `--resume` onto a last line
//! without its newline, with other flags or --vary lists, while another iolab records into the same
//! file, or after points were refused because of a leftover target file. And what record readers
//! refuse of hostile input: bytes no JSON holds, figures no run measures, a result that is no run's.

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
    // No point ran: the sweep did nothing it was asked, and says so.
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("no point ran"), "{}", r.stderr);
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

/// `iolab ARGS` run to its end: its exit code, its stderr, and its peak resident bytes (wait4's rusage,
/// which the load of other processes does not change).
fn with_peak(args: &[&str]) -> (i32, String, u64) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for the kernel to fill.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 of the child this process started, with pointers to live locals.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut ru) };
    assert_eq!(pid, child.id() as i32);
    // Reaped by wait4 already: called so that no path leaves it unwaited.
    let _ = child.wait();
    assert!(libc::WIFEXITED(status), "iolab {args:?} did not exit");
    (
        libc::WEXITSTATUS(status),
        stderr,
        ru.ru_maxrss as u64 * 1024,
    )
}

#[test]
fn a_file_of_nul_bytes_is_refused_at_its_first_byte_without_being_read() {
    let dir = tmpfs_dir();
    // 600 MB of NUL bytes: a hole in a sparse file (no memory of the tmpfs used).
    let nul = dir.path().join("nul.jsonl");
    std::fs::File::create(&nul)
        .and_then(|f| f.set_len(600 << 20))
        .unwrap();
    let good = dir.path().join("good.jsonl");
    assert_eq!(sweep(&good, &["--ops", "100"]).code, 0);
    let html = path_str(&dir.path().join("r.html"));
    for args in [
        vec!["report", nul.to_str().unwrap(), "-o", &html],
        vec!["compare", good.to_str().unwrap(), nul.to_str().unwrap()],
    ] {
        let (code, stderr, peak) = with_peak(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert_eq!(
            stderr.trim(),
            format!(
                "iolab: {}: {}: not JSON text: byte 0 is 0x00, which no JSON text holds",
                args[0],
                nul.display()
            )
        );
        // Read whole, the file alone would be 600 MB resident.
        assert!(peak < 100 << 20, "{args:?}: {peak} bytes resident");
    }
    assert!(!Path::new(&html).exists());
}

#[test]
fn compare_refuses_a_survey_run_with_a_figure_no_run_measures() {
    let dir = tmpfs_dir();
    let run = dir.path().join("run.json");
    let r = iolab(&[
        "run",
        "--target",
        "/dev/null",
        "--bs",
        "4",
        "--ops",
        "100",
        "--count",
        "none",
        "--json",
        run.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&run).unwrap()).unwrap();
    let survey = |r: &serde_json::Value, name: &str| {
        let p = dir.path().join(name);
        let doc = serde_json::json!({"runs": [{"target": "/dev/null", "method": "psync", "bs": 4,
            "result": r, "unavailable": null}], "ranking": []});
        std::fs::write(&p, doc.to_string()).unwrap();
        path_str(&p)
    };
    let a = survey(&result, "a.json");
    let mut forged = result.clone();
    forged["iops"] = serde_json::json!(-1e308);
    forged["latency"]["p99_ns"] = serde_json::json!(-5.0);
    let b = survey(&forged, "b.json");
    let r = iolab(&["compare", &a, &b]);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert_eq!(
        r.stderr.trim(),
        format!("iolab: compare: {b}: record 1: iops is -1e+308; not a record iolab wrote (damaged or forged)")
    );
    let r = iolab(&["compare", &a, &a]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn resume_refuses_a_record_whose_result_is_no_runs_and_records_hold_no_negative_zero() {
    let dir = tmpfs_dir();
    let out = dir.path().join("s.jsonl");
    assert_eq!(sweep(&out, &["--ops", "100"]).code, 0);
    let text = std::fs::read_to_string(&out).unwrap();
    // An empty sum of CPU times is -0.0 in Rust; no record says so.
    assert!(!text.contains(":-0.0"), "{text}");
    let mut garbage = records(&out)[0].clone();
    garbage["result"] = serde_json::json!({"x": 1});
    std::fs::write(&out, format!("{}{garbage}\n", text)).unwrap();
    let r = sweep(&out, &["--ops", "100", "--resume"]);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("--resume:")
            && r.stderr
                .contains("line 3: its result is not a run's (no spec, workload or figure)"),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("NaN"), "{}", r.stdout);
    // A record of another sweep (a point key this one does not vary), with the same settings, is not
    // kept as if it were one of this sweep's.
    let mut foreign = records(&out)[0].clone();
    foreign["point"]["seed"] = serde_json::json!("7");
    std::fs::write(&out, format!("{text}{foreign}\n")).unwrap();
    let r = sweep(&out, &["--ops", "100", "--resume"]);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("line 3: its point names seed, which this sweep does not vary"),
        "{}",
        r.stderr
    );
    // A file whose only line is cut short says so, as report does.
    std::fs::write(&out, "{\"a\":1").unwrap();
    let r = sweep(&out, &["--ops", "100", "--resume"]);
    assert!(
        r.code == 2 && r.stderr.contains("its only line is cut short (6 bytes"),
        "{}",
        r.stderr
    );
}

/// A sweep killed while it wrote a record leaves its last line cut short: `report` and `compare` read the
/// whole records and say that line was left out (with its length), not as if the file were whole. A
/// cut line that is junk beyond a cut (a refused value) is refused, not taken for a cut.
#[test]
fn report_and_compare_say_a_cut_short_last_line_was_left_out() {
    let dir = tmpfs_dir();
    let out = dir.path().join("s.jsonl");
    let r = sweep(&out, &["--ops", "100"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(&out).unwrap();
    let second = text.lines().nth(1).unwrap();
    let cut = &text[..text.len() - second.len() / 2 - 1];
    std::fs::write(&out, cut).unwrap();
    let html = dir.path().join("r.html");
    let r = iolab(&["report", &path_str(&out), "-o", &path_str(&html)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("from 1 records"), "{}", r.stdout);
    let says = "its last line was cut short (";
    assert!(
        r.stderr.contains(says) && r.stderr.contains("left out"),
        "{}",
        r.stderr
    );
    let r = iolab(&["compare", &path_str(&out), &path_str(&out)]);
    assert!(r.stderr.contains(says), "{}", r.stderr);
    // A last line refused for what it holds (a cdf longer than iolab writes) is named, not dropped.
    let first = text.lines().next().unwrap();
    let mut v: serde_json::Value = serde_json::from_str(first).unwrap();
    v["result"]["latency"]["cdf"] = serde_json::json!(vec![[1.0, 0.5]; 100]);
    std::fs::write(&out, format!("{first}\n{v}")).unwrap();
    let html = dir.path().join("r2.html");
    let r = iolab(&["report", &path_str(&out), "-o", &path_str(&html)]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("`cdf` holds more than 64"),
        "{}",
        r.stderr
    );
}

/// A report reads each file once: the same file named twice, or a hard link to it, is refused (each name
/// was read again: 60 names of one file ran out of memory), and nothing is written.
#[test]
fn report_reads_a_file_once_however_it_is_named() {
    let dir = tmpfs_dir();
    let out = dir.path().join("s.jsonl");
    let r = sweep(&out, &["--ops", "100"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let link = dir.path().join("again.jsonl");
    std::fs::hard_link(&out, &link).unwrap();
    let html = dir.path().join("r.html");
    for second in [&out, &link] {
        let r = iolab(&[
            "report",
            &path_str(&out),
            &path_str(second),
            "-o",
            &path_str(&html),
        ]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(
            r.stderr.contains(&format!(
                "{} is the same file as {} (named twice, or a link)",
                path_str(second),
                path_str(&out)
            )),
            "{}",
            r.stderr
        );
        assert!(!html.exists());
    }
    // The files named are counted before any is read: a damaged first file is not read when a second
    // one (sparse, 1.1 GiB) takes them past the bound.
    let damaged = dir.path().join("damaged.jsonl");
    std::fs::write(&damaged, b"\0\0\0\n").unwrap();
    let huge = dir.path().join("huge.jsonl");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(1_100 << 20)
        .unwrap();
    let r = iolab(&[
        "report",
        &path_str(&damaged),
        &path_str(&huge),
        "-o",
        &path_str(&html),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("a report reads in all") && !r.stderr.contains("0x00"),
        "{}",
        r.stderr
    );
    // A fleet's results directory shares the count: named twice, or beside one of its own files.
    let fleet = dir.path().join("fleet");
    std::fs::create_dir_all(fleet.join("h0/files")).unwrap();
    std::fs::write(
        fleet.join("h0/fleet-host.json"),
        r#"{"rc": 0, "kernel": "k", "records": ["r.jsonl"]}"#,
    )
    .unwrap();
    std::fs::copy(&out, fleet.join("h0/files/r.jsonl")).unwrap();
    let own = fleet.join("h0/files/r.jsonl");
    for args in [[&fleet, &fleet], [&fleet, &own]] {
        let r = iolab(&[
            "report",
            &path_str(args[0]),
            &path_str(args[1]),
            "-o",
            &path_str(&html),
        ]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains(" is the same file as "), "{}", r.stderr);
        assert!(!html.exists());
    }
}

/// A process CPU time its CPUs could not have spent in the timed span (mostly spent starting threads, or
/// sampled per tick) is no figure of the run in the report: its cells say "withheld", with the reason.
#[test]
fn report_withholds_cpu_time_beyond_what_the_span_allows() {
    let dir = tmpfs_dir();
    let rec = dir.path().join("r.json");
    let r = iolab(&[
        "run",
        "--method",
        "nop",
        "--ops",
        "1000",
        "--json",
        &path_str(&rec),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&rec).unwrap()).unwrap();
    // Half a second of CPU in a span of microseconds, within what a reader takes as a record.
    v["cpu"]["process"]["user_s"] = serde_json::json!(0.5);
    std::fs::write(&rec, v.to_string()).unwrap();
    let html = dir.path().join("r.html");
    let r = iolab(&["report", &path_str(&rec), "-o", &path_str(&html)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(
        page.matches(">withheld</td>").count(),
        2,
        "user and system CPU"
    );
    assert!(
        page.contains("title=\"the process&#39;s CPU time (500.")
            || page.contains("title=\"the process's CPU time (500."),
        "the reason"
    );
}

/// A record whose point names another block size than its result ran with (two records' results swapped)
/// is no record iolab wrote: `--resume` and `report` refuse it, naming the line and the key.
#[test]
fn a_record_whose_point_and_spec_disagree_is_refused() {
    let dir = tmpfs_dir();
    let out = dir.path().join("s.jsonl");
    let r = sweep(&out, &["--ops", "100"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut recs = records(&out);
    let first = recs[0]["result"].clone();
    recs[0]["result"] = recs[1]["result"].clone();
    recs[1]["result"] = first;
    let text: String = recs.iter().map(|v| format!("{v}\n")).collect();
    std::fs::write(&out, text).unwrap();
    let r = sweep(&out, &["--ops", "100", "--resume"]);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("line 1: its point names bs 4k, but its result ran with 16384"),
        "{}",
        r.stderr
    );
    let html = dir.path().join("r.html");
    let r = iolab(&["report", &path_str(&out), "-o", &path_str(&html)]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("its point names bs 4k"), "{}", r.stderr);
}

/// A survey document whose ranking holds more than any survey writes (its tables repeated: 210 MB took
/// `compare` 5.1 GB) is refused as it is parsed, naming `ranking`, in bounded memory.
#[test]
fn a_survey_ranking_beyond_what_a_survey_writes_is_refused_as_parsed() {
    let dir = tmpfs_dir();
    let doc = dir.path().join("survey.json");
    let row = r#"{"method":"psync","rank":"1=","median":1.0,"tied_with":["sync","pv2"]}"#;
    let table = format!(
        r#"{{"target":"/dev/null","bs":4096,"unit":"ns/op","rows":[{}]}}"#,
        vec![row; 13].join(",")
    );
    let text = format!(
        r#"{{"schema_version":1,"runs":[],"ranking":[{}]}}"#,
        vec![table.as_str(); 5000].join(",")
    );
    std::fs::write(&doc, text).unwrap();
    for args in [
        vec![
            "report".to_string(),
            path_str(&doc),
            "-o".into(),
            path_str(&dir.path().join("r.html")),
        ],
        vec!["compare".to_string(), path_str(&doc), path_str(&doc)],
    ] {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = iolab(&a);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("`ranking` holds more than 262144 values"),
            "{args:?}: {}",
            r.stderr
        );
    }
}

/// A `run --repeat` document holds a statistic per figure and as many runs as its repeat says: one with
/// its statistics repeated (1.3 million copies took `report` 1.9 GB) or more runs than it says is
/// refused, naming why.
#[test]
fn a_repeat_document_holds_what_its_repeat_says() {
    let dir = tmpfs_dir();
    let doc = dir.path().join("rep.json");
    let r = iolab(&[
        "run",
        "--ops",
        "100",
        "--repeat",
        "2",
        "--json",
        &path_str(&doc),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&doc).unwrap()).unwrap();
    let html = dir.path().join("r.html");
    let report = |v: &serde_json::Value| {
        std::fs::write(&doc, v.to_string()).unwrap();
        let _ = std::fs::remove_file(&html);
        iolab(&["report", &path_str(&doc), "-o", &path_str(&html)])
    };
    assert_eq!(report(&v).code, 0);
    let mut figures = v.clone();
    let one = figures["repeat"]["figures"][0].clone();
    figures["repeat"]["figures"] = serde_json::json!(vec![one; 100]);
    let r = report(&figures);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("`figures` holds more than 64 items"),
        "{}",
        r.stderr
    );
    let mut runs = v.clone();
    let first = runs["runs"][0].clone();
    runs["runs"].as_array_mut().unwrap().push(first);
    let r = report(&runs);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("its repeat says 2 runs, but it holds 3"),
        "{}",
        r.stderr
    );
}

//! `iolab survey --target PATH`: the user's own target and workload, every method at the same requests in
//! flight, ranked, each row with what limited it; writes to what iolab did not make refused before any work.

mod common;
use common::*;

fn survey(dir: &std::path::Path, args: &[&str]) -> Ran {
    let mut a = vec![
        "survey",
        "--rounds",
        "1",
        "--max-time",
        "0",
        "--max-seconds",
        "0.05",
        "--results-dir",
    ];
    let results = dir.join("results");
    let results = path_str(&results);
    a.push(&results);
    a.extend_from_slice(args);
    iolab(&a)
}

/// Whether the survey `v` traced the block layer (its header names the time per layer).
fn traced(v: &serde_json::Value) -> bool {
    v["layers"]
        .as_str()
        .is_some_and(|l| l.starts_with("time per layer"))
}

#[test]
fn every_method_runs_at_the_same_depth_on_a_directory_and_leaves_nothing() {
    let work = disk_dir();
    let target = disk_dir();
    let r = survey(
        work.path(),
        &[
            "--target",
            &path_str(target.path()),
            "--workload",
            "randread",
            "--bs",
            "4k",
            "--inflight",
            "8",
            "--direct",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    // Before any run it says what it will do and what it writes; then each workload's fastest, with its
    // rate and latency.
    let first = r.stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("plan: 1 workload x ")
            && r.stdout.contains("writes: 64 MiB for the reads in "),
        "{}",
        r.stdout
    );
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains("RND4K Q8 read"))
        .unwrap_or_default();
    assert!(
        line.contains(" IOPS ") && line.matches(" µs").count() + line.matches(" ms").count() >= 2,
        "{}",
        r.stdout
    );
    assert!(r.stdout.lines().count() <= 25, "{}", r.stdout);
    let v = only_json_in(&work.path().join("results"));
    let runs = v["runs"].as_array().unwrap();
    let ran = ran_runs(&v);
    // Root traces the block layer, in a tracefs of iolab's own where none is mounted.
    // SAFETY: geteuid has no preconditions.
    let traceable = traced(&v) && unsafe { libc::geteuid() } == 0;
    for m in ["psync", "io_uring", "aio"] {
        let run = ran
            .iter()
            .find(|r| r["method"] == m)
            .unwrap_or_else(|| panic!("{m} ran: {v}"));
        let spec = &run["result"]["spec"];
        assert_eq!(spec["inflight"], 8, "{m}");
        assert_eq!(spec["direct"], true, "{m}");
        let (t, q) = (u64_of(spec, &["threads"]), u64_of(spec, &["qd"]));
        assert_eq!(if m == "psync" { (t, q) } else { (q, t) }, (8, 1), "{m}");
        // The reads share one file, laid out once.
        assert!(
            spec["target"].as_str().unwrap().ends_with("/reads.dat"),
            "{m}: {spec}"
        );
        assert!(
            run["verdict"]["text"].as_str().unwrap().len() > 20,
            "{m}: {run}"
        );
        // Where the block layer can be traced, each run's time per op is split there, and the parts add up.
        if traceable {
            let l = &run["result"]["layers"];
            assert!(l.is_object(), "{m}: no layers: {}", run["result"]["notes"]);
            // Left out: ops whose events were incomplete (none lost here, so at most a stray few).
            assert!(
                u64_of(l, &["ops_unmatched"]) * 100 <= u64_of(l, &["ops"]),
                "{m}: {l}"
            );
            let parts: f64 = ["before_ns", "queued_ns", "device_ns", "after_ns"]
                .iter()
                .map(|k| f64_of(l, &[k]))
                .sum();
            let pass = f64_of(l, &["pass_mean_ns"]);
            assert!((parts - pass).abs() <= pass * 1e-6 + 1.0, "{m}: {l}");
            assert!(f64_of(l, &["device_ns"]) > 0.0, "{m}: {l}");
        }
    }
    if !traceable {
        skip(
            trace_lack(target.path()),
            "the layers of the survey's runs: not root, or tracefs or a disk missing",
        );
    }
    // Every method that ran is ranked, against pread().
    let table = &v["ranking"][0];
    assert_eq!(table["baseline"], "psync");
    assert_eq!(table["rows"].as_array().unwrap().len(), ran.len());
    // What cannot do it says why (stdio cannot O_DIRECT).
    let stdio = runs.iter().find(|r| r["method"] == "stdio").unwrap();
    assert!(
        stdio["unavailable"]
            .as_str()
            .unwrap()
            .starts_with("--direct"),
        "{stdio}"
    );
    // The temporary directory and every file in it are gone.
    assert_eq!(std::fs::read_dir(target.path()).unwrap().count(), 0);
}

#[test]
fn writes_to_what_iolab_did_not_make_are_refused_before_any_work() {
    let work = disk_dir();
    let f = work.path().join("mine.dat");
    std::fs::write(&f, b"keep me").unwrap();
    let r = survey(
        work.path(),
        &["--target", &path_str(&f), "--workload", "randwrite"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("--workload") && r.stderr.contains("--overwrite"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read(&f).unwrap(), b"keep me");
    assert!(
        !work.path().join("results").exists(),
        "no result for a refused survey"
    );
    // The workload flags belong to --target.
    let r = iolab(&["survey", "--workload", "read"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--target"), "{}", r.stderr);
    let r = survey(work.path(), &["--target", "/dev/null"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--target") && r.stderr.contains("neither a directory"),
        "{}",
        r.stderr
    );
    // Options of another kind of target, and file sizes that cannot fit, are bad input.
    let d = path_str(work.path());
    let fp = path_str(&f);
    for (args, flag) in [
        (vec!["--target", &d, "--overwrite"], "--overwrite"),
        (vec!["--target", &fp, "--file-size", "1m"], "--file-size"),
        (vec!["--target", &d, "--file-size", "0"], "--file-size: 0"),
        (
            vec!["--target", &d, "--file-size", "1000t"],
            "free where the files go",
        ),
    ] {
        let r = survey(work.path(), &args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(flag), "{args:?}: {}", r.stderr);
    }
    assert_eq!(
        std::fs::read_dir(work.path()).unwrap().count(),
        1,
        "only mine.dat"
    );
    let r = survey(work.path(), &["--target", &fp, "--workload", "trim"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--workload: 'trim' is not a workload"),
        "{}",
        r.stderr
    );
    // A mixed workload writes: refused on a file iolab did not make without --overwrite.
    let r = survey(work.path(), &["--target", &fp, "--workload", "randrw"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--overwrite"), "{}", r.stderr);
}

/// A run that writes writes its file once over at most, as KDiskMark writes its test file, and the plan
/// says before the first run the most the survey will write: a bound no run exceeds.
#[test]
fn each_write_run_writes_its_file_once_at_most_and_the_plan_says_how_much_in_all() {
    let work = disk_dir();
    let target = disk_dir();
    // Buffered 256 KiB writes at 1 in flight to files of 2 MiB, 20 s allowed: the file ends each run.
    let writes = |results: &str, rounds: &str, max_time: &str, workload: &str| {
        let results = path_str(&work.path().join(results));
        iolab(&[
            "survey",
            "--rounds",
            rounds,
            "--max-time",
            max_time,
            "--results-dir",
            &results,
            "--target",
            &path_str(target.path()),
            "--workload",
            workload,
            "--bs",
            "256k",
            "--inflight",
            "1",
            "--buffered",
            "--file-size",
            "2m",
            "--max-seconds",
            "20",
        ])
    };
    let r = writes("results", "1", "0", "write,randwrite");
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v = only_json_in(&work.path().join("results"));
    let ran = ran_runs(&v);
    assert!(ran.len() >= 4, "{v}");
    let mut written = 0;
    for run in &ran {
        let bytes = u64_of(&run["result"], &["bytes"]);
        // 200,000 ops were asked and 20 s allowed: the file's 2 MiB ends each run.
        assert!(bytes > 0 && bytes <= 2 << 20, "{}: {bytes}", run["method"]);
        written += bytes;
    }
    let cells = v["runs"].as_array().unwrap().len()
        - v["runs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| !r["unavailable"].is_null())
            .count();
    // Where the block layer is traced, each run's untimed traced pass writes first, as much at most.
    let said = r.stdout.lines().nth(1).unwrap_or_default();
    let traced = said.contains(&format!(
        " and {cells} untimed passes (the block layer traced)"
    ));
    assert!(traced || !self::traced(&v), "{said}");
    let passes = if traced { 2 } else { 1 };
    let (most, each) = (
        format!(
            "writes: at most {} MiB in {}/iolab-survey-",
            2 * cells * passes,
            target.path().display()
        ),
        format!(": at most 2 MiB in each of {cells} write runs"),
    );
    assert!(
        said.starts_with(&most) && said.contains(&each),
        "{most}\n{}",
        r.stdout
    );
    assert!(written <= 2 * cells as u64 * (1 << 20), "{written}");
    // With time for more rounds, the bound holds for every round: each run writes its 2 MiB, so the
    // first two rounds take what the plan allows and no further round runs.
    let r = writes("results2", "2", "30", "write");
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v = only_json_in(&work.path().join("results2"));
    let rr = &v["rounds_run"];
    let ran = u64_of(rr, &["runs"]);
    let cells = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| !r["result"].is_null())
        .count() as u64;
    assert!(ran <= 2 * cells, "{ran} runs of {cells} cells: {rr}");
    let said = r.stdout.lines().nth(1).unwrap_or_default();
    assert!(
        said.starts_with(&format!(
            "writes: at most {} MiB in ",
            2 * cells * (passes as u64 + 1)
        )),
        "{}",
        r.stdout
    );
    assert!(
        ["writes", "decided"].contains(&rr["stopped"].as_str().unwrap_or_default()),
        "{rr}"
    );
}

#[test]
fn a_files_reads_leave_it_as_it_was() {
    let work = disk_dir();
    let f = work.path().join("data.dat");
    let data: Vec<u8> = (0..(1 << 20)).map(|i| (i % 251) as u8).collect();
    std::fs::write(&f, &data).unwrap();
    let r = survey(
        work.path(),
        &[
            "--target",
            &path_str(&f),
            "--workload",
            "randread",
            "--bs",
            "4k",
            "--inflight",
            "1,4",
            "--buffered",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(std::fs::read(&f).unwrap(), data);
    // Buffered reads of a file just written come from memory: the fastest says so.
    assert!(r.stdout.contains("page-cache"), "{}", r.stdout);
    // Traced at the block layer, no read made a request.
    let v = only_json_in(&work.path().join("results"));
    for run in v["runs"].as_array().unwrap() {
        if let Some(l) = run["result"]["layers"].as_object() {
            assert_eq!(l["device_ns"], 0.0, "{run}");
            assert_eq!(l["ops_without_request"], l["ops"], "{run}");
            assert_eq!(run["verdict"]["kind"], "page-cache", "{run}");
        }
    }
}

/// A file of holes: the plan says so before any run, and every row that ran is limited by its holes
/// (not the page cache, though no read made a block request), with the finding in its result.
#[test]
fn a_sparse_files_reads_are_said_to_read_holes() {
    let work = disk_dir();
    let f = work.path().join("holes.dat");
    std::fs::File::create(&f).unwrap().set_len(4 << 20).unwrap();
    let r = survey(
        work.path(),
        &[
            "--target",
            &path_str(&f),
            "--workload",
            "randread",
            "--bs",
            "4k",
            "--inflight",
            "1",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("sparse: 4 MiB of the file's 4 MiB (100.0%) are holes"),
        "{}",
        r.stdout
    );
    let v = only_json_in(&work.path().join("results"));
    let ran = ran_runs(&v);
    assert!(!ran.is_empty());
    for run in ran {
        assert_eq!(run["verdict"]["kind"], "holes", "{run}");
        assert_eq!(run["result"]["target"]["sparse"]["holes"], 4 << 20, "{run}");
        let rules: Vec<&str> = run["result"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["rule"].as_str().unwrap())
            .collect();
        assert!(rules.contains(&"sparse_read"), "{rules:?}");
    }
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 4 << 20);
}

#[test]
fn overwrite_replaces_a_files_contents_without_growing_it_and_lists_count_once() {
    let work = disk_dir();
    let f = work.path().join("g.dat");
    std::fs::write(&f, vec![7u8; 1 << 20]).unwrap();
    let r = survey(
        work.path(),
        &[
            "--target",
            &path_str(&f),
            "--overwrite",
            "--workload",
            "randwrite,randwrite",
            "--bs",
            "4k,4096",
            "--inflight",
            "2,2",
            "--buffered",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(
        std::fs::metadata(&f).unwrap().len(),
        1 << 20,
        "the file keeps its size"
    );
    assert_eq!(
        r.stdout.matches("RND4K Q2 write").count(),
        1,
        "{}",
        r.stdout
    );
}

#[test]
fn overwrite_grows_a_file_smaller_than_a_block_only_to_one_block_per_thread() {
    let work = disk_dir();
    let f = work.path().join("small.dat");
    std::fs::write(&f, vec![1u8; 100]).unwrap();
    let r = iolab(&[
        "run",
        "--target",
        &path_str(&f),
        "--overwrite",
        "--bs",
        "64k",
        "--threads",
        "2",
        "--ops",
        "10",
        "--count",
        "none",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        std::fs::metadata(&f).unwrap().len(),
        2 * 64 * 1024,
        "not a default 64 MiB"
    );
}

/// fio's randrw as a survey workload: the methods that read or write per op (psync, pv2, io_uring, aio) run it
/// at the same requests in flight, half reads as fio's default rwmixread, and the others are named as not
/// measured with their reason.
#[test]
fn a_randrw_workload_ranks_the_methods_that_mix() {
    let work = disk_dir();
    let target = disk_dir();
    let r = survey(
        work.path(),
        &[
            "--target",
            &path_str(target.path()),
            "--workload",
            "randrw",
            "--bs",
            "4k",
            "--inflight",
            "4",
            "--direct",
            "-v",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("RND4K Q4 mixed"), "{}", r.stdout);
    let f = std::fs::read_dir(work.path().join("results"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let v = json_file(&f);
    let runs = v["runs"].as_array().unwrap();
    for m in ["psync", "pv2", "io_uring", "aio"] {
        let run = runs
            .iter()
            .find(|r| r["method"] == m && !r["result"].is_null());
        let run = run.unwrap_or_else(|| panic!("{m} ran randrw: {v}"));
        let mixed = &run["result"]["mixed"];
        assert_eq!(mixed["read_pct"], 50, "{m}");
        let share = mixed["reads"]["share"].as_f64().unwrap();
        assert!((0.3..0.7).contains(&share), "{m}: read share {share}");
        assert_eq!(run["result"]["spec"]["inflight"], 4, "{m}");
    }
    let sync = runs.iter().find(|r| r["method"] == "sync").unwrap();
    assert!(
        sync["result"].is_null(),
        "sync goes one way per run: {sync}"
    );
    assert!(
        sync["unavailable"].as_str().unwrap().contains("mixed"),
        "{sync}"
    );
}

#[test]
fn the_block_layer_is_traced_in_the_first_round_and_its_split_kept_with_the_median_run() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip("root", "not root");
        return;
    }
    let (work, target) = (disk_dir(), disk_dir());
    let mut a = vec![
        "survey",
        "--rounds",
        "3",
        "--max-time",
        "0",
        "--max-seconds",
        "0.15",
    ];
    let results = path_str(&work.path().join("results"));
    let t = path_str(target.path());
    a.extend_from_slice(&[
        "--results-dir",
        &results,
        "--target",
        &t,
        "--workload",
        "randread",
    ]);
    a.extend_from_slice(&["--bs", "4k", "--inflight", "1", "--direct"]);
    let r = iolab(&a);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v = only_json_in(std::path::Path::new(&results));
    if !traced(&v) {
        skip(trace_lack(target.path()), &format!("{}", v["layers"]));
        return;
    }
    for run in ran_runs(&v) {
        let m = &run["method"];
        // The offload client is a process of its own, whose ops iolab does not trace.
        if m == "offload" {
            continue;
        }
        assert_eq!(run["round_runs"].as_array().unwrap().len(), 3, "{m}");
        let l = &run["result"]["layers"];
        assert!(
            l["source"]
                .as_str()
                .is_some_and(|s| s.contains("first round only"))
                && l["ops"].as_u64() > Some(0),
            "{m}: the first round's split is not with the run kept: {l}"
        );
    }
}

#[test]
fn compare_of_two_surveys_says_what_changed_in_their_orders_first() {
    let (work, target) = (disk_dir(), disk_dir());
    let t = path_str(target.path());
    let mut files = Vec::new();
    for run in ["a", "b"] {
        let results = path_str(&work.path().join(run));
        let r = iolab(&[
            "survey",
            "--rounds",
            "2",
            "--max-time",
            "0",
            "--max-seconds",
            "0.04",
            "--results-dir",
            &results,
            "--target",
            &t,
            "--workload",
            "randread",
            "--bs",
            "4k",
            "--inflight",
            "1",
            "--direct",
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let f = std::fs::read_dir(work.path().join(run))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        files.push(path_str(&f));
    }
    let r = iolab(&["compare", &files[0], &files[1]]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.lines().count() <= 30, "{}", r.stdout);
    assert!(
        r.stdout.contains("of 1 tables changed order")
            && r.stdout
                .contains("4 KiB random reads, 1 in flight, O_DIRECT:"),
        "{}",
        r.stdout
    );
    let v = iolab(&["compare", "-v", &files[0], &files[1]]);
    assert!(
        v.stdout.starts_with(&r.stdout[..r.stdout.len() - 1]) && v.stdout.contains("B/A"),
        "{}",
        v.stdout
    );
}

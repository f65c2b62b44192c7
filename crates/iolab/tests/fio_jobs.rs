//! `iolab run --fio JOBFILE`: fio job files run as iolab workloads, option by option in fio's meaning;
//! what iolab does not honour is refused by name (or, lenient, listed); the bytes a job writes land.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

/// Writes `text` as a job file in `dir`.
fn job_file(dir: &Path, text: &str) -> String {
    let p = dir.join("jobs.fio");
    std::fs::write(&p, text).unwrap();
    path_str(&p)
}

/// A fio-style randrw job: psync, 2 jobs, sizes in fio's units, verify, a variable from the environment;
/// it runs as 2 threads of 70% reads over a 2 x 8 MiB file, the kernel's read and write calls match the
/// result's, and every block a write reached holds what was written.
#[test]
fn a_randrw_job_runs_as_fio_means_it() {
    let dir = disk_dir();
    let jobs = job_file(
        dir.path(),
        &format!(
            "; as fio users write them\n[global]\nioengine=psync\ndirectory={}\nbs=${{IOLAB_TEST_BS}}\n\
             size=8m\nnumjobs=2\n\n[oltp]\nrw=randrw\nrwmixread=70\nverify=crc32c\n",
            dir.path().display()
        ),
    );
    let out = Command::new(bin())
        .args(["run", "--fio", &jobs, "--json", "-", "--count", "none"])
        .env("IOLAB_TEST_BS", "4k")
        .env_remove("COLUMNS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["spec"]["op"], "mixed");
    assert_eq!(u64_of(&v, &["spec", "read_pct"]), 70);
    assert_eq!(u64_of(&v, &["spec", "bs"]), 4096);
    assert_eq!(u64_of(&v, &["spec", "threads"]), 2);
    assert_eq!(
        u64_of(&v, &["spec", "file_size"]),
        8 << 20,
        "a file of size=8m per clone, as fio's"
    );
    assert!(v["spec"]["target"]
        .as_str()
        .unwrap()
        .ends_with("oltp.{thread}.0"));
    assert_eq!(
        u64_of(&v, &["ops"]),
        4096,
        "size=8m per job of 4 KiB blocks, 2 jobs"
    );
    let (r, w) = (
        u64_of(&v, &["mixed", "reads", "ops"]),
        u64_of(&v, &["mixed", "writes", "ops"]),
    );
    assert_eq!(u64_of(&v, &["syscalls", "kernel_rw", "syscr"]), r);
    assert_eq!(u64_of(&v, &["syscalls", "kernel_rw", "syscw"]), w);
    assert_eq!(u64_of(&v, &["verify", "mismatches"]), 0);
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("fio job 'oltp'") && notes.contains("numjobs=2"),
        "{notes}"
    );
    for f in ["oltp.0.0", "oltp.1.0"] {
        assert!(
            !dir.path().join(f).exists(),
            "the clones' files are iolab's and removed: {f}"
        );
    }
}

#[test]
fn options_iolab_does_not_honour_are_refused_by_name_or_listed() {
    let dir = disk_dir();
    let jobs = job_file(
        dir.path(),
        &format!(
            "[global]\ndirectory={}\nsize=1m\n[a]\nrw=write\nioscheduler=none\n",
            dir.path().display()
        ),
    );
    let r = iolab(&["run", "--fio", &jobs]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("ioscheduler=none") && r.stderr.contains("--fio-lenient"),
        "{}",
        r.stderr
    );
    let r = iolab(&["run", "--fio", &jobs, "--fio-lenient", "--count", "none"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("ignored (--fio-lenient): ioscheduler=none"),
        "{}",
        r.stdout
    );
    for (args, says) in [
        (vec!["--fio-section", "nope"], "no job 'nope'"),
        (vec!["--spec", "x.toml"], "cannot be used with"),
    ] {
        let mut a = vec!["run", "--fio", &jobs];
        a.extend(args);
        let r = iolab(&a);
        assert_eq!(r.code, 2, "{a:?}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{a:?}: {}", r.stderr);
    }
}

/// Two jobs run one after the other and end with a table of both; one result file cannot hold them.
#[test]
fn several_jobs_end_with_a_table_and_refuse_one_result_file() {
    let dir = disk_dir();
    let jobs = job_file(
        dir.path(),
        &format!(
            "[global]\ndirectory={}\nsize=2m\nbs=64k\n[w]\nrw=write\n[r]\nrw=randread\nioengine=io_uring\niodepth=4\n",
            dir.path().display()
        ),
    );
    let r = iolab(&["run", "--fio", &jobs, "--count", "none"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("'w'") && r.stdout.contains("'r'") && r.stdout.contains("fastest first"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("io_uring read 64 KiB rand"),
        "{}",
        r.stdout
    );
    let r = iolab(&[
        "run",
        "--fio",
        &jobs,
        "--json",
        &path_str(&dir.path().join("x.json")),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("--json") && r.stderr.contains("--fio-section"),
        "{}",
        r.stderr
    );
}

/// Every key of a JSON object, dotted below its parent (not inside `percentile`, `bins` or `job options`).
fn keys(v: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(v: &serde_json::Value, at: &str, out: &mut Vec<String>) {
        if let Some(o) = v.as_object() {
            for (k, x) in o {
                let here = format!("{at}{k}");
                out.push(here.clone());
                if k != "percentile" && k != "bins" && k != "job options" {
                    walk(x, &format!("{here}."), out);
                }
            }
        }
    }
    walk(v, "", &mut out);
    out
}

/// `--fio-json`: each run as a job of fio's json+ layout; its bins add up to the requests, its
/// percentiles carry fio's keys, the reads and writes of a mixed run are in their own sections, and, where
/// fio is installed, every key fio writes for a job and its read and write sections is there (fio's
/// latency_* and iodepth_* distributions aside, which iolab does not keep).
#[test]
fn fio_json_has_fios_layout() {
    let dir = disk_dir();
    let t = path_str(&file(&dir, "fj.dat"));
    let out = path_str(&dir.path().join("fio.json"));
    let r = iolab(&[
        "run",
        "--target",
        &t,
        "--op",
        "mixed",
        "--pattern",
        "rand",
        "--ops",
        "4000",
        "--file-size",
        "16m",
        "--fio-json",
        &out,
        "--count",
        "none",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = json_file(&dir.path().join("fio.json"));
    let job = &v["jobs"][0];
    let (r, w) = (&job["read"], &job["write"]);
    assert_eq!(
        r["total_ios"].as_u64().unwrap() + w["total_ios"].as_u64().unwrap(),
        4000
    );
    for d in [r, w] {
        let n = d["clat_ns"]["N"].as_u64().unwrap();
        let bins: u64 = d["clat_ns"]["bins"]
            .as_object()
            .unwrap()
            .values()
            .map(|b| b.as_u64().unwrap())
            .sum();
        assert_eq!(bins, n, "bins add up to the requests");
        assert!(d["clat_ns"]["percentile"]["99.000000"].as_u64().unwrap() > 0);
    }
    assert_eq!(job["job options"]["rw"], "randrw");
    let again = iolab(&["run", "--target", &t, "--ops", "10", "--fio-json", &out]);
    assert_eq!(
        again.code, 2,
        "an existing --fio-json file is not replaced: {}",
        again.stderr
    );
    let same = path_str(&dir.path().join("same.json"));
    let r = iolab(&[
        "run",
        "--target",
        &t,
        "--ops",
        "10",
        "--fio-json",
        &same,
        "--json",
        &same,
    ]);
    assert_eq!(
        r.code, 2,
        "--fio-json and --json on one file, before the run: {}",
        r.stderr
    );
    assert!(!dir.path().join("same.json").exists());
    let fio = std::process::Command::new("fio")
        .args([
            "--name=k",
            "--ioengine=null",
            "--size=1m",
            "--rw=randrw",
            "--output-format=json+",
        ])
        .output();
    let Some(fio) = fio.ok().filter(|o| o.status.success()) else {
        skip(
            "fio",
            "the comparison with fio's own keys: fio is not installed",
        );
        return;
    };
    let real: serde_json::Value = serde_json::from_slice(&fio.stdout).unwrap();
    let ours = keys(job);
    let missing: Vec<String> = keys(&real["jobs"][0])
        .into_iter()
        .filter(|k| !k.starts_with("latency_") && !k.starts_with("iodepth_") && !ours.contains(k))
        .collect();
    assert!(
        missing.is_empty(),
        "fio writes these keys and iolab does not: {missing:?}"
    );
}

/// A job file of several jobs as fio users write them: a [global] section with numjobs 2 and an option
/// iolab does not honour, an io_uring randrw job with rwmixread and a Zipf distribution, a psync job
/// paced by rate_iops. The unhonoured option is refused by name, then (lenient) listed; the read share is
/// within 2 points of rwmixread, the paced job's rate within 5% of rate_iops, and the Zipf job's hottest
/// tenth of the blocks hit took the share fio-genzipf gives for zipf:1.2 with as many draws as blocks in a
/// region (16,384: `fio-genzipf -t zipf -i 1.2 -g 1 -b 65536` says 82.24%) within 2 points.
#[test]
fn a_job_file_of_several_jobs_keeps_fios_promises() {
    let dir = disk_dir();
    let jobs = job_file(
        dir.path(),
        &format!(
            "[global]\ndirectory={}\nbs=4k\nsize=64m\nnumjobs=2\nioscheduler=none\n\n\
             [mixed-uring]\nioengine=io_uring\niodepth=8\nrw=randrw\nrwmixread=70\n\
             random_distribution=zipf:1.2\n\n\
             [paced-psync]\nioengine=psync\nrw=randwrite\nrate_iops=1000\nio_size=2m\n",
            dir.path().display()
        ),
    );
    let r = iolab(&["run", "--fio", &jobs, "--count", "none"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("ioscheduler=none"), "{}", r.stderr);
    let out = path_str(&dir.path().join("both.json"));
    let r = iolab(&[
        "run",
        "--fio",
        &jobs,
        "--fio-lenient",
        "--fio-json",
        &out,
        "--count",
        "none",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("ignored (--fio-lenient): ioscheduler=none"),
        "{}",
        r.stdout
    );
    let v = json_file(&dir.path().join("both.json"));
    let job = |name: &str| {
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["jobname"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no job {name}: {v}"))
    };
    let m = job("mixed-uring");
    let (rd, wr) = (
        m["read"]["total_ios"].as_f64().unwrap(),
        m["write"]["total_ios"].as_f64().unwrap(),
    );
    let share = rd / (rd + wr);
    assert!((share - 0.70).abs() <= 0.02, "read share {share}");
    let hot = m["iolab"]["access"]["hottest_tenth_share"]
        .as_f64()
        .unwrap();
    assert!(
        (hot - 0.8224).abs() < 0.02,
        "the hottest tenth took {hot}: {}",
        m["iolab"]["access"]
    );
    assert_eq!(m["job options"]["numjobs"], "2");
    // rate_iops is a ceiling: no job goes faster (512 ops span 511 intervals, +0.2%; fio's runtime is in
    // whole milliseconds). A loaded machine
    // may hold a job below it, and then the pace says it was not met: whether it was met is the
    // machine's, that it says so truly is iolab's.
    let p = job("paced-psync");
    let clones = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["jobname"] == "paced-psync")
        .count();
    assert_eq!(
        clones, 2,
        "an entry per clone, as fio writes without group_reporting"
    );
    let per_thread = p["write"]["iops"].as_f64().unwrap();
    println!("paced to 1,000 ops/s per job, achieved {per_thread:.1}");
    assert!(
        per_thread <= 1000.0 * 1.05,
        "paced to 1,000 ops/s per job, achieved {per_thread}"
    );
    let paced = &p["iolab"]["paced"];
    let achieved = paced["achieved_iops"].as_f64().unwrap();
    assert!(achieved <= 1000.0 * 1.01, "{paced}");
    assert_eq!(paced["met"].as_bool(), Some(achieved >= 990.0), "{paced}");
}

/// fio's own `fio_jsonplus_clat2csv` (Debian's fio package) converts iolab's `--fio-json` without error,
/// its `--validate` passes, and the percentiles it computes from the bins agree with iolab's: the bin
/// where its cumulative share crosses 50% and 99% holds iolab's p50 and p99.
#[test]
fn fios_clat2csv_converts_it_and_agrees_on_the_percentiles() {
    let tool = Path::new("/usr/bin/fio_jsonplus_clat2csv");
    if !tool.exists() {
        skip(
            "fio-tools",
            &format!(
                "{} is not installed (Debian's fio package has it)",
                tool.display()
            ),
        );
        return;
    }
    let dir = disk_dir();
    let t = path_str(&file(&dir, "c.dat"));
    let (fj, ij) = (dir.path().join("fio.json"), dir.path().join("iolab.json"));
    let r = iolab(&[
        "run",
        "--target",
        &t,
        "--ops",
        "20000",
        "--fio-json",
        &path_str(&fj),
        "--json",
        &path_str(&ij),
        "--count",
        "none",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let stub = dir.path().join("lat.csv");
    for extra in [None, Some("--validate")] {
        let mut c = Command::new("python3");
        c.arg(tool).arg(&fj).arg(&stub);
        c.args(extra);
        let o = c.output().unwrap();
        assert!(
            o.status.success(),
            "{extra:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let csv = std::fs::read_to_string(dir.path().join("lat_job0.csv")).unwrap();
    let mut lines = csv.lines();
    let cols: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(|c| c.trim().to_string())
        .collect();
    let at = cols
        .iter()
        .position(|c| c == "write_clat_ns_percentile")
        .unwrap();
    let rows: Vec<(f64, f64)> = lines
        .filter_map(|l| {
            let v: Vec<&str> = l.split(',').map(str::trim).collect();
            Some((v[0].parse().ok()?, v.get(at)?.parse().ok()?))
        })
        .collect();
    let ours = json_file(&ij);
    for (q, key) in [(0.5, "p50_ns"), (0.99, "p99_ns")] {
        let v = f64_of(&ours, &["latency", key]);
        let i = rows.iter().position(|(_, p)| *p >= q).unwrap();
        let (low, high) = (if i == 0 { 0.0 } else { rows[i - 1].0 }, rows[i].0);
        assert!(
            low * 0.98 < v && v <= high * 1.02,
            "iolab's {key} {v} ns is not in the bin ({low}, {high}] where fio's tool crosses {q}"
        );
    }
}

/// fio-plot (PyPI) draws its queue-depth bar chart from iolab's `--fio-json` files, named as its
/// bench-fio names fio's (`randread-QD-NUMJOBS.json`).
#[test]
fn fio_plot_draws_a_chart_from_it() {
    let plot = Command::new("fio-plot").arg("--help").output();
    if !plot.is_ok_and(|o| o.status.success()) {
        skip(
            "fio-plot",
            "fio-plot is not installed (pip install fio-plot)",
        );
        return;
    }
    let dir = disk_dir();
    let data = dir.path().join("4k");
    std::fs::create_dir(&data).unwrap();
    for qd in ["1", "4"] {
        let t = path_str(&file(&dir, &format!("p{qd}.dat")));
        let fj = path_str(&data.join(format!("randread-{qd}-1.json")));
        let r = iolab(&[
            "run",
            "--method",
            "io_uring",
            "--qd",
            qd,
            "--op",
            "read",
            "--pattern",
            "rand",
            "--target",
            &t,
            "--file-size",
            "16m",
            "--ops",
            "2000",
            "--count",
            "none",
            "--fio-json",
            &fj,
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let png = dir.path().join("chart");
    let o = Command::new("fio-plot")
        .args([
            "-i",
            &path_str(&data),
            "-T",
            "iolab",
            "-l",
            "-r",
            "randread",
            "-n",
            "1",
            "-d",
            "1",
            "4",
            "-o",
        ])
        .arg(&png)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let drawn = dir.path().join("chart.png");
    assert!(
        drawn.metadata().is_ok_and(|m| m.len() > 10_000),
        "fio-plot drew no chart: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// What the review of the mapping found, each held: directory and filename join as fio joins them; a
/// job's alias overrides the global spelling; flags beside --fio replace the job's amount and method;
/// --across-methods refuses a flag that would make its rows one method; a later job's existing file is
/// refused before the first job runs.
#[test]
fn job_files_mean_what_fio_makes_of_them() {
    let dir = disk_dir();
    let d = path_str(dir.path());
    std::fs::create_dir(dir.path().join("dd")).unwrap();
    let jobs = job_file(
        dir.path(),
        &format!(
            "[global]\nrw=randread\nbs=8k\nsize=1m\n[a]\ndirectory={d}/dd\nfilename=f1 ; scratch\n\
             readwrite=randwrite\nblocksize=16k\n"
        ),
    );
    let r = iolab(&["run", "--fio", &jobs, "--count", "none", "--keep"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("write 16 KiB rand"), "{}", r.stdout);
    assert!(
        dir.path().join("dd/f1").exists(),
        "directory/filename as fio joins them: {}",
        r.stdout
    );
    let r = iolab(&[
        "run",
        "--fio",
        &jobs,
        "--count",
        "none",
        "--ops",
        "10",
        "--overwrite",
    ]);
    assert_eq!(r.code, 0, "--ops replaces the job's size: {}", r.stderr);
    assert!(r.stdout.contains("10 ops"), "{}", r.stdout);
    for flag in [["--method", "psync"], ["--qd", "4"]] {
        let r = iolab(&["run", "--fio", &jobs, "--across-methods", flag[0], flag[1]]);
        assert_eq!(r.code, 2, "{flag:?}: {}", r.stderr);
        assert!(
            r.stderr.contains(flag[0]) && r.stderr.contains("--across-methods"),
            "{}",
            r.stderr
        );
    }
    // Every method refused (reads of /dev/null return no data): nothing asked for ran, exit 2.
    let none = job_file(
        dir.path(),
        "[r]\nfilename=/dev/null\nrw=read\nbs=4k\nsize=4k\n",
    );
    let r = iolab(&["run", "--fio", &none, "--across-methods"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("--across-methods: no method could run"),
        "{}",
        r.stderr
    );
    std::fs::write(dir.path().join("mine.bin"), b"keep me").unwrap();
    let two = job_file(
        dir.path(),
        &format!("[global]\nsize=1m\nrw=write\n[a]\ndirectory={d}\n[b]\nfilename={d}/mine.bin\n"),
    );
    let r = iolab(&["run", "--fio", &two, "--count", "none"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("job 'b'") && r.stderr.contains("--overwrite"),
        "{}",
        r.stderr
    );
    assert!(
        !r.stdout.contains("iolab run:"),
        "no job ran before the refusal: {}",
        r.stdout
    );
    assert_eq!(
        std::fs::read(dir.path().join("mine.bin")).unwrap(),
        b"keep me"
    );
}

/// A job's `directory` that is there but no directory (a FIFO) is said to be one, not said missing.
#[test]
fn a_directory_that_is_a_fifo_is_named_as_no_directory() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("ff");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    for (dir, said) in [
        (fifo, "is not a directory"),
        (d.path().join("gone"), "does not exist"),
    ] {
        let text = format!("[j]\nrw=write\nsize=1m\ndirectory={}\n", dir.display());
        let job = job_file(d.path(), &text);
        let r = iolab(&["run", "--fio", &job]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(
            r.stderr.contains(&format!("{} {said}", dir.display())),
            "{}",
            r.stderr
        );
    }
}

/// fio's io_submit and io_getevents calls for `jobs` (strace -c over its processes), or `None` (said)
/// where fio or strace is missing.
fn fio_aio_calls(dir: &Path, jobs: &str) -> Option<(u64, u64)> {
    let have = |p: &str| {
        Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !have("fio") {
        skip(
            "fio",
            "fio's own io_getevents calls are not counted: no fio",
        );
        return None;
    }
    if !have("strace") {
        skip(
            "strace",
            "fio's own io_getevents calls are not counted: no strace",
        );
        return None;
    }
    let summary = dir.join("strace.txt");
    let o = Command::new("strace")
        .args(["-f", "-c", "-e", "trace=io_submit,io_getevents", "-o"])
        .arg(&summary)
        .args(["fio", "--output-format=json", jobs])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = std::fs::read_to_string(&summary).unwrap();
    let calls = |name: &str| {
        text.lines()
            .find(|l| l.split_whitespace().last() == Some(name))
            .and_then(|l| l.split_whitespace().nth(3))
            .map_or(0, |n| n.parse().unwrap())
    };
    Some((calls("io_submit"), calls("io_getevents")))
}

/// The record of `iolab run --fio JOBS` with `extra` beside it (which must succeed).
fn fio_json(jobs: &str, extra: &[&str]) -> serde_json::Value {
    let out = Command::new(bin())
        .args(["run", "--fio", jobs, "--json", "-", "--count", "none"])
        .args(extra)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{jobs} {extra:?}: {err}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// ioengine=libaio reaps as fio's does (`--reap-at-most`): io_getevents only when iodepth requests are in
/// flight or the job ends, at most iodepth_batch_complete_max completions a call. On a buffered file
/// every request completes inside its io_submit, so the counts are exact: 64 ops at iodepth=4 make 64
/// io_submit calls, and 16 io_getevents with iodepth_batch_complete_max=4, 64 with fio's default 1.
/// fio's counts, where fio and strace are here, are the same, but at the end of a job of max 1, where
/// fio takes the last 4 requests in 2 calls (a look, then the rest) and iolab in 4. The share of requests
/// completed inside io_submit, which iolab's own look measures, is absent (`--reap-at-most 0` beside
/// `--fio` brings the look back); `--qd` beside it caps the completions a call; `--across-methods` runs
/// the methods that do not take it without it; io_uring still refuses the option by name.
#[test]
fn libaio_reaps_as_fio_does() {
    let dir = disk_dir();
    for (max, gets, fio_fewer) in [(4, 16, 0), (1, 64, 2)] {
        let name = dir.path().join(format!("A{max}"));
        let text = format!(
            "[a]\nioengine=libaio\niodepth=4\nrw=write\nbs=4k\nsize=256k\nfilename={}\n\
             iodepth_batch_complete_max={max}\n",
            name.display()
        );
        let jobs = job_file(dir.path(), &text);
        let v = fio_json(&jobs, &[]);
        assert_eq!(u64_of(&v, &["spec", "method_opts", "reap-at-most"]), max);
        assert_eq!(u64_of(&v, &["aio", "io_submit_calls"]), 64);
        assert_eq!(
            u64_of(&v, &["aio", "io_getevents_calls"]),
            gets,
            "max {max}"
        );
        assert!(v["aio"].get("inline_fraction").is_none(), "{}", v["aio"]);
        assert!(!name.exists(), "iolab removes the file it made");
        if let Some((submits, fio_gets)) = fio_aio_calls(dir.path(), &jobs) {
            assert_eq!(
                (submits, fio_gets + fio_fewer),
                (64, gets),
                "fio, max {max}"
            );
        }
    }
    // The last job (a max of 1) with flags beside it: --qd 2 takes at most 2 a call (32 calls), 0 is iolab's
    // own look after each io_submit (the share measured), and every method runs across methods.
    let last = dir.path().join("jobs.fio");
    let run = |extra: &[&str]| {
        // fio's run left its file (iolab removes its own).
        let _ = std::fs::remove_file(dir.path().join("A1"));
        fio_json(&path_str(&last), extra)
    };
    let v = run(&["--qd", "2", "--reap-at-most", "4"]);
    assert_eq!(
        u64_of(&v, &["aio", "io_getevents_calls"]),
        32,
        "{}",
        v["aio"]
    );
    let v = run(&["--reap-at-most", "0"]);
    assert_eq!(
        u64_of(&v, &["aio", "io_getevents_calls"]),
        64,
        "{}",
        v["aio"]
    );
    assert_eq!(v["aio"]["inline_fraction"], 1.0, "{}", v["aio"]);
    let _ = std::fs::remove_file(dir.path().join("A1"));
    let out = Command::new(bin())
        .args([
            "run",
            "--fio",
            &path_str(&last),
            "--across-methods",
            "--count",
            "none",
        ])
        .output()
        .unwrap();
    let (o, e) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{e}");
    assert!(
        o.contains("'a' with psync") && !e.contains("reap-at-most"),
        "{o}\n{e}"
    );
    let jobs = job_file(
        dir.path(),
        "[u]\nioengine=io_uring\niodepth=4\nrw=write\nsize=256k\nfilename=U\niodepth_batch_complete_max=4\n",
    );
    let out = Command::new(bin())
        .args(["run", "--fio", &jobs])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("iodepth_batch_complete_max=4 is not an option iolab honours"),
        "{err}"
    );
}

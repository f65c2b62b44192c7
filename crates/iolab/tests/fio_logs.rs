//! fio's log options in `iolab run --fio`: write_bw_log, write_lat_log and write_iops_log written as
//! fio names and lays them out (an entry per I/O, or averaged per log_avg_msec window), log_offset and
//! per_job_logs in fio's meaning; checked against the run's own figures, against fio itself where
//! /usr/bin/fio is installed, and read by fio's fio2gnuplot where it and gnuplot are.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

/// Runs `iolab run --fio` on a job file of `text` in `dir` (its working directory: fio's logs are
/// named relative to it), with `--count none` and `args`; (exit code, stdout, stderr).
fn run_fio(dir: &Path, text: &str, args: &[&str]) -> (i32, String, String) {
    let jobs = dir.join("jobs.fio");
    std::fs::write(&jobs, text).unwrap();
    let out = Command::new(bin())
        .current_dir(dir)
        .args(["run", "--fio", &path_str(&jobs), "--count", "none"])
        .args(args)
        .env_remove("COLUMNS")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A run of one job that must succeed: its JSON result.
fn run_ok(dir: &Path, text: &str) -> serde_json::Value {
    let (code, stdout, stderr) = run_fio(dir, text, &["--json", "-"]);
    assert_eq!(code, 0, "{stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// fio (/usr/bin/fio) run in `dir` with `args`, which must succeed: its standard output.
fn fio_ok(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("/usr/bin/fio")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "fio {args:?}: {err}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A log file's entries, each line's comma-separated numbers.
fn entries(p: &Path) -> Vec<Vec<u64>> {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    text.lines()
        .map(|l| {
            l.split(", ")
                .map(|v| v.parse().unwrap_or_else(|_| panic!("{}: {l}", p.display())))
                .collect()
        })
        .collect()
}

/// The names of the `.log` files in `dir`, sorted.
fn log_names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".log"))
        .collect();
    v.sort();
    v
}

/// A sequential write of 64 ops of 4 KiB, every log, an entry per I/O with its offset: a lat line per
/// op at the offsets the job visits, clat the same, slat empty, bw as fio computes it per I/O from the
/// latency, iops 1, all consistent with the run's own figures.
#[test]
fn a_log_per_io_holds_every_op_at_the_offsets_visited() {
    let dir = disk_dir();
    let d = dir.path();
    let v = run_ok(
        d,
        "[seq]\nioengine=psync\nrw=write\nbs=4k\nsize=256k\nwrite_lat_log=seq\nwrite_bw_log=seq\n\
         write_iops_log=seq\nlog_offset=1\n",
    );
    let ops = u64_of(&v, &["ops"]);
    assert_eq!(ops, 64);
    assert_eq!(
        log_names(d),
        [
            "seq_bw.1.log",
            "seq_clat.1.log",
            "seq_iops.1.log",
            "seq_lat.1.log",
            "seq_slat.1.log"
        ]
    );
    let lat = entries(&d.join("seq_lat.1.log"));
    assert_eq!(lat.len() as u64, ops, "a lat entry per op");
    assert!(
        lat.iter().all(|e| e.len() == 6),
        "time, value, dir, bs, offset, prio"
    );
    let offsets: Vec<u64> = lat.iter().map(|e| e[4]).collect();
    assert_eq!(offsets, (0..64).map(|i| i * 4096).collect::<Vec<_>>());
    assert!(lat.iter().all(|e| e[2] == 1 && e[3] == 4096 && e[5] == 0));
    let wall_ms = f64_of(&v, &["wall_s"]) * 1e3;
    assert!(lat.windows(2).all(|w| w[0][0] <= w[1][0]), "times in order");
    assert!(lat.last().unwrap()[0] as f64 <= wall_ms + 1.0);
    // The entries' mean is the run's mean latency (its histogram is within 1%).
    let mean = lat.iter().map(|e| e[1] as f64).sum::<f64>() / ops as f64;
    let run_mean = f64_of(&v, &["latency", "mean_ns"]);
    assert!(
        (mean - run_mean).abs() <= run_mean * 0.02 + 50.0,
        "log mean {mean} ns, run mean {run_mean} ns"
    );
    assert_eq!(entries(&d.join("seq_clat.1.log")), lat);
    assert!(entries(&d.join("seq_slat.1.log")).is_empty());
    let bw = entries(&d.join("seq_bw.1.log"));
    for (b, l) in bw.iter().zip(&lat) {
        assert_eq!(
            b[1],
            4096 * 1_000_000 / l[1],
            "fio's bw per I/O: {b:?} {l:?}"
        );
        assert_eq!((b[0], b[4]), (l[0], l[4]));
    }
    let iops = entries(&d.join("seq_iops.1.log"));
    assert_eq!(iops.len(), 64);
    assert!(iops.iter().all(|e| e[1] == 1));
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("--op-log") && notes.contains("wrote seq_bw.1.log (64 entries)"),
        "{notes}"
    );
}

/// Paced at 8 MiB/s for 1 s with log_avg_msec=100: about ten entries of whole 100 ms windows, at their
/// ends, whose bytes add up to the run's, and iops the same for its ops.
#[test]
fn averaged_logs_have_an_entry_per_window_that_adds_up_to_the_run() {
    let dir = disk_dir();
    let d = dir.path();
    let v = run_ok(
        d,
        "[paced]\nioengine=psync\nrw=write\nbs=4k\nsize=4m\nrate=8m\nruntime=1\ntime_based\n\
         log_avg_msec=100\nwrite_bw_log=p\nwrite_iops_log=p\nwrite_lat_log=p\n",
    );
    let (ops, bytes) = (u64_of(&v, &["ops"]), u64_of(&v, &["bytes"]));
    let bw = entries(&d.join("p_bw.1.log"));
    assert!((8..=11).contains(&bw.len()), "{} entries: {bw:?}", bw.len());
    assert!(bw
        .iter()
        .all(|e| e.len() == 5 && e[0] % 100 == 0 && e[2] == 1 && e[3] == 0));
    let logged: u64 = bw.iter().map(|e| e[1] * 1024 / 10).sum();
    assert!(
        logged.abs_diff(bytes) <= bytes / 20,
        "windows hold {logged} bytes, the run {bytes}"
    );
    let iops = entries(&d.join("p_iops.1.log"));
    assert_eq!(iops.len(), bw.len());
    let logged_ops: u64 = iops.iter().map(|e| e[1] / 10).sum();
    assert!(
        logged_ops.abs_diff(ops) <= ops / 20,
        "{logged_ops} of {ops}"
    );
    // Latency means per window, the last one (part of a window) at the thread's end.
    let lat = entries(&d.join("p_lat.1.log"));
    assert!(
        lat.len() >= bw.len() && lat.len() <= bw.len() + 2,
        "{lat:?}"
    );
    assert!(lat.iter().all(|e| e[1] > 0));
}

/// Clones and jobs numbered over the file (fio's thread number), a file per clone or, with
/// per_job_logs=0, one for all of them.
#[test]
fn files_are_named_per_clone_or_shared_as_fio_names_them() {
    let dir = disk_dir();
    let d = dir.path();
    let (code, _, stderr) = run_fio(
        d,
        "[global]\nioengine=psync\nbs=4k\nsize=32k\nrw=write\n[a]\nnumjobs=2\nwrite_iops_log\n\
         [b]\nnumjobs=2\nwrite_iops_log=bb\nper_job_logs=0\n",
        &[],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        log_names(d),
        ["a_iops.1.log", "a_iops.2.log", "bb_iops.log"]
    );
    assert_eq!(entries(&d.join("a_iops.2.log")).len(), 8);
    assert_eq!(
        entries(&d.join("bb_iops.log")).len(),
        16,
        "both clones' I/Os"
    );
}

/// Jobs sharing a log (per_job_logs=0) share its file however its name is spelled: `x` and `./x` are one
/// file, the second job's entries appended to the first's.
#[test]
fn a_log_shared_under_two_spellings_is_one_file() {
    let dir = disk_dir();
    let d = dir.path();
    let (code, _, stderr) = run_fio(
        d,
        "[global]\nioengine=psync\nbs=4k\nsize=32k\nrw=write\nper_job_logs=0\n\
         [a]\nfilename=a.dat\nwrite_iops_log=x\n[b]\nfilename=b.dat\nwrite_iops_log=./x\n",
        &[],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(log_names(d), ["x_iops.log"]);
    assert_eq!(entries(&d.join("x_iops.log")).len(), 16, "both jobs' I/Os");
}

/// A log that is another file of the run, a job's data file or a result's output, is refused before any
/// job runs, naming both.
#[test]
fn a_log_that_is_a_data_file_or_an_output_is_refused_before_any_run() {
    let dir = disk_dir();
    let d = dir.path();
    let (code, _, stderr) = run_fio(
        d,
        "[global]\nrw=write\nbs=4k\nsize=16k\n[a]\nfilename=a.dat\nwrite_bw_log=d\nper_job_logs=0\n\
         [b]\nfilename=./d_bw.log\n",
        &[],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("write_bw_log") && stderr.contains("the data file of job 'b'"),
        "{stderr}"
    );
    assert!(!d.join("a.dat").exists(), "no job ran");
    let (code, _, stderr) = run_fio(
        d,
        "[a]\nrw=write\nbs=4k\nsize=16k\nfilename=a.dat\nwrite_bw_log=x\nper_job_logs=0\n",
        &["--fio-json", "x_bw.log"],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("the --fio-json file"), "{stderr}");
    assert!(!d.join("a.dat").exists() && log_names(d).is_empty());
}

/// Averaged windows are kept in room made before the run: a job whose windows are known ahead to pass
/// the bound (a long runtime, or a size at a pace, in 1 ms windows) is refused at once, in the job's terms
/// (log_avg_msec, not iolab's --op-log), rather than run to lose what does not fit.
#[test]
fn windows_past_the_bound_are_refused_at_once_in_the_jobs_terms() {
    let dir = disk_dir();
    for job in [
        // 70,000 I/Os at 1,000 a second: 70 s of 1 ms windows, past the 65,536 a thread.
        "[n]\nioengine=null\nrw=write\nbs=4k\nsize=280000k\nrate_iops=1000\nlog_avg_msec=1\nwrite_bw_log=n\n",
        "[t]\nioengine=null\nrw=write\nsize=1m\nruntime=3600\ntime_based\nlog_avg_msec=1\nwrite_bw_log=t\n",
    ] {
        let t = std::time::Instant::now();
        let (code, _, stderr) = run_fio(dir.path(), job, &[]);
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains("log_avg_msec=1")
                && stderr.contains("give a larger log_avg_msec")
                && !stderr.contains("--op-log"),
            "{stderr}"
        );
        assert!(t.elapsed().as_secs_f64() < 2.0, "refused before running");
        assert!(log_names(dir.path()).is_empty());
    }
    // A window past a year (2^64 ms wrapped to -1 before) is refused, in the job's terms too.
    let job = "[w]\nioengine=null\nrw=write\nsize=1m\nlog_avg_msec=18446744073709551615\nwrite_bw_log=w\n";
    let (code, _, stderr) = run_fio(dir.path(), job, &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("log_avg_msec=18446744073709551615") && stderr.contains("at most 365 days"),
        "{stderr}"
    );
}

/// A log that exists is refused before any job runs, naming the option; --overwrite replaces it.
#[test]
fn an_existing_log_is_refused_before_any_run() {
    let dir = disk_dir();
    let d = dir.path();
    let job = "[first]\nrw=write\nbs=4k\nsize=16k\nfilename=first.dat\n\
               [x]\nrw=write\nbs=4k\nsize=16k\nfilename=x.dat\nwrite_bw_log=x\n";
    std::fs::write(d.join("x_bw.2.log"), "old\n").unwrap();
    let (code, _, stderr) = run_fio(d, job, &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("write_bw_log") && stderr.contains("--overwrite"),
        "{stderr}"
    );
    assert!(!d.join("first.dat").exists(), "no job ran");
    assert_eq!(
        std::fs::read_to_string(d.join("x_bw.2.log")).unwrap(),
        "old\n"
    );
    let (code, _, stderr) = run_fio(d, job, &["--overwrite"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(entries(&d.join("x_bw.2.log")).len(), 4);
}

/// An entry per I/O needs the I/O count before the run: a time-based job is refused, naming the option
/// and log_avg_msec.
#[test]
fn a_time_based_job_logging_every_io_is_refused_by_name() {
    let dir = disk_dir();
    let (code, _, stderr) = run_fio(
        dir.path(),
        "[t]\nrw=read\nsize=1m\nruntime=1\ntime_based\nwrite_lat_log=t\n",
        &[],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("write_lat_log") && stderr.contains("log_avg_msec=N"),
        "{stderr}"
    );
    assert!(log_names(dir.path()).is_empty());
}

/// The same job run by fio (where installed) and by iolab: the same files, columns and, per I/O, lines.
#[test]
fn fio_writes_the_same_files_columns_and_lines() {
    if !Path::new("/usr/bin/fio").exists() {
        return skip("fio", "/usr/bin/fio is not installed");
    }
    for offset in ["0", "1"] {
        let job = format!(
            "[cmp]\nioengine=psync\nrw=randwrite\nbs=4k\nsize=64k\nnumjobs=2\nwrite_bw_log=cmp\n\
             write_lat_log=cmp\nwrite_iops_log=cmp\nlog_offset={offset}\n"
        );
        let (ours, theirs) = (disk_dir(), disk_dir());
        run_ok(ours.path(), &job);
        std::fs::write(theirs.path().join("jobs.fio"), &job).unwrap();
        fio_ok(theirs.path(), &["jobs.fio", "--output=/dev/null"]);
        let names = log_names(theirs.path());
        assert_eq!(log_names(ours.path()), names, "log_offset={offset}");
        for n in &names {
            let (a, b) = (
                entries(&ours.path().join(n)),
                entries(&theirs.path().join(n)),
            );
            assert_eq!(a.len(), b.len(), "{n}, log_offset={offset}: lines");
            let cols = |v: &[Vec<u64>]| v.first().map(Vec::len);
            assert_eq!(cols(&a), cols(&b), "{n}, log_offset={offset}: columns");
            if offset == "1" {
                let offs = |v: &[Vec<u64>]| {
                    let mut o: Vec<u64> = v.iter().map(|e| e[4]).collect();
                    o.sort_unstable();
                    o
                };
                // fio's clones have a file each from 0; iolab's threads a region each of one file.
                let base = offs(&a).first().copied().unwrap_or(0);
                let ours: Vec<u64> = offs(&a).iter().map(|o| o - base).collect();
                assert!(
                    ours.iter().all(|o| o % 4096 == 0 && *o < 64 << 10),
                    "{n}: {ours:?}"
                );
                assert_eq!(offs(&b).len(), ours.len());
            }
        }
    }
}

/// One section of an I/O log (fio's version 3): the file it names, and its I/O lines as (µs, read,
/// offset, length); the header, the file's add and open, the close after the last I/O, and times that
/// never go back are checked.
fn iolog_section(lines: &[&str]) -> (String, Vec<(u64, bool, u64, u64)>) {
    assert_eq!(lines[0], "fio version 3 iolog");
    let file = lines[1]
        .strip_prefix("0 ")
        .unwrap()
        .strip_suffix(" add")
        .unwrap();
    assert_eq!(lines[2], format!("0 {file} open"));
    let mut ios = Vec::new();
    for l in &lines[3..lines.len() - 1] {
        let f: Vec<&str> = l.split(' ').collect();
        assert_eq!((f.len(), f[1]), (5, file), "{l}");
        assert!(f[2] == "read" || f[2] == "write", "{l}");
        let n = |i: usize| f[i].parse::<u64>().unwrap();
        ios.push((n(0), f[2] == "read", n(3), n(4)));
    }
    let close: Vec<&str> = lines[lines.len() - 1].split(' ').collect();
    assert_eq!(close[1..], [file, "close"]);
    let times: Vec<u64> = ios
        .iter()
        .map(|i| i.0)
        .chain([close[0].parse().unwrap()])
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    (file.to_string(), ios)
}

/// write_iolog: a section per clone in the one file named, every I/O the run made (each block of a
/// clone's file once, fio's random map; as many reads as the result counts), in fio's version 3 format;
/// where fio is installed, fio's own log of the job has as many lines and fio replays iolab's log
/// (read_iolog) to the same reads and writes.
#[test]
fn the_io_log_lists_every_io_and_fio_replays_it() {
    let job = "[io]\nioengine=libaio\niodepth=4\nrw=randrw\nbs=4k\nsize=256k\nnumjobs=2\nwrite_iolog=io.log\n";
    let dir = disk_dir();
    let d = dir.path();
    // --keep: the files stay for fio's replay below.
    let (code, stdout, stderr) = run_fio(d, job, &["--json", "-", "--keep"]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let text = std::fs::read_to_string(d.join("io.log")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2 * (64 + 4), "{text}");
    let mut reads = 0;
    for (n, section) in lines.chunks(68).enumerate() {
        let (file, ios) = iolog_section(section);
        assert_eq!(file, format!("io.{n}.0"));
        let mut blocks: Vec<u64> = ios.iter().map(|i| i.2 / 4096).collect();
        blocks.sort_unstable();
        assert_eq!(blocks, (0..64).collect::<Vec<u64>>(), "clone {n}");
        assert!(ios.iter().all(|i| i.3 == 4096 && i.2 % 4096 == 0));
        reads += ios.iter().filter(|i| i.1).count() as u64;
    }
    assert_eq!(reads, u64_of(&v, &["mixed", "reads", "ops"]));
    if !Path::new("/usr/bin/fio").exists() {
        return skip("fio", "/usr/bin/fio is not installed");
    }
    let fio = |dir: &Path, args: &[&str]| {
        let t = fio_ok(dir, &[args, &["--output-format=json"]].concat());
        serde_json::from_str::<serde_json::Value>(&t[t.find('{').unwrap()..]).unwrap()
    };
    let theirs = disk_dir();
    std::fs::write(theirs.path().join("jobs.fio"), job).unwrap();
    fio(theirs.path(), &["jobs.fio"]);
    let their_log = std::fs::read_to_string(theirs.path().join("io.log")).unwrap();
    assert_eq!(their_log.lines().count(), lines.len(), "{their_log}");
    // Clone 0's section replayed by fio on iolab's file.
    let first = format!("{}\n", lines[..68].join("\n"));
    std::fs::write(d.join("replay.log"), first).unwrap();
    let r = fio(
        d,
        &[
            "--name=replay",
            "--ioengine=psync",
            "--read_iolog=replay.log",
        ],
    );
    let ios = |dir: &str| r["jobs"][0][dir]["total_ios"].as_u64().unwrap();
    let ours_reads = lines[..68].iter().filter(|l| l.contains(" read ")).count() as u64;
    assert_eq!((ios("read"), ios("write")), (ours_reads, 64 - ours_reads));
}

/// A sequential job's I/O log is fio's line for line but for the times: its writes and, with fsync=N or
/// end_fsync, its syncs (where fio is installed, held against fio's own log of the job). An I/O log
/// that exists is appended to, as fio's fopen("a") does: what it held stays. Flags beside --fio that
/// would make the log other than the job plans it are refused by name.
#[test]
fn a_sequential_io_log_is_fios_line_for_line_and_appends() {
    let lines_of = |p: &Path| -> Vec<String> {
        let text = std::fs::read_to_string(p).unwrap();
        // Without the time: the first word of every line after the version line.
        text.lines()
            .map(|l| match l.split_once(' ') {
                Some((t, rest)) if t.parse::<u64>().is_ok() => rest.to_string(),
                _ => l.to_string(),
            })
            .collect()
    };
    for (sync, want) in [("fsync=4", 4), ("end_fsync=1", 1), ("", 0)] {
        let job =
            format!("[s]\nioengine=psync\nrw=write\nbs=4k\nsize=64k\n{sync}\nwrite_iolog=s.log\n");
        let dir = disk_dir();
        let d = dir.path();
        let before = "fio version 3 iolog\n0 old add\n";
        std::fs::write(d.join("s.log"), before).unwrap();
        run_ok(d, &job);
        let ours = lines_of(&d.join("s.log"));
        assert_eq!(
            ours[..2],
            ["fio version 3 iolog", "old add"],
            "{sync}: appended to"
        );
        let ours = ours[2..].to_vec();
        let syncs = ours.iter().filter(|l| l.starts_with("s.0.0 sync ")).count();
        assert_eq!(syncs, want, "{sync}: {ours:?}");
        if !Path::new("/usr/bin/fio").exists() {
            return skip("fio", "/usr/bin/fio is not installed");
        }
        let theirs = disk_dir();
        std::fs::write(theirs.path().join("jobs.fio"), &job).unwrap();
        fio_ok(theirs.path(), &["jobs.fio", "--output=/dev/null"]);
        let mut theirs = lines_of(&theirs.path().join("s.log"));
        if sync == "fsync=4" {
            // fio decides on a sync as it takes its next I/O, so none follows its last write; iolab's
            // --fsync every:N flushes after the last N too (the job's notes say so).
            let close = theirs.pop().unwrap();
            theirs.extend(["s.0.0 sync 61440 0".to_string(), close]);
        }
        assert_eq!(ours, theirs, "{sync}");
    }
    let dir = disk_dir();
    let job = "[s]\nrw=write\nsize=64k\nwrite_iolog=s.log\n";
    for (flag, more) in [
        ("--threads", "2"),
        ("--op-log", "100"),
        ("--duration", "1"),
        ("--target", "x.dat"),
    ] {
        let (code, _, stderr) = run_fio(dir.path(), job, &[flag, more]);
        assert_eq!(code, 2, "{flag}: {stderr}");
        assert!(
            stderr.contains(flag) && stderr.contains("write_iolog"),
            "{flag}: {stderr}"
        );
    }
    assert!(!dir.path().join("s.log").exists());
    // A file that is not a fio I/O log is never appended to: refused before the run, left as it was.
    std::fs::write(dir.path().join("s.log"), "[global]\nrw=read\n").unwrap();
    let (code, _, stderr) = run_fio(dir.path(), job, &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("is not a fio I/O log"), "{stderr}");
    let kept = std::fs::read_to_string(dir.path().join("s.log")).unwrap();
    assert_eq!(kept, "[global]\nrw=read\n");
}

/// fio's own fio2gnuplot reads iolab's bw log and draws it (where it and gnuplot are installed).
#[test]
fn fio2gnuplot_draws_iolabs_bw_log() {
    let missing: Vec<&str> = ["/usr/bin/fio2gnuplot", "gnuplot"]
        .into_iter()
        .filter(|p| {
            Command::new("sh")
                .args(["-c", &format!("command -v {p}")])
                .output()
                .map_or(true, |o| !o.status.success())
        })
        .collect();
    if !missing.is_empty() {
        return skip(
            "fio-tools",
            &format!("{} not installed", missing.join(" and ")),
        );
    }
    let dir = disk_dir();
    let d = dir.path();
    run_ok(
        d,
        "[g]\nioengine=psync\nrw=write\nbs=4k\nsize=4m\nrate=8m\nruntime=1\ntime_based\n\
         log_avg_msec=100\nwrite_bw_log=g\n",
    );
    let logged = entries(&d.join("g_bw.1.log"));
    let plots = disk_dir();
    std::fs::copy(d.join("g_bw.1.log"), plots.path().join("g_bw.1.log")).unwrap();
    let out = Command::new("/usr/bin/fio2gnuplot")
        .current_dir(plots.path())
        .args(["-b", "-g", "-k"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    let png = std::fs::read(plots.path().join("g_bw.1-2Draw.png"))
        .unwrap_or_else(|e| panic!("{e}: {said} {:?}", log_names(plots.path())));
    assert!(png.starts_with(b"\x89PNG") && png.len() > 1000);
    // Its figures over the file are the log's: every entry, and their mean.
    let global = std::fs::read_to_string(plots.path().join("result.global")).unwrap();
    let value = |k: &str| -> f64 {
        let line = global.lines().find(|l| l.starts_with(k)).unwrap();
        line[k.len() + 1..].trim().parse().unwrap()
    };
    assert_eq!(value("values_count") as usize, logged.len(), "{global}");
    let mean = logged.iter().map(|e| e[1] as f64).sum::<f64>() / logged.len() as f64;
    assert!((value("avg") - mean).abs() < 0.01, "{global}");
}

/// The shares of a read log's I/Os in each of the zones of `zoned:50/5:30/15:20/` over 1024 blocks of
/// 4 KiB (fio's zones: from block 1024 x 5 / 100 = 51, and 51 + 1024 x 15 / 100 = 204), in percent.
fn zone_shares(log: &str) -> [f64; 3] {
    let mut hits = [0u32; 3];
    let mut n = 0;
    for l in log.lines().filter(|l| l.contains(" read ")) {
        let b = l.split(' ').nth(3).unwrap().parse::<u64>().unwrap() / 4096;
        hits[usize::from(b >= 51) + usize::from(b >= 204)] += 1;
        n += 1;
    }
    hits.map(|h| 100.0 * f64::from(h) / f64::from(n))
}

/// random_distribution=zoned (fio's rand-zones.fio): half the reads in the first 5% of the file, 30% in
/// the next 15%, the rest in the other 80%, as the I/O log shows; where fio is installed, its own log of
/// the job has the same shares within chance. zoned_abs zones past the file are refused.
#[test]
fn zoned_reads_fall_in_the_zones_as_fios_do() {
    let job = "[zones]\nfilename=z\nsize=4m\nio_size=16m\nbs=4k\nrw=randread\nnorandommap\n\
               random_distribution=zoned:50/5:30/15:20/\nwrite_iolog=z.log\n";
    let dir = disk_dir();
    let (code, _, stderr) = run_fio(dir.path(), job, &[]);
    assert_eq!(code, 0, "{stderr}");
    let ours = zone_shares(&std::fs::read_to_string(dir.path().join("z.log")).unwrap());
    // 4096 reads: a share's standard error is under 0.8 points.
    for (got, want) in ours.iter().zip([50.0, 30.0, 20.0]) {
        assert!(
            (got - want).abs() < 3.5,
            "zone shares {ours:?}, asked 50/30/20"
        );
    }
    let abs = job.replace("zoned:50/5:30/15:20/", "zoned_abs:50/1m:50/4m");
    let (code, _, stderr) = run_fio(dir.path(), &abs, &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("span 5 MiB") && stderr.contains("4 MiB"),
        "{stderr}"
    );
    if !Path::new("/usr/bin/fio").exists() {
        return skip("fio", "/usr/bin/fio is not installed");
    }
    let theirs = disk_dir();
    std::fs::write(theirs.path().join("jobs.fio"), job).unwrap();
    fio_ok(theirs.path(), &["jobs.fio"]);
    let fio = zone_shares(&std::fs::read_to_string(theirs.path().join("z.log")).unwrap());
    for (a, b) in ours.iter().zip(fio) {
        assert!(
            (a - b).abs() < 4.5,
            "zone shares iolab {ours:?}, fio {fio:?}"
        );
    }
}

/// rw=read:N, fio's offset modifier (iolab's --skip): holes of 512 KiB between 1 MiB reads end at the
/// file's end after 11 reads (fio's t0007), and read:-8k reads 0, then from 8 KiB before the end down to
/// 0 (fio's backwards-read.fio); on an existing 4 MiB file, read:1m of a 1 MiB region ends after one
/// read, its next position past the region but not the file. The I/O log names each read: where fio is
/// installed, fio's own log of the job is the same line for line, times aside.
#[test]
fn reads_with_holes_or_backwards_are_where_fios_are() {
    for (job, reads) in [
        (
            "[h]\nfilename=d\nsize=16m\nbs=1m\nrw=read:512k\nwrite_iolog=io.log\n",
            11,
        ),
        (
            "[b]\nfilename=d\nsize=1m\nbs=4k\nrw=read:-8k\nwrite_iolog=io.log\n",
            256,
        ),
        (
            "[e]\nfilename=d\nsize=1m\nbs=64k\nrw=read:1m\nwrite_iolog=io.log\n",
            1,
        ),
    ] {
        let dir = disk_dir();
        // The third job's file exists, larger than its region.
        let existing = |d: &Path| {
            if reads == 1 {
                std::fs::write(d.join("d"), vec![7u8; 4 << 20]).unwrap();
            }
        };
        existing(dir.path());
        let (code, _, stderr) = run_fio(dir.path(), job, &[]);
        assert_eq!(code, 0, "{stderr}");
        let ours = std::fs::read_to_string(dir.path().join("io.log")).unwrap();
        let lines: Vec<&str> = ours.lines().collect();
        let (_, ios) = iolog_section(&lines);
        assert_eq!(ios.len(), reads, "{job}");
        let at: Vec<u64> = ios.iter().map(|i| i.2).collect();
        if reads == 11 {
            assert_eq!(at, (0..11).map(|i| (i * 1536) << 10).collect::<Vec<_>>());
        } else if reads == 1 {
            assert_eq!(at, [0]);
        } else {
            assert_eq!(at[..3], [0, 1016 << 10, 1012 << 10]);
            assert_eq!(at[254..], [4096, 0]);
        }
        if !Path::new("/usr/bin/fio").exists() {
            return skip("fio", "/usr/bin/fio is not installed");
        }
        let theirs = disk_dir();
        existing(theirs.path());
        std::fs::write(theirs.path().join("jobs.fio"), job).unwrap();
        fio_ok(theirs.path(), &["jobs.fio"]);
        let fios = std::fs::read_to_string(theirs.path().join("io.log")).unwrap();
        let untimed = |t: &str| -> Vec<String> {
            t.lines()
                .map(|l| l.split_once(' ').map_or(l, |(_, rest)| rest).to_string())
                .collect()
        };
        assert_eq!(untimed(&ours), untimed(&fios), "{job}");
    }
}

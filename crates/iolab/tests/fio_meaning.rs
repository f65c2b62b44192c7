//! A fio job file means the same in iolab as in fio 3.33: each job here runs through `iolab run --fio
//! FILE --fio-json OUT --count none` in a disk directory, and the bytes it moved (the fio JSON's
//! `jobs[].read.io_bytes` and `.write.io_bytes`), its jobs and the files it left are checked against the
//! figures fio gives for it. Where fio is installed the same job runs through fio too, in a directory of
//! its own (the job's `{dir}`), and the two are compared; without fio the figures checked are the ones
//! fio 3.33 gave for these jobs (noted at each), and the comparison says it was skipped.

mod common;
use common::*;
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const MIB: u64 = 1 << 20;

/// What a fio JSON document says a job moved: bytes read and written over its entries, and how many.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Moved {
    read: u64,
    write: u64,
    entries: usize,
}

/// Each job's figures, by job name (clones' entries added up).
fn moved(v: &serde_json::Value) -> BTreeMap<String, Moved> {
    let mut out: BTreeMap<String, Moved> = BTreeMap::new();
    for j in v["jobs"].as_array().expect("jobs[]") {
        let name = j["jobname"].as_str().expect("jobname").to_string();
        let m = out.entry(name).or_default();
        m.read += j["read"]["io_bytes"].as_u64().expect("read.io_bytes");
        m.write += j["write"]["io_bytes"].as_u64().expect("write.io_bytes");
        m.entries += 1;
    }
    out
}

/// The job file `template` with `{dir}` replaced by `dir`, written in `dir`.
fn write_job(dir: &Path, template: &str) -> PathBuf {
    let p = dir.join("job.fio");
    std::fs::write(&p, template.replace("{dir}", &path_str(dir))).unwrap();
    p
}

/// `iolab run --fio` of `template` in `dir` (which must succeed), and its fio JSON.
fn iolab_run(dir: &Path, template: &str, extra: &[&str]) -> (Ran, serde_json::Value) {
    let job = path_str(&write_job(dir, template));
    let out = dir.join("iolab.json");
    let mut a = vec![
        "run",
        "--fio",
        &job,
        "--count",
        "none",
        "--fio-json",
        out.to_str().unwrap(),
        // The job's notes are printed with -v.
        "-v",
    ];
    a.extend_from_slice(extra);
    let r = iolab(&a);
    assert_eq!(r.code, 0, "{template}\n{}", r.stderr);
    let v = json_file(&out);
    std::fs::remove_file(&out).unwrap();
    (r, v)
}

/// Whether fio can be run here (said once per test when it cannot).
fn fio_installed() -> bool {
    let ok = Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        skip(
            "fio",
            "the comparison with fio: fio is not installed (the figures fio 3.33 gave are checked)",
        );
    }
    ok
}

/// fio's run of `template` in `dir` (which must succeed), and its JSON; `None` without fio.
fn fio_run(dir: &Path, template: &str) -> Option<serde_json::Value> {
    if !fio_installed() {
        return None;
    }
    let job = write_job(dir, template);
    let o = Command::new("fio")
        .arg("--output-format=json")
        .arg(&job)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "fio: {template}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    Some(serde_json::from_slice(&o.stdout).expect("fio's JSON"))
}

/// The same bytes per job as fio's; the entries compared where they already match (iolab's fio-json
/// writer may give one entry per job where fio gives one per clone).
fn same_as_fio(ours: &BTreeMap<String, Moved>, fio: &BTreeMap<String, Moved>) {
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        fio.keys().collect::<Vec<_>>(),
        "the same jobs"
    );
    for (name, o) in ours {
        let f = fio[name];
        assert_eq!(
            (o.read, o.write),
            (f.read, f.write),
            "job {name}: bytes read and written, iolab and fio"
        );
        if o.entries != f.entries {
            println!(
                "job {name}: iolab writes {} entries, fio {} (one per clone)",
                o.entries, f.entries
            );
        }
    }
}

fn len(p: &Path) -> u64 {
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .len()
}

/// Bytes allocated to a file (st_blocks).
fn allocated(p: &Path) -> u64 {
    std::fs::metadata(p).unwrap().blocks() * 512
}

/// The job's refusal by iolab (exit 2, every word of `says` in the message) and, where fio runs, by fio
/// (a failure with `fio_says` in what it printed).
fn both_refuse(template: &str, says: &[&str], fio_says: &str) {
    let (ours, theirs) = (disk_dir(), disk_dir());
    let job = path_str(&write_job(ours.path(), template));
    let r = iolab(&["run", "--fio", &job, "--count", "none"]);
    assert_eq!(r.code, 2, "{template}\n{}", r.stderr);
    for s in says {
        assert!(r.stderr.contains(s), "{template}: {}", r.stderr);
    }
    assert!(
        !r.stdout.contains("iolab run:"),
        "nothing ran: {}",
        r.stdout
    );
    if !fio_installed() {
        return;
    }
    let job = write_job(theirs.path(), template);
    let o = Command::new("fio")
        .arg("--output-format=json")
        .arg(&job)
        .current_dir(theirs.path())
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        !o.status.success() && said.contains(fio_says),
        "fio: {template}\n{said}"
    );
}

/// `filesize` without `size`: fio's amount is the file's size (16 MiB of 128 KiB writes, a file of
/// 16 MiB), where iolab used to run its default 100,000 ops.
#[test]
fn filesize_alone_is_the_amount() {
    let job = "[w]\nfilename={dir}/F\nfilesize=16m\nrw=write\nbs=128k\n";
    let (ours, theirs) = (disk_dir(), disk_dir());
    let (_, v) = iolab_run(ours.path(), job, &["--keep"]);
    let m = moved(&v);
    assert_eq!(
        (m["w"].read, m["w"].write),
        (0, 16 * MIB),
        "fio 3.33: 16 MiB"
    );
    assert_eq!(v["jobs"][0]["write"]["total_ios"], 128);
    assert_eq!(len(&ours.path().join("F")), 16 * MIB);
    if let Some(f) = fio_run(theirs.path(), job) {
        same_as_fio(&m, &moved(&f));
        assert_eq!(len(&theirs.path().join("F")), 16 * MIB);
    }
}

/// No size: fio reads an existing file whole (4 MiB), from offset (3 MiB), or size=N% of it, offset
/// included, in whole blocks (50%: 2 MiB; 10% of 4 MiB at bs=4k: 417,792 bytes); an odd-sized one in
/// whole blocks. Without a file there is nothing to take the size from, and both refuse.
#[test]
fn an_existing_file_gives_the_size() {
    let job = "[whole]\nfilename={dir}/E\nrw=read\nbs=64k\n\
               [from1m]\nfilename={dir}/E\nrw=read\nbs=64k\noffset=1m\n\
               [half]\nfilename={dir}/E\nrw=read\nbs=64k\nsize=50%\noffset=1m\n\
               [tenth]\nfilename={dir}/E\nrw=read\nbs=4k\nsize=10%\n\
               [odd]\nfilename={dir}/O\nrw=read\nbs=64k\n";
    let (ours, theirs) = (disk_dir(), disk_dir());
    for d in [&ours, &theirs] {
        std::fs::write(d.path().join("E"), vec![7u8; 4 << 20]).unwrap();
        std::fs::write(d.path().join("O"), vec![7u8; (4 << 20) + 100]).unwrap();
    }
    let (_, v) = iolab_run(ours.path(), job, &[]);
    let m = moved(&v);
    let tenth = (4 * MIB * 10 / 100) / 4096 * 4096;
    for (name, want) in [
        ("whole", 4 * MIB),
        ("from1m", 3 * MIB),
        ("half", 2 * MIB),
        ("tenth", tenth),
        ("odd", 4 * MIB),
    ] {
        assert_eq!((m[name].read, m[name].write), (want, 0), "job {name}");
    }
    assert_eq!(
        len(&ours.path().join("E")),
        4 * MIB,
        "a read job leaves the file as it was"
    );
    if let Some(f) = fio_run(theirs.path(), job) {
        same_as_fio(&m, &moved(&f));
    }
    both_refuse(
        "[r]\nfilename={dir}/missing\nrw=read\n",
        &["job 'r'", "size="],
        "you need to specify size=",
    );
    both_refuse(
        "[r]\nfilename={dir}/missing\nrw=read\nsize=10%\n",
        &["size=10%", "you need to specify size="],
        "you need to specify size=",
    );
    both_refuse(
        "[r]\nfilename={dir}/missing\nrw=write\nruntime=1\ntime_based\n",
        &["you need to specify size="],
        "you need to specify size=",
    );
}

/// numjobs with one filename: fio lays out one file of `size` and each clone does its own `size` over
/// it (3 clones of 8 MiB: 24 MiB written, an 8 MiB file). Without a filename each clone has a file of
/// its own, w.0.0, w.1.0, w.2.0 of 2 MiB each, in fio and in iolab (a file per thread).
#[test]
fn clones_share_one_filename_or_each_have_their_own() {
    let job = "[w]\nfilename={dir}/G\nsize=8m\nnumjobs=3\nrw=randwrite\nbs=4k\n";
    let (ours, theirs) = (disk_dir(), disk_dir());
    let (r, v) = iolab_run(ours.path(), job, &["--keep"]);
    let m = moved(&v);
    assert_eq!(
        (m["w"].read, m["w"].write),
        (0, 24 * MIB),
        "fio 3.33: 3 x 8 MiB"
    );
    assert!(m["w"].entries == 1 || m["w"].entries == 3, "{:?}", m["w"]);
    assert_eq!(len(&ours.path().join("G")), 8 * MIB, "one file of size=8m");
    assert!(r.stdout.contains("--share-region"), "{}", r.stdout);
    if let Some(f) = fio_run(theirs.path(), job) {
        same_as_fio(&m, &moved(&f));
        assert_eq!(len(&theirs.path().join("G")), 8 * MIB);
    }
    let job = "[w]\ndirectory={dir}\nsize=2m\nnumjobs=3\nrw=write\nbs=64k\n";
    let (ours, theirs) = (disk_dir(), disk_dir());
    let (r, v) = iolab_run(ours.path(), job, &["--keep"]);
    let m = moved(&v);
    assert_eq!(
        (m["w"].read, m["w"].write),
        (0, 6 * MIB),
        "fio 3.33: 3 x 2 MiB"
    );
    for i in 0..3 {
        assert_eq!(
            len(&ours.path().join(format!("w.{i}.0"))),
            2 * MIB,
            "a file of size=2m per clone"
        );
    }
    assert!(
        r.stdout
            .contains("each with a file of its own (w.0.0, w.1.0"),
        "{}",
        r.stdout
    );
    if let Some(f) = fio_run(theirs.path(), job) {
        same_as_fio(&m, &moved(&f));
        for i in 0..3 {
            assert_eq!(len(&theirs.path().join(format!("w.{i}.0"))), 2 * MIB);
        }
    }
}

/// filename_format names the clones' files as fio names them ($jobnum a file each; keywords in any
/// case). Clones it gives one name are refused by name: fio 3.33 gives a clone whose name a sibling took
/// no file, and it does nothing (seen below where fio is installed).
#[test]
fn filename_format_names_the_files_fio_names() {
    let job = "[w]\ndirectory={dir}\nfilename_format=$JOBNAME-$jobnum.dat\nsize=1m\nnumjobs=2\nrw=write\nbs=64k\n";
    let (ours, theirs) = (disk_dir(), disk_dir());
    let (_, v) = iolab_run(ours.path(), job, &["--keep"]);
    assert_eq!(moved(&v)["w"].write, 2 * MIB, "fio 3.33: 2 x 1 MiB");
    for i in 0..2 {
        assert_eq!(len(&ours.path().join(format!("w-{i}.dat"))), MIB);
    }
    if let Some(f) = fio_run(theirs.path(), job) {
        same_as_fio(&moved(&v), &moved(&f));
        for i in 0..2 {
            assert_eq!(len(&theirs.path().join(format!("w-{i}.dat"))), MIB);
        }
    }
    let job = "[w]\ndirectory={dir}\nfilename_format=shared.$filenum\nsize=1m\nnumjobs=3\nrw=randwrite\nbs=4k\n";
    let ours = disk_dir();
    let r = iolab(&["run", "--fio", &path_str(&write_job(ours.path(), job))]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("filename_format=shared.$filenum with numjobs")
            && r.stderr.contains("add $jobnum"),
        "{}",
        r.stderr
    );
    let theirs = disk_dir();
    if let Some(f) = fio_run(theirs.path(), job) {
        let per_clone: Vec<u64> = f["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["write"]["io_bytes"].as_u64().unwrap())
            .collect();
        assert_eq!(per_clone, [MIB, 0, 0], "fio's later clones get no file");
    }
}

/// fio's null engine touches no file: its size (16 MiB) is the amount, with or without a runtime, it
/// creates nothing, and without a size it refuses even with a runtime (fio takes no size from a file
/// for it).
#[test]
fn the_null_engine_touches_no_file() {
    let job = "[r]\nioengine=null\ndirectory={dir}\nsize=16m\nruntime=1\nrw=read\n\
               [w]\nioengine=null\nfilename={dir}/W\nsize=16m\nrw=write\nbs=64k\n";
    let (ours, theirs) = (disk_dir(), disk_dir());
    let (r, v) = iolab_run(ours.path(), job, &["--keep"]);
    let m = moved(&v);
    assert_eq!((m["r"].read, m["r"].write), (16 * MIB, 0));
    assert_eq!((m["w"].read, m["w"].write), (0, 16 * MIB));
    assert!(!r.stdout.contains("cold-cache"), "{}", r.stdout);
    let left = |d: &Path| -> Vec<String> {
        std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "job.fio")
            .collect()
    };
    assert!(left(ours.path()).is_empty(), "{:?}", left(ours.path()));
    if let Some(f) = fio_run(theirs.path(), job) {
        same_as_fio(&m, &moved(&f));
        assert!(left(theirs.path()).is_empty(), "{:?}", left(theirs.path()));
    }
    // fio's null engine takes rw=rw too (fio's t0032): 20 ops of 128 KiB, each drawn a direction, and
    // still no file.
    let mix = "[m]\nioengine=null\nfilename={dir}/M\nsize=1280k\nio_size=2560k\nbs=128k\nrw=rw\n";
    let (mine, fios) = (disk_dir(), disk_dir());
    let m = moved(&iolab_run(mine.path(), mix, &[]).1)["m"];
    assert_eq!(m.read + m.write, 2560 << 10, "{m:?}");
    assert!(m.read > 0 && m.write > 0, "both directions: {m:?}");
    assert!(left(mine.path()).is_empty(), "{:?}", left(mine.path()));
    if let Some(f) = fio_run(fios.path(), mix) {
        let f = moved(&f)["m"];
        assert_eq!(f.read + f.write, m.read + m.write, "fio {f:?}, iolab {m:?}");
    }
    both_refuse(
        "[n]\nioengine=null\nruntime=1\ntime_based\nrw=read\n",
        &["ioengine=null takes no size", "you need to specify size="],
        "you need to specify size=",
    );
}

/// fallocate: fio reserves a written file's blocks before the job (native, its default); with none it
/// does not. 16 random 4 KiB writes (io_size=64k) into a region of 4 MiB leave 4 MiB allocated, or
/// well under 1 MiB.
#[test]
fn fallocate_reserves_a_written_files_blocks() {
    if !can_fallocate(disk_dir().path()) {
        skip(
            "fallocate",
            "the test directory's filesystem has no fallocate(2)",
        );
        return;
    }
    for (v, reserved) in [(None, true), (Some("none"), false), (Some("posix"), true)] {
        let mut job =
            "[w]\nfilename={dir}/P\nsize=4m\nio_size=64k\nbs=4k\nrw=randwrite\n".to_string();
        if let Some(v) = v {
            job.push_str(&format!("fallocate={v}\n"));
        }
        let (ours, theirs) = (disk_dir(), disk_dir());
        let (r, v_ours) = iolab_run(ours.path(), &job, &["--keep"]);
        let m = moved(&v_ours);
        assert_eq!((m["w"].read, m["w"].write), (0, 64 << 10));
        let a = allocated(&ours.path().join("P"));
        assert_eq!(
            a >= 4 * MIB,
            reserved,
            "fallocate={v:?}: {a} bytes allocated\n{}",
            r.stdout
        );
        assert!(reserved || a < MIB, "fallocate={v:?}: {a} bytes allocated");
        if v == Some("none") {
            assert!(
                r.stdout.contains("fallocate=none: fio lays"),
                "{}",
                r.stdout
            );
        }
        if let Some(f) = fio_run(theirs.path(), &job) {
            same_as_fio(&m, &moved(&f));
            let fa = allocated(&theirs.path().join("P"));
            assert_eq!(
                fa >= 4 * MIB,
                reserved,
                "fio, fallocate={v:?}: {fa} bytes allocated"
            );
        }
    }
}

/// Numbers as fio reads them: size=0x100000 is 1 MiB, bs=1Ki 1024 bytes (1,024 writes); timeout is
/// runtime (a time_based job of 1 s, paced to 100 writes a second so the size does not end it first);
/// loops=3 writes its 1 MiB region three times (3 MiB, the file stays 1 MiB).
#[test]
fn numbers_aliases_and_loops_in_fios_meaning() {
    let job = "[n]\nfilename={dir}/N\nsize=0x100000\nbs=1Ki\nrw=write\n\
               [l]\nfilename={dir}/L\nsize=1m\nbs=64k\nrw=write\nloops=3\n\
               [t]\nfilename={dir}/T\nsize=1m\nbs=4k\nrw=write\ntimeout=1\ntime_based\nrate_iops=100\n";
    let (ours, theirs) = (disk_dir(), disk_dir());
    let (_, v) = iolab_run(ours.path(), job, &["--keep"]);
    let m = moved(&v);
    assert_eq!((m["n"].read, m["n"].write), (0, MIB));
    assert_eq!((m["l"].read, m["l"].write), (0, 3 * MIB));
    let by_name = |v: &serde_json::Value, n: &str| -> serde_json::Value {
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["jobname"] == n)
            .cloned()
            .unwrap()
    };
    assert_eq!(by_name(&v, "n")["write"]["total_ios"], 1024);
    let t = by_name(&v, "t");
    let ms = t["job_runtime"].as_u64().unwrap();
    assert!((900..2500).contains(&ms), "timeout=1: {ms} ms\n{t}");
    assert!(m["t"].write < MIB, "the time ended it: {:?}", m["t"]);
    for (f, size) in [("N", MIB), ("L", MIB), ("T", MIB)] {
        assert_eq!(len(&ours.path().join(f)), size, "{f}");
    }
    if let Some(f) = fio_run(theirs.path(), job) {
        let fm = moved(&f);
        for n in ["n", "l"] {
            assert_eq!(
                m[n],
                Moved {
                    entries: m[n].entries,
                    ..fm[n]
                },
                "job {n}"
            );
        }
        assert_eq!(by_name(&f, "n")["write"]["total_ios"], 1024);
        let fms = by_name(&f, "t")["job_runtime"].as_u64().unwrap();
        assert!((900..2500).contains(&fms), "fio: {fms} ms");
        for (f, size) in [("N", MIB), ("L", MIB), ("T", MIB)] {
            assert_eq!(len(&theirs.path().join(f)), size, "fio's {f}");
        }
    }
}

/// bsrange of equal ends is one block size; do_verify=0 drops the verify (fio reads nothing back);
/// clat_percentiles changes nothing; randrw on libaio runs (half reads, half writes of 1 MiB in all),
/// reaping as fio's libaio does.
#[test]
fn options_that_change_nothing_or_one_thing() {
    let job =
        "[b]\nfilename={dir}/B\nsize=1m\nbsrange=4k-4k\nrw=write\nverify=crc32c\ndo_verify=0\n\
               clat_percentiles=0\n\
               [m]\nioengine=libaio\niodepth=4\nrw=randrw\nfilename={dir}/M\nsize=1m\nbs=4k\n";
    let (ours, theirs) = (disk_dir(), disk_dir());
    let (r, v) = iolab_run(ours.path(), job, &[]);
    let m = moved(&v);
    assert_eq!((m["b"].read, m["b"].write), (0, MIB));
    assert_eq!(m["m"].read + m["m"].write, MIB);
    assert!(!r.stdout.contains("read back"), "do_verify=0: {}", r.stdout);
    assert!(
        r.stdout
            .contains("reaping as fio's libaio: at most 1 completion a call"),
        "libaio's reaping: {}",
        r.stdout
    );
    if let Some(f) = fio_run(theirs.path(), job) {
        let fm = moved(&f);
        assert_eq!((m["b"].read, m["b"].write), (fm["b"].read, fm["b"].write));
        assert_eq!(m["m"].read + m["m"].write, fm["m"].read + fm["m"].write);
    }
}

/// What fio refuses, iolab refuses (iodepth=0, numjobs=0); what iolab cannot honour it refuses by name
/// (reads and writes of other lengths in one job, bssplit beside a bs of other ends).
#[test]
fn what_cannot_run_as_fio_means_it_is_refused_by_name() {
    both_refuse(
        "[q]\nfilename={dir}/Q\nsize=1m\niodepth=0\n",
        &["iodepth=0", "min value out of range"],
        "min value out of range",
    );
    both_refuse(
        "[q]\nfilename={dir}/Q\nsize=1m\nnumjobs=0\n",
        &["numjobs=0", "maximum number of jobs"],
        "maximum number of jobs",
    );
    let dir = disk_dir();
    for (opt, says) in [
        (
            "bsrange=4k-8k,8k-16k\nrw=rw",
            "reads and writes of other lengths",
        ),
        (
            "bssplit=4k/50:8k/50\nbs=4k",
            "which of the two the file gives last",
        ),
        ("bs=4k,", "none empty"),
        ("runtime=0.5", "whole numbers"),
    ] {
        let job = path_str(&write_job(
            dir.path(),
            &format!("[q]\nfilename={{dir}}/Q\nsize=1m\n{opt}\n"),
        ));
        let r = iolab(&["run", "--fio", &job, "--count", "none"]);
        assert_eq!(r.code, 2, "{opt}: {}", r.stderr);
        let key = opt.split('=').next().unwrap();
        assert!(
            r.stderr.contains(key) && r.stderr.contains(says),
            "{opt}: {}",
            r.stderr
        );
    }
}

/// A verified write job: fio counts its verify reads in the job's reads (4 MiB written, 4 MiB read
/// back); so does iolab's fio JSON, over the read-back's own time, and says what they are.
#[test]
fn verify_reads_count_as_the_jobs_reads() {
    let job = "[v]\nfilename={dir}/V\nsize=4m\nbs=4k\nrw=write\nverify=crc32c\n";
    let (ours, theirs) = (disk_dir(), disk_dir());
    let (_, v) = iolab_run(ours.path(), job, &[]);
    let m = moved(&v);
    assert_eq!(
        (m["v"].read, m["v"].write),
        (4 * MIB, 4 * MIB),
        "{:?}",
        m["v"]
    );
    let j = &v["jobs"][0];
    assert_eq!(j["read"]["total_ios"], 1024, "{}", j["read"]);
    assert!(j["read"]["runtime"].as_u64().unwrap() >= 1, "{}", j["read"]);
    assert!(j["iolab"]["verify_reads_are"].is_string(), "{}", j["iolab"]);
    if let Some(f) = fio_run(theirs.path(), job) {
        same_as_fio(&m, &moved(&f));
    }
}

/// zonesize and zoneskip (fio's zonemode=strided): a 1 MiB file, 256 KiB written in 64 KiB blocks, two
/// blocks a zone, a zone every 256 KiB: fio writes blocks 0, 1, 4 and 5 and nothing else.
#[test]
fn strided_zones_write_where_fio_does() {
    let job = "[z]\nfilename={dir}/Z\nsize=1m\nio_size=256k\nrw=write\nbs=64k\nzonemode=strided\n\
               zonesize=128k\nzoneskip=128k\n";
    let (ours, theirs) = (disk_dir(), disk_dir());
    let (r, v) = iolab_run(ours.path(), job, &["--keep"]);
    assert!(
        r.stdout.contains("zones of 128 KiB, one every 256 KiB"),
        "{}",
        r.stdout
    );
    let m = moved(&v);
    assert_eq!((m["z"].read, m["z"].write), (0, 256 << 10));
    let written = |p: &Path| -> Vec<usize> {
        let d = std::fs::read(p).unwrap();
        d.chunks(64 << 10)
            .enumerate()
            .filter(|(_, c)| c.iter().any(|b| *b != 0))
            .map(|(i, _)| i)
            .collect()
    };
    assert_eq!(written(&ours.path().join("Z")), [0, 1, 4, 5]);
    if let Some(f) = fio_run(theirs.path(), job) {
        same_as_fio(&m, &moved(&f));
        assert_eq!(written(&theirs.path().join("Z")), [0, 1, 4, 5]);
    }
}

/// Jobs one after the other (stonewall) on one filename share the file, as in fio: with --keep, the
/// second writes into the file the first made (it was refused as a file "not made by this run"), and
/// both move what fio moves.
#[test]
fn later_jobs_write_into_the_file_an_earlier_one_made_and_kept() {
    let job = "[global]\nfilename={dir}/S\nsize=1m\nbs=4k\n[first]\nrw=randwrite\n\
               [second]\nstonewall\nrw=randrw\n";
    let (ours, theirs) = (disk_dir(), disk_dir());
    let (r, v) = iolab_run(ours.path(), job, &["--keep"]);
    let m = moved(&v);
    assert_eq!((m["first"].read, m["first"].write), (0, MIB));
    assert_eq!(m["second"].read + m["second"].write, MIB);
    assert!(
        r.stdout
            .contains("fio job 'second': read and wrote into the file job 'first' made and kept"),
        "{}",
        r.stdout
    );
    assert_eq!(len(&ours.path().join("S")), MIB);
    if let Some(f) = fio_run(theirs.path(), job) {
        let fio = moved(&f);
        assert_eq!(m["first"].write, fio["first"].write);
        let total = |x: &Moved| x.read + x.write;
        assert_eq!(total(&m["second"]), total(&fio["second"]));
        assert_eq!(len(&theirs.path().join("S")), MIB);
    }
}

/// fio's t0029: a write job, then a job that reads the file with verify and loops=2. fio checks each
/// block as it reads it, and reads the file once whatever its loops (16 KiB written, 16 KiB read); iolab
/// checks the blocks again after the run, counted in no figure. One seed serves both jobs (fio's randseed, 0x89), so the
/// reading job finds what the writing one wrote; a changed byte is found, the job and seed named, exit 1.
#[test]
fn a_reading_job_checks_what_an_earlier_job_wrote() {
    let job = "[global]\nfilename={dir}/T\nsize=16k\nbs=4k\nverify=md5\n[write]\nrw=write\n\
               do_verify=0\n[read]\nstonewall\nrw=read\nloops=2\n";
    let (ours, theirs) = (disk_dir(), disk_dir());
    let (r, v) = iolab_run(ours.path(), job, &["--keep"]);
    let m = moved(&v);
    assert_eq!((m["write"].read, m["write"].write), (0, 16 << 10));
    assert_eq!((m["read"].read, m["read"].write), (16 << 10, 0));
    for said in [
        "4 blocks (16 KiB) read again after the run and checked against iolab's pattern for seed 137, \
         0 mismatches",
        "fio job 'read': read the file job 'write' made and kept",
        "loops=2 with verify=md5 on a job that only reads: fio reads the file once",
    ] {
        assert!(r.stdout.contains(said), "{said}: {}", r.stdout);
    }
    if let Some(f) = fio_run(theirs.path(), job) {
        same_as_fio(&m, &moved(&f));
    }
    let t = ours.path().join("T");
    let mut data = std::fs::read(&t).unwrap();
    data[2 * 4096 + 100] ^= 0xff;
    std::fs::write(&t, &data).unwrap();
    let only = write_job(
        ours.path(),
        "[read]\nfilename={dir}/T\nsize=16k\nbs=4k\nverify=md5\nrw=read\n",
    );
    let r = iolab(&["run", "--fio", &path_str(&only), "--count", "none"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("job 'read': 1 of 4 blocks differ from iolab's pattern for seed 137"),
        "{}",
        r.stderr
    );
}

/// The 4 KiB blocks of `p` that hold only zeros (never written: the file is preallocated).
fn unwritten_blocks(p: &Path) -> usize {
    let d = std::fs::read(p).unwrap();
    d.chunks(4096).filter(|c| c.iter().all(|b| *b == 0)).count()
}

/// fio's random writes visit every block once a pass (its random map), so a randwrite of the file's
/// size leaves no block unwritten; with norandommap=1 both draw with replacement and about a third of
/// the blocks (256 x e^-1, 94) are never reached.
#[test]
fn random_writes_visit_every_block_once_as_fios_random_map_does() {
    let job = "[r]\nfilename={dir}/R\nsize=1m\nbs=4k\nrw=randwrite\n";
    let (ours, theirs) = (disk_dir(), disk_dir());
    let (r, v) = iolab_run(ours.path(), job, &["--keep"]);
    assert!(r.stdout.contains("each block once a pass"), "{}", r.stdout);
    assert_eq!(moved(&v)["r"].write, MIB);
    assert_eq!(unwritten_blocks(&ours.path().join("R")), 0);
    if fio_run(theirs.path(), job).is_some() {
        assert_eq!(unwritten_blocks(&theirs.path().join("R")), 0, "fio");
    }
    let job = "[r]\nfilename={dir}/N\nsize=1m\nbs=4k\nrw=randwrite\nnorandommap=1\n";
    let (_, v) = iolab_run(ours.path(), job, &["--keep"]);
    assert_eq!(moved(&v)["r"].write, MIB);
    let left = unwritten_blocks(&ours.path().join("N"));
    assert!((40..160).contains(&left), "{left} of 256 blocks unwritten");
    if fio_run(theirs.path(), job).is_some() {
        let left = unwritten_blocks(&theirs.path().join("N"));
        assert!(
            (40..160).contains(&left),
            "fio: {left} of 256 blocks unwritten"
        );
    }
}

/// A verified randrw job: each block is visited once, so the blocks read back are the job's writes, and
/// fio counts them in the job's reads: its reads and its verify reads make the file's size.
#[test]
fn a_verified_mixed_job_counts_its_read_back_as_fio_does() {
    let job = "[v]\nfilename={dir}/V\nsize=4m\nbs=4k\nrw=randrw\nverify=crc32c\n";
    let (ours, theirs) = (disk_dir(), disk_dir());
    let (_, v) = iolab_run(ours.path(), job, &[]);
    let m = moved(&v)["v"];
    assert!(m.write > 0 && m.write < 4 * MIB, "{m:?}");
    assert_eq!(
        m.read,
        4 * MIB,
        "reads and the read-back of the writes: {m:?}"
    );
    let said = v["jobs"][0]["iolab"]["verify_reads_are"].as_str().unwrap();
    assert!(said.contains("read-back of its writes"), "{said}");
    if let Some(f) = fio_run(theirs.path(), job) {
        assert_eq!(moved(&f)["v"].read, 4 * MIB, "fio");
    }
}

/// Flags over a random job's random map: --method offload (whose client draws its own offsets) runs it
/// with replacement and says so; --pattern seq runs it in order; neither is refused for a distribution
/// the user never gave.
#[test]
fn flags_over_a_random_job_drop_its_random_map_and_say_so() {
    let dir = disk_dir();
    let job = "[r]\nfilename={dir}/R\nsize=1m\nbs=4k\nrw=randwrite\n";
    let (r, v) = iolab_run(dir.path(), job, &["--method", "offload"]);
    assert!(
        r.stdout
            .contains("client draws its offsets with replacement"),
        "{}",
        r.stdout
    );
    assert_eq!(moved(&v)["r"].write, MIB);
    let (r, v) = iolab_run(dir.path(), job, &["--pattern", "seq", "--overwrite"]);
    assert!(r.stdout.contains("4 KiB seq"), "{}", r.stdout);
    assert_eq!(moved(&v)["r"].write, MIB);
}

/// bssplit and a two-ended bsrange draw each op's length (iolab's --bs-split), and move what fio moves:
/// a sequential write of 4 MiB in 4 and 64 KiB ops writes the file's 4 MiB exactly; fio's t0001 (null
/// engine, bsrange=1k-4k, size=20000) ends when its random map is full, after 19 blocks of 1 KiB (19,456
/// bytes, fio 3.33); a randrw of drawn lengths without a map moves its size, its last op passing it.
#[test]
fn drawn_lengths_move_what_fios_move() {
    let (ours, theirs) = (disk_dir(), disk_dir());
    let job = "[s]\nfilename={dir}/S\nsize=4m\nrw=write\nbssplit=4k/50:64k/50\n";
    let (r, v) = iolab_run(ours.path(), job, &["--keep"]);
    assert!(
        r.stdout.contains("4k/50:64k/50 (lengths drawn per op)"),
        "{}",
        r.stdout
    );
    assert_eq!(v["jobs"][0]["job options"]["bssplit"], "4k/50:64k/50");
    let m = moved(&v);
    assert_eq!((m["s"].read, m["s"].write), (0, 4 * MIB));
    assert_eq!(len(&ours.path().join("S")), 4 * MIB);
    if let Some(f) = fio_run(theirs.path(), job) {
        same_as_fio(&m, &moved(&f));
    }
    let job = "[foo]\nsize=20000\nbsrange=1k-4k\nrw=randread\nioengine=null\n";
    let (r, v) = iolab_run(ours.path(), job, &[]);
    assert!(r.stdout.contains("after 19456 bytes"), "{}", r.stdout);
    let m = moved(&v);
    assert_eq!((m["foo"].read, m["foo"].write), (19456, 0));
    if let Some(f) = fio_run(theirs.path(), job) {
        same_as_fio(&m, &moved(&f));
    }
    let job = "[m]\nfilename={dir}/M\nsize=8m\nrw=randrw\nrwmixread=70\nnorandommap=1\n\
               bssplit=4k/60:16k/40\n";
    let (_, v) = iolab_run(ours.path(), job, &[]);
    let m = moved(&v);
    let total = m["m"].read + m["m"].write;
    assert!((8 * MIB..8 * MIB + 16384).contains(&total), "{total}");
    if let Some(f) = fio_run(theirs.path(), job) {
        let fm = moved(&f);
        let theirs = fm["m"].read + fm["m"].write;
        assert!(
            (8 * MIB..8 * MIB + 16384).contains(&theirs),
            "fio: {theirs}"
        );
    }
}

/// The 4 KiB blocks of `p` that hold data, and its size.
fn written_blocks(p: &Path) -> (usize, u64) {
    let d = std::fs::read(p).unwrap();
    let n = d.chunks(4096).filter(|c| c.iter().any(|b| *b != 0)).count();
    (n, d.len() as u64)
}

/// fio's t0002-pre, small: a later job works the file an earlier job made past its end. fio lays the
/// file out to the later job's region before the jobs run (filesetup.c `extend_file`: filled for a job
/// that reads), so what the earlier job writes stays; iolab grows it before the later job, keeping it.
/// A reading job grows the file to 3 MiB with its region filled (fio fills the gap before the region
/// too), a writing one to 5 MiB (only the two jobs' 2 MiB of data, in both): the bytes and sizes are fio's.
#[test]
fn a_later_job_past_a_kept_files_end_grows_it_as_fio_lays_it_out() {
    let (ours, theirs) = (disk_dir(), disk_dir());
    for (later, size, data, said) in [
        (
            "offset=2m\nrw=read",
            3 * MIB,
            (512, 768),
            "G, which iolab made for an earlier job and kept, held 1 MiB, short of this job's region (to \
             byte 3145728): iolab made it 3 MiB long and filled its region's 1 MiB past the old end",
        ),
        (
            "offset=4m\nrw=write",
            5 * MIB,
            (512, 512),
            "held 1 MiB, short of this job's region (to byte 5242880): iolab made it 5 MiB long before the run",
        ),
    ] {
        let job = format!(
            "[global]\nfilename={{dir}}/G\nsize=1m\nbs=4k\n[a]\nrw=write\n[b]\nstonewall\n{later}\n"
        );
        let (r, v) = iolab_run(ours.path(), &job, &["--keep"]);
        let m = moved(&v);
        assert_eq!(m["a"].write, MIB, "{m:?}");
        assert_eq!(m["b"].read + m["b"].write, MIB, "{m:?}");
        assert!(r.stdout.contains(said), "{said}: {}", r.stdout);
        let file = ours.path().join("G");
        assert_eq!(written_blocks(&file), (data.0, size), "{later}");
        std::fs::remove_file(file).unwrap();
        if let Some(f) = fio_run(theirs.path(), &job) {
            same_as_fio(&m, &moved(&f));
            let file = theirs.path().join("G");
            assert_eq!(written_blocks(&file), (data.1, size), "fio: {later}");
            std::fs::remove_file(file).unwrap();
        }
    }
}

/// The grown file's edges: a region after a gap reads and verifies as iolab's pattern (the gap stays a
/// hole); an old end inside a block of the later job fills that block from the old end on; a null-engine
/// job grows nothing.
#[test]
fn a_grown_files_region_is_filled_from_the_old_end_and_nop_grows_nothing() {
    let dir = disk_dir();
    let run = |job: &str| {
        let f = path_str(&write_job(dir.path(), job));
        let r = iolab(&["run", "--fio", &f, "--keep", "--count", "none", "-v"]);
        let data = std::fs::read(dir.path().join("H")).unwrap();
        std::fs::remove_file(dir.path().join("H")).unwrap();
        (r, data)
    };
    let (r, data) = run(
        "[global]\nfilename={dir}/H\nbs=4k\n[a]\nrw=write\nsize=64k\n[b]\nstonewall\n\
                          offset=192k\nsize=64k\nrw=read\nverify=crc32c\n",
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("16 blocks (64 KiB) read again after the run"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains(", 0 mismatches"), "{}", r.stdout);
    assert_eq!(data.len(), 256 << 10);
    assert!(
        data[64 << 10..192 << 10].iter().all(|b| *b == 0),
        "the gap is a hole"
    );
    let (r, data) = run(
        "[global]\nfilename={dir}/H\n[a]\nrw=write\nbs=2k\nsize=6k\n[b]\nstonewall\n\
                          bs=4k\nsize=16k\nrw=read\n",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("filled its region's 10 KiB past the old end"),
        "{}",
        r.stdout
    );
    assert!(
        data[6144..8192].iter().any(|b| *b != 0),
        "the block the old end is in"
    );
    let (r, data) = run(
        "[global]\nfilename={dir}/H\nbs=4k\n[a]\nrw=write\nsize=64k\n[b]\nstonewall\n\
                          ioengine=null\nrw=read\noffset=1m\nsize=1m\n",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(data.len(), 64 << 10, "a null-engine job grows nothing");
    assert!(!r.stdout.contains("made and kept"), "{}", r.stdout);
}

/// fio's rw=rw keeps a position per direction: its reads and its writes each walk the file from the
/// start, so the blocks written are the first ones (as many as the writes), not every other block of
/// the file. Checked on a file of zeros: its written blocks are a prefix, in both tools.
#[test]
fn a_sequential_mix_writes_from_the_start_as_fio_does() {
    let job = "[m]\nfilename={dir}/M\nsize=256k\nbs=4k\nrw=rw\n";
    let (ours, theirs) = (disk_dir(), disk_dir());
    let prefix = |dir: &Path, written: u64| {
        let d = std::fs::read(dir.join("M")).unwrap();
        let w: Vec<bool> = d.chunks(4096).map(|c| c.iter().any(|b| *b != 0)).collect();
        let n = (written / 4096) as usize;
        assert!(n > 8 && n < 56, "{n} of 64 blocks written");
        assert!(
            w[..n].iter().all(|x| *x) && !w[n..].iter().any(|x| *x),
            "{w:?}"
        );
    };
    std::fs::write(ours.path().join("M"), vec![0u8; 256 << 10]).unwrap();
    let (r, v) = iolab_run(ours.path(), job, &["--overwrite"]);
    assert!(
        r.stdout
            .contains("reads and writes each from the region's start"),
        "{}",
        r.stdout
    );
    let m = moved(&v)["m"];
    assert_eq!(m.read + m.write, 256 << 10);
    prefix(ours.path(), m.write);
    std::fs::write(theirs.path().join("M"), vec![0u8; 256 << 10]).unwrap();
    if let Some(f) = fio_run(theirs.path(), job) {
        prefix(theirs.path(), moved(&f)["m"].write);
    }
}

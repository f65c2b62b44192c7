//! `report` and `compare` read each record file once and hold memory linear in it: what the kernel counts
//! of them (opens by inotify, peak resident bytes by wait4's rusage), which another process on this shared
//! machine does not change. Their CPU time, which it does change, is a benchmark that prints its ratio
//! (`cargo bench -p iolab --bench scaling`). Before they were made linear, 1,000 records took 29 s and
//! 2,000 did not finish in 120 s.

mod common;
#[path = "common/scaling.rs"]
mod scaling;

use common::*;
use scaling::{cost, document, records, template, Cost};
use std::path::Path;

/// The most resident memory one byte of records may add (peak at 2,000 records less peak at 1,000, over
/// the bytes added). Records are read as a stream and cut down to what is shown as they are parsed: the
/// kept values and the page made of them (report 0.4, compare 1.4 when this was written; 3.1 while the
/// survey answer cloned every record, and 31 and 19 when each file was held as text beside every record
/// parsed whole, and copied per stage; quadratic memory would add ever more per byte).
const BYTES_PER_INPUT_BYTE: f64 = 4.0;

/// `iolab report RECS -o HTML`: its peak resident bytes (RECS opened once, watched by inotify).
fn report_peak(recs: &Path, html: &Path) -> u64 {
    let args = ["report".into(), path_str(recs), "-o".into(), path_str(html)];
    cost(&args, &[recs]).peak_rss
}

/// The resident bytes each byte of input added cost between two runs (`(bytes, peak)` each, the input
/// read `reads` times), printed for `what` and held to at most `at_most`.
fn held_per_byte(what: &str, runs: &[(u64, u64)], reads: u64, at_most: f64) {
    let ((b1, m1), (b2, m2)) = (runs[0], runs[1]);
    let per_byte = (m2 as f64 - m1 as f64) / (reads * (b2 - b1)) as f64;
    println!("{what}: {per_byte:.2} resident bytes per byte of records added");
    assert!(
        per_byte <= at_most,
        "{what}: {per_byte:.1} bytes of memory per byte of records ({m1} at {b1} bytes, {m2} at {b2})"
    );
}

#[test]
fn report_and_compare_read_each_file_once_in_memory_linear_in_it() {
    let d = tempfile::tempdir().unwrap();
    let t = template(d.path());
    let mut runs: Vec<(u64, Cost, Cost)> = Vec::new();
    for n in [1000, 2000] {
        let recs = d.path().join(format!("r{n}.jsonl"));
        let other = d.path().join(format!("o{n}.jsonl"));
        let bytes = records(&t, n, &recs);
        std::fs::copy(&recs, &other).unwrap();
        let html = path_str(&d.path().join(format!("r{n}.html")));
        let report = cost(
            &["report".into(), path_str(&recs), "-o".into(), html],
            &[&recs],
        );
        let compare = cost(
            &["compare".into(), path_str(&recs), path_str(&other)],
            &[&recs, &other],
        );
        for (what, c) in [("report", report), ("compare", compare)] {
            println!(
                "{what} of {n} records ({bytes} bytes): {} opens, peak {} bytes resident",
                c.opens, c.peak_rss
            );
        }
        runs.push((bytes, report, compare));
    }
    let (b1, r1, c1) = runs[0];
    let (b2, r2, c2) = runs[1];
    // compare reads two files of that size.
    for (what, small, large, files) in [("report", r1, r2, 1), ("compare", c1, c2, 2)] {
        assert_eq!(
            (small.opens, large.opens),
            (1, 1),
            "{what} opens of the records"
        );
        let added = ((b2 - b1) * files) as f64;
        let per_byte = (large.peak_rss as f64 - small.peak_rss as f64) / added;
        println!("{what}: {per_byte:.1} resident bytes per byte of records added");
        assert!(
            per_byte <= BYTES_PER_INPUT_BYTE,
            "{what}: {per_byte:.1} bytes of memory per byte of input (peak {} at {b1} bytes of records, \
             {} at {b2})",
            small.peak_rss,
            large.peak_rss
        );
    }
}

/// Records cut down to what `compare` keeps of them (a spec, a host and findings, nothing else) cost
/// about their text: compare holds each run's workload once and its figures, not its spec's fields
/// as parsed values (about 10 KB a record: 155,000 of them, a 200 MB file, took 1.6 GB).
#[test]
fn records_of_a_spec_alone_cost_compare_about_their_text() {
    let d = tempfile::tempdir().unwrap();
    let mut t = template(d.path());
    let r = t["result"].as_object_mut().unwrap();
    r.retain(|k, _| ["spec", "host", "findings"].contains(&k.as_str()));
    t.as_object_mut().unwrap().remove("settings");
    let mut runs = Vec::new();
    for n in [10_000, 20_000] {
        let recs = d.path().join(format!("s{n}.jsonl"));
        let bytes = records(&t, n, &recs);
        let c = cost(
            &["compare".into(), path_str(&recs), path_str(&recs)],
            &[&recs],
        );
        println!(
            "compare of {n} records of a spec ({bytes} bytes, twice): peak {}",
            c.peak_rss
        );
        runs.push((bytes, c.peak_rss));
    }
    // The file is read twice, as A and as B.
    held_per_byte("compare", &runs, 2, 2.0);
}

/// Records of a spec, a host, a latency summary and a few figures (many short fields, each of which
/// took about 140 bytes as a parsed value) cost the report about their text: it holds a record of JSON
/// lines as its text and parses it again where the page reads it (a 200 MB file of such records took
/// 1.2 GB, about 6 bytes per byte).
#[test]
fn records_of_many_short_fields_cost_the_report_about_their_text() {
    let d = tempfile::tempdir().unwrap();
    let mut t = template(d.path());
    let keep = [
        "spec",
        "host",
        "latency",
        "iops",
        "mib_s",
        "ns_per_op",
        "wall_s",
        "findings",
    ];
    let r = t["result"].as_object_mut().unwrap();
    r.retain(|k, _| keep.contains(&k.as_str()));
    t.as_object_mut().unwrap().remove("settings");
    let mut runs = Vec::new();
    for n in [10_000, 20_000] {
        let recs = d.path().join(format!("s{n}.jsonl"));
        let bytes = records(&t, n, &recs);
        let page = d.path().join(format!("s{n}.html"));
        let peak = report_peak(&recs, &page);
        println!("report of {n} records ({bytes} bytes): peak {peak}");
        assert!(page.exists(), "the page of {n} records was written");
        runs.push((bytes, peak));
    }
    held_per_byte("report", &runs, 1, 2.0);
}

/// Records with long arrays (a paced sweep's intervals, 300 a run) are held as the report draws them: of
/// each interval the figures a chart reads, and each line of the over-time charts thinned to its share of
/// the figure's points, so that neither the memory nor the page grows with every interval (a 200 MB file
/// of them took 1.6 GB, and made a 259 MB page, before).
#[test]
fn records_with_long_arrays_cost_what_the_report_draws_of_them() {
    let d = tempfile::tempdir().unwrap();
    let mut t = template(d.path());
    let intervals: Vec<serde_json::Value> = (0..300)
        .map(|i| {
            // As a run writes them (`IntervalFigures`), with its digits.
            let (s, e) = (i as f64 * 0.010000065942, (i + 1) as f64 * 0.010000059407);
            serde_json::json!({"start_s": s, "end_s": e, "ops": 20, "bytes": 10240,
                "iops": 2000.0130692749894 - i as f64 / 7.0, "mib_s": 0.9765688814819284,
                "lat_p50_ns": 719.8058125096659, "lat_p90_ns": 1021.3434865719571,
                "lat_p99_ns": 1390.5732915461913 + i as f64 / 13.0, "lat_max_ns": 1400.7655726210007})
        })
        .collect();
    t["result"]["intervals"] = serde_json::Value::Array(intervals);
    let mut sizes = Vec::new();
    for n in [150, 300] {
        let recs = d.path().join(format!("r{n}.jsonl"));
        let bytes = records(&t, n, &recs);
        let html = d.path().join(format!("r{n}.html"));
        let c = cost(
            &[
                "report".into(),
                path_str(&recs),
                "-o".into(),
                path_str(&html),
            ],
            &[&recs],
        );
        let page = std::fs::metadata(&html).unwrap().len();
        println!(
            "report of {n} records ({bytes} bytes): peak {} bytes, page {page}",
            c.peak_rss
        );
        sizes.push((bytes, c.peak_rss, page));
    }
    let ((b1, m1, _), (b2, m2, page)) = (sizes[0], sizes[1]);
    let per_byte = (m2 as f64 - m1 as f64) / (b2 - b1) as f64;
    assert!(
        per_byte <= BYTES_PER_INPUT_BYTE,
        "{per_byte:.1} bytes of memory per byte of records ({m1} at {b1} bytes, {m2} at {b2})"
    );
    // The page draws at most its figures' points, whatever the records hold: smaller than its input.
    assert!(
        page < b2 / 4,
        "a page of {page} bytes from {b2} bytes of records"
    );
    let text = std::fs::read_to_string(d.path().join("r300.html")).unwrap();
    assert!(text.contains("Lines of more than "), "the thinning is said");
}

/// One record whose intervals are many and short (forged: three figures each) costs the report about its
/// text: the figures a chart draws are read from the packed text a pair at a time, not made again as an
/// object each (10 million of them, 200 MB, took 4.6 GB).
#[test]
fn one_record_of_millions_of_short_intervals_costs_about_its_text() {
    use std::io::Write;
    let d = tempfile::tempdir().unwrap();
    let mut t = template(d.path());
    t["result"]["intervals"] = "@@".into();
    let line = t.to_string();
    let (head, tail) = line.split_once("\"@@\"").unwrap();
    let mut sizes = Vec::new();
    for n in [300_000, 600_000] {
        // Written an interval at a time: a child's peak counts this process's memory at the fork.
        let recs = d.path().join(format!("m{n}.jsonl"));
        let mut f = std::io::BufWriter::new(std::fs::File::create(&recs).unwrap());
        write!(f, "{head}[").unwrap();
        for i in 0..n {
            let (end, iops) = (
                0.1 + 0.2 + i as f64 * 0.01,
                1.0000000000000002 + (i % 7) as f64,
            );
            let sep = if i > 0 { "," } else { "" };
            write!(f, r#"{sep}{{"ops":20,"end_s":{end:?},"iops":{iops:?}}}"#).unwrap();
        }
        writeln!(f, "]{tail}").unwrap();
        drop(f);
        let bytes = std::fs::metadata(&recs).unwrap().len();
        let peak = report_peak(&recs, &d.path().join(format!("m{n}.html")));
        println!("report of one record of {n} intervals ({bytes} bytes): peak {peak}");
        sizes.push((bytes, peak));
    }
    held_per_byte("report", &sizes, 1, 3.0);
}

/// Records of many intervals holding only the figures a chart draws (a long run's time series, 20,000
/// intervals each) cost about their text: the report holds each run's intervals packed, a figure's
/// shortest text each. As objects an interval took about 590 bytes for 88 of text: 14 records of
/// 100,000 were reported in 810 MB from 108 MB, 28 in 1.6 GB (7.4 bytes per byte added; 1.06 when this
/// was written, 121 and 235 MB).
#[test]
fn records_of_many_short_intervals_cost_about_their_text() {
    let d = tempfile::tempdir().unwrap();
    let mut t = template(d.path());
    let intervals: Vec<serde_json::Value> = (0..20_000)
        .map(|i| {
            serde_json::json!({"end_s": 0.1 + 0.2 + i as f64 * 0.01,
                "iops": 1.0000000000000002 + (i % 7) as f64, "lat_p99_ns": 1.0000000000000002})
        })
        .collect();
    t["result"]["intervals"] = serde_json::Value::Array(intervals);
    let mut sizes = Vec::new();
    for n in [10, 20] {
        let recs = d.path().join(format!("i{n}.jsonl"));
        let bytes = records(&t, n, &recs);
        let peak = report_peak(&recs, &d.path().join(format!("i{n}.html")));
        println!("report of {n} records of 20,000 intervals ({bytes} bytes): peak {peak}");
        sizes.push((bytes, peak));
    }
    held_per_byte("report", &sizes, 1, 2.0);
    let text = std::fs::read_to_string(d.path().join("i20.html")).unwrap();
    assert!(text.contains("iops-over-time"), "the intervals are drawn");
}

/// Records of profiled io_uring runs (a profile's 2,000 functions ranked twice, an io_uring run's
/// requests per submission at 190 sizes) cost about their text: the report holds those arrays packed.
/// As objects and numbers, 200 MB of them took 1.0 and 1.15 GB.
#[test]
fn profiles_and_batch_sizes_cost_about_their_text() {
    let d = tempfile::tempdir().unwrap();
    let mut t = template(d.path());
    let share = |k: usize| {
        serde_json::json!({"name": format!("vfs_write_iter_{k}"), "kernel": !k.is_multiple_of(3),
            "samples": 3 + k % 5, "share": (3 + k % 5) as f64 / 8000.0})
    };
    let shares: Vec<serde_json::Value> = (0..2000).map(share).collect();
    t["result"]["profile"] = serde_json::json!({"pass": "separate", "event": "cpu-clock",
        "frequency_hz": 999, "samples": 8000, "lost": 0, "groups": [share(1), share(2)],
        "top_self": shares, "top_inclusive": shares, "notes": [],
        "folded": ["iolab;entry_SYSCALL_64;do_syscall_64;ksys_write 4000",
                   "iolab;entry_SYSCALL_64;do_syscall_64;vfs_write 4000"]});
    let sizes: Vec<[u64; 2]> = (1..=190).map(|k| [k, 1000 + k]).collect();
    t["result"]["uring"] = serde_json::json!({"batch_histogram": sizes});
    let mut runs = Vec::new();
    for n in [100, 200] {
        let recs = d.path().join(format!("p{n}.jsonl"));
        let bytes = records(&t, n, &recs);
        let peak = report_peak(&recs, &d.path().join(format!("p{n}.html")));
        println!("report of {n} profiled records ({bytes} bytes): peak {peak}");
        runs.push((bytes, peak));
    }
    held_per_byte("report", &runs, 1, 2.0);
    let text = std::fs::read_to_string(d.path().join("p200.html")).unwrap();
    // Each run's functions most sampled, its batch sizes and its stacks are drawn.
    for drawn in ["io_uring batch sizes", "vfs_write_iter_9", "Flame graph"] {
        assert!(text.contains(drawn), "{drawn} is not in the page");
    }
}

/// A document's runs (a survey's on one line, a `run --repeat` one's over many, as each is written) are
/// read one at a time and cut down as a record's: its text is never held whole beside them, and a survey
/// run's result is not kept whole (a survey document of 213 MB took 1.75 GB in `report`, and a repeat
/// document of 196 MB 752 MB: about 8 and 3.8 bytes per byte).
#[test]
fn documents_are_read_a_run_at_a_time_in_memory_linear_in_them() {
    let d = tempfile::tempdir().unwrap();
    let t = template(d.path());
    let result = &t["result"];
    // A survey's document: its runs on one line.
    let survey_of = |path: &std::path::Path, runs: &mut dyn Iterator<Item = String>| -> u64 {
        document(path, r#"{"ranking":[],"findings":[],"runs":["#, runs, "]}")
    };
    // A survey's document on one line; a repeat one's over many, as `run --json` prints it.
    let survey = |n: usize, path: &std::path::Path| -> u64 {
        let mut runs = (0..n).map(|i| {
            let mut r = result.clone();
            r["spec"]["bs"] = (i + 1).into();
            serde_json::json!({"target": "file", "method": "psync", "bs": i + 1, "result": r,
                "rounds_ns_per_op": [1.0, 1.1, 1.2], "rounds_disturbed": 0})
            .to_string()
        });
        survey_of(path, &mut runs)
    };
    let repeat = |n: usize, path: &std::path::Path| -> u64 {
        let mut runs = (0..n).map(|_| serde_json::to_string_pretty(result).unwrap());
        let head = format!("{{\n  \"repeat\": {{\"runs\": {n}}},\n  \"runs\": [\n");
        document(path, &head, &mut runs, "\n  ]\n}\n")
    };
    // A survey's rows that did not run, each with why (a forged survey of 228,000 took 880 MB at 200 MB).
    let refused = |n: usize, path: &std::path::Path| -> u64 {
        let mut runs = (0..n).map(|i| {
            serde_json::json!({"target": "/dev/null", "method": "mmap", "bs": i + 1, "result": null,
                "unavailable": format!("{i:09} {}", "y".repeat(700)), "rounds_ns_per_op": [],
                "round_runs": [], "rounds_disturbed": 0, "steal_s": null, "verdict": null})
            .to_string()
        });
        survey_of(path, &mut runs)
    };
    // The same, each of a long target of its own (labels and keys that copied each target took a 199 MB
    // survey to 737 MB).
    let targets = |n: usize, path: &std::path::Path| -> u64 {
        let mut runs = (0..n).map(|i| {
            serde_json::json!({"target": format!("/t/{i:09}{}", "t".repeat(790)), "method": "mmap",
                "bs": 4096, "result": null, "unavailable": "x", "rounds_ns_per_op": [],
                "round_runs": [], "rounds_disturbed": 0, "steal_s": null, "verdict": null})
            .to_string()
        });
        survey_of(path, &mut runs)
    };
    // Runs of many rounds each (a survey runs up to 1,024 a cell where the order is not decided): held as
    // objects and numbers, a 200 MB survey of them took 1.4 GB in `report` and 1.3 GB in `compare`,
    // which does not read them.
    let rounds = |n: usize, path: &std::path::Path| -> u64 {
        let mut runs = (0..n).map(|i| {
            let mut r = result.clone();
            r["spec"]["bs"] = (i + 1).into();
            let ns = |k: usize| 100.0 + (k * 7 % 13) as f64 / 3.0;
            let round_runs: Vec<serde_json::Value> = (0..1024)
                .map(|k| serde_json::json!({"round": k + 1, "ns_per_op": ns(k), "disturbed": k % 5 == 0}))
                .collect();
            serde_json::json!({"target": "file", "method": "psync", "bs": i + 1, "result": r,
                "rounds_ns_per_op": (0..1024).map(ns).collect::<Vec<_>>(),
                "round_runs": round_runs, "rounds_disturbed": 205})
            .to_string()
        });
        survey_of(path, &mut runs)
    };
    type Write<'a> = dyn Fn(usize, &std::path::Path) -> u64 + 'a;
    for (what, write, n) in [
        ("survey", &survey as &Write, 1000),
        ("repeat", &repeat as &Write, 1000),
        ("refused-rows", &refused as &Write, 10_000),
        ("long-targets", &targets as &Write, 10_000),
        ("many-rounds", &rounds as &Write, 100),
    ] {
        let mut runs = Vec::new();
        for n in [n, 2 * n] {
            let doc = d.path().join(format!("{what}{n}.json"));
            let bytes = write(n, &doc);
            let html = path_str(&d.path().join(format!("{what}{n}.html")));
            let report = cost(
                &["report".into(), path_str(&doc), "-o".into(), html],
                &[&doc],
            );
            let compare = cost(&["compare".into(), path_str(&doc), path_str(&doc)], &[]);
            println!(
                "{what} document of {n} runs ({bytes} bytes): report peak {}, compare peak {}",
                report.peak_rss, compare.peak_rss
            );
            runs.push((bytes, report.peak_rss, compare.peak_rss));
        }
        let ((b1, r1, c1), (b2, r2, c2)) = (runs[0], runs[1]);
        for (cmd, small, large, files) in [("report", r1, r2, 1), ("compare", c1, c2, 2)] {
            let per_byte = (large as f64 - small as f64) / ((b2 - b1) * files) as f64;
            println!("{what}, {cmd}: {per_byte:.1} resident bytes per byte of document added");
            assert!(
                per_byte <= DOCUMENT_BYTES_PER_BYTE,
                "{cmd} of a {what} document: {per_byte:.1} bytes of memory per byte ({small} at {b1} \
                 bytes, {large} at {b2})"
            );
        }
    }
}

/// Records whose points hold long values (each a label's part, which every chart repeats in its legend
/// and each point's tooltip) make a page and take memory of about their size: 64 values of 4,000 bytes in
/// 25 records made a page of 241 MB from 6.6 MB, and 376 records ran out of memory.
#[test]
fn long_point_values_make_a_page_and_take_memory_of_about_their_size() {
    use std::io::Write;
    let d = tempfile::tempdir().unwrap();
    let t = template(d.path());
    let mut sizes = Vec::new();
    for n in [200, 400] {
        let recs = d.path().join(format!("p{n}.jsonl"));
        let mut f = std::io::BufWriter::new(std::fs::File::create(&recs).unwrap());
        for i in 0..n {
            let mut r = t.clone();
            let point: serde_json::Map<String, serde_json::Value> = (0..16)
                .map(|k| {
                    (
                        format!("k{k}"),
                        format!("{i}-{k}-{}", "x".repeat(2000)).into(),
                    )
                })
                .collect();
            r["point"] = serde_json::Value::Object(point);
            writeln!(f, "{r}").unwrap();
        }
        f.flush().unwrap();
        drop(f);
        let bytes = std::fs::metadata(&recs).unwrap().len();
        let html = d.path().join(format!("p{n}.html"));
        let args = [
            "report".into(),
            path_str(&recs),
            "-o".into(),
            path_str(&html),
        ];
        let c = cost(&args, &[&recs]);
        let page = std::fs::metadata(&html).unwrap().len();
        println!(
            "{n} records of long points ({bytes} bytes): peak {}, page {page}",
            c.peak_rss
        );
        sizes.push((bytes, c.peak_rss, page));
    }
    let ((b1, m1, _), (b2, m2, page)) = (sizes[0], sizes[1]);
    let per_byte = (m2 as f64 - m1 as f64) / (b2 - b1) as f64;
    // Each value is held twice: in its record, and once among the coordinates the charts group runs
    // by; and each record's chart of its latency grows with them (3.45 when this was written).
    assert!(
        per_byte <= 4.0,
        "{per_byte:.1} bytes of memory per byte of records ({m1} at {b1} bytes, {m2} at {b2})"
    );
    assert!(
        page < 2 * b2,
        "a page of {page} bytes from {b2} bytes of records"
    );
}

/// A file of points that did not run, each of 14 keys (a sweep refused at every point: a record of its
/// point and why, about 800 bytes), costs little more memory than its text: its points are held packed,
/// one text each. As objects each key took an entry of 112 bytes beside its two texts, and a 200 MB file
/// of them was reported in 928 MB and compared in 917 MB (4.6 bytes per byte of records added; 1.8 and
/// 1.7 when this was written, 372 and 360 MB).
#[test]
fn refused_points_of_many_keys_cost_about_their_text() {
    use std::io::Write;
    let d = tempfile::tempdir().unwrap();
    let t = template(d.path());
    let mut sizes = Vec::new();
    for n in [20_000, 40_000] {
        let recs = d.path().join(format!("e{n}.jsonl"));
        let mut f = std::io::BufWriter::new(std::fs::File::create(&recs).unwrap());
        writeln!(f, "{t}").unwrap();
        for i in 0..n {
            let mut point: serde_json::Map<String, serde_json::Value> = [
                "bs",
                "threads",
                "file-size",
                "direct",
                "ops",
                "log-interval",
                "method",
                "op",
                "distribution",
                "pattern",
                "warmup",
                "latency-sample",
                "fsync",
            ]
            .iter()
            .map(|k| (k.to_string(), format!("v{}", i % 7).into()))
            .collect();
            point.insert("seed".into(), i.to_string().into());
            let why = format!("--bs: not accepted here {}", "y".repeat(500));
            let r = serde_json::json!({"point": point, "error": why, "exit_code": 2});
            writeln!(f, "{r}").unwrap();
        }
        f.flush().unwrap();
        drop(f);
        let bytes = std::fs::metadata(&recs).unwrap().len();
        let html = path_str(&d.path().join(format!("e{n}.html")));
        let report = cost(
            &["report".into(), path_str(&recs), "-o".into(), html],
            &[&recs],
        );
        let other = d.path().join(format!("o{n}.jsonl"));
        std::fs::copy(&recs, &other).unwrap();
        let args = ["compare".into(), path_str(&recs), path_str(&other)];
        let compare = cost(&args, &[&recs, &other]);
        println!(
            "{n} refused points ({bytes} bytes): report peak {}, compare peak {}",
            report.peak_rss, compare.peak_rss
        );
        sizes.push((bytes, report, compare));
    }
    let ((b1, r1, c1), (b2, r2, c2)) = (sizes[0], sizes[1]);
    for (what, small, large, files) in [("report", r1, r2, 1), ("compare", c1, c2, 2)] {
        let per_byte = (large.peak_rss as f64 - small.peak_rss as f64) / ((b2 - b1) * files) as f64;
        println!("{what}: {per_byte:.2} resident bytes per byte of refused points added");
        assert!(
            per_byte <= 2.5,
            "{what}: {per_byte:.1} bytes of memory per byte of records ({} at {b1} bytes, {} at {b2})",
            small.peak_rss,
            large.peak_rss
        );
    }
}

/// The most resident memory one byte of a document may add: its runs as a record file's records, and
/// the page (report 2.7 for a survey's on one line and 1.7 for a repeat one's over many when this was
/// written).
const DOCUMENT_BYTES_PER_BYTE: f64 = 3.5;

/// A fleet's results directory is read as a record file is: each host's records streamed and cut down,
/// merged by reference, so its memory grows with its records as a file's does (it held about 24 bytes
/// per byte of records before: a 210 MB directory took 5 GB).
#[test]
fn a_fleets_results_are_read_in_memory_linear_in_them() {
    let d = tempfile::tempdir().unwrap();
    let t = template(d.path());
    let mut runs = Vec::new();
    for n in [500, 1000] {
        let dir = d.path().join(format!("fleet{n}"));
        let mut bytes = 0;
        for h in ["a", "b", "c"] {
            let files = dir.join(h).join("files");
            std::fs::create_dir_all(&files).unwrap();
            bytes += records(&t, n, &files.join("s.jsonl"));
            let info = serde_json::json!({"rc": 0, "architecture": "x86_64", "kernel": "6.1",
                "records": ["s.jsonl"]});
            std::fs::write(dir.join(h).join("fleet-host.json"), info.to_string()).unwrap();
        }
        let html = path_str(&d.path().join(format!("f{n}.html")));
        let report = cost(&["report".into(), path_str(&dir), "-o".into(), html], &[]);
        let compare = cost(
            &[
                "compare".into(),
                path_str(&dir),
                "--across".into(),
                "host".into(),
            ],
            &[],
        );
        println!(
            "fleet of 3 hosts x {n} records ({bytes} bytes): report peak {}, compare peak {}",
            report.peak_rss, compare.peak_rss
        );
        runs.push((bytes, report.peak_rss, compare.peak_rss));
    }
    let ((b1, r1, c1), (b2, r2, c2)) = (runs[0], runs[1]);
    for (what, small, large) in [("report", r1, r2), ("compare", c1, c2)] {
        let per_byte = (large as f64 - small as f64) / (b2 - b1) as f64;
        println!("{what} of a fleet: {per_byte:.1} resident bytes per byte of records added");
        assert!(
            per_byte <= BYTES_PER_INPUT_BYTE,
            "{what} of a fleet: {per_byte:.1} bytes of memory per byte of records"
        );
    }
}

/// `sweep --resume` holds each of its points' latest record, not every record the file holds: a file of
/// 1,000 or 2,000 records of other points (made with the sweep's settings) costs the same memory, and
/// the file is read as a stream (it held 20 bytes per byte of records before: a 100 MB file took 2 GB).
#[test]
fn a_resumed_sweep_holds_its_points_latest_records_only() {
    let d = tempfile::tempdir().unwrap();
    let t = template(d.path());
    let mut runs = Vec::new();
    for n in [1000, 2000] {
        let out = d.path().join(format!("resume{n}.jsonl"));
        let bytes = records(&t, n, &out);
        let c = resume_cost(&out);
        let after = std::fs::read_to_string(&out).unwrap();
        assert_eq!(
            after.lines().count(),
            n + 2,
            "the sweep's two points appended"
        );
        println!(
            "sweep --resume of {n} records ({bytes} bytes): peak {}",
            c.peak_rss
        );
        runs.push((bytes, c.peak_rss));
    }
    let ((b1, p1), (b2, p2)) = (runs[0], runs[1]);
    let per_byte = (p2 as f64 - p1 as f64) / (b2 - b1) as f64;
    println!("sweep --resume: {per_byte:.2} resident bytes per byte of records added");
    assert!(
        per_byte <= 1.0,
        "sweep --resume: {per_byte:.2} bytes of memory per byte of records it does not run"
    );
}

/// A forged record or summary line is not made whole to be read past: `sweep --resume` reads a record's
/// point and outcome first (the rest only of its points' records, and only the keys iolab writes), and
/// `report` reads of a summary the fields a summary has. A 10 MB array under another key took 371 MB to
/// resume and 370 MB to report before; a line twice as long must cost no more.
#[test]
fn forged_arrays_in_a_line_are_read_past_not_made() {
    let d = tempfile::tempdir().unwrap();
    let t = template(d.path());
    let mut runs = Vec::new();
    for n in [1_000_000usize, 2_000_000] {
        // Written a piece at a time: a child's peak counts this process's memory at the fork.
        let out = d.path().join(format!("junk{n}.jsonl"));
        let bytes = forged(&t, n, &out);
        let html = path_str(&d.path().join(format!("junk{n}.html")));
        let report = cost(&["report".into(), path_str(&out), "-o".into(), html], &[]);
        let resume = resume_cost(&out);
        let compare = cost(&["compare".into(), path_str(&out), path_str(&out)], &[]);
        println!(
            "{bytes} bytes of forged arrays: report peak {}, resume peak {}, compare peak {}",
            report.peak_rss, resume.peak_rss, compare.peak_rss
        );
        runs.push((bytes, [report.peak_rss, resume.peak_rss, compare.peak_rss]));
    }
    let ((b1, small), (b2, large)) = (runs[0], runs[1]);
    let whats = ["report", "sweep --resume", "compare"];
    for ((what, small), large) in whats.iter().zip(small).zip(large) {
        let per_byte = (large as f64 - small as f64) / (b2 - b1) as f64;
        println!("{what}: {per_byte:.2} resident bytes per forged byte added");
        assert!(
            per_byte <= 1.0,
            "{what}: {per_byte:.2} bytes per forged byte"
        );
    }
}

/// A record file of `template` with an array of `n` zeros under a key iolab does not write in the
/// record, then a summary line that is such an array; returns its bytes.
fn forged(template: &serde_json::Value, n: usize, path: &std::path::Path) -> u64 {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut rec = template.to_string();
    rec.truncate(rec.len() - 1);
    let zeros = |f: &mut std::io::BufWriter<std::fs::File>| {
        for i in 0..n {
            f.write_all(if i == 0 { b"0" } else { b",0" }).unwrap();
        }
    };
    write!(f, "{rec},\"junk\":[").unwrap();
    zeros(&mut f);
    write!(f, "]}}\n{{\"summary\":[").unwrap();
    zeros(&mut f);
    writeln!(f, "]}}").unwrap();
    f.flush().unwrap();
    std::fs::metadata(path).unwrap().len()
}

/// A run's spec holding more than any iolab writes is refused by every reader, the values under a key
/// iolab does not write counted as they are read past (a reader that keeps only some of the spec's keys
/// had taken it, one that keeps the spec refused it). Before: `report` took it, 730 MB to compare 15 MB.
#[test]
fn a_spec_holding_more_than_iolab_writes_is_refused_by_every_reader() {
    let d = tempfile::tempdir().unwrap();
    let t = template(d.path());
    let rec = t.to_string();
    let (head, tail) = rec.split_once("\"spec\":{").expect("a run's spec");
    let zeros = vec!["0"; 100_000].join(",");
    let out = d.path().join("junk.jsonl");
    std::fs::write(
        &out,
        format!("{head}\"spec\":{{\"junk\":[{zeros}],{tail}\n"),
    )
    .unwrap();
    let html = path_str(&d.path().join("junk.html"));
    let file = path_str(&out);
    let resume: Vec<String> = scaling::TEMPLATE_SWEEP
        .iter()
        .map(|a| a.to_string())
        .chain([file.clone(), "--resume".into()])
        .collect();
    for args in [
        vec!["report".to_string(), file.clone(), "-o".into(), html],
        vec!["compare".into(), file.clone(), file.clone()],
        resume,
    ] {
        let out = std::process::Command::new(bin())
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("`spec` holds more than 128 values"),
            "{args:?}: {err}"
        );
    }
}

/// What `sweep --resume` of the template's sweep costs on the record file `out`.
fn resume_cost(out: &std::path::Path) -> Cost {
    let args: Vec<String> = scaling::TEMPLATE_SWEEP
        .iter()
        .map(|a| a.to_string())
        .chain([path_str(out), "--resume".into()])
        .collect();
    cost(&args, &[])
}

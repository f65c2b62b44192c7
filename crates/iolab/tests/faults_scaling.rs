//! `report` and `compare` read each record file once and hold memory linear in it: what the kernel counts
//! of them (opens by inotify, peak resident bytes by wait4's rusage), which another process on this shared
//! machine does not change. Their CPU time, which it does change, is a benchmark that prints its ratio
//! (`cargo bench -p iolab --bench scaling`). Before they were made linear, 1,000 records took 29 s and
//! 2,000 did not finish in 120 s.

mod common;
#[path = "common/scaling.rs"]
mod scaling;

use common::*;
use scaling::{cost, records, template, Cost};

/// The most resident memory one byte of records may add (peak at 2,000 records less peak at 1,000, over
/// the bytes added). Records are read as a stream and cut down to what is shown as they are parsed: the
/// kept values and the page made of them (report 3.1, compare 2.2 when this was written; 31 and 19
/// when each file was held as text beside every record parsed whole, and copied per stage; quadratic
/// memory would add ever more per byte). A 200 MB file of these records then takes about 650 MB.
const BYTES_PER_INPUT_BYTE: f64 = 4.0;

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

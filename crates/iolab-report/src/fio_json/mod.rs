//! Runs as fio 3.33's `--output-format=json+` lays them out (`--fio-json FILE`), so that fio's own
//! `fio_jsonplus_clat2csv` and fio-plot read iolab's results as they read fio's: one entry of `jobs` per
//! job clone (each of a run's threads; one for them all with `group_reporting`), with its `read`,
//! `write`, `trim` and `sync` sections (bytes, bw in KiB/s, iops, runtime in ms, latency in ns with
//! fio's percentiles and its 1,856 bins), the bandwidth and IOPS samples' figures, usr/sys CPU and
//! context switches. iolab's own figures go in an `iolab` object beside them, saying where a figure
//! differs from fio's meaning or is a share of the run's.

mod dir;
mod entry;
mod group;
pub mod parts;
pub mod plat;
mod reporting;
pub mod samples;

pub use entry::fio_engine;
pub use reporting::{reporting, FioRun, Reporting};
use serde_json::{json, Value};

/// The document of `runs`, as fio's json+ would hold them: an entry per run (per clone without
/// group_reporting), the runs of one reporting group that merge as one.
pub fn document(runs: &[FioRun]) -> Value {
    let started = runs.first().map_or(0, |r| r.result.host.started_unix_s);
    let mut jobs: Vec<Value> = Vec::new();
    let mut rest = runs;
    while let Some(first) = rest.first() {
        let n = rest
            .iter()
            .take_while(|r| {
                first.reporting.merge
                    && r.reporting.merge
                    && r.reporting.groupid == first.reporting.groupid
            })
            .count()
            .max(1);
        let (these, after) = rest.split_at(n);
        if n == 1 {
            jobs.extend(entry::entries(first));
        } else {
            jobs.push(group::entry(these));
        }
        rest = after;
    }
    json!({
        "fio version": format!("iolab-{} (fio json+ layout)", env!("CARGO_PKG_VERSION")),
        "timestamp": started,
        "timestamp_ms": started * 1000,
        "time": "",
        "global options": {},
        "jobs": jobs,
        "disk_util": [],
    })
}

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

/// The document of `runs`, as fio's json+ would hold them: an entry per clone, or per run with
/// group_reporting, joined as fio's __show_run_stats joins them (`reporting::entry_units`).
pub fn document(runs: &[FioRun]) -> Value {
    let started = runs.first().map_or(0, |r| r.result.host.started_unix_s);
    let jobs: Vec<Value> = reporting::entry_units(runs)
        .into_iter()
        .map(|units| match units.as_slice() {
            [(run, part)] => entry::entry(run, part, &samples::windows(run.result)),
            _ => group::entry(&units),
        })
        .collect();
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

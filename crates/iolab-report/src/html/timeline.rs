//! The timed pass over time (`--log-interval`, a result's `intervals`): IOPS and p99 latency per
//! interval against the seconds since the run's first op, a line per run, in panels of at most
//! MAX_SERIES runs. A writeback stall or a burst of hypervisor steal shows as a dip in IOPS and a peak in
//! p99 at the second it happened, which the run's totals average away.

use super::axis::Axis;
use super::dist::{panels_note, run_lines};
use super::model::{shared_spec, uninformative, Out, Run};
use super::vary::{self, MAX_SERIES};
use crate::fields::{self, Field};
use serde_json::Value;

/// (end_s, value of `f`) of each of a run's intervals that has the value (positive), held as objects or
/// packed as the report reads them.
pub(super) fn series(r: &Value, f: Field) -> Vec<(f64, f64)> {
    fields::INTERVALS
        .at(r)
        .map(|a| {
            iolab_lab::series::item_pairs(a, fields::INTERVAL_END_S.key(), f.key())
                .into_iter()
                .filter(|(t, v)| t.is_finite() && *v > 0.0)
                .collect()
        })
        .unwrap_or_default()
}

/// IOPS and p99 latency over time, for the runs that recorded intervals.
pub(super) fn over_time_charts(io_runs: &[&Run], out: &mut Out) {
    let runs: Vec<&Run> = io_runs
        .iter()
        .copied()
        .filter(|x| x.has.intervals)
        .collect();
    if runs.is_empty() {
        return;
    }
    let left = io_runs.len() - runs.len();
    let groups = vary::split(runs.clone(), &[], MAX_SERIES, &|g| g.len());
    let ends: Vec<f64> = runs
        .iter()
        .flat_map(|x| series(&x.r(), fields::INTERVAL_IOPS))
        .map(|p| p.0)
        .collect();
    let x = Axis::amount("time since the run's first op", "s", &ends);
    let note = format!(
        "Each point is one interval of a run's timed pass (--log-interval; 1 s by default, recorded when the pass \
         took 2 s or more), drawn at its end (x, seconds since the run's first op): each worker closed its \
         interval at its first completion past the boundary, and the threads' intervals were added up.{}{} \
         Shared spec: {}.",
        panels_note(&groups),
        if left > 0 {
            format!(" {left} run(s) without intervals are not drawn.")
        } else {
            String::new()
        },
        shared_spec(&runs)
    );
    let charts = [
        (
            "iops-over-time",
            "IOPS over time",
            fields::INTERVAL_IOPS,
            "Operations completed per second in each interval (y). A dip is a stall: writeback, a flush, \
             hypervisor steal, another process.",
        ),
        (
            "p99-over-time",
            "p99 latency over time",
            fields::INTERVAL_P99,
            "The 99th percentile of the latencies of the ops completed in each interval (y, log axis; from a \
             histogram of 32 buckets per power of two).",
        ),
    ];
    for (name, title, f, what) in charts {
        let ys: Vec<f64> = runs
            .iter()
            .flat_map(|x| series(&x.r(), f))
            .map(|p| p.1)
            .collect();
        let y = if f.key() == fields::INTERVAL_IOPS.key() {
            // Runs of 4 KiB and of 1 MiB ops on one axis: a log one where they span 10x, so the slower
            // runs' dips are not flattened onto its floor.
            Axis::iops(&ys).log_if_span(&ys, 10.0)
        } else {
            Axis::time("p99 latency", &ys)
        };
        if let Some(why) = uninformative(&ys, &|v| y.value_text(v)) {
            out.leave_out(title, why);
            continue;
        }
        let (fig, thinned) = match run_lines(title, &groups, (&x, &y), &|r| series(&r.r(), f)) {
            Ok(f) => f,
            Err(why) => {
                out.leave_out(title, why);
                continue;
            }
        };
        out.figure(name, title, format!("{what} {note}{thinned}"), &fig);
    }
}

/// `--memory-limit`: (seconds since the timed span started, page cache in MiB) of a run's readings every
/// 100 ms.
pub(super) fn page_cache(r: &Value) -> Vec<(f64, f64)> {
    fields::MEMORY_OVER_TIME
        .at(r)
        .map(|a| {
            iolab_lab::series::item_pairs(a, fields::MEM_T_S.key(), fields::MEM_PAGE_CACHE.key())
                .into_iter()
                .map(|(t, c)| (t, c / (1u64 << 20) as f64))
                .collect()
        })
        .unwrap_or_default()
}

/// The page cache over time of the runs under a memory limit: where buffered I/O meets reclaim.
pub(super) fn page_cache_chart(io_runs: &[&Run], out: &mut Out) {
    let runs: Vec<&Run> = io_runs
        .iter()
        .copied()
        .filter(|x| x.has.page_cache)
        .collect();
    if runs.is_empty() {
        return;
    }
    let groups = vary::split(runs.clone(), &[], MAX_SERIES, &|g| g.len());
    let pts: Vec<(f64, f64)> = runs.iter().flat_map(|x| page_cache(&x.r())).collect();
    let x = Axis::amount(
        "time since the timed span started",
        "s",
        &pts.iter().map(|p| p.0).collect::<Vec<_>>(),
    );
    let ys: Vec<f64> = pts.iter().map(|p| p.1).collect();
    let y = Axis::amount("page cache", "MiB", &ys);
    let title = "Page cache over time, under --memory-limit";
    if let Some(why) = uninformative(&ys, &|v| y.value_text(v)) {
        out.leave_out(title, why);
        return;
    }
    let (fig, thinned) = match run_lines(title, &groups, (&x, &y), &|r| page_cache(&r.r())) {
        Ok(f) => f,
        Err(why) => return out.leave_out(title, why),
    };
    out.figure(
        "page-cache-over-time",
        title,
        format!(
            "The page cache charged to the run's memory cgroup (y, MiB), read by a thread of iolab's every \
             100 ms of the timed pass (x): buffered I/O fills it up to the limit, then reclaim takes pages \
             back as fast as the run makes them; the IOPS over time shows what that cost.{}{thinned} \
             Shared spec: {}.",
            panels_note(&groups),
            shared_spec(&runs)
        ),
        &fig,
    );
}

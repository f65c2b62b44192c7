//! Runs as fio's `--output-format=json+` lays them out (`--fio-json FILE`), so that fio's own
//! `fio_jsonplus_clat2csv` and fio-plot read iolab's results: a job per run with its `read`, `write`,
//! `trim` and `sync` sections (bytes, bw in KiB/s, iops, runtime in ms, latency in ns with fio's
//! percentiles and bins), usr/sys CPU and context switches; iolab's own figures go in an `iolab` object
//! beside them, with what differs from fio's meaning.

use iolab_engine::measure::hist::Summary;
use iolab_engine::result::RunResult;
use iolab_engine::spec::OpKind;
use serde_json::{json, Map, Value};

/// fio's default percentiles, and the quantiles of iolab's CDF that are the same points.
const PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// What the latency figures are, for the reader of the `iolab` object.
const LATENCY_IS: &str = "iolab's per-op latency (see the result's `timed`) in lat_ns and clat_ns alike; \
     slat is not measured apart (zeros); bins are iolab's half-octave buckets keyed by their upper bound in \
     ns, coarser than fio's, and latency_ns/us/ms count each bucket in the range holding its upper bound; \
     fio's iodepth_* distributions and bandwidth samples are not kept";

/// The document of `runs` (each with its job name), as fio's json+ would hold them.
pub fn document(runs: &[(String, &RunResult)]) -> Value {
    let started = runs.first().map_or(0, |(_, r)| r.host.started_unix_s);
    json!({
        "fio version": format!("iolab-{} (fio json+ layout)", env!("CARGO_PKG_VERSION")),
        "timestamp": started,
        "timestamp_ms": started * 1000,
        "time": "",
        "global options": {},
        "jobs": runs.iter().map(|(name, r)| job(name, r)).collect::<Vec<_>>(),
        "disk_util": [],
    })
}

fn job(name: &str, r: &RunResult) -> Value {
    let s = &r.spec;
    let ms = r.wall_s * 1e3;
    let (read, write) = match (&r.mixed, s.op) {
        (Some(m), _) => (
            dir(m.reads.ops, m.reads.bytes, &m.reads.latency, r.wall_s),
            dir(m.writes.ops, m.writes.bytes, &m.writes.latency, r.wall_s),
        ),
        (None, OpKind::Read) => (dir(r.ops, r.bytes, &r.latency, r.wall_s), idle()),
        (None, _) => (idle(), dir(r.ops, r.bytes, &r.latency, r.wall_s)),
    };
    let cpu = &r.cpu.process;
    let pct = |v: f64| {
        if r.wall_s > 0.0 {
            v / r.wall_s * 100.0
        } else {
            0.0
        }
    };
    json!({
        "jobname": name,
        "groupid": 0,
        "error": 0,
        "eta": 0,
        "elapsed": r.wall_s.ceil() as u64,
        "job options": options(r),
        "read": read,
        "write": write,
        "trim": idle(),
        "sync": {"total_ios": r.flushes.calls, "lat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": r.flushes.calls}},
        "job_runtime": ms.round() as u64,
        "usr_cpu": pct(cpu.user_s),
        "sys_cpu": pct(cpu.sys_s),
        "ctx": cpu.voluntary_ctx_switches + cpu.involuntary_ctx_switches,
        "majf": cpu.major_faults,
        "minf": cpu.minor_faults,
        "latency_ns": ranges(&r.latency, 1.0, &NS_US_BOUNDS, false),
        "latency_us": ranges(&r.latency, 1e3, &NS_US_BOUNDS, false),
        "latency_ms": ranges(&r.latency, 1e6, &MS_BOUNDS, true),
        "iolab": {
            "method": s.method.name(),
            "latency_is": LATENCY_IS,
            "timed": r.timed,
            "syscalls_per_op": r.syscalls.method_per_op,
            "paced": r.paced,
            "access": r.access,
            "emulated": r.host.emulated,
        },
    })
}

/// fio's latency ranges: each key the top of a range, in the unit's ns (1, 1e3, 1e6 ns per unit).
const NS_US_BOUNDS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
const MS_BOUNDS: [u64; 11] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000];

/// The share (in %) of the run's ops in each of fio's latency ranges of one unit, from iolab's half-octave
/// buckets, each counted in the range holding its upper bound (so coarser than fio's own); `over`: the
/// last unit also has fio's ">=2000" range.
fn ranges(l: &Summary, unit_ns: f64, bounds: &[u64], over: bool) -> Value {
    let mut o = Map::new();
    let total = l.count.max(1) as f64;
    // The ns ranges end at 1,000 ns, where the us ranges begin (and the ms ranges at 1,000 us).
    let mut low = if unit_ns == 1.0 { 0.0 } else { unit_ns };
    for &b in bounds {
        let high = b as f64 * unit_ns;
        let n: u64 = l
            .buckets
            .iter()
            .filter(|(ub, _)| *ub > low && *ub <= high)
            .map(|(_, n)| n)
            .sum();
        o.insert(b.to_string(), json!(n as f64 / total * 100.0));
        low = high;
    }
    if over {
        let n: u64 = l
            .buckets
            .iter()
            .filter(|(ub, _)| *ub > low)
            .map(|(_, n)| n)
            .sum();
        o.insert(">=2000".into(), json!(n as f64 / total * 100.0));
    }
    Value::Object(o)
}

/// The job's options as fio names them (strings, as fio writes them).
fn options(r: &RunResult) -> Value {
    let s = &r.spec;
    let rw = match (s.op, s.pattern.name()) {
        (OpKind::Read, "seq") => "read",
        (OpKind::Read, _) => "randread",
        (OpKind::Write, "seq") => "write",
        (OpKind::Write, _) => "randwrite",
        (OpKind::Mixed, "seq") => "rw",
        (OpKind::Mixed, _) => "randrw",
    };
    let mut o = Map::new();
    let mut put = |k: &str, v: String| {
        o.insert(k.into(), Value::String(v));
    };
    put("rw", rw.into());
    put("bs", s.bs.to_string());
    put("numjobs", s.threads.to_string());
    put("iodepth", s.qd.to_string());
    put("direct", u8::from(s.direct).to_string());
    put("ioengine", s.method.name().into());
    if let Some(p) = s.read_pct {
        put("rwmixread", p.to_string());
    }
    if !s.distribution.is_uniform() {
        put("random_distribution", s.distribution.name());
    }
    Value::Object(o)
}

/// A direction that moved nothing (fio writes its sections with zeros).
fn idle() -> Value {
    dir(0, 0, &Summary::default(), 0.0)
}

/// One direction as fio's json+ names its figures (bw in KiB/s, runtime in ms); fio's bandwidth and IOPS
/// samples are not kept (zeros, the mean from the whole run).
#[derive(serde::Serialize)]
struct Dir {
    io_bytes: u64,
    io_kbytes: u64,
    bw_bytes: u64,
    bw: u64,
    iops: f64,
    runtime: u64,
    total_ios: u64,
    short_ios: u64,
    drop_ios: u64,
    slat_ns: Value,
    clat_ns: Value,
    lat_ns: Value,
    bw_min: u64,
    bw_max: u64,
    bw_agg: f64,
    bw_mean: f64,
    bw_dev: f64,
    bw_samples: u64,
    iops_min: u64,
    iops_max: u64,
    iops_mean: f64,
    iops_stddev: f64,
    iops_samples: u64,
}

/// One direction: bytes, bandwidth (bw in KiB/s as fio gives it), iops and latency over `wall_s`.
fn dir(ops: u64, bytes: u64, lat: &Summary, wall_s: f64) -> Value {
    let per_s = |v: f64| if wall_s > 0.0 { v / wall_s } else { 0.0 };
    let bw_bytes = per_s(bytes as f64);
    let iops = per_s(ops as f64);
    let d = Dir {
        io_bytes: bytes,
        io_kbytes: bytes / 1024,
        bw_bytes: bw_bytes.round() as u64,
        bw: (bw_bytes / 1024.0).round() as u64,
        iops,
        runtime: if ops > 0 {
            (wall_s * 1e3).round() as u64
        } else {
            0
        },
        total_ios: ops,
        short_ios: 0,
        drop_ios: 0,
        slat_ns: stat(&Summary::default()),
        clat_ns: clat(lat),
        lat_ns: stat(lat),
        bw_min: 0,
        bw_max: 0,
        bw_agg: if ops > 0 { 100.0 } else { 0.0 },
        bw_mean: bw_bytes / 1024.0,
        bw_dev: 0.0,
        bw_samples: 0,
        iops_min: 0,
        iops_max: 0,
        iops_mean: iops,
        iops_stddev: 0.0,
        iops_samples: 0,
    };
    serde_json::to_value(d).unwrap_or(Value::Null)
}

fn stat(l: &Summary) -> Value {
    json!({
        "min": l.min_ns.round() as u64,
        "max": l.max_ns.round() as u64,
        "mean": l.mean_ns,
        "stddev": l.stdev_ns,
        "N": l.count,
    })
}

/// Completion latency with fio's percentiles (from iolab's CDF, at the same points) and bins (only where
/// there were values: fio's tools index the first bin).
fn clat(l: &Summary) -> Value {
    let mut v = stat(l);
    if l.count == 0 {
        return v;
    }
    let mut pct = Map::new();
    for p in PERCENTILES {
        let at = l
            .cdf
            .iter()
            .find(|(q, _)| (q * 100.0 - p).abs() < 1e-9)
            .map_or(0, |(_, ns)| ns.round() as u64);
        pct.insert(format!("{p:.6}"), json!(at));
    }
    // Keys are whole ns: the smallest buckets may round to one key, and then share it.
    let mut by_ns = std::collections::BTreeMap::<u64, u64>::new();
    for (ns, n) in l.buckets.iter().filter(|(_, n)| *n > 0) {
        *by_ns.entry(ns.round() as u64).or_default() += n;
    }
    let bins: Map<String, Value> = by_ns
        .into_iter()
        .map(|(ns, n)| (ns.to_string(), json!(n)))
        .collect();
    v["percentile"] = Value::Object(pct);
    v["bins"] = Value::Object(bins);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_fios_keys_and_bins_sum_to_the_count() {
        let l = Summary {
            count: 10,
            cdf: PERCENTILES.iter().map(|p| (p / 100.0, *p * 10.0)).collect(),
            buckets: vec![(100.0, 4), (141.4, 6)],
            ..Default::default()
        };
        let c = clat(&l);
        assert_eq!(c["percentile"]["99.990000"], 1000);
        assert_eq!(c["percentile"]["1.000000"], 10);
        let sum: u64 = c["bins"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert_eq!(sum, 10);
        assert!(clat(&Summary::default()).get("bins").is_none());
    }
}

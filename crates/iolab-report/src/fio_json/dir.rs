//! One direction's section (`read`, `write`, `trim`) as fio's add_ddir_status_json writes it, and the
//! job's latency_ns/us/ms distributions.

use super::plat;
use super::samples::Stats;
use iolab_engine::measure::hist::Summary;
use serde_json::{json, Map, Value};

/// fio's default percentiles, and the quantiles of iolab's CDF that are the same points.
const PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// What one direction moved, over how long, and its samples.
pub struct Figures<'a> {
    pub ops: u64,
    pub bytes: u64,
    pub runtime_s: f64,
    pub latency: &'a Summary,
    pub iops: Stats,
    pub bw_kib: Stats,
    /// The run's bandwidth in this direction (all threads), bytes/s: fio's group aggregate, against
    /// which `bw_agg` gives a sample mean's share.
    pub agg_bytes_s: f64,
    /// Whether the run's span was long enough to time a rate over it (`units::too_short`): else fio's
    /// zeros for iops and bw (the job's `iolab.rate_is` says why).
    pub timed: bool,
}

/// One direction as fio's json+ names its figures (bw in KiB/s, runtime in ms, latency in ns).
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

/// A direction that moved nothing (fio writes its section with zeros).
pub fn idle() -> Value {
    section(&Figures {
        ops: 0,
        bytes: 0,
        runtime_s: 0.0,
        latency: &Summary::default(),
        iops: Stats::default(),
        bw_kib: Stats::default(),
        agg_bytes_s: 0.0,
        timed: true,
    })
}

/// Milliseconds as fio counts a runtime: whole, and at least 1 where anything ran.
pub fn runtime_ms(s: f64) -> u64 {
    ((s * 1e3).round() as u64).max(u64::from(s > 0.0))
}

/// One direction: bytes, bandwidth (bytes/s and KiB/s, whole as fio's), IOPS, runtime, latency and the
/// samples' figures.
pub fn section(f: &Figures) -> Value {
    let ran = f.ops > 0 && f.runtime_s > 0.0;
    let per_s = |v: f64| if ran && f.timed { v / f.runtime_s } else { 0.0 };
    let bw_bytes = per_s(f.bytes as f64).floor() as u64;
    // fio's bw_agg: the sample mean's share of the group's bandwidth, at most 100% (100 where that is
    // 1 KiB/s or less), 0 without samples.
    let agg_kib = f.agg_bytes_s / 1024.0;
    let bw_agg = match (f.bw_kib.samples, f.agg_bytes_s > 1024.0) {
        (0, _) => 0.0,
        (_, true) => (f.bw_kib.mean * 100.0 / agg_kib).min(100.0),
        (_, false) => 100.0,
    };
    let d = Dir {
        io_bytes: f.bytes,
        io_kbytes: f.bytes >> 10,
        bw_bytes,
        bw: bw_bytes / 1024,
        iops: per_s(f.ops as f64),
        runtime: if ran { runtime_ms(f.runtime_s) } else { 0 },
        total_ios: f.ops,
        short_ios: 0,
        drop_ios: 0,
        slat_ns: stat(&Summary::default()),
        clat_ns: clat(f.latency),
        lat_ns: stat(f.latency),
        bw_min: f.bw_kib.min,
        bw_max: f.bw_kib.max,
        bw_agg,
        bw_mean: f.bw_kib.mean,
        bw_dev: f.bw_kib.dev,
        bw_samples: f.bw_kib.samples,
        iops_min: f.iops.min,
        iops_max: f.iops.max,
        iops_mean: f.iops.mean,
        iops_stddev: f.iops.dev,
        iops_samples: f.iops.samples,
    };
    serde_json::to_value(d).unwrap_or(Value::Null)
}

/// min, max, mean, stddev and N of a latency, in ns.
pub fn stat(l: &Summary) -> Value {
    json!({
        "min": l.min_ns.round() as u64,
        "max": l.max_ns.round() as u64,
        "mean": l.mean_ns,
        "stddev": l.stdev_ns,
        "N": l.count,
    })
}

/// Completion latency with fio's percentiles (iolab's CDF at the same points) and fio's bins (only
/// where there were values, as fio: its tools read the first bin).
pub fn clat(l: &Summary) -> Value {
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
    let bins: Map<String, Value> = plat::bins(&plat::values(l).0)
        .into_iter()
        .map(|(i, n)| (plat::value_of(i).to_string(), json!(n)))
        .collect();
    v["percentile"] = Value::Object(pct);
    v["bins"] = Value::Object(bins);
    v
}

/// fio's latency ranges of one unit: each key is the top of a range (the next key's range starts there).
const UNIT_BOUNDS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
const MS_BOUNDS: [u64; 11] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000];

/// fio's latency_ns, latency_us and latency_ms: the share (in %) of the ops in each range. A latency
/// below 1,000 ns counts in the ns ranges, below 1,000 us (in whole us) in the us ranges, else in the
/// ms ranges (in whole ms; ">=2000" past the last); in a range when below its key and not below the
/// previous one.
pub fn ranges(l: &Summary) -> [Value; 3] {
    let mut ns = [0u64; 10];
    let mut us = [0u64; 10];
    let mut ms = [0u64; 12];
    let slot = |v: u64, bounds: &[u64]| bounds.iter().position(|&b| v < b).unwrap_or(bounds.len());
    let (values, _) = plat::values(l);
    let total: u64 = values.iter().map(|(_, n)| n).sum();
    for (v, n) in values {
        if v < 1000 {
            ns[slot(v, &UNIT_BOUNDS)] += n;
        } else if v < 1_000_000 {
            us[slot(v / 1000, &UNIT_BOUNDS)] += n;
        } else {
            ms[slot(v / 1_000_000, &MS_BOUNDS)] += n;
        }
    }
    let pct = |n: u64| {
        if total > 0 {
            n as f64 / total as f64 * 100.0
        } else {
            0.0
        }
    };
    let object = |counts: &[u64], keys: &[String]| -> Value {
        Value::Object(
            keys.iter()
                .zip(counts)
                .map(|(k, &n)| (k.clone(), json!(pct(n))))
                .collect(),
        )
    };
    let unit_keys: Vec<String> = UNIT_BOUNDS.iter().map(u64::to_string).collect();
    let mut ms_keys: Vec<String> = MS_BOUNDS.iter().map(u64::to_string).collect();
    ms_keys.push(">=2000".into());
    [
        object(&ns, &unit_keys),
        object(&us, &unit_keys),
        object(&ms, &ms_keys),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_hist(pairs: &[(f64, u64)]) -> Summary {
        Summary {
            count: pairs.iter().map(|p| p.1).sum(),
            cdf: PERCENTILES.iter().map(|p| (p / 100.0, *p * 10.0)).collect(),
            hist_ns: pairs.to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn percentiles_are_fios_keys_and_bins_are_fios_buckets_summing_to_the_count() {
        let l = with_hist(&[(100.0, 4), (141.4, 6), (1000.5, 2), (1007.9, 3)]);
        let c = clat(&l);
        assert_eq!(c["percentile"]["99.990000"], 1000);
        assert_eq!(c["percentile"]["1.000000"], 10);
        let bins = c["bins"].as_object().unwrap();
        let keys: Vec<&str> = bins.keys().map(String::as_str).collect();
        // 100 is its own bucket; 141 is in 140..=141 (key 141); 1000 and 1007 in 1000..=1007 (key 1004).
        assert_eq!(keys, ["100", "141", "1004"]);
        assert_eq!(bins["1004"], 5);
        let sum: u64 = bins.values().map(|v| v.as_u64().unwrap()).sum();
        assert_eq!(sum, 15);
        assert!(clat(&Summary::default()).get("bins").is_none());
    }

    #[test]
    fn latency_ranges_are_fios_half_open_ones() {
        // 1 ns in "2"; 2 in "4"; 999 in "1000" (ns); 1,000 ns = 1 us in "2" (us); 999,999 ns = 999 us in
        // "1000" (us); 2.5 s in ">=2000" (ms).
        let l = with_hist(&[
            (1.0, 1),
            (2.0, 1),
            (999.0, 1),
            (1000.0, 1),
            (999_999.0, 1),
            (2.5e9, 3),
        ]);
        let [ns, us, ms] = ranges(&l);
        let share = 100.0 / 8.0;
        assert_eq!(ns["2"], share);
        assert_eq!(ns["4"], share);
        assert_eq!(ns["1000"], share);
        assert_eq!(us["2"], share);
        assert_eq!(us["1000"], share);
        assert_eq!(ms[">=2000"], 3.0 * share);
        assert_eq!(ms["2000"], 0.0);
        assert_eq!(ms.as_object().unwrap().len(), 12);
    }

    #[test]
    fn without_samples_the_figures_are_fios_zeros() {
        let l = with_hist(&[(100.0, 10)]);
        let d = section(&Figures {
            ops: 10,
            bytes: 40960,
            runtime_s: 0.0104,
            latency: &l,
            iops: Stats::default(),
            bw_kib: Stats::default(),
            agg_bytes_s: 40960.0 / 0.0104,
            timed: true,
        });
        assert_eq!(d["runtime"], 10);
        assert_eq!(
            (d["iops_samples"].as_u64(), d["bw_agg"].as_f64()),
            (Some(0), Some(0.0))
        );
        assert_eq!(d["iops_mean"], 0.0);
        assert_eq!(d["bw"], 40960 * 10_000 / 104 / 1024);
        let i = idle();
        assert_eq!(
            (i["runtime"].as_u64(), i["iops"].as_f64()),
            (Some(0), Some(0.0))
        );
    }
}

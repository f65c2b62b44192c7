//! A fleet's results (`iolab fleet`): each host's record files under `DIR/HOST/`, read back per host with
//! what its run came to (`fleet-host.json`, written by the Ansible role), and merged per workload: a row
//! per host and the fleet's percentiles from the hosts' histograms merged into one, never averaged.

use crate::compare::{survey_runs_as_records, workload_key, workload_label};
use crate::series::read_records;
use iolab_engine::error::{Error, Result};
use iolab_engine::measure::hist::{merge_ns, summarize, Summary};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file the role writes beside a host's records: its exit status, output and what it ran on.
pub const HOST_FILE: &str = "fleet-host.json";

/// What one host's run came to.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub enum Outcome {
    /// iolab exited 0 and its records came back.
    Ok,
    /// iolab exited with this status (or was stopped at the timeout): the last line it printed.
    Failed {
        rc: i64,
        timed_out: bool,
        why: String,
    },
    /// The host's run never reached iolab (unreachable, no binary for its architecture, a task failed):
    /// Ansible's reason.
    NotRun { why: String },
}

/// One host of a fleet run.
#[derive(Debug, Clone, Serialize)]
pub struct Host {
    pub name: String,
    pub architecture: String,
    pub kernel: String,
    pub outcome: Outcome,
    /// The record files that came back, relative to the host's directory.
    pub files: Vec<PathBuf>,
    /// Their runs, as `{"point", "result"}` records.
    #[serde(skip)]
    pub records: Vec<Value>,
}

/// Reads `dir/HOST/` for every host directory in `dir`; `not_run` names the hosts Ansible reported as
/// never having run iolab (unreachable or failed before it), with the reason, where no directory says
/// more.
pub fn read_hosts(dir: &Path, not_run: &BTreeMap<String, String>) -> Result<Vec<Host>> {
    let mut hosts = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| {
        Error::Runtime(format!(
            "cannot read the fleet's results {}: {e}",
            dir.display()
        ))
    })?;
    for e in entries.flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            hosts.push(read_host(&e.path(), not_run)?);
        }
    }
    for (name, why) in not_run {
        if !hosts.iter().any(|h| &h.name == name) {
            hosts.push(Host {
                name: name.clone(),
                architecture: String::new(),
                kernel: String::new(),
                outcome: Outcome::NotRun { why: why.clone() },
                files: Vec::new(),
                records: Vec::new(),
            });
        }
    }
    hosts.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(hosts)
}

fn read_host(dir: &Path, not_run: &BTreeMap<String, String>) -> Result<Host> {
    let name = dir
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let info: Value = std::fs::read_to_string(dir.join(HOST_FILE))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    let s = |k: &str| {
        info.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let outcome = match info.get("rc").and_then(Value::as_i64) {
        Some(0) => Outcome::Ok,
        Some(rc) => Outcome::Failed {
            rc,
            timed_out: info
                .get("timed_out")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            why: s("stderr").lines().last().unwrap_or_default().to_string(),
        },
        None => Outcome::NotRun {
            why: not_run
                .get(&name)
                .cloned()
                .unwrap_or_else(|| "iolab did not run".into()),
        },
    };
    let mut files = Vec::new();
    let mut records = Vec::new();
    for rel in info
        .get("records")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let rel = PathBuf::from(rel.as_str().unwrap_or_default());
        let path = dir.join(&rel);
        // Files other than results (Markdown, CSV, HTML) come back too; only results are merged.
        if matches!(
            rel.extension().and_then(|e| e.to_str()),
            Some("json" | "jsonl")
        ) {
            if let Ok((recs, _)) = read_records(&path, "fleet") {
                records.extend(survey_runs_as_records(recs));
            }
        }
        files.push(rel);
    }
    Ok(Host {
        name,
        architecture: s("architecture"),
        kernel: s("kernel"),
        outcome,
        files,
        records,
    })
}

/// Every host's records, each result's spec naming its host (`spec.host`), so that `compare --across
/// host` matches the runs that differ only in the host.
pub fn records_by_host(hosts: &[Host]) -> Vec<Value> {
    let mut out = Vec::new();
    for h in hosts {
        for rec in &h.records {
            let mut rec = rec.clone();
            if let Some(spec) = rec
                .pointer_mut("/result/spec")
                .and_then(Value::as_object_mut)
            {
                spec.insert("host".into(), Value::String(h.name.clone()));
                out.push(rec);
            }
        }
    }
    out
}

/// The records of a fleet's results directory (`DIR/HOST/`), for `compare --across host`: refused when
/// no host's records are there.
pub fn read_dir_records(dir: &Path) -> Result<Vec<Value>> {
    let recs = records_by_host(&read_hosts(dir, &BTreeMap::new())?);
    if recs.is_empty() {
        return Err(Error::Runtime(format!(
            "{}: no host's results (a fleet's results directory holds HOST/{HOST_FILE} and the host's record files)",
            dir.display()
        )));
    }
    Ok(recs)
}

/// One host's figures for a workload.
#[derive(Debug, Clone, Serialize)]
pub struct HostRow {
    pub host: String,
    pub iops: f64,
    pub latency: Summary,
}

/// A workload the hosts ran: a row per host, and the fleet's distribution from their merged histograms.
#[derive(Debug, Clone, Serialize)]
pub struct Merged {
    pub workload: String,
    pub hosts: Vec<HostRow>,
    /// The hosts' latency histograms merged into one (`hist_ns` of each host's result): its percentiles
    /// are the fleet's, not an average of the hosts'. Absent where a host's result carries no histogram.
    pub fleet: Option<Summary>,
    /// The highest host p99 over the lowest.
    pub p99_spread: f64,
}

/// Every workload at least one host ran, in the order first seen, with a row per host that ran it (its
/// first run of it).
pub fn merge(hosts: &[Host]) -> Vec<Merged> {
    let mut order: Vec<String> = Vec::new();
    let mut by: BTreeMap<String, (String, Vec<(String, Value)>)> = BTreeMap::new();
    for h in hosts {
        for rec in &h.records {
            let Some(r) = rec.get("result").filter(|r| r.is_object()) else {
                continue;
            };
            let key = workload_key(r);
            let e = by.entry(key.clone()).or_insert_with(|| {
                order.push(key.clone());
                (workload_label(r), Vec::new())
            });
            if !e.1.iter().any(|(name, _)| name == &h.name) {
                e.1.push((h.name.clone(), r.clone()));
            }
        }
    }
    order
        .iter()
        .filter_map(|k| by.remove(k))
        .map(|(label, runs)| merged_workload(label, &runs))
        .collect()
}

fn merged_workload(workload: String, runs: &[(String, Value)]) -> Merged {
    let hosts: Vec<HostRow> = runs
        .iter()
        .map(|(host, r)| HostRow {
            host: host.clone(),
            iops: r.get("iops").and_then(Value::as_f64).unwrap_or(0.0),
            latency: r
                .get("latency")
                .and_then(|l| serde_json::from_value(l.clone()).ok())
                .unwrap_or_default(),
        })
        .collect();
    let complete = hosts.iter().all(|h| !h.latency.hist_ns.is_empty());
    let fleet = complete.then(|| {
        let h = merge_ns(hosts.iter().map(|h| h.latency.hist_ns.as_slice()));
        let mut s = summarize(&h, 0.1);
        s.hist_ns.clear();
        s
    });
    let p99s = hosts.iter().map(|h| h.latency.p99_ns).filter(|v| *v > 0.0);
    let (lo, hi) = p99s.fold((f64::INFINITY, 0.0f64), |(l, h), v| (l.min(v), h.max(v)));
    Merged {
        workload,
        hosts,
        fleet,
        p99_spread: if lo.is_finite() && lo > 0.0 {
            hi / lo
        } else {
            1.0
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_engine::measure::hist::new_hist;

    fn result(values: &[u64], ns_per_tick: f64) -> Value {
        let mut h = new_hist();
        for &v in values {
            h.record(v).unwrap();
        }
        serde_json::json!({
            "spec": {"method": "psync", "bs": 4096},
            "target": {"kind": "null"},
            "iops": 1000.0,
            "latency": summarize(&h, ns_per_tick),
        })
    }

    #[test]
    fn the_fleet_p99_is_the_merged_histograms_not_the_hosts_average() {
        // Host a: 99 fast values and one slow; host b: all slow. Averaged p99s would be (a's p99 + b's)/2.
        let a: Vec<u64> = (0..990)
            .map(|i| 1000 + i % 10)
            .chain([50_000; 10])
            .collect();
        let b: Vec<u64> = vec![20_000; 1000];
        let host = |name: &str, r: Value| Host {
            name: name.into(),
            architecture: "x86_64".into(),
            kernel: "6.1".into(),
            outcome: Outcome::Ok,
            files: Vec::new(),
            records: vec![serde_json::json!({"point": {}, "result": r})],
        };
        // Host b's clock ticks twice as fast: its values are half as many ns.
        let m = merge(&[host("a", result(&a, 1.0)), host("b", result(&b, 0.5))]);
        assert_eq!(m.len(), 1);
        let fleet = m[0].fleet.as_ref().expect("both carry histograms");
        // Merged in ns: 990 near 1 µs, 1000 at 10 µs, 10 at 50 µs; the 99th percentile of 2000 is 10 µs.
        assert_eq!(fleet.count, 2000);
        assert!(
            (fleet.p99_ns / 10_000.0 - 1.0).abs() < 0.002,
            "{}",
            fleet.p99_ns
        );
        assert!(
            (fleet.p50_ns / 10_000.0 - 1.0).abs() < 0.002,
            "{}",
            fleet.p50_ns
        );
        let avg = (m[0].hosts[0].latency.p99_ns + m[0].hosts[1].latency.p99_ns) / 2.0;
        assert!(
            (avg - fleet.p99_ns).abs() > 1000.0,
            "the average {avg} is not the fleet's"
        );
        // The spread is b's p99 (10 µs) over a's (about 1 µs).
        let (pa, pb) = (m[0].hosts[0].latency.p99_ns, m[0].hosts[1].latency.p99_ns);
        assert!(
            (pa / 1009.0 - 1.0).abs() < 0.002 && (pb / 10_000.0 - 1.0).abs() < 0.002,
            "{pa} {pb}"
        );
        assert!(
            (m[0].p99_spread - pb / pa).abs() < 1e-9,
            "{}",
            m[0].p99_spread
        );
    }

    #[test]
    fn a_host_without_a_histogram_gives_no_fleet_percentiles() {
        let mut r = result(&[1000, 2000], 1.0);
        r["latency"]["hist_ns"] = Value::Array(Vec::new());
        let host = Host {
            name: "old".into(),
            architecture: String::new(),
            kernel: String::new(),
            outcome: Outcome::Ok,
            files: Vec::new(),
            records: vec![serde_json::json!({"point": {}, "result": r})],
        };
        assert!(merge(&[host])[0].fleet.is_none());
    }
}

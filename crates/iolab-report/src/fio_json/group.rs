//! fio's `group_reporting` over the jobs of one reporting group: one entry for them all, as fio's
//! sum_thread_stats adds them up (stat.c). Bytes, ops, fsyncs, context switches and faults are summed;
//! latency is the members' histograms merged (its percentiles and bins read from the merged one, never
//! averaged); the iops and bw samples are pooled (min, max, mean and deviation of all the members'
//! samples together); job_runtime is the members' added up, and CPU shares are over it.
//!
//! One figure differs by design: fio runs a group's jobs at once and gives each direction the longest
//! member's runtime; iolab ran them one after another, so a direction's runtime is the members' added
//! up, and iops and bw are over that (what the group moved over the time it took here). The entry's
//! `iolab` object says so and keeps each member's own description.

use super::dir::Figures;
use super::entry::{about, assemble, figures, flushes, options, section, Fields};
use super::parts::{self, CpuPct, Part};
use super::reporting::FioRun;
use super::samples::{self, Stats};
use iolab_engine::measure::hist::{merge_ns, summarize_keeping, Summary};
use serde_json::{json, Value};

/// One job of the group: its run as one part (its clones together), its directions and CPU.
struct Member<'r> {
    run: &'r FioRun<'r>,
    part: Part,
    dirs: [Figures<'r>; 2],
    cpu: CpuPct,
    windows: usize,
}

/// The entry of `units`, the jobs (each a run's part) of one reporting group in the order they ran (two
/// or more).
pub(super) fn entry(units: &[(&FioRun, Part)]) -> Value {
    let none = Summary::default();
    let members: Vec<Member> = units
        .iter()
        .map(|(run, part)| member(run, part.clone(), &none))
        .collect();
    let lat = |d: usize| merged_latency(members.iter().map(|m| m.dirs[d].latency));
    let (read_lat, write_lat) = (lat(0), lat(1));
    let read = merged(members.iter().map(|m| &m.dirs[0]), &read_lat);
    let write = merged(members.iter().map(|m| &m.dirs[1]), &write_lat);
    let all = merged_latency(members.iter().map(|m| &m.run.result.latency));
    let job_runtime_s: f64 = members.iter().map(|m| m.part.job_runtime_s).sum();
    let (usr_cpu, sys_cpu) = cpu(&members, job_runtime_s);
    let sum = |f: &dyn Fn(&Member) -> u64| members.iter().map(f).sum::<u64>();
    let (first, last) = (units[0].0, units[units.len() - 1].0);
    assemble(Fields {
        name: &first.name,
        groupid: first.reporting.groupid,
        wall_s: members.iter().map(|m| m.run.result.wall_s).sum(),
        // fio keeps the last job's option list for a group's entry.
        options: options(last.result, last.reporting.group_reporting),
        read: section(&read),
        write: section(&write),
        flushes: sum(&|m| flushes(m.run.result, &m.part)),
        job_runtime_s,
        usr_cpu,
        sys_cpu,
        ctx: sum(&|m| m.part.ctx),
        majf: sum(&|m| m.part.majf),
        minf: sum(&|m| m.part.minf),
        latency: &all,
        iolab: said(&members),
    })
}

fn member<'r>(run: &'r FioRun<'r>, part: Part, none: &'r Summary) -> Member<'r> {
    let r = run.result;
    let windows = samples::windows(r);
    let dirs = figures(r, &part, &windows, none);
    let cpu = parts::cpu_pct(r, &part);
    Member {
        run,
        part,
        dirs,
        cpu,
        windows: windows.len(),
    }
}

/// The `iolab` object: what the entry is, and each member's own.
fn said(members: &[Member]) -> Value {
    let names: Vec<&str> = members.iter().map(|m| m.run.name.as_str()).collect();
    let each: Vec<Value> = members
        .iter()
        .map(|m| {
            let mut o = about(m.run.result, &m.part, m.windows, &m.cpu);
            o["jobname"] = json!(m.run.name);
            o
        })
        .collect();
    json!({
        "entry_is": format!(
            "the {} jobs of reporting group {} ({}) as one entry, as fio's group_reporting: bytes, ops, \
             fsyncs, ctx and faults summed, latency from their histograms merged, iops and bw samples \
             pooled, job_runtime summed and CPU shares over it",
            members.len(),
            members[0].run.reporting.groupid,
            names.join(", ")
        ),
        "runtime_is": "iolab ran the group's jobs one after another (fio runs them at once and gives each \
             direction its longest job's runtime): each direction's runtime is the jobs' added up, and \
             iops and bw are over it",
        "jobs": each,
    })
}

/// usr_cpu and sys_cpu over the group's job_runtime: each member's share times its job_runtime, added
/// up (a member whose CPU was not measured adds nothing: its zeros, said in its own object).
fn cpu(members: &[Member], job_runtime_s: f64) -> (f64, f64) {
    if job_runtime_s <= 0.0 {
        return (0.0, 0.0);
    }
    let weighted = |f: &dyn Fn(&CpuPct) -> f64| {
        members
            .iter()
            .map(|m| f(&m.cpu) * m.part.job_runtime_s)
            .sum::<f64>()
            / job_runtime_s
    };
    (weighted(&|c| c.usr), weighted(&|c| c.sys))
}

/// One latency of the members' `latencies`, from their histograms (the whole one where kept, else the
/// half-octave buckets).
fn merged_latency<'a>(latencies: impl Iterator<Item = &'a Summary>) -> Summary {
    let parts: Vec<&[(f64, u64)]> = latencies
        .filter(|l| l.count > 0)
        .map(|l| {
            if l.hist_ns.is_empty() {
                l.buckets.as_slice()
            } else {
                l.hist_ns.as_slice()
            }
        })
        .collect();
    summarize_keeping(&merge_ns(parts), 0.1, true)
}

/// One direction of the members, with the merged `latency`: ops and bytes summed over the runtimes
/// added up; the samples pooled.
fn merged<'a, 'b: 'a>(
    figs: impl Iterator<Item = &'a Figures<'b>>,
    latency: &'a Summary,
) -> Figures<'a> {
    let ran: Vec<&Figures> = figs.filter(|f| f.ops > 0).collect();
    let runtime_s: f64 = ran.iter().map(|f| f.runtime_s).sum();
    let bytes: u64 = ran.iter().map(|f| f.bytes).sum();
    Figures {
        ops: ran.iter().map(|f| f.ops).sum(),
        bytes,
        runtime_s,
        latency,
        iops: pooled(ran.iter().map(|f| f.iops)),
        bw_kib: pooled(ran.iter().map(|f| f.bw_kib)),
        agg_bytes_s: if runtime_s > 0.0 {
            bytes as f64 / runtime_s
        } else {
            0.0
        },
        timed: ran.iter().all(|f| f.timed),
    }
}

/// The figures of several series of samples together, from each one's (fio's sum_stat): the count
/// summed, min and max over all, the mean weighted by counts, the sample deviation (n - 1) of the whole.
pub(super) fn pooled(series: impl Iterator<Item = Stats>) -> Stats {
    let with: Vec<Stats> = series.filter(|s| s.samples > 0).collect();
    let n: u64 = with.iter().map(|s| s.samples).sum();
    if n == 0 {
        return Stats::default();
    }
    let mean = with.iter().map(|s| s.mean * s.samples as f64).sum::<f64>() / n as f64;
    let squares: f64 = with
        .iter()
        .map(|s| {
            let k = s.samples as f64;
            (k - 1.0) * s.dev * s.dev + k * (s.mean - mean).powi(2)
        })
        .sum();
    Stats {
        min: with.iter().map(|s| s.min).min().unwrap_or(0),
        max: with.iter().map(|s| s.max).max().unwrap_or(0),
        mean,
        dev: if n > 1 {
            (squares / (n - 1) as f64).sqrt()
        } else {
            0.0
        },
        samples: n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pooled figures equal those of all the samples taken together.
    #[test]
    fn pooled_samples_are_the_samples_together() {
        let (a, b) = ([100u64, 200, 300], [50u64, 400]);
        let whole = samples::stats(&[&a[..], &b[..]].concat());
        let p = pooled([samples::stats(&a), samples::stats(&b), Stats::default()].into_iter());
        assert_eq!(
            (p.min, p.max, p.samples),
            (whole.min, whole.max, whole.samples)
        );
        assert!((p.mean - whole.mean).abs() < 1e-9, "{p:?} {whole:?}");
        assert!((p.dev - whole.dev).abs() < 1e-9, "{p:?} {whole:?}");
        assert_eq!(pooled(std::iter::empty()), Stats::default());
    }

    /// The merged latency counts every member's values, its percentiles read from them all.
    #[test]
    fn latencies_merge_from_their_histograms() {
        let one = |ns: f64, n: u64| Summary {
            count: n,
            hist_ns: vec![(ns, n)],
            ..Default::default()
        };
        let m = merged_latency([one(1000.0, 30), one(9000.0, 10), Summary::default()].iter());
        assert_eq!(m.count, 40);
        assert!(
            (m.min_ns - 1000.0).abs() < 2.0 && (m.max_ns - 9000.0).abs() < 10.0,
            "{m:?}"
        );
        assert!(
            (m.p50_ns - 1000.0).abs() < 2.0 && (m.p90_ns - 9000.0).abs() < 10.0,
            "{m:?}"
        );
        assert!(!m.hist_ns.is_empty());
    }
}

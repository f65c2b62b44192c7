//! One entry of fio's `jobs` from a run (or a part of it: a clone, or its clones together), and the
//! `iolab` object beside fio's figures saying where they differ from fio's meaning.

use super::parts::{self, Part, Who};
use super::reporting::FioRun;
use super::{dir, plat, samples};
use iolab_engine::measure::hist::Summary;
use iolab_engine::method::kind::MethodKind;
use iolab_engine::result::RunResult;
use iolab_engine::skew::Distribution;
use iolab_engine::spec::OpKind;
use serde_json::{json, Map, Value};

/// What the latency figures are, for the reader of the `iolab` object.
const LATENCY_IS: &str =
    "iolab's per-op latency (see `timed`) in lat_ns and clat_ns alike; slat is not \
     measured apart (zeros); latency_ns/us/ms from the same histogram as the bins; fio's iodepth_* \
     distributions are not kept";

/// What a clone's latency is: the run's, all threads merged.
const CLONE_LATENCY_IS: &str = "the run's per-op latency, all its threads merged (iolab keeps one \
     histogram per run, not one per thread): every clone of the run carries the same clat_ns, lat_ns, \
     bins and latency_ns/us/ms, whose N counts the run's ops (of the direction), not this clone's \
     total_ios; slat is not measured apart (zeros); fio's iodepth_* distributions are not kept";

/// A direction's figures for part `p`: its ops and bytes, the latency of the direction, its samples
/// (the windows' rates times the part's share of the run and the direction's share of the part).
fn direction<'r>(
    r: &'r RunResult,
    p: &Part,
    read: bool,
    windows: &[samples::Window],
) -> dir::Figures<'r> {
    let (moved, latency) = match (&r.mixed, read) {
        (Some(m), true) => (p.read, &m.reads.latency),
        (Some(m), false) => (p.write, &m.writes.latency),
        (None, true) => (p.read, &r.latency),
        (None, false) => (p.write, &r.latency),
    };
    let all = p.read.ops + p.write.ops;
    let all_bytes = p.read.bytes + p.write.bytes;
    let of = |a: u64, b: u64| if b > 0 { a as f64 / b as f64 } else { 0.0 };
    let (iops, bw_kib) = samples::of_part(
        windows,
        p.ops_share * of(moved.ops, all),
        p.bytes_share * of(moved.bytes, all_bytes),
    );
    let (run_read, run_write) = match &r.mixed {
        Some(m) => (m.reads.bytes, m.writes.bytes),
        None if r.spec.op == OpKind::Read => (r.bytes, 0),
        None => (0, r.bytes),
    };
    let run_bytes = if read { run_read } else { run_write };
    dir::Figures {
        ops: moved.ops,
        bytes: moved.bytes,
        runtime_s: p.runtime_s,
        latency,
        iops,
        bw_kib,
        agg_bytes_s: if r.wall_s > 0.0 {
            run_bytes as f64 / r.wall_s
        } else {
            0.0
        },
        timed: rate_withheld(r, p.runtime_s).is_none(),
    }
}

/// A part's reads and writes as fio counts them (a verify read-back among the reads).
pub(super) fn figures<'r>(
    r: &'r RunResult,
    p: &Part,
    windows: &[samples::Window],
    none: &'r Summary,
) -> [dir::Figures<'r>; 2] {
    let read = direction(r, p, true, windows);
    let write = direction(r, p, false, windows);
    [verify_reads(r, p, &read, none).unwrap_or(read), write]
}

/// A direction's section: fio's zeros where it moved nothing.
pub(super) fn section(f: &dir::Figures) -> Value {
    if f.ops > 0 {
        dir::section(f)
    } else {
        dir::idle()
    }
}

/// The figures of one entry of `jobs`, as fio's json+ orders them.
pub(super) struct Fields<'a> {
    pub name: &'a str,
    pub groupid: u32,
    /// The wall time it took, for fio's `elapsed` (whole seconds).
    pub wall_s: f64,
    pub options: Value,
    pub read: Value,
    pub write: Value,
    /// fsyncs, for fio's `sync` section (iolab does not time them apart).
    pub flushes: u64,
    pub job_runtime_s: f64,
    pub usr_cpu: f64,
    pub sys_cpu: f64,
    pub ctx: u64,
    pub majf: u64,
    pub minf: u64,
    /// The latency over both directions, for latency_ns/us/ms.
    pub latency: &'a Summary,
    pub iolab: Value,
}

/// The entry of `f`.
pub(super) fn assemble(f: Fields) -> Value {
    let [lat_ns, lat_us, lat_ms] = dir::ranges(f.latency);
    let n = f.flushes;
    json!({
        "jobname": f.name,
        "groupid": f.groupid,
        "error": 0,
        "eta": 0,
        "elapsed": dir::runtime_ms(f.wall_s).div_ceil(1000),
        "job options": f.options,
        "read": f.read,
        "write": f.write,
        "trim": dir::idle(),
        "sync": {"total_ios": n, "lat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": n}},
        "job_runtime": dir::runtime_ms(f.job_runtime_s),
        "usr_cpu": f.usr_cpu,
        "sys_cpu": f.sys_cpu,
        "ctx": f.ctx,
        "majf": f.majf,
        "minf": f.minf,
        "latency_ns": lat_ns,
        "latency_us": lat_us,
        "latency_ms": lat_ms,
        "iolab": f.iolab,
    })
}

/// The fsyncs of part `p`.
pub(super) fn flushes(r: &RunResult, p: &Part) -> u64 {
    match p.who {
        Who::Clone { .. } => (r.flushes.calls as f64 * p.ops_share).round() as u64,
        _ => r.flushes.calls,
    }
}

pub(super) fn entry(run: &FioRun, p: &Part, windows: &[samples::Window]) -> Value {
    let r = run.result;
    let none = Summary::default();
    let [read, write] = figures(r, p, windows, &none);
    let cpu = parts::cpu_pct(r, p);
    assemble(Fields {
        name: &run.name,
        groupid: run.reporting.groupid,
        wall_s: r.wall_s,
        options: options(r, run.reporting.group_reporting),
        read: section(&read),
        write: section(&write),
        flushes: flushes(r, p),
        job_runtime_s: p.job_runtime_s,
        usr_cpu: cpu.usr,
        sys_cpu: cpu.sys,
        ctx: p.ctx,
        majf: p.majf,
        minf: p.minf,
        latency: &r.latency,
        iolab: about(r, p, windows.len(), &cpu),
    })
}

/// A verified job's read section as fio counts its verify reads, in the job's reads: a write job's is
/// the blocks and bytes read back (the part's share) over the read-back's own time, without per-read
/// latency (iolab reads back in 1 MiB chunks after the timed span); a mixed job's adds them to its own
/// `reads`, over the run's span and the read-back's time, with those reads' latency and samples.
fn verify_reads<'r>(
    r: &RunResult,
    p: &Part,
    reads: &dir::Figures<'r>,
    none: &'r Summary,
) -> Option<dir::Figures<'r>> {
    let v = r.verify.as_ref().filter(|_| r.spec.op != OpKind::Read)?;
    let secs = v.read_back_s.filter(|&s| s > 0.0 && v.blocks_checked > 0)?;
    let ops = (v.blocks_checked as f64 * p.ops_share).round() as u64;
    let bytes = (v.bytes_checked as f64 * p.bytes_share).round() as u64;
    if r.spec.op == OpKind::Mixed {
        return Some(dir::Figures {
            ops: reads.ops + ops,
            bytes: reads.bytes + bytes,
            runtime_s: reads.runtime_s + secs,
            latency: reads.latency,
            iops: reads.iops,
            bw_kib: reads.bw_kib,
            // The samples (and so bw_mean) are the timed reads': their aggregate stays the timed span's.
            agg_bytes_s: reads.agg_bytes_s,
            timed: reads.timed,
        });
    }
    Some(dir::Figures {
        ops,
        bytes,
        runtime_s: secs,
        latency: none,
        iops: Default::default(),
        bw_kib: Default::default(),
        agg_bytes_s: v.bytes_checked as f64 / secs,
        timed: true,
    })
}

/// What the read section of a verified write job holds.
const VERIFY_READS_ARE: &str = "the --verify read-back, as fio counts its verify reads in the job's \
     reads: the blocks and bytes read back over the read-back's own time (after the timed writes, in no \
     other figure); no per-read latency (iolab reads back 1 MiB at a time)";

/// What the read section of a verified mixed job holds.
const MIXED_VERIFY_READS_ARE: &str = "the job's reads and the --verify read-back of its writes, as fio \
     counts its verify reads in the job's reads: ops and bytes of both, over the run's span and the \
     read-back's own time (after the timed span); latency, iops and bw samples, and bw_agg, are the job's \
     own reads' (iolab reads back 1 MiB at a time)";

/// The `iolab` object: what the entry is and where its figures differ from fio's meaning.
pub(super) fn about(r: &RunResult, p: &Part, windows: usize, cpu: &parts::CpuPct) -> Value {
    let s = &r.spec;
    let clone = matches!(p.who, Who::Clone { .. });
    let (_, bins) = plat::values(&r.latency);
    let mut o = Map::new();
    o.insert("method".into(), json!(s.method.name()));
    o.insert("ioengine_is".into(), json!(engine_said(s.method)));
    o.insert("entry_is".into(), json!(p.who.said()));
    if let Who::Clone { thread, .. } = p.who {
        o.insert("thread".into(), json!(thread));
    }
    let latency = if clone { CLONE_LATENCY_IS } else { LATENCY_IS };
    o.insert("latency_is".into(), json!(latency));
    o.insert("bins_are".into(), json!(bins.said()));
    o.insert("samples_are".into(), json!(samples_said(r, windows, clone)));
    o.insert("cpu_is".into(), json!(cpu_said(clone, cpu)));
    if let Some(why) = rate_withheld(r, p.runtime_s) {
        o.insert(
            "rate_is".into(),
            json!(format!("not measured, fio's zeros for iops and bw: {why}")),
        );
    }
    if let Some((usr, sys)) = cpu.before {
        o.insert(
            "cpu_before_clamp".into(),
            json!({"usr_cpu": usr, "sys_cpu": sys}),
        );
    }
    if clone && r.mixed.is_some() {
        o.insert(
            "directions_are".into(),
            json!(
                "iolab counts reads and writes for the run: this clone's are its ops and bytes in the \
                 run's proportion"
            ),
        );
    }
    let read_back = |v: &iolab_engine::result::VerifyFigures| {
        v.read_back_s.is_some_and(|s| s > 0.0) && v.blocks_checked > 0
    };
    if r.verify.as_ref().is_some_and(read_back) {
        let said = match r.spec.op {
            OpKind::Write => Some(VERIFY_READS_ARE),
            OpKind::Mixed => Some(MIXED_VERIFY_READS_ARE),
            OpKind::Read => None,
        };
        if let Some(said) = said {
            o.insert("verify_reads_are".into(), json!(said));
        }
    }
    o.insert("timed".into(), json!(r.timed));
    o.insert("syscalls_per_op".into(), json!(r.syscalls.method_per_op));
    o.insert("paced".into(), json!(r.paced));
    o.insert("access".into(), json!(r.access));
    o.insert("emulated".into(), json!(r.host.emulated));
    Value::Object(o)
}

/// What the bw_* and iops_* figures are.
fn samples_said(r: &RunResult, windows: usize, clone: bool) -> String {
    let ms = r.spec.log_interval().0;
    let base = format!(
        "{windows} samples: iolab's intervals of {ms} ms (--log-interval) that had IO and were at least \
         half that long, each one's rate (fio samples every 500 ms; with no sample it writes zeros and 0 \
         samples, and so does this)"
    );
    if clone {
        base + "; the intervals are the run's, all threads together: a clone's sample is each interval's \
                rate times the clone's share of the run's ops (IOPS) and bytes (bw)"
    } else if r.mixed.is_some() {
        base + "; a direction's sample is each interval's rate times its share of the ops (bytes for bw)"
    } else {
        base
    }
}

/// Why a part's span (the run's, or a clone's own runtime) holds no rate (`units::too_short`), where it
/// does not.
fn rate_withheld(r: &RunResult, span_s: f64) -> Option<String> {
    iolab_engine::units::too_short(span_s, r.clock.overhead_ns, r.clock.ns_per_tick)
}

/// What usr_cpu and sys_cpu are.
fn cpu_said(clone: bool, cpu: &parts::CpuPct) -> String {
    if let Some(why) = &cpu.unmeasured {
        return format!("not measured, fio's zeros: {why}");
    }
    let clamped = cpu.before.is_some();
    let mut t = String::from(
        "fio's meaning: CPU time over job_runtime, in %, at most 100 per thread; from the process's \
         getrusage over the timed span (every thread of iolab's, kernel helpers included)",
    );
    if clone {
        t += "; a clone's is the process's CPU time times its share of the run's ops (getrusage has no \
              per-thread split here), and so are ctx, majf and minf";
    }
    if clamped {
        t += "; clamped to 100% (usr and sys in proportion): the figure came out above what one thread \
              can use, as getrusage's coarse split of a short run's time, or a clone's share of the \
              process's CPU counted by its ops, can give (cpu_before_clamp has the figures)";
    }
    t
}

/// fio's `ioengine` for `m` (its registry entry's, which job files map by), or iolab's own name where fio
/// has no engine doing what it does.
pub fn fio_engine(m: MethodKind) -> &'static str {
    m.info().fio_engine.unwrap_or(m.name())
}

fn engine_said(m: MethodKind) -> String {
    match m.info().fio_engine {
        Some(e) => format!("fio's {e}, which does what iolab's {} does", m.name()),
        None => format!(
            "iolab's own {}: fio has no engine for it, so job options.ioengine is iolab's name",
            m.name()
        ),
    }
}

/// The job's options as fio names them (strings, as fio writes them).
pub(super) fn options(r: &RunResult, grouped: bool) -> Value {
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
    // fio's offset modifier: rw=read:524288 (what follows the colon, in bytes).
    match s.skip {
        0 => put("rw", rw.into()),
        n => put("rw", format!("{rw}:{n}")),
    }
    // --bs-split: fio's bssplit or bsrange, as given to fio.
    match &s.bs_split {
        Some(b) if b.is_range() => put("bsrange", b.name()),
        Some(b) => put("bssplit", b.name()),
        None => put("bs", s.bs.to_string()),
    }
    put("numjobs", s.threads.to_string());
    put("iodepth", s.qd.to_string());
    put("direct", u8::from(s.direct).to_string());
    put("ioengine", fio_engine(s.method).into());
    if let Some(p) = s.read_pct {
        put("rwmixread", p.to_string());
    }
    // fio's uniform draw keeps its random map (iolab's `once`); iolab's `uniform` is fio's norandommap.
    match &s.distribution {
        Distribution::Once => {}
        Distribution::Uniform if s.pattern.name() == "rand" => put("norandommap", "1".into()),
        Distribution::Uniform => {}
        d => put("random_distribution", d.name()),
    }
    if grouped {
        put("group_reporting", "1".into());
    }
    Value::Object(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engines_are_fios_names_or_iolabs_own() {
        let aio = MethodKind::parse("aio").unwrap();
        assert_eq!(fio_engine(aio), "libaio");
        let stdio = MethodKind::parse("stdio").unwrap();
        assert_eq!(fio_engine(stdio), "stdio");
        assert!(engine_said(stdio).contains("no engine"));
    }
}

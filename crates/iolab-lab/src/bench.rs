//! The harness-overhead benchmark (issue: foundation, item 10): ns/op of `iolab run --method psync
//! --target /dev/null --bs 4` (the runner with full per-op latency and gap accounting) against a bare loop
//! of write(2) calls on /dev/null, measured alternately in one process, reported as a ratio of medians.
//! Both sides time only their loop (iolab: its timed span; bare: the loop) and both make exactly one
//! write(2) of 4 bytes per op, on the calling thread.
//!
//! The machine is shared and noisy (steal time), so rounds are short and alternate, and three ratios are
//! reported: the median of the per-round ratios (each round's iolab run against the bare loop right before
//! it, which cancels slow drifts in load; this is the headline), the ratio of medians, and the ratio of
//! minimums (the least disturbed round of each).

use iolab_engine::error::Result;
use iolab_engine::measure::clock::{ClockInfo, ClockKind};
use iolab_engine::method::{io_uring::INFO as URING, offload, psync, sync};
use iolab_engine::spec::{RawSpec, Val};
use iolab_sys as sys;
use serde::Serialize;
use std::os::fd::AsRawFd;

#[derive(Debug, Clone, Serialize)]
pub struct OverheadReport {
    pub ops_per_round: u64,
    pub rounds: u32,
    /// ns per op of the bare write(2) loop, one value per round.
    pub bare_ns: Vec<f64>,
    /// ns per op of iolab's psync run (wall time of its timed span / ops), one value per round.
    pub iolab_ns: Vec<f64>,
    pub bare_median_ns: f64,
    pub iolab_median_ns: f64,
    /// Median over rounds of (iolab ns/op / bare ns/op of the same round): the headline.
    pub ratio: f64,
    /// median(iolab) / median(bare).
    pub ratio_of_medians: f64,
    /// min(iolab) / min(bare).
    pub ratio_of_minimums: f64,
    /// Kernel-counted write syscalls per op during iolab's runs (should be 1.0: a correctness count
    /// beside the speed claim).
    pub iolab_kernel_writes_per_op: f64,
    /// Like against like, measured in the same rounds: a bare pwrite(2) loop, and iolab's `sync` method
    /// (write(2), the bare loop's own call).
    pub bare_pwrite_ns: Vec<f64>,
    pub iolab_sync_ns: Vec<f64>,
    /// Median of per-round iolab psync / bare pwrite.
    pub ratio_psync_vs_bare_pwrite: f64,
    /// Median of per-round iolab sync / bare write.
    pub ratio_sync_vs_bare_write: f64,
    /// A bare pwrite(2) loop that reads iolab's clock once per op, and iolab's psync under
    /// `--latency-sample 0` (no op timed), ns per op per round.
    pub bare_pwrite_clocked_ns: Vec<f64>,
    pub iolab_unsampled_ns: Vec<f64>,
    /// Median of per-round iolab psync (a clock read per op) / the bare pwrite loop with one.
    pub ratio_psync_vs_bare_pwrite_clocked: f64,
    /// Median of per-round iolab psync `--latency-sample 0` / the bare pwrite loop.
    pub ratio_unsampled_vs_bare_pwrite: f64,
}

fn median(v: &[f64]) -> f64 {
    iolab_engine::stats::median(v).unwrap_or(f64::NAN)
}

/// The bare loop: `ops` write(2) calls of 4 bytes to /dev/null; returns ns per op.
pub fn bare_write_loop(ops: u64) -> Result<f64> {
    bare_loop(ops, false)
}

/// The bare loop with write(2), or pwrite(2) at increasing offsets.
fn bare_loop(ops: u64, positional: bool) -> Result<f64> {
    bare_loop_clocked(ops, positional, None)
}

/// The bare loop, reading the clock of `clock` after each op where given (as iolab's loop does, the
/// value kept so that the read is not left out).
fn bare_loop_clocked(ops: u64, positional: bool, clock: Option<ClockKind>) -> Result<f64> {
    let fd = sys::open(std::path::Path::new("/dev/null"), libc::O_WRONLY, 0)?;
    let buf = [0x5au8; 4];
    let t0 = sys::monotonic_ns();
    if let Some(kind) = clock {
        let mut last = 0u64;
        for i in 0..ops {
            sys::pwrite(fd.as_raw_fd(), std::hint::black_box(&buf), i * 4)?;
            last = std::hint::black_box(iolab_engine::measure::clock::now_of(kind)).max(last);
        }
        std::hint::black_box(last);
    } else if positional {
        for i in 0..ops {
            sys::pwrite(fd.as_raw_fd(), std::hint::black_box(&buf), i * 4)?;
        }
    } else {
        for _ in 0..ops {
            sys::write(fd.as_raw_fd(), std::hint::black_box(&buf))?;
        }
    }
    let t1 = sys::monotonic_ns();
    Ok((t1 - t0) as f64 / ops as f64)
}

pub fn overhead(ops: u64, rounds: u32, clock: &ClockInfo) -> Result<OverheadReport> {
    let spec_for = |m: &str| {
        RawSpec::new()
            .with("method", m)
            .with("target", "/dev/null")
            .with("bs", Val::Int(4))
            .with("ops", Val::Int(ops as i64))
            .with("seed", Val::Int(1))
            .resolve()
    };
    let (psync, sync) = (spec_for(psync::INFO.name)?, spec_for(sync::INFO.name)?);
    let unsampled = RawSpec::new()
        .with("method", psync::INFO.name)
        .with("target", "/dev/null")
        .with("bs", Val::Int(4))
        .with("ops", Val::Int(ops as i64))
        .with("seed", Val::Int(1))
        .with("latency-sample", Val::Int(0))
        .resolve()?;
    // Warm every path once.
    bare_loop(ops / 10 + 1, false)?;
    bare_loop(ops / 10 + 1, true)?;
    crate::run::run(&psync, clock)?;
    crate::run::run(&sync, clock)?;
    let (mut bare, mut lab, mut bare_p, mut lab_s) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut writes, mut total_ops) = (0u64, 0u64);
    let (mut bare_c, mut lab_u) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        bare.push(bare_loop(ops, false)?);
        let r = crate::run::run(&psync, clock)?;
        lab.push(r.ns_per_op);
        writes += r.syscalls.kernel_rw.as_ref().map_or(0, |k| k.syscw);
        total_ops += r.ops;
        bare_p.push(bare_loop(ops, true)?);
        lab_s.push(crate::run::run(&sync, clock)?.ns_per_op);
        bare_c.push(bare_loop_clocked(ops, true, Some(clock.kind))?);
        lab_u.push(crate::run::run(&unsampled, clock)?.ns_per_op);
    }
    let (b, l) = (median(&bare), median(&lab));
    let per_round =
        |a: &[f64], b: &[f64]| median(&a.iter().zip(b).map(|(x, y)| x / y).collect::<Vec<_>>());
    let paired: Vec<f64> = lab.iter().zip(&bare).map(|(l, b)| l / b).collect();
    let like_psync = per_round(&lab, &bare_p);
    let like_sync = per_round(&lab_s, &bare);
    let (like_clocked, unsampled) = (per_round(&lab, &bare_c), per_round(&lab_u, &bare_p));
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    Ok(OverheadReport {
        ops_per_round: ops,
        rounds,
        bare_median_ns: b,
        iolab_median_ns: l,
        ratio: median(&paired),
        ratio_of_medians: l / b,
        ratio_of_minimums: min(&lab) / min(&bare),
        bare_ns: bare,
        iolab_ns: lab,
        iolab_kernel_writes_per_op: writes as f64 / total_ops.max(1) as f64,
        ratio_psync_vs_bare_pwrite: like_psync,
        ratio_sync_vs_bare_write: like_sync,
        ratio_psync_vs_bare_pwrite_clocked: like_clocked,
        ratio_unsampled_vs_bare_pwrite: unsampled,
        bare_pwrite_ns: bare_p,
        bare_pwrite_clocked_ns: bare_c,
        iolab_unsampled_ns: lab_u,
        iolab_sync_ns: lab_s,
    })
}

/// The counter-overhead benchmark (issue: kernel's-eye view, item 6): 1M write(2) calls of 4 bytes to
/// /dev/null with no counters open, with iolab's software counters open, and with the software counters
/// plus the raw_syscalls:sys_enter tracepoint (what `--count inline` adds), alternating in rounds. The
/// counters are really opened and closed each round (disabling them would leave the kernel's hooks in).
#[derive(Debug, Clone, Serialize)]
pub struct CounterOverheadReport {
    pub ops_per_round: u64,
    pub rounds: u32,
    pub off_ns: Vec<f64>,
    pub software_ns: Vec<f64>,
    pub tracepoint_ns: Vec<f64>,
    /// Median over rounds of software / off.
    pub ratio_software: f64,
    /// Median over rounds of (software + sys_enter tracepoint) / off.
    pub ratio_tracepoint: f64,
    /// sys_enter counted per write in the tracepoint rounds (should be 1.0: a correctness count).
    pub sys_enter_per_write: Option<f64>,
    /// Counters that could not be opened, with the reason.
    pub unavailable: Vec<String>,
}

pub fn counter_overhead(ops: u64, rounds: u32) -> Result<CounterOverheadReport> {
    use iolab_engine::measure::counters::{CounterSet, CounterSnap};
    let per_round =
        |a: &[f64], b: &[f64]| median(&a.iter().zip(b).map(|(x, y)| x / y).collect::<Vec<_>>());
    bare_loop(ops / 10 + 1, false)?;
    let (mut off, mut sw, mut tp) = (Vec::new(), Vec::new(), Vec::new());
    let (mut counted, mut written) = (0u64, 0u64);
    let mut unavailable = Vec::new();
    for _ in 0..rounds {
        off.push(bare_loop(ops, false)?);
        {
            let mut s = CounterSet::default();
            s.add_software_and_hardware();
            sw.push(bare_loop(ops, false)?);
            if unavailable.is_empty() {
                unavailable = s
                    .unavailable
                    .iter()
                    .map(|(n, _, why)| format!("{n}: {why}"))
                    .collect();
            }
        }
        let mut s = CounterSet::default();
        s.add_software_and_hardware();
        let mut t = CounterSet::default();
        t.add_tracepoints(None, false);
        t.pause();
        let a = t.snapshot();
        t.resume();
        tp.push(bare_loop(ops, false)?);
        t.pause();
        let b = t.snapshot();
        t.resume();
        if let Some(v) = t
            .deltas(&a, &b)
            .iter()
            .find(|c| c.name == "raw_syscalls:sys_enter")
            .and_then(|c| c.value)
        {
            counted += v;
            written += ops;
        }
        drop((s, t, CounterSnap::default()));
    }
    Ok(CounterOverheadReport {
        ops_per_round: ops,
        rounds,
        ratio_software: per_round(&sw, &off),
        ratio_tracepoint: per_round(&tp, &off),
        sys_enter_per_write: (written > 0).then(|| counted as f64 / written as f64),
        off_ns: off,
        software_ns: sw,
        tracepoint_ns: tp,
        unavailable,
    })
}

/// The NOP benchmark (issue: every method worth comparing, item 6): io_uring NOP requests per second at
/// batch 1, 8 and 32 through iolab (`run --method io_uring --nop-requests --qd B --batch B`, with its full
/// per-request accounting) against a minimal raw loop on the io-uring crate (push B NOPs, one
/// submit_and_wait(B), drain the completion queue), alternating in one process.
#[derive(Debug, Clone, Serialize)]
pub struct NopReport {
    pub ops_per_round: u64,
    pub rounds: u32,
    /// (batch, raw NOP/s median, iolab NOP/s median, median of per-round iolab/raw)
    pub rows: Vec<(u32, f64, f64, f64)>,
    /// Against fio's t/io_uring, or why not.
    pub t_io_uring: std::result::Result<crate::bench_tiou::AgainstTIoUring, String>,
}

pub use crate::bench_tiou::{raw_nop_loop, RAW_RING};

pub fn nop(ops: u64, rounds: u32, clock: &ClockInfo) -> Result<NopReport> {
    let mut rows = Vec::new();
    for batch in [1u32, 8, 32] {
        let spec = crate::bench_tiou::nop_spec(batch, ("ops", ops as i64), 1)?;
        raw_nop_loop(ops / 10 + batch as u64, batch)?;
        crate::run::run(&spec, clock)?;
        let (mut raw, mut lab) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            raw.push(raw_nop_loop(ops, batch)?);
            lab.push(crate::run::run(&spec, clock)?.iops);
        }
        let ratio = median(&lab.iter().zip(&raw).map(|(l, r)| l / r).collect::<Vec<_>>());
        rows.push((batch, median(&raw), median(&lab), ratio));
    }
    let t_io_uring = match crate::bench_tiou::find() {
        Ok(exe) => Ok(crate::bench_tiou::against(&exe, clock)?),
        Err(why) => Err(why),
    };
    Ok(NopReport {
        ops_per_round: ops,
        rounds,
        rows,
        t_io_uring,
    })
}

/// The offload benchmark (issue: system-call offload, item 5): NOP round trips through the three offload
/// paths at batch 1, and NOP throughput at batch 32, each round running all six in turn, so the ratios to
/// native are taken between runs a second apart.
#[derive(Debug, Clone, Serialize)]
pub struct OffloadBenchReport {
    pub ops_per_round: u64,
    pub rounds: u32,
    /// (path, batch 1 ns per round trip median, batch 32 NOPs/s median, median of per-round ratios:
    /// ns/native ns at batch 1, NOPs/s / native NOPs/s at batch 32, cycles per NOP at batch 1 median)
    pub rows: Vec<OffloadBenchRow>,
    pub tsc_ghz: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct OffloadBenchRow {
    pub path: String,
    pub batch1_ns: f64,
    pub batch1_cycles: Option<f64>,
    pub batch32_nops_per_s: f64,
    /// Median of per-round (this path's batch-1 round trip / native's).
    pub batch1_ratio: f64,
    /// Median of per-round (this path's batch-32 NOPs/s / native's).
    pub batch32_ratio: f64,
}

pub fn offload(ops: u64, rounds: u32, clock: &ClockInfo) -> Result<OffloadBenchReport> {
    let paths = ["native", "kernel", "broker"];
    let spec = |path: &str, batch: u32| {
        RawSpec::new()
            .with("method", offload::INFO.name)
            .with("offload-path", path)
            .with("target", "/dev/null")
            .with("ops", Val::Int(ops as i64))
            .with("batch", Val::Int(batch as i64))
            .with("nop-requests", Val::Bool(true))
            .with("count", "none")
            .with("seed", Val::Int(1))
            .resolve()
    };
    // ns per op at batch 1 and ops/s at batch 32, per path, per round.
    let mut b1: Vec<Vec<f64>> = vec![Vec::new(); 3];
    let mut b32: Vec<Vec<f64>> = vec![Vec::new(); 3];
    for p in paths {
        crate::run::run(&spec(p, 1)?, clock)?;
    }
    for _ in 0..rounds {
        for (i, p) in paths.iter().enumerate() {
            b1[i].push(crate::run::run(&spec(p, 1)?, clock)?.ns_per_op);
            b32[i].push(crate::run::run(&spec(p, 32)?, clock)?.iops);
        }
    }
    let tsc_ghz =
        (clock.kind == iolab_engine::measure::clock::ClockKind::Tsc).then_some(clock.hz * 1e-9);
    let rows = paths
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let r1: Vec<f64> = b1[i].iter().zip(&b1[0]).map(|(a, n)| a / n).collect();
            let r32: Vec<f64> = b32[i].iter().zip(&b32[0]).map(|(a, n)| a / n).collect();
            let ns = median(&b1[i]);
            OffloadBenchRow {
                path: p.to_string(),
                batch1_ns: ns,
                batch1_cycles: tsc_ghz.map(|g| ns * g),
                batch32_nops_per_s: median(&b32[i]),
                batch1_ratio: median(&r1),
                batch32_ratio: median(&r32),
            }
        })
        .collect();
    Ok(OffloadBenchReport {
        ops_per_round: ops,
        rounds,
        rows,
        tsc_ghz,
    })
}

/// `iolab bench profile`: what `--profile` costs the timed pass. Each workload runs in alternating rounds
/// with `--profile none`, `separate` and `inline` (the order turned around every other round, so a drift
/// in load favours no mode), and each mode's timed ns/op is compared with the unprofiled run of the same
/// round: separate should change nothing (the sampled pass is another pass), inline costs what sampling
/// at `--profile-hz` costs.
#[derive(Debug, Clone, Serialize)]
pub struct ProfileBenchReport {
    pub rounds: u32,
    pub frequency_hz: u32,
    pub rows: Vec<ProfileBenchRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProfileBenchRow {
    /// The workload, as `iolab run` flags.
    pub workload: String,
    /// Timed ns per op, one value per round, per mode.
    pub none_ns: Vec<f64>,
    pub separate_ns: Vec<f64>,
    pub inline_ns: Vec<f64>,
    /// Median over rounds of (mode's ns/op / the unprofiled ns/op of the same round): the headline.
    pub separate_ratio: f64,
    pub inline_ratio: f64,
    /// min(mode) / min(none): the least disturbed round of each.
    pub separate_ratio_of_minimums: f64,
    pub inline_ratio_of_minimums: f64,
    /// Median samples per inline run and the samples lost over all of them (a count beside the speed
    /// claim: the sampler did sample).
    pub inline_samples: f64,
    pub lost: u64,
}

/// The profile bench's workloads: 4 KiB pwrite(2) calls to /dev/null (`ops` per run; the syscall path
/// sampling interrupts most often relative to its work) and buffered 1 MiB writes of 256 MiB to a file
/// in `dir` (the copy-bound case).
fn profile_workloads(ops: u64, dir: &std::path::Path) -> Vec<(String, RawSpec)> {
    let file = dir.join("bench-profile.dat").display().to_string();
    vec![
        (
            format!("--method psync --bs 4k --ops {ops} --target /dev/null"),
            RawSpec::new()
                .with("method", psync::INFO.name)
                .with("target", "/dev/null")
                .with("bs", Val::Int(4096))
                .with("ops", Val::Int(ops as i64)),
        ),
        (
            format!("--method psync --bs 1m --size 256m --target {file}"),
            RawSpec::new()
                .with("method", psync::INFO.name)
                .with("target", file.as_str())
                .with("bs", Val::Int(1 << 20))
                .with("ops", Val::Int(256)),
        ),
    ]
}

pub fn profile(ops: u64, rounds: u32, clock: &ClockInfo) -> Result<ProfileBenchReport> {
    // Removed at exit and on Ctrl-C too, and journaled for `iolab clean` after a kill.
    let dir =
        iolab_engine::cleanup::Created::temp_dir(&std::env::temp_dir(), "iolab-bench-profile-")?;
    let hz = iolab_engine::spec::DEFAULT_PROFILE_HZ;
    let mut rows = Vec::new();
    for (workload, raw) in profile_workloads(ops, dir.path()) {
        let spec = |mode: &str| {
            raw.clone()
                .with("profile", mode)
                .with("count", "none")
                .with("seed", Val::Int(1))
                .resolve()
        };
        let modes = [spec("none")?, spec("separate")?, spec("inline")?];
        for s in &modes {
            crate::run::run(s, clock)?; // warm every path once
        }
        let mut ns: [Vec<f64>; 3] = Default::default();
        let (mut samples, mut lost) = (Vec::new(), 0);
        for round in 0..rounds {
            let order: [usize; 3] = if round % 2 == 0 { [0, 1, 2] } else { [2, 1, 0] };
            for i in order {
                let r = crate::run::run(&modes[i], clock)?;
                ns[i].push(r.ns_per_op);
                if let (2, Some(p)) = (i, &r.profile) {
                    samples.push(p.samples as f64);
                    lost += p.lost;
                }
            }
        }
        rows.push(profile_row(workload, ns, &samples, lost));
    }
    Ok(ProfileBenchReport {
        rounds,
        frequency_hz: hz,
        rows,
    })
}

fn profile_row(workload: String, ns: [Vec<f64>; 3], samples: &[f64], lost: u64) -> ProfileBenchRow {
    let per_round =
        |a: &[f64], b: &[f64]| median(&a.iter().zip(b).map(|(x, y)| x / y).collect::<Vec<_>>());
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let [none, separate, inline] = ns;
    ProfileBenchRow {
        workload,
        separate_ratio: per_round(&separate, &none),
        inline_ratio: per_round(&inline, &none),
        separate_ratio_of_minimums: min(&separate) / min(&none),
        inline_ratio_of_minimums: min(&inline) / min(&none),
        inline_samples: if samples.is_empty() {
            0.0
        } else {
            median(samples)
        },
        lost,
        none_ns: none,
        separate_ns: separate,
        inline_ns: inline,
    }
}

/// The counting-pass benchmark (issue: answers, item 5): the whole run's wall time (counting pass, setup and
/// timed pass, as a user waits for it) of `--duration` runs with `--count separate` (a sampled pass) and
/// `--count full` (a pass of the whole workload) against `--count none`, alternating in one process.
#[derive(Debug, Clone, Serialize)]
pub struct CountingBenchReport {
    pub rounds: u32,
    pub duration_s: f64,
    /// (workload, median of per-round separate/none, median of per-round full/none)
    pub rows: Vec<(String, f64, f64)>,
}

pub fn counting(rounds: u32, duration_s: f64) -> Result<CountingBenchReport> {
    let clock = iolab_engine::measure::clock::calibrate(20);
    let workloads = [
        (
            "psync 4 KiB writes to /dev/null",
            RawSpec::new().with("method", psync::INFO.name),
        ),
        (
            "io_uring 4 KiB writes to /dev/null, qd 8",
            RawSpec::new()
                .with("method", URING.name)
                .with("qd", Val::Int(8)),
        ),
    ];
    let mut rows = Vec::new();
    for (name, raw) in workloads {
        let spec = |count: &str| {
            raw.clone()
                .with("target", "/dev/null")
                .with("bs", Val::Int(4096))
                .with("duration", format!("{duration_s}s").as_str())
                .with("count", count)
                .resolve()
        };
        let modes = [spec("none")?, spec("separate")?, spec("full")?];
        let mut wall: [Vec<f64>; 3] = Default::default();
        for round in 0..rounds {
            let order: [usize; 3] = if round % 2 == 0 { [0, 1, 2] } else { [2, 1, 0] };
            for i in order {
                let t = std::time::Instant::now();
                crate::run::run(&modes[i], &clock)?;
                wall[i].push(t.elapsed().as_secs_f64());
            }
        }
        let per_round = |a: &[f64]| {
            median(
                &a.iter()
                    .zip(&wall[0])
                    .map(|(x, y)| x / y)
                    .collect::<Vec<_>>(),
            )
        };
        rows.push((name.to_string(), per_round(&wall[1]), per_round(&wall[2])));
    }
    Ok(CountingBenchReport {
        rounds,
        duration_s,
        rows,
    })
}

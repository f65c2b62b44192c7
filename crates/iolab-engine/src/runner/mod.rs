//! The runner: owns the workload loop, timing, accounting, buffers and verification.
//!
//! Per run: set up the target; start one worker per thread, each preparing its method (open, map, ring)
//! and its buffers; when all are ready, the main thread snapshots the process (getrusage, helper tasks,
//! /proc/self/io) and releases them; each worker times its ops into two HdrHistograms (latency, gap
//! between op starts) with one clock read per op after its completion (methods that complete inside
//! `submit`) or one per submission round (the others; see loops.rs); when all are done the main
//! thread snapshots again while the workers (and so their rings and helper threads) are still alive; then
//! the workers clean up, and `--verify` reads the target back.
//!
//! The loops are generic over the method and the clock, so each combination is compiled on its own and an
//! op costs the method's work plus a clock read (or its share of one), a histogram record and a pattern
//! stamp.
//!
//! Here: the passes of a run and how a method's registry entry reaches its runner (`drive`); `pass.rs` one pass and its figures, `threads.rs` the
//! threads and the snapshots around them, `worker.rs` one worker, `loops.rs` the timed loops, and
//! `assemble.rs` the figures every runner (offload's too) derives alike.

mod assemble;
mod content;
mod drawn;
mod flushes;
mod intervals;
mod layers;
mod lean;
mod loops;
mod merge;
mod mixed;
mod paced;
mod pass;
mod perop;
mod sink_check;
mod slots;
mod threads;
mod warmup;
mod work;
mod worker;

pub use assemble::Sample;
pub(crate) use assemble::{assemble, Measured};
pub use content::{write_content, Content, ContentDrive, ContentTiming};
pub(crate) use perop::check_spec as check_op_log;
pub use perop::{OpLog, OpWindow, ThreadOps, OP_LOG_MAX_BYTES, OP_LOG_MAX_WINDOWS};

use crate::error::Result;
use crate::measure::clock::ClockInfo;
use crate::measure::counters::{CountMode, CounterSet, CounterSnap, CounterValue, Family};
use crate::measure::profile::Sampler;
use crate::progress::{Board, Stage};
use crate::result::{KernelFigures, ProfileFigures, RunResult};
use crate::spec::{ProfileMode, Spec};
use pass::run_once;
pub use threads::drive;
use threads::SOFTWARE;
pub use work::{Collected, Drive, Pass};

/// Runs one workload of a method that runs in iolab's threads (`drive`: its runner, from the registry's
/// line; see `crate::run` for the method's own choice) with an already calibrated clock: with `--count
/// separate` (the default) first an untimed pass of the same workload with the kernel tracepoints on,
/// with `--profile separate` an untimed pass sampled for its profile, then the timed pass with the
/// software and hardware counters (and the sampler with `--profile inline`). It tells `board` (a progress
/// display's, see `progress.rs`) which pass runs, its bounds, when its ops start and how many finished:
/// the workers add them about every 50 ms of their clock, at the comparison they make after every op
/// anyway (no cost per op). The lab adds the derived figures and the findings (`iolab_lab::run`).
pub fn run_with(
    spec: &Spec,
    clock: &ClockInfo,
    board: Option<&Board>,
    drive: Drive,
) -> Result<RunResult> {
    let mut kernel = KernelFigures {
        count_mode: spec.count,
        ..Default::default()
    };
    // --memory-limit: every pass inside the cgroup (left, and removed, when `cgroup` drops).
    let cgroup = spec
        .memory_limit
        .map(crate::memlimit::MemCgroup::enter)
        .transpose()?;
    let tp = counting_pass(spec, clock, &mut kernel, board, drive)?;
    let separate = profile_pass(spec, clock, board, drive)?;
    let layers = layers_pass(spec, clock, board, drive)?;
    let inline = (spec.profile == ProfileMode::Inline).then(|| Sampler::open(spec.profile_hz));
    let sampler = inline.as_ref().and_then(|s| s.as_ref().ok());
    let cg = cgroup.as_ref();
    let (mut r, vals) = timed_pass(spec, clock, board, &mut kernel, (sampler, cg), drive)?;
    r.profile = match inline {
        Some(s) => Some(profile_of(s, spec, "inline")),
        None => separate,
    };
    match layers {
        Some(Ok(mut l)) => {
            l.timed_mean_ns = (!r.latency.is_empty()).then_some(r.latency.mean_ns);
            r.layers = Some(l);
        }
        Some(Err(why)) => r.notes.push(format!("no time per layer (--layers): {why}")),
        None => {}
    }
    sort_counts(spec, &mut kernel, vals, tp, &r);
    r.kernel = kernel;
    Ok(r)
}

/// With `--count separate`: the untimed pass with the kernel tracepoints on, its counts and its result.
/// The tracepoint counters of a run: syscalls (and the breakdown of `calls`), io_uring's requests, and
/// for `--method io_uring` how many of them carried the workload's opcode.
fn add_tracepoints(set: &mut CounterSet, spec: &Spec, calls: &[&'static str]) {
    set.add_tracepoints(
        spec.breakdown.then_some(calls),
        spec.method.info().io_uring_requests,
    );
    if spec.method == crate::method::kind::MethodKind::IoUring && set.has_tracepoints() {
        for (name, code) in crate::method::io_uring::requested_opcodes(spec) {
            set.add_opcode(name, code);
        }
    }
}

fn counting_pass(
    spec: &Spec,
    clock: &ClockInfo,
    kernel: &mut KernelFigures,
    board: Option<&Board>,
    drive: Drive,
) -> Result<Option<(Vec<CounterValue>, RunResult)>> {
    if !spec.count.separate_pass() {
        return Ok(None);
    }
    let mut set = CounterSet::default();
    let calls = spec.method.info().breakdown();
    add_tracepoints(&mut set, spec, &calls);
    kernel.notes.extend(set.notes.iter().cloned());
    if !set.has_tracepoints() {
        kernel.tracepoints = set.deltas(&CounterSnap::default(), &CounterSnap::default());
        return Ok(None);
    }
    let pass = Pass {
        counters: &[&set],
        progress: board.map(|b| (b, Stage::Counting)),
        sampler: None,
        irqs: None,
        memory: None,
        layers: None,
        disk: None,
        drive,
    };
    let sample = spec.counting_sample();
    let (r, vals) = run_once(&sample, clock, &pass)?;
    let whole = sample.ops == spec.ops && sample.duration_s == spec.duration_s;
    kernel.tracepoint_pass = Some(if whole {
        "a separate, untimed counting pass of the whole workload, run just before the timed pass"
            .into()
    } else {
        "a separate, untimed pass over a sample of the workload (a tenth: of the ops, at least 1,000; of \
         the duration, at most 0.25 s; per-op figures come from it, totals are the sample's; --count full \
         counts all)"
            .into()
    });
    Ok(Some((vals, r)))
}

/// With `--layers`: the traced pass (see `layers.rs`) and its figures, or why there are none.
fn layers_pass(
    spec: &Spec,
    clock: &ClockInfo,
    board: Option<&Board>,
    drive: Drive,
) -> Result<Option<std::result::Result<crate::result::LayerFigures, String>>> {
    if !spec.layers {
        return Ok(None);
    }
    let tracer = match layers::tracer(spec, clock.kind) {
        Ok(t) => t,
        Err(why) => return Ok(Some(Err(why))),
    };
    let pass = Pass {
        counters: &[],
        progress: board.map(|b| (b, Stage::Counting)),
        sampler: None,
        irqs: None,
        memory: None,
        layers: Some(&tracer),
        disk: None,
        drive,
    };
    let (r, _) = run_once(&layers::traced_spec(spec), clock, &pass)?;
    Ok(Some(r.layers.ok_or_else(|| {
        r.notes
            .iter()
            .find_map(|n| n.strip_prefix(layers::NOTE))
            .unwrap_or("the traced pass gave no figures")
            .to_string()
    })))
}

/// With `--profile separate`: an untimed pass of the same workload, sampled; its profile (or why there is
/// none).
fn profile_pass(
    spec: &Spec,
    clock: &ClockInfo,
    board: Option<&Board>,
    drive: Drive,
) -> Result<Option<ProfileFigures>> {
    if spec.profile != ProfileMode::Separate {
        return Ok(None);
    }
    let sampler = Sampler::open(spec.profile_hz);
    if let Ok(s) = &sampler {
        let pass = Pass {
            counters: &[],
            progress: board.map(|b| (b, Stage::Profiling)),
            sampler: Some(s),
            irqs: None,
            memory: None,
            layers: None,
            disk: None,
            drive,
        };
        run_once(&spec.for_counting_pass(), clock, &pass)?;
    }
    Ok(Some(profile_of(sampler, spec, "separate")))
}

/// The profile a sampler took, or a profile without samples that says why there are none.
fn profile_of(
    sampler: std::result::Result<Sampler, String>,
    spec: &Spec,
    pass: &str,
) -> ProfileFigures {
    match sampler {
        Ok(s) => s.finish(pass),
        Err(why) => ProfileFigures {
            pass: pass.into(),
            event: "none".into(),
            frequency_hz: spec.profile_hz as u64,
            notes: vec![why],
            ..Default::default()
        },
    }
}

/// The timed pass, with the software and hardware counters (and with `--count inline` the tracepoints,
/// with `--profile inline` the sampler).
fn timed_pass(
    spec: &Spec,
    clock: &ClockInfo,
    board: Option<&Board>,
    kernel: &mut KernelFigures,
    (sampler, memory): (Option<&Sampler>, Option<&crate::memlimit::MemCgroup>),
    drive: Drive,
) -> Result<(RunResult, Vec<CounterValue>)> {
    SOFTWARE.with(|sw| {
        let mut tp = CounterSet::default();
        if spec.count == CountMode::Inline {
            let calls = spec.method.info().breakdown();
            add_tracepoints(&mut tp, spec, &calls);
            kernel.notes.extend(tp.notes.iter().cloned());
            if tp.has_tracepoints() {
                kernel.tracepoint_pass =
                    Some("the timed pass itself (--count inline): every syscall was slowed by the tracepoints".into());
            }
        }
        // --iopoll: the target device's interrupts, counted around the timed span (polled or not?).
        let irqs = spec
            .ring
            .iopoll
            .then(|| crate::measure::iopoll::IrqWatch::for_target(&spec.target))
            .flatten();
        // The disk behind the target: what the block layer moved over the timed span.
        let disk = crate::measure::device_io::DiskWatch::for_target(&spec.target);
        let pass = Pass {
            counters: &[sw, &tp],
            progress: board.map(|b| (b, Stage::Timed)),
            sampler,
            irqs: irqs.as_ref(),
            memory,
            layers: None,
            disk: disk.as_ref(),
            drive,
        };
        run_once(spec, clock, &pass)
    })
}

/// Sorts the counted values into the kernel figures: the timed pass's software and hardware counters, and
/// the tracepoints and syscalls by name of the counting pass (or of the timed pass itself, inline).
fn sort_counts(
    spec: &Spec,
    kernel: &mut KernelFigures,
    vals: Vec<CounterValue>,
    tp: Option<(Vec<CounterValue>, RunResult)>,
    r: &RunResult,
) {
    let (timed, inline_tp): (Vec<CounterValue>, Vec<CounterValue>) = vals
        .into_iter()
        .partition(|c| matches!(c.family, Family::Software | Family::Hardware));
    kernel.timed_pass = timed;
    let (tp_vals, tp_run) = match tp {
        Some((v, run)) => (v, Some(run)),
        None if spec.count == CountMode::Inline => (inline_tp, None),
        None => (Vec::new(), None),
    };
    let (by_name, tps): (Vec<CounterValue>, Vec<CounterValue>) = tp_vals
        .into_iter()
        .partition(|c| c.family == Family::Syscall);
    if !tps.is_empty() {
        kernel.tracepoints = tps;
    }
    let mut names: Vec<(String, u64)> = by_name
        .into_iter()
        .filter_map(|c| c.value.filter(|&v| v > 0).map(|v| (c.name, v)))
        .collect();
    let src = tp_run.as_ref().unwrap_or(r);
    // Clock reads that were system calls: named apart, never in "other" or the method's figures.
    let clock_calls = src
        .syscalls
        .clock_calls
        .filter(|_| kernel.tracepoint_pass.is_some());
    if !names.is_empty() {
        if let Some(total) = kernel.value("raw_syscalls:sys_enter") {
            let mut named: u64 = names.iter().map(|(_, v)| v).sum();
            if let Some(c) = clock_calls.filter(|&c| c > 0 && total >= named + c) {
                names.push(("clock_gettime (iolab's clock reads)".to_string(), c));
                named += c;
            }
            if total > named {
                names.push(("other".to_string(), total - named));
            }
        }
    }
    names.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    kernel.syscalls_by_name = names;
    kernel.tracepoint_pass_clock_calls = clock_calls;
    if kernel.tracepoint_pass.is_some() {
        kernel.tracepoint_pass_ops = Some(src.ops);
        kernel.tracepoint_pass_uring_enters = src.syscalls.uring_enters;
        kernel.tracepoint_pass_uring_requests = src.syscalls.uring_requests;
    }
    if spec.count == CountMode::None {
        kernel
            .notes
            .push("tracepoints not counted (--count none): syscall figures are iolab's own".into());
    }
}

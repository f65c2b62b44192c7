//! The figures of an offload run: its own section of the result (`offload`), and the result itself,
//! assembled as the runner's are (`runner::assemble`) from what offload timed its own way.

use super::client::Work;
use super::cycles::{self, Area};
use super::sandbox::{Checks, Ended};
use super::server::Server;
use super::setup::Cpus;
use super::setup::Shape;
use super::setup::Span;
use super::setup::SEED_NATIVE_CYCLES;
use super::setup::SEED_OFFLOADED_CYCLES;
use super::setup::SEED_RDTSC_APP_CYCLES;
use super::setup::SEED_RDTSC_INMATE_CYCLES;
use super::setup::WINDOW_MS;
use super::shm::Ctl;
use crate::error::Result;
use crate::measure::clock::{ClockInfo, ClockKind};
use crate::measure::cpu::{self, HelperCpu, RusageDelta};
use crate::measure::hist::{summarize, Summary};
use crate::result::*;
use crate::runner::{assemble, Measured};
use crate::spec::{OffloadPath, Spec};
use crate::target::PreparedTarget;
use std::sync::atomic::Ordering;

/// Everything an offload run found out.
pub struct Parts<'a> {
    pub spec: &'a Spec,
    pub clock: &'a ClockInfo,
    /// Taken when the run started.
    pub host: Host,
    pub target: &'a PreparedTarget,
    pub shape: &'a Shape,
    pub cpus: &'a Cpus,
    pub ctl: &'a Ctl,
    /// The client's own timing (the shared cycle area).
    pub cycles: &'a Area,
    pub server: &'a Server,
    pub span: Span,
    pub client: Ended,
    pub checks: Checks,
    /// The target's notes and the placement's.
    pub notes: Vec<String>,
}

/// The result of an offload run.
pub fn result(mut p: Parts) -> Result<RunResult> {
    let (spec, path) = (p.spec, p.spec.offload.path);
    let ops = p.span.ops;
    let verify = verify(&p)?;
    let service_tasks = service_tasks(path, &p.span);
    let mut notes = std::mem::take(&mut p.notes);
    notes.extend(punted_note(&service_tasks));
    if spec.layers {
        notes.push(
            "no time per layer (--layers): the offload client is a process of its own, whose ops iolab does not \
             log one by one, so they cannot be matched to the block layer's requests"
                .into(),
        );
    }
    if spec.offload.sq_sleep {
        notes.push(format!(
            "--sq-sleep: before every round trip the client waited for the SQ thread to idle out (sq_thread_idle \
             {} ms, at least a scheduler tick): the wall time, ops/s and window figures include those waits; the \
             client's own cycles do not, and are this design's cost",
            spec.ring.sq_idle_ms
        ));
    }
    let wall_s = p.span.t1.saturating_sub(p.span.t0) as f64 * 1e-9;
    let moved = if p.shape.work == Work::Nop {
        0
    } else {
        spec.bs
    };
    let bytes = ops * moved;
    let base = assemble(
        spec,
        p.clock,
        Measured {
            host: p.host.clone(),
            target: TargetInfo::of(p.target, None),
            wall_s,
            ops,
            bytes,
            before: &p.span.before,
            after: &p.span.after,
            workers: client_cpu(&p.client.rusage),
            workers_apart: true,
            helpers: service_tasks.clone(),
            steal_cpus: steal_cpus(path, p.cpus),
            notes,
            fallbacks: p.server.fallbacks.clone(),
            without_tsc: "cycles are not given, only ns",
        },
    );
    let window_ns = summarize(&p.span.hist, 0.1);
    let figures = offload_figures(&mut p, &base, service_tasks, window_ns.clone());
    let batches = ops.div_ceil(u64::from(p.shape.batch)).max(1);
    let result = RunResult {
        timed: figures.timing.clone(),
        excluded: excluded(path),
        latency: window_ns,
        flushes: FlushFigures {
            calls: p.ctl.flushes.load(Ordering::Relaxed),
            ..Default::default()
        },
        syscalls: syscall_figures(path, ops, batches, figures.client_syscalls_timed),
        per_thread: vec![ThreadFigures {
            thread: 0,
            ops,
            bytes,
            wall_s,
        }],
        verify,
        kernel: KernelFigures {
            count_mode: spec.count,
            notes: vec![
                "tracepoints are not counted for --method offload: the client's system calls are counted by the \
                 client itself (all its filter lets it make are read, write, exit and exit_group)"
                    .into(),
            ],
            ..Default::default()
        },
        offload: Some(figures),
        ..base
    };
    Ok(result)
}

/// `--verify`: a write run's target read back; a read run's blocks as the client checked them.
fn verify(p: &Parts) -> Result<Option<VerifyFigures>> {
    if !p.spec.verify {
        return Ok(None);
    }
    Ok(match p.shape.work {
        Work::Write => Some(crate::verify::verify(p.spec, p.target, &[p.span.ops])?),
        Work::Read => {
            let checked = p.ctl.blocks_checked.load(Ordering::Relaxed);
            let mism = p.ctl.mismatches.load(Ordering::Relaxed);
            Some(VerifyFigures {
                blocks_checked: checked,
                bytes_checked: checked * p.spec.bs,
                mismatches: mism,
                first_mismatch_offsets: if mism > 0 {
                    vec![p.ctl.first_mismatch_offset.load(Ordering::Relaxed)]
                } else {
                    Vec::new()
                },
                read_back_s: None,
            })
        }
        Work::Nop => None,
    })
}

/// The tasks of this process that served the client, and their CPU over the timed span.
fn service_tasks(path: OffloadPath, span: &Span) -> Vec<HelperCpu> {
    cpu::task_deltas(&span.before.tasks, &span.after.tasks, |c| match path {
        OffloadPath::Kernel => {
            c.starts_with("iou-sqp-") || c.starts_with("iou-wrk-") || c == "iolab-bell"
        }
        OffloadPath::Broker => c == "iolab-broker" || c.starts_with("iou-wrk-"),
        OffloadPath::Native => false,
    })
}

fn punted_note(service_tasks: &[HelperCpu]) -> Option<String> {
    let punted: f64 = service_tasks
        .iter()
        .filter(|h| h.comm.starts_with("iou-wrk-"))
        .map(|h| h.oncpu_s.unwrap_or(h.user_s + h.sys_s))
        .sum();
    (punted > 0.0).then(|| {
        format!(
            "io_uring punted these requests to io-wq worker threads (iou-wrk, {punted:.3} s on CPU): the kernel \
             cannot complete buffered file I/O inline here, so each request waits for a worker"
        )
    })
}

/// The client's CPU use, from wait4.
fn client_cpu(ru: &libc::rusage) -> RusageDelta {
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    RusageDelta {
        user_s: tv(ru.ru_utime),
        sys_s: tv(ru.ru_stime),
        cpu_s: None,
        voluntary_ctx_switches: ru.ru_nvcsw.max(0) as u64,
        involuntary_ctx_switches: ru.ru_nivcsw.max(0) as u64,
        minor_faults: ru.ru_minflt.max(0) as u64,
        major_faults: ru.ru_majflt.max(0) as u64,
    }
}

/// The client's and the server's CPUs, when both are pinned (their steal time is the workload's).
fn steal_cpus(path: OffloadPath, cpus: &Cpus) -> Option<Vec<usize>> {
    match (cpus.client, cpus.server(path)) {
        (Some(c), Some(s)) if c != s => Some(vec![c as usize, s as usize]),
        (Some(c), None) if path == OffloadPath::Native => Some(vec![c as usize]),
        _ => None,
    }
}

/// How the client was timed: by itself in cycles, and from outside.
fn timing() -> String {
    let client = if super::cycles::counter().is_some() {
        "the client reads the cycle counter (RDTSC; its seccomp filter leaves it usable, strict mode would \
         not) before writing a round trip's first request, as each completion is seen and after the last, \
         into histograms in the shared region (client cycles)"
    } else {
        "the client does not time itself: this build's CPU has no cycle counter it reads (RDTSC is \
         x86_64's; ARM's generic timer ticks at tens of MHz, not in cycles)"
    };
    format!(
        "{client}. From outside, iolab's thread takes \
         CLOCK_MONOTONIC just before writing 'go' to the client's pipe and just after reading its 'done' \
         byte (each crossing wakes a sleeping task: ~10-50 us here, inside the wall time); in between it \
         samples the client's shared completion counter every {WINDOW_MS} ms. Setup, attacks and the \
         sandbox entry are outside both"
    )
}

fn excluded(path: OffloadPath) -> String {
    format!(
        "file creation, the shared region, ring and broker setup, fork, the client's entry into its sandbox, \
         the attack phase, {}and --verify of writes",
        if path == OffloadPath::Kernel {
            "the SQPOLL thread's first wake-up (iolab wakes it just before 'go'), "
        } else {
            ""
        }
    )
}

fn syscall_figures(path: OffloadPath, ops: u64, batches: u64, timed: u64) -> SyscallFigures {
    SyscallFigures {
        method_count: Some(timed),
        method_per_op: (ops > 0).then(|| timed as f64 / ops as f64),
        uring_enters: (path == OffloadPath::Native).then_some(batches),
        uring_requests: (path == OffloadPath::Native).then_some(ops),
        kernel_rw: None,
        kernel_rw_per_op: None,
        kernel_rw_unavailable: Some(
            "the client is another process: /proc/self/io counts iolab's own calls, not its (method_count is \
             the client's own count)"
                .into(),
        ),
        clock_calls: None,
        note: match path {
            OffloadPath::Native => "the client's io_uring_enter(2) calls (one per batch) and its done signal",
            _ => "the client's own system calls while timed: doorbells (eventfd writes) and its done signal; \
                  its seccomp filter allows nothing else but exit",
        }
        .into(),
    }
}

/// Offload's own section: the path, the sandbox, the round trips, the client's calls, the server's CPU
/// and the sandbox's checks (`base`: the rates as every runner gives them).
fn offload_figures(
    p: &mut Parts,
    base: &RunResult,
    service_tasks: Vec<HelperCpu>,
    window_ns: Summary,
) -> OffloadFigures {
    let (o, ctl, clock) = (&p.spec.offload, p.ctl, p.clock);
    let (ops, wall_s) = (base.ops, base.wall_s);
    let wall_ns = p.span.t1.saturating_sub(p.span.t0) as f64;
    let tsc_ghz = (clock.kind == ClockKind::Tsc).then_some(clock.hz * 1e-9);
    let ns_per_op = base.ns_per_op;
    let batches = ops.div_ceil(u64::from(p.shape.batch)).max(1);
    let round_trip_ns = wall_ns / batches as f64;
    // fold from +0.0: an empty f64 sum is -0.0, which JSON would carry as "-0.0".
    let (client_cycles, client_cycles_note) = client_cycles(p.cycles, clock, p.shape.batch, ops);
    let service_cpu_s: f64 = service_tasks
        .iter()
        .map(|h| h.oncpu_s.unwrap_or(h.user_s + h.sys_s))
        .fold(0.0, |a, b| a + b);
    OffloadFigures {
        path: o.path.name().into(),
        doorbell: (o.path == OffloadPath::Broker).then(|| o.doorbell.name().into()),
        sandbox: if o.path != OffloadPath::Native {
            "seccomp filter (read, write, exit, exit_group only; any other system call kills it with SIGSYS; \
             architecture checked), installed by the client after fork with PR_SET_NO_NEW_PRIVS"
                .into()
        } else {
            "none (native baseline: the client may make any system call)".into()
        },
        service: p.server.service.clone(),
        client_pid: p.client.pid,
        client_cpu: p.cpus.client,
        service_cpu: p.cpus.server(o.path),
        batch: p.shape.batch,
        timing: timing(),
        ns_per_op,
        round_trip_ns,
        tsc_ghz,
        cycles_per_op: tsc_ghz.map(|g| ns_per_op * g),
        round_trip_cycles: tsc_ghz.map(|g| round_trip_ns * g),
        ops_per_s: base.iops,
        window_ns,
        window_ms: f64::from(WINDOW_MS),
        windows: p.span.windows,
        doorbells: ctl.doorbells.load(Ordering::Relaxed)
            - ctl.doorbells_at_go.load(Ordering::Relaxed),
        doorbells_total: ctl.doorbells.load(Ordering::Relaxed),
        server_wakeups: p.server.wakeups(),
        client_syscalls_timed: ctl.timed_syscalls.load(Ordering::Relaxed),
        client_syscalls_total: ctl.syscalls.load(Ordering::Relaxed),
        client_syscalls_kernel: p.client.syscalls_kernel,
        client_syscalls_kernel_note: p.client.syscalls_kernel_note.clone(),
        service_cpu_s,
        service_cpu_share: service_share(service_cpu_s, wall_s, service_tasks.len()),
        service_tasks,
        client_user_s: base.cpu.workers.user_s,
        client_sys_s: base.cpu.workers.sys_s,
        refusals: p.checks.refusals,
        broker_executed: (o.path == OffloadPath::Broker)
            .then(|| p.server.shared.executed.load(Ordering::Relaxed)),
        attacks: std::mem::take(&mut p.checks.outcomes),
        canary_intact: p.checks.canary_intact,
        unrelated_file_intact: p.checks.unrelated_intact,
        seed_native_cycles: SEED_NATIVE_CYCLES,
        seed_offloaded_cycles: SEED_OFFLOADED_CYCLES,
        seed_note: format!(
            "Reichenbach's thesis (Jailhouse hypervisor emulated in QEMU on x86, 2 cores), Figure 4.3 (NOPs with \
             user_data, as iolab's): round trip {} cycles from plain user space, {} cycles offloaded from the \
             isolated partition through the shared-memory io_uring; batch 1, timed by rdtsc in the client, \
             whose own cost was {SEED_RDTSC_APP_CYCLES} / {SEED_RDTSC_INMATE_CYCLES} cycles (Figure 4.1)",
            crate::units::thousands(SEED_NATIVE_CYCLES as f64),
            crate::units::thousands(SEED_OFFLOADED_CYCLES as f64)
        ),
        client_cycles,
        client_cycles_note,
        server_sleeps: p.span.server_sleeps,
        sq_sleep: o.sq_sleep,
        no_user_data: o.no_user_data,
        partition: None,
    }
}

/// The client's own cycle figures, and a note: whether its counts match the ops, or why there are none.
fn client_cycles(
    area: &Area,
    clock: &ClockInfo,
    batch: u32,
    ops: u64,
) -> (Option<cycles::ClientCycles>, String) {
    match cycles::read(area, clock, batch) {
        Ok(c) => {
            let trips = ops.div_ceil(u64::from(batch.max(1)));
            let note = if c.requests.count == ops && c.round_trips.count == trips {
                format!(
                    "the client recorded {} requests and {} round trips: every op",
                    c.requests.count, c.round_trips.count
                )
            } else {
                format!(
                    "the client recorded {} requests and {} round trips, but iolab counted {ops} ops \
                     ({trips} round trips)",
                    c.requests.count, c.round_trips.count
                )
            };
            (Some(c), note)
        }
        Err(why) => (None, why),
    }
}

/// The serving threads' on-CPU time as a share of the span, where the span is long enough to hold it
/// and the share is one `tasks` threads could have had (10% slack, as for the process's CPU time).
fn service_share(cpu_s: f64, wall_s: f64, tasks: usize) -> Option<f64> {
    let share = cpu_s / wall_s;
    let possible = share <= tasks.max(1) as f64 * 1.1;
    (crate::units::cpu_span_too_short(wall_s).is_none() && possible).then_some(share)
}

#[cfg(test)]
mod share_tests {
    use super::service_share;

    /// The serving threads' share of a core is put only where the span holds it and one the threads could
    /// have had: a run of 0.2 ms showed one thread on CPU for 2.13 times its span.
    #[test]
    fn a_service_share_is_put_only_where_the_span_holds_it() {
        assert_eq!(service_share(0.05, 0.1, 1), Some(0.5));
        assert_eq!(service_share(0.2, 0.1, 2), Some(2.0));
        assert_eq!(service_share(0.000453, 0.000212, 1), None);
        assert_eq!(service_share(0.25, 0.1, 1), None);
        assert_eq!(service_share(0.0, f64::NAN, 1), None);
    }
}

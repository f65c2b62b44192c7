//! Figures derived from the kernel's counters and iolab's own (`Derived` in the result).

use iolab_engine::result::{Derived, RunResult};
use iolab_engine::spec::OpKind;

/// The figures of a run's CPU time, also for a run out of iolab's process (whose kernel counts are
/// another process's): the process's CPU per op (as rows compute it, `Row::cpu_ns_per_op`, so the
/// figure a sentence prints is this field), its threads' and io_uring's helper threads' CPU seconds, and
/// the share of its CPUs' time the hypervisor stole.
pub fn cpu_figures(r: &RunResult, d: &mut Derived) {
    let cpu_s = r.cpu.process.user_s + r.cpu.process.sys_s;
    // A span too short to time holds no rate, nor a CPU time per op: what CPU time the process spent
    // then is mostly iolab's own reads of it (1 op of 1 µs showed 28 µs of CPU).
    d.rate_withheld =
        iolab_engine::units::too_short(r.wall_s, r.clock.overhead_ns, r.clock.ns_per_tick).map(
            |why| format!("{why}: iops and mib_s are ops and bytes over that span, not a rate"),
        );
    d.cpu_withheld = d
        .rate_withheld
        .is_none()
        .then(|| iolab_engine::units::cpu_beyond_span(cpu_s, r.wall_s, r.host.cpus_online as f64))
        .flatten();
    let withheld = d.rate_withheld.is_some() || d.cpu_withheld.is_some();
    d.cpu_ns_per_op = (r.ops > 0 && cpu_s > 0.0 && !withheld).then(|| cpu_s * 1e9 / r.ops as f64);
    d.worker_cpu_s = super::facts::worker_cpu_s(r);
    d.iowq_cpu_s = super::facts::helper_cpu_s(r, "iou-wrk-");
    d.sqpoll_cpu_s = super::facts::helper_cpu_s(r, "iou-sqp-");
    d.sqpoll_cpu_share = super::facts::helper_share(r, d.sqpoll_cpu_s);
    d.steal_share = super::facts::steal_share(r);
}

/// The fewest ops a thread of a run makes for a count per op (a thread's start and end, about 5 system
/// calls, are then at most 5% of a call per op).
pub const MIN_OPS_PER_THREAD: u64 = 100;

/// Figures derived from the kernel's counters and iolab's own.
pub fn derive(r: &RunResult) -> Derived {
    let k = &r.kernel;
    let mut d = Derived::default();
    let tp_ops = k.tracepoint_pass_ops.unwrap_or(0);
    let per = |x: u64, n: u64| {
        if n > 0 {
            Some(x as f64 / n as f64)
        } else {
            None
        }
    };
    // A count per op of a pass of too few ops is mostly the run's own start and end (a thread's
    // creation and join: about 5 calls and 2 switches each): left out, and said so.
    let threads = u64::from(r.spec.threads.max(1));
    let enough = |ops: u64| ops >= MIN_OPS_PER_THREAD * threads;
    let few = |ops: u64| {
        format!(
            "per-op kernel counts left out: {ops} ops on {threads} thread(s) are too few (under \
             {MIN_OPS_PER_THREAD} a thread) to tell the method's calls and switches from the run's own \
             start and end"
        )
    };
    if let Some(se) = k.value("raw_syscalls:sys_enter") {
        // iolab's clock reads, where each was a system call, are not the method's.
        let clock = k.tracepoint_pass_clock_calls.unwrap_or(0);
        match enough(tp_ops) {
            true => d.syscalls_per_op = per(se.saturating_sub(clock), tp_ops),
            false => d.crosscheck.push(few(tp_ops)),
        }
    }
    let submitted = k
        .value(iolab_engine::measure::counters::SUBMIT)
        .or(k.value(iolab_engine::measure::counters::SUBMIT_OLD));
    if let (Some(req), Some(enters)) = (submitted, k.syscall("io_uring_enter")) {
        if r.spec.method.info().io_uring_requests {
            d.kernel_requests_per_enter = per(req, enters);
        }
    }
    if let (Some(e), Some(q)) = (r.syscalls.uring_enters, r.syscalls.uring_requests) {
        d.iolab_requests_per_enter = per(q, e);
    }
    // Where the kernel has neither submission tracepoint, the requests iolab itself submitted in the
    // counted pass are the denominator.
    let requests = submitted.or(k
        .tracepoint_pass_uring_requests
        .filter(|_| r.spec.method.info().io_uring_requests));
    if let (Some(req), Some(punt)) = (requests, k.value("io_uring:io_uring_queue_async_work")) {
        if req > 0 {
            d.punted_fraction = Some(punt as f64 / req as f64);
        }
    }
    cpu_figures(r, &mut d);
    // As rows compute it (`Row::tsc_ghz`).
    d.cycles_per_op = (r.clock.kind == iolab_engine::measure::clock::ClockKind::Tsc)
        .then(|| r.ns_per_op * (r.clock.hz / 1e9));
    if let Some(cs) = k.value("context-switches") {
        match enough(r.ops) {
            true => d.ctx_switches_per_op = per(cs, r.ops),
            false if d.crosscheck.is_empty() => d.crosscheck.push(few(r.ops)),
            false => {}
        }
    }
    if let (Some(mi), Some(ma)) = (k.value("minor-faults"), k.value("major-faults")) {
        let mib = r.bytes as f64 / (1u64 << 20) as f64;
        if mib > 0.0 {
            d.page_faults_per_mib = Some((mi + ma) as f64 / mib);
        }
    }
    // Cross-checks: what the kernel saw against what iolab knows it did in the counted pass.
    if let (Some(req), Some(mine)) = (submitted, k.tracepoint_pass_uring_requests) {
        d.crosscheck.push(if req == mine {
            format!("io_uring requests: the kernel took {req}, iolab submitted {mine}: agree")
        } else {
            format!("io_uring requests: the kernel took {req}, iolab submitted {mine}: DISAGREE")
        });
    }
    if let (Some(enters_k), Some(enters_mine)) =
        (k.syscall("io_uring_enter"), k.tracepoint_pass_uring_enters)
    {
        if r.spec.method.info().io_uring_requests {
            d.crosscheck.push(format!(
                "io_uring_enter calls: kernel {enters_k}, iolab {enters_mine}{}",
                if enters_k == enters_mine {
                    ": agree"
                } else {
                    ""
                }
            ));
        }
    }
    let call = r
        .spec
        .method
        .info()
        .per_op_call
        .and_then(|(w, rd)| match r.spec.op {
            OpKind::Write => Some(w),
            OpKind::Read => Some(rd),
            // Each direction has its own call: the mixed figures cross-check them.
            OpKind::Mixed => None,
        });
    if let (Some(name), Some(n)) = (call, call.and_then(|c| k.syscall(c))) {
        d.crosscheck.push(format!(
            "{name} calls: kernel {n}, ops {tp_ops}{}",
            if n >= tp_ops { "" } else { ": FEWER than ops" }
        ));
    }
    // The sink driver's own counts of the timed pass against iolab's.
    if let Some(s) = &r.sink {
        d.crosscheck.extend(s.checks.iter().map(|c| c.text()));
    }
    d
}

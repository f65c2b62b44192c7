//! The body of an I/O run's table (every method but offload, see `offload.rs`), one function per section:
//! latency, CPU and scheduler, syscalls and io_uring, flushes, threads and verify, the profile, the
//! kernel's side, and the tail every run's table ends with.

use crate::cells::{dist_line, opt};
use iolab_engine::measure::counters::CounterValue;
use iolab_engine::result::{ProfileFigures, ProfileShare, RunResult, UringFigures};
use iolab_engine::units::thousands_u64;
use iolab_engine::units::{fmt_ns, fmt_size};
use std::fmt::Write;

/// Everything after the throughput line of a run that was not an offload run.
pub(crate) fn io_text(r: &RunResult, o: &mut String) {
    match &r.sparse_clock {
        // --latency-sample N: the sampled ops' latency, said to be theirs.
        Some(sc) if sc.sampled && !r.latency.is_empty() => {
            o.push_str(&dist_line("latency", &r.latency));
            let _ = writeln!(
                o,
                "             of one op in {} timed on its own ({}); no gap between op starts (it \
                 needs each op timed)",
                thousands_u64(sc.every),
                sc.chosen
            );
        }
        Some(sc) => {
            let _ = writeln!(o, "latency      unavailable: {}", sc.latency_unavailable);
        }
        None => {
            o.push_str(&dist_line("latency", &r.latency));
            o.push_str(&dist_line("gap", &r.gap));
        }
    }
    if let Some(l) = &r.layers {
        layers_text(l, r.spec.op.writes(), o);
    }
    if let Some(m) = &r.mixed {
        mixed_text(m, r.sparse_clock.is_none(), o);
    }
    if let Some(p) = &r.paced {
        paced_text(p, r.ops / u64::from(r.spec.threads.max(1)), o);
    }
    if let Some(a) = r.access.as_ref().filter(|a| a.distribution != "uniform") {
        let _ = writeln!(
            o,
            "access       {}: {} accesses hit {} of {} blocks; the hottest tenth of those hit took {:.1}% of \
             the accesses (each thread's plan replayed)",
            a.distribution,
            thousands_u64(a.accesses),
            thousands_u64(a.distinct_blocks),
            thousands_u64(a.region_blocks),
            a.hottest_tenth_share * 100.0
        );
    }
    cpu_text(r, o);
    scheduler_text(r, o);
    syscalls_text(r, o);
    if let Some(u) = &r.uring {
        uring_text(u, o);
    }
    crate::sink::sink_text(r, o);
    let _ = writeln!(o, "             ({})", r.syscalls.note);
    if let Some(p) = &r.iopoll {
        iopoll_text(p, o);
    }
    flushes_threads_verify_text(r, o);
    if let Some(m) = &r.memory {
        let _ = writeln!(
            o,
            "memory       limit {}: page cache {} at the end of the timed pass, peak {}; over the pass the limit \
             was hit {} times and {}",
            iolab_engine::memlimit::describe(m),
            fmt_size(m.page_cache_end),
            m.peak.map_or("not reported".into(), fmt_size),
            thousands_u64(m.limit_hits),
            m.refaults.map_or(
                "the cgroup does not count evicted file pages read back".into(),
                |n| format!("{} evicted file pages were read back", thousands_u64(n))
            )
        );
        let cache = m.over_time.iter().map(|p| p.page_cache);
        if let (Some(lo), Some(hi), Some(last)) =
            (cache.clone().min(), cache.max(), m.over_time.last())
        {
            let _ = writeln!(
                o,
                "             every 100 ms: page cache {} to {}, reclaim took {} pages over the pass ({})",
                fmt_size(lo),
                fmt_size(hi),
                thousands_u64(last.reclaimed_pages),
                m.reclaim_scope
            );
        }
    }
    if let Some(p) = &r.profile {
        profile_text(p, o);
    }
    o.push_str(&kernel_text(r));
    tail_text(r, o);
}

/// `--layers`: an op's time by layer, what it adds up to, and the ops that made no request.
fn layers_text(l: &iolab_engine::result::LayerFigures, writes: bool, o: &mut String) {
    let mut extra = String::new();
    if l.ops_without_request > 0 {
        let _ = write!(
            extra,
            "; {} of the {} traced ops made no block request of their own ({})",
            thousands_u64(l.ops_without_request),
            thousands_u64(l.ops),
            if writes {
                "the page cache took them; writeback comes later"
            } else {
                "served from the page cache"
            }
        );
    }
    if l.ops_unmatched > 0 || l.lost_samples > 0 {
        let _ = write!(
            extra,
            "; {} ops left out (their events incomplete; {} events lost)",
            thousands_u64(l.ops_unmatched),
            thousands_u64(l.lost_samples)
        );
    }
    let _ = writeln!(
        o,
        "layers       per op: before the block layer {}, queued {}, device {}, after {} (p99 {}, {}, {}, {}), \
         {:.2} block requests; together {} in the untimed traced pass (the timed pass: {}){extra}",
        fmt_ns(l.before_ns),
        fmt_ns(l.queued_ns),
        fmt_ns(l.device_ns),
        fmt_ns(l.after_ns),
        fmt_ns(l.before_p99_ns),
        fmt_ns(l.queued_p99_ns),
        fmt_ns(l.device_p99_ns),
        fmt_ns(l.after_p99_ns),
        l.requests,
        fmt_ns(l.pass_mean_ns),
        match l.timed_mean_ns {
            Some(ns) => fmt_ns(ns),
            None => "no per-op latency".into(),
        }
    );
}

/// Fewer paced ops a thread than this cannot show that a pace holds: the verdict says so.
const FEW_PACED_OPS: u64 = 10;

/// `--rate-iops`: the pace asked, the slowest thread's, and the ops that started late; `per_thread`: the
/// ops each thread ran.
fn paced_text(p: &iolab_engine::result::PacedFigures, per_thread: u64, o: &mut String) {
    // Never "met" beside a rate below the one asked: one op at 10 a second in 0.15 s reached 6.7.
    let few = format!(
        "not judged, over {per_thread} op{} a thread only: too few to show that a pace holds",
        if per_thread == 1 { "" } else { "s" }
    );
    let _ = writeln!(
        o,
        "paced        {:.1} ops/s per thread asked, {:.1} reached by the slowest thread: {}; {} ops started \
         more than one interval late (largest lag {}); latency runs from when each op was due",
        p.rate_iops,
        p.achieved_iops,
        if per_thread < FEW_PACED_OPS {
            few.as_str()
        } else if p.met && p.achieved_iops < 0.99 * p.rate_iops {
            "met (the run's span holds fewer whole intervals: no op starts past the end of --duration)"
        } else if p.met {
            "met"
        } else {
            "NOT met (below 99%)"
        },
        thousands_u64(p.late_ops),
        fmt_ns(p.max_lag_ns)
    );
}

/// `--op mixed`: the reads and the writes apart, with the share of reads asked for.
fn mixed_text(m: &iolab_engine::result::MixedFigures, timed: bool, o: &mut String) {
    let dir = |name: &str, d: &iolab_engine::result::DirFigures| {
        let lat = if timed && d.latency.count > 0 {
            format!(
                "; latency mean {} p50 {} p99 {}",
                fmt_ns(d.latency.mean_ns),
                fmt_ns(d.latency.p50_ns),
                fmt_ns(d.latency.p99_ns)
            )
        } else {
            String::new()
        };
        format!(
            "{name} {} ({:.1}% of the ops, {:.1} MiB/s{lat})",
            thousands_u64(d.ops),
            d.share * 100.0,
            d.mib_s
        )
    };
    let _ = writeln!(
        o,
        "mixed        {}% reads asked: {}, {}",
        m.read_pct,
        dir("reads", &m.reads),
        dir("writes", &m.writes)
    );
}

/// `--iopoll`: polled or not, with the device's flag and interrupt lines.
fn iopoll_text(p: &iolab_engine::measure::iopoll::IopollFigures, o: &mut String) {
    let _ = writeln!(o, "iopoll       {}", p.verdict);
    if !p.lines.is_empty() {
        let l: Vec<String> = p
            .lines
            .iter()
            .map(|l| format!("{} +{}", l.name, l.after.saturating_sub(l.before)))
            .collect();
        let _ = writeln!(
            o,
            "             interrupts of {} over the timed span: {}",
            p.device,
            l.join(", ")
        );
    }
}

/// `--profile`: the event and the samples, the shares by group, the top 10 functions by self share, why
/// some frames have no names, and the profile's notes.
fn profile_text(p: &ProfileFigures, o: &mut String) {
    let _ = writeln!(
        o,
        "profile      {} pass, {} at {} Hz: {} samples, {} lost",
        p.pass,
        p.event,
        p.frequency_hz,
        thousands_u64(p.samples),
        thousands_u64(p.lost)
    );
    let share = |s: &ProfileShare| format!("{} {:.1}%", s.name, s.share * 100.0);
    if !p.groups.is_empty() {
        let g: Vec<String> = p.groups.iter().map(share).collect();
        let _ = writeln!(o, "             by group: {}", g.join(", "));
        let top: Vec<String> = p
            .top_self
            .iter()
            .take(10)
            .map(|s| {
                format!(
                    "{}{} {:.1}%",
                    s.name,
                    if s.kernel { " [k]" } else { "" },
                    s.share * 100.0
                )
            })
            .collect();
        let _ = writeln!(o, "             top functions (self): {}", top.join(", "));
    }
    for u in &p.unsymbolized {
        let _ = writeln!(o, "             unsymbolized: {u}");
    }
    for n in &p.notes {
        let _ = writeln!(o, "             note: {n}");
    }
}

/// Where the snapshots of the process's CPU time and the kernel counters lie well outside the timed span
/// (threads woken one by one and joined, or the loop's own setup around a span of a few ops): how far
/// apart they were read, so neither reads as the span's.
fn sampled_span_text(r: &RunResult) -> Option<String> {
    let s = r.cpu.sampled_span_s?;
    let around = match r.spec.threads {
        1 => "the loop's setup and end around it".to_string(),
        n => format!("the wake-up and join of its {n} threads"),
    };
    (s > r.wall_s * 1.25 && s - r.wall_s > 1e-6).then(|| {
        format!(
            "the process's CPU time and the kernel counters were read {} apart: the timed span ({}) and \
             {around}",
            fmt_ns(s * 1e9),
            fmt_ns(r.wall_s * 1e9),
        )
    })
}

/// CPU time of the process and the workers, the stream peer's, and the kernel's helper threads.
fn cpu_text(r: &RunResult, o: &mut String) {
    let c = &r.cpu;
    // CPU time is sampled per scheduler tick: over a short span it can exceed the wall time.
    let busy = match (
        c.cores_busy,
        iolab_engine::units::cpu_span_too_short(r.wall_s),
    ) {
        (Some(b), _) => format!("{b:.2} cores busy"),
        (None, Some(t)) => format!("span {t} for a share of the CPUs"),
        (None, None) => "no share of the CPUs".into(),
    };
    let w = &c.workers;
    let workers = match w.cpu_s {
        // The exact total first: the split is sampled per tick and can read 0 over a short span.
        // A thread's CPU time is read at its start and end, around the timed span: over a span of a few
        // ops, it holds more than the span could (2.9 µs of one thread's CPU in a 1.1 µs run).
        Some(cpu) => format!(
            "worker threads {} of CPU (user {:.3} s, sys {:.3} s by ticks{})",
            iolab_engine::units::fmt_ns(cpu * 1e9),
            w.user_s,
            w.sys_s,
            match cpu > r.wall_s * f64::from(r.spec.threads.max(1)) * 1.1 {
                true =>
                    "; more than the timed span holds: most of it spent around it, setup and end",
                false => "",
            },
        ),
        None => format!(
            "worker threads user {:.3} s, sys {:.3} s",
            w.user_s, w.sys_s
        ),
    };
    let _ = writeln!(
        o,
        "cpu          process user {:.3} s, sys {:.3} s ({busy}); {workers}",
        c.process.user_s, c.process.sys_s
    );
    if let Some(n) = sampled_span_text(r) {
        let _ = writeln!(o, "             {n}");
    }
    if let Some(to) = r.target.peer.as_ref().and_then(|p| p.remote.as_deref()) {
        let _ = writeln!(
            o,
            "             the remote peer {to} (not iolab's) acknowledged {} (TCP_INFO); its CPU is not counted",
            fmt_size(r.target.peer.as_ref().map_or(0, |p| p.bytes))
        );
    } else if let Some(p) = &r.target.peer {
        let _ = writeln!(
            o,
            "             iolab's stream peer threads: {} {}, user {:.3} s, sys {:.3} s",
            if r.spec.op == iolab_engine::spec::OpKind::Write {
                "received"
            } else {
                "sent"
            },
            fmt_size(p.bytes),
            p.user_s.unwrap_or_default(),
            p.sys_s.unwrap_or_default()
        );
    }
    if c.helpers.is_empty() {
        let _ = writeln!(
            o,
            "             kernel helper threads (iou-sqp/iou-wrk): none seen"
        );
    } else {
        let names: Vec<String> = c
            .helpers
            .iter()
            .map(|h| {
                let on = h
                    .oncpu_s
                    .map(|v| format!(", on-CPU {v:.3} s"))
                    .unwrap_or_default();
                format!("{} user {:.2} s sys {:.2} s{on}", h.comm, h.user_s, h.sys_s)
            })
            .collect();
        let _ = writeln!(
            o,
            "             kernel helper threads: {}",
            names.join("; ")
        );
    }
}

/// Context switches, page faults, runqueue wait and hypervisor steal.
fn scheduler_text(r: &RunResult, o: &mut String) {
    let c = &r.cpu;
    let _ = writeln!(
        o,
        "scheduler    context switches voluntary {}, involuntary {}; page faults minor {}, major {}; runqueue wait {}",
        c.process.voluntary_ctx_switches,
        c.process.involuntary_ctx_switches,
        c.process.minor_faults,
        c.process.major_faults,
        c.runqueue_wait_s.map_or("not counted by this kernel (no schedstat)".into(), |s| format!("{s:.3} s"))
    );
    let _ = writeln!(
        o,
        "steal        hypervisor steal during the run: {:.2} s on all CPUs{}",
        c.steal_all_cpus_s,
        c.steal_worker_cpus_s
            .map(|v| format!(", {v:.2} s on the worker CPU(s)"))
            .unwrap_or_else(|| " (workers changed CPU)".into())
    );
}

/// The method's own syscall count and the kernel's read/write counters.
fn syscalls_text(r: &RunResult, o: &mut String) {
    let sc = &r.syscalls;
    let mine = match (sc.method_count, sc.method_per_op) {
        (Some(n), Some(p)) => format!("{} by the method ({p:.3}/op)", thousands_u64(n)),
        _ => "not countable by iolab for this method".into(),
    };
    let kernel = match (&sc.kernel_rw, sc.kernel_rw_per_op) {
        (Some(k), per_op) => format!(
            "syscr {} syscw {} ({}/op), rchar {} wchar {}",
            thousands_u64(k.syscr),
            thousands_u64(k.syscw),
            per_op.map_or("-".into(), |p| format!("{p:.3}")),
            fmt_size(k.rchar),
            fmt_size(k.wchar)
        ),
        (None, _) => format!(
            "not counted: {}",
            sc.kernel_rw_unavailable
                .as_deref()
                .unwrap_or("no count recorded")
        ),
    };
    let _ = writeln!(
        o,
        "syscalls     {mine}; kernel's read/write counters: {kernel}"
    );
    if let Some(c) = sc.clock_calls {
        let _ = writeln!(
            o,
            "             and {} clock reads, each a clock_gettime system call ({:.3}/op), counted apart: \
             not the method's",
            thousands_u64(c),
            if r.ops > 0 { c as f64 / r.ops as f64 } else { 0.0 }
        );
    }
    if let Some(n) = r.nowait.as_ref().filter(|n| n.nowait) {
        let mut how = Vec::new();
        let eagain = n.would_block - n.partial - n.unsupported;
        if eagain > 0 {
            how.push(format!("EAGAIN {}", thousands_u64(eagain)));
        }
        if n.partial > 0 {
            how.push(format!("a short transfer {}", thousands_u64(n.partial)));
        }
        if n.unsupported > 0 {
            how.push(format!(
                "EOPNOTSUPP {}: this file cannot try without blocking",
                thousands_u64(n.unsupported)
            ));
        }
        let how = if how.is_empty() {
            String::new()
        } else {
            format!(
                " (RWF_NOWAIT answered {}; each was finished with a plain call)",
                how.join(", ")
            )
        };
        let _ = writeln!(
            o,
            "nowait       {} of {} ops would have blocked{how}. io_uring punts exactly such requests to io-wq",
            pct_text(n.would_block_share),
            thousands_u64(r.ops),
        );
    }
    method_figures(o, r);
}

/// The method's own figures, each as it names and explains itself.
fn method_figures(o: &mut String, r: &RunResult) {
    for (i, f) in r.method_figures.iter().enumerate() {
        let value = if f.value.fract() == 0.0 && (0.0..1e15).contains(&f.value) {
            thousands_u64(f.value as u64)
        } else {
            iolab_engine::units::thousands(f.value)
        };
        let head = if i == 0 { "method" } else { "" };
        let _ = writeln!(o, "{head:<12} {value} {} {}", f.unit, f.about);
    }
}

use iolab_engine::units::pct1 as pct_text;

/// A `(size, count)` histogram as "size:count ...", the first 12 sizes.
fn hist_text(h: &[(u32, u64)]) -> String {
    let mut v: Vec<String> = h
        .iter()
        .take(12)
        .map(|(k, n)| format!("{k}:{}", thousands_u64(*n)))
        .collect();
    if h.len() > 12 {
        v.push(format!("... {} more sizes", h.len() - 12));
    }
    v.join(" ")
}

/// What a ring shared by the threads cost (empty for per-thread rings).
fn ring_sharing_text(u: &UringFigures) -> String {
    match u.design.as_str() {
        "shared" => format!(
            "; one ring for all threads behind a mutex, found taken {} times",
            thousands_u64(u.lock_contended)
        ),
        "shared-submitter" => format!(
            "; one ring fed by a submitter thread: doorbells rung {}, worker sleeps {}{}",
            thousands_u64(u.doorbells),
            thousands_u64(u.worker_sleeps),
            u.submitter_cpu
                .map(|c| format!(
                    ", submitter CPU user {:.3} s sys {:.3} s",
                    c.user_s, c.sys_s
                ))
                .unwrap_or_default()
        ),
        _ => String::new(),
    }
}

/// SQPOLL's submissions without a syscall, wake-ups and full-queue waits (empty without SQPOLL).
fn sqpoll_text(u: &UringFigures) -> String {
    if u.setup.iter().any(|s| s == "SQPOLL") {
        format!(
            "; submissions with no syscall {}, SQ thread wake-ups {}, waits for a full SQ {}",
            thousands_u64(u.submissions_without_syscall),
            thousands_u64(u.sq_wakeups),
            thousands_u64(u.sq_full_waits)
        )
    } else {
        String::new()
    }
}

/// SEND_ZC's notifications, and --min-wait's waits for a batch of completions with those the minimum wait
/// cut short (empty without either).
fn min_wait_text(u: &UringFigures) -> String {
    let zc = if u.opcode == "SEND_ZC" {
        format!(
            "; zero-copy notifications {}, of which the kernel copied anyway {}",
            thousands_u64(u.zc_notifs),
            thousands_u64(u.zc_copied)
        )
    } else {
        String::new()
    };
    if u.min_waits == 0 {
        return zc;
    }
    zc + &format!(
        "; waits for a batch with a minimum wait {}, of which {} came back with fewer (the minimum ran out)",
        thousands_u64(u.min_waits),
        thousands_u64(u.min_waits_short)
    )
}

/// The io_uring rings: design, setup, enters and requests, batch and in-flight histograms.
fn uring_text(u: &UringFigures, o: &mut String) {
    let sharing = ring_sharing_text(u);
    let _ = writeln!(
        o,
        "io_uring     ring {}, {}setup [{}]{}; io_uring_enter calls {}, requests {}, mean batch {:.2}, big batches (>=32) {}{}{}{sharing}",
        if u.design.is_empty() { "per-thread" } else { u.design.as_str() },
        if u.opcode.is_empty() { String::new() } else { format!("opcode {}, ", u.opcode) },
        u.setup.join(", "),
        if u.refused.is_empty() {
            String::new()
        } else {
            format!(
                " (this kernel refused {} of the recommended ring: run without)",
                u.refused.join(", ")
            )
        },
        thousands_u64(u.enters),
        thousands_u64(u.requests),
        u.mean_batch,
        thousands_u64(u.big_batches),
        sqpoll_text(u),
        min_wait_text(u)
    );
    let _ = writeln!(
        o,
        "             batch sizes (requests per submission: count) {}",
        hist_text(&u.batch_histogram)
    );
    let _ = writeln!(
        o,
        "             in flight in one ring after a submission (depth: count) {}; mean {:.1} per ring{}",
        hist_text(&u.inflight_histogram),
        u.mean_inflight,
        u.mean_inflight_all_rings
            .filter(|a| (a - u.mean_inflight).abs() > 0.05)
            .map(|a| format!(", {a:.1} in all rings"))
            .unwrap_or_default()
    );
}

/// Flushes (when any), each thread's share (when more than one), and the --verify outcome.
fn flushes_threads_verify_text(r: &RunResult, o: &mut String) {
    if r.flushes.calls > 0 {
        let _ = writeln!(
            o,
            "flushes      {} calls, {} in total, longest {}",
            r.flushes.calls,
            iolab_engine::units::fmt_s(r.flushes.total_s),
            fmt_ns(r.flushes.max_ns)
        );
    }
    if r.per_thread.len() > 1 {
        for t in &r.per_thread {
            let _ = writeln!(
                o,
                "thread {:<5} {} ops in {}",
                t.thread,
                thousands_u64(t.ops),
                iolab_engine::units::fmt_s(t.wall_s)
            );
        }
    }
    if let Some(v) = &r.verify {
        let _ = writeln!(
            o,
            "verify       {} blocks ({}) {}, {} mismatch{}{}",
            thousands_u64(v.blocks_checked),
            fmt_size(v.bytes_checked),
            if r.spec.op == iolab_engine::spec::OpKind::Read {
                format!(
                    "{} and checked against iolab's pattern for seed {}",
                    // Read again after the run, or checked by the method as each arrived.
                    if v.read_back_s.is_some() {
                        "read again after the run"
                    } else {
                        "read"
                    },
                    r.spec.seed_text
                )
            } else {
                "read back".to_string()
            },
            v.mismatches,
            if v.mismatches == 1 { "" } else { "es" },
            if v.first_mismatch_offsets.is_empty() {
                String::new()
            } else {
                format!(" (first at byte offsets {:?})", v.first_mismatch_offsets)
            }
        );
    }
}

/// What every run's table ends with: what was timed and left out, fallbacks taken, notes.
pub(crate) fn tail_text(r: &RunResult, o: &mut String) {
    let _ = writeln!(o, "timed        {}", r.timed);
    let _ = writeln!(o, "excluded     {}", r.excluded);
    for f in &r.fallbacks {
        let _ = writeln!(o, "FALLBACK     {f}");
    }
    for n in &r.notes {
        let _ = writeln!(o, "note         {n}");
    }
}

/// A counter as "name value", or "name n/a (why)".
fn counter_text(c: &CounterValue) -> String {
    match (c.value, &c.unavailable) {
        (Some(v), _) => format!("{} {}", c.name, thousands_u64(v)),
        (None, Some(why)) => format!("{} n/a ({why})", c.name),
        (None, None) => format!("{} n/a", c.name),
    }
}

/// The kernel's side: counters, tracepoints, per-syscall breakdown, derived figures, cross-checks, findings.
pub fn kernel_text(r: &RunResult) -> String {
    let mut o = String::new();
    timed_pass_text(r, &mut o);
    tracepoints_text(r, &mut o);
    derived_text(r, &mut o);
    for f in &r.findings {
        let _ = writeln!(o, "FINDING      {}", f.text);
    }
    for n in &r.kernel.notes {
        let _ = writeln!(o, "note         {n}");
    }
    o
}

/// The perf software counters of the timed pass, then the counters it could not open and why.
fn timed_pass_text(r: &RunResult, o: &mut String) {
    let k = &r.kernel;
    let sw: Vec<String> = k
        .timed_pass
        .iter()
        .filter(|c| c.value.is_some())
        .map(counter_text)
        .collect();
    let _ = writeln!(
        o,
        "kernel       timed pass (perf software counters): {}",
        if sw.is_empty() {
            "none available".into()
        } else {
            sw.join(", ")
        }
    );
    let hw_missing: Vec<&CounterValue> =
        k.timed_pass.iter().filter(|c| c.value.is_none()).collect();
    if let Some(c) = hw_missing.first() {
        let names: Vec<&str> = hw_missing.iter().map(|c| c.name.as_str()).collect();
        let _ = writeln!(
            o,
            "             {}: {}",
            names.join(", "),
            c.unavailable.as_deref().unwrap_or("n/a")
        );
    }
}

/// The tracepoints and the syscalls by name, or why they were not counted.
fn tracepoints_text(r: &RunResult, o: &mut String) {
    let k = &r.kernel;
    match &k.tracepoint_pass {
        Some(pass) => {
            let tp: Vec<String> = k.tracepoints.iter().map(counter_text).collect();
            let _ = writeln!(
                o,
                "             tracepoints, from {pass} ({} ops): {}",
                k.tracepoint_pass_ops.map(thousands_u64).unwrap_or_default(),
                tp.join(", ")
            );
            if !k.syscalls_by_name.is_empty() {
                syscalls_by_name_text(&k.syscalls_by_name, o);
            }
        }
        None => {
            let why = k
                .tracepoints
                .iter()
                .find_map(|c| c.unavailable.clone())
                .unwrap_or_else(|| "--count none".into());
            let _ = writeln!(o, "             tracepoints not counted: {why}");
        }
    }
}

/// The 8 syscalls made most, with their shares, and how many more there were.
fn syscalls_by_name_text(by_name: &[(String, u64)], o: &mut String) {
    let total: u64 = by_name.iter().map(|(_, v)| v).sum();
    let top: Vec<String> = by_name
        .iter()
        .take(8)
        .map(|(n, v)| {
            format!(
                "{n} {} ({:.1}%)",
                thousands_u64(*v),
                *v as f64 * 100.0 / total.max(1) as f64
            )
        })
        .collect();
    let more = by_name.len().saturating_sub(8);
    let _ = writeln!(
        o,
        "             syscalls by name: {}{}",
        top.join(", "),
        if more > 0 {
            format!(", and {more} more")
        } else {
            String::new()
        }
    );
}

/// The figures derived from the kernel's counts, and the cross-checks against iolab's own.
fn derived_text(r: &RunResult, o: &mut String) {
    let d = &r.derived;
    let _ = writeln!(
        o,
        "derived      syscalls/op {} | requests per io_uring_enter: kernel {}, iolab {} | punted to io-wq {} | context switches/op {} | page faults/MiB {}",
        opt(d.syscalls_per_op, 3),
        opt(d.kernel_requests_per_enter, 2),
        opt(d.iolab_requests_per_enter, 2),
        d.punted_fraction.map(|p| format!("{:.0}%", p * 100.0)).unwrap_or_else(|| "-".into()),
        opt(d.ctx_switches_per_op, 3),
        opt(d.page_faults_per_mib, 1)
    );
    for c in &d.crosscheck {
        let _ = writeln!(o, "crosscheck   {c}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A worker's CPU time read around a span of a few ops is said to hold more than the span.
    #[test]
    fn worker_cpu_beyond_the_timed_span_is_said_to_be_around_it() {
        let mut r = crate::fields::tests::full_run();
        r.spec.threads = 1;
        r.wall_s = 1.1e-6;
        r.cpu.workers.cpu_s = Some(2.9e-6);
        let mut o = String::new();
        cpu_text(&r, &mut o);
        assert!(o.contains("worker threads 2.9 µs of CPU (user "), "{o}");
        assert!(o.contains("more than the timed span holds"), "{o}");
        r.wall_s = 1e-3;
        r.cpu.workers.cpu_s = Some(0.9e-3);
        let mut o = String::new();
        cpu_text(&r, &mut o);
        assert!(!o.contains("more than the timed span"), "{o}");
    }
}

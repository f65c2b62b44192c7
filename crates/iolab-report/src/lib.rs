//! Exporters behind one trait, each returning bytes (hyperfine's `export/` shape): a readable table for
//! stdout and the JSON document whose schema is `iolab_core::result::RunResult` / `SurveyResult`.

pub mod html;
pub mod probe;

use iolab_core::measure::hist::Summary;
use iolab_core::result::RunResult;
use iolab_core::spec::MethodKind;
use iolab_core::survey::{SurveyResult, SurveyRun};
use iolab_core::target::TargetKind;
use iolab_core::units::{fmt_ns, fmt_size};
use std::fmt::Write;

pub trait Exporter {
    fn run(&self, r: &RunResult) -> Vec<u8>;
    fn survey(&self, s: &SurveyResult) -> Vec<u8>;
}

/// Pretty JSON, exactly the serde structs.
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn run(&self, r: &RunResult) -> Vec<u8> {
        let mut v = serde_json::to_vec_pretty(r).expect("results serialize");
        v.push(b'\n');
        v
    }
    fn survey(&self, s: &SurveyResult) -> Vec<u8> {
        let mut v = serde_json::to_vec_pretty(s).expect("results serialize");
        v.push(b'\n');
        v
    }
}

/// Human-readable tables.
pub struct TableExporter;

fn target_label(r: &RunResult) -> String {
    let k = match r.target.kind {
        TargetKind::File => {
            if r.target.created {
                "file iolab created"
            } else {
                "existing file"
            }
        }
        TargetKind::DevNull => "write sink",
        TargetKind::DevZero => "read source",
        TargetKind::BlockDevice => "block device",
        TargetKind::Pipe => "a pipe per thread to iolab's peer",
        TargetKind::Socketpair => "an AF_UNIX socketpair per thread to iolab's peer",
        TargetKind::Tcp => "a TCP connection over 127.0.0.1 per thread to iolab's peer",
    };
    format!("{} ({k})", r.spec.target.display())
}

fn dist_line(name: &str, s: &Summary) -> String {
    if s.count == 0 {
        return format!("{name:<12} (no values)\n");
    }
    format!(
        "{name:<12} mean {}  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  ({} values)\n",
        fmt_ns(s.mean_ns),
        fmt_ns(s.p50_ns),
        fmt_ns(s.p90_ns),
        fmt_ns(s.p99_ns),
        fmt_ns(s.p999_ns),
        fmt_ns(s.max_ns),
        s.count
    )
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn rate(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2} M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1} k", v / 1e3)
    } else {
        format!("{v:.1} ")
    }
}

/// Syscalls per op as the survey shows it: the method's own count, or the kernel's (marked `k`) where the
/// method cannot know (stdio).
pub fn syscalls_per_op(r: &RunResult) -> String {
    match r.syscalls.method_per_op {
        Some(v) => format!("{v:.3}"),
        None => format!("{:.3}k", r.syscalls.kernel_rw_per_op),
    }
}

impl TableExporter {
    pub fn run_text(&self, r: &RunResult) -> String {
        let s = &r.spec;
        let mut o = String::new();
        let amount = match (s.ops, s.duration_s) {
            (Some(n), Some(d)) => format!("{} ops or {d} s, whichever first", thousands(n)),
            (Some(n), None) => format!("{} ops", thousands(n)),
            (None, Some(d)) => format!("{d} s"),
            (None, None) => String::new(),
        };
        let mut extra = Vec::new();
        if s.direct {
            extra.push("O_DIRECT".to_string());
        }
        match s.method {
            MethodKind::IoUring => extra.push(format!("qd {} batch {}", s.qd, s.batch)),
            MethodKind::Vectored => extra.push(format!("{} iovecs", s.iovecs)),
            MethodKind::Stdio => extra.push(format!(
                "stdio buffer {} (_IOFBF)",
                fmt_size(s.stdio_buffer)
            )),
            _ => {}
        }
        let _ = writeln!(
            o,
            "iolab run: {} {} {} {} -> {}, {} thread{}, {}{}",
            s.method.name(),
            {
                let op = if s.op == iolab_core::spec::OpKind::Write {
                    "write"
                } else {
                    "read"
                };
                if s.ring.nop_requests {
                    format!("NOP requests (no data moved) in place of {op}")
                } else {
                    op.to_string()
                }
            },
            fmt_size(s.bs),
            s.pattern.name(),
            target_label(r),
            s.threads,
            if s.threads == 1 { "" } else { "s" },
            amount,
            if extra.is_empty() {
                String::new()
            } else {
                format!(", {}", extra.join(", "))
            }
        );
        let _ = writeln!(
            o,
            "clock        {}; one read costs {:.1} ns ({:.0} ticks median, {:.1} mean)",
            r.clock.description,
            r.clock.overhead_ns,
            r.clock.overhead_ticks_median,
            r.clock.overhead_ticks_mean
        );
        let _ = writeln!(
            o,
            "throughput   {} ops, {} in {:.4} s: {}IOPS, {:.1} MiB/s, {} per op (wall / ops)",
            thousands(r.ops),
            fmt_size(r.bytes),
            r.wall_s,
            rate(r.iops),
            r.mib_s,
            fmt_ns(r.ns_per_op)
        );
        if let Some(of) = &r.offload {
            offload_text(r, of, &mut o);
            return o;
        }
        o.push_str(&dist_line("latency", &r.latency));
        o.push_str(&dist_line("gap", &r.gap));
        let c = &r.cpu;
        let _ = writeln!(
            o,
            "cpu          process user {:.3} s, sys {:.3} s ({:.2} cores busy); worker threads user {:.3} s, sys {:.3} s",
            c.process.user_s, c.process.sys_s, c.cores_busy, c.workers.user_s, c.workers.sys_s
        );
        if let Some(p) = &r.target.peer {
            let _ = writeln!(
                o,
                "             iolab's stream peer threads: {} {}, user {:.3} s, sys {:.3} s",
                if r.spec.op == iolab_core::spec::OpKind::Write {
                    "received"
                } else {
                    "sent"
                },
                fmt_size(p.bytes),
                p.user_s,
                p.sys_s
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
        let _ = writeln!(
            o,
            "scheduler    context switches voluntary {}, involuntary {}; page faults minor {}, major {}; runqueue wait {:.3} s",
            c.process.voluntary_ctx_switches,
            c.process.involuntary_ctx_switches,
            c.process.minor_faults,
            c.process.major_faults,
            c.runqueue_wait_s
        );
        let _ = writeln!(
            o,
            "steal        hypervisor steal during the run: {:.2} s on all CPUs{}",
            c.steal_all_cpus_s,
            c.steal_worker_cpus_s
                .map(|v| format!(", {v:.2} s on the worker CPU(s)"))
                .unwrap_or_else(|| " (workers changed CPU)".into())
        );
        let sc = &r.syscalls;
        let mine = match (sc.method_count, sc.method_per_op) {
            (Some(n), Some(p)) => format!("{} by the method ({p:.3}/op)", thousands(n)),
            _ => "not countable by iolab for this method".into(),
        };
        let _ = writeln!(
            o,
            "syscalls     {mine}; kernel's read/write counters: syscr {} syscw {} ({:.3}/op), rchar {} wchar {}",
            thousands(sc.kernel_rw.syscr),
            thousands(sc.kernel_rw.syscw),
            sc.kernel_rw_per_op,
            fmt_size(sc.kernel_rw.rchar),
            fmt_size(sc.kernel_rw.wchar)
        );
        if let Some(u) = &r.uring {
            let hist = |h: &[(u32, u64)]| {
                let mut v: Vec<String> = h
                    .iter()
                    .take(12)
                    .map(|(k, n)| format!("{k}:{}", thousands(*n)))
                    .collect();
                if h.len() > 12 {
                    v.push(format!("... {} more sizes", h.len() - 12));
                }
                v.join(" ")
            };
            let sharing = match u.design.as_str() {
                "shared" => format!(
                    "; one ring for all threads behind a mutex, found taken {} times",
                    thousands(u.lock_contended)
                ),
                "shared-submitter" => format!(
                    "; one ring fed by a submitter thread: doorbells rung {}, worker sleeps {}{}",
                    thousands(u.doorbells),
                    thousands(u.worker_sleeps),
                    u.submitter_cpu
                        .map(|c| format!(
                            ", submitter CPU user {:.3} s sys {:.3} s",
                            c.user_s, c.sys_s
                        ))
                        .unwrap_or_default()
                ),
                _ => String::new(),
            };
            let _ = writeln!(
                o,
                "io_uring     ring {}, setup [{}]; io_uring_enter calls {}, requests {}, mean batch {:.2}, big batches (>=32) {}{}{sharing}",
                if u.design.is_empty() { "per-thread" } else { u.design.as_str() },
                u.setup.join(", "),
                thousands(u.enters),
                thousands(u.requests),
                u.mean_batch,
                thousands(u.big_batches),
                if u.setup.iter().any(|s| s == "SQPOLL") {
                    format!(
                        "; submissions with no syscall {}, SQ thread wake-ups {}, waits for a full SQ {}",
                        thousands(u.submissions_without_syscall),
                        thousands(u.sq_wakeups),
                        thousands(u.sq_full_waits)
                    )
                } else {
                    String::new()
                }
            );
            let _ = writeln!(
                o,
                "             batch sizes (requests per submission: count) {}",
                hist(&u.batch_histogram)
            );
            let _ = writeln!(
                o,
                "             in flight after a submission (depth: count) {}; mean {:.1}",
                hist(&u.inflight_histogram),
                u.mean_inflight
            );
        }
        let _ = writeln!(o, "             ({})", sc.note);
        if r.flushes.calls > 0 {
            let _ = writeln!(
                o,
                "flushes      {} calls, {:.4} s in total, longest {}",
                r.flushes.calls,
                r.flushes.total_s,
                fmt_ns(r.flushes.max_ns)
            );
        }
        if r.per_thread.len() > 1 {
            for t in &r.per_thread {
                let _ = writeln!(
                    o,
                    "thread {:<5} {} ops in {:.4} s",
                    t.thread,
                    thousands(t.ops),
                    t.wall_s
                );
            }
        }
        if let Some(v) = &r.verify {
            let _ = writeln!(
                o,
                "verify       {} blocks ({}) read back, {} mismatch{}{}",
                thousands(v.blocks_checked),
                fmt_size(v.bytes_checked),
                v.mismatches,
                if v.mismatches == 1 { "" } else { "es" },
                if v.first_mismatch_offsets.is_empty() {
                    String::new()
                } else {
                    format!(" (first at byte offsets {:?})", v.first_mismatch_offsets)
                }
            );
        }
        o.push_str(&kernel_text(r));
        tail_text(r, &mut o);
        o
    }

    pub fn survey_text(&self, s: &SurveyResult) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "iolab survey: every method writing 4 B and 4 KiB blocks, {} ops or {} s per run, 1 thread",
            thousands(s.ops_per_run),
            s.max_s_per_run
        );
        let _ = writeln!(
            o,
            "host: {} | kernel {} | {} CPUs | clock: {} ({:.1} ns per read)",
            s.host.cpu_model,
            s.host.kernel_release,
            s.host.cpus_online,
            s.clock.description,
            s.clock.overhead_ns
        );
        for target in ["/dev/null", "file", "pipe"] {
            let title = match target {
                "file" => format!(
                    "a fresh {} MiB file on {} in {} (buffered writes through the page cache, no fsync)",
                    iolab_core::survey::SURVEY_FILE_SIZE >> 20,
                    s.file_fs,
                    s.file_dir
                ),
                "pipe" => "a pipe to a reading thread of iolab's (the stream's peer counts every byte)"
                    .to_string(),
                _ => "/dev/null (write sink)".to_string(),
            };
            if !s.runs.iter().any(|r| r.target == target) {
                continue;
            }
            let _ = writeln!(o, "\n== {title}: ranked by ns/op within each block size ==");
            let _ = writeln!(
                o,
                "{:>4}  {:<9} {:>6} {:>10} {:>10} {:>8} {:>8} {:>12} {:>10}",
                "rank", "method", "bs", "ns/op", "MiB/s", "user s", "sys s", "syscalls/op", "ops"
            );
            let mut unavailable: Vec<&SurveyRun> = Vec::new();
            for bs in iolab_core::survey::SURVEY_BS {
                let mut rows: Vec<&RunResult> = s
                    .runs
                    .iter()
                    .filter(|r| r.target == target && r.bs == bs)
                    .filter_map(|r| r.result.as_ref())
                    .collect();
                rows.sort_by(|a, b| a.ns_per_op.total_cmp(&b.ns_per_op));
                for (i, r) in rows.iter().enumerate() {
                    let _ = writeln!(
                        o,
                        "{:>4}  {:<9} {:>6} {:>10.1} {:>10.1} {:>8.3} {:>8.3} {:>12} {:>10}",
                        i + 1,
                        r.spec.method.name(),
                        fmt_size(bs),
                        r.ns_per_op,
                        r.mib_s,
                        r.cpu.process.user_s,
                        r.cpu.process.sys_s,
                        syscalls_per_op(r),
                        thousands(r.ops)
                    );
                }
                unavailable.extend(
                    s.runs
                        .iter()
                        .filter(|r| r.target == target && r.bs == bs && r.result.is_none()),
                );
            }
            for u in unavailable {
                let _ = writeln!(
                    o,
                    "  n/a  {:<9} {:>6}  {}",
                    u.method.name(),
                    fmt_size(u.bs),
                    u.unavailable.as_deref().unwrap_or("unavailable")
                );
            }
        }
        let _ = writeln!(
            o,
            "\nns/op: wall time of the run / ops (1 thread). user/sys: CPU seconds of the whole process during the run, \
             io_uring helper threads included. syscalls/op: counted by iolab; 'k' = counted by the kernel \
             (/proc/self/io syscr+syscw) where glibc decides (stdio). Excluded from timing: file creation, open, \
             mmap/ring setup. nop is the harness's own floor (no kernel call). The survey counts no kernel \
             tracepoints (releasing each takes up to a second here); `iolab run` shows the kernel's view: \
             syscalls by name, io_uring requests punted to io-wq, and findings."
        );
        let fallbacks: Vec<&String> = s
            .runs
            .iter()
            .filter_map(|r| r.result.as_ref())
            .flat_map(|r| r.fallbacks.iter())
            .collect();
        if let Some(f) = fallbacks.first() {
            let _ = writeln!(o, "FALLBACK: {f}");
        }
        o
    }
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map(|x| format!("{x:.digits$}"))
        .unwrap_or_else(|| "-".into())
}

/// The kernel's side: counters, tracepoints, per-syscall breakdown, derived figures, cross-checks, findings.
/// The body of an offload run's table: what a sandboxed client cost, and how its sandbox held.
fn offload_text(r: &RunResult, of: &iolab_core::result::OffloadFigures, o: &mut String) {
    let cyc = |v: Option<f64>| {
        v.map(|c| format!(" = {c:.0} TSC cycles"))
            .unwrap_or_default()
    };
    let _ = writeln!(
        o,
        "offload      path {}{}, batch {}; client pid {}{}; server{}",
        of.path,
        of.doorbell
            .as_ref()
            .map(|d| format!(" (doorbell {d})"))
            .unwrap_or_default(),
        of.batch,
        of.client_pid,
        of.client_cpu
            .map(|c| format!(" on CPU {c}"))
            .unwrap_or_default(),
        of.service_cpu
            .map(|c| format!(" on CPU {c}"))
            .unwrap_or_else(|| " unpinned".into())
    );
    let _ = writeln!(o, "sandbox      {}", of.sandbox);
    let _ = writeln!(o, "service      {}", of.service);
    let _ = writeln!(
        o,
        "round trip   {} per request{}; {} per batch of {}{}; {}{}",
        fmt_ns(of.ns_per_op),
        cyc(of.cycles_per_op),
        fmt_ns(of.round_trip_ns),
        of.batch,
        cyc(of.round_trip_cycles),
        rate(of.ops_per_s),
        if r.spec.ring.nop_requests {
            "NOP/s"
        } else {
            "requests/s"
        }
    );
    let w = &of.window_ns;
    if w.count > 0 {
        let _ = writeln!(
            o,
            "windows      per-request time of each {} ms window ({} windows, each request weighted): p50 {}  p90 {}  p99 {}  max {}",
            of.window_ms,
            thousands(of.windows),
            fmt_ns(w.p50_ns),
            fmt_ns(w.p90_ns),
            fmt_ns(w.p99_ns),
            fmt_ns(w.max_ns)
        );
    }
    let _ = writeln!(
        o,
        "seed         {}; here: {}",
        of.seed_note,
        match of.cycles_per_op {
            _ if !r.spec.ring.nop_requests => "this run moved data; the thesis timed NOPs".into(),
            Some(c) if of.batch == 1 => format!(
                "{c:.0} cycles per NOP round trip on the {} path ({:.2}x the thesis's native, {:.4}x its offloaded)",
                of.path,
                c / of.seed_native_cycles as f64,
                c / of.seed_offloaded_cycles as f64
            ),
            Some(c) => format!("{c:.0} cycles per request at batch {} (the thesis measured batch 1)", of.batch),
            None => "no cycles (the TSC is not iolab's clock here)".into(),
        }
    );
    let tasks: Vec<String> = of
        .service_tasks
        .iter()
        .map(|h| {
            format!(
                "{} {:.3} s",
                h.comm,
                h.oncpu_s.unwrap_or(h.user_s + h.sys_s)
            )
        })
        .collect();
    let _ = writeln!(
        o,
        "cpu          server {:.3} s on CPU = {:.2} of a core over the run{}; client user {:.3} s sys {:.3} s (its whole life); iolab process user {:.3} s sys {:.3} s",
        of.service_cpu_s,
        of.service_cpu_share,
        if tasks.is_empty() {
            String::new()
        } else {
            format!(" ({})", tasks.join(", "))
        },
        of.client_user_s,
        of.client_sys_s,
        r.cpu.process.user_s,
        r.cpu.process.sys_s
    );
    let _ = writeln!(
        o,
        "steal        hypervisor steal during the run: {:.2} s on all CPUs{}",
        r.cpu.steal_all_cpus_s,
        r.cpu
            .steal_worker_cpus_s
            .map(|v| format!(", {v:.2} s on the client's and server's CPUs"))
            .unwrap_or_default()
    );
    let _ = writeln!(
        o,
        "syscalls     client while timed: {} ({}); doorbells rung while timed {} (all told {}), server woken {}; client in its sandbox, all told: {}",
        thousands(of.client_syscalls_timed),
        r.syscalls.note,
        thousands(of.doorbells),
        thousands(of.doorbells_total),
        thousands(of.server_wakeups),
        thousands(of.client_syscalls_total)
    );
    let _ = writeln!(
        o,
        "             the kernel counted {} ({})",
        of.client_syscalls_kernel
            .map(thousands)
            .unwrap_or_else(|| "nothing".into()),
        of.client_syscalls_kernel_note
    );
    let _ = writeln!(
        o,
        "refusals     {}{}; canary page {}{}",
        thousands(of.refusals),
        of.broker_executed
            .map(|n| format!(" (broker executed {})", thousands(n)))
            .unwrap_or_default(),
        if of.canary_intact {
            "intact"
        } else {
            "CHANGED"
        },
        match of.unrelated_file_intact {
            Some(true) => ", unrelated file intact",
            Some(false) => ", unrelated file CHANGED",
            None => "",
        }
    );
    for a in &of.attacks {
        let extra = match (a.tries, a.refused_tries, a.original_ran) {
            (Some(t), Some(f), Some(k)) => format!(
                " ({t} tries: {f} refused as rewritten, {k} ran the NOP as published, {} ran a torn copy the policy allows)",
                a.other_allowed_ran.unwrap_or(0)
            ),
            _ => String::new(),
        };
        let _ = writeln!(
            o,
            "  attack     {}: {} -> {} {}{extra}",
            a.attack,
            a.request,
            if a.refused { "refused" } else { "NOT REFUSED" },
            if a.result < 0 {
                format!(
                    "({}, by {})",
                    iolab_core::sys::errno_name(-a.result as i32),
                    a.refused_by
                )
            } else {
                format!("(result {})", a.result)
            }
        );
    }
    if r.flushes.calls > 0 {
        let _ = writeln!(
            o,
            "flushes      {} fsync requests through the ring",
            r.flushes.calls
        );
    }
    if let Some(v) = &r.verify {
        let _ = writeln!(
            o,
            "verify       {} blocks ({}) checked{}, {} mismatch{}",
            thousands(v.blocks_checked),
            fmt_size(v.bytes_checked),
            if r.spec.op == iolab_core::spec::OpKind::Read {
                " by the client against the file's pattern as they arrived"
            } else {
                " after the run"
            },
            v.mismatches,
            if v.mismatches == 1 { "" } else { "es" }
        );
    }
    for f in &r.findings {
        let _ = writeln!(o, "FINDING      {}", f.text);
    }
    tail_text(r, o);
}

/// What every run's table ends with: what was timed and left out, fallbacks taken, notes.
fn tail_text(r: &RunResult, o: &mut String) {
    let _ = writeln!(o, "timed        {}", r.timed);
    let _ = writeln!(o, "excluded     {}", r.excluded);
    for f in &r.fallbacks {
        let _ = writeln!(o, "FALLBACK     {f}");
    }
    for n in &r.notes {
        let _ = writeln!(o, "note         {n}");
    }
}

pub fn kernel_text(r: &RunResult) -> String {
    let k = &r.kernel;
    let mut o = String::new();
    let show = |c: &iolab_core::measure::counters::CounterValue| match (c.value, &c.unavailable) {
        (Some(v), _) => format!("{} {}", c.name, thousands(v)),
        (None, Some(why)) => format!("{} n/a ({why})", c.name),
        (None, None) => format!("{} n/a", c.name),
    };
    let sw: Vec<String> = k
        .timed_pass
        .iter()
        .filter(|c| c.value.is_some())
        .map(show)
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
    let hw_missing: Vec<&iolab_core::measure::counters::CounterValue> =
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
    match &k.tracepoint_pass {
        Some(pass) => {
            let tp: Vec<String> = k.tracepoints.iter().map(show).collect();
            let _ = writeln!(
                o,
                "             tracepoints, from {pass} ({} ops): {}",
                k.tracepoint_pass_ops.map(thousands).unwrap_or_default(),
                tp.join(", ")
            );
            if !k.syscalls_by_name.is_empty() {
                let total: u64 = k.syscalls_by_name.iter().map(|(_, v)| v).sum();
                let top: Vec<String> = k
                    .syscalls_by_name
                    .iter()
                    .take(8)
                    .map(|(n, v)| {
                        format!(
                            "{n} {} ({:.1}%)",
                            thousands(*v),
                            *v as f64 * 100.0 / total.max(1) as f64
                        )
                    })
                    .collect();
                let more = k.syscalls_by_name.len().saturating_sub(8);
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
    for f in &r.findings {
        let _ = writeln!(o, "FINDING      {}", f.text);
    }
    for n in &k.notes {
        let _ = writeln!(o, "note         {n}");
    }
    o
}

impl Exporter for TableExporter {
    fn run(&self, r: &RunResult) -> Vec<u8> {
        self.run_text(r).into_bytes()
    }
    fn survey(&self, s: &SurveyResult) -> Vec<u8> {
        self.survey_text(s).into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}

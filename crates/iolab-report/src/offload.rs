//! The body of an offload run's table (`--method offload`), one function per section: what a sandboxed
//! client cost, and how its sandbox held.

use crate::table::tail_text;
use iolab_engine::offload::cycles::CycleDist;
use iolab_engine::result::{AttackOutcome, OffloadFigures, RunResult};
use iolab_engine::units::thousands_u64;
use iolab_engine::units::{fmt_ns, fmt_size};
use std::fmt::Write;

/// The body of an offload run's table: what a sandboxed client cost, and how its sandbox held.
pub(crate) fn offload_text(r: &RunResult, of: &OffloadFigures, o: &mut String) {
    setup_text(of, o);
    round_trip_text(r, of, o);
    client_cycles_text(r, of, o);
    seed_text(r, of, o);
    cpu_text(r, of, o);
    syscalls_text(r, of, o);
    refusals_text(of, o);
    for a in &of.attacks {
        attack_text(a, o);
    }
    flushes_verify_text(r, o);
    for f in &r.findings {
        let _ = writeln!(o, "FINDING      {}", f.text);
    }
    tail_text(r, o);
}

/// The path, where client and server ran, the sandbox and the service.
fn setup_text(of: &OffloadFigures, o: &mut String) {
    let _ = writeln!(
        o,
        "offload      path {}{}, batch {}{}; client pid {}{}; server{}",
        of.path,
        of.doorbell
            .as_ref()
            .map(|d| format!(" (doorbell {d})"))
            .unwrap_or_default(),
        of.batch,
        if of.no_user_data {
            ", NOP SQEs written without user_data"
        } else {
            ""
        },
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
}

/// Time per request and per round trip (in TSC cycles too), and the per-window percentiles.
fn round_trip_text(r: &RunResult, of: &OffloadFigures, o: &mut String) {
    let cyc = |v: Option<f64>| {
        v.map(|c| format!(" = {c:.0} TSC cycles"))
            .unwrap_or_default()
    };
    let _ = writeln!(
        o,
        "round trip   {} per request{}; {} per batch of {}{}; {}{}",
        fmt_ns(of.ns_per_op),
        cyc(of.cycles_per_op),
        fmt_ns(of.round_trip_ns),
        of.batch,
        cyc(of.round_trip_cycles),
        iolab_engine::units::fmt_ops_s(of.ops_per_s)
            .trim_end_matches(" ops/s")
            .to_string()
            + " ",
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
            thousands_u64(of.windows),
            fmt_ns(w.p50_ns),
            fmt_ns(w.p90_ns),
            fmt_ns(w.p99_ns),
            fmt_ns(w.max_ns)
        );
    }
}

/// What the client measured of itself: per request and per round trip, cycles and ns, and how often its
/// server was woken.
fn client_cycles_text(r: &RunResult, of: &OffloadFigures, o: &mut String) {
    let Some(c) = &of.client_cycles else {
        let _ = writeln!(
            o,
            "client       no cycles of its own: {}",
            of.client_cycles_note
        );
        return;
    };
    let ns = |v: Option<f64>| v.map(|n| format!(" = {}", fmt_ns(n))).unwrap_or_default();
    let dist = |d: &CycleDist| {
        format!(
            "p50 {}{}  p99 {}{}  mean {}{}",
            thousands_u64(d.p50_cycles),
            ns(d.p50_ns),
            thousands_u64(d.p99_cycles),
            ns(d.p99_ns),
            thousands_u64(d.mean_cycles.round() as u64),
            ns(d.mean_ns)
        )
    };
    let _ = writeln!(
        o,
        "client       its own RDTSC, cycles: per request {}; per round trip of {} {}; {} per {}          (round trip mean / {}){}; {}",
        dist(&c.requests),
        c.batch,
        dist(&c.round_trips),
        thousands_u64(c.per_request_cycles.round() as u64),
        if r.spec.ring.nop_requests { "NOP" } else { "request" },
        c.batch,
        ns(c.per_request_ns),
        of.client_cycles_note
    );
    let per = |n: u64| {
        if r.ops > 0 {
            format!("{:.2}", n as f64 / r.ops as f64)
        } else {
            "-".into()
        }
    };
    let _ = writeln!(
        o,
        "wake-ups     per request: server slept {} (its voluntary context switches: {}), doorbells {},          server woken by iolab {}{}",
        of.server_sleeps.map_or("-".into(), per),
        of.server_sleeps.map_or("not counted".into(), thousands_u64),
        per(of.doorbells),
        per(of.server_wakeups),
        if of.sq_sleep {
            "; --sq-sleep: the client let the SQ thread idle out before every round trip"
        } else {
            ""
        }
    );
}

/// The seed thesis's figures (Figure 4.3, with user_data), and this run's read against them.
fn seed_text(r: &RunResult, of: &OffloadFigures, o: &mut String) {
    let own = of
        .client_cycles
        .as_ref()
        .map(|c| c.round_trips.p50_cycles as f64);
    let _ = writeln!(
        o,
        "seed         {}; here: {}",
        of.seed_note,
        match own.or(of.cycles_per_op) {
            _ if !r.spec.ring.nop_requests => "this run moved data; the thesis timed NOPs".into(),
            Some(c) if of.batch == 1 => format!(
                "{c:.0} cycles per NOP round trip on the {} path{} ({:.2}x the thesis's native, {:.4}x its offloaded)",
                of.path,
                if own.is_some() { " (the client's p50)" } else { " (wall / ops)" },
                c / of.seed_native_cycles as f64,
                c / of.seed_offloaded_cycles as f64
            ),
            Some(c) if own.is_some() => format!(
                "{c:.0} cycles per round trip of {} NOPs at p50 (the thesis measured batch 1)",
                of.batch
            ),
            Some(c) => format!("{c:.0} cycles per request at batch {} (the thesis measured batch 1)", of.batch),
            None => "no cycles (the TSC is not iolab's clock on this machine)".into(),
        }
    );
}

/// CPU of the server, the client and iolab's process, and hypervisor steal.
fn cpu_text(r: &RunResult, of: &OffloadFigures, o: &mut String) {
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
        "cpu          server {:.3} s on CPU{}{}; client user {:.3} s sys {:.3} s (its whole life); iolab process user {:.3} s sys {:.3} s",
        of.service_cpu_s,
        match of.service_cpu_share {
            Some(s) => format!(" = {s:.2} of a core over the run"),
            None => format!(
                " (not put as a share of a core: {})",
                iolab_engine::units::cpu_span_too_short(r.wall_s)
                    .unwrap_or_else(|| "more than its threads could spend in the span".into())
            ),
        },
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
}

/// The client's system calls as it counted them and as the kernel did, doorbells and server wake-ups.
fn syscalls_text(r: &RunResult, of: &OffloadFigures, o: &mut String) {
    let _ = writeln!(
        o,
        "syscalls     client while timed: {} ({}); doorbells rung while timed {} (all told {}), server woken {}; client in its sandbox, all told: {}",
        thousands_u64(of.client_syscalls_timed),
        r.syscalls.note,
        thousands_u64(of.doorbells),
        thousands_u64(of.doorbells_total),
        thousands_u64(of.server_wakeups),
        thousands_u64(of.client_syscalls_total)
    );
    let _ = writeln!(
        o,
        "             the kernel counted {} ({})",
        of.client_syscalls_kernel
            .map(thousands_u64)
            .unwrap_or_else(|| "nothing".into()),
        of.client_syscalls_kernel_note
    );
}

/// Requests refused, the broker's executed count, and whether iolab's canary and unrelated file held.
fn refusals_text(of: &OffloadFigures, o: &mut String) {
    let _ = writeln!(
        o,
        "refusals     {}{}; canary page {}{}",
        thousands_u64(of.refusals),
        of.broker_executed
            .map(|n| format!(" (broker executed {})", thousands_u64(n)))
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
}

/// One forbidden request and what became of it.
fn attack_text(a: &AttackOutcome, o: &mut String) {
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
                iolab_sys::errno_name(-a.result as i32),
                a.refused_by
            )
        } else {
            format!("(result {})", a.result)
        }
    );
}

/// fsync requests through the ring (when any) and the --verify outcome.
fn flushes_verify_text(r: &RunResult, o: &mut String) {
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
            thousands_u64(v.blocks_checked),
            fmt_size(v.bytes_checked),
            if r.spec.op == iolab_engine::spec::OpKind::Read {
                " by the client against the file's pattern as they arrived"
            } else {
                " after the run"
            },
            v.mismatches,
            if v.mismatches == 1 { "" } else { "es" }
        );
    }
}

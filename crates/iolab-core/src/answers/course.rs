//! The course report's questions (He and Han, §6 and §10-11): why sync won in one throughput setting,
//! why IOPOLL showed no gain, what its syscall counts say, and why the shared ring lost.

use super::{ns, pct, thousands, x, Ctx, Reply};
use crate::findings_compare::Row;
use crate::spec::{MethodKind, RingDesign};

fn psync(r: &Row) -> bool {
    matches!(r.method(), Some(MethodKind::Psync | MethodKind::Sync))
}

fn uring(r: &Row) -> bool {
    r.method() == Some(MethodKind::IoUring)
}

/// This machine's O_DIRECT read latency on one thread (the one-thread sync row), if measured.
fn device_latency(c: &Ctx) -> Option<f64> {
    c.row(|r| psync(r) && r.threads == 1 && r.facts.direct && !r.facts.write)
        .map(|r| r.lat_mean_ns)
}

/// Why was sync faster in one throughput setting (Table 1)?
pub fn sync_won(c: &Ctx) -> Reply {
    let s = c.row(|r| psync(r) && r.threads > 1);
    let u = s.and_then(|s| c.row(|r| uring(r) && r.threads == s.threads));
    let (Some(s), Some(u)) = (s, u) else {
        return Reply::not_here(
            "This run has no many-thread sync row beside an io_uring row with as many threads."
                .into(),
            "the uring suite's Table 1 steps",
        );
    };
    let (is, iu) = (s.iops(), u.iops());
    let mut parts = vec![format!(
        "Here, {}: pread() made {is:.0} IOPS at {} mean latency, io_uring at QD {} made {iu:.0} \
         ({} pread()'s IOPS) at {}.",
        s.workload(),
        ns(s.lat_mean_ns),
        u.facts.qd,
        x(iu / is),
        ns(u.lat_mean_ns)
    )];
    if let Some(m) = u.mean_inflight.filter(|_| iu > 0.0) {
        let little = m / iu * 1e9;
        let agree = (0.67..1.5).contains(&(little / u.lat_mean_ns));
        parts.push(format!(
            "io_uring kept {m:.0} requests in flight on average ({} threads x QD {} allow {}); by Little's law \
             {m:.0} / {iu:.0} IOPS = {} per request in the kernel and the device{}. pread() keeps at most {} in \
             flight.",
            u.threads,
            u.facts.qd,
            u.threads * u.facts.qd,
            ns(little),
            if agree {
                ", close to its measured latency: its requests waited in the queue, and a latency timed from \
                 submission includes that wait"
                    .to_string()
            } else {
                format!(
                    "; its measured latency is {} that: it runs from the start of a request's submission round \
                     to iolab seeing its completion, so it also counts the waits for the round's other requests{}",
                    x(u.lat_mean_ns / little),
                    if u.threads > u.cpus {
                        format!(" and for a CPU ({} threads share {} CPUs)", u.threads, u.cpus)
                    } else {
                        String::new()
                    }
                )
            },
            s.threads
        ));
    }
    parts.push(if iu >= is {
        "So here io_uring did not lose: with requests that reach the device, more in flight means more done."
            .into()
    } else {
        format!(
            "Here too pread() won ({} io_uring's IOPS).",
            x(is / iu)
        )
    });
    if let (Some(d), Some(r8), Some(r1)) = (
        device_latency(c),
        c.seed("sync_8t_lat_us"),
        c.seed("sync_1t_lat_us"),
    ) {
        parts.push(format!(
            "This machine's 4 KiB O_DIRECT read takes {} on one thread; the report's sync reads took {r8} µs \
             (8 threads) and {r1} µs (1 thread), {} less: they cannot have reached a device, so its Table 1 set a \
             cache against a queue.",
            ns(d),
            x(d / (r1 * 1e3))
        ));
    }
    for p in c.published.iter().filter(|p| p.label.contains("Table 1")) {
        parts.push(format!("{}: {}.", p.label, p.verdict));
    }
    Reply::answered(parts.join(" "))
}

/// Why did IOPOLL show no gain (Table 2)?
pub fn iopoll_gain(c: &Ctx) -> Reply {
    let mut parts = Vec::new();
    if let (Some(i), Some(p)) = (c.seed("interrupt_lat_us"), c.seed("iopoll_lat_us")) {
        parts.push(format!(
            "The report: interrupt {i} µs, IOPOLL {p} µs per read ({:+.0}%).",
            (p / i - 1.0) * 100.0
        ));
        if let Some(d) = device_latency(c) {
            parts.push(format!(
                "Both are {} below this machine's O_DIRECT read latency ({}): its reads were served from a cache, \
                 so there was no device completion to poll for, and polling could only add its own cost.",
                x(d / (i * 1e3)),
                ns(d)
            ));
        }
    }
    // A row whose completions were proven polled first (an NVMe disk with poll queues), and the interrupt
    // row on the same device.
    let polled = |r: &Row| matches!(&r.facts.iopoll, Some((Some(true), _)));
    let poll = c
        .row(|r| uring(r) && r.iopoll && polled(r))
        .or_else(|| c.row(|r| uring(r) && r.iopoll));
    let int = poll
        .and_then(|p| c.row(|r| uring(r) && !r.iopoll && r.threads == 1 && r.place == p.place))
        .or_else(|| c.row(|r| uring(r) && !r.iopoll && r.threads == 1));
    match (int, poll, c.not_run("IOPOLL")) {
        (Some(i), Some(p), _) => {
            parts.push(format!(
                "Here: interrupt {} per read, IOPOLL {} ({}), CPU per op {} against {}.",
                ns(i.lat_mean_ns),
                ns(p.lat_mean_ns),
                x(p.lat_mean_ns / i.lat_mean_ns),
                i.cpu_ns_per_op().map(ns).unwrap_or_else(|| "-".into()),
                p.cpu_ns_per_op().map(ns).unwrap_or_else(|| "-".into())
            ));
            parts.extend(p.facts.iopoll.as_ref().map(|(pol, why)| match pol {
                Some(true) => format!("Polled for real: {why}."),
                Some(false) => format!("The IOPOLL row was not polled: {why}."),
                None => format!("Whether it polled: {why}."),
            }));
            Reply::answered(parts.join(" "))
        }
        (_, None, Some(why)) => {
            parts.push(format!("Here IOPOLL could not run: {why}."));
            Reply::not_here(
                parts.join(" "),
                "IOPOLL: this kernel's devices have no poll queues; an NVMe device with poll queues (as in issue \
                 16's guest, `iolab vm`) would show it",
            )
        }
        _ => Reply::not_here(
            parts.join(" "),
            "the uring suite's Table 2 io_uring rows, with and without iopoll",
        ),
    }
}

/// What do the syscall counts of Table 3 say?
pub fn syscall_reduction(c: &Ctx) -> Reply {
    let s = c.row(|r| psync(r) && r.threads > 1);
    let u = s.and_then(|s| c.row(|r| uring(r) && r.threads == s.threads));
    let (Some(s), Some(u)) = (s, u) else {
        return Reply::not_here(
            "This run has no many-thread sync row beside an io_uring row.".into(),
            "the uring suite's Table 1 steps",
        );
    };
    let calls = |r: &Row| r.facts.syscalls_per_op.or(r.calls_per_op);
    let mut parts = Vec::new();
    if let (Some(a), Some(b)) = (calls(s), calls(u)) {
        parts.push(format!(
            "Here, {} threads: pread() {a:.3} system calls per op, io_uring {b:.3} ({} fewer), counted in a \
             separate pass without slowing the timed one; the timed runs took {} and {} per op.",
            s.threads,
            pct(1.0 - b / a),
            ns(s.ns()),
            ns(u.ns())
        ));
    }
    if let (Some(ss), Some(us), Some(st), Some(ut)) = (
        c.seed("sync_syscalls"),
        c.seed("uring_syscalls"),
        c.seed("sync_s"),
        c.seed("uring_s"),
    ) {
        parts.push(format!(
            "The report counted {} against {} ({} fewer) under strace, whose cost per traced call made \
             sync take {} io_uring's time ({st} s against {ut} s), where its untraced Table 1 had sync ahead: \
             Table 3's IOPS measure strace's cost per call, not io_uring's advantage.",
            thousands(ss),
            thousands(us),
            pct(1.0 - us / ss),
            x(st / ut)
        ));
    }
    Reply::answered(parts.join(" "))
}

/// Where the shared ring lost to per-thread rings: at how many threads, by what IOPS ratio, with how many
/// mutex waits per op and requests in flight (shared, per-thread).
struct Loss {
    threads: u32,
    ratio: f64,
    waits: f64,
    in_shared: f64,
    in_per: f64,
}

/// "46,914 IOPS, 7.5 requests per submission, 41 in flight".
fn ring_desc(r: &Row) -> String {
    format!(
        "{} IOPS, {:.1} requests per submission, {:.0} in flight",
        thousands(r.iops()),
        r.mean_batch.unwrap_or(0.0),
        r.mean_inflight.unwrap_or(0.0)
    )
}

/// A sentence per thread count, and the largest thread count where the shared ring lost.
fn ring_sentences(c: &Ctx) -> (Vec<String>, Option<Loss>) {
    let mut parts = Vec::new();
    let mut lost = None;
    let mut threads: Vec<u32> = c.rows.iter().map(|r| r.threads).collect();
    threads.dedup();
    for t in threads {
        let of = |d: RingDesign| c.row(|r| uring(r) && r.threads == t && r.design == Some(d));
        let Some(per) = of(RingDesign::PerThread) else {
            continue;
        };
        let mut s = format!(
            "{t} thread{}: per-thread rings {}",
            if t == 1 { "" } else { "s" },
            ring_desc(per)
        );
        for (d, name) in [
            (RingDesign::Shared, "shared ring"),
            (RingDesign::SharedSubmitter, "shared-submitter"),
        ] {
            let Some(r) = of(d) else { continue };
            let ratio = r.iops() / per.iops();
            let waits = r.lock_contended.unwrap_or(0) as f64 / r.ops.max(1) as f64;
            if d == RingDesign::Shared && ratio < 0.83 {
                let inflight = |x: &Row| x.mean_inflight.unwrap_or(0.0);
                lost = Some(Loss {
                    threads: t,
                    ratio,
                    waits,
                    in_shared: inflight(r),
                    in_per: inflight(per),
                });
            }
            let lock = match r.lock_contended {
                Some(0) => ", its mutex never found taken".to_string(),
                Some(n) => format!(", its mutex found taken {n} times, {waits:.2} per op"),
                None => String::new(),
            };
            s += &format!(
                "; {name} {} ({} per-thread's IOPS{lock})",
                ring_desc(r),
                x(ratio)
            );
        }
        parts.push(s + ".");
    }
    (parts, lost)
}

/// The report's avg_batch, recomputed from its own counters.
fn integer_division(c: &Ctx) -> Option<String> {
    let (sc, sr) = (c.seed("shared_calls")?, c.seed("shared_reqs")?);
    let (pc, pr) = (c.seed("per_thread_calls")?, c.seed("per_thread_reqs")?);
    Some(format!(
        "The report's 'avg_batch=1' for the late shared ring is integer division of its own counters: {} / {} = \
         {:.2}, against {} / {} = {:.2} for per-thread rings: its batches did not collapse to one.",
        thousands(sr),
        thousands(sc),
        sr / sc,
        thousands(pr),
        thousands(pc),
        pr / pc
    ))
}

/// Why the shared ring lost, as far as its figures say.
fn loss_verdict(l: &Loss) -> String {
    let mut why = Vec::new();
    if l.waits >= 0.05 {
        why.push(format!(
            "its threads queued on the mutex ({:.2} waits per op): a thread holds it while it submits, reaps and \
             waits for its own completion, so the others cannot submit",
            l.waits
        ));
    }
    if l.in_shared < 0.8 * l.in_per {
        why.push(format!(
            "fewer requests were in flight ({:.0} against {:.0}), so the device had less to work on",
            l.in_shared, l.in_per
        ));
    }
    if why.is_empty() {
        format!(
            "At {} threads the shared ring made {} per-thread rings' IOPS, but neither the mutex ({:.2} waits per \
             op) nor the requests in flight ({:.0} against {:.0}) explain it here: repeat the run (a --quick run \
             is too short to tell).",
            l.threads,
            x(l.ratio),
            l.waits,
            l.in_shared,
            l.in_per
        )
    } else {
        format!(
            "At {} threads the shared ring made {} per-thread rings' IOPS: {}.",
            l.threads,
            x(l.ratio),
            why.join("; and ")
        )
    }
}

/// Why did the shared ring lose (Tables 4-6)?
pub fn shared_ring_lost(c: &Ctx) -> Reply {
    let (mut parts, lost) = ring_sentences(c);
    if parts.is_empty() {
        return Reply::not_here(
            "This run has no per-thread ring row to compare with.".into(),
            "the shared-ring suite's steps",
        );
    }
    parts.extend(integer_division(c));
    match lost {
        Some(l) => {
            parts.push(loss_verdict(&l));
            Reply::answered(parts.join(" "))
        }
        None => {
            parts.push(
                "Here the shared ring did not lose: the device's reads, not the submission path, set the pace, so \
                 the mutex had little to serialize."
                    .into(),
            );
            Reply::partly(
                parts.join(" "),
                "a CPU-bound target where contention can show (NOPs, page-cache hits) and a variant that keeps one \
                 request in flight per thread, which reproduces the report's serialization (issue 17, item 3)",
            )
        }
    }
}

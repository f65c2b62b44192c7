//! The course report's questions (He and Han, §6 and §10-11): why sync won in one throughput setting,
//! why IOPOLL showed no gain, what its syscall counts say, why the shared ring lost (`course_ring.rs`),
//! and its future work (§8.2: a QD sweep at batch = QD, and sync threads against one io_uring at the same
//! total in flight), each read from every row it generalises over.

use super::reply::{faster, is, ns, pct, thousands, x, Ctx, Reply};
use crate::findings_compare::Fig;
use crate::findings_compare::Row;
use iolab_engine::method::io_uring;

pub use super::course_ring::shared_ring_lost;

fn psync(r: &Row) -> bool {
    r.method().is_some_and(|m| m.info().plain)
}

fn uring(r: &Row) -> bool {
    is(r, &io_uring::INFO)
}

/// This machine's O_DIRECT read latency on one thread (the one-thread sync row), if measured.
fn device_latency(c: &Ctx) -> Option<f64> {
    c.row(|r| psync(r) && r.threads == 1 && r.facts.direct && !r.facts.write)
        .map(|r| r.cited(Fig::LatMeanNs))
}

/// One sync row against the io_uring row of as many threads: what each made, and why by Little's law.
fn pair_text(s: &Row, u: &Row) -> String {
    let (is, iu) = (s.iops(), u.iops());
    let mut parts = vec![format!(
        "{}: pread() made {} IOPS at {} mean latency, io_uring at QD {} made {} ({} pread()'s IOPS) at {}.",
        s.workload(),
        thousands(is),
        ns(s.cited(Fig::LatMeanNs)),
        u.cited(Fig::Qd),
        thousands(iu),
        x(iu / is),
        ns(u.cited(Fig::LatMeanNs))
    )];
    if let Some(m) = u.cited_opt(Fig::Inflight).filter(|_| iu > 0.0) {
        let little = m / iu * 1e9;
        let agree = (0.67..1.5).contains(&(little / u.cited(Fig::LatMeanNs)));
        parts.push(format!(
            "io_uring kept {m:.0} requests in flight on average ({} threads x QD {} allow {}); by Little's law \
             {m:.0} / {} IOPS = {} per request in the kernel and the device{}. pread() keeps at most {} in \
             flight.",
            u.cited(Fig::Threads),
            u.cited(Fig::Qd),
            u.threads * u.facts.qd,
            thousands(iu),
            ns(little),
            if agree {
                ", close to its measured latency: its requests waited in the queue, and a latency timed from \
                 submission includes that wait"
                    .to_string()
            } else if little > u.cited(Fig::LatMeanNs) {
                format!(
                    "; its measured latency is {} that: iolab counts the requests in flight at each submission, \
                     when the ring is fullest, so that mean overstates the depth the requests saw",
                    x(u.cited(Fig::LatMeanNs) / little)
                )
            } else {
                format!(
                    "; its measured latency is {} that: it runs from the start of a request's submission round \
                     to iolab seeing its completion, so it also counts the waits for the round's other requests{}",
                    x(u.cited(Fig::LatMeanNs) / little),
                    if u.threads > u.cpus {
                        u.cite_paths(&["host.cpus_online"]);
                        format!(" and for a CPU ({} threads share {} CPUs)", u.threads, u.cpus)
                    } else {
                        String::new()
                    }
                )
            },
            s.cited(Fig::Threads)
        ));
    }
    parts.join(" ")
}

/// Why was sync faster in one throughput setting (Table 1)? On the device (O_DIRECT) and from the page
/// cache, where the report's 0.6-1.4 µs sync reads must have come from.
pub fn sync_won(c: &Ctx) -> Reply {
    let pair = |direct: bool| {
        let s = c.row(|r| psync(r) && r.threads > 1 && r.facts.direct == direct)?;
        let u = c.row(|r| uring(r) && r.threads == s.threads && r.facts.direct == direct)?;
        Some((s, u))
    };
    let (dev, cache) = (pair(true), pair(false));
    if dev.is_none() && cache.is_none() {
        return Reply::not_here(
            "This run has no many-thread sync row beside an io_uring row with as many threads."
                .into(),
            "the uring suite's Table 1 steps",
        );
    }
    // Some(true): sync made more; Some(false): io_uring did; None: tied.
    let won = |(s, u): (&Row, &Row)| faster(s, u);
    let mut parts = Vec::new();
    if let Some(p) = dev {
        parts.push(format!("On the device (O_DIRECT), {}", pair_text(p.0, p.1)));
    }
    if let Some(p) = cache {
        parts.push(format!(
            "From the page cache (buffered reads of a file iolab had just written, every read a cache hit), {}",
            pair_text(p.0, p.1)
        ));
    }
    let tied: Vec<&str> = [(dev, "on the device"), (cache, "from the page cache")]
        .into_iter()
        .filter(|(p, _)| p.is_some_and(|p| won(p).is_none()))
        .map(|(_, w)| w)
        .collect();
    parts.push(match (dev.map(won), cache.map(won)) {
        (Some(Some(false)), Some(Some(true))) => format!(
            "So sync wins where every read is a page-cache hit ({} io_uring's IOPS: a read is a copy of a few \
             hundred ns, a CPU per thread does the work, and a deeper queue adds only its bookkeeping and queue \
             wait), and io_uring wins where reads reach the device ({} pread()'s IOPS), where more in flight means \
             more done: the report's Table 1 set a cache against a queue.",
            x(cache.map_or(1.0, |(s, u)| s.iops() / u.iops())),
            x(dev.map_or(1.0, |(s, u)| u.iops() / s.iops()))
        ),
        (_, Some(Some(true))) => "From the page cache sync won in this run too, as in the report's Table 1.".into(),
        (Some(Some(true)), _) => "In this run pread() won on the device too.".into(),
        _ if !tied.is_empty() => format!(
            "In this run neither won {}: the two made the same IOPS within what these runs can tell apart.",
            tied.join(" or ")
        ),
        _ => "In this run io_uring did not lose: with requests that reach the device, more in flight means more done."
            .into(),
    });
    if let (Some(d), Some(r8), Some(r1)) = (
        device_latency(c),
        c.seed("sync_8t_lat_us"),
        c.seed("sync_1t_lat_us"),
    ) {
        parts.push(format!(
            "This machine's 4 KiB O_DIRECT read takes {} on one thread; the report's sync reads took {r8} µs \
             (8 threads) and {r1} µs (1 thread), {} less: they cannot have reached a device. Reads that fast \
             are page-cache hits, or reads that moved nothing: a read at or past the end of its file returns 0 \
             bytes, and a failed one an error, in about the time of an empty system call, which a benchmark \
             that does not check each read's length counts as done.",
            ns(d),
            x(d / (r1 * 1e3))
        ));
    }
    for p in c.published_where(|p| p.label.contains("Table 1")) {
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
                "They are {} and {} below this machine's O_DIRECT read latency ({}). An IOPOLL ring takes only \
                 O_DIRECT reads (io_uring refuses a buffered one there), so these were no page-cache hits either: \
                 no device completes a read that fast, and the likeliest reads are ones that moved nothing (an \
                 error or an end of file the benchmark did not check), with no completion from a device to poll \
                 for, so polling could only add its own cost.",
                x(d / (i * 1e3)),
                x(d / (p * 1e3)),
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
                "In this run: interrupt {} per read, IOPOLL {} ({}), CPU per op {} against {}.",
                ns(i.cited(Fig::LatMeanNs)),
                ns(p.cited(Fig::LatMeanNs)),
                x(p.cited(Fig::LatMeanNs) / i.cited(Fig::LatMeanNs)),
                i.cpu_ns_per_op().map(ns).unwrap_or_else(|| "-".into()),
                p.cpu_ns_per_op().map(ns).unwrap_or_else(|| "-".into())
            ));
            if p.facts.iopoll.is_some() {
                p.cite_paths(&["iopoll.interrupts", "iopoll.completions"]);
            }
            parts.extend(p.facts.iopoll.as_ref().map(|(pol, why)| match pol {
                Some(true) => format!("Polled for real: {why}."),
                Some(false) => format!("The IOPOLL row was not polled: {why}."),
                None => format!("Whether it polled: {why}."),
            }));
            parts.extend(silently_unpolled(c, p));
            if polled(p) {
                Reply::answered(parts.join(" "))
            } else {
                Reply::partly(
                    parts.join(" "),
                    "an IOPOLL row proven polled: an NVMe device with poll queues (`iolab suite uring --vm`)",
                )
            }
        }
        (_, None, Some(why)) => {
            parts.push(format!("In this run IOPOLL could not run: {why}."));
            Reply::not_here(
                parts.join(" "),
                "IOPOLL: this kernel's devices have no poll queues; an NVMe device with poll queues (the guest of \
                 `iolab vm`: `iolab suite uring --vm`) would show it",
            )
        }
        _ => Reply::not_here(
            parts.join(" "),
            "the uring suite's Table 2 io_uring rows, with and without iopoll",
        ),
    }
}

/// An IOPOLL row the kernel accepted and completed by interrupt without saying so (older kernels do, on a
/// device without poll queues), said even when another row was polled for real: a setup flag is no
/// proof of polling, and a seed that trusted it may have timed interrupts twice.
fn silently_unpolled(c: &Ctx, shown: &Row) -> Option<String> {
    let r = c.row(|r| uring(r) && r.iopoll && matches!(&r.facts.iopoll, Some((Some(false), _))))?;
    r.cite_paths(&["iopoll.interrupts", "iopoll.completions"]);
    let why = r
        .facts
        .iopoll
        .as_ref()
        .map(|(_, w)| w.as_str())
        .unwrap_or("");
    let same = std::ptr::eq(r, shown);
    Some(format!(
        "{}the kernel accepted IORING_SETUP_IOPOLL and completed the reads by interrupt, without an error{}: \
         the flag alone proves no polling, so an IOPOLL figure that matches the interrupt one, like the \
         report's, may be interrupts timed twice.",
        if same {
            "So ".to_string()
        } else {
            format!("On {} ", r.place)
        },
        if same || why.is_empty() {
            String::new()
        } else {
            format!(" ({why})")
        }
    ))
}

/// "pread64 200,000, futex 26" of a row's kernel counts (the largest first, at most three).
fn calls_text(r: &Row) -> String {
    let mut v: Vec<&(String, u64)> = r
        .kernel_calls
        .iter()
        .filter(|(n, _)| n != "other")
        .collect();
    v.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    v.iter()
        .take(3)
        .map(|(n, c)| {
            r.cite_kernel_call(n);
            format!("{n} {}", thousands(*c as f64))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Table 3 as its own step: the kernel's totals over the same ops.
fn table3(c: &Ctx) -> Option<String> {
    let t3 = |f: &dyn Fn(&Row) -> bool| c.row(|r| r.step.contains("Table 3") && f(r));
    let (s, u) = (t3(&psync)?, t3(&uring)?);
    let (ts, tu) = (s.kernel_syscalls?, u.kernel_syscalls?);
    for r in [s, u] {
        r.cite_tracepoint("raw_syscalls:sys_enter");
        r.cite_paths(&[
            "kernel.tracepoint_pass_ops|ops",
            "kernel.tracepoint_pass_uring_enters",
        ]);
        r.cite_kernel_call("io_uring_enter");
    }
    s.cited(Fig::Threads);
    let enters = u
        .kernel_calls
        .iter()
        .find(|(n, _)| n == "io_uring_enter")
        .map(|(_, n)| *n);
    let mut o = format!(
        "Table 3 in this run, {} ops on {} threads, every system call counted by the kernel in an untimed pass of the \
         whole workload (raw_syscalls:sys_enter, strace -c's totals without the cost strace puts on each traced \
         call): pread() {} system calls ({}), io_uring {} ({}), {} fewer.",
        thousands(s.counted_ops.unwrap_or(s.ops) as f64),
        s.threads,
        thousands(ts as f64),
        calls_text(s),
        thousands(tu as f64),
        calls_text(u),
        pct(1.0 - tu as f64 / ts.max(1) as f64)
    );
    if let (Some(k), Some(mine)) = (enters, u.counted_enters) {
        o += &format!(
            " The kernel's io_uring_enter count ({}) is iolab's own count of the calls it made ({}), {} requests \
             per call.",
            thousands(k as f64),
            thousands(mine as f64),
            format_args!("{:.1}", u.counted_ops.unwrap_or(u.ops) as f64 / mine.max(1) as f64)
        );
    }
    o += &format!(
        " The timed passes, without tracepoints, took {} and {} ({:.0} and {:.0} IOPS).",
        secs(s.cited(Fig::WallS)),
        secs(u.cited(Fig::WallS)),
        s.iops(),
        u.iops()
    );
    Some(o)
}

fn secs(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else {
        format!("{:.1} ms", s * 1e3)
    }
}

/// What do the syscall counts of Table 3 say?
pub fn syscall_reduction(c: &Ctx) -> Reply {
    let mut parts: Vec<String> = table3(c).into_iter().collect();
    if parts.is_empty() {
        let s = c.row(|r| psync(r) && r.threads > 1);
        let u = s.and_then(|s| c.row(|r| uring(r) && r.threads == s.threads));
        let (Some(s), Some(u)) = (s, u) else {
            return Reply::not_here(
                "This run has no many-thread sync row beside an io_uring row.".into(),
                "the uring suite's Table 3 steps",
            );
        };
        let calls = |r: &Row| {
            r.cited_opt(Fig::SyscallsPerOp)
                .or(r.cited_opt(Fig::CallsPerOp))
        };
        if let (Some(a), Some(b)) = (calls(s), calls(u)) {
            parts.push(format!(
                "In this run, {} threads: pread() {a:.3} system calls per op, io_uring {b:.3} ({} fewer), counted in a \
                 separate pass without slowing the timed one; the timed runs took {} and {} per op.",
                s.threads,
                pct(1.0 - b / a),
                ns(s.ns()),
                ns(u.ns())
            ));
        }
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

/// The uring suite's QD sweep (batch = QD) and its second line (batch 1), by the start of their labels.
const SWEEP: &str = "QD sweep";
const AT_BATCH_1: &str = "Queue depths at batch 1";

/// The io_uring rows of the steps whose label starts with `step`, by depth.
fn depth_rows<'a>(c: &'a Ctx, step: &str) -> Vec<&'a Row> {
    let mut rows = c.rows_where(|r| uring(r) && r.step.starts_with(step));
    rows.sort_by_key(|r| r.facts.qd);
    rows
}

/// ", 0.13 io_uring_enter per op, 60.2 in flight" (what the row has of them).
fn counters(r: &Row) -> String {
    let mut s = String::new();
    if let Some(e) = r.cited_opt(Fig::CallsPerOp) {
        s += &format!(", {e:.2} io_uring_enter per op");
    }
    if let Some(i) = r.cited_opt(Fig::Inflight) {
        s += &format!(", {i:.1} in flight");
    }
    s
}

/// "QD 8: 70,000 IOPS at 900.0 µs, 0.13 io_uring_enter per op, 60.2 in flight" (the batch named where
/// it is not the depth).
fn depth_text(r: &Row) -> String {
    let mut s = format!(
        "QD {}: {} IOPS at {}",
        r.cited(Fig::Qd),
        thousands(r.iops()),
        ns(r.cited(Fig::LatMeanNs))
    );
    if r.batch != r.facts.qd {
        s += &format!(" (batch {})", r.cited(Fig::Batch));
    }
    s + &counters(r)
}

/// How IOPS moved between consecutive depths, runs of one direction merged: (first index, last index,
/// `Some(true)` rose, `Some(false)` fell, `None` held within what the runs can tell apart).
fn moves(rows: &[&Row]) -> Vec<(usize, usize, Option<bool>)> {
    let mut out: Vec<(usize, usize, Option<bool>)> = Vec::new();
    for i in 1..rows.len() {
        let d = faster(rows[i], rows[i - 1]);
        // A run of ties holds only while its first row and this one are still tied: small steps that add
        // up to a difference are not one "held".
        match out.last_mut() {
            Some(m) if m.2 == d && (d.is_some() || faster(rows[i], rows[m.0]).is_none()) => m.1 = i,
            _ => out.push((i - 1, i, d)),
        }
    }
    out
}

/// Why IOPS fell from row `a` to the deeper row `b`, from the counters both carry: the ones that rose
/// with the fall, or, where none did, that the rows do not say.
fn fall_why(a: &Row, b: &Row) -> String {
    let (mut why, mut not) = (Vec::new(), Vec::new());
    let up = |x: f64, y: f64| y > x * 1.2;
    if let (Some(x), Some(y)) = (a.cited_opt(Fig::CallsPerOp), b.cited_opt(Fig::CallsPerOp)) {
        let w = format!("io_uring_enter per op {x:.2} to {y:.2}");
        match up(x, y) {
            true => why.push(format!("each op took more system calls ({w})")),
            false => not.push(w),
        }
    }
    if let (Some(x), Some(y)) = (a.cited_opt(Fig::Punted), b.cited_opt(Fig::Punted)) {
        let w = format!("{} to {}", pct(x), pct(y));
        match y - x >= 0.05 {
            true => why.push(format!(
                "the kernel punted more of its requests to io-wq workers ({w}): a punted read waits for a \
                 worker thread to issue it"
            )),
            false => not.push(format!("punted to io-wq {w}")),
        }
    }
    // The io-wq workers' CPU, cited where it is said.
    // Per op: with the ops fixed, a slower run has more seconds of everything.
    let per_op = |r: &Row| r.facts.iowq_cpu_s / (r.ops.max(1) as f64);
    if up(per_op(a), per_op(b)) && b.facts.iowq_cpu_s >= 0.01 {
        let each = |r: &Row| ns(r.cited(Fig::IowqCpuS) * 1e9 / r.cited(Fig::Ops).max(1.0));
        why.push(format!(
            "io-wq workers used more CPU per op ({} to {})",
            each(a),
            each(b)
        ));
    }
    if let (Some(x), Some(y)) = (a.cpu_ns_per_op(), b.cpu_ns_per_op()) {
        let w = format!("CPU per op {} to {}", ns(x), ns(y));
        match up(x, y) {
            true => why.push(format!("each op cost more CPU ({w})")),
            false => not.push(w),
        }
    }
    let inflight = match (a.cited_opt(Fig::Inflight), b.cited_opt(Fig::Inflight)) {
        (Some(x), Some(y)) if y <= x * 1.1 => {
            format!("; the deeper queue put no more requests in flight ({x:.1} to {y:.1})")
        }
        (Some(x), Some(y)) => format!(
            "; requests in flight went from {x:.1} to {y:.1} and the mean latency from {} to {}",
            ns(a.cited(Fig::LatMeanNs)),
            ns(b.cited(Fig::LatMeanNs))
        ),
        _ => String::new(),
    };
    let causes = if why.is_empty() {
        format!(
            "no counter these rows carry rose with the fall{}: the rows do not say why",
            if !not.is_empty() {
                format!(" ({})", not.join(", "))
            } else {
                String::new()
            }
        )
    } else {
        why.join("; ")
    };
    format!("{causes}{inflight}")
}

/// "rose from QD 1 to QD 16 (2.3x), with more requests in flight (1.0 to 90.2)", "held ...", "fell ...:
/// why".
fn move_text(rows: &[&Row], (i, j, d): (usize, usize, Option<bool>)) -> String {
    let (a, b) = (rows[i], rows[j]);
    let head = |verb: &str| {
        format!(
            "{verb} from QD {} to QD {} ({})",
            a.cited(Fig::Qd),
            b.cited(Fig::Qd),
            x(b.iops() / a.iops().max(1e-9))
        )
    };
    let flight = (a.cited_opt(Fig::Inflight), b.cited_opt(Fig::Inflight));
    match d {
        Some(true) => match flight {
            (Some(x), Some(y)) if y > x => {
                format!(
                    "{}, with more requests in flight ({x:.1} to {y:.1})",
                    head("rose")
                )
            }
            _ => head("rose"),
        },
        Some(false) => format!("{}: {}", head("fell"), fall_why(a, b)),
        None => {
            let (la, lb) = (a.cited(Fig::LatMeanNs), b.cited(Fig::LatMeanNs));
            match flight {
                (Some(x), Some(y)) if y > x * 1.2 && lb > la * 1.2 => format!(
                    "{}, while requests in flight went from {x:.1} to {y:.1} and the mean latency from {} to \
                     {}: at one rate, more in flight is a longer wait (Little's law)",
                    head("held"),
                    ns(la),
                    ns(lb)
                ),
                _ => head("held"),
            }
        }
    }
}

/// The second line (batch 1) beside the sweep at each depth both ran, and at how many depths batch = QD
/// made more IOPS.
fn batch1_text(sweep: &[&Row], ones: &[&Row]) -> Option<String> {
    let pairs: Vec<(&Row, &Row)> = ones
        .iter()
        .filter_map(|o| {
            let s = sweep
                .iter()
                .find(|s| s.facts.qd == o.facts.qd && s.batch > o.batch)?;
            Some((*s, *o))
        })
        .collect();
    let (_, first) = pairs.first()?;
    let each: Vec<String> = pairs
        .iter()
        .map(|(s, o)| {
            format!(
                "QD {}: {} IOPS{} ({} batch = QD's)",
                o.cited(Fig::Qd),
                thousands(o.iops()),
                counters(o),
                x(o.iops() / s.iops().max(1e-9))
            )
        })
        .collect();
    let count = |w: Option<bool>| pairs.iter().filter(|(s, o)| faster(s, o) == w).count();
    Some(format!(
        "At batch {} (one request per io_uring_enter), the second line: {}. Batch = QD made more IOPS at {} \
         of {} depths, fewer at {} and tied at {}.",
        first.cited(Fig::Batch),
        each.join("; "),
        count(Some(true)),
        pairs.len(),
        count(Some(false)),
        count(None)
    ))
}

/// Table 1's io_uring row beside the sweep's point of the same depth and threads.
fn table1_text(c: &Ctx, deep: &Row) -> Option<String> {
    let t = c.row(|r| {
        uring(r)
            && r.step.starts_with("Table 1: io_uring")
            && r.facts.qd == deep.facts.qd
            && r.threads == deep.threads
            && r.facts.direct == deep.facts.direct
    })?;
    Some(format!(
        "Table 1's io_uring row, at the same depth with batch {}, made {} IOPS, {} the sweep's{}.",
        t.cited(Fig::Batch),
        thousands(t.iops()),
        x(t.iops() / deep.iops().max(1e-9)),
        match faster(t, deep) {
            None => ", a tie".to_string(),
            Some(_) => format!(
                ": the two differ in the batch ({} against {}) and in when they ran",
                t.batch,
                deep.cited(Fig::Batch)
            ),
        }
    ))
}

/// The QD sweep: each depth's IOPS, latency and counters, how IOPS moved with depth and why where it
/// fell, the batch-1 line beside it, and Table 1's row at the same depth.
fn sweep_text(c: &Ctx) -> Option<String> {
    let rows = depth_rows(c, SWEEP);
    let first = rows.first()?;
    let tied = rows.iter().all(|r| r.batch == r.facts.qd);
    let crowded = first.cpus > 0 && first.threads > first.cpus;
    if crowded {
        first.cite_paths(&["host.cpus_online"]);
    }
    let mut s = format!(
        "The QD sweep ({}{}, io_uring{}): {}.",
        first.workload(),
        if crowded {
            format!(" on {} CPUs", first.cpus)
        } else {
            String::new()
        },
        if tied {
            " at batch = QD on every point, the report's setting: up to the whole depth per io_uring_enter"
        } else {
            ", its batch named where it is not the depth"
        },
        rows.iter()
            .map(|r| depth_text(r))
            .collect::<Vec<_>>()
            .join("; ")
    );
    let mv = moves(&rows);
    if !mv.is_empty() {
        let said: Vec<String> = mv.iter().map(|m| move_text(&rows, *m)).collect();
        s += &format!(" IOPS {}.", said.join("; then "));
    }
    if mv.last().is_some_and(|m| m.2 == Some(true)) {
        s += &format!(
            " IOPS still grew up to the deepest queue measured (QD {}): this device took more in flight than \
             the sweep gave it.",
            rows[rows.len() - 1].cited(Fig::Qd)
        );
    }
    s.extend(batch1_text(&rows, &depth_rows(c, AT_BATCH_1)).map(|t| format!(" {t}")));
    s.extend(table1_text(c, rows[rows.len() - 1]).map(|t| format!(" {t}")));
    Some(s)
}

/// Each total in flight N: N pread() threads against one io_uring thread at depth N, with their CPU
/// per op.
fn equal_inflight_text(c: &Ctx) -> Option<String> {
    let step = |r: &Row| r.step.starts_with("Equal requests in flight");
    let mut pairs: Vec<(&Row, &Row)> = c
        .rows_where(|r| step(r) && uring(r) && r.threads == 1)
        .into_iter()
        .filter_map(|u| {
            let s = c.row(|r| step(r) && psync(r) && r.threads == u.facts.qd)?;
            Some((s, u))
        })
        .collect();
    pairs.sort_by_key(|(_, u)| u.facts.qd);
    if pairs.is_empty() {
        return None;
    }
    let cpu = |r: &Row| {
        r.cpu_ns_per_op()
            .map(ns)
            .unwrap_or_else(|| "unmeasured".into())
    };
    let each: Vec<String> = pairs
        .iter()
        .map(|(s, u)| {
            format!(
                "{} in flight: {} pread() threads made {} IOPS ({} CPU per op), one io_uring thread at QD {} \
                 made {} ({} pread()'s, {} CPU per op){}",
                u.cited(Fig::Qd),
                s.cited(Fig::Threads),
                thousands(s.iops()),
                cpu(s),
                u.facts.qd,
                thousands(u.iops()),
                x(u.iops() / s.iops().max(1e-9)),
                cpu(u),
                match faster(u, s) {
                    None => ", a tie".to_string(),
                    Some(_) => String::new(),
                }
            )
        })
        .collect();
    let won = pairs
        .iter()
        .filter(|(s, u)| faster(u, s) == Some(true))
        .count();
    let lost = pairs
        .iter()
        .filter(|(s, u)| faster(u, s) == Some(false))
        .count();
    let cheaper = pairs
        .iter()
        .filter(|(s, u)| match (u.cpu_ns_per_op(), s.cpu_ns_per_op()) {
            (Some(a), Some(b)) => a < b,
            _ => false,
        })
        .count();
    let tied = pairs.len() - won - lost;
    Some(format!(
        "At equal requests in flight ({}): {}. Of {n} totals, io_uring made more IOPS at {won}, fewer at {lost} \
         and tied at {tied}; it used less CPU per op at {cheaper}{}.",
        pairs[0].1.workload(),
        each.join("; "),
        if cheaper > 0 {
            ": one thread keeps N requests in flight without N threads' wake-ups and switches between them"
        } else {
            ""
        },
        n = pairs.len()
    ))
}

/// The report's future work (§8.2): how io_uring scales with queue depth, and sync threads against one
/// io_uring at the same total in flight.
pub fn future_work(c: &Ctx) -> Reply {
    let sweep = sweep_text(c);
    let equal = equal_inflight_text(c);
    match (sweep, equal) {
        (None, None) => Reply::not_here(
            "This run has neither the QD sweep's rows nor sync threads beside one io_uring thread at the same \
             total in flight."
                .into(),
            "the uring suite's QD sweep and equal-in-flight steps",
        ),
        (Some(s), Some(e)) => Reply::answered(format!("{s} {e}")),
        (Some(s), None) => Reply::partly(
            s,
            "the equal-in-flight step (sync threads against one io_uring thread at each total)",
        ),
        (None, Some(e)) => Reply::partly(
            e,
            "the QD sweep step (io_uring at 8 threads over QD 1-128, batch = QD)",
        ),
    }
}

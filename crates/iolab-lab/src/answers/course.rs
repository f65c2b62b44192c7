//! The course report's questions (He and Han, §6 and §10-11): why sync won in one throughput setting,
//! why IOPOLL showed no gain, what its syscall counts say, why the shared ring lost, and its future work
//! (§8.2: a QD sweep, and sync threads against one io_uring at the same total in flight).

use super::reply::{faster, is, ns, pct, thousands, x, Ctx, Reply, TIE_FRACTION};
use crate::findings_compare::Fig;
use crate::findings_compare::Row;
use iolab_engine::spec::RingDesign;

fn psync(r: &Row) -> bool {
    r.method().is_some_and(|m| m.info().plain)
}

fn uring(r: &Row) -> bool {
    is(r, "io_uring")
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

/// A shared design against per-thread rings on one workload (same step, threads and batch).
struct Versus<'a> {
    step: &'a str,
    threads: u32,
    batch: u32,
    per: &'a Row,
    shared: &'a Row,
    /// shared IOPS over per-thread IOPS.
    ratio: f64,
    /// Times a thread found the mutex taken, per op.
    waits: f64,
}

fn inflight(r: &Row) -> f64 {
    r.cited_opt(Fig::Inflight).unwrap_or(0.0)
}

/// Every shared ring beside the per-thread rings of its step, thread count and batch, in file order.
fn versus<'a>(c: &'a Ctx) -> Vec<Versus<'a>> {
    let mut out = Vec::new();
    for shared in c.rows_where(|r| uring(r) && r.design == Some(RingDesign::Shared)) {
        let Some(per) = c.row(|r| {
            uring(r)
                && r.design == Some(RingDesign::PerThread)
                && r.step == shared.step
                && r.threads == shared.threads
                && r.batch == shared.batch
                && r.facts.qd == shared.facts.qd
        }) else {
            continue;
        };
        out.push(Versus {
            step: &shared.step,
            threads: shared.threads,
            batch: shared.batch,
            per,
            shared,
            ratio: shared.iops() / per.iops().max(1e-9),
            waits: shared.lock_contended.unwrap_or(0) as f64 / shared.ops.max(1) as f64,
        });
    }
    out
}

/// "NOPs, 8 threads, batch 64: shared 0.42x per-thread's IOPS (1.20 mutex waits per op, 9 in flight
/// against 412)".
fn versus_text(v: &Versus, threads_vary: bool) -> String {
    v.shared
        .cite_paths(&["result.uring.lock_contended", Fig::Ops.field()]);
    if threads_vary {
        v.shared.cited(Fig::Threads);
    }
    v.shared.cited(Fig::Batch);
    format!(
        "{}{}, batch {}: the shared ring made {} per-thread rings' IOPS ({} against {}; {:.2} mutex waits per \
         op; {:.1} requests in flight against {:.1}){}",
        v.step,
        if threads_vary {
            format!(", {} thread{}", v.threads, if v.threads == 1 { "" } else { "s" })
        } else {
            String::new()
        },
        v.batch,
        x(v.ratio),
        thousands(v.shared.iops()),
        thousands(v.per.iops()),
        v.waits,
        inflight(v.shared),
        inflight(v.per),
        crate::findings_compare::noise(v.shared, v.per)
    )
}

/// The report's avg_batch, recomputed from its own counters: over the whole run (what its log printed,
/// cut to an integer) and between its first and last late snapshot (what the late run did).
fn integer_division(c: &Ctx) -> Option<String> {
    let (sc, sr) = (c.seed("shared_calls")?, c.seed("shared_reqs")?);
    let (pc, pr) = (c.seed("per_thread_calls")?, c.seed("per_thread_reqs")?);
    let late = match (c.seed("shared_calls_early"), c.seed("shared_reqs_early")) {
        (Some(ec), Some(er)) if sc > ec => {
            let b = (sr - er) / (sc - ec);
            format!(
                " Between its snapshots at {} and {} calls the requests grew by {} for {} calls, {b:.2} per \
                 call: late in the run its batches {}, while the mean over the whole run \
                 stayed {:.2} (the log's 'avg_batch=1' is that mean cut to an integer, and the per-thread \
                 rings' '2' is {:.2} cut the same way).",
                thousands(ec),
                thousands(sc),
                thousands(sr - er),
                thousands(sc - ec),
                if b < 1.1 {
                    "had collapsed to one, as the report says"
                } else {
                    "had not collapsed to one, unlike what the report says"
                },
                sr / sc,
                pr / pc
            )
        }
        _ => String::new(),
    };
    Some(format!(
        "The report's kernel counters: {} / {} = {:.2} requests per call for the shared ring over the whole \
         run, against {} / {} = {:.2} for per-thread rings.{late}",
        thousands(sr),
        thousands(sc),
        sr / sc,
        thousands(pr),
        thousands(pc),
        pr / pc
    ))
}

/// The report's requests in flight by Little's law (IOPS x mean latency), and the rows here that keep one
/// request in flight per thread beside the same threads at the full queue depth.
fn serialization(c: &Ctx) -> Option<String> {
    let little = |iops: &str, lat: &str| Some(c.seed(iops)? * c.seed(lat)? * 1e-6);
    let mut o = match (
        little("shared_1t_iops", "shared_1t_lat_us"),
        little("shared_8t_iops", "shared_8t_lat_us"),
        little("per_thread_1t_iops", "per_thread_1t_lat_us"),
        little("per_thread_8t_iops", "per_thread_8t_lat_us"),
    ) {
        (Some(s1), Some(s8), Some(p1), Some(p8)) => format!(
            "By Little's law (IOPS x mean latency) the report's shared ring kept {s1:.1} request in flight at 1 \
             thread and {s8:.1} at 8, its per-thread rings {p1:.0} and {p8:.0}: its mutex, held while a thread \
             waited for its own completion, let each thread have one request in flight, whatever the QD, which \
             is why its shared ring showed a lower latency and a lower IOPS at once."
        ),
        _ => String::new(),
    };
    let ones = c.rows_where(|r| uring(r) && r.facts.qd == 1 && !r.nop_requests);
    for one in ones
        .iter()
        .filter(|r| r.design == Some(RingDesign::PerThread))
    {
        let Some(deep) = c.row(|r| {
            uring(r)
                && r.facts.qd > 1
                && r.design == Some(RingDesign::PerThread)
                && r.threads == one.threads
                && !r.nop_requests
                && r.facts.direct == one.facts.direct
        }) else {
            continue;
        };
        o += &format!(
             " In this run, {} thread{} with one request in flight each: {:.1} in flight, {} IOPS at {} mean latency, \
             against {:.0} in flight, {} IOPS at {} with QD {}: {} the IOPS at {} the latency, the report's \
             shape.",
            one.threads,
            if one.threads == 1 { "" } else { "s" },
            inflight(one),
            thousands(one.iops()),
            ns(one.cited(Fig::LatMeanNs)),
            inflight(deep),
            thousands(deep.iops()),
            ns(deep.cited(Fig::LatMeanNs)),
            deep.facts.qd,
            x(one.iops() / deep.iops().max(1e-9)),
            x(one.cited(Fig::LatMeanNs) / deep.cited(Fig::LatMeanNs).max(1e-9))
        );
    }
    (!o.is_empty()).then_some(o)
}

/// Why did the shared ring lose (Tables 4-6)?
pub fn shared_ring_lost(c: &Ctx) -> Reply {
    let vs = versus(c);
    if vs.is_empty() {
        return Reply::not_here(
            "This run has no shared ring beside per-thread rings on the same workload.".into(),
            "the shared-ring suite's steps",
        );
    }
    let threads_vary = |v: &Versus| {
        vs.iter()
            .any(|o| o.step == v.step && o.threads != v.threads)
    };
    let mut parts: Vec<String> = vs
        .iter()
        .map(|v| versus_text(v, threads_vary(v)) + ".")
        .collect();
    // A loss within the noise of repeated runs is not one.
    let lost: Vec<&Versus> = vs
        .iter()
        .filter(|v| v.ratio < 0.83 && !crate::findings_compare::within_noise(v.shared, v.per))
        .collect();
    match lost.iter().min_by(|a, b| a.ratio.total_cmp(&b.ratio)) {
        Some(w) => {
            let mut why = Vec::new();
            if w.waits >= 0.05 {
                why.push(format!(
                    "its threads queued on the mutex ({:.2} waits per op): a thread holds it while it submits, \
                     reaps and waits for its own completion, so the others can neither submit nor reap",
                    w.waits
                ));
            }
            if inflight(w.shared) < 0.8 * inflight(w.per) {
                why.push(format!(
                    "fewer requests were in flight ({:.1} against {:.1})",
                    inflight(w.shared),
                    inflight(w.per)
                ));
            }
            parts.push(format!(
                "The shared ring lost most on {} ({} threads, batch {}): {}{}.",
                w.step,
                w.threads,
                w.batch,
                x(w.ratio),
                if why.is_empty() {
                    String::new()
                } else {
                    format!(": {}", why.join("; and "))
                }
            ));
        }
        None => parts.push(
            "In this run the shared ring never made less than 0.83x per-thread rings' IOPS beyond the noise: the \
             submission path was not what set the pace."
                .into(),
        ),
    }
    let serial = serialization(c);
    parts.extend(serial.clone());
    parts.extend(integer_division(c));
    let cpu_bound = c.rows.iter().any(|r| r.nop_requests || !r.facts.direct);
    match (cpu_bound, serial.is_some_and(|s| s.contains("In this run,"))) {
        (true, true) => Reply::answered(parts.join(" ")),
        _ => Reply::partly(
            parts.join(" "),
            "a CPU-bound target where contention can show (NOPs, page-cache hits) and a variant that keeps one \
             request in flight per thread (the shared-ring suite's steps)",
        ),
    }
}

/// The QD sweep's io_uring rows (8 threads), by depth.
fn sweep_rows<'a>(c: &'a Ctx) -> Vec<&'a Row> {
    let mut rows = c.rows_where(|r| uring(r) && r.step.starts_with("QD sweep"));
    rows.sort_by_key(|r| r.facts.qd);
    rows
}

/// "QD 1 41,200 IOPS at 194.2 µs, QD 8 ...": each depth's IOPS and mean latency, then the shallowest
/// depth within [`TIE_FRACTION`] of the most IOPS (deeper queues added latency, not IOPS).
fn sweep_text(rows: &[&Row]) -> Option<String> {
    let first = rows.first()?;
    let best = rows.iter().map(|r| r.iops()).fold(0.0, f64::max);
    let each: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "QD {} {} IOPS at {}",
                r.facts.qd,
                thousands(r.iops()),
                ns(r.cited(Fig::LatMeanNs))
            )
        })
        .collect();
    let mut s = format!(
        "The QD sweep ({}, io_uring): {}.",
        first.workload(),
        each.join(", ")
    );
    let knee = rows
        .iter()
        .find(|r| r.iops() >= (1.0 - TIE_FRACTION) * best)?;
    let deepest = rows.last()?;
    if rows.len() < 2 {
        return Some(s);
    }
    if knee.facts.qd == deepest.facts.qd {
        s.push_str(&format!(
            " IOPS still grew up to the deepest queue measured (QD {}): this device took more in flight than \
             the sweep gave it.",
            deepest.facts.qd
        ));
    } else {
        s.push_str(&format!(
            " IOPS stopped growing at QD {} ({} IOPS, within {:.0}% of the most any depth made); from there \
             to QD {} the mean latency went from {} to {} ({}) for {} the IOPS: the deeper queue only waited \
             longer (Little's law: a fixed rate with more in flight is a longer wait).",
            knee.facts.qd,
            thousands(knee.iops()),
            TIE_FRACTION * 100.0,
            deepest.facts.qd,
            ns(knee.cited(Fig::LatMeanNs)),
            ns(deepest.cited(Fig::LatMeanNs)),
            x(deepest.cited(Fig::LatMeanNs) / knee.cited(Fig::LatMeanNs).max(1e-9)),
            x(deepest.iops() / knee.iops().max(1e-9))
        ));
    }
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
                u.facts.qd,
                s.threads,
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
            ": one thread keeps N requests in flight without N threads' system calls and wake-ups"
        } else {
            ""
        },
        n = pairs.len()
    ))
}

/// The report's future work (§8.2): how io_uring scales with queue depth, and sync threads against one
/// io_uring at the same total in flight.
pub fn future_work(c: &Ctx) -> Reply {
    let sweep = sweep_text(&sweep_rows(c));
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
        (None, Some(e)) => Reply::partly(e, "the QD sweep step (io_uring at 8 threads over QD 1-128)"),
    }
}

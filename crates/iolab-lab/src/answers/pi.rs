//! The Pi thesis's questions (Thiessen, §4.3 and §5): why io_uring lost to write(), why the "dma" path was
//! so much faster and whether its figure is possible, what the missing tracepoints were worth, how the
//! older techniques compare; and the nowait suite's question behind the first.

use super::holds::{Holds, Judged, Outcome};
use super::reply::{is, ns, pct, thousands, x, Ctx, Reply};
use crate::findings_compare::Fig;
use crate::findings_compare::{why_faster, why_slower, Row};
use iolab_engine::method::{aio, epoll, io_uring, mmap, sync, uring_cmd};
use iolab_engine::spec::RingDesign;

/// What the thesis's own target would take, when a run has no row of it.
const DRIVER: &str = "the thesis's stub driver as a target (a character device with only .write: no \
    write_iter and no FMODE_NOWAIT, so the kernel cannot try a write without blocking and io_uring punts \
    every request to io-wq): iolab's sink driver in its legacy personality is that target, loaded in \
    `iolab vm`'s guest (`iolab suite writes --vm`); without it /dev/null (completes inline) and a disk file \
    (cannot complete buffered writes inline) stand on either side of it";

/// A row on iolab's sink driver in the thesis's personality (only .write).
fn on_legacy_sink(r: &Row) -> bool {
    r.facts
        .sink
        .as_ref()
        .is_some_and(|s| s.personality == Some(iolab_engine::sink_device::Personality::Legacy))
}

/// Answered where the rows include the thesis's own kind of target, else with the stand-ins.
fn with_driver(parts: Vec<String>, rows: &[&Row]) -> Reply {
    if rows.iter().any(|r| on_legacy_sink(r)) {
        Reply::answered(parts.join(" "))
    } else {
        Reply::partly(parts.join(" "), DRIVER)
    }
}

/// io_uring as the thesis ran it: SQPOLL, a producer and a consumer thread, one request per submission
/// (without the sink driver's log line: set beside write() without it).
fn thesis_uring(r: &Row) -> bool {
    is(r, &io_uring::INFO)
        && r.facts.sqpoll
        && r.design == Some(RingDesign::ProducerConsumer)
        && !r.logged()
}

/// io_uring set up to submit several requests per call (what it actually achieved is its mean batch).
fn batched_uring(r: &Row) -> bool {
    is(r, &io_uring::INFO) && !r.facts.sqpoll && r.batch >= 4 && !r.logged()
}

/// IORING_OP_URING_CMD to the sink driver's `.uring_cmd` (the thesis's Figure 9).
fn uring_cmd(r: &Row) -> bool {
    is(r, &uring_cmd::INFO) && !r.logged()
}

/// The share of a row's io_uring requests punted to io-wq (cited): the kernel's count where the record
/// has it, else, for a method whose requests can be punted, the sink driver's count of calls made by
/// io-wq workers.
fn punted(r: &Row) -> Option<f64> {
    if let Some(p) = r.cited_opt(Fig::Punted) {
        return Some(p);
    }
    if !r.method().is_some_and(|m| m.info().punts) {
        return None;
    }
    let w = r.facts.sink.as_ref()?.worker_share?;
    r.cite_paths(&["sink.worker_share"]);
    Some(w)
}

/// "100% punted", of the first row of a pair.
fn punted_note(p: &Judged) -> Option<String> {
    punted(p.x).map(|v| format!("{} punted", pct(v)))
}

/// write() rows timed without tracepoints (the plain pass), and without the sink driver's own log line.
fn plain_write(r: &Row) -> bool {
    is(r, &sync::INFO) && !r.facts.inline_counting && !r.logged()
}

fn joined(why: Vec<String>) -> String {
    if why.is_empty() {
        String::new()
    } else {
        format!(": {}", why.join("; "))
    }
}

/// The thesis's own ratio of two of its published times, and the times: ("1.8x", "(2.857 s against
/// 1.584 s)").
fn seed_ratio(c: &Ctx, num: &str, den: &str) -> Option<(String, String)> {
    let (a, b) = (c.seed(num)?, c.seed(den)?);
    Some((x(a / b), format!("({a:.3} s against {b:.3} s)")))
}

/// A workload whose io_uring requests completed inline: the workload, the punted share, the time ratio to
/// write(), and the CPU ns per op of io_uring and of write().
type Inline = (String, f64, f64, Option<f64>, Option<f64>);

/// What the io_uring rows beside the write() rows showed, gathered workload by workload.
#[derive(Default)]
struct UringSeen {
    /// A sentence per workload.
    parts: Vec<String>,
    /// (workload, punted share, time ratio) where most requests were punted.
    punted: Vec<(String, f64, f64)>,
    /// Where few were.
    inline: Vec<Inline>,
}

impl UringSeen {
    /// The thesis-style and batched io_uring rows beside write() row `w`, if any.
    fn add(&mut self, w: &Row, t: Option<&Row>, b: Option<&Row>) {
        let mut s = format!("{}: write() {}", w.workload(), ns(w.ns()));
        if let Some(t) = t {
            let r = t.ns() / w.ns();
            s += &format!(
                "; io_uring as the thesis ran it {} ({} write()'s time){}",
                ns(t.ns()),
                x(r),
                // Why it was slower, only where it was (the nowait sink at 4 KiB once took 0.85x).
                if r > 1.0 {
                    joined(why_slower(t, w))
                } else {
                    String::new()
                }
            );
            match punted(t) {
                Some(p) if p >= 0.5 => self.punted.push((w.workload(), p, r)),
                Some(p) => {
                    self.inline
                        .push((w.workload(), p, r, t.cpu_ns_per_op(), w.cpu_ns_per_op()))
                }
                None => {}
            }
        }
        if let Some(b) = b {
            let r = b.ns() / w.ns();
            s += &format!(
                "; batched (up to {:.0}, on average {:.1} requests per submission) {} ({})",
                b.cited(Fig::Batch),
                b.cited_opt(Fig::MeanBatch).unwrap_or(0.0),
                ns(b.ns()),
                x(r)
            );
        }
        self.parts.push(s + ".");
    }

    /// What the figures gathered say, sentence by sentence (the batched rows': [`batched_verdict`]).
    fn conclusions(&self) -> Vec<String> {
        let mut out = Vec::new();
        // Only the punted rows where the thesis's design clearly took longer are what the hand-off explains.
        let slower: Vec<_> = self.punted.iter().filter(|(_, _, r)| *r >= 1.2).collect();
        if !slower.is_empty() {
            let each: Vec<String> = slower
                .iter()
                .map(|(wl, p, r)| {
                    format!("{wl}: {} of io_uring's requests punted, {}", pct(*p), x(*r))
                })
                .collect();
            out.push(format!(
                "Where the target cannot complete a write inline ({}), every request is handed to an io-wq \
                 kernel thread and its completion woken back: that hand-off, not the system call io_uring saves, \
                 is what made the thesis's design take that many times write()'s time.",
                each.join("; ")
            ));
        }
        let slow: Vec<_> = self.inline.iter().filter(|i| i.2 >= 1.2).collect();
        if !slow.is_empty() {
            // Each workload with its ratio, and its CPU per op against write()'s where both were counted.
            let each: Vec<String> = slow
                .iter()
                .map(|(wl, p, r, cu, cw)| {
                    let cpu = match (cu, cw) {
                        (Some(u), Some(w)) => {
                            format!(", {} of CPU per op against {}", ns(*u), ns(*w))
                        }
                        _ => String::new(),
                    };
                    format!("{wl}, {} punted: {}{cpu}", pct(*p), x(*r))
                })
                .collect();
            out.push(format!(
                "Even where the target completes requests inline ({}), the thesis's design took longer than \
                 write(): its producer, SQPOLL and consumer threads pass every request from thread to thread \
                 where write() stays on one.",
                each.join("; ")
            ));
        }
        out
    }
}

/// Batched io_uring against write(), over every workload of the run where both ran: only where it won
/// on each is the thesis's one-request design said to be what lost; otherwise the rows where it did not
/// win are named, with their ratios and punted shares.
fn batched_verdict(c: &Ctx) -> Option<String> {
    let h = Holds::over(&c.rows, batched_uring, plain_write);
    if h.is_empty() {
        return None;
    }
    let rows = h.sentence(c, punted_note);
    if h.everywhere() {
        return Some(format!(
            "Batched, io_uring beat write() on every workload where both ran: against write()'s time per op it \
             {rows}. The thesis's one-request-per-submission design lost, not io_uring."
        ));
    }
    let mut s = if h.of(Outcome::Won).is_empty() {
        format!("Even batched, io_uring did not beat write() in this run: against write()'s time per op it {rows}.")
    } else {
        format!(
            "Batched, io_uring did not beat write() on every workload: against write()'s time per op it {rows}."
        )
    };
    // The losses by the punted share where the record has it (a loss without one is neither).
    let shares: Vec<f64> = h
        .of(Outcome::Lost)
        .iter()
        .filter_map(|p| punted(p.x))
        .collect();
    if shares.iter().any(|v| *v >= 0.5) {
        s += " Where the target punted the requests to io-wq, batching saved system calls but not the hand-off \
              to a worker thread and back.";
    }
    if shares.iter().any(|v| *v < 0.5) {
        s += " Where it lost with few of its requests punted, neither the one-request design nor io-wq \
              explains the loss: batched and completed inline, io_uring still took longer than write().";
    }
    Some(s)
}

/// The thesis's driver's own io_uring entry (its Figure 9: `.uring_cmd`) on iolab's sink driver, against
/// write() and against batched IORING_OP_WRITE to the same driver, over every workload where both ran.
fn uring_cmd_text(c: &Ctx) -> Option<String> {
    c.row(uring_cmd)?;
    let mut s = String::from(
        "The thesis's driver had io_uring's own entry as well (its Figure 9: .uring_cmd, which the driver can \
         complete in the call that issues it), though its benchmark sent IORING_OP_WRITE. On iolab's sink \
         driver, uring_cmd"
    );
    let (w, b) = (
        Holds::over(&c.rows, uring_cmd, plain_write),
        Holds::over(&c.rows, uring_cmd, batched_uring),
    );
    if !w.is_empty() {
        s += &format!(
            ", against write()'s time per op, {}",
            w.sentence(c, punted_note)
        );
    }
    if !b.is_empty() {
        let theirs = |p: &Judged| punted(p.y).map(|v| format!("IORING_OP_WRITE {} punted", pct(v)));
        s += &format!(
            "{}against batched IORING_OP_WRITE's time per op on the same driver, {}",
            if w.is_empty() { ", " } else { "; " },
            b.sentence(c, theirs)
        );
    }
    if w.is_empty() && b.is_empty() {
        let each: Vec<String> = c
            .rows_where(uring_cmd)
            .iter()
            .map(|u| format!("{} {}", u.workload(), ns(u.ns())))
            .collect();
        s += &format!(
            ": {} per op, with no write() row beside it",
            each.join(", ")
        );
    }
    Some(s + ".")
}

/// io_uring in the thesis's Figure 36 blocking loop: SQPOLL, one request submitted and waited for at a
/// time.
fn blocking(r: &Row) -> bool {
    is(r, &io_uring::INFO)
        && r.facts.sqpoll
        && r.facts.qd == 1
        && r.design == Some(RingDesign::PerThread)
}

/// What the blocking loop showed beside write(), and the thesis's Figure 36.
fn blocking_loop(c: &Ctx) -> Option<String> {
    let b = c.row(blocking)?;
    let w = c.row(|r| plain_write(r) && r.same_workload(b));
    let mut o = format!(
        "In a blocking loop (the thesis's Figure 36: one request submitted through the SQPOLL ring and waited \
         for before the next), {}: io_uring {} per write{}{}",
        b.workload(),
        ns(b.ns()),
        w.map(|w| format!(" against write()'s {} ({})", ns(w.ns()), x(b.ns() / w.ns())))
            .unwrap_or_default(),
        b.facts
            .ctx_switches_per_op
            .map(|c| format!(", {c:.2} context switches per write"))
            .unwrap_or_default()
    );
    if b.cited(Fig::SqpollCpuS) > 0.0 && b.cited(Fig::WallS) > 0.0 {
        o += &format!(
            ", its SQPOLL thread busy {} of the run",
            pct(b.cited(Fig::SqpollCpuS) / b.cited(Fig::WallS))
        );
    }
    o.push('.');
    if let (Some(t), Some(cs), Some(sys), Some(w)) = (
        c.seed("blocking_4b_s"),
        c.seed("blocking_ctx_switches"),
        c.seed("blocking_sys_s"),
        c.seed("systemcall_4b_s"),
    ) {
        o += &format!(
            " The thesis's loop took {t:.1} s for 1M writes of 4 B ({} its write() run), {:.1} context switches per \
             write and {sys:.1} s of system time in {t:.1} s (two CPUs in the kernel): each write waited for the \
             SQPOLL thread to pick it up and for the wake-up of its completion, which is why it measured io_uring \
             with a producer and a consumer thread instead.",
            x(t / w),
            cs / 1e6
        );
    }
    Some(o)
}

/// Why did io_uring lose to write()?
pub fn uring_vs_write(c: &Ctx) -> Reply {
    let mut seen = UringSeen::default();
    let mut paired = Vec::new();
    for w in c.rows_where(plain_write) {
        let t = c.row(|r| thesis_uring(r) && r.same_workload(w));
        let b = c.row(|r| batched_uring(r) && r.same_workload(w));
        if t.is_some() || b.is_some() {
            seen.add(w, t, b);
            paired.push(w);
        }
    }
    if seen.parts.is_empty() {
        return Reply::not_here(
            "This run has no write() row beside an io_uring row of the same workload.".into(),
            "the suite's systemcall and io_uring steps",
        );
    }
    let mut parts = std::mem::take(&mut seen.parts);
    parts.extend(seen.conclusions());
    parts.extend(batched_verdict(c));
    parts.extend(uring_cmd_text(c));
    parts.extend(blocking_loop(c));
    let seed: Vec<String> = [
        seed_ratio(c, "io_uring_4b_s", "systemcall_4b_s")
            .map(|(r, t)| format!("{r} write()'s time on its stub driver {t}")),
        seed_ratio(c, "usb_io_uring_4b_s", "usb_systemcall_4b_s")
            .map(|(r, t)| format!("{r} on its USB stick {t}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !seed.is_empty() {
        parts.push(format!(
            "For 4 B writes the thesis measured io_uring at {}.",
            seed.join(" and ")
        ));
    }
    with_driver(parts, &paired)
}

/// Why was the mmap ("dma") path so much faster, and is the published figure possible?
pub fn mmap_vs_write(c: &Ctx) -> Reply {
    let mut parts = Vec::new();
    for m in c.rows_where(|r| is(r, &mmap::INFO)) {
        let Some(w) = c.row(|r| plain_write(r) && r.same_workload(m)) else {
            continue;
        };
        parts.push(format!(
            "{}: mmap {} per op against write() {} ({} the time){}.",
            m.workload(),
            ns(m.ns()),
            ns(w.ns()),
            x(m.ns() / w.ns()),
            joined(why_faster(m, w))
        ));
    }
    let dma = c.published_where(|p| p.label.contains("dma"));
    for p in &dma {
        parts.push(format!("The thesis's {}: {}.", p.label, p.verdict));
    }
    if dma.iter().any(|p| p.impossible) {
        let ratio = seed_ratio(c, "systemcall_4kb_s", "dma_4kb_s");
        parts.push(format!(
            "Bytes that could not have been copied in that time, or by that many instructions, were not copied: \
             the thesis's 4 KiB 'dma' writes did not copy their data inside its timer{}.",
            ratio
                .map(|(r, t)| format!(", so its 'dma' speed-up over write() for 4 KiB, {r} {t}, is no measurement"))
                .unwrap_or_default()
        ));
    } else if dma.is_empty() && !parts.is_empty() {
        parts.push("The suite lists no published 'dma' figure to check.".into());
    }
    if parts.is_empty() {
        return Reply::not_here(
            "This run has no mmap row beside a write() row of the same workload.".into(),
            "the suite's mmap and systemcall steps on the same file",
        );
    }
    if c.rows_where(|r| is(r, &mmap::INFO))
        .iter()
        .any(|r| r.facts.sink.is_some())
    {
        return Reply::answered(parts.join(" "));
    }
    Reply::partly(
        parts.join(" "),
        "the stub driver's own mapping (the thesis mapped the driver's memory; this run mapped a file): iolab's \
         sink driver maps its buffer in `iolab vm`'s guest (`iolab suite writes --vm`)",
    )
}

/// How much did the DMA method benefit from the lack of tracepoints in its path?
pub fn tracepoint_cost(c: &Ctx) -> Reply {
    let on = c.row(|r| is(r, &sync::INFO) && r.facts.inline_counting);
    let off = on.and_then(|on| c.row(|r| plain_write(r) && r.same_workload(on)));
    let (Some(on), Some(off)) = (on, off) else {
        return Reply::not_here(
            "This run has no write() row timed with tracepoints on beside one timed without.".into(),
            "a step with count = \"inline\" (raw_syscalls:sys_enter counting in the timed pass) beside the plain \
             write() step",
        );
    };
    let calls = on.cited_opt(Fig::SyscallsPerOp).unwrap_or(1.0).max(0.5);
    // A run other work disturbed has a wall time partly someone else's: its CPU time per op decides.
    let by_cpu = match (on.cpu_ns_per_op(), off.cpu_ns_per_op()) {
        (Some(_), Some(_)) => on.facts.disturbed.as_ref().or(off.facts.disturbed.as_ref()),
        _ => None,
    };
    let (a, b, of_cpu) = match by_cpu {
        Some(_) => (
            on.cited(Fig::CpuNsPerOp),
            off.cited(Fig::CpuNsPerOp),
            " of CPU",
        ),
        None => (on.ns(), off.ns(), ""),
    };
    let d = (a - b) / calls;
    let mut parts = vec![format!(
        "write(), {}: {}{of_cpu} per op with the raw_syscalls:sys_enter tracepoint counting every call, \
         against {} without ({}{} per system call, {:+.0}%){}.",
        on.workload(),
        ns(a),
        ns(b),
        if d < 0.0 { "-" } else { "+" },
        ns(d.abs()),
        (a / b - 1.0) * 100.0,
        by_cpu.map_or(String::new(), |_| format!(
            "; CPU time, not wall time: other work disturbed a run (its record's disturbance says how), so \
             its wall time ({} against {}) is partly waiting for a CPU",
            ns(on.ns()),
            ns(off.ns())
        ))
    )];
    if d <= 0.0 {
        parts.push(
            "The tracepoint cost less than two runs of this host differ: within the noise.".into(),
        );
        return Reply::partly(
            parts.join(" "),
            "repeats (--repeat 5) to tell its cost from the run-to-run spread",
        );
    }
    // d ns per call over a million calls is d ms.
    let ms = d;
    let mm = c.row(|r| is(r, &mmap::INFO));
    parts.push(format!(
        "At a million writes that is {ms:.0} ms on this machine (its own cost per call, not the thesis's \
         board's), paid by every path that makes a system call per write; the mmap path made {} system calls \
         per op in this run and paid none of it. What the missing tracepoints were worth to the 'dma' path is at most \
         that per million writes.",
        mm.and_then(|m| m.cited_opt(Fig::SyscallsPerOp))
            .map(|s| format!("{s:.3}"))
            .unwrap_or_else(|| "no".into())
    ));
    match sink_log_cost(c) {
        Some(t) => {
            parts.push(t);
            Reply::answered(parts.join(" "))
        }
        None => Reply::partly(
            parts.join(" "),
            "the thesis also fired its driver's own tracepoint and a log line (LM_LOG) on every write: iolab's \
             sink driver does the same with --sink-log in `iolab vm`'s guest (`iolab suite writes --vm`)",
        ),
    }
}

/// The thesis's LM_LOG on iolab's sink driver: a log line and a tracepoint per write, against the same
/// writes without them.
fn sink_log_cost(c: &Ctx) -> Option<String> {
    let logged = c.row(|r| is(r, &sync::INFO) && r.logged())?;
    // The log switch the one difference between the two rows.
    let plain = c.row(|r| plain_write(r) && r.same_but_log(logged))?;
    let d = logged.ns() - plain.ns();
    Some(format!(
        "On iolab's sink driver, {}: a log line and a tracepoint per write (the thesis's LM_LOG) took {} per \
         write against {} without ({}{} per write, {} the time){}.",
        plain.workload(),
        ns(logged.ns()),
        ns(plain.ns()),
        if d < 0.0 { "-" } else { "+" },
        ns(d.abs()),
        x(logged.ns() / plain.ns()),
        crate::findings_compare::noise(logged, plain)
    ))
}

/// How would older techniques (aio, epoll) compare with io_uring?
pub fn older_techniques(c: &Ctx) -> Reply {
    let mut parts = Vec::new();
    for m in [&aio::INFO, &epoll::INFO] {
        let name = m.name;
        for a in c.rows_where(|r| is(r, m)) {
            let w = c.row(|r| plain_write(r) && r.same_workload(a));
            let u = c.row(|r| is(r, &io_uring::INFO) && r.same_workload(a));
            let mut s = format!("{}: {name} {}", a.workload(), ns(a.ns()));
            if let Some(w) = w {
                s += &format!(", {} write()'s time", x(a.ns() / w.ns()));
            }
            if let Some(u) = u {
                s += &format!(", {} {}'s", x(a.ns() / u.ns()), u.way());
            }
            if let Some(f) = a.facts.aio_inline_fraction {
                s += &format!(
                    "; {} of its requests completed inside io_submit (not asynchronous: the same write plus AIO's \
                     bookkeeping)",
                    pct(f)
                );
            }
            // iolab's own count: the kernel's would add the peer thread's reads on the far end.
            if let Some(cp) = a.calls_per_op.filter(|_| m.kind == epoll::INFO.kind) {
                a.cited(Fig::CallsPerOp);
                s += &if cp > 1.005 {
                    format!(
                        "; {cp:.3} calls per op by iolab's count: above 1, the writer found the stream full and \
                         waited in epoll_wait that often"
                    )
                } else {
                    format!("; {cp:.3} calls per op: the reader kept up, the writer never waited")
                };
            }
            parts.push(s + ".");
        }
    }
    for m in [&aio::INFO, &epoll::INFO] {
        let name = m.name;
        let ratios: Vec<f64> = c
            .rows_where(|r| is(r, m))
            .into_iter()
            .filter_map(|a| {
                c.row(|r| plain_write(r) && r.same_workload(a))
                    .map(|w| a.ns() / w.ns())
            })
            .collect();
        if ratios.len() > 1 {
            let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = ratios.iter().copied().fold(0.0, f64::max);
            let range = if x(lo) == x(hi) {
                format!("{} write()'s time on each", x(lo))
            } else {
                format!("{} to {} write()'s time", x(lo), x(hi))
            };
            parts.push(format!(
                "Over these {} workloads {name} took {range}.",
                ratios.len()
            ));
        }
    }
    if parts.is_empty() {
        return Reply::not_here(
            "This run has no aio or epoll row.".into(),
            "steps with the aio method (file or /dev/null) and the epoll method (a pipe or socket) beside write() \
             and io_uring",
        );
    }
    Reply::answered(parts.join(" "))
}

/// ": 100% refused outright (EOPNOTSUPP) ..." where most of a row's RWF_NOWAIT calls were refused before
/// they tried (the file system has no non-blocking buffered path), cited; empty otherwise.
fn refused_outright(p: &Row) -> String {
    let n = p
        .record
        .as_ref()
        .and_then(|r| r["result"]["nowait"]["unsupported"].as_f64());
    match n.filter(|n| p.ops > 0 && *n >= 0.5 * p.ops as f64) {
        Some(n) => {
            p.cite_paths(&["nowait.unsupported", Fig::Ops.field()]);
            format!(
                " ({} of them refused before trying, EOPNOTSUPP: the file system has no way to try a {} \
                 without blocking, so every such call falls back, whatever the page cache holds)",
                pct(n / p.ops as f64),
                if p.facts.write { "buffered write" } else { "read" }
            )
        }
        None => String::new(),
    }
}

/// Would the kernel have blocked? RWF_NOWAIT beside io_uring's punts, per target.
pub fn would_block(c: &Ctx) -> Reply {
    let mut parts = Vec::new();
    let mut all_punted = Vec::new();
    let mut agree = true;
    let mut paired = Vec::new();
    for p in c.rows_where(|r| r.cited_opt(Fig::WouldBlock).is_some()) {
        let Some(u) = c.row(|r| is(r, &io_uring::INFO) && r.same_workload(p)) else {
            continue;
        };
        paired.push(p);
        let wb = p.cited_opt(Fig::WouldBlock).unwrap_or(0.0);
        let Some(pu) = u.cited_opt(Fig::Punted) else {
            continue;
        };
        agree &= (wb - pu).abs() < 0.1;
        if pu >= 0.5 {
            all_punted.push(p.target.clone());
        }
        parts.push(format!(
            "{}: {} of the RWF_NOWAIT calls would have blocked{}, {} of io_uring's requests were punted to io-wq \
             (io_uring {} per op, {} the time of the plain call's {}).",
            p.workload(),
            pct(wb),
            refused_outright(p),
            pct(pu),
            ns(u.ns()),
            x(u.ns() / p.ns()),
            ns(p.ns())
        ));
    }
    if parts.is_empty() {
        return Reply::not_here(
            "This run has no RWF_NOWAIT row beside an io_uring row with the kernel's punt count."
                .into(),
            "the nowait suite's steps with the counting pass on (count = separate)",
        );
    }
    parts.push(if agree {
        format!(
            "On every target the two shares agree: io_uring punts the requests its non-blocking attempt did \
             not complete, those that would have blocked and those of a file with no such attempt{}. A driver \
             with only .write, like the thesis's, cannot even try: every request goes to io-wq, part of where \
             io_uring's time went there.",
            if all_punted.is_empty() {
                String::new()
            } else {
                format!(" ({})", all_punted.join(", "))
            }
        )
    } else {
        "On some targets the shares differ: io_uring punts for reasons RWF_NOWAIT does not see (or the other \
         way round); see the rows."
            .into()
    });
    with_driver(parts, &paired)
}

/// The time between writes as the thesis measured it (Figures 19 and 37-40: from its driver's
/// tracepoint): the sink driver's own clock between logged writes, per row, beside iolab's.
pub fn driver_gaps(c: &Ctx) -> Reply {
    let rows = c.rows_where(|r| {
        r.facts
            .sink
            .as_ref()
            .is_some_and(|s| s.driver_gaps.is_some())
    });
    if rows.is_empty() {
        return Reply::not_here(
            "This run has no write to the sink driver with its log switch on.".into(),
            "the sink driver's logged steps (--sink-log), which load it in `iolab vm`'s guest (`iolab suite \
             writes --vm`)",
        );
    }
    let mut parts: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            let s = r.facts.sink.as_ref()?;
            let g = s.driver_gaps.as_ref()?;
            r.cite_paths(&[
                "sink.driver_gaps.p50_ns",
                "sink.driver_gaps.p99_ns",
                "sink.driver_gaps.mean_ns",
                "sink.driver_gaps.count",
                "gap.p50_ns",
            ]);
            Some(format!(
                "{}, {}: the driver saw the writes {} apart (p50; p99 {}, mean {}, {} gaps), iolab's clock {} \
                 between op starts",
                r.way(),
                r.workload(),
                ns(g.p50_ns),
                ns(g.p99_ns),
                ns(g.mean_ns),
                thousands(g.count as f64),
                ns(s.gap_p50_ns)
            ))
        })
        .collect();
    let mean = |r: &Row| {
        r.cite_paths(&["sink.driver_gaps.mean_ns"]);
        r.facts
            .sink
            .as_ref()?
            .driver_gaps
            .as_ref()
            .map(|g| g.mean_ns)
    };
    let pairs: Vec<(&Row, &Row)> = rows
        .iter()
        .filter(|u| is(u, &io_uring::INFO))
        .filter_map(|u| {
            let w = rows
                .iter()
                .find(|w| is(w, &sync::INFO) && w.facts.bs == u.facts.bs)?;
            Some((*w, *u))
        })
        .collect();
    let each: Vec<String> = pairs
        .iter()
        .map(|(w, u)| {
            let (mw, mu) = (mean(w).unwrap_or(0.0), mean(u).unwrap_or(0.0));
            format!(
                "at {} {} ({} against {})",
                iolab_engine::units::fmt_size(u.facts.bs),
                x(mu / mw.max(1e-9)),
                ns(mu),
                ns(mw)
            )
        })
        .collect();
    let farther = pairs
        .iter()
        .filter(|(w, u)| mean(u).unwrap_or(0.0) > mean(w).unwrap_or(0.0))
        .count();
    if !pairs.is_empty() {
        parts.push(format!(
            "On average io_uring's writes reached the driver this far apart against write()'s: {}{}",
            each.join(", "),
            if farther == pairs.len() {
                ": as in the thesis's Figure 19, its dedicated thread did not bring the writes closer together"
            } else {
                ": unlike the thesis's Figure 19, not at every size"
            }
        ));
    }
    let status_text = pairs
        .is_empty()
        .then_some("logged write() and io_uring rows of one block size, to compare the two");
    let text = parts.join(". ") + ".";
    match status_text {
        None => Reply::answered(text),
        Some(needs) => Reply::partly(text, needs),
    }
}

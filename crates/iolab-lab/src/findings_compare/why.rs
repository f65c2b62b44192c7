//! Why one row took longer (or less) per op than another, as far as the counters say.

use super::cited::Fig;
use super::row::Row;
use crate::findings::Facts;
use iolab_engine::units::fmt_ns;
use serde::{Deserialize, Serialize};

pub(super) use iolab_engine::units::pct;

/// Why `a` took longer per op than `b`, as far as the counters say.
pub(crate) fn why_slower(a: &Row, b: &Row) -> Vec<String> {
    texts(causes_slower(a, b))
}

/// Why `a` took less time per op than `b`.
pub(crate) fn why_faster(a: &Row, b: &Row) -> Vec<String> {
    texts(causes_faster(a, b))
}

fn texts(c: Vec<Cause>) -> Vec<String> {
    c.into_iter().map(|c| c.text).collect()
}

/// One cause a comparison gives: its kind (the same in every row it explains, see [`CAUSES`]), its words
/// with this row's figures, and the figures alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cause {
    pub kind: String,
    pub text: String,
    pub figures: String,
}

fn cause(kind: &str, text: String, figures: String) -> Cause {
    Cause {
        kind: kind.into(),
        text,
        figures,
    }
}

/// What each kind of cause means, said once for every row it explains (`Cause::kind`), in the order the
/// grouped findings list them.
pub const CAUSES: &[(&str, &str)] = &[
    ("punted", "requests punted to io-wq worker threads: each a hand-off to a kernel thread and a wake-up"),
    ("ctx_switches", "context switches per op: ops sleep and wake"),
    ("sqpoll_busy", "an SQPOLL thread kept a CPU busy (its CPU is in no op's time)"),
    ("iowq_cpu", "io-wq workers used more CPU than the method's own threads: the work moved to the kernel's helpers"),
    ("more_syscalls", "more system calls per op"),
    ("fewer_syscalls_yet_slower", "fewer system calls, yet slower: the time went elsewhere than crossing into the kernel"),
    ("aio_inline", "native AIO completed its requests inside io_submit: synchronous work plus AIO's bookkeeping"),
    ("mutex", "threads found a shared ring's mutex taken"),
    ("doorbells", "doorbells and server wake-ups per request, each a sleep and a wake-up across CPUs"),
    ("page_faults", "page faults"),
    ("more_cpu", "more CPU per op, all threads counted"),
    ("steal", "the hypervisor stole part of the run (indicative)"),
    ("fewer_syscalls", "fewer system calls per op"),
    ("fewer_rw_calls", "fewer read/write calls per op (the kernel's count)"),
    ("maps", "it copies into a mapping and pays page faults instead of calls"),
    ("batched", "several requests per submission"),
    ("less_cpu", "less CPU per op, all threads counted"),
];

/// Why `a` took longer per op than `b`, cause by cause.
pub(crate) fn causes_slower(a: &Row, b: &Row) -> Vec<Cause> {
    let fa = &a.facts;
    let mut w = Vec::new();
    if let Some(p) = fa.punted_fraction.filter(|p| *p >= 0.5) {
        let t = format!(
            "{} of its requests were punted to io-wq worker threads",
            pct(p)
        );
        w.push(cause("punted", t, pct(p)));
    }
    if fa.ctx_switches_per_op.is_some() {
        let (c, cb) = (
            a.cited(Fig::CtxSwitchesPerOp),
            b.cited_opt(Fig::CtxSwitchesPerOp).unwrap_or(0.0),
        );
        if c >= 0.2 && c > 2.0 * cb {
            let f = format!("{c:.2} against {cb:.2}");
            w.push(cause(
                "ctx_switches",
                format!("{c:.2} context switches per op (against {cb:.2})"),
                f,
            ));
        }
    }
    if fa.sqpoll_cpu_s >= 0.01 && fa.sqpoll_cpu_share.is_some() {
        let busy = pct(a.cited(Fig::SqpollCpuShare));
        let t = format!("its SQPOLL thread kept {busy} of a CPU busy");
        w.push(cause("sqpoll_busy", t, format!("{busy} of a CPU")));
    }
    if fa.iowq_cpu_s >= 0.01 && fa.iowq_cpu_s > fa.worker_cpu_s {
        let (iowq, own) = (a.cited(Fig::IowqCpuS), a.cited(Fig::WorkerCpuS));
        let f = format!("{iowq:.3} s against {own:.3} s");
        let t = format!(
            "io-wq workers used {iowq:.3} s of CPU, more than its own threads ({own:.3} s)"
        );
        w.push(cause("iowq_cpu", t, f));
    }
    if let (Some(sa), Some(sb)) = (
        a.cited_opt(Fig::SyscallsPerOp),
        b.cited_opt(Fig::SyscallsPerOp),
    ) {
        let f = format!("{sa:.2} against {sb:.2}");
        if sa >= 0.2 && sa >= 1.5 * sb {
            let t = format!("{sa:.2} system calls per op (against {sb:.2})");
            w.push(cause("more_syscalls", t, f));
        } else if sa <= 0.5 * sb {
            let t = format!(
                "though it made fewer system calls ({sa:.2} against {sb:.2} per op): the time went elsewhere than \
                 crossing into the kernel"
            );
            w.push(cause("fewer_syscalls_yet_slower", t, f));
        }
    }
    if let Some(x) = fa.aio_inline_fraction.filter(|x| *x >= 0.95) {
        let t = format!(
            "native AIO completed {} of its requests inside io_submit: synchronous work plus AIO's \
             bookkeeping",
            pct(x)
        );
        w.push(cause("aio_inline", t, pct(x)));
    }
    if let Some(n) = a.lock_contended.filter(|n| *n > 0) {
        a.cite_paths(&["result.uring.lock_contended", Fig::Ops.field()]);
        let per = n as f64 / a.ops.max(1) as f64;
        let t = format!("its threads found the ring's mutex taken {n} times ({per:.2} per op)");
        w.push(cause("mutex", t, format!("{per:.2} per op")));
    }
    if let (Some(d), Some(k)) = (a.doorbells_per_op, a.wakeups_per_op) {
        if d >= 0.05 || k >= 0.05 {
            a.cite_paths(&[
                "result.offload.doorbells",
                "result.offload.server_wakeups",
                Fig::Ops.field(),
            ]);
            let t = format!(
                "{d:.2} doorbells and {k:.2} server wake-ups per request (each a sleep and a wake-up across CPUs)"
            );
            w.push(cause("doorbells", t, format!("{d:.2} and {k:.2}")));
        }
    }
    if let Some(p) = a.cited_opt(Fig::PageFaultsPerMib).filter(|p| *p >= 128.0) {
        w.push(cause(
            "page_faults",
            format!("{p:.0} page faults per MiB"),
            format!("{p:.0} per MiB"),
        ));
    }
    if let (Some(ca), Some(cb)) = (a.cpu_ns_per_op(), b.cpu_ns_per_op()) {
        if ca >= 1.5 * cb {
            let f = format!("{} against {}", fmt_ns(ca), fmt_ns(cb));
            let t = format!(
                "{} of CPU per op, all threads counted (against {})",
                fmt_ns(ca),
                fmt_ns(cb)
            );
            w.push(cause("more_cpu", t, f));
        }
    }
    if let Some(share) = fa.steal_share.filter(|s| *s >= 0.1) {
        a.cite_paths(&["result.derived.steal_share"]);
        let s = pct(share);
        w.push(cause(
            "steal",
            format!("the hypervisor stole {s} of its CPUs' time during its run"),
            s,
        ));
    }
    w
}

/// Why `a` took less time per op than `b`, cause by cause.
pub(crate) fn causes_faster(a: &Row, b: &Row) -> Vec<Cause> {
    let (fa, fb) = (&a.facts, &b.facts);
    let mut w = Vec::new();
    if let (Some(sa), Some(sb)) = (
        a.cited_opt(Fig::SyscallsPerOp),
        b.cited_opt(Fig::SyscallsPerOp),
    ) {
        if sa <= 0.5 * sb {
            let f = format!("{sa:.3} against {sb:.3}");
            w.push(cause(
                "fewer_syscalls",
                format!("{sa:.3} system calls per op against {sb:.3}"),
                f,
            ));
        }
    } else if fa.rw_syscalls_per_op > 0.0 && fa.rw_syscalls_per_op <= 0.5 * fb.rw_syscalls_per_op {
        let (ra, rb) = (a.cited(Fig::RwCallsPerOp), b.cited(Fig::RwCallsPerOp));
        let f = format!("{ra:.4} against {rb:.2}");
        let t = format!("{ra:.4} read/write calls per op against {rb:.2} (the kernel's count)");
        w.push(cause("fewer_rw_calls", t, f));
    }
    if fa.info_maps() {
        let p = a.cited_opt(Fig::PageFaultsPerMib).unwrap_or(0.0);
        // A driver's buffer is mapped and faulted in once, before the timer: no faults to pay.
        let t = if p >= 0.5 {
            format!(
                "it copies into a mapping and pays page faults instead of calls ({p:.0} per MiB)"
            )
        } else {
            format!("it copies into a mapping already faulted in: no calls and {p:.0} page faults per MiB")
        };
        w.push(cause("maps", t, format!("{p:.0} page faults per MiB")));
    }
    if let Some(m) = a.cited_opt(Fig::MeanBatch).filter(|m| *m >= 4.0) {
        w.push(cause(
            "batched",
            format!("{m:.1} requests per submission"),
            format!("{m:.1}"),
        ));
    }
    if let (Some(ca), Some(cb)) = (a.cpu_ns_per_op(), b.cpu_ns_per_op()) {
        if ca <= cb / 1.5 {
            let f = format!("{} against {}", fmt_ns(ca), fmt_ns(cb));
            let t = format!(
                "{} of CPU per op, all threads counted (against {})",
                fmt_ns(ca),
                fmt_ns(cb)
            );
            w.push(cause("less_cpu", t, f));
        }
    }
    w
}

impl Facts {
    fn info_maps(&self) -> bool {
        self.method.is_some_and(|m| m.info().maps)
    }
}

pub(super) fn because(w: Vec<String>, fallback: &str) -> String {
    if w.is_empty() {
        fallback.to_string()
    } else {
        w.join("; ")
    }
}

//! Why one row took longer (or less) per op than another, as far as the counters say.

use super::row::Row;
use crate::findings::Facts;
use iolab_engine::units::fmt_ns;

pub(super) use iolab_engine::units::pct;

/// Why `a` took longer per op than `b`, as far as the counters say.
pub(crate) fn why_slower(a: &Row, b: &Row) -> Vec<String> {
    let (fa, fb) = (&a.facts, &b.facts);
    let mut w = Vec::new();
    if let Some(p) = fa.punted_fraction.filter(|p| *p >= 0.5) {
        w.push(format!(
            "{} of its requests were punted to io-wq worker threads",
            pct(p)
        ));
    }
    if let Some(c) = fa.ctx_switches_per_op {
        let cb = fb.ctx_switches_per_op.unwrap_or(0.0);
        if c >= 0.2 && c > 2.0 * cb {
            w.push(format!("{c:.2} context switches per op (against {cb:.2})"));
        }
    }
    if fa.sqpoll_cpu_s >= 0.01 && fa.wall_s > 0.0 {
        w.push(format!(
            "its SQPOLL thread kept {} of a CPU busy",
            pct(fa.sqpoll_cpu_s / fa.wall_s)
        ));
    }
    if fa.iowq_cpu_s >= 0.01 && fa.iowq_cpu_s > fa.worker_cpu_s {
        w.push(format!(
            "io-wq workers used {:.3} s of CPU, more than its own threads ({:.3} s)",
            fa.iowq_cpu_s, fa.worker_cpu_s
        ));
    }
    if let (Some(sa), Some(sb)) = (fa.syscalls_per_op, fb.syscalls_per_op) {
        if sa >= 0.2 && sa >= 1.5 * sb {
            w.push(format!("{sa:.2} system calls per op (against {sb:.2})"));
        } else if sa <= 0.5 * sb {
            w.push(format!(
                "though it made fewer system calls ({sa:.2} against {sb:.2} per op): the time went elsewhere than \
                 crossing into the kernel"
            ));
        }
    }
    if let Some(x) = fa.aio_inline_fraction.filter(|x| *x >= 0.95) {
        w.push(format!(
            "native AIO completed {} of its requests inside io_submit: the same synchronous work plus the \
             submission and completion bookkeeping",
            pct(x)
        ));
    }
    if let Some(n) = a.lock_contended.filter(|n| *n > 0) {
        w.push(format!(
            "its threads found the ring's mutex taken {n} times ({:.2} per op)",
            n as f64 / a.ops.max(1) as f64
        ));
    }
    if let (Some(d), Some(k)) = (a.doorbells_per_op, a.wakeups_per_op) {
        if d >= 0.05 || k >= 0.05 {
            w.push(format!(
                "{d:.2} doorbells and {k:.2} server wake-ups per request (each a sleep and a wake-up across CPUs)"
            ));
        }
    }
    if let Some(p) = fa.page_faults_per_mib.filter(|p| *p >= 128.0) {
        w.push(format!("{p:.0} page faults per MiB"));
    }
    if let (Some(ca), Some(cb)) = (a.cpu_ns_per_op(), b.cpu_ns_per_op()) {
        if ca >= 1.5 * cb {
            w.push(format!(
                "{} of CPU per op, all threads counted (against {})",
                fmt_ns(ca),
                fmt_ns(cb)
            ));
        }
    }
    if fa.wall_s > 0.0 && fa.steal_s / fa.wall_s >= 0.1 {
        w.push(format!(
            "the hypervisor stole {} of its run",
            pct(fa.steal_s / fa.wall_s)
        ));
    }
    w
}

/// Why `a` took less time per op than `b`.
pub(crate) fn why_faster(a: &Row, b: &Row) -> Vec<String> {
    let (fa, fb) = (&a.facts, &b.facts);
    let mut w = Vec::new();
    if let (Some(sa), Some(sb)) = (fa.syscalls_per_op, fb.syscalls_per_op) {
        if sa <= 0.5 * sb {
            w.push(format!("{sa:.3} system calls per op against {sb:.3}"));
        }
    } else if fa.rw_syscalls_per_op > 0.0 && fa.rw_syscalls_per_op <= 0.5 * fb.rw_syscalls_per_op {
        w.push(format!(
            "{:.4} read/write calls per op against {:.2} (the kernel's count)",
            fa.rw_syscalls_per_op, fb.rw_syscalls_per_op
        ));
    }
    if fa.info_maps() {
        w.push(format!(
            "it copies into a mapping and pays page faults instead of calls ({:.0} per MiB)",
            fa.page_faults_per_mib.unwrap_or(0.0)
        ));
    }
    if let Some(m) = a.mean_batch.filter(|m| *m >= 4.0) {
        w.push(format!("{m:.1} requests per submission"));
    }
    if let (Some(ca), Some(cb)) = (a.cpu_ns_per_op(), b.cpu_ns_per_op()) {
        if ca <= cb / 1.5 {
            w.push(format!(
                "{} of CPU per op, all threads counted (against {})",
                fmt_ns(ca),
                fmt_ns(cb)
            ));
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

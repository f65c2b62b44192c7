//! The kernel-vs-user note's question (Adkins): why was the kernel module slower than the user program?

use super::reply::{median, x, Ctx, Reply};
use crate::series::text;
use serde_json::Value;

/// One way of writing the lines, over its runs: medians in ms.
struct Way {
    runs: usize,
    lines: f64,
    wall: f64,
    wall_min: f64,
    wall_max: f64,
    cpu: f64,
    /// Wall minus CPU time: off the CPU, waiting (for fsync).
    off: f64,
    /// The fsync's own time, where the runs timed it apart.
    fsync: Option<f64>,
    /// CPU time rendering the lines, before the timer.
    render: Option<f64>,
    /// Write-family calls the kernel counted over the span.
    calls: Option<f64>,
    /// The process's CPU per line, ns (median over the runs).
    cpu_per_line: Option<f64>,
}

fn way(c: &Ctx, method: &str) -> Option<Way> {
    // The records (their figures cited as read).
    let rs: Vec<&Value> = c
        .recs
        .iter()
        .copied()
        .filter(|r| {
            r.get("result")
                .is_some_and(|x| text(x.get("workload")) == "decimal-lines")
        })
        .filter(|r| text(crate::series::at(r, &["result", "spec", "method"])) == method)
        .collect();
    let num = |r: &Value, p: &[&str]| c.num(r, p);
    let ms = |r: &&Value, p: &[&str]| num(r, p).map(|v| v * 1e3);
    let mut wall: Vec<f64> = rs.iter().filter_map(|r| ms(r, &["wall_s"])).collect();
    let mut cpu: Vec<f64> = rs
        .iter()
        .filter_map(|r| {
            Some(ms(r, &["cpu", "process", "user_s"])? + ms(r, &["cpu", "process", "sys_s"])?)
        })
        .collect();
    let mut off: Vec<f64> = wall
        .iter()
        .zip(&cpu)
        .map(|(w, c)| (w - c).max(0.0))
        .collect();
    let mut fsync: Vec<f64> = rs.iter().filter_map(|r| ms(r, &["fsync_s"])).collect();
    let mut render: Vec<f64> = rs.iter().filter_map(|r| ms(r, &["render_cpu_s"])).collect();
    let mut calls: Vec<f64> = rs.iter().filter_map(|r| num(r, &["write_calls"])).collect();
    let mut cpu_line: Vec<f64> = rs
        .iter()
        .filter_map(|r| num(r, &["cpu_ns_per_line"]))
        .collect();
    Some(Way {
        fsync: median(&mut fsync),
        render: median(&mut render),
        calls: median(&mut calls),
        cpu_per_line: median(&mut cpu_line),
        runs: wall.len(),
        lines: rs.first().and_then(|r| num(r, &["spec", "lines"]))?,
        wall_min: wall.iter().copied().fold(f64::INFINITY, f64::min),
        wall_max: wall.iter().copied().fold(0.0, f64::max),
        wall: median(&mut wall)?,
        cpu: median(&mut cpu)?,
        off: median(&mut off)?,
    })
}

/// Why was the kernel module slower than the user program?
pub fn kernel_module_slower(c: &Ctx) -> Reply {
    let mut parts = Vec::new();
    if let (Some(k), Some(u), Some(kmin), Some(kmax)) = (
        c.seed("kernel_median_ms"),
        c.seed("user_median_ms"),
        c.seed("kernel_min_ms"),
        c.seed("kernel_max_ms"),
    ) {
        parts.push(format!(
            "The note timed its kernel module with getnstimeofday from open to close, fsync included, and its \
             user program with clock(), which counts CPU time only, without any fsync: {k} ms against {u} ms \
             median ({}), the module's runs ranging from {kmin} to {kmax} ms ({} apart).",
            x(k / u),
            x(kmax / kmin)
        ));
    }
    let (wpl, stdio, one) = (
        way(c, "write-per-line"),
        way(c, "stdio"),
        way(c, "one-write"),
    );
    let Some(w) = wpl.as_ref().or(stdio.as_ref()) else {
        return Reply::not_here(
            parts.join(" "),
            "the kernel-user suite's decimal-lines runs (write-per-line, stdio, one-write)",
        );
    };
    let mut here = Vec::new();
    for (m, what) in [
        (
            &wpl,
            "write() per line, as the module called vfs_write per line,",
        ),
        (&stdio, "stdio (fputs-like fwrite into a 4 KiB buffer)"),
        (&one, "one write() of the whole text"),
    ] {
        if let Some(m) = m {
            here.push(format!(
                "{what} {:.2} ms (runs {:.2}-{:.2}), {:.2} ms of it on the CPU",
                m.wall, m.wall_min, m.wall_max, m.cpu
            ));
        }
    }
    parts.push(format!(
        "In this run, {} runs each of {:.0} lines, from the first write until fsync returned: {}.",
        w.runs,
        w.lines,
        here.join("; ")
    ));
    let waiting = one.as_ref().unwrap_or(w);
    parts.push(match waiting.fsync {
        Some(f) => format!(
            "fsync, timed apart, took {f:.2} ms of one write()'s {:.2} ms run (median, {:.0}%), the time off the \
             CPU {:.2} ms: the note set a wall time that includes the flush against a CPU time that does not, and \
             a device flush varies from run to run as its module's times did.",
            waiting.wall,
            f / waiting.wall.max(1e-9) * 100.0,
            waiting.off
        ),
        None => format!(
            "The time off the CPU (wall minus CPU time, median {:.2} ms for one write() of the text, {:.0}% of its \
             run) is the wait for fsync: the note set a wall time that includes it against a CPU time that does \
             not, and a device flush varies from run to run as its module's times did.",
            waiting.off,
            waiting.off / waiting.wall.max(1e-9) * 100.0
        ),
    });
    if let Some(p) = way(c, crate::lines::AS_PUBLISHED) {
        parts.push(format!(
            "The note's user program as published (stdio per line, no fsync, timed by its CPU time like clock()): \
             {:.2} ms of CPU on this machine, median of {} runs{}{}, against its {} ms.",
            p.cpu,
            p.runs,
            p.render
                .map(|r| format!(", {r:.2} ms more for rendering the lines as its sprintf did"))
                .unwrap_or_default(),
            p.calls
                .map(|k| format!(", {k:.0} write calls"))
                .unwrap_or_default(),
            c.seed("user_median_ms").map_or("-".into(), |u| format!("{u}"))
        ));
    }
    if let (Some(a), Some(b)) = (&wpl, &stdio) {
        if let (Some(ka), Some(kb)) = (a.calls, b.calls) {
            parts.push(format!(
                "The kernel counted {ka:.0} write calls for write() per line against {kb:.0} for stdio."
            ));
        }
    }
    if let (Some(a), Some(b)) = (&wpl, &stdio) {
        let positive = |v: Option<f64>| v.filter(|v| *v > 0.0);
        if let (Some(ca), Some(cb)) = (positive(a.cpu_per_line), positive(b.cpu_per_line)) {
            parts.push(format!(
                "On the CPU, a write() per line cost {} stdio's time ({} against {} per line): a \
                 system call per line, which the module paid as a vfs_write per line without the mode switch, \
                 against a few calls for stdio's buffered 4 KiB.",
                x(ca / cb),
                super::reply::ns(ca),
                super::reply::ns(cb)
            ));
        }
    }
    match (way(c, crate::driver::kwrite::KERNEL_MODULE), &wpl) {
        (Some(k), Some(u)) => {
            parts.push(module_text(&k, u));
            Reply::answered(parts.join(" "))
        }
        _ => Reply::partly(
            parts.join(" "),
            "an in-kernel writer beside the user programs: iolab's sink driver writes the lines from a module \
             (kernel_write per line, vfs_fsync, timed with ktime) where it is loaded, in `iolab vm`'s guest \
             (`iolab suite kernel-user --vm`)",
        ),
    }
}

/// The kernel module for real (iolab's sink driver) beside write() per line, fsync in both.
fn module_text(k: &Way, u: &Way) -> String {
    format!(
        "The kernel module in this run (iolab's sink driver: kernel_write per line, then vfs_fsync, timed with ktime \
         as the note's module timed itself): {:.2} ms median of {} runs (runs {:.2}-{:.2}), against {:.2} ms for \
         write() per line with its fsync ({} the time): {}.",
        k.wall,
        k.runs,
        k.wall_min,
        k.wall_max,
        u.wall,
        x(k.wall / u.wall.max(1e-9)),
        if k.wall_min > u.wall_max {
            "with the flush in both spans the module was slower in every run, so the note's difference is \
             not the flush alone"
        } else if k.wall_max < u.wall_min {
            "with the flush in both spans the module was faster in every run: timed alike, the kernel is not \
             the slower"
        } else {
            "their runs overlap: timed alike, fsync included in both, neither is the slower"
        }
    )
}

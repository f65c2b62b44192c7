//! The kernel-vs-user note's question (Adkins): why was the kernel module slower than the user program?
//!
//! A conclusion is not stated as settled where the runs cannot carry it: a difference inside the runs'
//! spread says "within noise", and runs their records call disturbed, or (where the records carry no
//! disturbance figure) runs that spent more time off the CPU than their flush explains, make the answer
//! indicative, with the figures.

use super::reply::{median, x, Ctx, Reply, Status};
use crate::series::text;
use iolab_engine::disturbance::RUNQUEUE_LIMIT;
use iolab_engine::method::stdio;
use serde_json::Value;

/// One run's figures, ms (`invol`: the kernel took its CPU from it this many times).
#[derive(Debug, Clone, Copy)]
struct Run {
    wall: f64,
    cpu: f64,
    fsync: Option<f64>,
    invol: Option<f64>,
}

impl Run {
    /// The share of the run spent off the CPU that its flush does not explain: wall minus CPU minus the
    /// whole fsync (which is more than fsync's own time off the CPU), over the wall time; none where a
    /// way that flushes did not time its flush apart.
    fn unexplained(&self, flushes: bool) -> Option<f64> {
        let flush = if flushes { self.fsync? } else { 0.0 };
        Some((self.wall - self.cpu - flush) / self.wall.max(1e-9))
    }
}

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
    /// The process's CPU per line, ns (median over the runs), and the range of the middle runs.
    cpu_per_line: Option<f64>,
    cpu_line_range: Option<(f64, f64)>,
    /// The run with the median share of time off the CPU that its flush does not explain, and that share.
    off_run: Option<(Run, f64)>,
    /// What disturbed the runs whose records say they were (`result.disturbance`, where recorded), and
    /// whether any record carries a disturbance figure at all.
    disturbed: Vec<String>,
    recorded: bool,
}

/// The way's runs: each record's figures (cited as read), and what disturbed it where its record says.
fn runs_of(c: &Ctx, rs: &[&Value]) -> (Vec<Run>, Vec<String>, bool) {
    let ms = |r: &Value, p: &[&str]| c.num(r, p).map(|v| v * 1e3);
    let mut runs = Vec::new();
    for r in rs {
        let (Some(wall), Some(user), Some(sys)) = (
            ms(r, &["wall_s"]),
            ms(r, &["cpu", "process", "user_s"]),
            ms(r, &["cpu", "process", "sys_s"]),
        ) else {
            continue;
        };
        runs.push(Run {
            wall,
            cpu: user + sys,
            fsync: ms(r, &["fsync_s"]),
            invol: None,
        });
    }
    let mut whys = Vec::new();
    let recorded = rs
        .iter()
        .any(|r| r.pointer("/result/disturbance").is_some());
    for r in rs {
        let d = r.pointer("/result/disturbance");
        if d.and_then(|d| d.get("verdict")).and_then(|v| v.as_str()) == Some("disturbed") {
            for k in ["runqueue_share", "steal_share", "psi_some", "others_cpus"] {
                c.num(r, &["disturbance", k]);
            }
            let why = d.and_then(|d| d.get("why")).and_then(|w| w.as_str());
            whys.push(why.unwrap_or("disturbed").to_string());
        }
    }
    (runs, whys, recorded)
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
    let (runs, disturbed, recorded) = runs_of(c, &rs);
    let mut wall: Vec<f64> = runs.iter().map(|r| r.wall).collect();
    let mut cpu: Vec<f64> = runs.iter().map(|r| r.cpu).collect();
    let mut off: Vec<f64> = runs.iter().map(|r| (r.wall - r.cpu).max(0.0)).collect();
    let mut fsync: Vec<f64> = runs.iter().filter_map(|r| r.fsync).collect();
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
        cpu_line_range: (!cpu_line.is_empty())
            .then(|| iolab_engine::stats::middle_range(cpu_line.clone())),
        cpu_per_line: median(&mut cpu_line),
        off_run: off_run(c, &rs, &runs, method),
        disturbed,
        recorded,
        runs: wall.len(),
        lines: rs.first().and_then(|r| num(r, &["spec", "lines"]))?,
        wall_min: wall.iter().copied().fold(f64::INFINITY, f64::min),
        wall_max: wall.iter().copied().fold(0.0, f64::max),
        wall: median(&mut wall)?,
        cpu: median(&mut cpu)?,
        off: median(&mut off)?,
    })
}

/// The run (one of them, not an average) with the median share of time off the CPU that its flush does
/// not explain, its involuntary context switches cited; none for the in-kernel writer (its span is one
/// ktime figure) or where the flush was not timed apart.
fn off_run(c: &Ctx, rs: &[&Value], runs: &[Run], method: &str) -> Option<(Run, f64)> {
    if method == crate::kwrite::KERNEL_MODULE || rs.len() != runs.len() {
        return None;
    }
    let flushes = method != crate::lines::AS_PUBLISHED;
    let mut shares: Vec<(usize, f64)> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| Some((i, r.unexplained(flushes)?)))
        .collect::<Option<_>>()?;
    shares.sort_by(|a, b| a.1.total_cmp(&b.1));
    let &(i, share) = shares.get(shares.len().checked_sub(1)? / 2)?;
    let mut run = runs[i];
    run.invol = c.num(rs[i], &["cpu", "process", "involuntary_ctx_switches"]);
    Some((run, share))
}

/// Why the runs cannot carry a settled conclusion, if they cannot: the sentence saying so, and what a
/// verdict needs. Runs their records call disturbed; else, where the records carry no disturbance figure,
/// a way whose median run spent more than [`RUNQUEUE_LIMIT`] of its span off the CPU beyond its flush.
fn unsettled(ways: &[(&str, &Way)]) -> Option<(String, String)> {
    if let Some((name, w)) = ways.iter().find(|(_, w)| !w.disturbed.is_empty()) {
        return Some((
            format!(
                "{} of the {} runs of {name} were disturbed ({}): their times are partly other work's.",
                w.disturbed.len(),
                w.runs,
                w.disturbed[0]
            ),
            format!("a quieter machine: runs of {name} were disturbed ({})", w.disturbed[0]),
        ));
    }
    let (name, run) = ways.iter().find_map(|(n, w)| {
        let (run, share) = w.off_run?;
        (!w.recorded && share > RUNQUEUE_LIMIT).then_some((*n, run))
    })?;
    let invol = run
        .invol
        .filter(|n| *n > 0.0)
        .map(|n| {
            format!(
                ", and the kernel took its CPU from it {n:.0} times (involuntary context switches)"
            )
        })
        .unwrap_or_default();
    let spent = match run.fsync {
        Some(f) => format!(
            "{:.2} ms from the first write until fsync returned, {:.2} ms of it on the CPU and {f:.2} ms in \
             fsync: more time off the CPU than the flush explains",
            run.wall, run.cpu
        ),
        _ => format!(
            "{:.2} ms with no flush in its span, {:.2} ms of it on the CPU: the rest off the CPU, waiting for \
             nothing it asked for",
            run.wall, run.cpu
        ),
    };
    Some((
        format!(
            "These times are indicative: the median run of {name} by time off the CPU spent {spent}{invol}. \
             These records carry no run-queue, steal or CPU-pressure figure (made before iolab recorded them \
             for decimal lines), so a wait for a CPU (other work) cannot be told apart from a wait inside the \
             filesystem."
        ),
        format!(
            "a quieter machine, or a run of this iolab, whose records carry their disturbance: the runs of {name} spent more of their span off the CPU than their flush explains"
        ),
    ))
}

/// ": within noise (...)" where the middle runs of `a` and `b` overlap in CPU per line; else nothing.
fn cpu_noise(a: &Way, b: &Way) -> String {
    match (a.cpu_line_range, b.cpu_line_range) {
        (Some((al, ah)), Some((bl, bh))) if al <= bh && bl <= ah => format!(
            "; within noise (their middle runs took {}-{} and {}-{} of CPU per line, ranges that overlap), so \
             neither is shown the dearer",
            super::reply::ns(al),
            super::reply::ns(ah),
            super::reply::ns(bl),
            super::reply::ns(bh)
        ),
        _ => String::new(),
    }
}

/// What an answer without the in-kernel writer's runs needs.
const STAND_IN: &str = "an in-kernel writer beside the user programs: iolab's sink driver writes the lines from a \
     module (kernel_write per line, vfs_fsync, timed with ktime) where it is loaded, in `iolab vm`'s guest \
     (`iolab suite kernel-user --vm`)";

/// Why was the kernel module slower than the user program?
pub fn kernel_module_slower(c: &Ctx) -> Reply {
    let mut parts: Vec<String> = note_text(c).into_iter().collect();
    let (wpl, stdio, one) = (
        way(c, "write-per-line"),
        way(c, stdio::INFO.name),
        way(c, "one-write"),
    );
    let Some(w) = wpl.as_ref().or(stdio.as_ref()) else {
        return Reply::not_here(
            parts.join(" "),
            "the kernel-user suite's decimal-lines runs (write-per-line, stdio, one-write)",
        );
    };
    parts.push(here_text(w, [&wpl, &stdio, &one]));
    parts.push(fsync_text(one.as_ref().unwrap_or(w)));
    let published = way(c, crate::lines::AS_PUBLISHED);
    parts.extend(published.as_ref().map(|p| published_text(c, p)));
    if let (Some(a), Some(b)) = (&wpl, &stdio) {
        if let (Some(ka), Some(kb)) = (a.calls, b.calls) {
            parts.push(format!(
                "The kernel counted {ka:.0} write calls for write() per line against {kb:.0} for stdio."
            ));
        }
        parts.extend(cpu_text(a, b));
    }
    let module = way(c, crate::kwrite::KERNEL_MODULE);
    if let (Some(k), Some(u)) = (&module, &wpl) {
        parts.push(module_text(k, u));
    }
    // Every way the answer read: none may be disturbed for its conclusions to stand as settled.
    let read: Vec<(&str, &Way)> = [
        ("write() per line", &wpl),
        (stdio::INFO.name, &stdio),
        ("one write()", &one),
        ("the note's user program as published", &published),
        ("the kernel module", &module),
    ]
    .into_iter()
    .filter_map(|(n, w)| Some((n, w.as_ref()?)))
    .collect();
    let unsettled = unsettled(&read);
    parts.extend(unsettled.as_ref().map(|u| u.0.clone()));
    let text = parts.join(" ");
    let stand_in = (module.is_none() || wpl.is_none()).then_some(STAND_IN);
    match (unsettled, stand_in) {
        (Some((_, why)), n) => Reply {
            status: Status::Indicative,
            text,
            needs: Some(n.map_or(why.clone(), |n| format!("{n}; and {why}"))),
        },
        (None, Some(n)) => Reply::partly(text, n),
        (None, None) => Reply::answered(text),
    }
}

/// How the note timed its two programs, and its figures.
fn note_text(c: &Ctx) -> Option<String> {
    let (k, u, kmin, kmax) = (
        c.seed("kernel_median_ms")?,
        c.seed("user_median_ms")?,
        c.seed("kernel_min_ms")?,
        c.seed("kernel_max_ms")?,
    );
    Some(format!(
        "The note timed its kernel module with getnstimeofday from open to close, fsync included, and its \
         user program with clock(), which counts CPU time only, without any fsync: {k} ms against {u} ms \
         median ({}), the module's runs ranging from {kmin} to {kmax} ms ({} apart).",
        x(k / u),
        x(kmax / kmin)
    ))
}

/// This run's ways: each one's median wall time, its runs' range, and its CPU time.
fn here_text(w: &Way, ways: [&Option<Way>; 3]) -> String {
    let mut here = Vec::new();
    for (m, what) in ways.into_iter().zip([
        "write() per line, as the module called vfs_write per line,",
        "stdio (fputs-like fwrite into a 4 KiB buffer)",
        "one write() of the whole text",
    ]) {
        if let Some(m) = m {
            here.push(format!(
                "{what} {:.2} ms (runs {:.2}-{:.2}), {:.2} ms of it on the CPU",
                m.wall, m.wall_min, m.wall_max, m.cpu
            ));
        }
    }
    format!(
        "In this run, {} runs each of {:.0} lines, from the first write until fsync returned: {}.",
        w.runs,
        w.lines,
        here.join("; ")
    )
}

/// Where the time off the CPU went: the flush, which the note's user program never timed.
fn fsync_text(waiting: &Way) -> String {
    match waiting.fsync {
        Some(f) => format!(
            "fsync, timed apart, took {f:.2} ms of one write()'s {:.2} ms run (median, {:.0}%), the time off the \
             CPU {:.2} ms: the note set a wall time that includes the flush against a CPU time that does not (how \
             much a flush takes, and how much it varies from run to run, is the device's: the note's module \
             ranged widely, this run's runs are above).",
            waiting.wall,
            f / waiting.wall.max(1e-9) * 100.0,
            waiting.off
        ),
        None => format!(
            "The time off the CPU (wall minus CPU time, median {:.2} ms for one write() of the text, {:.0}% of its \
             run) is the wait for fsync: the note set a wall time that includes it against a CPU time that does \
             not (how much a flush takes, and how much it varies, is the device's).",
            waiting.off,
            waiting.off / waiting.wall.max(1e-9) * 100.0
        ),
    }
}

/// The note's user program as published, timed as it timed itself (CPU time, no fsync).
fn published_text(c: &Ctx, p: &Way) -> String {
    format!(
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
    )
}

/// CPU per line, write() per line against stdio: why a call per line costs more, where the runs show it
/// (not where their middle runs overlap: then within noise).
fn cpu_text(a: &Way, b: &Way) -> Option<String> {
    let positive = |v: Option<f64>| v.filter(|v| *v > 0.0);
    let (ca, cb) = (positive(a.cpu_per_line)?, positive(b.cpu_per_line)?);
    let noise = cpu_noise(a, b);
    Some(format!(
        "On the CPU, a write() per line cost {} stdio's time ({} against {} per line){}.",
        x(ca / cb),
        super::reply::ns(ca),
        super::reply::ns(cb),
        if !noise.is_empty() {
            noise
        } else if ca > cb {
            ": a system call per line, which the module paid as a vfs_write per line without the mode switch, \
             against a few calls for stdio's buffered 4 KiB"
                .to_string()
        } else {
            ": a system call per line cost less than stdio's formatting and buffering here, so the calls are \
             not what made the difference"
                .to_string()
        }
    ))
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

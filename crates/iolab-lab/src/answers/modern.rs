//! The `modern` suite's questions: what the interfaces of 2024-2026 kernels save against their plain
//! counterparts on one workload (vectored fixed buffers, a minimum wait time), and when uncached buffered
//! I/O (RWF_DONTCACHE) is worth it beside buffered and O_DIRECT.

use super::reply::{faster, is, ns, pct, thousands, x, Ctx, Reply, TIE_FRACTION};
use crate::findings_compare::row::noise;
use crate::findings_compare::Fig;
use crate::findings_compare::Row;
use iolab_engine::method::{io_uring, uring_cmd};

/// The io_uring row of `c` whose requests used `opcode` with no minimum wait.
fn by_opcode<'a>(c: &'a Ctx, opcode: &str) -> Option<&'a Row> {
    c.row(|r| {
        is(r, &io_uring::INFO)
            && r.facts.opcode.as_deref() == Some(opcode)
            && r.facts.min_wait_us == 0
    })
}

/// The CPU per op and time per op of `new` against `old` (same workload), with what the runs' noise says.
fn saving(old: &Row, new: &Row, old_name: &str, new_name: &str) -> String {
    let cpu = match (old.cpu_ns_per_op(), new.cpu_ns_per_op()) {
        (Some(a), Some(b)) => format!("{} of CPU per op against {} ({})", ns(b), ns(a), x(b / a)),
        _ => "no CPU figure".into(),
    };
    let verdict = match faster(new, old) {
        Some(true) => format!("{new_name} was faster"),
        Some(false) => format!("{new_name} was slower"),
        None => tie(new, old),
    };
    format!(
        "{}: {new_name} took {} per op against {} with {old_name} ({}), {cpu}: {verdict}{}.",
        new.workload(),
        ns(new.ns()),
        ns(old.ns()),
        x(new.ns() / old.ns()),
        noise(new, old)
    )
}

/// What vectored fixed buffers and a minimum wait time save per op, each against its plain counterpart on
/// the same workload and depth.
pub fn fixed_and_min_wait(c: &Ctx) -> Reply {
    let mut parts = Vec::new();
    let mut missing: Vec<String> = Vec::new();
    let pairs = [
        ("READV", "READV_FIXED"),
        ("READ", "READ_FIXED"),
        ("WRITEV", "WRITEV_FIXED"),
        ("WRITE", "WRITE_FIXED"),
    ];
    let mut ways = Vec::new();
    for (plain, fixed) in pairs {
        if let (Some(a), Some(b)) = (by_opcode(c, plain), by_opcode(c, fixed)) {
            if a.same_workload(b) {
                parts.push(saving(a, b, plain, fixed));
                ways.extend(faster(b, a));
            }
        }
    }
    if parts.is_empty() {
        missing.push("an io_uring row beside the same run with --fixed-bufs".into());
    }
    parts.extend(provided(c));
    let waited =
        c.row(|r| is(r, &io_uring::INFO) && r.facts.min_wait_us > 0 && !r.facts.wait_region);
    let plain = waited.and_then(|w| {
        c.row(|r| {
            is(r, &io_uring::INFO)
                && r.facts.min_wait_us == 0
                && r.facts.opcode == w.facts.opcode
                && r.same_workload(w)
        })
    });
    match (waited, plain) {
        (Some(w), Some(p)) => parts.push(min_wait_text(w, p)),
        _ => missing.push("a --min-wait row beside the same run without it".into()),
    }
    let region = waited.and_then(|w| {
        c.row(|r| {
            r.facts.wait_region && r.facts.min_wait_us == w.facts.min_wait_us && r.same_workload(w)
        })
    });
    match (waited, region) {
        (Some(w), Some(g)) => parts.push(saving(
            w,
            g,
            "the copied wait arguments",
            "the registered wait region",
        )),
        (Some(_), None) => missing.push(
            c.not_run("wait region")
                .map(|why| format!("the wait-region step, which did not run: {why}"))
                .unwrap_or_else(|| "a --wait-region row beside the same --min-wait run".into()),
        ),
        _ => {}
    }
    if parts.is_empty() {
        return Reply::not_here(
            "This run has no pair of io_uring rows that differ only in the opcode or the wait."
                .into(),
            format!("the modern suite's steps: {}", missing.join(", ")),
        );
    }
    if c.rows.iter().any(|r| {
        r.facts
            .opcode
            .as_deref()
            .is_some_and(|o| o.contains("asked for"))
    }) {
        missing.push(
            "a kernel with the vectored fixed-buffer opcodes (6.15+): this one ran the plain ones"
                .into(),
        );
    }
    let mut text = parts.join(" ");
    // Fixed buffers faster with one opcode and slower with another on one path: single runs disagree.
    let spread = (ways.contains(&true) && ways.contains(&false))
        .then(|| one_path_spread(c))
        .flatten();
    if let Some(s) = &spread {
        text += &format!(" {s}");
    }
    match (spread, missing.is_empty()) {
        (Some(_), _) => Reply {
            status: super::reply::Status::Indicative,
            text,
            needs: Some(
                std::iter::once(
                    "repeats (--repeat 5) to tell these differences from the device's run-to-run \
                                 spread"
                        .to_string(),
                )
                .chain(missing)
                .collect::<Vec<_>>()
                .join("; "),
            ),
        },
        (None, true) => Reply::answered(text),
        (None, false) => Reply::partly(text, missing.join("; ")),
    }
}

/// Reads into buffers the kernel picks (`--provided-buffers`: READ with IOSQE_BUFFER_SELECT) against the
/// same reads naming their buffer, plain and registered; none where the step did not run.
fn provided(c: &Ctx) -> Vec<String> {
    let Some(picked) = by_opcode(c, "READ, buffer select") else {
        return Vec::new();
    };
    ["READ", "READ_FIXED"]
        .into_iter()
        .filter_map(|named| {
            let a = by_opcode(c, named).filter(|a| a.same_workload(picked))?;
            Some(saving(a, picked, named, "READ into provided buffers"))
        })
        .collect()
}

/// Single runs of io_uring rows of one workload that differ only in the opcode or the wait, whose rates
/// spread wider than a tie: said with its ends where the fixed-buffer pairs disagree in direction.
fn one_path_spread(c: &Ctx) -> Option<String> {
    let first = c.row(|r| is(r, &io_uring::INFO) && r.facts.opcode.is_some())?;
    let rows =
        c.rows_where(|r| is(r, &io_uring::INFO) && r.same_workload(first) && r.spread.is_none());
    let lo = rows
        .iter()
        .copied()
        .min_by(|a, b| a.iops().total_cmp(&b.iops()))?;
    let hi = rows
        .iter()
        .copied()
        .max_by(|a, b| a.iops().total_cmp(&b.iops()))?;
    let (a, b) = (lo.cited(Fig::Iops), hi.cited(Fig::Iops));
    (rows.len() > 2 && b > a * (1.0 + TIE_FRACTION)).then(|| {
        format!(
            "Fixed buffers made one opcode faster and another slower on the same path, where their effect \
             is the same: one run of each does not tell it from the run-to-run variation of {}, whose rows \
             that differ only in the opcode, the buffers or the wait spread from {} to {} IOPS.",
            first.workload(),
            thousands(a),
            thousands(b)
        )
    })
}

/// What a tie between two rows means: their repeated runs overlap, or, run once, their rates are closer
/// than one run of each can tell apart.
fn tie(a: &Row, b: &Row) -> String {
    if a.spread.is_some() && b.spread.is_some() {
        "a tie (their repeated runs overlap)".into()
    } else {
        format!(
            "a tie (rates within {}, which one run of each cannot tell apart)",
            pct(TIE_FRACTION)
        )
    }
}

/// `--min-wait`: the waits, wake-ups and latency it changed.
fn min_wait_text(w: &Row, p: &Row) -> String {
    let per_op = |v: Option<f64>| v.map_or("not counted".to_string(), |v| format!("{v:.2}"));
    let wakeups = match (w.facts.ctx_switches_per_op, p.facts.ctx_switches_per_op) {
        (Some(a), Some(b)) if a < 0.8 * b => "fewer wake-ups, each request waiting up to the minimum longer",
        (Some(a), Some(b)) if a <= 1.25 * b => {
            "as many context switches either way: the saving is in io_uring_enter calls, not in wake-ups"
        }
        (Some(_), Some(_)) => "more context switches with the minimum wait than without",
        _ => "the context switches were not counted",
    };
    format!(
        "{}: with a minimum wait of {} µs for a batch of {}, io_uring_enter calls per op went from {} to {} and \
         context switches per op from {} to {} (the kernel's count), mean latency from {} to {} and time per op \
         from {} to {}{}: {wakeups}.",
        w.workload(),
        {
            w.cite_paths(&["result.spec.ring.min_wait_usec"]);
            w.facts.min_wait_us
        },
        w.cited(Fig::Batch),
        per_op(p.cited_opt(Fig::CallsPerOp)),
        per_op(w.cited_opt(Fig::CallsPerOp)),
        per_op(p.cited_opt(Fig::CtxSwitchesPerOp)),
        per_op(w.cited_opt(Fig::CtxSwitchesPerOp)),
        ns(p.cited(Fig::LatMeanNs)),
        ns(w.cited(Fig::LatMeanNs)),
        ns(p.ns()),
        ns(w.ns()),
        noise(w, p)
    )
}

/// Uncached buffered I/O beside buffered and O_DIRECT, per workload: the rate and CPU of each. Where the
/// file fits in the page cache the cliff buffered I/O falls off is not reached, and the answer says so.
pub fn dontcache_when(c: &Ctx) -> Reply {
    let uncached = c.rows_where(|r| r.facts.rw_flags & libc::RWF_DONTCACHE as u32 != 0);
    let limited = uncached.iter().any(|r| r.memory.is_some());
    let (mut parts, mut cliffs) = (Vec::new(), 0);
    for u in &uncached {
        let like = |r: &&Row| {
            r.place == u.place
                && r.facts.write == u.facts.write
                && r.facts.bs == u.facts.bs
                && r.pattern == u.pattern
                && r.memory.as_ref().map(|m| m.limit) == u.memory.as_ref().map(|m| m.limit)
        };
        let plain = |direct: bool| {
            c.rows
                .iter()
                .copied()
                .find(|r| like(r) && r.facts.direct == direct && r.facts.rw_flags == 0)
        };
        let under = u
            .memory
            .as_ref()
            .map(|m| {
                u.cite_paths(&["result.memory.limit"]);
                format!(" under a {} memory limit", mib_bytes(m.limit))
            })
            .unwrap_or_default();
        let mut line = format!(
            "{}{under}: uncached buffered {}/s",
            u.workload(),
            mib(u.cited(Fig::MibS))
        );
        for (name, r) in [("buffered", plain(false)), ("O_DIRECT", plain(true))] {
            if let Some(r) = r {
                let verdict = match faster(u, r) {
                    Some(true) => "uncached faster".to_string(),
                    Some(false) => format!("{name} faster"),
                    None => tie(u, r),
                };
                line.push_str(&format!(
                    ", {name} {}/s ({} the uncached rate: {verdict}){}{}",
                    mib(r.cited(Fig::MibS)),
                    x(r.cited(Fig::MibS) / u.cited(Fig::MibS)),
                    noise(r, u),
                    cache_text(r)
                ));
                if let Some(c) = cliff_text(r).filter(|_| !r.facts.direct) {
                    line.push_str(&c);
                    cliffs += 1;
                }
            }
        }
        if let Some(cpu) = u.cpu_ns_per_op() {
            line.push_str(&format!(
                "; uncached CPU per op {}{}",
                ns(cpu),
                cache_text(u)
            ));
        }
        parts.push(line + ".");
    }
    if parts.is_empty() {
        return Reply::not_here(
            c.not_run("dontcache")
                .map(|why| format!("The uncached steps did not run: {why}"))
                .unwrap_or_else(|| "This run has no --rw-flags dontcache row.".into()),
            "a filesystem with RWF_DONTCACHE (ext4, xfs, btrfs) on Linux 6.14+",
        );
    }
    if !limited {
        parts.push(
            "Every file here fit in the page cache, so buffered I/O never had to reclaim: the cliff that uncached \
             I/O avoids is not in these rows."
                .into(),
        );
        return Reply::partly(
            parts.join(" "),
            c.not_run("memory limit")
                .map(|why| format!("the memory-limit steps, which did not run: {why}"))
                .unwrap_or_else(|| {
                    "the memory-limit steps (a file larger than a memory cgroup's limit)".into()
                }),
        );
    }
    if cliffs > 0 {
        return Reply::answered(parts.join(" "));
    }
    Reply::partly(
        parts.join(" "),
        "a buffered row under the memory limit whose page cache, read every 100 ms, reached the limit (none \
         did here: the file, or the run, was too small), to say where buffered I/O falls off",
    )
}

/// Where a buffered row under a memory limit met reclaim, from its cgroup's readings every 100 ms: when
/// the page cache first reached 90% of the limit, and what reclaim took from then on.
fn cliff_text(r: &Row) -> Option<String> {
    let m = r.memory.as_ref()?;
    let i = m
        .over_time
        .iter()
        .position(|p| p.page_cache as f64 >= 0.9 * m.limit as f64)?;
    let (full, last) = (&m.over_time[i], m.over_time.last()?);
    let n = m.over_time.len() - 1;
    for k in ["t_s", "reclaimed_pages", "limit_hits"] {
        r.cite_paths(&[
            &format!("memory.over_time.{i}.{k}"),
            &format!("memory.over_time.{n}.{k}"),
        ]);
    }
    let pages = last.reclaimed_pages.saturating_sub(full.reclaimed_pages);
    Some(format!(
        "; its page cache reached 90% of the limit {:.2} s into the {:.2} s pass, and from then on reclaim took \
         {} pages (counted by {}) while the limit was hit {} times",
        full.t_s,
        r.cited(Fig::WallS),
        thousands(pages as f64),
        m.reclaim_scope,
        thousands(last.limit_hits.saturating_sub(full.limit_hits) as f64)
    ))
}

/// ", page cache 59 MiB at the end, the limit hit 453 times": a memory-limited row's cgroup figures.
fn cache_text(r: &Row) -> String {
    r.memory
        .as_ref()
        .map(|m| {
            r.cite_paths(&["memory.page_cache_end", "memory.limit_hits"]);
            let refaults = m.refaults.map_or(String::new(), |n| {
                r.cite_paths(&["memory.refaults"]);
                format!(", {} refaults", thousands(n as f64))
            });
            format!(
                " (page cache {} at the end, the limit hit {} times{refaults})",
                mib_bytes(m.page_cache_end),
                thousands(m.limit_hits as f64),
            )
        })
        .unwrap_or_default()
}

/// "128 MiB".
fn mib_bytes(b: u64) -> String {
    iolab_engine::units::fmt_size(b)
}

/// "12.3 MiB".
fn mib(v: f64) -> String {
    iolab_engine::units::fmt_size((v * 1024.0 * 1024.0) as u64)
}

/// What NVMe passthrough (uring_cmd on /dev/ngXnY) saves against io_uring's block path on the same
/// namespace at the same depth, with interrupts and polled.
pub fn passthrough_saves(c: &Ctx) -> Reply {
    let mut parts = Vec::new();
    for polled in [false, true] {
        let block = c.row(|r| is(r, &io_uring::INFO) && r.iopoll == polled);
        let pass = c.row(|r| is(r, &uring_cmd::INFO) && r.iopoll == polled);
        if let (Some(b), Some(p)) = (block, pass) {
            // Polled only where no interrupt rose (the run's own check), not because IOPOLL was asked.
            let shown = |r: &Row| matches!(&r.facts.iopoll, Some((Some(true), _)));
            let how = match (polled, shown(b) && shown(p)) {
                (false, _) => "With interrupts",
                (true, true) => "Polled (IOPOLL)",
                (true, false) => "With IOPOLL set, but not shown polled for both",
            };
            parts.push(format!(
                "{how}: {}",
                saving(b, p, "the block path", "passthrough")
            ));
        }
    }
    if parts.is_empty() {
        // The steps' own reason is in the table already: not said again.
        let why = match c.not_run("passthrough") {
            Some(_) => "the NVMe steps above say why they did not run",
            None => "no passthrough row ran",
        };
        return Reply::not_here(
            String::new(),
            format!(
                "an NVMe disk with its generic device (/dev/ngXnY) and poll queues, which the guest of \
                 `iolab suite modern --vm` has ({why})"
            ),
        );
    }
    let text = parts.join(" ");
    if parts.len() < 2 {
        return Reply::partly(
            text,
            "both the interrupt-driven and the polled pair: a disk with poll queues (nvme.poll_queues=N)",
        );
    }
    Reply::answered(text)
}

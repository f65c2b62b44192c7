//! The hypervisor thesis's question (Reichenbach, §4.2): why was the offloaded NOP 82x slower than the
//! native one? Answered from the cycles each client measured itself (RDTSC inside its seccomp filter),
//! against Figure 4.3 (with user_data, as iolab's requests have it: 4,170 and 487,894 cycles), and
//! Figure 4.2 (without) against this run's NOPs whose user_data the client left unwritten.

use super::reply::{is, ns, thousands, x, Ctx, Reply};
use crate::findings_compare::Fig;
use crate::findings_compare::Row;
use iolab_engine::spec::{Doorbell, OffloadPath};

/// A row's round trip in cycles: (p50, mean) as its client measured them, or (for in-process rows) the
/// mean from iolab's clock (its TSC cycles per op x batch).
fn trip(r: &Row) -> Option<(f64, f64)> {
    match &r.client_cycles {
        Some(c) => {
            r.cite_paths(&[
                "offload.client_cycles.round_trips.p50_cycles",
                "offload.client_cycles.round_trips.mean_cycles",
            ]);
            Some((c.round_trips.p50_cycles as f64, c.round_trips.mean_cycles))
        }
        None => r.cited_opt(Fig::CyclesPerOp).map(|c| {
            let m = c * r.cited(Fig::Batch).max(1.0);
            (m, m)
        }),
    }
}

/// A client's round-trip mean without the values beyond three standard deviations: the thesis's
/// statistic (the plain mean elsewhere).
fn trimmed(r: &Row) -> Option<f64> {
    match &r.client_cycles {
        Some(c) => {
            r.cite_paths(&["offload.client_cycles.round_trips.trimmed_mean_cycles"]);
            c.round_trips.trimmed_mean_cycles
        }
        None => trip(r).map(|t| t.1),
    }
}

/// "2,352 cycles (the client's p50; mean 14,691; trimmed mean 2,410)" of a round trip, or the time
/// where there are no cycles.
fn cost(r: &Row) -> String {
    match (trip(r), r.client_cycles.is_some()) {
        (Some((p50, mean)), true) => format!(
            "{} cycles (the client's p50; mean {}{})",
            thousands(p50),
            thousands(mean),
            trimmed(r)
                .map(|t| format!(
                    ", {} without the values beyond 3 standard deviations",
                    thousands(t)
                ))
                .unwrap_or_default()
        ),
        (Some((_, mean)), false) => format!("{} cycles ({})", thousands(mean), ns(r.ns())),
        (None, _) => ns(r.ns()),
    }
}

/// An offload row of `path` at `batch` (and, when given, that broker doorbell), its NOPs with user_data.
fn path_is(r: &Row, p: OffloadPath, bell: Option<Doorbell>, batch: u32) -> bool {
    !r.no_user_data && any_data(r, p, bell, batch)
}

/// `path_is`, with or without user_data.
fn any_data(r: &Row, p: OffloadPath, bell: Option<Doorbell>, batch: u32) -> bool {
    r.facts.partition.is_none()
        && r.nop_requests
        && r.batch == batch
        && matches!(r.offload, Some((path, d)) if path == p && bell.is_none_or(|b| b == d))
}

/// The thesis's ratios, as a clause: Figure 4.3 first (what iolab compares with), Figure 4.2 as context.
fn seed_clause(c: &Ctx) -> Option<String> {
    let (nu, ou) = (
        c.seed("native_user_data_cycles")?,
        c.seed("offloaded_user_data_cycles")?,
    );
    let mut s = format!(
        "The thesis, with user_data set as iolab's requests have it (Figure 4.3): {} / {} cycles = {}",
        thousands(ou),
        thousands(nu),
        x(ou / nu)
    );
    if let (Some(n), Some(o)) = (c.seed("native_cycles"), c.seed("offloaded_cycles")) {
        s += &format!(
            "; the 82x of its text is Figure 4.2's, without user_data: {} / {} cycles = {}",
            thousands(o),
            thousands(n),
            x(o / n)
        );
    }
    Some(s + ".")
}

/// Figure 4.2 against Figure 4.3: a path's NOPs without user_data against the same path's with it, in the
/// thesis's statistic (round-trip means without the values beyond 3 standard deviations).
fn user_data_clause(c: &Ctx) -> Option<String> {
    let mut parts = Vec::new();
    for (p, name) in [
        (OffloadPath::Native, "the native path"),
        (OffloadPath::Kernel, "the kernel path"),
    ] {
        let with = c.row(|r| path_is(r, p, None, 1) && !r.sq_sleep);
        let without = c.row(|r| r.no_user_data && any_data(r, p, None, 1) && !r.sq_sleep);
        if let (Some(w), Some(o)) = (with.and_then(trimmed), without.and_then(trimmed)) {
            parts.push(format!(
                "{name} {} cycles without user_data against {} with it ({})",
                thousands(o),
                thousands(w),
                x(o / w)
            ));
        }
    }
    if parts.is_empty() {
        return None;
    }
    let seed = match (
        c.seed("native_cycles"),
        c.seed("native_user_data_cycles"),
        c.seed("offloaded_cycles"),
        c.seed("offloaded_user_data_cycles"),
    ) {
        (Some(n), Some(nu), Some(o), Some(ou)) => format!(
            "; the thesis: {} against {} in the application ({}), {} against {} in the inmate ({})",
            thousands(n),
            thousands(nu),
            x(n / nu),
            thousands(o),
            thousands(ou),
            x(o / ou)
        ),
        _ => String::new(),
    };
    Some(format!(
        "Figure 4.2 against Figure 4.3 (the client leaving each SQE's user_data unwritten, then setting it), \
         round-trip means without the values beyond 3 standard deviations: {}{seed}.",
        parts.join(", and ")
    ))
}

/// The clock's own cost, in cycles, beside the thesis's rdtsc (Figure 4.1): iolab's clock, and one
/// counter read inside the offload client, as a process and in a guest partition, where they ran.
fn clock_clause(c: &Ctx) -> Option<String> {
    let clk = c.recs.iter().copied().find(|r| {
        r.get("result")
            .and_then(|x| x.get("workload"))
            .and_then(|w| w.as_str())
            == Some("clock")
    });
    let mut parts = Vec::new();
    if let Some(clk) = clk {
        if let (Some(ticks), Some(ns)) = (
            c.num(clk, &["clock", "overhead_ticks_mean"]),
            c.num(clk, &["clock", "overhead_ns"]),
        ) {
            parts.push(format!(
                "One read of iolab's clock costs {ticks:.0} ticks ({ns:.1} ns) on this machine"
            ));
        }
    }
    for (guest, what) in [
        (false, "inside the offload client process"),
        (true, "inside the guest partition's client"),
    ] {
        let read = c.rows.iter().find_map(|r| {
            (r.offload.is_some() && r.facts.partition.is_some() == guest)
                .then_some(())
                .and_then(|_| r.client_cycles.as_ref()?.clock_read.as_ref())
                .map(|d| (r, d, r.facts.partition.as_ref().is_some_and(|p| p.emulated)))
        });
        if let Some((r, d, emulated)) = read {
            let at = "offload.client_cycles.clock_read";
            r.cite_paths(&[
                &format!("{at}.trimmed_mean_cycles|{at}.mean_cycles"),
                &format!("{at}.count"),
                &format!("{at}.p50_cycles"),
            ]);
            parts.push(format!(
                "{what} one read of its counter took {:.0} cycles (trimmed mean of {} back-to-back pairs; p50 {}){}",
                d.trimmed_mean_cycles.unwrap_or(d.mean_cycles),
                thousands(d.count as f64),
                d.p50_cycles,
                if emulated {
                    ", under an emulated CPU"
                } else {
                    ""
                }
            ));
        }
    }
    let joined = parts.join("; ");
    let mut first = joined.chars();
    let text: String = first.next()?.to_uppercase().chain(first).collect();
    Some(format!(
        "{text}{}.",
        match (c.seed("rdtsc_app_cycles"), c.seed("rdtsc_inmate_cycles")) {
            (Some(a), Some(i)) => format!(
                "; the thesis's rdtsc cost {a:.0} cycles in the application and {i:.0} in the inmate (Figure 4.1)"
            ),
            _ => String::new(),
        }
    ))
}

/// ", 1.00 server sleeps (wake-ups) per request" or ", its server never slept".
fn per_req(r: &Row) -> String {
    r.cite_paths(&["offload.server_sleeps", "offload.doorbells", "ops"]);
    match (r.sleeps_per_op, r.doorbells_per_op) {
        (Some(s), _) if s < 0.005 => ", its server never slept".to_string(),
        (Some(s), Some(d)) => {
            format!(", {s:.2} server sleeps (each a wake-up) and {d:.2} doorbells per request")
        }
        (None, Some(d)) if d >= 0.005 => format!(", {d:.2} doorbells per request"),
        _ => String::new(),
    }
}

/// The batch-1 rows this answer reads.
struct Rows<'a> {
    inproc: Option<&'a Row>,
    native: Option<&'a Row>,
    kernel: Option<&'a Row>,
    polled: Option<&'a Row>,
    woken: Option<&'a Row>,
    asleep: Option<&'a Row>,
}

impl<'a> Rows<'a> {
    fn of(c: &'a Ctx, batch: u32) -> Rows<'a> {
        Rows {
            inproc: c.row(|r| r.nop_requests && r.batch == batch && is(r, "io_uring")),
            native: c.row(|r| path_is(r, OffloadPath::Native, None, batch)),
            // The guest-partition rows are read apart (`partition_clause`).
            kernel: c.row(|r| path_is(r, OffloadPath::Kernel, None, batch) && !r.sq_sleep),
            polled: c.row(|r| {
                path_is(r, OffloadPath::Broker, None, batch)
                    && r.offload.is_some_and(|o| o.1 != Doorbell::Eventfd)
            }),
            woken: c.row(|r| path_is(r, OffloadPath::Broker, Some(Doorbell::Eventfd), batch)),
            asleep: c.row(|r| path_is(r, OffloadPath::Kernel, None, batch) && r.sq_sleep),
        }
    }

    /// The offloaded rows and what each is, in words.
    fn offloaded(&self) -> [(Option<&'a Row>, &'static str); 4] {
        [
            (self.kernel, "through the kernel path (an SQPOLL thread on the other CPU polls the shared ring)"),
            (self.polled, "through the broker thread, polling"),
            (
                self.woken,
                "through the broker woken for every request by an eventfd doorbell (the thesis's interrupt \
                 model: an IRQ to the root cell, which then calls io_uring_enter)",
            ),
            (
                self.asleep,
                "through the kernel path with its SQ thread asleep before every request, woken through the \
                 doorbell (eventfd, iolab's thread, IORING_ENTER_SQ_WAKEUP)",
            ),
        ]
    }
}

/// Where the offloaded cycles go: polling (cache lines crossing CPUs) and wake-ups.
fn where_it_goes(base: &Row, rows: &Rows) -> String {
    let p50 = |r: &Row| trip(r).map(|t| t.0).unwrap_or(f64::NAN);
    let b = p50(base);
    let mut out = Vec::new();
    if let Some(k) = rows.kernel.or(rows.polled) {
        let d = p50(k) - b;
        out.push(format!(
            "A polling server {} {} cycles per round trip {} the baseline ({}): its client makes no system \
             call, but the request and its completion each cross between the client's CPU and the server's \
             as cache lines (the SQ tail and SQE one way, the CQE and CQ tail back, each a transfer of a line \
             the other CPU wrote), and the server burns {} of a CPU while it polls",
            if d >= 0.0 { "adds" } else { "saves" },
            thousands(d.abs()),
            if d >= 0.0 { "to" } else { "against" },
            x(p50(k) / b),
            k.cited_opt(Fig::ServiceCpuShare)
                .map_or("-".to_string(), |s| format!("{s:.2}"))
        ));
    }
    for w in [rows.woken, rows.asleep].into_iter().flatten() {
        let poll = if w.offload.is_some_and(|o| o.0 == OffloadPath::Broker) {
            rows.polled
        } else {
            rows.kernel
        };
        let extra = poll.map_or(f64::NAN, |p| p50(w) - p50(p));
        w.cite_paths(&["offload.server_sleeps", "ops"]);
        out.push(format!(
            "waking the server for every request ({} server sleeps per request) costs {} cycles per round \
             trip, {} the baseline: {} cycles more than the same path polling, the price of a sleep and a \
             wake-up across CPUs",
            w.sleeps_per_op.map_or("-".into(), |s| format!("{s:.2}")),
            thousands(p50(w)),
            x(p50(w) / b),
            thousands(extra)
        ));
    }
    if out.is_empty() {
        return "This run has no offloaded row at batch 1, so where the cycles go cannot be shown."
            .into();
    }
    let mut s = out.join("; ") + ".";
    if rows.woken.is_none() && rows.asleep.is_none() {
        s += " This run has no row whose server is woken per request, so the wake-up's share cannot be shown.";
    }
    s
}

/// This run's offloaded ratios beside Figure 4.3's, in the thesis's statistic (means of the round trips
/// left after trimming those beyond 3 standard deviations), the p50 ratios after them.
fn ratio_clause(c: &Ctx, base: &Row, rows: &Rows) -> Option<String> {
    let seed = c.seed("offloaded_user_data_cycles")? / c.seed("native_user_data_cycles")?;
    let (bt, bp) = (trimmed(base)?, trip(base)?.0);
    let r = |row: Option<&Row>| {
        let row = row?;
        Some(format!(
            "{} (p50 {})",
            x(trimmed(row)? / bt),
            x(trip(row)?.0 / bp)
        ))
    };
    let polled: Vec<String> = [r(rows.kernel), r(rows.polled)]
        .into_iter()
        .flatten()
        .collect();
    let woken: Vec<String> = [r(rows.woken), r(rows.asleep)]
        .into_iter()
        .flatten()
        .collect();
    if polled.is_empty() && woken.is_empty() {
        return None;
    }
    Some(format!(
        "Against Figure 4.3's {} (the thesis's means after trimming values beyond 3 standard deviations; the \
         same statistic in this run): the polling designs come to {}, the designs that wake their server for every \
         request (the thesis's model) to {}.",
        x(seed),
        if polled.is_empty() { "-".into() } else { polled.join(" and ") },
        if woken.is_empty() { "- (not run)".into() } else { woken.join(" and ") },
    ))
}

/// The guest-partition rows (the thesis's own setup: the client in a guest, the ring in shared memory),
/// against the in-process baseline, and whether they ran emulated.
fn partition_clause(c: &Ctx, base: &Row) -> Option<(String, bool)> {
    let rows = c.rows_where(|r| r.facts.partition.as_ref().is_some_and(|p| p.batch == 1));
    let first = rows.first()?.facts.partition.as_ref()?;
    // The guest's figure is a plain mean (wall time over round trips): the baseline's plain mean beside it.
    let bt = trip(base)?.1;
    let each: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            let p = r.facts.partition.as_ref()?;
            let cyc = p.round_trip_cycles?;
            r.cite_paths(&["offload.round_trip_cycles"]);
            Some(format!(
                "{} path {} cycles per round trip, a mean over the run ({} the baseline's mean)",
                p.path,
                thousands(cyc),
                x(cyc / bt)
            ))
        })
        .collect();
    if each.is_empty() {
        return None;
    }
    Some((
        format!(
            "From a guest partition (the thesis's setup: the client in a QEMU guest under {}, the ring in \
             ivshmem shared memory): {}{}.",
            first.accelerator,
            each.join("; "),
            if first.emulated {
                "; the guest ran emulated, so these cycles show behaviour, not the hardware's speed"
            } else {
                ""
            }
        ),
        first.emulated,
    ))
}

/// Batch 32: a round trip of 32 NOPs, and what each NOP costs in it.
fn batch_clause(c: &Ctx) -> Option<String> {
    let rows = Rows::of(c, 32);
    let mut parts = Vec::new();
    for (r, what) in [
        (rows.inproc, "in-process io_uring"),
        (rows.native, "the native path"),
    ]
    .into_iter()
    .chain(
        rows.offloaded()
            .map(|(r, w)| (r, w.split(" (").next().unwrap_or(w))),
    ) {
        let Some(r) = r else { continue };
        let Some((p50, mean)) = trip(r) else { continue };
        let n = r.cited(Fig::Batch);
        parts.push(if r.client_cycles.is_some() {
            format!(
                "{what} {} cycles per round trip of {n} NOPs (p50; mean {}), {} per NOP",
                thousands(p50),
                thousands(mean),
                thousands(p50 / n)
            )
        } else {
            format!(
                "{what} {} cycles per round trip of {n} NOPs (mean, iolab's clock), {} per NOP",
                thousands(mean),
                thousands(mean / n)
            )
        });
    }
    (!parts.is_empty()).then(|| format!("At batch 32: {}.", parts.join("; ")))
}

/// Why was the offloaded NOP 82x slower?
pub fn offload_slowdown(c: &Ctx) -> Reply {
    let rows = Rows::of(c, 1);
    let mut parts: Vec<String> = seed_clause(c).into_iter().collect();
    let Some(base) = rows.native.or(rows.inproc) else {
        parts.push("This run has no NOP row at batch 1 to compare with.".into());
        return Reply::not_here(parts.join(" "), "the offload suite's batch-1 steps");
    };
    let mut here = Vec::new();
    if let Some(i) = rows.inproc {
        here.push(format!("in-process io_uring {}", cost(i)));
    }
    if let Some(n) = rows.native {
        here.push(format!(
            "the same client process without its sandbox, entering the kernel itself (native path) {}",
            cost(n)
        ));
    }
    let ratio = |r: &Row| match (trip(r), trip(base)) {
        (Some(a), Some(b)) => a.0 / b.0,
        _ => r.ns() / base.ns(),
    };
    for (row, what) in rows.offloaded() {
        if let Some(r) = row {
            here.push(format!(
                "{what} {}, {} the baseline{}",
                cost(r),
                x(ratio(r)),
                per_req(r)
            ));
        }
    }
    parts.push(format!(
        "In this run, one NOP per round trip, timed by the client's own RDTSC: {}.",
        here.join("; ")
    ));
    parts.push(where_it_goes(base, &rows));
    parts.extend(ratio_clause(c, base, &rows));
    parts.extend(batch_clause(c));
    parts.extend(user_data_clause(c));
    parts.extend(clock_clause(c));
    let partition = partition_clause(c, base);
    match partition {
        Some((text, emulated)) => {
            parts.push(text);
            if emulated {
                return Reply::partly(
                    parts.join(" "),
                    "the guest partition with hardware virtualization (KVM), where its cycles are the CPU's",
                );
            }
            Reply::answered(parts.join(" "))
        }
        None => {
            parts.push(
                "What remains of the thesis's factor cannot be reproduced by a client on this kernel: its client \
                 was an inmate in a Jailhouse partition whose every request crossed the hypervisor (an IRQ to the \
                 root cell); in this run the client is a process on the same kernel."
                    .into(),
            );
            Reply::partly(
                parts.join(" "),
                "a client in a guest partition with the ring in ivshmem shared memory: the offload suite's guest \
                 partition steps (`iolab suite offload`, where QEMU can boot iolab's guest)",
            )
        }
    }
}

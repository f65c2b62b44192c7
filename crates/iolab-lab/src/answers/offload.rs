//! The hypervisor thesis's question (Reichenbach, §4.2): why was the offloaded NOP 82x slower than the
//! native one? Answered from the cycles each client measured itself (RDTSC inside its seccomp filter),
//! against Figure 4.3 (with user_data, as iolab's requests have it: 4,170 and 487,894 cycles), and
//! Figure 4.2 (without) against this run's NOPs whose user_data the client left unwritten.
//!
//! A ratio never mixes two clocks: both sides are the clients' own RDTSC where both rows have it, else
//! both are iolab's clock (the run's wall time per round trip x the TSC rate) ([`on_one_clock`]).

use super::reply::{is, ns, thousands, x, Ctx, Reply};
use crate::findings_compare::Fig;
use crate::findings_compare::Row;
use iolab_engine::method::io_uring;
use iolab_engine::spec::{Doorbell, OffloadPath};

/// The clock both sides of a ratio were read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Clock {
    /// The clients' own RDTSC (`offload.client_cycles`).
    Client,
    /// iolab's clock: the run's wall time per round trip x the TSC rate.
    Wall,
}

impl Clock {
    /// What a sentence adds after a ratio of this clock: nothing for the clients' RDTSC (the answer's
    /// default), the clock's name for iolab's.
    fn words(self) -> &'static str {
        match self {
            Clock::Client => "",
            Clock::Wall => {
                " (both sides by iolab's clock: the run's wall time per round trip x the TSC rate)"
            }
        }
    }
}

/// Which statistic of a round trip a ratio reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stat {
    P50,
    Mean,
    /// The mean without the values beyond 3 standard deviations (the thesis's statistic).
    Trimmed,
}

/// A row's round trip in cycles by iolab's clock: the run's wall time per round trip x the TSC rate
/// (`offload.round_trip_cycles` where the record has it; else cycles per op x batch, the same figure).
fn wall_trip(r: &Row) -> Option<f64> {
    if let Some(c) = r
        .cites_at(&["offload.round_trip_cycles"])
        .into_iter()
        .next()
    {
        let v = c.value;
        crate::cite::note(c);
        return Some(v);
    }
    if let Some(v) = r.facts.partition.as_ref().and_then(|p| p.round_trip_cycles) {
        r.cite_paths(&["offload.round_trip_cycles"]);
        return Some(v);
    }
    r.cited_opt(Fig::CyclesPerOp)
        .map(|c| c * r.cited(Fig::Batch).max(1.0))
}

/// A row's round-trip statistic `s` by its client's own RDTSC (None for a row without the client's cycles).
fn client_stat(r: &Row, s: Stat) -> Option<f64> {
    r.client_cycles.as_ref()?;
    match s {
        Stat::P50 => trip(r).map(|t| t.0),
        Stat::Mean => trip(r).map(|t| t.1),
        Stat::Trimmed => trimmed(r),
    }
}

/// `a`'s and `b`'s round trips on one clock: statistic `s` by the clients' own RDTSC where both rows have
/// it, else both means by iolab's clock; never one side of each.
fn on_one_clock(a: &Row, b: &Row, s: Stat) -> Option<(f64, f64, Clock)> {
    if a.client_cycles.is_some() && b.client_cycles.is_some() {
        return Some((client_stat(a, s)?, client_stat(b, s)?, Clock::Client));
    }
    Some((wall_trip(a)?, wall_trip(b)?, Clock::Wall))
}

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
        // The thesis's text gives the two means and no ratio: the question's factor is computed here.
        s += &format!(
            "; the question's factor is Figure 4.2's, without user_data, computed from the two means its \
             text gives (\"The application averages at {} CPU cycles, while the inmate needs {} cycles on \
             average\"; the text quotes no ratio): {} / {} cycles = {}",
            thousands(n),
            thousands(o),
            thousands(o),
            thousands(n),
            x(o / n)
        );
    }
    Some(s + ".")
}

/// Whether the difference between `a` and `b` (one path's NOPs without and with user_data; `ratio` is
/// `a`'s trimmed mean over `b`'s) is within the run's own noise, and the figure that says so: the client's
/// statistics disagree on which is faster (its plain means or p50s reverse what the trimmed means say),
/// the repeated runs' middle ranges overlap, or the difference is inside twice the standard error of the
/// two runs' means over their sampling windows (each window's time per request: stdev / sqrt(windows)).
/// The band itself is not printed: it combines six figures, and every number a sentence prints is a cited
/// figure or two of them combined; the windows and spreads it is made of are printed instead.
fn user_data_noise(a: &Row, b: &Row, ratio: f64) -> Option<String> {
    let below = |s: Stat| Some(client_stat(a, s)? < client_stat(b, s)?);
    if let Some(t) = below(Stat::Trimmed) {
        for (s, what) in [(Stat::Mean, "plain means"), (Stat::P50, "p50s")] {
            if below(s).is_some_and(|m| m != t) {
                return Some(format!(
                    "the {what} reverse it: {} against {} cycles",
                    thousands(client_stat(a, s)?),
                    thousands(client_stat(b, s)?)
                ));
            }
        }
    }
    if a.spread.is_some() && b.spread.is_some() && crate::findings_compare::row::within_noise(a, b)
    {
        return Some("the middle ranges of their repeated runs overlap".into());
    }
    let window = |r: &Row| {
        let f = r.cites_at(&[
            "offload.window_ns.stdev_ns",
            "offload.window_ns.mean_ns",
            "offload.windows",
            "offload.window_ms",
        ]);
        (f.len() == 4 && f[1].value > 0.0).then(|| (f[0].value / f[1].value, f))
    };
    let (wa, wb) = (window(a)?, window(b)?);
    // The uncertainty of each run's mean over its windows (stdev / sqrt(windows)), two of them combined
    // at twice their standard error: a difference inside it is not one the runs can tell.
    let se = |w: &(f64, Vec<crate::cite::Cite>)| w.0 / w.1[2].value.max(1.0).sqrt();
    let band = 2.0 * (se(&wa).powi(2) + se(&wb).powi(2)).sqrt();
    ((ratio - 1.0).abs() <= band).then(|| {
        for c in wa.1.iter().chain(&wb.1) {
            crate::cite::note(c.clone());
        }
        format!(
            "the {:.1}% between them is inside twice the standard error of the two runs' means over their \
             windows ({} and {} windows of {:.0} ms whose time per request varied by {:.0}% and {:.0}% of its \
             mean, iolab's clock)",
            (ratio - 1.0).abs() * 100.0,
            thousands(wa.1[2].value),
            thousands(wb.1[2].value),
            wa.1[3].value,
            wa.0 * 100.0,
            wb.0 * 100.0
        )
    })
}

/// Figure 4.2 against Figure 4.3: a path's NOPs without user_data against the same path's with it, in the
/// thesis's statistic (round-trip means without the values beyond 3 standard deviations), each difference
/// checked against the run's own noise before it is set beside the thesis's.
fn user_data_clause(c: &Ctx) -> Option<String> {
    let (mut parts, mut noisy) = (Vec::new(), Vec::new());
    for (p, name) in [
        (OffloadPath::Native, "the native path"),
        (OffloadPath::Kernel, "the kernel path"),
    ] {
        let with = c.row(|r| path_is(r, p, None, 1) && !r.sq_sleep);
        let without = c.row(|r| r.no_user_data && any_data(r, p, None, 1) && !r.sq_sleep);
        let (Some(w), Some(o)) = (with, without) else {
            continue;
        };
        let Some((ov, wv, clock)) = on_one_clock(o, w, Stat::Trimmed) else {
            continue;
        };
        let noise = user_data_noise(o, w, ov / wv);
        if noise.is_some() {
            noisy.push(name);
        }
        parts.push(format!(
            "{name} {} cycles without user_data against {} with it ({}){}{}",
            thousands(ov),
            thousands(wv),
            x(ov / wv),
            clock.words(),
            noise
                .map(|f| format!(": within noise ({f})"))
                .unwrap_or_default()
        ));
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
            " The thesis: {} against {} in the application ({}), {} against {} in the inmate ({}), the inmate's \
             difference put down to \"another memory access and more dereferencing\"{}.",
            thousands(n),
            thousands(nu),
            x(n / nu),
            thousands(o),
            thousands(ou),
            x(o / ou),
            if noisy.is_empty() {
                String::new()
            } else {
                format!(
                    "; {}'s difference in this run is within its noise, so it neither agrees nor disagrees \
                     with these",
                    noisy.join(" and ")
                )
            }
        ),
        _ => String::new(),
    };
    Some(format!(
        "Figure 4.2 against Figure 4.3 (the client leaving each SQE's user_data unwritten, then setting it: the \
         two differ by one eight-byte store per request), round-trip means without the values beyond 3 \
         standard deviations: {}.{seed}",
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

/// ", 1.00 server sleeps (wake-ups) per request", ", its server slept 249 times over 1,000,000 requests
/// (once per 4,016)" where the sleeps are too few to show per request, or ", its server never slept"
/// only where the count is 0.
fn per_req(r: &Row) -> String {
    r.cite_paths(&["offload.server_sleeps", "offload.doorbells", "ops"]);
    let ops = r.cited(Fig::Ops);
    let doorbells = |d: f64| {
        if d >= 0.005 {
            format!(" and {d:.2} doorbells per request")
        } else {
            String::new()
        }
    };
    match (r.sleeps_per_op, r.doorbells_per_op) {
        (Some(s), _) if (s * ops).round() < 1.0 => ", its server never slept".to_string(),
        (Some(s), d) if s < 0.005 => {
            let n = (s * ops).round();
            format!(
                ", its server slept {} times over {} requests (once per {}){}",
                thousands(n),
                thousands(ops),
                thousands(ops / n),
                d.map(doorbells).unwrap_or_default()
            )
        }
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
            inproc: c.row(|r| r.nop_requests && r.batch == batch && is(r, &io_uring::INFO)),
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

/// Where the offloaded cycles go: polling (cache lines crossing CPUs) and wake-ups; each difference and
/// ratio on one clock ([`on_one_clock`]: the p50s by the clients' own RDTSC).
fn where_it_goes(base: &Row, rows: &Rows) -> String {
    let mut out = Vec::new();
    if let Some((k, (kv, b, clock))) = rows
        .kernel
        .or(rows.polled)
        .and_then(|k| Some((k, on_one_clock(k, base, Stat::P50)?)))
    {
        let d = kv - b;
        out.push(format!(
            "A polling server {} {} cycles per round trip {} the baseline ({}){}: its client makes no system \
             call, but the request and its completion each cross between the client's CPU and the server's \
             as cache lines (the SQ tail and SQE one way, the CQE and CQ tail back, each a transfer of a line \
             the other CPU wrote){}",
            if d >= 0.0 { "adds" } else { "saves" },
            thousands(d.abs()),
            if d >= 0.0 { "to" } else { "against" },
            x(kv / b),
            clock.words(),
            k.cited_opt(Fig::ServiceCpuShare)
                .map_or(String::new(), |s| format!(
                    ", and the server burns {s:.2} of a CPU while it polls"
                ))
        ));
    }
    for w in [rows.woken, rows.asleep].into_iter().flatten() {
        let poll = if w.offload.is_some_and(|o| o.0 == OffloadPath::Broker) {
            rows.polled
        } else {
            rows.kernel
        };
        let Some((wv, b, clock)) = on_one_clock(w, base, Stat::P50) else {
            continue;
        };
        let extra = poll
            .and_then(|p| on_one_clock(w, p, Stat::P50))
            .map(|(a, p, c)| {
                format!(
                    ": {} cycles more than the same path polling{}, the price of a sleep and a wake-up across CPUs",
                    thousands(a - p),
                    c.words()
                )
            })
            .unwrap_or_default();
        w.cite_paths(&["offload.server_sleeps", "ops"]);
        out.push(format!(
            "waking the server for every request ({} server sleeps per request) costs {} cycles per round \
             trip, {} the baseline{}{extra}",
            w.sleeps_per_op.map_or("-".into(), |s| format!("{s:.2}")),
            thousands(wv),
            x(wv / b),
            clock.words()
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
    // Each ratio on one clock: the clients' own RDTSC, as the thesis's (else iolab's, said so).
    let r = |row: Option<&Row>| {
        let row = row?;
        let (t, bt, clock) = on_one_clock(row, base, Stat::Trimmed)?;
        Some(match (clock, on_one_clock(row, base, Stat::P50)) {
            (Clock::Client, Some((p, bp, _))) => format!("{} (p50 {})", x(t / bt), x(p / bp)),
            _ => format!("{}{}", x(t / bt), clock.words()),
        })
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

/// One guest-partition row against the baseline, each ratio on one clock: the clients' own RDTSC (both
/// round-trip means), then iolab's clock (the run's wall time per round trip x the TSC rate, both sides).
fn guest_row(r: &Row, base: &Row) -> Option<String> {
    let p = r.facts.partition.as_ref()?;
    let mut said = Vec::new();
    if let (Some(g), Some(b)) = (client_stat(r, Stat::Mean), client_stat(base, Stat::Mean)) {
        said.push(format!(
            "{} cycles per round trip by its client's own RDTSC (mean), {} the baseline client's {} by its \
             RDTSC",
            thousands(g),
            x(g / b),
            thousands(b)
        ));
    }
    if let (Some(g), Some(b)) = (wall_trip(r), wall_trip(base)) {
        said.push(format!(
            "{} cycles by iolab's clock (the run's wall time per round trip x the TSC rate), {} the \
             baseline's {} by the same clock",
            thousands(g),
            x(g / b),
            thousands(b)
        ));
    }
    (!said.is_empty()).then(|| format!("{} path {}", p.path, said.join(", and ")))
}

/// The guest-partition rows (the thesis's own setup: the client in a guest, the ring in shared memory),
/// against the process baseline, and whether they ran emulated.
fn partition_clause(c: &Ctx, base: &Row) -> Option<(String, bool)> {
    let rows = c.rows_where(|r| r.facts.partition.as_ref().is_some_and(|p| p.batch == 1));
    let first = rows.first()?.facts.partition.as_ref()?;
    let each: Vec<String> = rows.iter().filter_map(|r| guest_row(r, base)).collect();
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
    // One clock per ratio: the p50s by the clients' own RDTSC, else iolab's clock on both sides.
    let ratio = |r: &Row| match on_one_clock(r, base, Stat::P50) {
        Some((a, b, clock)) => format!("{} the baseline{}", x(a / b), clock.words()),
        None => format!(
            "{} the baseline's time per op (both by iolab's clock)",
            x(r.ns() / base.ns())
        ),
    };
    for (row, what) in rows.offloaded() {
        if let Some(r) = row {
            here.push(format!("{what} {}, {}{}", cost(r), ratio(r), per_req(r)));
        }
    }
    parts.push(format!(
        "In this run, one NOP per round trip, each offloaded client timed by its own RDTSC: {}.",
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

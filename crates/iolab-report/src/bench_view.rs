//! `iolab bench`'s reports as text: the ratios measured in one run, with what was timed.

use iolab_lab::bench::{
    CounterOverheadReport, CountingBenchReport, NopReport, OffloadBenchReport, OverheadReport,
    ProfileBenchReport,
};

/// The shortest round a verdict against a target is given for: 1 ms, so that a clock read, a tick and
/// the cost of starting the loop stay well under 1% of what is timed.
const MIN_ROUND_NS: f64 = 1e6;

/// "met" or "MISSED" against a target, or why no verdict is given: `round_ns` is how long one round
/// of the faster side lasted, `rounds` how many there were.
fn verdict(ok: bool, round_ns: f64, rounds: u32) -> String {
    if rounds < 3 {
        format!("no verdict: {rounds} round(s), a median needs at least 3 (raise --rounds)")
    } else if round_ns.is_nan() || round_ns < MIN_ROUND_NS {
        format!(
            "no verdict: a round lasted {}, too short to compare (at least 1 ms; raise --ops)",
            iolab_engine::units::fmt_ns(round_ns)
        )
    } else if ok {
        "met".into()
    } else {
        "MISSED".into()
    }
}

/// The median of some rounds (NaN when there are none).
fn median(v: &[f64]) -> f64 {
    iolab_engine::stats::median(v).unwrap_or(f64::NAN)
}

/// The report as text, every round shown.
pub fn render(r: &OverheadReport) -> String {
    let fmt = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.0}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    format!(
        "overhead bench: iolab run --method psync --target /dev/null --bs 4 vs a bare write(2) loop\n\
         {} rounds x {} ops, alternating, same thread; ns/op = loop wall time / ops\n\
         bare write() loop  median {:7.1} ns/op   rounds: {}\n\
         iolab psync run    median {:7.1} ns/op   rounds: {}\n\
         ratio iolab/bare   {:.3}x median of per-round ratios (target <= 1.15x: {})\n\
         \x20                  {:.3}x ratio of medians, {:.3}x ratio of minimums\n\
         like for like      {:.3}x iolab psync / bare pwrite() loop, {:.3}x iolab sync / bare write() loop\n\
         \x20                  {:.3}x iolab psync / bare pwrite() loop with a clock read per op (target <= 1.05x)\n\
         \x20                  {:.3}x iolab psync --latency-sample 0 / bare pwrite() loop (target <= 1.03x)\n\
         correctness        {:.4} kernel-counted write syscalls per iolab op (/proc/self/io syscw)\n",
        r.rounds,
        r.ops_per_round,
        r.bare_median_ns,
        fmt(&r.bare_ns),
        r.iolab_median_ns,
        fmt(&r.iolab_ns),
        r.ratio,
        verdict(
            r.ratio <= 1.15,
            r.bare_median_ns * r.ops_per_round as f64,
            r.rounds
        ),
        r.ratio_of_medians,
        r.ratio_of_minimums,
        r.ratio_psync_vs_bare_pwrite,
        r.ratio_sync_vs_bare_write,
        r.ratio_psync_vs_bare_pwrite_clocked,
        r.ratio_unsampled_vs_bare_pwrite,
        r.iolab_kernel_writes_per_op
    )
}

pub fn render_counters(r: &CounterOverheadReport) -> String {
    let fmt = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.0}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut o = format!(
        "counter overhead bench: {} write(2) calls of 4 B to /dev/null per round, {} rounds, alternating\n\
         no counters                      median {:6.1} ns/op   rounds: {}\n\
         software counters                median {:6.1} ns/op   rounds: {}\n\
         software + sys_enter tracepoint  median {:6.1} ns/op   rounds: {}\n\
         ratios (median of per-round)     software {:.3}x, software + tracepoint {:.3}x\n",
        r.ops_per_round,
        r.rounds,
        median(&r.off_ns),
        fmt(&r.off_ns),
        median(&r.software_ns),
        fmt(&r.software_ns),
        median(&r.tracepoint_ns),
        fmt(&r.tracepoint_ns),
        r.ratio_software,
        r.ratio_tracepoint
    );
    match r.sys_enter_per_write {
        Some(v) => o.push_str(&format!("correctness                      {v:.4} sys_enter counted per write\n")),
        None => o.push_str("correctness                      sys_enter tracepoint unavailable on this machine: the tracepoint row is not meaningful\n"),
    }
    for u in &r.unavailable {
        o.push_str(&format!("unavailable                      {u}\n"));
    }
    o
}

pub fn render_nop(r: &NopReport) -> String {
    let mut o = format!(
        "io_uring NOP bench: {} NOPs per round, {} rounds, alternating; NOP/s = NOPs / loop wall time\n\
         raw loop's ring: {}; iolab on its defaults\n\
         batch   raw loop NOP/s   iolab NOP/s   iolab/raw (median of per-round; target >= 0.9 at batch 32)\n",
        r.ops_per_round,
        r.rounds,
        iolab_lab::bench::RAW_RING
    );
    for (b, raw, lab, ratio) in &r.rows {
        let judged = if *b == 32 {
            let round_ns = r.ops_per_round as f64 / raw * 1e9;
            format!(" {}", verdict(*ratio >= 0.9, round_ns, r.rounds))
        } else {
            String::new()
        };
        o.push_str(&format!(
            "{b:>5}   {:>12.2} M   {:>9.2} M   {ratio:.3}x{judged}\n",
            raw / 1e6,
            lab / 1e6
        ));
    }
    o.push_str(&t_io_uring_text(&r.t_io_uring));
    o
}

/// The NOPs against fio's t/io_uring, with the targets (0.95x at batch 1, 1.0x at batch 32), judged like
/// with like: t/io_uring times no request, so iolab under `--latency-sample 0`; iolab on its defaults
/// (every request timed) beside it.
fn t_io_uring_text(
    t: &std::result::Result<iolab_lab::bench_tiou::AgainstTIoUring, String>,
) -> String {
    let t = match t {
        Ok(t) => t,
        Err(why) => return format!("against fio's t/io_uring: {why}\n"),
    };
    let mut o = format!(
        "against fio's t/io_uring ({}; bare NOPs, its rings without registered files or buffers, no request \
         timed): {} alternating sets (iolab 1 s each way, t/io_uring its per-second line, the raw loop); \
         ratios are medians of the per-set ones\n\
         batch   t/io_uring NOP/s   iolab untimed NOP/s   untimed/t_io_uring                  \
         iolab timed NOP/s   timed/t_io_uring   raw loop/t_io_uring\n",
        t.path, t.pairs
    );
    for r in &t.rows {
        let target = if r.batch == 1 { 0.95 } else { 1.0 };
        let verdict = format!(
            "{:.3}x (target >= {target:.2}x: {})",
            r.untimed_ratio,
            if r.untimed_ratio >= target {
                "met"
            } else {
                "not met"
            }
        );
        o.push_str(&format!(
            "{:>5}   {:>14.2} M   {:>17.2} M   {verdict:<34}   {:>15.2} M   {:>15.3}x   {:>18.3}x\n",
            r.batch,
            r.theirs / 1e6,
            r.untimed / 1e6,
            r.timed / 1e6,
            r.timed_ratio,
            r.raw_ratio,
        ));
    }
    o.push_str(&reads_text(&t.reads));
    o.push_str(
        "untimed: --latency-sample 0, as t/io_uring (no per-request clock read or record); timed: iolab's \
         default, each request's latency recorded; raw loop: iolab's ring settings and nothing recorded\n",
    );
    o
}

/// Cached 4 KiB random reads at depth 32 against t/io_uring, with the target (1.0x), judged like with
/// like (untimed) as the NOPs are.
fn reads_text(r: &std::result::Result<iolab_lab::bench_tiou::ReadRow, String>) -> String {
    let r = match r {
        Ok(r) => r,
        Err(why) => return format!("read32  cached 4 KiB random reads at depth 32: {why}\n"),
    };
    let met = if r.untimed_ratio >= 1.0 {
        "met"
    } else {
        "not met"
    };
    format!(
        "read32  cached 4 KiB random reads of {} at depth 32, batch 32: t/io_uring {:.2} M/s, iolab untimed \
         {:.2} M/s {:.3}x (target >= 1.00x: {met}), timed {:.2} M/s {:.3}x\n",
        std::path::Path::new(&r.file).file_name().map_or(r.file.clone().into(), |n| n.to_string_lossy()),
        r.theirs / 1e6,
        r.untimed / 1e6,
        r.untimed_ratio,
        r.timed / 1e6,
        r.timed_ratio,
    )
}

pub fn render_offload(r: &OffloadBenchReport) -> String {
    let mut o = format!(
        "offload NOP bench: {} NOPs per run, {} rounds of six runs (native, kernel, broker at batch 1 and 32), \
         medians; a run is timed from outside the client (wall / ops)\n\
         path     batch 1: ns/NOP  cycles/NOP  x native (target <= 3)   batch 32: M NOPs/s  x native (target >= 0.5)\n",
        r.ops_per_round, r.rounds
    );
    for row in &r.rows {
        let native = row.path == "native";
        let judge = |ok: bool, round_ns: f64| {
            if native {
                String::new()
            } else {
                verdict(ok, round_ns, r.rounds)
            }
        };
        o.push_str(&format!(
            "{:<8} {:>15.1}  {:>10}  {:>6.2}x {:<17}   {:>17.2}  {:>6.2}x {}\n",
            row.path,
            row.batch1_ns,
            row.batch1_cycles
                .map(|c| format!("{c:.0}"))
                .unwrap_or_else(|| "-".into()),
            row.batch1_ratio,
            judge(
                row.batch1_ratio <= 3.0,
                row.batch1_ns * r.ops_per_round as f64
            ),
            row.batch32_nops_per_s / 1e6,
            row.batch32_ratio,
            judge(
                row.batch32_ratio >= 0.5,
                r.ops_per_round as f64 / row.batch32_nops_per_s * 1e9
            ),
        ));
    }
    o.push_str(&format!(
        "seed thesis (Jailhouse in QEMU, batch 1, Figure 4.3 with user_data): {} cycles native, {} cycles offloaded ({:.0}x)\n",
        iolab_engine::offload::SEED_NATIVE_CYCLES,
        iolab_engine::offload::SEED_OFFLOADED_CYCLES,
        iolab_engine::offload::SEED_OFFLOADED_CYCLES as f64 / iolab_engine::offload::SEED_NATIVE_CYCLES as f64
    ));
    o
}

pub fn render_profile(r: &ProfileBenchReport) -> String {
    let mut o = format!(
        "profile bench: {} rounds of each workload with --profile none, separate and inline ({} Hz), \
         alternating; ratios of the timed pass's ns/op to the unprofiled run of the same round (median over \
         rounds; in brackets min/min)\n",
        r.rounds, r.frequency_hz
    );
    for row in &r.rows {
        o.push_str(&format!(
            "{}\n  separate / none {:.3} [{:.3}] (target: 1.00 within noise)   inline / none {:.3} [{:.3}] \
             (target <= 1.05: {})   samples per inline run {:.0}, lost {}\n",
            row.workload,
            row.separate_ratio,
            row.separate_ratio_of_minimums,
            row.inline_ratio,
            row.inline_ratio_of_minimums,
            if row.inline_samples > 0.0 {
                verdict(row.inline_ratio <= 1.05, MIN_ROUND_NS, r.rounds)
            } else {
                format!(
                    "no verdict: no samples were taken (a run shorter than one sample period at {} Hz; raise --ops)",
                    r.frequency_hz
                )
            },
            row.inline_samples,
            row.lost
        ));
    }
    o
}

pub fn render_counting(r: &CountingBenchReport) -> String {
    let mut o = format!(
        "counting-pass bench: {} rounds of --duration {} s runs with --count none, separate (a sampled pass) \
         and full (the whole workload again), alternating; whole-run wall time (counting pass, setup, timed \
         pass) as a ratio to --count none of the same round, median over rounds\n",
        r.rounds, r.duration_s
    );
    for (name, separate, full) in &r.rows {
        o.push_str(&format!(
            "{name}\n  separate / none {separate:.3} (target <= 1.15: {})   full / none {full:.3}\n",
            verdict(*separate <= 1.15, r.duration_s * 1e9, r.rounds)
        ));
    }
    o
}

/// `iolab bench survey`: how many rounds a default survey needed on this machine, and what its pairs
/// came to.
pub fn render_survey(s: &iolab_lab::survey::SurveyResult) -> String {
    use iolab_lab::pairs::Outcome;
    let mut o = String::from(
        "iolab bench survey: one default survey (6 first rounds, then the undecided until 30 s), the rounds it needed\n",
    );
    let Some(r) = &s.rounds_run else {
        return o;
    };
    o.push_str(&format!(
        "rounds        {} first, {} in all; stopped: {} after {:.1} s\n",
        r.first, r.rounds, r.stopped, r.elapsed_s
    ));
    o.push_str(&format!(
        "runs          {}, of them {} disturbed ({:.1}%, left out); other work held {} of the CPUs\n",
        r.runs,
        r.disturbed,
        100.0 * f64::from(r.disturbed) / f64::from(r.runs.max(1)),
        r.others_busy_share
            .map_or("an unknown share".into(), iolab_engine::units::pct)
    ));
    let mut next = [0usize; 3];
    let mut all = [0usize; 3];
    let idx = |o: Outcome| match o {
        Outcome::Separated => 0,
        Outcome::Tied => 1,
        Outcome::Undecided => 2,
    };
    for t in &s.ranking {
        let rows: Vec<&str> = t.ranked().map(|r| r.method.as_str()).collect();
        for p in &t.pairs {
            all[idx(p.outcome)] += 1;
            if rows.windows(2).any(|w| w[0] == p.a && w[1] == p.b) {
                next[idx(p.outcome)] += 1;
            }
        }
    }
    for (label, n) in [("neighbours", next), ("all pairs", all)] {
        o.push_str(&format!(
            "{label:<13} {} separated, {} tied, {} undecided\n",
            n[0], n[1], n[2]
        ));
    }
    let decided = s.ranking.iter().filter(|t| t.decided).count();
    o.push_str(&format!(
        "tables        {decided} of {} decided in full\n",
        s.ranking.len()
    ));
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_verdict_on_rounds_too_short_or_too_few() {
        assert_eq!(verdict(true, 2e6, 5), "met");
        assert_eq!(verdict(false, 2e6, 5), "MISSED");
        let short = verdict(true, 601.0, 5);
        assert!(
            short.starts_with("no verdict: a round lasted 601.0 ns"),
            "{short}"
        );
        assert!(verdict(false, f64::NAN, 5).starts_with("no verdict"));
        assert!(verdict(true, 2e6, 1).starts_with("no verdict: 1 round(s)"));
    }

    /// The reads' line judges the untimed ratio against 1.0x and names the file, or says why none ran.
    #[test]
    fn the_reads_line_judges_the_untimed_ratio() {
        let row = |untimed_ratio| iolab_lab::bench_tiou::ReadRow {
            file: "/var/tmp/w/data.bin".into(),
            theirs: 0.8e6,
            timed: 0.78e6,
            timed_ratio: 0.975,
            untimed: 0.82e6,
            untimed_ratio,
        };
        let met = reads_text(&Ok(row(1.024)));
        assert!(
            met.contains("of data.bin")
                && met.contains("1.024x (target >= 1.00x: met), timed 0.78 M/s 0.975x"),
            "{met}"
        );
        assert!(reads_text(&Ok(row(0.99))).contains("0.990x (target >= 1.00x: not met)"));
        assert!(
            reads_text(&Err("not run: no data file".into())).ends_with(": not run: no data file\n")
        );
    }
}

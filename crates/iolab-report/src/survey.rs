//! The survey's table: a header, one ranked section per target, and what the figures mean.

use crate::cells::syscalls_per_op;
use crate::survey_answer::x_write;
use crate::text::{Align, Doc, Table};
use iolab_engine::units::thousands_u64;
use iolab_engine::units::{fmt_mib_s, fmt_ns, fmt_size};
use iolab_lab::ranking::RankRow;
use iolab_lab::survey::{SurveyResult, SurveyRun};
use std::fmt::Write;
use Align::{Left as L, Right as R};

/// The survey's whole table, unwrapped.
pub(crate) fn survey_text(s: &SurveyResult) -> String {
    survey_doc(s).render(None)
}

/// The survey as the terminal shows it: the answer, then (`verbose`) every table and finding, else where
/// they are.
pub(crate) fn answered_doc(s: &SurveyResult, verbose: bool) -> Doc {
    let mut d = crate::survey_answer::answer_doc(s);
    d.blank();
    if verbose {
        // The answer said how the ops were timed.
        d.append(survey_doc_with(s, false));
    } else {
        d.line("Every table and finding: iolab survey -v; the JSON below: iolab report FILE");
    }
    d
}

/// The survey as a document: a header, one ranked table per target, what the figures mean, findings.
pub(crate) fn survey_doc(s: &SurveyResult) -> Doc {
    survey_doc_with(s, true)
}

/// [`survey_doc`], saying how the ops were timed where `timing`.
fn survey_doc_with(s: &SurveyResult, timing: bool) -> Doc {
    let mut d = Doc::new();
    d.line(format!(
        "iolab survey: every method writing 4 B and 4 KiB blocks, 1 thread, {}, each run {} ops or {}",
        match &s.rounds_run {
            Some(r) => format!(
                "{} rounds in random order, then up to {} for the undecided ({} s budget, stopped: {})",
                r.first, r.rounds, r.max_time_s, r.stopped
            ),
            None if s.rounds == 1 => "1 round".to_string(),
            None => format!("{} rounds in alternating order", s.rounds),
        },
        thousands_u64(s.ops_per_run),
        iolab_engine::units::fmt_s(s.max_s_per_run)
    ));
    d.line(format!(
        "host: {} | kernel {} | {} CPUs | clock: {} ({:.1} ns per read)",
        s.host.cpu_model,
        s.host.kernel_release,
        s.host.cpus_online,
        s.clock.description,
        s.clock.overhead_ns
    ));
    if let Some(e) = s.host.emulated_line() {
        d.line(format!("emulated: {e}"));
    }
    if let Some(l) = crate::survey_answer::timing_line(s).filter(|_| timing) {
        d.line(l);
    }
    for target in ["/dev/null", "file", "pipe"] {
        if !s.runs.iter().any(|r| r.target == target) {
            continue;
        }
        target_doc(s, target, &mut d);
    }
    footer_doc(s, &mut d);
    if let Some(mem) = &s.memory {
        let mut o = String::new();
        crate::findings_by_cause::render(&s.findings, mem, &mut o);
        d.text(&o);
    }
    d
}

/// What a target of the survey is, as its section's title says it.
fn target_title(s: &SurveyResult, target: &str) -> String {
    match target {
        "file" => format!(
            "a fresh {} MiB file on {} in {} (buffered writes through the page cache, no fsync)",
            s.file_size >> 20,
            s.file_fs,
            s.file_dir
        ),
        "pipe" => "a pipe to a reading thread of iolab's (the stream's peer counts every byte)"
            .to_string(),
        _ => "/dev/null (write sink)".to_string(),
    }
}

/// One target's section: its runs ranked by median time per op within each block size (tied where
/// their rounds overlap, nop as the floor), then the methods that could not run there, then the steal.
fn target_doc(s: &SurveyResult, target: &str, d: &mut Doc) {
    let title = target_title(s, target);
    d.blank().heading(format!(
        "== {title}: ranked by median time per op within each block size"
    ));
    let mut t = Table::new(
        &[
            ("rank", R),
            ("method", L),
            ("bs", R),
            ("time/op", R),
            ("middle rounds", R),
            ("x write()", R),
            ("throughput", R),
            ("user s", R),
            ("sys s", R),
            ("syscalls/op", R),
            ("ops", R),
        ],
        3,
    );
    let mut unavailable: Vec<&SurveyRun> = Vec::new();
    let rankings = s.rankings();
    for bs in iolab_lab::survey::SURVEY_BS {
        let table = rankings.iter().find(|t| t.target == target && t.bs == bs);
        for row in table.iter().flat_map(|t| t.rows.iter()) {
            if let Some(run) = s.run_of(target, bs, &row.method) {
                ranked_row(row, run, &mut t);
            }
        }
        unavailable.extend(
            s.runs
                .iter()
                .filter(|r| r.target == target && r.bs == bs && r.result.is_none()),
        );
    }
    for u in unavailable {
        t.note(
            [
                "n/a".to_string(),
                u.method.name().to_string(),
                fmt_size(u.bs),
            ],
            u.unavailable.as_deref().unwrap_or("unavailable"),
        );
    }
    d.table(t);
    let mut o = String::new();
    steal_text(s, target, &mut o);
    d.text(&o);
}

/// "1.2-1.4 µs": a range in one unit where both ends read well in it, else each end in its own
/// ("212.0 ns-2.0 µs").
fn ns_range(lo: f64, hi: f64) -> String {
    let (l, h) = (fmt_ns(lo), fmt_ns(hi));
    match (l.split_once(' '), h.split_once(' ')) {
        (Some((ln, lu)), Some((hn, hu))) if lu == hu => format!("{ln}-{hn} {hu}"),
        _ => format!("{l}-{h}"),
    }
}

/// One ranked row, with its label ("3=", "ab", "floor" for nop) and its time against write()'s.
fn ranked_row(row: &RankRow, run: &SurveyRun, t: &mut Table) {
    let Some(r) = run.result.as_ref() else {
        return;
    };
    let rate =
        match iolab_engine::units::too_short(r.wall_s, r.clock.overhead_ns, r.clock.ns_per_tick) {
            Some(_) => "too short".to_string(),
            None => fmt_mib_s(r.mib_s),
        };
    t.row([
        row.rank.clone(),
        r.spec.method.name().to_string(),
        fmt_size(run.bs),
        fmt_ns(row.median),
        ns_range(row.lo, row.hi),
        x_write(row, iolab_lab::ranking::BASELINE),
        rate,
        format!("{:.3}", r.cpu.process.user_s),
        format!("{:.3}", r.cpu.process.sys_s),
        syscalls_per_op(r),
        thousands_u64(r.ops),
    ]);
}

/// The hypervisor's steal during a target's runs, when there was any to speak of.
fn steal_text(s: &SurveyResult, target: &str, o: &mut String) {
    let runs = s.runs.iter().filter(|r| r.target == target);
    let steal: f64 = runs.clone().filter_map(|r| r.steal_s).sum();
    let wall: f64 = runs
        .filter_map(|r| {
            r.result
                .as_ref()
                .map(|x| x.wall_s * r.rounds_ns_per_op.len().max(1) as f64)
        })
        .sum();
    if steal >= 0.01 {
        let _ = writeln!(
            o,
            "steal: the hypervisor took {steal:.2} s of CPU time (all CPUs) during these runs ({:.0}% of their \
             {wall:.1} s): the rounds' spread includes it",
            100.0 * steal / wall.max(1e-9)
        );
    }
}

/// What the columns mean, and the first fallback any run took.
fn footer_doc(s: &SurveyResult, d: &mut Doc) {
    let mut o = String::new();
    footer_text(s, &mut o);
    d.text(&o);
}

fn footer_text(s: &SurveyResult, o: &mut String) {
    let _ = writeln!(
        o,
        "\ntime/op: wall time of a run / its ops (1 thread), the median of its quiet rounds (a round other work \
         disturbed is left out); middle rounds: the range of those rounds without the fastest and slowest \
         quarter. x write(): the median of the per-round ratios to write()'s time (the sync method) over the \
         rounds both ran, with its 99% interval (sign test; none with fewer than 6 such rounds). A row shares \
         the rank of the rows before it (\"2=\") unless that test separates it from each of them; the JSON's \
         ranking keeps every pair. The other columns are the median round's. user/sys: CPU seconds of the whole process during the run, \
         io_uring helper threads included. syscalls/op: counted by iolab; * = counted by the kernel \
         (/proc/self/io syscr+syscw) where glibc decides (stdio). Excluded from timing: file creation, open, \
         mmap/ring setup. nop is the harness's own floor (no kernel call), not ranked. The survey counts no kernel \
         tracepoints (releasing each can take up to a second); `iolab run` shows the kernel's view: \
         syscalls by name, io_uring requests punted to io-wq, and findings."
    );
    let fallbacks: Vec<&String> = s
        .runs
        .iter()
        .filter_map(|r| r.result.as_ref())
        .flat_map(|r| r.fallbacks.iter())
        .collect();
    if let Some(f) = fallbacks.first() {
        let _ = writeln!(o, "FALLBACK: {f}");
    }
    if let Some(b) = s.peak_rss_bytes {
        let _ = writeln!(
            o,
            "iolab's own peak memory: {} (its resident set at most, VmHWM: the binary's pages, heap, \
             stacks, and the pages of the {} file the mmap rows mapped)",
            fmt_size(b),
            fmt_size(s.file_size)
        );
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn ranges_keep_their_precision() {
        assert_eq!(super::ns_range(1200.0, 1400.0), "1.2-1.4 µs");
        assert_eq!(super::ns_range(212.0, 2000.0), "212.0 ns-2.0 µs");
    }
}

//! The survey's table: a header, one ranked section per target, and what the figures mean.

use crate::{syscalls_per_op, thousands};
use iolab_core::result::RunResult;
use iolab_core::survey::{SurveyResult, SurveyRun};
use iolab_core::units::fmt_size;
use std::fmt::Write;

/// The survey's whole table.
pub(crate) fn survey_text(s: &SurveyResult) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "iolab survey: every method writing 4 B and 4 KiB blocks, {} ops or {} s per run, 1 thread",
        thousands(s.ops_per_run),
        s.max_s_per_run
    );
    let _ = writeln!(
        o,
        "host: {} | kernel {} | {} CPUs | clock: {} ({:.1} ns per read)",
        s.host.cpu_model,
        s.host.kernel_release,
        s.host.cpus_online,
        s.clock.description,
        s.clock.overhead_ns
    );
    for target in ["/dev/null", "file", "pipe"] {
        if !s.runs.iter().any(|r| r.target == target) {
            continue;
        }
        target_text(s, target, &mut o);
    }
    footer_text(s, &mut o);
    if let Some(mem) = &s.memory {
        iolab_core::answers::render_findings(&s.findings, mem, &mut o);
    }
    o
}

/// What a target of the survey is, as its section's title says it.
fn target_title(s: &SurveyResult, target: &str) -> String {
    match target {
        "file" => format!(
            "a fresh {} MiB file on {} in {} (buffered writes through the page cache, no fsync)",
            iolab_core::survey::SURVEY_FILE_SIZE >> 20,
            s.file_fs,
            s.file_dir
        ),
        "pipe" => "a pipe to a reading thread of iolab's (the stream's peer counts every byte)"
            .to_string(),
        _ => "/dev/null (write sink)".to_string(),
    }
}

/// One target's section: its runs ranked by ns/op within each block size, then the methods that could
/// not run there.
fn target_text(s: &SurveyResult, target: &str, o: &mut String) {
    let title = target_title(s, target);
    let _ = writeln!(o, "\n== {title}: ranked by ns/op within each block size ==");
    let _ = writeln!(
        o,
        "{:>4}  {:<9} {:>6} {:>10} {:>10} {:>8} {:>8} {:>12} {:>10}",
        "rank", "method", "bs", "ns/op", "MiB/s", "user s", "sys s", "syscalls/op", "ops"
    );
    let mut unavailable: Vec<&SurveyRun> = Vec::new();
    for bs in iolab_core::survey::SURVEY_BS {
        let mut rows: Vec<&RunResult> = s
            .runs
            .iter()
            .filter(|r| r.target == target && r.bs == bs)
            .filter_map(|r| r.result.as_ref())
            .collect();
        rows.sort_by(|a, b| a.ns_per_op.total_cmp(&b.ns_per_op));
        for (i, r) in rows.iter().enumerate() {
            let _ = writeln!(
                o,
                "{:>4}  {:<9} {:>6} {:>10.1} {:>10.1} {:>8.3} {:>8.3} {:>12} {:>10}",
                i + 1,
                r.spec.method.name(),
                fmt_size(bs),
                r.ns_per_op,
                r.mib_s,
                r.cpu.process.user_s,
                r.cpu.process.sys_s,
                syscalls_per_op(r),
                thousands(r.ops)
            );
        }
        unavailable.extend(
            s.runs
                .iter()
                .filter(|r| r.target == target && r.bs == bs && r.result.is_none()),
        );
    }
    for u in unavailable {
        let _ = writeln!(
            o,
            "  n/a  {:<9} {:>6}  {}",
            u.method.name(),
            fmt_size(u.bs),
            u.unavailable.as_deref().unwrap_or("unavailable")
        );
    }
}

/// What the columns mean, and the first fallback any run took.
fn footer_text(s: &SurveyResult, o: &mut String) {
    let _ = writeln!(
        o,
        "\nns/op: wall time of the run / ops (1 thread). user/sys: CPU seconds of the whole process during the run, \
         io_uring helper threads included. syscalls/op: counted by iolab; 'k' = counted by the kernel \
         (/proc/self/io syscr+syscw) where glibc decides (stdio). Excluded from timing: file creation, open, \
         mmap/ring setup. nop is the harness's own floor (no kernel call). The survey counts no kernel \
         tracepoints (releasing each takes up to a second here); `iolab run` shows the kernel's view: \
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
}

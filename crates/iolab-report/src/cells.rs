//! Cells the text views share: a target's label, a distribution's line, rates, syscalls per op.

use crate::text::NBSP;
use iolab_engine::measure::hist::Summary;
use iolab_engine::result::RunResult;
use iolab_engine::spec::Spec;
use iolab_engine::target::TargetKind;
use iolab_engine::units::{fmt_mib_s, fmt_ns, fmt_ops_s, thousands_u64};

pub(crate) fn target_label(r: &RunResult) -> String {
    let k = match r.target.kind {
        TargetKind::File => {
            if r.target.created {
                "file iolab created"
            } else if r.target.untouched {
                "no file: none made, none touched"
            } else {
                "existing file"
            }
        }
        TargetKind::DevNull => "write sink",
        TargetKind::DevZero => "read source",
        TargetKind::BlockDevice => "block device",
        TargetKind::Pipe => "a pipe per thread to iolab's peer",
        TargetKind::Socketpair => "an AF_UNIX socketpair per thread to iolab's peer",
        TargetKind::Tcp if r.spec.target.to_string_lossy().starts_with("tcp:") => {
            "a TCP connection per thread to a peer iolab does not run"
        }
        TargetKind::Tcp => "a TCP connection over 127.0.0.1 per thread to iolab's peer",
        TargetKind::Sink => "iolab's sink driver",
        TargetKind::NvmeGeneric => "NVMe generic device: passthrough commands",
    };
    format!("{} ({k})", r.spec.target.display())
}

pub(crate) fn dist_line(name: &str, s: &Summary) -> String {
    if s.count == 0 {
        return format!("{name:<12} (no values)\n");
    }
    // No-break spaces keep each percentile beside its value when the line wraps.
    let v = |label: &str, ns: f64| {
        format!(
            "{label}{NBSP}{}",
            fmt_ns(ns).replace(' ', &NBSP.to_string())
        )
    };
    format!(
        "{name:<12} {}  {}  {}  {}  {}  {}  ({} value{})\n",
        v("mean", s.mean_ns),
        v("p50", s.p50_ns),
        v("p90", s.p90_ns),
        v("p99", s.p99_ns),
        v("p99.9", s.p999_ns),
        v("max", s.max_ns),
        thousands_u64(s.count),
        if s.count == 1 { "" } else { "s" }
    )
}

/// The throughput line's rates, or why there are none: a span too short to time (`units::too_short`).
pub(crate) fn rates(r: &RunResult) -> String {
    match iolab_engine::units::too_short(r.wall_s, r.clock.overhead_ns, r.clock.ns_per_tick) {
        Some(why) => format!("no rate: {why}"),
        // Nothing reached the target: the bytes are only what the ops stood for.
        None if r.spec.method.info().no_data || r.spec.ring.nop_requests => format!(
            "{}, {} (no data moved: the ops are no-ops)",
            fmt_ops_s(r.iops),
            fmt_mib_s(r.mib_s)
        ),
        // /dev/null (and /dev/zero) take a write without reading a byte of it: the bytes over the span
        // are what the calls were handed, not data moved; a read of /dev/zero is the kernel clearing
        // the buffer, with no device behind it.
        None if matches!(r.target.kind, TargetKind::DevNull | TargetKind::DevZero) => {
            let what = match r.spec.op {
                iolab_engine::spec::OpKind::Read => {
                    "of zeros the kernel wrote, no device read".into()
                }
                _ => format!(
                    "handed to {}, which copies none of it",
                    r.spec.target.display()
                ),
            };
            format!("{}, {} ({what})", fmt_ops_s(r.iops), fmt_mib_s(r.mib_s))
        }
        None => format!("{}, {}", fmt_ops_s(r.iops), fmt_mib_s(r.mib_s)),
    }
}

/// Syscalls per op as the survey shows it: the method's own count, or the kernel's (marked `k`) where the
/// method cannot know (stdio).
pub fn syscalls_per_op(r: &RunResult) -> String {
    match r.syscalls.method_per_op {
        Some(v) => format!("{v:.3}"),
        // Marked, not suffixed: "1.000k" read as a thousand.
        None => match r.syscalls.kernel_rw_per_op {
            Some(k) => format!("{k:.3}*"),
            None => "-".into(),
        },
    }
}

/// What the ops were: "write" or "read", or NOPs in their place.
pub(crate) fn op_text(s: &Spec) -> String {
    let op = match s.op {
        iolab_engine::spec::OpKind::Write => "write",
        iolab_engine::spec::OpKind::Read => "read",
        iolab_engine::spec::OpKind::Mixed => "mixed read/write",
    };
    if s.ring.nop_requests {
        format!("NOP requests (no data moved) in place of {op}")
    } else {
        op.to_string()
    }
}

pub(crate) fn opt(v: Option<f64>, digits: usize) -> String {
    v.map(|x| format!("{x:.digits$}"))
        .unwrap_or_else(|| "-".into())
}

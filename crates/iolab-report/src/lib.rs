//! Exporters behind one trait, each returning bytes (hyperfine's `export/` shape): a readable table for
//! stdout and the JSON document whose schema is `iolab_core::result::RunResult` / `SurveyResult`.

pub mod answers;
mod fields;
pub mod html;
mod offload;
pub mod probe;
mod survey;
mod table;

pub use table::kernel_text;

use iolab_core::measure::hist::Summary;
use iolab_core::result::RunResult;
use iolab_core::spec::Spec;
use iolab_core::survey::SurveyResult;
use iolab_core::target::TargetKind;
use iolab_core::units::{fmt_ns, fmt_size};
use std::fmt::Write;

pub trait Exporter {
    fn run(&self, r: &RunResult) -> Vec<u8>;
    fn survey(&self, s: &SurveyResult) -> Vec<u8>;
}

/// Pretty JSON, exactly the serde structs.
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn run(&self, r: &RunResult) -> Vec<u8> {
        let mut v = serde_json::to_vec_pretty(r).expect("results serialize");
        v.push(b'\n');
        v
    }
    fn survey(&self, s: &SurveyResult) -> Vec<u8> {
        let mut v = serde_json::to_vec_pretty(s).expect("results serialize");
        v.push(b'\n');
        v
    }
}

/// Human-readable tables.
pub struct TableExporter;

fn target_label(r: &RunResult) -> String {
    let k = match r.target.kind {
        TargetKind::File => {
            if r.target.created {
                "file iolab created"
            } else {
                "existing file"
            }
        }
        TargetKind::DevNull => "write sink",
        TargetKind::DevZero => "read source",
        TargetKind::BlockDevice => "block device",
        TargetKind::Pipe => "a pipe per thread to iolab's peer",
        TargetKind::Socketpair => "an AF_UNIX socketpair per thread to iolab's peer",
        TargetKind::Tcp => "a TCP connection over 127.0.0.1 per thread to iolab's peer",
    };
    format!("{} ({k})", r.spec.target.display())
}

fn dist_line(name: &str, s: &Summary) -> String {
    if s.count == 0 {
        return format!("{name:<12} (no values)\n");
    }
    format!(
        "{name:<12} mean {}  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  ({} values)\n",
        fmt_ns(s.mean_ns),
        fmt_ns(s.p50_ns),
        fmt_ns(s.p90_ns),
        fmt_ns(s.p99_ns),
        fmt_ns(s.p999_ns),
        fmt_ns(s.max_ns),
        s.count
    )
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn rate(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2} M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1} k", v / 1e3)
    } else {
        format!("{v:.1} ")
    }
}

/// Syscalls per op as the survey shows it: the method's own count, or the kernel's (marked `k`) where the
/// method cannot know (stdio).
pub fn syscalls_per_op(r: &RunResult) -> String {
    match r.syscalls.method_per_op {
        Some(v) => format!("{v:.3}"),
        // Marked, not suffixed: "1.000k" read as a thousand.
        None => format!("{:.3}*", r.syscalls.kernel_rw_per_op),
    }
}

/// What the ops were: "write" or "read", or NOPs in their place.
fn op_text(s: &Spec) -> String {
    let op = if s.op == iolab_core::spec::OpKind::Write {
        "write"
    } else {
        "read"
    };
    if s.ring.nop_requests {
        format!("NOP requests (no data moved) in place of {op}")
    } else {
        op.to_string()
    }
}

impl TableExporter {
    /// A run's table: what ran, the clock, throughput, then the body of its kind (offload or I/O).
    pub fn run_text(&self, r: &RunResult) -> String {
        let s = &r.spec;
        let mut o = String::new();
        let amount = match (s.ops, s.duration_s) {
            (Some(n), Some(d)) => format!("{} ops or {d} s, whichever first", thousands(n)),
            (Some(n), None) => format!("{} ops", thousands(n)),
            (None, Some(d)) => format!("{d} s"),
            (None, None) => String::new(),
        };
        let mut extra = Vec::new();
        if s.direct {
            extra.push("O_DIRECT".to_string());
        }
        extra.extend((s.method.info().describe)(s));
        let _ = writeln!(
            o,
            "iolab run: {} {} {} {} -> {}, {} thread{}, {}{}",
            s.method.name(),
            op_text(s),
            fmt_size(s.bs),
            s.pattern.name(),
            target_label(r),
            s.threads,
            if s.threads == 1 { "" } else { "s" },
            amount,
            if extra.is_empty() {
                String::new()
            } else {
                format!(", {}", extra.join(", "))
            }
        );
        if let Some(e) = r.host.emulated_line() {
            let _ = writeln!(o, "emulated     {e}");
        }
        let _ = writeln!(
            o,
            "clock        {}; one read costs {:.1} ns ({:.0} ticks median, {:.1} mean)",
            r.clock.description,
            r.clock.overhead_ns,
            r.clock.overhead_ticks_median,
            r.clock.overhead_ticks_mean
        );
        let _ = writeln!(
            o,
            "throughput   {} ops, {} in {:.4} s: {}IOPS, {:.1} MiB/s, {} per op (wall / ops)",
            thousands(r.ops),
            fmt_size(r.bytes),
            r.wall_s,
            rate(r.iops),
            r.mib_s,
            fmt_ns(r.ns_per_op)
        );
        if let Some(of) = &r.offload {
            offload::offload_text(r, of, &mut o);
            return o;
        }
        table::io_text(r, &mut o);
        o
    }

    pub fn survey_text(&self, s: &SurveyResult) -> String {
        survey::survey_text(s)
    }
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map(|x| format!("{x:.digits$}"))
        .unwrap_or_else(|| "-".into())
}

impl Exporter for TableExporter {
    fn run(&self, r: &RunResult) -> Vec<u8> {
        self.run_text(r).into_bytes()
    }
    fn survey(&self, s: &SurveyResult) -> Vec<u8> {
        self.survey_text(s).into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}

//! Exporters behind one trait, each returning bytes (hyperfine's `export/` shape): a readable table for
//! stdout and the JSON document whose schema is `iolab_engine::result::RunResult` / `SurveyResult`.

pub mod answers;
mod fields;
pub mod html;
pub mod interval_csv;
mod offload;
pub mod probe;
mod sink;
pub mod suite_cols;
mod suite_nop;
pub mod suite_view;
mod survey;
mod table;
pub mod text;

pub use table::kernel_text;

use crate::text::{Align, Doc, Table, NBSP};
use iolab_engine::measure::hist::Summary;
use iolab_engine::result::RunResult;
use iolab_engine::spec::Spec;
use iolab_engine::target::TargetKind;
use iolab_engine::units::{fmt_mib_s, fmt_ns, fmt_ops_s, fmt_s, fmt_size, thousands_u64};
use iolab_lab::survey::SurveyResult;
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
        TargetKind::Sink => "iolab's sink driver",
    };
    format!("{} ({k})", r.spec.target.display())
}

fn dist_line(name: &str, s: &Summary) -> String {
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
        "{name:<12} {}  {}  {}  {}  {}  {}  ({} values)\n",
        v("mean", s.mean_ns),
        v("p50", s.p50_ns),
        v("p90", s.p90_ns),
        v("p99", s.p99_ns),
        v("p99.9", s.p999_ns),
        v("max", s.max_ns),
        thousands_u64(s.count)
    )
}

/// The throughput line's rates, or why there are none: a span too short to time (`units::too_short`).
fn rates(r: &RunResult) -> String {
    match iolab_engine::units::too_short(r.wall_s, r.clock.overhead_ns, r.clock.ns_per_tick) {
        Some(why) => format!("no rate: {why}"),
        None => format!("{}, {}", fmt_ops_s(r.iops), fmt_mib_s(r.mib_s)),
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
    let op = if s.op == iolab_engine::spec::OpKind::Write {
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
    /// A run's table as printed where it is not wrapped (a file, a pipe).
    pub fn run_text(&self, r: &RunResult) -> String {
        self.run_doc(r).render(None)
    }

    /// A run's table as a document: the header line, then a table of labelled lines (the label column
    /// and the figures, which wrap under themselves on a narrow terminal).
    pub fn run_doc(&self, r: &RunResult) -> Doc {
        let text = self.run_lines(r);
        let mut lines = text.lines();
        let mut d = Doc::new();
        if let Some(h) = lines.next() {
            d.line(h);
        }
        let mut t =
            Table::new(&[("what", Align::Left), ("figures", Align::Wrap)], 1).without_heads();
        for l in lines {
            let cut = l.char_indices().nth(13).map_or(l.len(), |(i, _)| i);
            t.row([l[..cut].trim_end(), l[cut..].trim_start()]);
        }
        d.table(t);
        d
    }

    /// The lines of a run's table: what ran, the clock, throughput, then the body of its kind (offload or
    /// I/O); each line a label in 13 columns and its figures.
    fn run_lines(&self, r: &RunResult) -> String {
        let s = &r.spec;
        let mut o = String::new();
        let amount = match (s.ops, s.duration_s) {
            (Some(n), Some(d)) => format!("{} ops or {d} s, whichever first", thousands_u64(n)),
            (Some(n), None) => format!("{} ops", thousands_u64(n)),
            (None, Some(d)) => format!("{d} s"),
            (None, None) => String::new(),
        };
        let mut extra = Vec::new();
        if let Some(w) = &r.warmup {
            extra.push(format!(
                "after a warm-up of {} ops in {} (--warmup {}; not timed, in no figure)",
                thousands_u64(w.ops),
                fmt_s(w.wall_s),
                w.asked
            ));
        }
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
            "throughput   {} ops, {} in {}: {}, {} per op (wall / ops)",
            thousands_u64(r.ops),
            fmt_size(r.bytes),
            fmt_s(r.wall_s),
            rates(r),
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

    /// The survey's tables as a document (for a terminal's width, or `--md`).
    pub fn survey_doc(&self, s: &SurveyResult) -> Doc {
        survey::survey_doc(s)
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

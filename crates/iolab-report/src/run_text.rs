//! A run (and a survey) as the readable text tables of the terminal.

use crate::cells::op_text;
use crate::cells::rates;
use crate::cells::target_label;
use crate::offload;
use crate::survey;
use crate::table;
use crate::text::{Align, Doc, Table};
use iolab_engine::result::RunResult;
use iolab_engine::skew::Distribution;
use iolab_engine::units::{fmt_ns, fmt_s, fmt_size, thousands_u64};
use iolab_lab::survey::SurveyResult;
use std::fmt::Write;

/// Human-readable tables.
pub struct TableExporter;

impl TableExporter {
    /// A run's table as printed where it is not wrapped (a file, a pipe).
    pub fn run_text(&self, r: &RunResult) -> String {
        self.run_doc(r).render(None)
    }

    /// A run's table as a document: the header line, then a table of labelled lines (the label column
    /// and the figures, which wrap under themselves on a narrow terminal).
    pub fn run_doc(&self, r: &RunResult) -> Doc {
        Self::doc_of(&self.run_lines(r))
    }

    /// Labelled lines as a document: the first line as it is, the rest a two-column table.
    fn doc_of(text: &str) -> Doc {
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

    /// A run's table as the terminal shows it: the whole account with `verbose`, else [`Self::brief_doc`].
    pub fn run_doc_for(&self, r: &RunResult, verbose: bool) -> Doc {
        if verbose {
            self.run_doc(r)
        } else {
            self.brief_doc(r)
        }
    }

    /// The figures and what explains them, in about 25 lines: the lines of [`Self::run_doc`] without the
    /// clock, scheduler, steal, kernel counters, notes and the timed/excluded account (each of the kept
    /// labels with its first line only where it runs on), and one line naming what `-v` adds.
    pub fn brief_doc(&self, r: &RunResult) -> Doc {
        const LEFT_OUT: [&str; 8] = [
            "clock",
            "scheduler",
            "steal",
            "kernel",
            "note",
            "timed",
            "excluded",
            "crosscheck",
        ];
        const FIRST_ONLY: [&str; 3] = ["cpu", "syscalls", "io_uring"];
        let text = self.run_lines(r);
        let mut kept = String::new();
        let (mut label, mut left) = (String::new(), 0usize);
        for (i, l) in text.lines().enumerate() {
            let cut = l.char_indices().nth(13).map_or(l.len(), |(i, _)| i);
            let own = l[..cut].trim();
            let continued = i > 0 && own.is_empty();
            if !continued {
                label = own.to_string();
            }
            let drop = i > 0
                && (LEFT_OUT.contains(&label.as_str())
                    || (continued && FIRST_ONLY.contains(&label.as_str()))
                    || (label == "gap" && same_as_latency(&text, l)));
            if drop {
                left += 1;
            } else {
                kept.push_str(l);
                kept.push('\n');
            }
        }
        if left > 0 {
            kept.push_str(&format!(
                "more         {left} lines with -v: the clock, scheduler and steal, the kernel's counters, the \
                 notes, and what was timed and excluded\n"
            ));
        }
        Self::doc_of(&kept)
    }

    /// The lines of a run's table: what ran, the clock, throughput, then the body of its kind (offload or
    /// I/O); each line a label in 13 columns and its figures.
    fn run_lines(&self, r: &RunResult) -> String {
        let s = &r.spec;
        let mut o = String::new();
        let amount = match (s.ops, s.duration_s, s.bytes) {
            (Some(n), Some(d), _) => format!("{} ops or {d} s, whichever first", thousands_u64(n)),
            (Some(n), None, _) => format!("{} ops", thousands_u64(n)),
            (None, Some(d), Some(b)) => format!("{} or {d} s, whichever first", fmt_size(b)),
            (None, Some(d), None) => format!("{d} s"),
            (None, None, Some(b)) => fmt_size(b),
            (None, None, None) => String::new(),
        };
        // --bs-split: the lengths drawn, in place of the one block size.
        let bs = match &s.bs_split {
            Some(b) => format!("{} (lengths drawn per op)", b.name()),
            None => fmt_size(s.bs),
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
        if let Some(n) = s.inflight {
            extra.push(format!("--inflight {n}"));
        }
        if let Some(r) = s.rate_iops {
            extra.push(format!("paced to {r:.1} ops/s per thread"));
        }
        if let Some(p) = s.read_pct {
            extra.push(format!("{p}% reads"));
        }
        if s.walk_per_direction {
            extra.push("reads and writes each from the region's start".into());
        }
        match &s.distribution {
            Distribution::Uniform => {}
            Distribution::Once => extra.push("each block once a pass".into()),
            d => extra.push(format!("{} offsets", d.name())),
        }
        if let Some(z) = &s.zones {
            extra.push(zones_said(z));
        }
        match s.skip {
            0 => {}
            n if n > 0 => extra.push(format!("{} skipped after each op", fmt_size(n as u64))),
            n => extra.push(format!(
                "each op {} back from the end of the one before",
                fmt_size(n.unsigned_abs())
            )),
        }
        extra.extend((s.method.info().describe)(s));
        let _ = writeln!(
            o,
            "iolab run: {} {} {} {} -> {}, {} thread{}, {}{}",
            s.method.name(),
            op_text(s),
            bs,
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
        if let Some(p) = r.host.pinned_line() {
            let _ = writeln!(o, "pinned       {p}");
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

/// Whether the gap line `l` says what the latency line of `text` says (a synchronous method's ops run back
/// to back, so the two series are one).
fn same_as_latency(text: &str, l: &str) -> bool {
    let body = |x: &str| {
        x.char_indices()
            .nth(13)
            .map_or("", |(i, _)| &x[i..])
            .trim()
            .to_string()
    };
    text.lines()
        .find(|x| x.starts_with("latency"))
        .is_some_and(|lat| body(lat) == body(l))
}

/// A run's zones as its first line says them: "zones of 8 KiB, one every 16 KiB", or "16 KiB in each zone
/// of 8 KiB, one every 24 KiB" where a zone is gone over again.
fn zones_said(z: &iolab_engine::spec::Zones) -> String {
    let every = fmt_size(z.range + z.skip);
    match z.range == z.size {
        true => format!("zones of {}, one every {every}", fmt_size(z.size)),
        false => format!(
            "{} in each zone of {}, one every {every}",
            fmt_size(z.size),
            fmt_size(z.range)
        ),
    }
}

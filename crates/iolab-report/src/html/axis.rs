//! The axes of the report's charts: their scales (linear, log, and the "nines" scale of percentiles),
//! where their ticks go (nice round numbers, decades, each measured size, whole numbers), and the units
//! on them, chosen per axis from the values drawn (ns, µs or ms; MiB/s or GiB/s; IOPS with k and M;
//! KiB and MiB; %).

use std::rc::Rc;

/// How values map to distance along an axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Scale {
    Lin,
    Log,
    /// Fractions p in [0, 1) at -log10(1 - p): p50, p90, p99, p99.9 an equal step apart, so the tail of a
    /// distribution gets as much room as its body.
    Nines,
}

/// One axis: its label (with the unit), scale, range and ticks, in the values' own units (ns, bytes, ...).
#[derive(Clone)]
pub(super) struct Axis {
    pub(super) title: String,
    pub(super) scale: Scale,
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) ticks: Vec<f64>,
    /// Light grid lines between ticks (log axes: 2..9 of each decade).
    pub(super) minor: Vec<f64>,
    /// A tick's label, of a value in the axis's own units.
    label: Rc<dyn Fn(f64) -> String>,
    /// Appended to a label in tooltips (" µs"); empty where the label carries its unit ("4 KiB").
    unit: String,
    /// Values over this are what the labels show (1000 for µs on an axis of ns), so round ticks are
    /// round in the unit shown.
    div: f64,
}

impl Axis {
    /// The position of `v` along the axis, in the linear space the chart is drawn in.
    pub(super) fn fwd(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Lin => v,
            Scale::Log => v.log10(),
            Scale::Nines => -(1.0 - v.min(1.0 - 1e-12)).log10(),
        }
    }

    /// The value at position `t` (inverse of `fwd`).
    pub(super) fn inv(&self, t: f64) -> f64 {
        match self.scale {
            Scale::Lin => t,
            Scale::Log => 10f64.powf(t),
            Scale::Nines => 1.0 - 10f64.powf(-t),
        }
    }

    /// Whether `v` can be drawn on this axis (log axes: positive; nines: in [0, 1)).
    pub(super) fn holds(&self, v: f64) -> bool {
        v.is_finite()
            && match self.scale {
                Scale::Lin => true,
                Scale::Log => v > 0.0,
                Scale::Nines => (0.0..1.0).contains(&v),
            }
    }

    pub(super) fn tick_label(&self, v: f64) -> String {
        (self.label)(v)
    }

    /// A value as a tooltip says it: the tick label with the unit.
    pub(super) fn value_text(&self, v: f64) -> String {
        format!("{}{}", (self.label)(v), self.unit)
    }

    /// (lo, hi) in drawing space.
    pub(super) fn span(&self) -> (f64, f64) {
        (self.fwd(self.lo), self.fwd(self.hi))
    }

    fn new(title: String, scale: Scale, (lo, hi): (f64, f64), ticks: Vec<f64>) -> Axis {
        Axis {
            title,
            scale,
            lo,
            hi,
            ticks,
            minor: Vec::new(),
            label: Rc::new(num),
            unit: String::new(),
            div: 1.0,
        }
    }

    fn labelled(mut self, label: impl Fn(f64) -> String + 'static, unit: &str) -> Axis {
        self.label = Rc::new(label);
        self.unit = unit.to_string();
        self
    }

    /// Times in ns on a log axis, shown in the one unit (ns, µs, ms or s) that suits their range.
    pub(super) fn time(name: &str, values: &[f64]) -> Axis {
        let (lo, hi) = bounds(values, true);
        let (unit, div) = time_unit(lo, hi);
        let (lo, hi) = (lo / 1.3, hi * 1.3);
        let mut a = Axis::new(
            format!("{name} ({unit}, log scale)"),
            Scale::Log,
            (lo, hi),
            Vec::new(),
        )
        .labelled(move |v| num(v / div), &format!(" {unit}"));
        a.div = div;
        a.ticks = a.log_ticks();
        a.minor = log_minor(lo, hi);
        a
    }

    /// A linear axis from 0 of amounts in `unit` (calls/op, % ...).
    pub(super) fn amount(name: &str, unit: &str, values: &[f64]) -> Axis {
        let (_, hi) = bounds(values, false);
        let (ticks, top) = lin_ticks(0.0, hi, false);
        let u = if unit.starts_with('%') {
            "%".to_string()
        } else {
            format!(" {unit}")
        };
        Axis::new(format!("{name} ({unit})"), Scale::Lin, (0.0, top), ticks).labelled(num, &u)
    }

    /// Throughput in MiB/s, shown in GiB/s from 1 GiB/s up.
    pub(super) fn throughput(values: &[f64]) -> Axis {
        let (_, hi) = bounds(values, false);
        let (unit, div) = if hi >= 1024.0 {
            ("GiB/s", 1024.0)
        } else {
            ("MiB/s", 1.0)
        };
        let (ticks, top) = lin_ticks(0.0, hi / div, false);
        let mut a = Axis::new(
            format!("throughput ({unit})"),
            Scale::Lin,
            (0.0, top * div),
            ticks.iter().map(|t| t * div).collect(),
        )
        .labelled(move |v| num(v / div), &format!(" {unit}"));
        a.div = div;
        a
    }

    /// Ticks of a log axis from `lo` to `hi`, round in the unit shown.
    fn log_ticks(&self) -> Vec<f64> {
        log_ticks(self.lo / self.div, self.hi / self.div)
            .into_iter()
            .map(|t| t * self.div)
            .collect()
    }

    /// Operations per second, with k and M.
    pub(super) fn iops(values: &[f64]) -> Axis {
        let (_, hi) = bounds(values, false);
        let (ticks, top) = lin_ticks(0.0, hi, false);
        Axis::new(
            "operations per second (IOPS)".into(),
            Scale::Lin,
            (0.0, top),
            ticks,
        )
        .labelled(si, " IOPS")
    }

    /// A log axis with a tick at each measured value (`values`: block sizes, queue depths ...), labelled
    /// by `label` (bytes as "4 KiB", counts as they are).
    pub(super) fn measured(
        name: &str,
        unit: &str,
        values: &[f64],
        label: impl Fn(f64) -> String + 'static,
    ) -> Axis {
        let mut ticks: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
        ticks.sort_by(f64::total_cmp);
        ticks.dedup();
        let (lo, hi) = bounds(&ticks, true);
        Axis::new(
            format!("{name} ({unit}, log scale)"),
            Scale::Log,
            (lo / 1.6, hi * 1.6),
            ticks,
        )
        .labelled(label, "")
    }

    /// Block sizes (bytes) with a tick at each size measured.
    pub(super) fn block_sizes(values: &[f64]) -> Axis {
        Axis::measured("block size", "bytes per op", values, bytes)
    }

    /// Positions 1..=n (runs in order), with whole-number ticks.
    pub(super) fn ordinal(name: &str, unit: &str, n: usize) -> Axis {
        let (mut ticks, _) = lin_ticks(1.0, n as f64, true);
        ticks.retain(|t| *t >= 1.0 && *t <= n as f64);
        Axis::new(
            format!("{name} ({unit})"),
            Scale::Lin,
            (0.5, n as f64 + 0.5),
            ticks,
        )
    }

    /// Percentiles (fractions 0..1) on the nines scale, ticked p50, p90, p99 ... up to the largest drawn.
    pub(super) fn nines(name: &str, values: &[f64]) -> Axis {
        Axis::nines_with(name, values, |p| format!("p{}", percent(p)))
    }

    /// Shares of ops (fractions 0..1) on the nines scale, ticked 50%, 90%, 99% ...
    pub(super) fn nines_share(name: &str, values: &[f64]) -> Axis {
        Axis::nines_with(name, values, |p| format!("{}%", percent(p)))
    }

    fn nines_with(name: &str, values: &[f64], label: fn(f64) -> String) -> Axis {
        let (lo, hi) = bounds(values, false);
        let mut ticks: Vec<f64> = [0.5, 0.9, 0.99, 0.999, 0.9999, 0.99999]
            .into_iter()
            .filter(|p| *p <= hi * (1.0 + 1e-12))
            .collect();
        if lo < 0.5 {
            ticks.insert(0, 0.0);
        }
        let mut a = Axis::new(
            format!("{name} (%, nines scale)"),
            Scale::Nines,
            (0.0, 0.0),
            ticks,
        )
        .labelled(label, "");
        // A little room beyond the first and last points.
        let (t0, t1) = (a.fwd(lo), a.fwd(hi));
        let pad = ((t1 - t0) * 0.04).max(0.05);
        a.lo = a.inv((t0 - pad).max(0.0));
        a.hi = a.inv(t1 + pad);
        a
    }

    /// This axis as a linear one from 0, where it is not (bars are measured from zero; a log axis has none).
    pub(super) fn linear_from_zero(self, values: &[f64]) -> Axis {
        if self.scale == Scale::Lin {
            return self;
        }
        let (_, hi) = bounds(values, false);
        let (ticks, top) = lin_ticks(0.0, hi / self.div, false);
        Axis {
            title: self.title.replace(", log scale", ""),
            scale: Scale::Lin,
            lo: 0.0,
            hi: top * self.div,
            ticks: ticks.iter().map(|t| t * self.div).collect(),
            minor: Vec::new(),
            ..self
        }
    }

    /// This linear axis as a log one when its values are all positive and span a factor of 100 or more:
    /// a linear axis would flatten the small ones onto its floor.
    pub(super) fn log_if_wide(self, values: &[f64]) -> Axis {
        self.log_if_span(values, 100.0)
    }

    /// This linear axis as a log one when its values are all positive and span `factor` or more.
    pub(super) fn log_if_span(self, values: &[f64], factor: f64) -> Axis {
        let (lo, hi) = bounds(values, true);
        let all_positive = values.iter().all(|v| *v > 0.0);
        if self.scale != Scale::Lin || !all_positive || hi < lo * factor {
            return self;
        }
        let (lo, hi) = (lo / 1.3, hi * 1.3);
        let mut a = Axis {
            title: format!("{}, log scale)", self.title.trim_end_matches(')')),
            scale: Scale::Log,
            lo,
            hi,
            ..self
        };
        a.ticks = a.log_ticks();
        a.minor = log_minor(lo / a.div, hi / a.div)
            .into_iter()
            .map(|t| t * a.div)
            .collect();
        a
    }
}

/// (min, max) of the values an axis can show (positive ones for log axes); (1, 1) when none.
fn bounds(values: &[f64], log: bool) -> (f64, f64) {
    let ok = |v: &&f64| v.is_finite() && (!log || **v > 0.0);
    let lo = values
        .iter()
        .filter(ok)
        .copied()
        .fold(f64::INFINITY, f64::min);
    let hi = values
        .iter()
        .filter(ok)
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    if lo.is_finite() {
        (lo, hi)
    } else {
        (1.0, 1.0)
    }
}

/// The unit for times from `lo` to `hi` ns: the largest the top reaches, one smaller while the bottom
/// would read below 0.01 of it.
pub(super) fn time_unit(lo: f64, hi: f64) -> (&'static str, f64) {
    const U: [(&str, f64); 4] = [("ns", 1.0), ("µs", 1e3), ("ms", 1e6), ("s", 1e9)];
    let mut i = U.iter().rposition(|u| hi >= u.1).unwrap_or(0);
    while i > 0 && lo / U[i].1 < 0.01 {
        i -= 1;
    }
    U[i]
}

/// Round ticks from `lo` covering `hi` (a step of 1, 2, 2.5 or 5 times a power of ten; whole numbers
/// when `whole`), and the top of the axis (the first tick at or above `hi`).
fn lin_ticks(lo: f64, hi: f64, whole: bool) -> (Vec<f64>, f64) {
    let hi = if hi > lo { hi } else { lo + 1.0 };
    let raw = (hi - lo) / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let mut step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw * 0.999)
        .unwrap_or(10.0 * mag);
    if whole {
        step = step.ceil().max(1.0);
    }
    let first = (lo / step).ceil();
    let mut ticks = Vec::new();
    let mut k = first;
    loop {
        let t = k * step;
        ticks.push(t);
        if t >= hi * (1.0 - 1e-9) || ticks.len() > 50 {
            break;
        }
        k += 1.0;
    }
    let top = *ticks.last().unwrap_or(&hi);
    (ticks, top)
}

/// Log-axis ticks: each power of ten in [lo, hi]; 1-2-5 steps where that gives fewer than three; round
/// linear steps where even those are fewer than three (a range within one decade).
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let inside = |m: &[f64]| -> Vec<f64> {
        (a..=b)
            .flat_map(|e| m.iter().map(move |k| k * 10f64.powi(e)))
            .filter(|v| *v >= lo && *v <= hi)
            .collect()
    };
    let t = inside(&[1.0]);
    if t.len() >= 3 {
        return t;
    }
    let t = inside(&[1.0, 2.0, 5.0]);
    if t.len() >= 3 {
        return t;
    }
    lin_ticks(lo, hi, false)
        .0
        .into_iter()
        .filter(|v| *v >= lo && *v <= hi && *v > 0.0)
        .collect()
}

/// 2..9 times each power of ten in [lo, hi]: the light grid of a log axis.
fn log_minor(lo: f64, hi: f64) -> Vec<f64> {
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    (a..=b)
        .flat_map(|e| (1..10).map(move |k| k as f64 * 10f64.powi(e)))
        .filter(|v| *v >= lo && *v <= hi)
        .collect()
}

/// A number as a tick shows it: three significant digits, whole numbers from 1000 up with thousands
/// separators.
pub(super) fn num(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        return "0".into();
    }
    if a >= 1000.0 {
        let n = v.round() as i64;
        let s = n.unsigned_abs().to_string();
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        return if n < 0 { format!("-{out}") } else { out };
    }
    let digits = (2 - a.log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A fraction as a percentage with the decimals it needs (0.99999: 99.999).
fn percent(p: f64) -> String {
    let v = p * 100.0;
    let d = (0..6)
        .find(|d| {
            let m = 10f64.powi(*d);
            ((v * m).round() / m - v).abs() < 1e-7
        })
        .unwrap_or(6) as usize;
    format!("{v:.d$}")
}

/// Rates and counts with k, M and G (1.5k, 2M).
pub(super) fn si(v: f64) -> String {
    let a = v.abs();
    let (d, s) = if a >= 1e9 {
        (1e9, "G")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    format!("{}{s}", num(v / d))
}

/// Bytes in binary units: 512 B, 4 KiB, 1.5 MiB, 256 MiB, 1 GiB.
pub(super) fn bytes(v: f64) -> String {
    const U: [(&str, f64); 4] = [
        ("GiB", 1073741824.0),
        ("MiB", 1048576.0),
        ("KiB", 1024.0),
        ("B", 1.0),
    ];
    let (name, d) = U
        .iter()
        .copied()
        .find(|(_, d)| v.abs() >= *d)
        .unwrap_or(("B", 1.0));
    format!("{} {name}", num(v / d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_people_write_them() {
        assert_eq!(num(0.0), "0");
        assert_eq!(num(0.25), "0.25");
        assert_eq!(num(1.5), "1.5");
        assert_eq!(num(12.34), "12.3");
        assert_eq!(num(100.0), "100");
        assert_eq!(num(12345.0), "12,345");
        assert_eq!(num(-2500.0), "-2,500");
        assert_eq!(si(1500.0), "1.5k");
        assert_eq!(si(2_000_000.0), "2M");
        assert_eq!(si(950.0), "950");
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(4096.0), "4 KiB");
        assert_eq!(bytes(65536.0), "64 KiB");
        assert_eq!(bytes(1048576.0), "1 MiB");
        assert_eq!(bytes(1.5 * 1048576.0), "1.5 MiB");
        assert_eq!(bytes(268435456.0), "256 MiB");
    }

    #[test]
    fn time_units_suit_the_range() {
        assert_eq!(time_unit(100.0, 900.0).0, "ns");
        assert_eq!(time_unit(2e3, 9e5).0, "µs");
        assert_eq!(time_unit(2e5, 3e7).0, "ms");
        // 500 ns would read 0.0005 ms: one unit down.
        assert_eq!(time_unit(500.0, 3e7).0, "µs");
        let a = Axis::time("latency", &[2000.0, 3e6]);
        assert_eq!(a.title, "latency (µs, log scale)");
        assert!(
            a.ticks.iter().any(|t| a.tick_label(*t) == "1,000"),
            "{:?}",
            a.ticks
        );
        assert_eq!(a.value_text(2500.0), "2.5 µs");
        let b = a.linear_from_zero(&[2000.0, 3e6]);
        assert_eq!(b.title, "latency (µs)");
        assert_eq!((b.scale, b.lo), (Scale::Lin, 0.0));
        assert_eq!(b.tick_label(*b.ticks.last().unwrap()), "3,000");
    }

    #[test]
    fn ticks_are_round_and_cover_the_values() {
        let (t, top) = lin_ticks(0.0, 87.0, false);
        assert_eq!(t, vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!(top, 100.0);
        let (t, _) = lin_ticks(1.0, 3.0, true);
        assert!(t.iter().all(|v| v.fract() == 0.0), "{t:?}");
        assert_eq!(log_ticks(90.0, 2e6), vec![100.0, 1e3, 1e4, 1e5, 1e6]);
        let t = log_ticks(150.0, 900.0);
        assert_eq!(t, vec![200.0, 400.0, 600.0, 800.0]);
        assert!(
            t.len() >= 3 && t.iter().all(|v| (150.0..=900.0).contains(v)),
            "{t:?}"
        );
        let a = Axis::block_sizes(&[4096.0, 512.0, 1048576.0, 4096.0]);
        let labels: Vec<String> = a.ticks.iter().map(|t| a.tick_label(*t)).collect();
        assert_eq!(labels, ["512 B", "4 KiB", "1 MiB"]);
        let o = Axis::ordinal("run", "ordinal", 20);
        assert!(o
            .ticks
            .iter()
            .all(|t| t.fract() == 0.0 && *t >= 1.0 && *t <= 20.0));
    }

    #[test]
    fn the_nines_scale_spaces_the_tail_evenly() {
        let a = Axis::nines("percentile", &[0.5, 0.9, 0.99, 0.999, 0.99999]);
        let labels: Vec<String> = a.ticks.iter().map(|t| a.tick_label(*t)).collect();
        assert_eq!(labels, ["p50", "p90", "p99", "p99.9", "p99.99", "p99.999"]);
        let step1 = a.fwd(0.99) - a.fwd(0.9);
        let step2 = a.fwd(0.999) - a.fwd(0.99);
        assert!((step1 - 1.0).abs() < 1e-9 && (step2 - 1.0).abs() < 1e-9);
        assert!((a.inv(a.fwd(0.999)) - 0.999).abs() < 1e-12);
        assert!(a.lo < 0.5 && a.hi > 0.99999 && a.hi < 1.0);
        assert!(!a.holds(1.0) && a.holds(0.0));
        let s = Axis::nines_share("ops", &[0.0, 0.5, 0.99]);
        let labels: Vec<String> = s.ticks.iter().map(|t| s.tick_label(*t)).collect();
        assert_eq!(labels, ["0%", "50%", "90%", "99%"]);
    }

    #[test]
    fn wide_ranges_go_log() {
        let a = Axis::throughput(&[5.0, 17000.0]).log_if_wide(&[5.0, 17000.0]);
        assert_eq!(a.title, "throughput (GiB/s, log scale)");
        assert_eq!(a.scale, Scale::Log);
        let labels: Vec<String> = a.ticks.iter().map(|t| a.tick_label(*t)).collect();
        assert_eq!(labels, ["0.01", "0.1", "1", "10"]);
        let a = Axis::throughput(&[50.0, 1700.0]).log_if_wide(&[50.0, 1700.0]);
        assert_eq!(a.scale, Scale::Lin);
        // A zero cannot be drawn on a log axis: the axis stays linear.
        let a = Axis::amount("calls", "calls/op", &[0.0, 1000.0]).log_if_wide(&[0.0, 1000.0]);
        assert_eq!(a.scale, Scale::Lin);
        // IOPS over time of 1 MiB and 4 KiB runs (10x apart) go log; those within 10x do not.
        let ys = [1200.0, 64000.0];
        let a = Axis::iops(&ys).log_if_span(&ys, 10.0);
        assert_eq!(
            (a.scale, a.title.as_str()),
            (Scale::Log, "operations per second (IOPS, log scale)")
        );
        let ys = [9000.0, 64000.0];
        assert_eq!(Axis::iops(&ys).log_if_span(&ys, 10.0).scale, Scale::Lin);
    }

    #[test]
    fn throughput_switches_to_gib() {
        let a = Axis::throughput(&[300.0, 1800.0]);
        assert_eq!(a.title, "throughput (GiB/s)");
        assert_eq!(a.value_text(1536.0), "1.5 GiB/s");
        let a = Axis::throughput(&[30.0, 800.0]);
        assert_eq!(a.title, "throughput (MiB/s)");
        let a = Axis::iops(&[1500.0, 2.5e6]);
        assert!(a.ticks.iter().any(|t| a.tick_label(*t).ends_with('M')));
    }
}

//! Latency histograms: HdrHistogram (Gil Tene's high dynamic range histogram, via the `hdrhistogram`
//! crate) of clock ticks, three significant digits, so every recorded value is kept within 0.1% and
//! percentiles are read from the whole distribution, not from a sample. Values are converted to
//! nanoseconds only when summarised.

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};

pub type Hist = hdrhistogram::Histogram<u64>;

/// Sub-bucket index bits in [`FastHist`]: values below 2^11 are exact; above, the top 11 bits are kept,
/// i.e. 1024 linear buckets per power of two, so a value is kept within 1/1024 (< 0.1%), the same
/// precision as an HdrHistogram with 3 significant digits.
const SUB_BITS: u32 = 11;
const SUB: usize = 1 << SUB_BITS;

/// The hot-path recorder: HdrHistogram's log-linear bucketing (exact below 2^11 ticks, then 1024 linear
/// buckets per power of two) reduced to one `lzcnt`, a shift and an increment, about 2-3 ns against
/// 6-8 ns for `Histogram::record` here, because the runner records two values per op and the harness must
/// cost little next to a 100 ns syscall. [`FastHist::into_hdr`] moves the counts into a real
/// `hdrhistogram::Histogram` (each bucket at its lowest value, within the same 0.1%), from which every
/// summary is computed.
pub struct FastHist {
    counts: Box<[u64]>,
}

impl FastHist {
    /// Buckets: exact below 2^11, then 1024 per power of two up to [`HIST_MAX_TICKS`] (2^44), the
    /// HdrHistogram's range; larger values land in the last bucket, as the HdrHistogram clamps them.
    const LEN: usize = (MAX_BITS as usize - SUB_BITS as usize + 1) * SUB;
    /// The highest value with a bucket of its own.
    const MAX_V: u64 = HIST_MAX_TICKS - 1;
    /// The table's size in bytes (544 KiB): two per worker thread, and one more where intervals are
    /// logged. (Up to 2^64 it was 864 KiB, a third of the main job's heap for buckets no op reaches.)
    pub const BYTES: usize = Self::LEN * std::mem::size_of::<u64>();

    /// A histogram with no table yet (allocates nothing); [`FastHist::try_new`] gives one to record into.
    pub fn empty() -> FastHist {
        FastHist {
            counts: Box::default(),
        }
    }

    /// A zeroed table, or the out-of-memory error (exit 1) naming its size and the limit.
    pub fn try_new() -> crate::error::Result<FastHist> {
        let mut counts = crate::mem::zeroed::<u64>(
            Self::LEN,
            "a worker thread's latency histograms (two per thread)",
            "lower --threads",
        )?
        .into_boxed_slice();
        // Touch every page now, so the timed run's page-fault count is the method's, not the histogram's
        // (the allocator hands out lazily mapped zero pages). Volatile, so it is not optimised away.
        for i in (0..counts.len()).step_by(512) {
            // SAFETY: `i` is in bounds and the pointer comes from a live &mut element.
            unsafe { std::ptr::write_volatile(&mut counts[i], 0) };
        }
        Ok(FastHist { counts })
    }

    /// The bucket of `v` (at most `LEN - 1` for `v` up to [`FastHist::MAX_V`]). For v < 2^11 this is v
    /// itself (shift 0); above, (shift, top 11 bits of v). The shift is the number of v's bits past 11:
    /// with the low 11 bits set, v has at least 11, so no saturation and no test for 0 is needed.
    #[inline(always)]
    const fn index(v: u64) -> usize {
        let shift = (64 - SUB_BITS) - (v | (SUB as u64 - 1)).leading_zeros();
        ((shift as usize) << SUB_BITS) + ((v >> shift) as usize & (SUB - 1))
    }

    /// The bucket of any `v`: past [`FastHist::MAX_V`], the last one (where the HdrHistogram clamps it),
    /// as clamping `v` would give (checked when compiling).
    #[inline(always)]
    fn clamped_index(v: u64) -> usize {
        const { assert!(FastHist::index(FastHist::MAX_V) == FastHist::LEN - 1) };
        Self::index(v).min(Self::LEN - 1)
    }

    /// The lowest value of bucket `i`.
    fn value_of(i: usize) -> u64 {
        let shift = (i >> SUB_BITS) as u32;
        let sub = (i & (SUB - 1)) as u64;
        sub << shift
    }

    #[inline(always)]
    pub fn record(&mut self, v: u64) {
        // One conditional move: the index is then at most (44 - 11) * 2048 + 2047, inside the table
        // (bounds check kept).
        let i = Self::clamped_index(v);
        self.counts[i] += 1;
    }

    /// Records `n` values equal to `v` (a run of equal values costs one memory update).
    #[inline(always)]
    pub fn record_n(&mut self, v: u64, n: u64) {
        let i = Self::clamped_index(v);
        self.counts[i] += n;
    }

    /// Moves every count into `total` (added there, zeroed here), calling `each(lowest value of the
    /// bucket, count)` in increasing order of value. Empty stretches are skipped eight buckets at a time:
    /// a table that holds one interval's latencies is read once (544 KiB).
    pub(crate) fn move_into(&mut self, total: &mut FastHist, mut each: impl FnMut(u64, u64)) {
        let pairs = self
            .counts
            .chunks_exact_mut(8)
            .zip(total.counts.chunks_exact_mut(8));
        for (k, (c8, t8)) in pairs.enumerate() {
            if c8.iter().fold(0, |a, &b| a | b) == 0 {
                continue;
            }
            for (j, (c, t)) in c8.iter_mut().zip(t8.iter_mut()).enumerate() {
                if *c != 0 {
                    *t += *c;
                    each(Self::value_of(k * 8 + j), *c);
                    *c = 0;
                }
            }
        }
    }

    /// Moves the counts into an HdrHistogram.
    pub fn into_hdr(&self) -> Hist {
        // Sized for the largest value held (an auto-resizing histogram's saturating record clamps to
        // the range it has, so the range comes first).
        let top = self
            .counts
            .iter()
            .rposition(|&c| c > 0)
            .map_or(0, Self::value_of);
        let mut h = Hist::new_with_max(top.max(2), 3).expect("bounds of at least 2 are valid");
        h.auto(true);
        for (i, &c) in self.counts.iter().enumerate() {
            if c > 0 {
                h.saturating_record_n(Self::value_of(i), c);
            }
        }
        h
    }
}

/// Values held before they reach a [`FastHist`].
const PENDING: usize = 16;

/// Values bound for a [`FastHist`], held in a small table of the loop's own (on its stack, beside its
/// other state) and recorded [`PENDING`] at a time. The table of a FastHist is 544 KiB: a loop that
/// records into two of them every round touches two more pages per round, and where every system
/// call costs the TLB (this machine's VM: about 5 ns per distinct page touched between two calls,
/// measured against a bare io_uring loop) that is as much as the rest of a round's bookkeeping.
/// Whoever reads the histogram first calls [`Pending::flush`].
pub struct Pending {
    vals: [(u64, u64); PENDING],
    len: usize,
}

impl Default for Pending {
    fn default() -> Pending {
        Pending {
            vals: [(0, 0); PENDING],
            len: 0,
        }
    }
}

impl Pending {
    /// `n` values equal to `v`, for `h`.
    #[inline(always)]
    pub fn add(&mut self, h: &mut FastHist, v: u64, n: u64) {
        if self.len >= PENDING {
            self.flush(h);
        }
        self.vals[self.len] = (v, n);
        self.len += 1;
    }

    /// Records every value held into `h`.
    #[cold]
    #[inline(never)]
    pub fn flush(&mut self, h: &mut FastHist) {
        for &(v, n) in &self.vals[..self.len] {
            h.record_n(v, n);
        }
        self.len = 0;
    }
}

/// Highest trackable value: 2^44 ticks (about 1.6 hours at 3 GHz); larger values are clamped and counted.
pub const HIST_MAX_TICKS: u64 = 1 << MAX_BITS;
const MAX_BITS: u32 = 44;

/// An empty HdrHistogram (3 significant digits) that grows to the largest value recorded into it: a run
/// whose ops all take under 2^20 ticks holds 90 KiB of counts, not the 288 KiB that covering 2^44 from the
/// start takes (four are alive at once when a run's threads are merged). Values come from
/// [`FastHist::into_hdr`], already clamped to [`HIST_MAX_TICKS`].
pub fn new_hist() -> Hist {
    Hist::new(3).expect("3 significant digits are valid")
}

/// One histogram of several runs' [`Summary::hist_ns`] (each machine's clock is its own, so they merge in
/// ns), in tenths of a ns: [`summarize`] it with 0.1 ns per tick.
pub fn merge_ns<'a>(parts: impl IntoIterator<Item = &'a [(f64, u64)]>) -> Hist {
    let mut h = new_hist();
    for part in parts {
        for &(ns, n) in part {
            // record_n grows the range (a saturating record would clamp to the range it has); only a
            // value past the largest range an HdrHistogram has is clamped.
            let v = (ns * 10.0).round().max(0.0) as u64;
            if h.record_n(v, n).is_err() {
                h.saturating_record_n(v, n);
            }
        }
    }
    h
}

/// A latency distribution in nanoseconds.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    /// Number of values recorded.
    pub count: u64,
    pub mean_ns: f64,
    pub stdev_ns: f64,
    pub min_ns: f64,
    pub p50_ns: f64,
    pub p90_ns: f64,
    pub p99_ns: f64,
    pub p999_ns: f64,
    pub max_ns: f64,
    /// (quantile in [0,1], value in ns) at fixed quantiles, for CDF plots (a reader that draws none,
    /// the fleet's merge, leaves it out).
    #[serde(default)]
    pub cdf: Vec<(f64, f64)>,
    /// Histogram for plots: (upper bound in ns, values recorded since the previous bound), buckets half an
    /// octave wide (each bound sqrt(2) times the previous), empty buckets left out.
    #[serde(default)]
    pub buckets: Vec<(f64, u64)>,
    /// Every bucket of the histogram that holds values, as (its highest value in ns, to 0.1 ns; its
    /// count), in increasing order: the whole distribution at its own precision (3 significant
    /// digits), so that runs on several machines merge into one histogram whose percentiles are read
    /// from it (`iolab fleet`), never averaged. In the JSON one string, "VALUE:COUNT" pairs apart by
    /// spaces ("133.3:9571 134.3:6111"): a pretty-printed file keeps it on one line. Absent in results
    /// of versions before it.
    #[serde(default, skip_serializing_if = "Vec::is_empty", with = "pairs_text")]
    pub hist_ns: Vec<(f64, u64)>,
}

impl Summary {
    /// No value was recorded: nothing was measured.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

/// [`Summary::hist_ns`] as one string of "VALUE:COUNT" pairs apart by spaces.
mod pairs_text {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[(f64, u64)], s: S) -> Result<S::Ok, S::Error> {
        let text: Vec<String> = v.iter().map(|(ns, n)| format!("{ns}:{n}")).collect();
        s.serialize_str(&text.join(" "))
    }

    /// The string, or the list of pairs the first results that had the field wrote.
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Form {
        Text(String),
        Pairs(Vec<(f64, u64)>),
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(f64, u64)>, D::Error> {
        let text = match Form::deserialize(d)? {
            Form::Text(t) => t,
            Form::Pairs(p) => return Ok(p),
        };
        text.split_ascii_whitespace()
            .map(|pair| {
                let (ns, n) = pair.split_once(':').ok_or_else(|| {
                    D::Error::custom(format!("hist_ns: '{pair}' is not VALUE:COUNT"))
                })?;
                match (ns.parse::<f64>(), n.parse::<u64>()) {
                    (Ok(ns), Ok(n)) if ns.is_finite() && ns >= 0.0 => Ok((ns, n)),
                    _ => Err(D::Error::custom(format!(
                        "hist_ns: '{pair}' is not VALUE:COUNT"
                    ))),
                }
            })
            .collect()
    }
}

const CDF_QUANTILES: [f64; 21] = [
    0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999,
    0.9995, 0.9999, 0.99999, 1.0,
];

/// Set in the environment of a command `iolab fleet` runs on a host (its Ansible role does): the results
/// carry their latency histograms ([`Summary::hist_ns`]) for the fleet's merge. Elsewhere they do not:
/// a survey holding every run's histogram doubled its peak memory (12 to 25 MB) and its JSON.
pub const KEEP_HIST_ENV: &str = "IOLAB_FLEET_HIST";

/// Summarises `h` (ticks) with `ns_per_tick`, with its whole histogram where [`KEEP_HIST_ENV`] is set. An
/// empty histogram gives all zeros.
pub fn summarize(h: &Hist, ns_per_tick: f64) -> Summary {
    static KEEP: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let keep = *KEEP.get_or_init(|| std::env::var_os(KEEP_HIST_ENV).is_some());
    summarize_keeping(h, ns_per_tick, keep || KEEP_ASKED.load(Ordering::Relaxed))
}

static KEEP_ASKED: AtomicBool = AtomicBool::new(false);

/// From now on, every summary of this process keeps its whole histogram ([`Summary::hist_ns`]): for an
/// output that is counted from it (fio's json+ bins), asked for before the runs.
pub fn keep_whole_histograms() {
    KEEP_ASKED.store(true, Ordering::Relaxed);
}

/// [`summarize`], with the whole histogram in [`Summary::hist_ns`] when `keep`.
pub fn summarize_keeping(h: &Hist, ns_per_tick: f64, keep: bool) -> Summary {
    if h.is_empty() {
        return Summary::default();
    }
    let ns = |t: u64| t as f64 * ns_per_tick;
    Summary {
        count: h.len(),
        mean_ns: h.mean() * ns_per_tick,
        stdev_ns: h.stdev() * ns_per_tick,
        min_ns: ns(h.min()),
        p50_ns: ns(h.value_at_quantile(0.5)),
        p90_ns: ns(h.value_at_quantile(0.9)),
        p99_ns: ns(h.value_at_quantile(0.99)),
        p999_ns: ns(h.value_at_quantile(0.999)),
        max_ns: ns(h.max()),
        cdf: CDF_QUANTILES
            .iter()
            .map(|&q| (q, ns(h.value_at_quantile(q))))
            .collect(),
        buckets: h
            .iter_log(1, std::f64::consts::SQRT_2)
            .filter(|v| v.count_since_last_iteration() > 0)
            .map(|v| (ns(v.value_iterated_to()), v.count_since_last_iteration()))
            .collect(),
        hist_ns: if keep {
            h.iter_recorded()
                .map(|v| {
                    let at = (ns(v.value_iterated_to()) * 10.0).round() / 10.0;
                    (at, v.count_at_value())
                })
                .collect()
        } else {
            Vec::new()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_values_land_as_if_recorded_directly() {
        let (mut direct, mut held) = (FastHist::try_new().unwrap(), FastHist::try_new().unwrap());
        let mut p = Pending::default();
        // More than one table's worth, so some go in by the automatic flush and the rest by the last.
        for i in 0..(3 * PENDING as u64 + 5) {
            let (v, n) = (i * 977 % 5000, 1 + i % 3);
            direct.record_n(v, n);
            p.add(&mut held, v, n);
        }
        let before = held.into_hdr().len();
        assert!(
            before > 0 && before < direct.into_hdr().len(),
            "some held back: {before}"
        );
        p.flush(&mut held);
        let (a, b) = (direct.into_hdr(), held.into_hdr());
        assert_eq!(a.len(), b.len());
        for q in [0.0, 0.25, 0.5, 0.75, 1.0] {
            assert_eq!(a.value_at_quantile(q), b.value_at_quantile(q), "q{q}");
        }
        // A flush leaves nothing behind: a second adds nothing.
        p.flush(&mut held);
        assert_eq!(held.into_hdr().len(), a.len());
    }

    #[test]
    fn fast_hist_matches_hdr_within_its_precision() {
        let mut f = FastHist::try_new().unwrap();
        // The reference: an HdrHistogram over the whole range, clamping above it.
        let mut h = Hist::new_with_bounds(1, HIST_MAX_TICKS, 3).unwrap();
        let vals = [
            0u64,
            1,
            2,
            1023,
            1024,
            1025,
            2047,
            2048,
            4097,
            123_456,
            9_999_999,
            1 << 40,
            u64::MAX >> 1,
        ];
        for &v in &vals {
            f.record(v);
            h.saturating_record(v);
        }
        let g = f.into_hdr();
        assert_eq!(g.len(), vals.len() as u64);
        for q in [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0] {
            let (a, b) = (g.value_at_quantile(q) as f64, h.value_at_quantile(q) as f64);
            assert!((a - b).abs() <= b * 0.002 + 1.0, "q{q}: fast {a} hdr {b}");
        }
        // Every value lands in a bucket whose lowest value is within 1/1024 below it.
        for v in [5u64, 1500, 70_000, 3_000_000_000] {
            let lo = FastHist::value_of(FastHist::index(v));
            assert!(
                lo <= v && (v - lo) as f64 <= v as f64 / 1024.0,
                "{v} -> {lo}"
            );
        }
    }

    #[test]
    fn the_bucket_of_a_value_is_the_log_linear_one_written_out() {
        // The bucketing as first written (saturating shift, zero handled, value clamped first).
        let plain = |v: u64| {
            let v = v.min(FastHist::MAX_V);
            let shift = (64 - v.leading_zeros()).saturating_sub(SUB_BITS);
            ((shift as usize) << SUB_BITS) + ((v >> shift) as usize & (SUB - 1))
        };
        let mut vals: Vec<u64> = (0..5000).collect();
        for b in 10..64 {
            let p = 1u64 << b;
            vals.extend([p - 1, p, p + 1, p | (p >> 1), p.wrapping_mul(3) / 2]);
        }
        vals.extend([FastHist::MAX_V, FastHist::MAX_V + 1, u64::MAX]);
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            vals.push(x >> (x % 64));
        }
        for v in vals {
            assert_eq!(FastHist::clamped_index(v), plain(v), "value {v}");
        }
        assert_eq!(FastHist::clamped_index(u64::MAX), FastHist::LEN - 1);
    }

    #[test]
    fn values_past_the_range_land_in_the_last_bucket_counted() {
        let mut f = FastHist::try_new().unwrap();
        assert_eq!(FastHist::BYTES, 544 << 10);
        f.record(u64::MAX);
        f.record_n(HIST_MAX_TICKS, 2);
        f.record(HIST_MAX_TICKS - 1);
        let g = f.into_hdr();
        assert_eq!(g.len(), 4);
        // All four in the bucket of 2^44 - 1, whose lowest value is within 1/1024 below it.
        let lo = (HIST_MAX_TICKS - 1) as f64 * (1.0 - 1.0 / 1024.0);
        assert!(g.min() as f64 >= lo, "min {} below {lo}", g.min());
        assert!(g.max() <= HIST_MAX_TICKS + (HIST_MAX_TICKS >> 10));
    }

    #[test]
    fn empty_and_single_value() {
        let h = new_hist();
        assert_eq!(summarize(&h, 1.0), Summary::default());
        let mut h = new_hist();
        h.record(1000).unwrap();
        let s = summarize(&h, 0.5);
        assert_eq!(s.count, 1);
        assert!((s.p50_ns - 500.0).abs() <= 1.0);
        assert_eq!(s.min_ns, s.max_ns);
    }

    #[test]
    fn zero_and_huge_values_are_kept_or_clamped() {
        let mut h = new_hist();
        h.record(0).unwrap();
        h.record(HIST_MAX_TICKS).unwrap();
        assert_eq!(h.len(), 2);
        assert!(h.max() >= HIST_MAX_TICKS);
        // Merging grows the range too.
        let mut m = new_hist();
        m.add(&h).unwrap();
        assert_eq!((m.len(), m.max()), (2, h.max()));
    }

    #[test]
    fn percentiles_of_uniform_values_within_precision() {
        let mut h = new_hist();
        for v in 1..=100_000u64 {
            h.record(v).unwrap();
        }
        let s = summarize(&h, 1.0);
        assert!((s.p50_ns / 50_000.0 - 1.0).abs() < 0.002);
        assert!((s.p99_ns / 99_000.0 - 1.0).abs() < 0.002);
        assert!((s.mean_ns / 50_000.5 - 1.0).abs() < 0.002);
    }

    #[test]
    fn one_runs_histogram_merged_alone_gives_its_own_percentiles() {
        let mut h = new_hist();
        for v in 0..20_000u64 {
            // Ticks of 0.476 ns, as this machine's TSC: a narrow peak and a long tail.
            h.record(280 + v % 7 + if v % 100 == 0 { v } else { 0 })
                .unwrap();
        }
        // Outside a fleet's run the histogram is not kept.
        assert!(summarize(&h, 0.476).hist_ns.is_empty());
        let s = summarize_keeping(&h, 0.476, true);
        assert_eq!(s.hist_ns.iter().map(|b| b.1).sum::<u64>(), 20_000);
        let m = summarize(&merge_ns([s.hist_ns.as_slice()]), 0.1);
        for (a, b) in [
            (s.p50_ns, m.p50_ns),
            (s.p99_ns, m.p99_ns),
            (s.max_ns, m.max_ns),
        ] {
            assert!((a - b).abs() <= a * 0.001 + 0.1, "{a} against {b} merged");
        }
        assert_eq!(m.count, s.count);
        // In the JSON: one string, read back the same.
        let json = serde_json::to_value(&s).unwrap();
        assert!(json["hist_ns"].as_str().unwrap().contains(':'));
        let back: Summary = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(back.hist_ns, s.hist_ns);
        let mut bad = json;
        bad["hist_ns"] = "12.5:3 x:1".into();
        let e = serde_json::from_value::<Summary>(bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("'x:1' is not VALUE:COUNT"), "{e}");
        // The list of pairs of the first results with the field is read too.
        let mut pairs = serde_json::to_value(&s).unwrap();
        pairs["hist_ns"] = serde_json::json!([[133.3, 2], [140.0, 1]]);
        let p: Summary = serde_json::from_value(pairs).unwrap();
        assert_eq!(p.hist_ns, vec![(133.3, 2), (140.0, 1)]);
    }

    #[test]
    fn buckets_hold_every_value_once_in_order() {
        let mut h = new_hist();
        for v in [1u64, 2, 3, 100, 101, 5000, 5000, 1 << 30] {
            h.record(v).unwrap();
        }
        let s = summarize(&h, 0.5);
        assert_eq!(s.buckets.iter().map(|b| b.1).sum::<u64>(), 8);
        assert!(s.buckets.windows(2).all(|w| w[0].0 < w[1].0));
        // The largest value (2^30 ticks = 2^29 ns) is in the last bucket, whose bound is not below it.
        assert!(s.buckets.last().unwrap().0 >= (1u64 << 29) as f64);
    }
}

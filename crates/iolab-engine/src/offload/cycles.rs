//! The offload client's own timing: it reads the cycle counter (RDTSC on x86_64) around each request and
//! each round trip and records the differences into a fixed-size area of the shared region, which iolab
//! reads after the client is done.
//!
//! The writer ([`CycleWriter`]) needs only a pointer to the area and a cycle-read function, so any client
//! can use it however it was started: the forked, seccomp-filtered client here, or a client in a guest
//! that sees the same region through ivshmem. It allocates nothing, takes no lock and makes no system
//! call. The reader ([`read`]) turns the area into figures: count, mean, p50, p99, min and max, in cycles
//! and (through the clock's calibration, when iolab's clock is the same counter) in ns.
//!
//! # The area (`shm::Layout::cycles_off`, [`AREA_BYTES`] bytes, page aligned)
//!
//! Every field is a little-endian (native) `u64`, written by the client only (plain stores, no read-modify-
//! write on the bus), read by iolab once the client has said it is done:
//!
//! | word | field |
//! |---|---|
//! | 0 | magic [`MAGIC`] ("IOLCYC01"): the writer initialised the area |
//! | 1 | flags: bit 0 = a cycle counter was read ([`FLAG_COUNTER`]); 0 = none on this target, nothing recorded |
//! | 2 | [`SUB_BITS`] (7): the histograms' sub-bucket bits |
//! | 3 | reserved, 0 |
//! | 4 .. 4 + H | histogram 0: **requests** (each request: from the start of its round trip to the moment the client saw its completion) |
//! | 4 + H .. 4 + 2H | histogram 1: **round trips** (each batch: from before its first request was written to after its last completion was seen) |
//! | 4 + 2H .. 4 + 3H | histogram 2: **clock reads** (before its first round trip, [`CLOCK_READS`] pairs of back-to-back counter reads: the second minus the first, the offload thesis's Figure 4.1 measure) |
//!
//! A histogram is H = 4 + [`BUCKETS`] words: count, sum (wrapping), min, max, then the bucket counts.
//! Buckets are log-linear (HdrHistogram's layout): values below 2^8 have a bucket each; above, a value
//! keeps its leading one and the 7 bits below it, 128 buckets per power of two (bucket index:
//! `shift * 128 + (v >> shift)`, `shift` = bit length - 8), so a percentile read from a bucket's lowest
//! value is within 1/128 (0.8%) of the value. 7,424 buckets cover every u64.
//!
//! Why a histogram and not raw samples: its size is fixed whatever --ops or --duration (1M raw samples
//! would take 8 MB of shared memory, and a duration run has no bound at all), recording is O(1) without a
//! branch on a full buffer, and percentiles are exact to 0.8%, well inside the run-to-run noise; the exact
//! mean comes from the sum.

pub use crate::measure::client_cycles::{ClientCycles, CycleDist};
use crate::measure::clock::{ClockInfo, ClockKind};
use std::sync::atomic::{AtomicU64, Ordering};

/// "IOLCYC01" as a little-endian u64.
pub const MAGIC: u64 = u64::from_le_bytes(*b"IOLCYC01");
/// Flags bit 0: the writer had a cycle counter.
pub const FLAG_COUNTER: u64 = 1;
/// Sub-bucket bits: 128 linear buckets per power of two.
pub const SUB_BITS: u32 = 7;
const SUB: usize = 1 << SUB_BITS;
/// Buckets per histogram: exact below 2^8, then 128 per power of two up to 2^64 (7,424).
pub const BUCKETS: usize = (64 - SUB_BITS as usize + 1) * SUB;
/// Bytes of the area (page-rounded by `shm::Layout`).
pub const AREA_BYTES: usize = std::mem::size_of::<Area>();
/// Back-to-back counter read pairs the client times before its workload.
pub const CLOCK_READS: u32 = 1000;

/// A histogram as laid out in the area.
#[repr(C)]
pub struct HistArea {
    pub count: AtomicU64,
    pub sum: AtomicU64,
    pub min: AtomicU64,
    pub max: AtomicU64,
    pub buckets: [AtomicU64; BUCKETS],
}

/// The area (all-zero bytes are a valid, empty area: magic 0 means "never written").
#[repr(C)]
pub struct Area {
    pub magic: AtomicU64,
    pub flags: AtomicU64,
    pub sub_bits: AtomicU64,
    pub reserved: AtomicU64,
    pub requests: HistArea,
    pub round_trips: HistArea,
    pub clock_reads: HistArea,
}

/// The bucket of `v`: `v` itself below 2^(SUB_BITS + 1); above, with `shift` = the bits of `v` beyond
/// SUB_BITS + 1, `shift * 2^SUB_BITS + (v >> shift)` (`v >> shift` keeps the leading one and SUB_BITS bits
/// below it, so it lies in [2^SUB_BITS, 2^(SUB_BITS + 1)) and the indices follow on without a gap).
#[inline(always)]
fn index(v: u64) -> usize {
    let bits = 64 - v.leading_zeros();
    let shift = bits.saturating_sub(SUB_BITS + 1);
    ((shift as usize) << SUB_BITS) + (v >> shift) as usize
}

/// The lowest value of bucket `i`.
fn value_of(i: usize) -> u64 {
    if i < 2 * SUB {
        return i as u64;
    }
    let shift = (i >> SUB_BITS) - 1;
    ((i - (shift << SUB_BITS)) as u64) << shift
}

impl HistArea {
    #[inline(always)]
    fn record(&self, v: u64) {
        // The client is the only writer: a load and a store, no locked instruction.
        let add = |a: &AtomicU64, d: u64| {
            a.store(a.load(Ordering::Relaxed).wrapping_add(d), Ordering::Relaxed)
        };
        let n = self.count.load(Ordering::Relaxed);
        add(&self.buckets[index(v)], 1);
        add(&self.sum, v);
        if n == 0 || v < self.min.load(Ordering::Relaxed) {
            self.min.store(v, Ordering::Relaxed);
        }
        if v > self.max.load(Ordering::Relaxed) {
            self.max.store(v, Ordering::Relaxed);
        }
        self.count.store(n + 1, Ordering::Relaxed);
    }

    fn clear(&self) {
        for w in [&self.count, &self.sum, &self.min, &self.max]
            .into_iter()
            .chain(self.buckets.iter())
        {
            w.store(0, Ordering::Relaxed);
        }
    }
}

/// The client's recorder.
#[derive(Clone, Copy)]
pub struct CycleWriter {
    area: *const Area,
    read: Option<fn() -> u64>,
}

impl CycleWriter {
    /// Clears the area, writes its header and returns a writer into it. `read` is the cycle counter
    /// (`None`: the target has none; the header says so and nothing is recorded).
    ///
    /// # Safety
    /// `area` must point to [`AREA_BYTES`] bytes, 8-byte aligned, that stay mapped for as long as the
    /// writer is used, and that no one else writes meanwhile.
    pub unsafe fn new(area: *mut u8, read: Option<fn() -> u64>) -> CycleWriter {
        let area = area as *const Area;
        // SAFETY: the caller's contract: a live, aligned Area (every bit pattern of atomics is valid).
        let a = unsafe { &*area };
        a.magic.store(0, Ordering::Relaxed);
        a.requests.clear();
        a.round_trips.clear();
        a.clock_reads.clear();
        a.sub_bits.store(u64::from(SUB_BITS), Ordering::Relaxed);
        a.reserved.store(0, Ordering::Relaxed);
        a.flags.store(
            if read.is_some() { FLAG_COUNTER } else { 0 },
            Ordering::Relaxed,
        );
        a.magic.store(MAGIC, Ordering::Release);
        CycleWriter { area, read }
    }

    fn area(&self) -> &Area {
        // SAFETY: `new`'s contract keeps the area mapped while the writer is used.
        unsafe { &*self.area }
    }

    /// The cycle counter now (0 without one).
    #[inline(always)]
    pub fn now(&self) -> u64 {
        match self.read {
            Some(f) => f(),
            None => 0,
        }
    }

    /// Is there a counter (is anything recorded)?
    pub fn counting(&self) -> bool {
        self.read.is_some()
    }

    /// One request: `cycles` from its round trip's start to its completion.
    #[inline(always)]
    pub fn request(&self, cycles: u64) {
        if self.read.is_some() {
            self.area().requests.record(cycles);
        }
    }

    /// The cost of one counter read inside the client: [`CLOCK_READS`] pairs of reads back to back, each
    /// pair's difference recorded (outside any round trip; the outside wall clock counts them, a few µs).
    #[inline(never)]
    pub fn time_clock_reads(&self) {
        if let Some(read) = self.read {
            for _ in 0..CLOCK_READS {
                let a = read();
                let b = read();
                self.area().clock_reads.record(b.wrapping_sub(a));
            }
        }
    }

    /// One round trip: `cycles` from before its first request to after its last completion.
    #[inline(always)]
    pub fn round_trip(&self, cycles: u64) {
        if self.read.is_some() {
            self.area().round_trips.record(cycles);
        }
    }
}

/// The cycle counter of this build target, for the client: RDTSC on x86_64; `None` elsewhere (the
/// figures then say the client had no counter). ARM's generic timer is not a cycle counter (it ticks at
/// tens of MHz beside a GHz core), so its ticks would not compare with the thesis's cycles.
pub fn counter() -> Option<fn() -> u64> {
    #[cfg(target_arch = "x86_64")]
    {
        Some(iolab_sys::rdtsc as fn() -> u64)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// The `q`-quantile of a histogram (the lowest value of the bucket that holds it, clamped to min..max).
fn quantile(h: &HistArea, q: f64) -> u64 {
    let n = h.count.load(Ordering::Relaxed);
    if n == 0 {
        return 0;
    }
    let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
    let mut seen = 0u64;
    for (i, b) in h.buckets.iter().enumerate() {
        seen += b.load(Ordering::Relaxed);
        if seen >= rank {
            let (lo, hi) = (h.min.load(Ordering::Relaxed), h.max.load(Ordering::Relaxed));
            return value_of(i).clamp(lo, hi);
        }
    }
    h.max.load(Ordering::Relaxed)
}

fn dist(h: &HistArea, ns_per_cycle: Option<f64>) -> CycleDist {
    let count = h.count.load(Ordering::Relaxed);
    let mean = if count > 0 {
        h.sum.load(Ordering::Relaxed) as f64 / count as f64
    } else {
        0.0
    };
    let (p50, p99) = (quantile(h, 0.5), quantile(h, 0.99));
    let (lo, hi) = (h.min.load(Ordering::Relaxed), h.max.load(Ordering::Relaxed));
    let buckets: Vec<(f64, u64)> = h
        .buckets
        .iter()
        .enumerate()
        .map(|(i, b)| (b.load(Ordering::Relaxed), i))
        .filter(|(n, _)| *n > 0)
        .map(|(n, i)| {
            let top = if i + 1 < BUCKETS {
                value_of(i + 1).saturating_sub(1)
            } else {
                u64::MAX
            };
            let mid = (value_of(i).clamp(lo, hi) as f64 + top.clamp(lo, hi) as f64) / 2.0;
            (mid, n)
        })
        .collect();
    CycleDist {
        count,
        mean_cycles: mean,
        trimmed_mean_cycles: trimmed_mean(&buckets, 3.0),
        p50_cycles: p50,
        p99_cycles: p99,
        min_cycles: h.min.load(Ordering::Relaxed),
        max_cycles: h.max.load(Ordering::Relaxed),
        mean_ns: ns_per_cycle.map(|k| mean * k),
        p50_ns: ns_per_cycle.map(|k| p50 as f64 * k),
        p99_ns: ns_per_cycle.map(|k| p99 as f64 * k),
    }
}

/// The mean of the values within `k` standard deviations of the mean, from (value, count) pairs (None
/// when there are none).
pub fn trimmed_mean(values: &[(f64, u64)], k: f64) -> Option<f64> {
    let n: f64 = values.iter().map(|(_, c)| *c as f64).sum();
    if n == 0.0 {
        return None;
    }
    let mean = values.iter().map(|(v, c)| v * *c as f64).sum::<f64>() / n;
    let var = values
        .iter()
        .map(|(v, c)| (v - mean).powi(2) * *c as f64)
        .sum::<f64>()
        / n;
    let sd = var.sqrt();
    let kept: Vec<&(f64, u64)> = values
        .iter()
        .filter(|(v, _)| (v - mean).abs() <= k * sd)
        .collect();
    let m: f64 = kept.iter().map(|(_, c)| *c as f64).sum();
    (m > 0.0).then(|| kept.iter().map(|(v, c)| v * *c as f64).sum::<f64>() / m)
}

/// The client's figures from its area, or why there are none. `clock` converts cycles to ns when it is
/// the TSC (the counter the client read); `batch`: requests per round trip.
pub fn read(area: &Area, clock: &ClockInfo, batch: u32) -> Result<ClientCycles, String> {
    if area.magic.load(Ordering::Acquire) != MAGIC {
        return Err(
            "the client did not initialise its cycle area (it never reached its workload)".into(),
        );
    }
    if area.flags.load(Ordering::Relaxed) & FLAG_COUNTER == 0 {
        return Err("the client has no cycle counter on this CPU architecture: it is timed from outside only".into());
    }
    if area.sub_bits.load(Ordering::Relaxed) != u64::from(SUB_BITS) {
        return Err("the cycle area was written with another bucket layout".into());
    }
    let ns_per_cycle =
        matches!(clock.kind, ClockKind::Tsc | ClockKind::Cntvct).then_some(clock.ns_per_tick);
    let requests = dist(&area.requests, ns_per_cycle);
    let round_trips = dist(&area.round_trips, ns_per_cycle);
    let clock_read = Some(dist(&area.clock_reads, ns_per_cycle)).filter(|d| d.count > 0);
    let per_request_cycles = round_trips.mean_cycles / f64::from(batch.max(1));
    Ok(ClientCycles {
        counter: format!(
            "{} read by the client itself around each request and round trip{}",
            if cfg!(target_arch = "aarch64") {
                "CNTVCT_EL0"
            } else {
                "RDTSC"
            },
            match ns_per_cycle {
                Some(_) => format!(
                    " (ns through iolab's calibration of that counter, {:.3} GHz)",
                    clock.hz * 1e-9
                ),
                None => " (iolab's clock is not the cycle counter here: no ns)".to_string(),
            }
        ),
        ns_per_cycle,
        batch,
        per_request_ns: ns_per_cycle.map(|k| per_request_cycles * k),
        requests,
        round_trips,
        clock_read,
        per_request_cycles,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area() -> Box<Area> {
        // SAFETY: all-zero bytes are a valid Area (atomics); the layout is that of Area.
        unsafe { Box::<Area>::new_zeroed().assume_init() }
    }

    #[test]
    fn the_trimmed_mean_drops_what_lies_beyond_three_deviations() {
        // The thesis's case: round trips of a few thousand cycles and rare stalls of millions. The plain
        // mean follows the stalls; the trimmed one (the thesis's statistic) does not.
        let v = [(2_000.0, 990), (3_000.0, 9), (5_000_000.0, 1)];
        let plain = v.iter().map(|(x, c)| x * *c as f64).sum::<f64>() / 1000.0;
        assert!(plain > 6_000.0, "{plain}");
        let t = trimmed_mean(&v, 3.0).unwrap();
        assert!(
            (t - (2_000.0 * 990.0 + 3_000.0 * 9.0) / 999.0).abs() < 1e-6,
            "{t}"
        );
        assert_eq!(trimmed_mean(&[], 3.0), None);
        // From the client's own histogram: the stall is dropped there too.
        let a = area();
        for _ in 0..990 {
            a.round_trips.record(2_000);
        }
        a.round_trips.record(5_000_000);
        let d = dist(&a.round_trips, None);
        let t = d.trimmed_mean_cycles.unwrap();
        assert!((t - 2_000.0).abs() < 2_000.0 / 128.0, "{t}");
        assert!(d.mean_cycles > 6_000.0);
    }

    fn fake_counter() -> u64 {
        static T: AtomicU64 = AtomicU64::new(0);
        T.fetch_add(100, Ordering::Relaxed)
    }

    #[test]
    fn buckets_keep_values_within_one_128th() {
        for v in [0u64, 1, 127, 128, 129, 4_170, 487_894, 1 << 40, u64::MAX] {
            let lo = value_of(index(v));
            assert!(lo <= v, "{v}: bucket starts at {lo}");
            assert!(
                (v - lo) as f64 <= v as f64 / 128.0,
                "{v}: bucket starts at {lo}"
            );
        }
        assert!(index(u64::MAX) < BUCKETS);
        // Consecutive buckets' lowest values increase.
        for i in 1..BUCKETS {
            assert!(value_of(i) > value_of(i - 1), "bucket {i}");
        }
    }

    #[test]
    fn writer_and_reader_agree_on_counts_and_percentiles() {
        let mut a = area();
        // SAFETY: a live, aligned Area of our own.
        let w = unsafe { CycleWriter::new(&mut *a as *mut Area as *mut u8, Some(fake_counter)) };
        let t0 = w.now();
        assert_eq!(w.now() - t0, 100);
        for v in 1..=1000u64 {
            w.request(v * 10);
        }
        for v in 1..=10u64 {
            w.round_trip(v * 1000);
        }
        // Each pair of back-to-back reads of the counter (which steps by 100 a read) differs by 100.
        w.time_clock_reads();
        let c = read(&a, &ClockInfo::mock(), 100).expect("written");
        let clk = c.clock_read.as_ref().expect("clock reads recorded");
        assert_eq!(clk.count, u64::from(CLOCK_READS));
        assert_eq!(clk.p50_cycles, 100);
        assert_eq!(c.requests.count, 1000);
        assert_eq!(c.round_trips.count, 10);
        assert!(c.requests.p50_cycles > 0 && c.requests.p50_cycles <= c.requests.p99_cycles);
        assert!((c.requests.p50_cycles as f64 - 5000.0).abs() <= 5000.0 / 128.0);
        assert!((c.requests.p99_cycles as f64 - 9900.0).abs() <= 9900.0 / 128.0);
        assert_eq!(c.requests.min_cycles, 10);
        assert_eq!(c.requests.max_cycles, 10_000);
        assert_eq!(c.requests.mean_cycles, 5005.0);
        assert_eq!(c.per_request_cycles, 5500.0 / 100.0);
        // The mock clock is not the TSC: no ns.
        assert_eq!(c.requests.mean_ns, None);
    }

    #[test]
    fn an_area_without_counter_or_never_written_says_why() {
        let mut a = area();
        let clock = ClockInfo::mock();
        assert!(read(&a, &clock, 1)
            .unwrap_err()
            .contains("did not initialise"));
        // SAFETY: as above.
        let w = unsafe { CycleWriter::new(&mut *a as *mut Area as *mut u8, None) };
        w.request(5);
        assert_eq!(w.now(), 0);
        assert!(read(&a, &clock, 1)
            .unwrap_err()
            .contains("no cycle counter"));
        assert_eq!(a.requests.count.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_new_writer_clears_what_an_earlier_run_left() {
        let mut a = area();
        let p = &mut *a as *mut Area as *mut u8;
        // SAFETY: as above.
        let w = unsafe { CycleWriter::new(p, Some(fake_counter)) };
        w.request(7);
        // SAFETY: as above.
        let _w2 = unsafe { CycleWriter::new(p, Some(fake_counter)) };
        assert_eq!(read(&a, &ClockInfo::mock(), 1).unwrap().requests.count, 0);
    }
}

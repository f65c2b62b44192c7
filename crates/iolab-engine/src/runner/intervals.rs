//! The timed pass over time (`--log-interval MS`, the result's `intervals`), recorded without a thread
//! of its own and without work per op.
//!
//! The loops already read the clock after every completion and compare it with the deadline; they
//! compare it instead with the earlier of the deadline and the end of the current interval, so an op
//! costs what it did. At the first completion at or past an interval's end the worker closes the
//! interval ([`IntervalLog::close`], out of line): it moves the latencies recorded since the last close
//! out of the loop's histogram into the run's total (one read of the 544 KiB table), keeps
//! them as a coarse histogram (32 buckets per power of two) with the interval's op count, start and end,
//! and reads the clock again, so that the close is in no op's latency (the asynchronous loop moves the
//! start of every request in flight and of the last round by the time it took). At the end of the loop
//! the last interval closes at the thread's last completion and final flush, and the loop's histogram
//! holds the whole run again.
//!
//! Intervals are numbered by the window of `every` ticks after the thread's first op in which they end
//! (an interval closed by crossing the boundary of window k is number k - 1; a thread that completes
//! nothing for longer than an interval gives one long interval). After the run the threads' intervals of
//! the same number are added up ([`merge`]). A thread keeps at most [`MAX_INTERVALS`]: at that number it
//! merges them in pairs and its interval doubles (every thread at the same number, so they stay aligned).

use crate::error::Result;
use crate::measure::hist::FastHist;

/// The coarse histogram of an interval: exact below 2^6 ticks, then 32 buckets per power of two (each
/// within 1/32 of its values; read at its middle, within 1/64).
pub(super) const C_BITS: u32 = 6;
pub(super) const C_SUB: usize = 1 << C_BITS;
pub(super) const C_LEN: usize = (64 - C_BITS as usize + 1) * C_SUB;
/// Intervals a thread keeps before it merges them in pairs (a 1 s interval doubles after 34 minutes).
pub(super) const MAX_INTERVALS: u64 = 2048;
/// A packed (bucket, count) pair: the bucket above this many bits, the count below.
pub(super) const COUNT_BITS: u32 = 48;

pub(super) fn coarse_index(v: u64) -> usize {
    let bits = 64 - v.leading_zeros();
    let shift = bits.saturating_sub(C_BITS);
    ((shift as usize) << C_BITS) + ((v >> shift) as usize & (C_SUB - 1))
}

/// The middle of coarse bucket `i`, in ticks.
pub(super) fn coarse_mid(i: usize) -> f64 {
    let shift = (i >> C_BITS) as u32;
    let lo = ((i & (C_SUB - 1)) as u64) << shift;
    lo as f64 + ((1u64 << shift) - 1) as f64 / 2.0
}

/// One thread's closed interval.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Closed {
    /// Its number (see the module's doc).
    pub(super) slot: u64,
    /// Ticks: the previous close (or the first op's start) and this one.
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) ops: u64,
    /// With `--bs-split`: the bytes of its ops, filled in after the run (drawn.rs); 0 otherwise.
    pub(super) bytes: u64,
    /// The largest latency, in ticks (its fine bucket's lowest value).
    pub(super) max: u64,
    /// Packed (coarse bucket << COUNT_BITS | count), in bucket order.
    pub(super) hist: Vec<u64>,
}

impl Closed {
    /// Adds the later interval `b` of the same number to this one.
    fn absorb(&mut self, b: Closed) {
        self.end = b.end;
        self.ops += b.ops;
        self.bytes += b.bytes;
        self.max = self.max.max(b.max);
        let mut dense = std::collections::BTreeMap::new();
        for p in self.hist.iter().chain(&b.hist) {
            *dense.entry(p >> COUNT_BITS).or_insert(0u64) += p & ((1 << COUNT_BITS) - 1);
        }
        self.hist = dense
            .into_iter()
            .map(|(i, c)| (i << COUNT_BITS) | c)
            .collect();
    }
}

/// Merges intervals in pairs (numbers k and k+1 for even k become k/2).
pub(super) fn halve(closed: Vec<Closed>) -> Vec<Closed> {
    let mut out: Vec<Closed> = Vec::with_capacity(closed.len() / 2 + 1);
    for c in closed {
        let slot = c.slot / 2;
        match out.last_mut() {
            Some(last) if last.slot == slot => last.absorb(c),
            _ => out.push(Closed { slot, ..c }),
        }
    }
    out
}

/// One worker's intervals, and the state of the current one.
pub(super) struct IntervalLog {
    /// Ticks per interval; 0: no intervals.
    pub(super) every: u64,
    /// The tick at which the current interval ends (u64::MAX: never).
    pub(super) next: u64,
    /// The thread's first op start.
    pub(super) first: u64,
    /// Where the current interval started, and the ops done before it.
    pub(super) start: u64,
    pub(super) ops_before: u64,
    /// The latencies of the intervals closed so far (the loop's histogram holds the current one's).
    pub(super) total: FastHist,
    /// Scratch: the coarse histogram being filled at a close.
    pub(super) coarse: Box<[u64]>,
    pub(super) closed: Vec<Closed>,
}

impl IntervalLog {
    /// No intervals: nothing allocated, and the boundary never comes.
    pub(super) fn off() -> IntervalLog {
        IntervalLog {
            every: 0,
            next: u64::MAX,
            first: 0,
            start: 0,
            ops_before: 0,
            total: FastHist::empty(),
            coarse: Box::default(),
            closed: Vec::new(),
        }
    }

    /// Intervals of `every` ticks, room for `expect` of them made now (before the timed span).
    pub(super) fn new(every: u64, expect: u64) -> Result<IntervalLog> {
        Ok(IntervalLog {
            every,
            total: FastHist::try_new()?,
            coarse: vec![0u64; C_LEN].into_boxed_slice(),
            closed: Vec::with_capacity(expect.min(MAX_INTERVALS) as usize + 1),
            ..IntervalLog::off()
        })
    }

    /// The thread's first op starts at tick `t`.
    #[inline(always)]
    pub(super) fn begin(&mut self, t: u64) {
        if self.every > 0 {
            (self.first, self.start) = (t, t);
            self.next = t.saturating_add(self.every);
        }
    }

    /// The completion at tick `at` (`done` ops so far, its own recorded in `lat`) is at or past the
    /// interval's end: closes the interval and sets the next boundary.
    #[cold]
    #[inline(never)]
    pub(super) fn close(&mut self, lat: &mut FastHist, at: u64, done: u64) {
        let windows = (at - self.first) / self.every;
        self.push(lat, windows.saturating_sub(1), at, done);
        if windows + 1 >= MAX_INTERVALS {
            self.closed = halve(std::mem::take(&mut self.closed));
            self.every = self.every.saturating_mul(2);
        }
        let windows = (at - self.first) / self.every;
        self.next = self
            .first
            .saturating_add((windows + 1).saturating_mul(self.every));
    }

    fn push(&mut self, lat: &mut FastHist, slot: u64, at: u64, done: u64) {
        let coarse = &mut self.coarse;
        let mut max = 0u64;
        lat.move_into(&mut self.total, |v, c| {
            coarse[coarse_index(v)] += c;
            max = v;
        });
        let hist = coarse
            .iter_mut()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, c)| ((i as u64) << COUNT_BITS) | std::mem::take(c))
            .collect();
        let c = Closed {
            slot,
            start: self.start,
            end: at,
            ops: done - self.ops_before,
            bytes: 0,
            max,
            hist,
        };
        match self.closed.last_mut() {
            // Just after the interval doubled: the first half of the window is closed already.
            Some(last) if last.slot == slot => last.absorb(c),
            _ => self.closed.push(c),
        }
        (self.start, self.ops_before) = (at, done);
    }

    /// After the loop: the last interval closes at `t_last` (the thread's last completion and final
    /// flush; with no op since the last close, that interval is stretched to it), and `lat` holds the
    /// whole run's latencies again.
    pub(super) fn finish(&mut self, lat: &mut FastHist, t_last: u64, done: u64) {
        if self.every == 0 {
            return;
        }
        if done > self.ops_before {
            let slot = (t_last.max(self.first) - self.first) / self.every;
            self.push(lat, slot, t_last, done);
        } else {
            lat.move_into(&mut self.total, |_, _| {});
            if let Some(last) = self.closed.last_mut() {
                last.end = t_last;
            }
        }
        std::mem::swap(lat, &mut self.total);
    }
}

/// The values (ticks) at quantiles `qs` of the `n` counts in the coarse histogram `dense`, which is
/// left zeroed; zeros when it holds none.
pub(super) fn quantiles(dense: &mut [u64], n: u64, qs: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; qs.len()];
    let ranks: Vec<u64> = qs
        .iter()
        .map(|q| ((q * n as f64).ceil() as u64).max(1))
        .collect();
    let mut seen = 0u64;
    let mut k = 0;
    for (i, c) in dense.iter_mut().enumerate() {
        if *c == 0 {
            continue;
        }
        seen += std::mem::take(c);
        while k < ranks.len() && seen >= ranks[k] {
            out[k] = coarse_mid(i);
            k += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coarse_buckets_keep_values_within_their_precision() {
        for v in [
            0u64,
            1,
            63,
            64,
            65,
            100,
            1000,
            4097,
            123_456,
            9_999_999,
            1 << 40,
        ] {
            let mid = coarse_mid(coarse_index(v));
            assert!(
                (mid - v as f64).abs() <= v as f64 / 32.0 + 0.5,
                "{v} -> {mid}"
            );
        }
        assert!(coarse_index(u64::MAX) < C_LEN);
    }

    /// A log of `every` ticks fed completions at the ticks given (latency 10 ticks each).
    fn fed(every: u64, ticks: &[u64]) -> (IntervalLog, FastHist) {
        let mut log = IntervalLog::new(every, 4).unwrap();
        let mut lat = FastHist::try_new().unwrap();
        log.begin(0);
        for (n, &t) in ticks.iter().enumerate() {
            lat.record(10 + n as u64 % 3);
            if t >= log.next {
                log.close(&mut lat, t, n as u64 + 1);
            }
        }
        let last = *ticks.last().unwrap();
        log.finish(&mut lat, last + 5, ticks.len() as u64);
        (log, lat)
    }

    #[test]
    fn intervals_split_the_ops_and_the_whole_histogram_comes_back() {
        let ticks: Vec<u64> = (1..=35).map(|i| i * 10).collect();
        let (log, lat) = fed(100, &ticks);
        let ops: Vec<u64> = log.closed.iter().map(|c| c.ops).collect();
        // Completions at 100, 200, 300 close intervals (each ends with the crossing op), then the rest.
        assert_eq!(ops, vec![10, 10, 10, 5]);
        let slots: Vec<u64> = log.closed.iter().map(|c| c.slot).collect();
        assert_eq!(slots, vec![0, 1, 2, 3]);
        assert_eq!(log.closed.last().unwrap().end, 355);
        assert_eq!(lat.into_hdr().len(), 35);
        assert!(log.closed.windows(2).all(|w| w[0].end == w[1].start));
    }

    #[test]
    fn a_stall_gives_one_long_interval_and_numbers_stay_on_time() {
        // Nothing completes between 120 and 450: the completion at 450 closes one interval.
        let (log, _) = fed(100, &[50, 100, 120, 450, 460, 520]);
        let got: Vec<(u64, u64)> = log.closed.iter().map(|c| (c.slot, c.ops)).collect();
        assert_eq!(got, vec![(0, 2), (3, 2), (4, 2)]);
    }

    #[test]
    fn many_intervals_merge_in_pairs() {
        let n = MAX_INTERVALS + 10;
        let ticks: Vec<u64> = (1..=n * 2).map(|i| i * 5).collect();
        let (log, _) = fed(10, &ticks);
        assert_eq!(log.every, 20);
        assert!((log.closed.len() as u64) < MAX_INTERVALS);
        assert_eq!(
            log.closed.iter().map(|c| c.ops).sum::<u64>(),
            ticks.len() as u64
        );
        assert!(log.closed.windows(2).all(|w| w[0].slot < w[1].slot));
    }

    #[test]
    fn quantiles_read_the_coarse_histogram() {
        let mut d = vec![0u64; C_LEN];
        d[coarse_index(10)] = 50;
        d[coarse_index(20)] = 49;
        d[coarse_index(5000)] = 1;
        let q = quantiles(&mut d, 100, &[0.5, 0.99, 1.0]);
        assert_eq!(q[0], 10.0);
        assert_eq!(q[1], 20.0);
        assert!((q[2] - 5000.0).abs() <= 5000.0 / 32.0, "{}", q[2]);
        assert!(d.iter().all(|c| *c == 0));
    }
}

//! `--memory-limit` over time: a thread of iolab's reads the run's memory cgroup every 100 ms of the timed
//! pass (its page cache, the times it hit its limit, and the pages reclaim took), so the cliff buffered
//! I/O falls off when the page cache reaches the limit is drawn, not averaged away. Reading the two small
//! files takes about 20 µs; the thread sleeps in between.

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The sampling period.
pub const PERIOD_MS: u64 = 100;

/// One reading, `t_s` seconds after the timed span started; the counts are since then.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct MemPoint {
    pub t_s: f64,
    /// Page cache charged to the cgroup, bytes.
    pub page_cache: u64,
    /// Times the cgroup hit its limit since the start.
    pub limit_hits: u64,
    /// Pages reclaim took since the start (see `MemoryLimit::reclaim_scope`).
    pub reclaimed_pages: u64,
}

/// What one reading returns: (page cache, limit hits, reclaimed pages), all absolute.
pub type Reader = Box<dyn Fn() -> (u64, u64, u64) + Send>;

/// The running sampler.
pub struct MemWatch {
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<Vec<MemPoint>>>,
}

impl MemWatch {
    /// Starts sampling with `read` (none when the thread cannot be made: the run goes on without).
    pub fn start(read: Reader) -> Option<MemWatch> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("iolab-memwatch".into())
            .spawn(move || sample(&*read, &flag))
            .ok()?;
        Some(MemWatch {
            stop,
            handle: Some(handle),
        })
    }

    /// Stops it and returns its readings.
    pub fn finish(mut self) -> Vec<MemPoint> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for MemWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn sample(read: &dyn Fn() -> (u64, u64, u64), stop: &AtomicBool) -> Vec<MemPoint> {
    let t0 = std::time::Instant::now();
    let (_, h0, r0) = read();
    let mut points = Vec::new();
    let mut next = std::time::Duration::ZERO;
    while !stop.load(Ordering::Relaxed) {
        let (page_cache, hits, reclaimed) = read();
        points.push(MemPoint {
            t_s: t0.elapsed().as_secs_f64(),
            page_cache,
            limit_hits: hits.saturating_sub(h0),
            reclaimed_pages: reclaimed.saturating_sub(r0),
        });
        next += std::time::Duration::from_millis(PERIOD_MS);
        // Short sleeps, so that the end of the pass is not kept waiting for a whole period.
        while !stop.load(Ordering::Relaxed) && t0.elapsed() < next {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn readings_come_every_period_as_counts_since_the_start() {
        let n = Arc::new(AtomicU64::new(10));
        let m = n.clone();
        let t = std::time::Instant::now();
        let w = MemWatch::start(Box::new(move || {
            let k = m.fetch_add(1, Ordering::Relaxed);
            (k << 20, k, 2 * k)
        }))
        .expect("a thread");
        std::thread::sleep(std::time::Duration::from_millis(350));
        let p = w.finish();
        let took = t.elapsed().as_secs_f64();
        // Never early (the k-th reading k periods after the start or later) and so at most one a period
        // over the time it ran; how many came is the scheduler's on a loaded machine (a late thread reads
        // at once to catch up, never more often).
        let period = PERIOD_MS as f64 / 1e3;
        assert!(
            !p.is_empty() && p.len() as f64 <= (took + 0.01) / period + 1.0,
            "{took} s: {p:?}"
        );
        for (k, q) in p.iter().enumerate() {
            assert!(
                q.t_s >= k as f64 * period - 1e-3,
                "reading {k} early: {p:?}"
            );
        }
        assert_eq!((p[0].limit_hits, p[0].reclaimed_pages), (1, 2));
        assert!(p
            .windows(2)
            .all(|w| w[1].t_s > w[0].t_s && w[1].page_cache > w[0].page_cache));
    }
}

//! fio's bandwidth and IOPS samples (`bw_*`, `iops_*`), from iolab's time series.
//!
//! fio takes one sample per job every 500 ms (`bwavgtime`, `iopsavgtime`): the rate over that window,
//! a whole number (KiB/s, IO/s), none for a window without IO in the direction and none for the last,
//! partial window. It writes their min, max, mean, sample standard deviation (n - 1) and count; with no
//! sample at all it writes zeros and a count of 0 (a 20 ms job), so the count says whether the others
//! mean anything. iolab's samples are its intervals (`RunResult::intervals`, `--log-interval`), of all
//! threads together: a clone's (or one direction's) are the intervals' rates times its share.

use iolab_engine::result::RunResult;

/// fio's figures of a series of samples.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stats {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    /// Sample standard deviation (n - 1); 0 with one sample, as fio.
    pub dev: f64,
    pub samples: u64,
}

/// fio's figures of `samples` (all zeros, count 0, without any).
pub fn stats(samples: &[u64]) -> Stats {
    let n = samples.len();
    if n == 0 {
        return Stats::default();
    }
    let mean = samples.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
    let dev = if n > 1 {
        let s: f64 = samples.iter().map(|&v| (v as f64 - mean).powi(2)).sum();
        (s / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    Stats {
        min: samples.iter().copied().min().unwrap_or(0),
        max: samples.iter().copied().max().unwrap_or(0),
        mean,
        dev,
        samples: n as u64,
    }
}

/// The rates of one window: (IO/s, bytes/s), all threads together.
pub type Window = (f64, f64);

/// The run's intervals that count as fio's samples: those with IO, at least half the interval asked
/// long (fio drops the last, partial window; iolab's last interval ends at the last op).
pub fn windows(r: &RunResult) -> Vec<Window> {
    let nominal_s = r.spec.log_interval().0 as f64 / 1e3;
    r.intervals
        .iter()
        .filter(|i| i.ops > 0 && i.end_s - i.start_s >= nominal_s / 2.0 && i.end_s > i.start_s)
        .map(|i| {
            let d = i.end_s - i.start_s;
            (i.ops as f64 / d, i.bytes as f64 / d)
        })
        .collect()
}

/// (iops, bw in KiB/s) figures of `windows` for a part holding `ops_share` of the ops and `bytes_share`
/// of the bytes: each window's rates times the shares, whole numbers as fio's.
pub fn of_part(windows: &[Window], ops_share: f64, bytes_share: f64) -> (Stats, Stats) {
    let take = |f: &dyn Fn(&Window) -> f64| -> Vec<u64> {
        windows
            .iter()
            .map(f)
            .filter(|v| *v >= 0.0)
            .map(|v| v.floor() as u64)
            .collect()
    };
    if ops_share <= 0.0 {
        return (Stats::default(), Stats::default());
    }
    let iops = take(&|w| w.0 * ops_share);
    let kib = take(&|w| w.1 * bytes_share / 1024.0);
    (stats(&iops), stats(&kib))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fios_figures_of_a_few_samples() {
        // 100, 200, 300: mean 200, sample variance (100^2 + 0 + 100^2) / 2 = 10,000, so 100.
        let s = stats(&[100, 200, 300]);
        assert_eq!((s.min, s.max, s.samples), (100, 300, 3));
        assert!((s.mean - 200.0).abs() < 1e-9 && (s.dev - 100.0).abs() < 1e-9);
        // One sample: fio's deviation of 0, with the count saying there was one.
        assert_eq!(stats(&[7]).dev, 0.0);
        assert_eq!(stats(&[7]).samples, 1);
        // None: zeros and a count of 0, as fio writes for a job shorter than its window.
        assert_eq!(stats(&[]), Stats::default());
    }

    #[test]
    fn a_parts_samples_are_its_share_of_each_window() {
        let w = [(1000.0, 4096.0 * 1000.0), (3000.0, 4096.0 * 3000.0)];
        let (iops, bw) = of_part(&w, 0.25, 0.25);
        assert_eq!((iops.min, iops.max, iops.samples), (250, 750, 2));
        assert_eq!((bw.min, bw.max), (1000, 3000));
        assert!(iops.dev > 0.0);
        let (none, _) = of_part(&w, 0.0, 0.0);
        assert_eq!(none.samples, 0);
    }
}

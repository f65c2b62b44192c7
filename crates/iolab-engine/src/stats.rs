//! Statistics over repeated figures, in one place: every table, finding, report and comparison takes
//! its medians, ranges and spreads from here.

use serde::Serialize;

/// Median, min, max and (population) standard deviation of one figure over repeated runs.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Stat {
    pub n: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub stdev: f64,
    /// (max - min) / median, in percent (0 for one run).
    pub spread_pct: f64,
}

pub fn stat(xs: &[f64]) -> Option<Stat> {
    if xs.is_empty() {
        return None;
    }
    let mut s = xs.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    let median = if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    };
    let mean = s.iter().sum::<f64>() / n as f64;
    let var = s.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
    let (min, max) = (s[0], s[n - 1]);
    Some(Stat {
        n,
        median,
        min,
        max,
        stdev: var.sqrt(),
        spread_pct: if median != 0.0 {
            (max - min) / median.abs() * 100.0
        } else {
            0.0
        },
    })
}

/// The median of `xs` (None when empty).
pub fn median(xs: &[f64]) -> Option<f64> {
    stat(xs).map(|s| s.median)
}

/// The range of the middle rounds: the fastest and slowest quarter dropped (with 5 rounds the middle three,
/// with 3 or fewer all of them), so one disturbed round does not make a tie by itself.
pub fn middle_range(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    let q = v.len() / 4;
    (v[q], v[v.len() - 1 - q])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[]), None);
        let s = stat(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!((s.min, s.max, s.n), (1.0, 3.0, 3));
        assert!((s.spread_pct - 100.0).abs() < 1e-9);
    }

    #[test]
    fn the_middle_range_drops_a_quarter_at_each_end() {
        assert_eq!(middle_range(vec![5.0, 1.0, 3.0, 2.0, 4.0]), (2.0, 4.0));
        assert_eq!(middle_range(vec![2.0, 1.0, 3.0]), (1.0, 3.0));
    }
}

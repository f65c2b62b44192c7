//! Whether two rows of a ranking differ, from their paired rounds: in every round both ran, the ratio of
//! the first's time to the second's. The median of those ratios has a distribution-free interval from
//! their order statistics (the sign test inverted): with n rounds, the k-th smallest to the k-th largest
//! ratio covers the median with probability 1 - 2 P(Binomial(n, 1/2) < k). The pair is *separated* where
//! the interval of [`COVERAGE`] excludes 1, *tied* where the interval of [`TIE_COVERAGE`] lies within
//! [`TIE_BAND`] of 1, and *undecided* otherwise, or with fewer than [`MIN_PAIRED`] paired rounds. Too few
//! rounds to reach a coverage use their whole range (6 rounds: 96.9%, 7: 98.4%), so that a survey's
//! first look is at 6 rounds. A survey looks again after more rounds only at a few counts ([`LOOKS`]), since every look
//! is another chance to call noise a difference.

use serde::{Deserialize, Serialize};

/// The coverage the interval of the median ratio is asked for to separate two rows.
pub const COVERAGE: f64 = 0.99;
/// The coverage of the interval that must lie within [`TIE_BAND`] for a tie (a tie claims no order, so
/// a miss costs less than a wrong order).
pub const TIE_COVERAGE: f64 = 0.95;
/// Two rows whose interval lies within 1 ± this are tied.
pub const TIE_BAND: f64 = 0.05;
/// Fewer paired rounds than this decide nothing.
pub const MIN_PAIRED: usize = 6;
/// The round counts after which a survey tests its pairs again (and from the last one, every 16).
pub const LOOKS: [u32; 8] = [6, 8, 10, 12, 16, 20, 24, 32];

/// What the test says, as the JSON writes it.
pub const STATED: &str = "paired rounds (both rows ran in the round): the median of the per-round ratios \
                          with its order-statistic interval (sign test); separated where the 99% \
                          interval (of 6-7 rounds their whole range: 96.9%, 98.4%) excludes 1, tied \
                          where the 95% interval lies within 0.95-1.05, else undecided";

/// One pair's verdict.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Separated,
    Tied,
    Undecided,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Separated => "separated",
            Outcome::Tied => "tied",
            Outcome::Undecided => "undecided",
        }
    }
}

/// Two rows compared over their paired rounds: `a`'s time over `b`'s.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Pair {
    pub a: String,
    pub b: String,
    pub outcome: Outcome,
    /// The median per-round ratio a / b, and its interval (null with fewer than [`MIN_PAIRED`] rounds).
    pub ratio: Option<f64>,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    /// The interval's coverage.
    pub coverage: Option<f64>,
    /// Rounds both rows ran quietly.
    pub rounds: usize,
}

/// The values of `a` and `b` in the rounds both have, as ratios a / b.
fn ratios(a: &[(u32, f64)], b: &[(u32, f64)]) -> Vec<f64> {
    let mut out: Vec<f64> = a
        .iter()
        .filter_map(|&(ra, va)| {
            let (_, vb) = b.iter().find(|(rb, _)| *rb == ra)?;
            (*vb > 0.0).then(|| va / vb)
        })
        .collect();
    out.sort_by(f64::total_cmp);
    out
}

/// 1 - 2 P(Binomial(n, 1/2) < k): the coverage of the k-th smallest to k-th largest of n.
fn coverage(n: usize, k: usize) -> f64 {
    let (mut below, mut c) = (0.0, 1.0f64);
    for i in 0..k {
        if i > 0 {
            c = c * (n + 1 - i) as f64 / i as f64;
        }
        below += c;
    }
    1.0 - 2.0 * below * 0.5f64.powi(n as i32)
}

/// The k to use for n ratios: the largest reaching `asked`, else 1 (the whole range).
fn order_k(n: usize, asked: f64) -> usize {
    (1..=n / 2)
        .take_while(|&k| coverage(n, k) >= asked)
        .last()
        .unwrap_or(1)
}

/// The test of `a`'s rounds against `b`'s: each a list of (round, value), lower faster.
pub fn test(a_name: &str, a: &[(u32, f64)], b_name: &str, b: &[(u32, f64)]) -> Pair {
    let r = ratios(a, b);
    let n = r.len();
    let mut p = Pair {
        a: a_name.into(),
        b: b_name.into(),
        outcome: Outcome::Undecided,
        ratio: None,
        lo: None,
        hi: None,
        coverage: None,
        rounds: n,
    };
    if n < MIN_PAIRED {
        return p;
    }
    let k = order_k(n, COVERAGE);
    let (lo, hi) = (r[k - 1], r[n - k]);
    let t = order_k(n, TIE_COVERAGE);
    let (tie_lo, tie_hi) = (r[t - 1], r[n - t]);
    let mid = if n % 2 == 1 {
        r[n / 2]
    } else {
        (r[n / 2 - 1] * r[n / 2]).sqrt()
    };
    p.outcome = if lo > 1.0 || hi < 1.0 {
        Outcome::Separated
    } else if tie_lo >= 1.0 - TIE_BAND && tie_hi <= 1.0 + TIE_BAND {
        Outcome::Tied
    } else {
        Outcome::Undecided
    };
    (p.ratio, p.lo, p.hi, p.coverage) = (Some(mid), Some(lo), Some(hi), Some(coverage(n, k)));
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rounds(v: &[f64]) -> Vec<(u32, f64)> {
        v.iter().enumerate().map(|(i, &x)| (i as u32, x)).collect()
    }

    #[test]
    fn coverage_is_the_sign_tests() {
        assert!((coverage(6, 1) - (1.0 - 2.0 / 64.0)).abs() < 1e-12);
        assert!((coverage(8, 1) - (1.0 - 2.0 / 256.0)).abs() < 1e-12);
        // 12 rounds: 1 - 2 (1 + 12) / 4096 = 0.99365 with the second of each end.
        assert!((coverage(12, 2) - (1.0 - 26.0 / 4096.0)).abs() < 1e-12);
        let k = |n| (order_k(n, COVERAGE), order_k(n, TIE_COVERAGE));
        assert_eq!([k(6), k(7), k(8), k(12)], [(1, 1), (1, 1), (1, 1), (2, 3)]);
    }

    #[test]
    fn every_round_one_way_is_separated_and_five_rounds_decide_nothing() {
        let a = rounds(&[100.0, 104.0, 98.0, 120.0, 101.0, 99.0]);
        let b = rounds(&[150.0, 140.0, 160.0, 150.0, 145.0, 170.0]);
        let p = test("a", &a, "b", &b);
        assert_eq!((p.outcome, p.rounds), (Outcome::Separated, 6));
        assert!(p.hi.unwrap() < 1.0 && p.ratio.unwrap() < 1.0, "{p:?}");
        let p = test("a", &a[..5], "b", &b[..5]);
        assert_eq!((p.outcome, p.ratio), (Outcome::Undecided, None));
    }

    #[test]
    fn close_rounds_are_tied_and_wide_ones_undecided() {
        let a = rounds(&[100.0, 101.0, 99.0, 102.0, 100.0, 98.0]);
        let b = rounds(&[101.0, 99.0, 100.0, 100.0, 101.0, 99.0]);
        assert_eq!(test("a", &a, "b", &b).outcome, Outcome::Tied);
        // One round of each side is 30% off: neither separated nor within the band.
        let a = rounds(&[100.0, 130.0, 99.0, 102.0, 100.0, 98.0]);
        let b = rounds(&[101.0, 99.0, 100.0, 100.0, 130.0, 99.0]);
        assert_eq!(test("a", &a, "b", &b).outcome, Outcome::Undecided);
    }

    #[test]
    fn only_rounds_both_ran_are_paired() {
        // b missed rounds 2 and 4 (disturbed): 4 pairs remain, too few.
        let a = rounds(&[1.0; 6]);
        let b: Vec<(u32, f64)> = rounds(&[2.0; 6])
            .into_iter()
            .filter(|(r, _)| *r != 2 && *r != 4)
            .collect();
        let p = test("a", &a, "b", &b);
        assert_eq!((p.rounds, p.outcome), (4, Outcome::Undecided));
    }
}

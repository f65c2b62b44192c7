//! Access distributions for random offsets (`--distribution`), in fio's meaning so that a fio job's
//! `random_distribution` means the same here:
//! - `uniform`: every block of the thread's region alike, drawn with replacement (the default; fio's
//!   `norandommap`);
//! - `once`: every block once per pass, in an order drawn from the seed (fio's default random map; see
//!   `shuffle.rs`);
//! - `zipf:THETA`: block ranks drawn with Gray et al.'s Zipf generator ("Quickly generating
//!   billion-record synthetic databases", SIGMOD 1994), the generator fio uses, so the shares of the hottest
//!   blocks are fio's (zipf 1.2: the hottest tenth of the blocks hit get 88.8% of the accesses);
//! - `pareto:H`: rank = (n - 1) x u^(ln H / ln(1 - H)), so that a share H of the blocks takes 1 - H of the
//!   accesses (pareto:0.2, the 80/20 rule);
//! - `normal:PCT`: centred on the region, the mean of 12 uniform draws, widened by a uniform spread of PCT%
//!   of the region (fio's construction);
//! - `zoned:...` and `zoned_abs:...`: zones of the region with their shares of the accesses (`zoned.rs`).
//!
//! The ranks are then scattered over the region by a bijection drawn from the seed (fio hashes them), so
//! the hot blocks are not all at the start of the file (zones are places, and stay where they are); a
//! plan replays exactly from its seed.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// The largest zipf THETA taken.
const MAX_THETA: f64 = 10.0;

/// How random offsets are spread over a thread's region; in JSON as its name ("zipf:1.2").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(into = "String", try_from = "String")]
pub enum Distribution {
    #[default]
    Uniform,
    /// Every block of the region once per pass (fio's random map).
    Once,
    Zipf {
        theta: f64,
    },
    Pareto {
        h: f64,
    },
    Normal {
        pct: f64,
    },
    /// Zones of the region, each with its share of the accesses (fio's zoned and zoned_abs).
    Zoned(Box<crate::zoned::ZoneSplit>),
}

const FLAG: &str = "--distribution";

impl From<Distribution> for String {
    fn from(d: Distribution) -> String {
        d.name()
    }
}

impl TryFrom<String> for Distribution {
    type Error = String;
    fn try_from(s: String) -> std::result::Result<Distribution, String> {
        Distribution::parse(&s).map_err(|e| e.to_string())
    }
}

impl Distribution {
    pub fn is_uniform(&self) -> bool {
        *self == Distribution::Uniform
    }

    /// `uniform`, `once`, `zipf:THETA`, `pareto:H` or `normal:PCT` (fio's `random` is accepted for
    /// uniform).
    pub fn parse(s: &str) -> Result<Distribution> {
        let (kind, arg) = match s.split_once(':') {
            Some((k, a)) => (k, Some(a)),
            None => (s, None),
        };
        let num = |what: &str| -> Result<f64> {
            let a = arg.ok_or_else(|| {
                Error::usage(FLAG, format!("'{s}' needs its parameter: {kind}:{what}"))
            })?;
            a.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| Error::usage(FLAG, format!("'{a}' in '{s}' is not a number")))
        };
        let d = match kind {
            "uniform" | "random" if arg.is_none() => Distribution::Uniform,
            "once" if arg.is_none() => Distribution::Once,
            "zipf" => Distribution::Zipf {
                theta: num("THETA")?,
            },
            "pareto" => Distribution::Pareto { h: num("H")? },
            "normal" => Distribution::Normal { pct: num("PCT")? },
            "zoned" | "zoned_abs" => Distribution::Zoned(Box::new(crate::zoned::ZoneSplit::parse(
                arg.unwrap_or(""),
                kind == "zoned_abs",
                s,
            )?)),
            _ => {
                return Err(Error::usage(
                    FLAG,
                    format!(
                    "'{s}' is not accepted; expected uniform, once, zipf:THETA, pareto:H, normal:PCT, \
                     zoned:ACCESS%/SIZE%:... or zoned_abs:ACCESS%/SIZE:..."
                ),
                ))
            }
        };
        match d {
            Distribution::Zipf { theta } if !(theta > 0.0 && theta <= MAX_THETA) || theta == 1.0 => {
                Err(Error::usage(
                    FLAG,
                    format!(
                        "zipf's THETA must be above 0, not 1 (Gray's generator divides by 1 - THETA) and at most \
                         {MAX_THETA} (zipf:{MAX_THETA} already sends 99.9% of the accesses to one block; beyond it \
                         the generator's powers overflow); got {}",
                        crate::units::show_number(theta)
                    ),
                ))
            }
            Distribution::Pareto { h } if !(h > 0.0 && h < 1.0) => Err(Error::usage(
                FLAG,
                format!("pareto's H is the share of blocks that takes 1 - H of the accesses: between 0 and 1, not {h}"),
            )),
            Distribution::Normal { pct } if !(0.0..=100.0).contains(&pct) => Err(Error::usage(
                FLAG,
                format!("normal's PCT is a percentage of the region, 0 to 100, not {pct}"),
            )),
            d => Ok(d),
        }
    }

    /// A `zoned_abs` distribution's zones must fit each thread's region of `region_bytes` (fio fails
    /// the job: "zoned_abs sizes exceed file size").
    pub fn check_region(&self, region_bytes: u64) -> Result<()> {
        let Distribution::Zoned(z) = self else {
            return Ok(());
        };
        match z.abs_bytes() {
            Some(b) if b > region_bytes => Err(Error::usage(
                FLAG,
                format!(
                    "the zones of '{}' span {} and each thread's region holds {}: give sizes that fit \
                     (fio: \"zoned_abs sizes exceed file size\")",
                    self.name(),
                    crate::units::fmt_size(b),
                    crate::units::fmt_size(region_bytes)
                ),
            )),
            _ => Ok(()),
        }
    }

    /// "zipf:1.2" (what `parse` reads back).
    pub fn name(&self) -> String {
        match self {
            Distribution::Uniform => "uniform".into(),
            Distribution::Once => "once".into(),
            Distribution::Zipf { theta } => format!("zipf:{theta}"),
            Distribution::Pareto { h } => format!("pareto:{h}"),
            Distribution::Normal { pct } => format!("normal:{pct}"),
            Distribution::Zoned(z) => z.name(),
        }
    }
}

/// A skewed distribution over `n` blocks, ready to draw: its constants and the scatter.
#[derive(Debug, Clone)]
pub struct Skew {
    law: Law,
    n: u64,
    /// The scatter: rank -> (rank x mult + add) mod n, a bijection (gcd(mult, n) = 1).
    mult: u64,
    add: u64,
}

#[derive(Debug, Clone)]
enum Law {
    Zipf {
        zetan: f64,
        half_pow: f64,
        alpha: f64,
        eta: f64,
    },
    Pareto {
        pow: f64,
    },
    Normal {
        spread: u64,
    },
    /// For each v of 1 to 100 (index v - 1), its zone's first block and blocks.
    Zoned {
        table: Vec<(u64, u64)>,
    },
}

impl Skew {
    /// `None` for the uniform distributions (the plan's own draw, or its shuffle). `scatter` seeds the bijection that
    /// spreads the ranks (two well-mixed words).
    pub fn new(d: &Distribution, n: u64, bs: u64, scatter: (u64, u64)) -> Option<Skew> {
        let law = match *d {
            Distribution::Uniform | Distribution::Once => return None,
            Distribution::Zipf { theta } => {
                let zetan = zeta(n, theta);
                let zeta2 = 1.0 + 0.5f64.powf(theta);
                Law::Zipf {
                    zetan,
                    half_pow: 0.5f64.powf(theta),
                    alpha: 1.0 / (1.0 - theta),
                    eta: (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
                }
            }
            Distribution::Pareto { h } => Law::Pareto {
                pow: h.ln() / (1.0 - h).ln(),
            },
            Distribution::Normal { pct } => Law::Normal {
                spread: ((n as f64 * pct / 100.0).ceil() as u64).min(n / 2),
            },
            Distribution::Zoned(ref z) => Law::Zoned {
                table: z.table(n, bs),
            },
        };
        let mut mult = scatter.0 % n.max(1);
        while gcd(mult, n) != 1 {
            mult = (mult + 1) % n;
        }
        let add = scatter.1 % n.max(1);
        Some(Skew { law, n, mult, add })
    }

    /// The block (0..n) for the uniform draws `u` gives (each in [0, 1)).
    #[inline]
    pub fn block(&self, mut u: impl FnMut() -> f64) -> u64 {
        if let Law::Zoned { table } = &self.law {
            // Zones are places in the region, not ranks: no scatter.
            let (first, len) = table[((u() * 100.0) as usize).min(99)];
            return first + (len as f64 * u()) as u64;
        }
        let rank = self.rank(&mut u).min(self.n - 1);
        ((rank as u128 * self.mult as u128 + self.add as u128) % self.n as u128) as u64
    }

    /// The rank drawn: 0 is the hottest block.
    fn rank(&self, u: &mut impl FnMut() -> f64) -> u64 {
        let n = self.n;
        match self.law {
            Law::Zipf {
                zetan,
                half_pow,
                alpha,
                eta,
            } => {
                let v = u();
                let z = v * zetan;
                if z < 1.0 {
                    0
                } else if z < 1.0 + half_pow {
                    1
                } else {
                    // Beyond n for THETA > 1 (alpha < 0): folded back into the region, as fio does.
                    (n as f64 * (eta * v - eta + 1.0).powf(alpha)) as u64 % n
                }
            }
            Law::Pareto { pow } => ((n - 1) as f64 * u().powf(pow)) as u64,
            Law::Normal { spread } => {
                let sum: u64 = (0..12).map(|_| (u() * (n + 1) as f64) as u64).sum();
                let centre = sum.div_ceil(12) as i64;
                let mut dev = (spread as f64 * u()) as i64 - (spread / 2) as i64;
                while dev != 0 && !(0..n as i64).contains(&(centre + dev)) {
                    dev /= 2;
                }
                (centre + dev).max(0).min(n as i64 - 1) as u64
            }
            Law::Zoned { .. } => unreachable!("zones are drawn in block()"),
        }
    }
}

/// sum over k = 1..n of k^-theta: exact for the first 100,000 terms, then the Euler-Maclaurin tail.
fn zeta(n: u64, theta: f64) -> f64 {
    const EXACT: u64 = 100_000;
    let head: f64 = (1..=n.min(EXACT)).map(|k| (k as f64).powf(-theta)).sum();
    if n <= EXACT {
        return head;
    }
    // sum_{k=a+1}^{n} f(k) ~ integral_a^n f + (f(n) - f(a)) / 2 - (f'(n) - f'(a)) / 12
    let (a, b) = (EXACT as f64, n as f64);
    let f = |x: f64| x.powf(-theta);
    let df = |x: f64| -theta * x.powf(-theta - 1.0);
    let integral = (b.powf(1.0 - theta) - a.powf(1.0 - theta)) / (1.0 - theta);
    head + integral + (f(b) - f(a)) / 2.0 + (df(b) - df(a)) / 12.0
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Uniform draws in [0, 1) from a fixed xorshift64* state, for tests of the laws.
#[cfg(test)]
pub(crate) fn uniform_draws() -> impl FnMut() -> f64 {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    move || {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio-genzipf's figure: the share of all accesses taken by the hottest tenth of the blocks that were
    /// hit at all, with as many draws as blocks (its default run: 1 GiB of 4 KiB blocks).
    fn genzipf_top_tenth(d: Distribution) -> f64 {
        let n = 262_144u64;
        let s = Skew::new(&d, n, 4096, (0x1234_5678_9abc_def1, 42)).unwrap();
        let mut u = uniform_draws();
        let mut hits = vec![0u32; n as usize];
        for _ in 0..n {
            hits[s.block(&mut u) as usize] += 1;
        }
        hits.retain(|&h| h > 0);
        hits.sort_unstable_by(|a, b| b.cmp(a));
        let top: u64 = hits[..(hits.len() - 1) / 10 + 1]
            .iter()
            .map(|&h| u64::from(h))
            .sum();
        top as f64 / n as f64
    }

    #[test]
    fn shares_of_the_hottest_tenth_are_fios() {
        // `t/fio-genzipf -t TYPE -i VALUE -g 1 -b 4096` (fio 3.33) printed these "Top 10.00%" shares.
        for (d, fio) in [
            ("zipf:1.2", 0.8876),
            ("zipf:0.8", 0.5154),
            ("pareto:0.2", 0.6355),
            ("normal:10", 0.2395),
        ] {
            let got = genzipf_top_tenth(Distribution::parse(d).unwrap());
            assert!(
                (got - fio).abs() < 0.01,
                "{d}: the hottest tenth took {got:.4} of the accesses, fio-genzipf says {fio}"
            );
        }
    }

    #[test]
    fn blocks_stay_in_the_region_and_the_scatter_is_a_bijection() {
        for d in ["zipf:1.2", "pareto:0.3", "normal:20"] {
            let n = 1000;
            let s = Skew::new(
                &Distribution::parse(d).unwrap(),
                n,
                4096,
                (0x5bd1_e995_1234_5677, 7),
            )
            .unwrap();
            let mut seen = std::collections::HashSet::new();
            for r in 0..n {
                seen.insert((r as u128 * s.mult as u128 + s.add as u128) % n as u128);
            }
            assert_eq!(
                seen.len(),
                n as usize,
                "{d}: the scatter maps {n} ranks onto {n} blocks"
            );
            let mut k = 0.0;
            let mut u = || {
                k = (k + 0.618_033_988_75) % 1.0;
                k
            };
            assert!((0..10_000).all(|_| s.block(&mut u) < n));
        }
    }

    #[test]
    fn zeta_tail_matches_the_sum() {
        let exact: f64 = (1..=300_000u64).map(|k| (k as f64).powf(-1.2)).sum();
        assert!((zeta(300_000, 1.2) - exact).abs() < 1e-9 * exact);
    }

    #[test]
    fn bad_values_name_the_flag() {
        for (s, says) in [
            ("zipf", "needs its parameter"),
            ("zipf:1", "not 1"),
            ("zipf:x", "not a number"),
            ("zipf:1e308", "at most 10"),
            ("pareto:nan", "not a number"),
            ("pareto:1.5", "between 0 and 1"),
            ("normal:200", "0 to 100"),
            ("gauss:3", "not accepted"),
        ] {
            let e = Distribution::parse(s).unwrap_err().to_string();
            assert!(e.contains(FLAG) && e.contains(says), "{s}: {e}");
        }
        assert_eq!(
            Distribution::parse("random").unwrap(),
            Distribution::Uniform
        );
        assert_eq!(Distribution::parse("zipf:1.2").unwrap().name(), "zipf:1.2");
    }
}

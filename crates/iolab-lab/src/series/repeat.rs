//! What `--repeat N` reports beside the N results: each figure's statistics over the runs.

use super::figures::figure;
use super::figures::FIGURES;
use super::figures::WIDE_SPREAD_PCT;
use iolab_engine::stats::{stat, Stat};
use serde::Serialize;
use serde_json::Value;

/// The most runs `--repeat` takes: each run's result is kept for the statistics (about 50 KB of a
/// short run), so 100,000 took 5 GB; a median's interval is as tight as the machine allows long before.
/// A `run --repeat` document of more is not one iolab wrote.
pub const MAX_REPEAT: u64 = 10_000;

/// What `--repeat N` reports beside the N results.
#[derive(Debug, Clone, Serialize)]
pub struct RepeatSummary {
    pub runs: usize,
    /// (figure, unit, statistics over the runs that have it).
    pub figures: Vec<(String, String, Stat)>,
    /// Set when the throughput spread is too wide to trust a comparison, saying how wide.
    pub spread_note: Option<String>,
}

pub fn summarize(results: &[Value]) -> RepeatSummary {
    let mut figures = Vec::new();
    for f in FIGURES {
        let xs: Vec<f64> = results.iter().filter_map(|r| figure(r, f)).collect();
        if let Some(s) = stat(&xs) {
            figures.push((f.name.to_string(), f.unit.to_string(), s));
        }
    }
    let spread_note = figures
        .iter()
        .find(|(n, _, _)| n == "iops")
        .filter(|(_, _, s)| s.n > 1 && s.spread_pct > WIDE_SPREAD_PCT)
        .map(|(_, _, s)| {
            format!(
                "throughput varied by {:.1}% over {} runs (max - min over the median; above {WIDE_SPREAD_PCT}%): \
                 differences smaller than that between two workloads are noise for these runs",
                s.spread_pct, s.n
            )
        });
    RepeatSummary {
        runs: results.len(),
        figures,
        spread_note,
    }
}

//! A seed's questions and published figures, as a suite file declares them (`[[question]]`,
//! `[[published-figure]]`).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One of a seed's questions, as a suite file lists it.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Question {
    pub id: String,
    pub text: String,
    /// Where the seed asks it ("§5 Conclusion").
    #[serde(default)]
    pub source: String,
    /// The function that answers it: a name in [`ANSWERS`].
    pub answer_by: String,
    /// The steps whose rows answer it (empty: every step).
    #[serde(default)]
    pub steps: Vec<String>,
    /// The seed's own figures the answer reads, by name.
    #[serde(default)]
    pub seed: BTreeMap<String, f64>,
}

/// A throughput the seed published: `bytes` moved in `seconds`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PublishedFigure {
    /// What it is ("Figure 18, dma 4kb: 1M writes of 4 KiB in 0.010 s").
    pub label: String,
    pub bytes: f64,
    pub seconds: f64,
    /// CPUs that could have copied at once (the seed's threads; default 1).
    #[serde(default = "one")]
    pub cpus: u32,
    /// The seed's own count of the instructions its run executed (its perf output), when it published
    /// one, and where ("Figure 26"): evidence about the figure that does not depend on this machine.
    #[serde(default)]
    pub instructions: Option<f64>,
    #[serde(default)]
    pub instructions_source: Option<String>,
    /// The most bytes one store instruction of the seed's CPU writes (the Raspberry Pi 4's Cortex-A72:
    /// 32, a pair of 128-bit registers; it has no copy instruction of any length, as x86's `rep movs` or
    /// Armv8.8's CPY are): the instruction check is made only where it is given.
    #[serde(default)]
    pub widest_store_bytes: Option<f64>,
}

fn one() -> u32 {
    1
}

//! What an offload client measured of itself, as a result holds it: plain values (the shared area they are
//! read from, and the writer, are `offload::cycles`).

use serde::{Deserialize, Serialize};

/// One distribution of the client's cycles.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CycleDist {
    pub count: u64,
    pub mean_cycles: f64,
    pub p50_cycles: u64,
    pub p99_cycles: u64,
    pub min_cycles: u64,
    pub max_cycles: u64,
    /// The mean without the values beyond three standard deviations of the mean: the statistic the
    /// offload thesis reported (it trimmed such outliers, then took means). From the histogram, each
    /// value at its bucket's middle (within 1/128 of the value above 256 cycles, exact below); absent
    /// in older results.
    #[serde(default)]
    pub trimmed_mean_cycles: Option<f64>,
    /// The same in ns, when the counter is iolab's calibrated clock.
    pub mean_ns: Option<f64>,
    pub p50_ns: Option<f64>,
    pub p99_ns: Option<f64>,
}

/// What the client measured of itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientCycles {
    /// The counter and how cycles became ns.
    pub counter: String,
    pub ns_per_cycle: Option<f64>,
    /// Requests per round trip.
    pub batch: u32,
    /// Each request (round-trip start to its completion) and each round trip (batch).
    pub requests: CycleDist,
    pub round_trips: CycleDist,
    /// One read of the counter inside the client (the second of two back-to-back reads minus the first;
    /// absent in older results).
    #[serde(default)]
    pub clock_read: Option<CycleDist>,
    /// A round trip's mean cycles / the requests in it: what one NOP costs when `batch` share a trip.
    pub per_request_cycles: f64,
    pub per_request_ns: Option<f64>,
}

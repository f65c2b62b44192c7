//! One throughput (a row's, or a seed's published one) against what this machine's memory can copy
//! (`measure::memcopy`): beyond it, the figure is impossible.

use iolab_engine::measure::memcopy::{gbps, MemCopy};

/// A throughput beyond what this machine can move through memory: the sentence saying so, or `None`
/// when the figure is possible. `cpus` is how many CPUs could have worked at once; `working_set` the
/// bytes the data spans, when known (unknown: the L1 copy rate is the ceiling, the most generous).
pub fn plausibility(
    bytes: f64,
    seconds: f64,
    working_set: Option<u64>,
    cpus: u32,
    mem: &MemCopy,
) -> Option<String> {
    if seconds <= 0.0 || bytes <= 0.0 {
        return None;
    }
    let rate = bytes / seconds;
    let c = mem.ceiling(working_set, cpus);
    (rate > PLAUSIBLE_MARGIN * c.bps).then(|| {
        format!(
            "impossible: {} is {:.1}x {} ({}): the bytes cannot all have been moved in that time",
            gbps(rate),
            rate / c.bps,
            c.what,
            gbps(c.bps)
        )
    })
}

/// A throughput must pass the ceiling by this factor to be called impossible (measuring noise, and a
/// copy that beats the measured pass by a little, are not impossibility).
pub const PLAUSIBLE_MARGIN: f64 = 1.5;

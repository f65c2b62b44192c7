//! `--rate-iops` / `--rate`: a thread's ops are due at fixed times (op k at k / rate after its start);
//! the synchronous loop waits for each op's time, and its latency runs from that time, so an op that a
//! slow one before it delayed carries the delay (coordinated omission is not hidden). Waits longer than
//! [`SLEEP_ABOVE_NS`] sleep, the rest spin on the clock.

use crate::measure::clock::Clock;
use crate::result::PacedFigures;

/// Waits longer than this sleep (leaving [`SPIN_NS`] to spin), shorter ones spin.
const SLEEP_ABOVE_NS: f64 = 200_000.0;
const SPIN_NS: f64 = 100_000.0;

/// What a paced worker saw: ops started later than one interval after they were due, the largest lag in
/// ticks, and the clock reads its waits made.
#[derive(Default)]
pub(super) struct PaceOut {
    pub(super) late: u64,
    pub(super) max_lag: u64,
    pub(super) clock_reads: u64,
}

/// Waits until op `done` of a loop that started at tick `start` is due (`done` intervals of `interval`
/// ticks later, on a clock of `hz` ticks a second) and returns that tick, the start of the op's latency; `None` when the op is due at
/// or after the `deadline` (it is not waited for). Out of line: the loops are compiled per method.
#[inline(never)]
pub(super) fn until<C: Clock>(
    clk: &C,
    (interval, hz): (f64, f64),
    start: u64,
    done: u64,
    deadline: u64,
    out: &mut PaceOut,
) -> Option<u64> {
    let due = start.saturating_add((done as f64 * interval) as u64);
    if due >= deadline {
        return None;
    }
    let ns_per_tick = 1e9 / hz;
    let mut now = clk.now();
    out.clock_reads += 1;
    if now > due {
        let lag = now - due;
        out.late += u64::from(lag as f64 > interval);
        out.max_lag = out.max_lag.max(lag);
    }
    while now < due {
        let left_ns = (due - now) as f64 * ns_per_tick;
        if left_ns > SLEEP_ABOVE_NS {
            std::thread::sleep(std::time::Duration::from_nanos((left_ns - SPIN_NS) as u64));
        } else {
            std::hint::spin_loop();
        }
        now = clk.now();
        out.clock_reads += 1;
    }
    Some(due)
}

/// The pass's pace: asked and achieved per thread (the slowest thread's ops over its own span and one
/// interval more: N paced ops span N - 1 intervals and the last op), met when every thread reached 99%
/// of it.
pub(super) fn figures(
    rate_iops: Option<f64>,
    per_thread: &[(u64, f64)],
    outs: &[&PaceOut],
    ns_per_tick: f64,
) -> Option<PacedFigures> {
    let rate = rate_iops?;
    let achieved = per_thread
        .iter()
        .map(|&(ops, wall_s)| ops as f64 / (wall_s + 1.0 / rate))
        .fold(f64::INFINITY, f64::min);
    let achieved = if achieved.is_finite() { achieved } else { 0.0 };
    Some(PacedFigures {
        rate_iops: rate,
        achieved_iops: achieved,
        met: achieved >= 0.99 * rate,
        late_ops: outs.iter().map(|o| o.late).sum(),
        max_lag_ns: outs.iter().map(|o| o.max_lag).max().unwrap_or(0) as f64 * ns_per_tick,
    })
}

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
    /// The thread waited for the deadline (its next op fell due past it), or out its last op's interval:
    /// its span is the duration asked (as fio's runtime), or its ops' intervals, not its last op's end.
    pub(super) rested: bool,
}

/// Waits until op `done` of a loop that started at tick `start` is due (`done` intervals of `interval`
/// ticks later, on a clock of `hz` ticks a second) and returns that tick, the start of the op's latency;
/// `None` when the op's interval ends after the `deadline` (then the thread waits for the deadline
/// instead). Out of line: the loops are compiled per method.
#[inline(never)]
pub(super) fn until<C: Clock>(
    clk: &C,
    (interval, hz): (f64, f64),
    start: u64,
    done: u64,
    deadline: u64,
    out: &mut PaceOut,
) -> Option<u64> {
    let due = due_at(start, done, interval);
    if due_at(start, done + 1, interval) > deadline {
        // The run spans its duration: the thread waits for the deadline, not for this op, whose interval
        // would end past it (3 ops a second for 0.5 s: one op, not two in 0.5 s, 4 a second).
        rest(clk, hz, deadline, out);
        return None;
    }
    let now = clk.now();
    out.clock_reads += 1;
    if now > due {
        let lag = now - due;
        out.late += u64::from(lag as f64 > interval);
        out.max_lag = out.max_lag.max(lag);
    }
    wait(clk, hz, now, due, out);
    Some(due)
}

/// The paced thread whose next op falls due past the deadline waits for the deadline, so that a run
/// bounded by --duration spans the duration (fio's runtime: 10 ops at 5 a second in 2 s, not 1.8 s).
fn rest<C: Clock>(clk: &C, hz: f64, deadline: u64, out: &mut PaceOut) {
    let now = clk.now();
    out.clock_reads += 1;
    wait(clk, hz, now, deadline, out);
    out.rested = true;
}

/// A paced thread that ran its ops waits out the last one's interval (or up to the deadline): `done` ops
/// at a pace span `done` intervals, so that its rate is taken over a span that holds it (10 ops at 5 a
/// second in 2 s, not the 1.8 s to the last op's end: 5.6 ops/s).
#[inline(never)]
pub(super) fn last_interval<C: Clock>(
    clk: &C,
    (interval, hz): (f64, f64),
    start: u64,
    done: u64,
    deadline: u64,
    out: &mut PaceOut,
) {
    rest(clk, hz, due_at(start, done, interval).min(deadline), out);
}

/// The tick op `done` of a loop that started at tick `start` is due, `interval` ticks apart.
fn due_at(start: u64, done: u64, interval: f64) -> u64 {
    start.saturating_add((done as f64 * interval) as u64)
}

/// Sleeps, then spins, from tick `now` until tick `due`.
fn wait<C: Clock>(clk: &C, hz: f64, mut now: u64, due: u64, out: &mut PaceOut) {
    let ns_per_tick = 1e9 / hz;
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
}

/// The pass's pace: asked and achieved per thread (the slowest thread's ops over its own span, and one
/// interval more where the span ended at its last op, as a thread stopped early does: N paced ops span
/// N - 1 intervals and the last op; a span that waited out its last interval or the deadline holds N
/// intervals already), met when every thread ran 99% of the whole intervals its span holds.
pub(super) fn figures(
    rate_iops: Option<f64>,
    per_thread: &[(u64, f64)],
    outs: &[&PaceOut],
    ns_per_tick: f64,
) -> Option<PacedFigures> {
    let rate = rate_iops?;
    // Each thread's rate, and its share of what its span holds at the pace: a span of 0.5 s at 3 a
    // second holds one whole interval, so one op met it.
    let (mut achieved, mut share) = (f64::INFINITY, f64::INFINITY);
    for (&(ops, wall_s), o) in per_thread.iter().zip(outs) {
        let tail = if o.rested { 0.0 } else { 1.0 / rate };
        let span = wall_s + tail;
        achieved = achieved.min(ops as f64 / span);
        let holds = (span * rate + 1e-6).floor().max(1.0);
        share = share.min(ops as f64 / holds);
    }
    let achieved = if achieved.is_finite() { achieved } else { 0.0 };
    Some(PacedFigures {
        rate_iops: rate,
        achieved_iops: achieved,
        met: share.is_finite() && share >= 0.99,
        late_ops: outs.iter().map(|o| o.late).sum(),
        max_lag_ns: outs.iter().map(|o| o.max_lag).max().unwrap_or(0) as f64 * ns_per_tick,
    })
}

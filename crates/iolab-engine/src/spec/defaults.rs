//! The defaults and bounds of a spec's values, in one place.

/// The counting pass samples a workload larger than this many ops (`--count separate`).
pub const COUNT_SAMPLE_MIN_OPS: u64 = 1000;

/// ... taking this part of it: a tenth of the ops and of the duration,
pub const COUNT_SAMPLE_SHARE: u64 = 10;

/// ... but at most this many seconds of a duration-bound run (per-op figures settle within it; the pass
/// also costs its set-up and the tracepoints' teardown, ~0.05 s here).
pub const COUNT_SAMPLE_MAX_S: f64 = 0.25;

/// `--profile-hz` unset: 997 samples per second (a prime, so sampling does not beat with periodic work).
pub const DEFAULT_PROFILE_HZ: u32 = 997;

/// `--log-interval` unset: intervals of 1 s, ...
pub const DEFAULT_LOG_INTERVAL_MS: u64 = 1000;

/// ... kept when the timed pass took at least this long (a shorter run's over-time chart would be a point
/// or two).
pub const AUTO_LOG_MIN_S: f64 = 2.0;

/// The shortest `--log-interval`: closing an interval scans the thread's latency histogram (13 µs here),
/// which must stay a small share of the interval.
pub const MIN_LOG_INTERVAL_MS: u64 = 10;

/// Default sq_thread_idle: 1 s, so a run does not keep re-waking the thread.
pub const DEFAULT_SQ_IDLE_MS: u32 = 1000;

/// Ops when the user gives no amount at all (also capped by [`DEFAULT_DURATION_S`]).
pub const DEFAULT_OPS: u64 = 100_000;

pub const DEFAULT_DURATION_S: f64 = 10.0;

/// The longest `--duration`: 365 days. A run's deadline is a clock reading plus the duration in clock
/// ticks, both u64 (1.8e19): with a TSC of 10 GHz after 10 years of uptime that sum is 3.5e18, and the
/// nanosecond fallback clock is 25 times slower.
pub const MAX_DURATION_S: f64 = 365.0 * 86_400.0;

/// The most ops a run makes: an op a nanosecond for the longest `--duration` (no op iolab times is
/// faster), 3.15e16; and its bytes (`--ops` x `--bs`) must fit the byte counters (u64).
pub const MAX_OPS: u64 = MAX_DURATION_S as u64 * 1_000_000_000;

/// The glibc stdio buffer iolab sets by default: 4096 bytes, what glibc picks itself for files on most
/// filesystems (st_blksize), and what the seed's fputs program got.
pub const DEFAULT_STDIO_BUFFER: u64 = 4096;

/// The most ops `--clock-every` lets pass between clock reads: a million 4-byte writes to /dev/null take
/// about 0.1 s, so the deadline and intervals are still looked at often enough to be met.
pub const MAX_CLOCK_EVERY: u64 = 1_000_000;

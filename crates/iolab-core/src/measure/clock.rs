//! The clock the runner reads around every op.
//!
//! On x86_64 with an invariant TSC (`constant_tsc` and `nonstop_tsc` in /proc/cpuinfo), iolab reads RDTSC
//! (about 10-25 cycles) and converts ticks to nanoseconds only when reporting, with a rate calibrated
//! against CLOCK_MONOTONIC at start. Elsewhere it falls back to clock_gettime(CLOCK_MONOTONIC) through the
//! vDSO and records why. A mock clock that advances a fixed step per read makes runner tests deterministic.

use crate::sys;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};

/// A monotonic tick source; ticks become nanoseconds through [`ClockInfo::ns_per_tick`].
pub trait Clock: Send + Sync {
    fn now(&self) -> u64;
}

/// RDTSC.
#[derive(Debug, Clone, Copy, Default)]
pub struct TscClock;

#[cfg(target_arch = "x86_64")]
impl Clock for TscClock {
    #[inline(always)]
    fn now(&self) -> u64 {
        sys::rdtsc()
    }
}

#[cfg(not(target_arch = "x86_64"))]
impl Clock for TscClock {
    #[inline(always)]
    fn now(&self) -> u64 {
        sys::monotonic_ns()
    }
}

/// clock_gettime(CLOCK_MONOTONIC), ticks are nanoseconds.
#[derive(Debug, Clone, Copy, Default)]
pub struct MonoClock;

impl Clock for MonoClock {
    #[inline(always)]
    fn now(&self) -> u64 {
        sys::monotonic_ns()
    }
}

/// A clock that advances `step` ticks on every read: deterministic timings for tests.
#[derive(Debug, Default)]
pub struct MockClock {
    t: AtomicU64,
    step: u64,
}

impl MockClock {
    pub fn new(step: u64) -> MockClock {
        MockClock {
            t: AtomicU64::new(1_000),
            step,
        }
    }
}

impl Clock for MockClock {
    fn now(&self) -> u64 {
        self.t.fetch_add(self.step, Ordering::Relaxed) + self.step
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockKind {
    Tsc,
    Monotonic,
    Mock,
}

/// What clock timed a run, and what reading it costs. Part of every result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClockInfo {
    pub kind: ClockKind,
    /// "rdtsc (invariant TSC, calibrated against CLOCK_MONOTONIC over 20 ms)" etc.
    pub description: String,
    /// Tick rate in Hz (1e9 for clock_gettime).
    pub hz: f64,
    pub ns_per_tick: f64,
    /// Cost of one clock read, measured as the median difference of back-to-back reads.
    pub overhead_ticks_median: f64,
    /// Mean of the same, as the seed hypervisor thesis reported (~20 cycles for rdtsc).
    pub overhead_ticks_mean: f64,
    pub overhead_ns: f64,
    /// Why the TSC was not used, when it was not.
    pub fallback_reason: Option<String>,
}

impl ClockInfo {
    pub fn ticks_to_ns(&self, t: u64) -> f64 {
        t as f64 * self.ns_per_tick
    }

    /// Info for the mock clock: one tick is one nanosecond.
    pub fn mock() -> ClockInfo {
        ClockInfo {
            kind: ClockKind::Mock,
            description: "mock clock (tests): a fixed step per read".into(),
            hz: 1e9,
            ns_per_tick: 1.0,
            overhead_ticks_median: 0.0,
            overhead_ticks_mean: 0.0,
            overhead_ns: 0.0,
            fallback_reason: None,
        }
    }
}

/// Why the TSC cannot be trusted here, or `None` when it can.
pub fn tsc_unusable_reason() -> Option<String> {
    if !cfg!(target_arch = "x86_64") {
        return Some("not an x86_64 CPU: no RDTSC".into());
    }
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags = info
        .lines()
        .find(|l| l.starts_with("flags"))
        .unwrap_or("")
        .to_string();
    let has = |f: &str| flags.split_whitespace().any(|w| w == f);
    if !has("constant_tsc") {
        Some("the CPU lacks constant_tsc: the TSC rate changes with frequency".into())
    } else if !has("nonstop_tsc") {
        Some("the CPU lacks nonstop_tsc: the TSC may stop in idle states".into())
    } else {
        None
    }
}

fn overhead<C: Clock>(c: &C) -> (f64, f64) {
    const N: usize = 10_001;
    let mut d = Vec::with_capacity(N);
    for _ in 0..N {
        let a = c.now();
        let b = c.now();
        d.push(b.wrapping_sub(a));
    }
    let mean = d.iter().map(|&x| x as f64).sum::<f64>() / N as f64;
    d.sort_unstable();
    (d[N / 2] as f64, mean)
}

/// A CLOCK_MONOTONIC read and the TSC at the same moment: the midpoint of two TSC reads around it, from
/// the narrowest of up to 64 tries. A try the hypervisor or the scheduler interrupts between its reads is
/// wide (milliseconds, measured here) and would put the calibration off by as much.
fn bracketed() -> (u64, u64) {
    let mut best = (u64::MAX, 0u64, 0u64);
    for _ in 0..64 {
        let a = TscClock.now();
        let m = sys::monotonic_ns();
        let b = TscClock.now();
        let w = b.wrapping_sub(a);
        if w < best.0 {
            best = (w, a / 2 + b / 2, m);
        }
        if w < 2_000 {
            break;
        }
    }
    (best.1, best.2)
}

/// Chooses the clock: the TSC where it is invariant (calibrated here over `calib_ms`), else CLOCK_MONOTONIC.
pub fn calibrate(calib_ms: u64) -> ClockInfo {
    match tsc_unusable_reason() {
        None => {
            let pair = bracketed;
            let (c0, m0) = pair();
            let mut c1;
            let mut m1;
            loop {
                (c1, m1) = pair();
                if m1 - m0 >= calib_ms * 1_000_000 {
                    break;
                }
                std::hint::spin_loop();
            }
            let hz = (c1 - c0) as f64 * 1e9 / (m1 - m0) as f64;
            let (med, mean) = overhead(&TscClock);
            ClockInfo {
                kind: ClockKind::Tsc,
                description: format!(
                    "rdtsc (invariant TSC at {:.3} GHz, calibrated against CLOCK_MONOTONIC over {calib_ms} ms)",
                    hz / 1e9
                ),
                hz,
                ns_per_tick: 1e9 / hz,
                overhead_ticks_median: med,
                overhead_ticks_mean: mean,
                overhead_ns: med * 1e9 / hz,
                fallback_reason: None,
            }
        }
        Some(reason) => {
            let (med, mean) = overhead(&MonoClock);
            ClockInfo {
                kind: ClockKind::Monotonic,
                description: "clock_gettime(CLOCK_MONOTONIC) via the vDSO".into(),
                hz: 1e9,
                ns_per_tick: 1.0,
                overhead_ticks_median: med,
                overhead_ticks_mean: mean,
                overhead_ns: med,
                fallback_reason: Some(reason),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibrated_clock_agrees_with_monotonic() {
        let info = calibrate(20);
        assert!(info.hz > 1e8 && info.hz < 1e11, "{info:?}");
        let (t0, m0) = bracketed();
        std::thread::sleep(std::time::Duration::from_millis(30));
        let (t1, m1) = bracketed();
        if info.kind == ClockKind::Tsc {
            let tsc_ns = info.ticks_to_ns(t1 - t0);
            let mono_ns = (m1 - m0) as f64;
            assert!(
                (tsc_ns / mono_ns - 1.0).abs() < 0.02,
                "tsc {tsc_ns} vs monotonic {mono_ns}"
            );
        } else {
            println!("skipped TSC check: {:?}", info.fallback_reason);
        }
        assert!(info.overhead_ns > 0.0 && info.overhead_ns < 10_000.0);
    }

    #[test]
    fn mock_clock_steps() {
        let c = MockClock::new(5);
        let a = c.now();
        assert_eq!(c.now() - a, 5);
    }
}

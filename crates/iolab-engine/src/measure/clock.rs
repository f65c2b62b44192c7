//! The clock the runner reads around every op.
//!
//! iolab reads the CPU's own counter where user space may: on x86_64 RDTSC when the TSC is invariant
//! (`constant_tsc` and `nonstop_tsc` in /proc/cpuinfo), on aarch64 CNTVCT_EL0 (the ARM generic timer,
//! after an ISB), on 32-bit ARM CNTVCT through CP15 when a forked probe shows the read does not trap (a
//! Cortex-A9 has no generic timer). Ticks become nanoseconds only when reporting, with a rate calibrated
//! against CLOCK_MONOTONIC at start (ARM's CNTFRQ is reported beside it). Elsewhere it falls back to
//! clock_gettime(CLOCK_MONOTONIC) and records why; it then measures whether that read is itself a system
//! call (no vDSO, or a vDSO without a fast path for the clocksource), says so in the clock line, and
//! synchronous runs read the clock once every [`AUTO_CLOCK_EVERY`] ops unless `--clock-every` says
//! otherwise. A mock clock that advances a fixed step per read makes runner tests deterministic.

use iolab_sys as sys;
use serde::{Deserialize, Serialize};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};

/// A monotonic tick source; ticks become nanoseconds through [`ClockInfo::ns_per_tick`].
pub trait Clock: Send + Sync {
    fn now(&self) -> u64;
}

/// The CPU's counter: RDTSC on x86_64, CNTVCT on ARM (read only once [`calibrate`] chose it), and
/// clock_gettime on architectures without one iolab knows.
#[derive(Debug, Clone, Copy, Default)]
pub struct CounterClock;

/// The x86 name of [`CounterClock`], kept for the runners that name it.
pub type TscClock = CounterClock;

impl Clock for CounterClock {
    #[inline(always)]
    fn now(&self) -> u64 {
        counter_now()
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn counter_now() -> u64 {
    sys::rdtsc()
}

#[cfg(any(target_arch = "aarch64", target_arch = "arm"))]
#[inline(always)]
fn counter_now() -> u64 {
    sys::cntvct()
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "arm")))]
#[inline(always)]
fn counter_now() -> u64 {
    sys::monotonic_ns()
}

/// One reading of the clock of `kind` (the mock clock reads CLOCK_MONOTONIC).
pub fn now_of(kind: ClockKind) -> u64 {
    match kind {
        ClockKind::Tsc | ClockKind::Cntvct => counter_now(),
        ClockKind::Monotonic | ClockKind::Mock => sys::monotonic_ns(),
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
    /// x86's time stamp counter (RDTSC).
    Tsc,
    /// The ARM generic timer's virtual counter (CNTVCT_EL0, or CNTVCT through CP15 on 32-bit ARM).
    Cntvct,
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
    /// Why the CPU's counter was not used, when it was not.
    pub fallback_reason: Option<String>,
    /// Why a clock read is a system call here, when it is (clock_gettime without a vDSO fast path): each
    /// read is then counted apart from the method's calls, and synchronous runs read the clock once every
    /// [`AUTO_CLOCK_EVERY`] ops unless `--clock-every` says otherwise. Written only when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_is_syscall: Option<String>,
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
            read_is_syscall: None,
        }
    }

    /// Is every clock read a system call of its own?
    pub fn read_is_syscall(&self) -> bool {
        self.read_is_syscall.is_some()
    }
}

/// The name of this architecture's CPU counter, for "clock: ... not used" lines.
pub fn counter_name() -> &'static str {
    if cfg!(any(target_arch = "aarch64", target_arch = "arm")) {
        "ARM generic timer (CNTVCT)"
    } else {
        "TSC"
    }
}

/// Ops per clock read iolab chooses for a synchronous run when a clock read is a system call and
/// `--clock-every` is not given: the clock's calls are then under 2% of the method's.
pub const AUTO_CLOCK_EVERY: u64 = 64;

/// How often a run reads the clock when it is not once per op (`--clock-every N`, or iolab's choice
/// where a read is a system call). Part of the result when so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SparseClock {
    /// Ops per clock read (per thread).
    pub every: u64,
    /// "--clock-every 64", or why iolab chose it.
    pub chosen: String,
    /// Why the result has no per-op latency (or, sampled, no gap).
    pub latency_unavailable: String,
    /// `--latency-sample N`: one op in `every` is timed on its own, by a read just before it and the
    /// read after it (absent before it existed: none).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sampled: bool,
}

/// Ops per clock read under `--latency-sample 0`: reads only to look at the deadline and progress (the
/// loop stops every 1,024 ops anyway, to look for an abort): about 0.01 ns an op; at 65,536 a run of
/// 50 µs reads went 3 s past a --duration of 0.1 s.
pub const UNSAMPLED_EVERY: u64 = 1024;

/// Ops per clock read for a run: `asked` (`--clock-every`), or one per `--latency-sample` `sample` ops
/// ([`UNSAMPLED_EVERY`] for 0), else [`AUTO_CLOCK_EVERY`] for a synchronous method where a clock read is a
/// system call, else 1. `None`: one read per op (or per round, for the queued methods).
pub fn sparse_clock(
    (asked, sample): (Option<u64>, Option<u64>),
    info: &ClockInfo,
    synchronous: bool,
) -> Option<SparseClock> {
    let sampled_every = sample.map(|n| if n == 0 { UNSAMPLED_EVERY } else { n });
    let (every, chosen) = match (asked, &info.read_is_syscall) {
        (None, _) if sample.is_some() => (
            sampled_every.unwrap_or(1),
            format!("--latency-sample {}", sample.unwrap_or(1)),
        ),
        (Some(n), _) => (n, format!("--clock-every {n}")),
        (None, Some(why)) if synchronous => (
            AUTO_CLOCK_EVERY,
            format!(
                "iolab's choice, because a clock read is a system call here ({why}); --clock-every 1 reads it \
                 after every op"
            ),
        ),
        (None, _) => return None,
    };
    let sampled = sample.is_some_and(|n| n > 1);
    let latency_unavailable = match sample {
        Some(0) if synchronous => "no op was timed (--latency-sample 0): throughput comes from the loop's \
                                   span (the clock, read after as many ops as take about 1 ms, at most 1,024, looks at the \
                                   deadline and progress)"
            .to_string(),
        Some(0) => "no op was timed (--latency-sample 0): throughput comes from the loop's span (the clock \
                    is read before each reap, for the deadline, progress and stalls only)"
            .to_string(),
        Some(n) if n > 1 => format!(
            "one op in {n} is timed on its own ({chosen}): the time between two ops' starts needs both \
             timed, and a thread of fewer than {n} ops timed none"
        ),
        _ => format!(
            "one clock read every {every} ops ({chosen}): per-op latency needs a read per op; throughput \
             comes from the span between the first and the last read"
        ),
    };
    (every > 1).then_some(SparseClock {
        every,
        latency_unavailable,
        chosen,
        sampled,
    })
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

/// The CPU counter this process may read: its kind, how the clock line names it, and the frequency its
/// register gives (ARM's CNTFRQ; `None` on x86).
struct Counter {
    kind: ClockKind,
    name: &'static str,
    register: Option<(&'static str, u64)>,
}

/// The CPU counter, or why there is none to use.
fn usable_counter() -> Result<Counter, String> {
    #[cfg(target_arch = "x86_64")]
    return match tsc_unusable_reason() {
        None => Ok(Counter {
            kind: ClockKind::Tsc,
            name: "rdtsc (invariant TSC",
            register: None,
        }),
        Some(r) => Err(r),
    };
    #[cfg(target_arch = "aarch64")]
    return Ok(Counter {
        kind: ClockKind::Cntvct,
        name: "CNTVCT_EL0 (ARM generic timer",
        register: Some(("CNTFRQ_EL0", sys::cntfrq())),
    });
    #[cfg(target_arch = "arm")]
    return sys::cntvct_readable().map(|()| Counter {
        kind: ClockKind::Cntvct,
        name: "CNTVCT, read with mrrc p15 (ARM generic timer",
        register: Some(("CNTFRQ", sys::cntfrq())),
    });
    #[allow(unreachable_code)]
    Err("no user-readable CPU counter iolab knows on this architecture".into())
}

/// Median and mean of back-to-back reads, in ticks.
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

/// The cost of one read in ticks: the median of back-to-back reads, or their mean where the counter
/// ticks too slowly for the median to tell (a 19.2 or 54 MHz generic timer ticks every 20-50 ns).
pub fn read_cost_ticks(median: f64, mean: f64) -> f64 {
    if median < 4.0 {
        mean
    } else {
        median
    }
}

/// A CLOCK_MONOTONIC read and the counter at the same moment: the midpoint of two counter reads around
/// it, from the narrowest of up to 64 tries. A try the hypervisor or the scheduler interrupts between its
/// reads is wide (milliseconds, measured here) and would put the calibration off by as much.
fn bracketed(read: fn() -> u64) -> (u64, u64) {
    let mut best = (u64::MAX, 0u64, 0u64);
    for _ in 0..64 {
        let a = read();
        let m = sys::monotonic_ns();
        let b = read();
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

/// The counter's rate from two (counter, CLOCK_MONOTONIC ns) pairs, or `None` when either stood still.
pub fn rate_hz((c0, m0): (u64, u64), (c1, m1): (u64, u64)) -> Option<f64> {
    (c1 > c0 && m1 > m0).then(|| (c1 - c0) as f64 * 1e9 / (m1 - m0) as f64)
}

/// What the frequency register says beside the calibrated rate: "CNTFRQ_EL0 says 54.000 MHz", with the
/// difference when it is over 1% (the firmware set it wrong; the calibrated rate is used).
pub fn register_note(name: &str, register_hz: u64, calibrated_hz: f64) -> String {
    if register_hz == 0 {
        return format!("{name} is 0 (the firmware did not set it)");
    }
    let off = calibrated_hz / register_hz as f64 - 1.0;
    let says = format!("{name} says {:.3} MHz", register_hz as f64 / 1e6);
    if off.abs() > 0.01 {
        format!(
            "{says}, {:+.1}% off the calibration: the calibrated rate is used",
            off * 100.0
        )
    } else {
        says
    }
}

/// Calibrates the counter against CLOCK_MONOTONIC over `calib_ms`; `Err` when it does not advance.
fn calibrate_counter(c: Counter, calib_ms: u64) -> Result<ClockInfo, String> {
    let read: fn() -> u64 = counter_now;
    let first = bracketed(read);
    let mut last;
    loop {
        last = bracketed(read);
        if last.1.saturating_sub(first.1) >= calib_ms * 1_000_000 {
            break;
        }
        std::hint::spin_loop();
    }
    let hz = rate_hz(first, last).ok_or_else(|| format!("{}) does not advance", c.name))?;
    let (med, mean) = overhead(&CounterClock);
    let unit = if hz >= 1e9 {
        (1e9, "GHz")
    } else {
        (1e6, "MHz")
    };
    let mut description = format!(
        "{} at {:.3} {}, calibrated against CLOCK_MONOTONIC over {calib_ms} ms",
        c.name,
        hz / unit.0,
        unit.1
    );
    if let Some((name, v)) = c.register {
        description.push_str(&format!("; {}", register_note(name, v, hz)));
    }
    description.push(')');
    Ok(ClockInfo {
        kind: c.kind,
        description,
        hz,
        ns_per_tick: 1e9 / hz,
        overhead_ticks_median: med,
        overhead_ticks_mean: mean,
        overhead_ns: read_cost_ticks(med, mean) * 1e9 / hz,
        fallback_reason: None,
        read_is_syscall: None,
    })
}

/// clock_gettime as a plain system call, as a [`Clock`] (to measure what one costs).
struct SyscallMono;

impl Clock for SyscallMono {
    fn now(&self) -> u64 {
        sys::monotonic_ns_syscall()
    }
}

/// Whether a clock_gettime read is a system call, from what a read through libc costs (`read_ns`)
/// against one made as a plain system call (`syscall_ns`), and whether there is a vDSO at all. The
/// vDSO's fast path costs a fraction of the call (20-40 ns against 100 ns or more); without one the read
/// costs the call or more (the vDSO's own work comes on top), so 80% of the call's cost separates the
/// two with room for noise. `clocksource`: the kernel's current clocksource, for the message.
/// `counted`: the kernel's count of system calls made during `READS_COUNTED` reads, where tracepoints can
/// be had: it decides, since timings in an emulated guest can put a vDSO read that falls back to the call
/// below 80% of the call.
pub fn judge_read(
    has_vdso: bool,
    read_ns: f64,
    syscall_ns: f64,
    clocksource: &str,
    counted: Option<u64>,
) -> Option<String> {
    let cs = if clocksource.is_empty() {
        String::new()
    } else {
        format!(", clocksource {clocksource}")
    };
    if let Some(calls) = counted {
        // One more call than the reads: the read(2) of the counter that ends the count.
        return (calls >= READS_COUNTED / 2).then(|| {
            format!(
                "the kernel counted {calls} system calls during {READS_COUNTED} reads{}{cs}",
                if has_vdso {
                    ""
                } else {
                    ": this process has no vDSO"
                }
            )
        });
    }
    if !has_vdso {
        Some(format!("this process has no vDSO{cs}"))
    } else if read_ns >= 0.8 * syscall_ns {
        Some(format!(
            "a read costs {read_ns:.0} ns, as much as clock_gettime made as a system call ({syscall_ns:.0} ns): \
             the vDSO has no fast path here{cs}"
        ))
    } else {
        None
    }
}

/// How many clock reads [`calls_per_reads`] makes.
pub const READS_COUNTED: u64 = 64;

/// The kernel's count (raw_syscalls:sys_enter on this thread) of the system calls made during
/// `READS_COUNTED` reads of CLOCK_MONOTONIC through libc, plus the read(2) that ends the count; `None`
/// without tracepoints.
fn calls_per_reads() -> Option<u64> {
    let ids = super::counters::trace_ids().ok()?;
    let id = *ids.events.get("raw_syscalls:sys_enter")?;
    let fd = sys::perf_event_open_counter(sys::perf::PERF_TYPE_TRACEPOINT, id).ok()?;
    let before = sys::perf_read(fd.as_raw_fd()).ok()?;
    for _ in 0..READS_COUNTED {
        std::hint::black_box(MonoClock.now());
    }
    let after = sys::perf_read(fd.as_raw_fd()).ok()?;
    Some(after.saturating_sub(before))
}

/// The fallback: clock_gettime(CLOCK_MONOTONIC), and whether each read of it is a system call.
fn monotonic(reason: String) -> ClockInfo {
    let (med, mean) = overhead(&MonoClock);
    let (sys_med, _) = overhead(&SyscallMono);
    let clocksource =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default();
    let syscall = judge_read(
        sys::has_vdso(),
        med,
        sys_med,
        clocksource.trim(),
        calls_per_reads(),
    );
    ClockInfo {
        kind: ClockKind::Monotonic,
        description: match &syscall {
            None => "clock_gettime(CLOCK_MONOTONIC) via the vDSO".into(),
            Some(why) => {
                format!("clock_gettime(CLOCK_MONOTONIC), a system call on every read ({why})")
            }
        },
        hz: 1e9,
        ns_per_tick: 1.0,
        overhead_ticks_median: med,
        overhead_ticks_mean: mean,
        overhead_ns: med,
        fallback_reason: Some(reason),
        read_is_syscall: syscall,
    }
}

/// Chooses the clock: the CPU's counter where user space may read it and it can be trusted (calibrated
/// here over `calib_ms`), else CLOCK_MONOTONIC.
pub fn calibrate(calib_ms: u64) -> ClockInfo {
    match usable_counter().and_then(|c| calibrate_counter(c, calib_ms)) {
        Ok(info) => info,
        Err(reason) => monotonic(reason),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibrated_clock_agrees_with_monotonic() {
        let info = calibrate(20);
        assert!(info.hz > 1e6 && info.hz < 1e11, "{info:?}");
        if matches!(info.kind, ClockKind::Tsc | ClockKind::Cntvct) {
            let (t0, m0) = bracketed(counter_now);
            std::thread::sleep(std::time::Duration::from_millis(30));
            let (t1, m1) = bracketed(counter_now);
            let counter_ns = info.ticks_to_ns(t1 - t0);
            let mono_ns = (m1 - m0) as f64;
            assert!(
                (counter_ns / mono_ns - 1.0).abs() < 0.02,
                "counter {counter_ns} vs monotonic {mono_ns}"
            );
        } else {
            println!("skipped the counter check: {:?}", info.fallback_reason);
        }
        assert!(info.overhead_ns > 0.0 && info.overhead_ns < 10_000.0);
        println!("clock: {}", info.description);
    }

    #[test]
    fn rate_from_two_pairs() {
        // 54 MHz over 20 ms.
        let hz = rate_hz((1_000, 5_000_000), (1_000 + 1_080_000, 25_000_000)).unwrap();
        assert!((hz - 54e6).abs() < 1.0, "{hz}");
        assert_eq!(
            rate_hz((7, 0), (7, 20_000_000)),
            None,
            "a counter that stands still"
        );
        assert_eq!(rate_hz((7, 9), (100, 9)), None, "no time passed");
    }

    #[test]
    fn register_note_flags_a_wrong_cntfrq() {
        assert_eq!(
            register_note("CNTFRQ_EL0", 54_000_000, 54_010_000.0),
            "CNTFRQ_EL0 says 54.000 MHz"
        );
        let n = register_note("CNTFRQ_EL0", 24_000_000, 19_200_000.0);
        assert!(
            n.contains("-20.0% off the calibration") && n.contains("says 24.000 MHz"),
            "{n}"
        );
        assert!(register_note("CNTFRQ", 0, 1e6).contains("did not set it"));
    }

    #[test]
    fn read_cost_uses_the_mean_when_ticks_are_coarse() {
        assert_eq!(read_cost_ticks(1.0, 0.6), 0.6);
        assert_eq!(read_cost_ticks(24.0, 25.5), 24.0);
    }

    #[test]
    fn a_read_as_dear_as_the_call_is_a_syscall() {
        assert_eq!(
            judge_read(true, 22.0, 110.0, "tsc", None),
            None,
            "vDSO fast path"
        );
        assert_eq!(
            judge_read(true, 60.0, 110.0, "hyperv_clocksource_tsc_page", None),
            None,
            "a slower fast path"
        );
        let why = judge_read(true, 900.0, 850.0, "arm_global_timer", None).unwrap();
        assert!(
            why.contains("no fast path") && why.contains("arm_global_timer"),
            "{why}"
        );
        let why = judge_read(false, 10.0, 1000.0, "", None).unwrap();
        assert_eq!(why, "this process has no vDSO");
        // The kernel's count decides over timings that put a fallback read under 80% of the call (as a
        // TCG guest's did), and over a slow read that made no call.
        let why = judge_read(true, 500.0, 850.0, "arm_global_timer", Some(65)).unwrap();
        assert!(
            why.starts_with("the kernel counted 65 system calls during 64 reads"),
            "{why}"
        );
        assert_eq!(judge_read(true, 900.0, 850.0, "tsc", Some(1)), None);
    }

    #[test]
    fn sparse_clock_choice() {
        let fast = ClockInfo::mock();
        let slow = ClockInfo {
            read_is_syscall: Some("this process has no vDSO".into()),
            ..ClockInfo::mock()
        };
        assert_eq!(sparse_clock((None, None), &fast, true), None);
        assert_eq!(
            sparse_clock((Some(1), None), &slow, true),
            None,
            "--clock-every 1 asks for a read per op"
        );
        assert_eq!(
            sparse_clock((None, None), &slow, false),
            None,
            "queued methods read per round"
        );
        let auto = sparse_clock((None, None), &slow, true).unwrap();
        assert_eq!(auto.every, AUTO_CLOCK_EVERY);
        assert!(
            auto.chosen.contains("iolab's choice") && auto.chosen.contains("no vDSO"),
            "{auto:?}"
        );
        let asked = sparse_clock((Some(64), None), &fast, true).unwrap();
        assert_eq!(asked.chosen, "--clock-every 64");
        assert!(asked
            .latency_unavailable
            .contains("one clock read every 64 ops"));
    }

    #[test]
    fn mock_clock_steps() {
        let c = MockClock::new(5);
        let a = c.now();
        assert_eq!(c.now() - a, 5);
    }
}

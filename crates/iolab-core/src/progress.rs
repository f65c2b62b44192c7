//! Progress displays that do not touch the measured process: a forked helper process reads a
//! [`Board`] in shared memory, which the runner fills (the pass it is in, the pass's bounds, when its
//! ops started and ended, and the ops finished so far with the clock tick they were counted at, added by
//! the workers about every 50 ms from the clock reads they make anyway), and draws from it. The measured process gains no thread (a second thread
//! makes a one-thread run's syscalls dearer, see cleanup.rs) and writes nothing to the terminal while it
//! runs. The drawing is the caller's (a [`Draw`]); this module owns the page, the fork, the helper's life
//! and what the board's numbers mean ([`View`]: the pass's name, how far it is, the live rate, the ETA).
//!
//! A sweep, suite or `run --repeat` forks one helper per run (between runs the process has one thread
//! again), so each helper knows which run it shows; the command prints a run's line after stopping its
//! helper, so the two never write to the terminal at once.

use crate::spec::Spec;
use crate::sys;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often the helper looks at the board.
pub const EVERY: Duration = Duration::from_millis(100);
/// How often the workers add their finished ops to the board, in seconds of their clock.
pub const PUBLISH_S: f64 = 0.05;
/// The live rate is measured over the last this many seconds (or the pass so far).
const RATE_WINDOW: Duration = Duration::from_secs(2);

/// What the measured process is doing, as the board tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Between passes, or work that is no iolab run (a suite's decimal lines).
    Other,
    /// `--count separate|full`: the untimed pass with the kernel's tracepoints on.
    Counting,
    /// `--profile separate`: the untimed pass sampled for its profile.
    Profiling,
    /// An untimed warm-up before the timed pass (a hook: a runner that warms up says so here).
    Warmup,
    /// The pass whose figures are the result.
    Timed,
}

impl Stage {
    const ALL: [Stage; 5] = [
        Stage::Other,
        Stage::Counting,
        Stage::Profiling,
        Stage::Warmup,
        Stage::Timed,
    ];

    /// The pass as the display names it.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Other => "running",
            Stage::Counting => "counting pass (untimed, tracepoints on)",
            Stage::Profiling => "profile pass (untimed, sampled)",
            Stage::Warmup => "warm-up (untimed)",
            Stage::Timed => "timed pass",
        }
    }

    /// The same, short, for narrow terminals.
    pub fn short(self) -> &'static str {
        match self {
            Stage::Other => "running",
            Stage::Counting => "counting pass",
            Stage::Profiling => "profile pass",
            Stage::Warmup => "warm-up",
            Stage::Timed => "timed pass",
        }
    }
}

// The board's counters.
const DONE: usize = 0;
const STOP: usize = 1;
const STAGE: usize = 2;
/// CLOCK_MONOTONIC ns when the pass's first ops started; 0: not yet (setting up).
const STARTED: usize = 3;
/// The pass's bounds: ops (0: none) and duration in µs (0: none), and its bytes per op.
const GOAL_OPS: usize = 4;
const GOAL_US: usize = 5;
const BS: usize = 6;
/// Bumped (by two) around every change of the fields below: odd while they change.
const GEN: usize = 7;
/// The runner's clock: its rate (f64 bits), the tick the pass's ops started at, and the latest tick a
/// worker published its count at (so the rate is ops over the workers' own time, not the helper's).
const HZ: usize = 8;
const START_TICK: usize = 9;
const LAST_TICK: usize = 10;
/// 1 once the pass's ops are over (it is closing: counters, --verify, clean-up).
const ENDED: usize = 11;
const N: usize = 12;

/// The page the measured process and the helper share.
#[derive(Clone, Copy)]
pub struct Board {
    c: &'static [AtomicU64; N],
}

/// One consistent reading of the board.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Look {
    pub stage: Stage,
    /// The pass's ops started at this CLOCK_MONOTONIC time (ns).
    pub started_ns: Option<u64>,
    pub done: u64,
    pub goal_ops: Option<u64>,
    pub goal_s: Option<f64>,
    pub bs: u64,
    /// Which pass (changes with every pass begun).
    pub gen: u64,
    /// The runner's clock rate (0: unknown), the tick the ops started at and the tick `done` was
    /// published at.
    pub hz: f64,
    pub start_tick: u64,
    pub last_tick: u64,
    /// The pass's ops are over.
    pub ended: bool,
}

impl Board {
    /// A new shared page, or None when it cannot be had (the command then runs without a display).
    pub fn new() -> Option<Board> {
        sys::shared_counters::<N>().ok().map(|c| Board { c })
    }

    /// A worker adds `n` ops it finished, counted at its clock's tick `tick`.
    #[inline]
    pub fn publish(&self, n: u64, tick: u64) {
        self.c[DONE].fetch_add(n, Ordering::Relaxed);
        self.c[LAST_TICK].fetch_max(tick, Ordering::Relaxed);
    }

    /// A pass of `stage` begins (nothing done, its ops not started yet), bounded by `spec`'s ops and
    /// duration (the spec of that pass: a counting pass's sample is smaller than the workload).
    pub fn begin(&self, stage: Stage, spec: Option<&Spec>) {
        let c = self.c;
        c[GEN].fetch_add(1, Ordering::AcqRel);
        for i in [DONE, STARTED, HZ, START_TICK, LAST_TICK, ENDED] {
            c[i].store(0, Ordering::Relaxed);
        }
        c[STAGE].store(stage as u64, Ordering::Relaxed);
        let ops = spec.and_then(|s| s.ops).unwrap_or(0);
        let us = spec
            .and_then(|s| s.duration_s)
            .map_or(0, |d| (d * 1e6).ceil() as u64);
        c[GOAL_OPS].store(ops, Ordering::Relaxed);
        c[GOAL_US].store(us, Ordering::Relaxed);
        c[BS].store(spec.map_or(0, |s| s.bs), Ordering::Relaxed);
        c[GEN].fetch_add(1, Ordering::AcqRel);
    }

    /// The pass's ops start now, at tick `tick` of the runner's clock of `hz` ticks per second (0: no
    /// ticks will be published); called by the runner just before it lets its workers go.
    pub fn started(&self, tick: u64, hz: f64) {
        let c = self.c;
        c[GEN].fetch_add(1, Ordering::AcqRel);
        c[STARTED].store(sys::monotonic_ns().max(1), Ordering::Relaxed);
        c[HZ].store(hz.to_bits(), Ordering::Relaxed);
        c[START_TICK].store(tick, Ordering::Relaxed);
        c[LAST_TICK].store(tick, Ordering::Relaxed);
        c[GEN].fetch_add(1, Ordering::AcqRel);
    }

    /// The pass's ops are over (what follows: its counters, --verify, the target's clean-up).
    pub fn ended(&self) {
        self.c[ENDED].store(1, Ordering::Release);
    }

    /// The board as it is, or None while the measured process is changing it.
    pub fn look(&self) -> Option<Look> {
        let c = self.c;
        let g0 = c[GEN].load(Ordering::Acquire);
        if g0 % 2 == 1 {
            return None;
        }
        let stage = Stage::ALL
            .get(c[STAGE].load(Ordering::Relaxed) as usize)
            .copied()
            .unwrap_or(Stage::Other);
        let started = c[STARTED].load(Ordering::Relaxed);
        let (ops, us) = (
            c[GOAL_OPS].load(Ordering::Relaxed),
            c[GOAL_US].load(Ordering::Relaxed),
        );
        let bs = c[BS].load(Ordering::Relaxed);
        let (hz, start_tick) = (
            f64::from_bits(c[HZ].load(Ordering::Relaxed)),
            c[START_TICK].load(Ordering::Relaxed),
        );
        let ended = c[ENDED].load(Ordering::Acquire) == 1;
        // The count, then its tick: a count is never newer than the tick read with it.
        let done = c[DONE].load(Ordering::Acquire);
        let last_tick = c[LAST_TICK].load(Ordering::Acquire);
        (c[GEN].load(Ordering::Acquire) == g0).then_some(Look {
            stage,
            started_ns: (started > 0).then_some(started),
            done,
            goal_ops: (ops > 0).then_some(ops),
            goal_s: (us > 0).then_some(us as f64 * 1e-6),
            bs,
            gen: g0,
            hz,
            start_tick,
            last_tick,
            ended,
        })
    }
}

/// What the display shows at one look.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    pub stage: Stage,
    /// Seconds since the pass's ops started (None: setting up).
    pub elapsed_s: Option<f64>,
    pub done: u64,
    pub goal_ops: Option<u64>,
    pub goal_s: Option<f64>,
    /// How far the pass is, 0..1 (the further of its ops and its time), when it has a bound.
    pub fraction: Option<f64>,
    /// Ops and bytes per second over the last [`RATE_WINDOW`] (or the pass so far), once ops were counted.
    pub ops_s: Option<f64>,
    pub bytes_s: Option<f64>,
    /// Seconds left of the pass: of its --duration exactly (from when its ops started), of its ops from
    /// the live rate, whichever ends first; None until it can be told.
    pub eta_s: Option<f64>,
    /// The pass's ops are over; it is closing.
    pub ended: bool,
}

/// The live rate: (time, ops done) at each look of the current pass, the time in the runner's clock
/// ticks where it publishes them (the ops' own time), else in the helper's ns.
#[derive(Default)]
pub struct Rate {
    gen: u64,
    seen: VecDeque<(u64, u64)>,
}

impl Rate {
    /// Ops per second over the window ending at the pass `look` seen at `now` (ns).
    fn update(&mut self, look: &Look, now: u64) -> Option<f64> {
        if look.gen != self.gen {
            self.seen.clear();
            self.gen = look.gen;
        }
        let start = look.started_ns?;
        let ticks = look.hz > 0.0;
        let (t, per_s) = match ticks {
            true => (look.last_tick, look.hz),
            false => (now, 1e9),
        };
        if self.seen.is_empty() {
            self.seen
                .push_back((if ticks { look.start_tick } else { start }, 0));
        }
        if self.seen.back().is_some_and(|b| b.0 < t || !ticks) {
            self.seen.push_back((t, look.done));
        }
        let window = (RATE_WINDOW.as_secs_f64() * per_s) as u64;
        while self.seen.len() > 2 && t.saturating_sub(self.seen[1].0) >= window {
            self.seen.pop_front();
        }
        let (t0, d0) = self.seen[0];
        let (t1, d1) = *self.seen.back()?;
        let dt = t1.saturating_sub(t0) as f64 / per_s;
        (d1 > 0 && dt > 0.0).then(|| d1.saturating_sub(d0) as f64 / dt)
    }
}

/// The view of `look` at CLOCK_MONOTONIC `now` (ns), with the rate measured so far.
pub fn view(look: &Look, now: u64, rate: &mut Rate) -> View {
    let ops_s = rate.update(look, now);
    let elapsed_s = look.started_ns.map(|s| now.saturating_sub(s) as f64 * 1e-9);
    let by_time = look.goal_s.zip(elapsed_s).map(|(d, e)| (d - e).max(0.0));
    let by_ops = look.goal_ops.zip(ops_s).and_then(|(n, r)| {
        (r > 0.0 && elapsed_s.is_some()).then(|| n.saturating_sub(look.done) as f64 / r)
    });
    let eta_s = match (by_time, by_ops) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let of_ops = look.goal_ops.map(|n| look.done as f64 / n as f64);
    let of_time = look.goal_s.zip(elapsed_s).map(|(d, e)| e / d);
    let fraction = match (of_ops, of_time) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
    .map(|f| f.clamp(0.0, 1.0));
    View {
        stage: look.stage,
        elapsed_s,
        done: look.done,
        goal_ops: look.goal_ops,
        goal_s: look.goal_s,
        fraction: if elapsed_s.is_some() { fraction } else { None },
        ops_s,
        bytes_s: ops_s.map(|r| r * look.bs as f64),
        eta_s: if look.ended { Some(0.0) } else { eta_s },
        ended: look.ended,
    }
}

/// The helper's drawing, given by the caller (the helper runs it in the forked process).
pub trait Draw {
    /// Every [`EVERY`] once the helper's quiet time is over.
    fn show(&mut self, v: &View);
    /// The helper was told to stop: clear what was drawn.
    fn clear(&mut self);
}

/// A running helper process; [`Watcher::stop`] ends it.
pub struct Watcher {
    pid: i32,
    board: Board,
}

impl Watcher {
    /// Forks the helper drawing `board` with `draw`, which draws nothing for its first `quiet` (a short
    /// run shows no display). Call it only while the process has one thread (between runs). `None` when
    /// the fork fails (the work then goes on without a display).
    pub fn start(board: Board, quiet: Duration, draw: impl Draw) -> Option<Watcher> {
        board.c[STOP].store(0, Ordering::SeqCst);
        match sys::fork() {
            Ok(0) => helper(board, quiet, draw),
            Ok(pid) => Some(Watcher { pid, board }),
            Err(_) => None,
        }
    }

    /// Tells the helper to clear its display and exit, and waits for it.
    pub fn stop(self) {
        self.board.c[STOP].store(1, Ordering::SeqCst);
        let _ = sys::waitpid(self.pid);
    }
}

/// The forked helper's life: dies with the parent, looks every [`EVERY`], draws once `quiet` is over,
/// clears and exits when told to stop.
fn helper(board: Board, quiet: Duration, mut draw: impl Draw) -> ! {
    let _ = sys::child_dies_with_parent();
    let t0 = Instant::now();
    let mut rate = Rate::default();
    let mut drawn = false;
    loop {
        if board.c[STOP].load(Ordering::SeqCst) == 1 {
            if drawn {
                draw.clear();
            }
            sys::exit_now(0);
        }
        if let Some(look) = board.look() {
            let v = view(&look, sys::monotonic_ns(), &mut rate);
            if t0.elapsed() >= quiet {
                drawn = true;
                draw.show(&v);
            }
        }
        std::thread::sleep(EVERY);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn look(
        stage: Stage,
        started: Option<u64>,
        done: u64,
        ops: Option<u64>,
        d: Option<f64>,
    ) -> Look {
        Look {
            stage,
            started_ns: started,
            done,
            goal_ops: ops,
            goal_s: d,
            bs: 4096,
            gen: 2,
            hz: 0.0,
            start_tick: 0,
            last_tick: 0,
            ended: false,
        }
    }

    #[test]
    fn a_duration_pass_ends_when_its_duration_does() {
        let mut r = Rate::default();
        let l = look(Stage::Timed, Some(10 * S), 0, None, Some(3.0));
        let v = view(&l, 11 * S + S / 5, &mut r);
        assert!((v.eta_s.unwrap() - 1.8).abs() < 1e-9, "{v:?}");
        assert!((v.fraction.unwrap() - 0.4).abs() < 1e-9);
        // No ops counted yet: no rate, but the ETA is the duration's.
        assert_eq!(v.ops_s, None);
        let l = look(Stage::Timed, Some(10 * S), 5_000, None, Some(3.0));
        let v = view(&l, 12 * S, &mut r);
        assert!((v.eta_s.unwrap() - 1.0).abs() < 1e-9, "{v:?}");
        assert_eq!(v.ops_s, Some(2_500.0));
        assert_eq!(v.bytes_s, Some(2_500.0 * 4096.0));
    }

    #[test]
    fn an_ops_pass_ends_by_its_live_rate_and_a_duration_cap() {
        let mut r = Rate::default();
        let at = |done| look(Stage::Timed, Some(0), done, Some(1_000_000), Some(10.0));
        let v = view(&at(100_000), S, &mut r);
        assert_eq!(v.eta_s, Some(9.0));
        // The rate doubles: the ETA follows within the window.
        let v = view(&at(300_000), 2 * S, &mut r);
        let v2 = view(&at(700_000), 3 * S, &mut r);
        assert!(v2.eta_s.unwrap() < v.eta_s.unwrap());
        assert!((v2.ops_s.unwrap() - 300_000.0).abs() < 1.0, "{v2:?}");
        assert!((v2.eta_s.unwrap() - 1.0).abs() < 1e-9, "{v2:?}");
        // The duration bound comes first.
        let slow = look(Stage::Timed, Some(0), 1_000, Some(1_000_000), Some(10.0));
        let v = view(&slow, 9 * S, &mut Rate::default());
        assert!((v.eta_s.unwrap() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn a_new_pass_starts_its_rate_afresh_and_setup_has_no_eta() {
        let mut r = Rate::default();
        let counting = look(Stage::Counting, Some(0), 10_000, Some(10_000), None);
        let v = view(&counting, S / 4, &mut r);
        assert_eq!(v.stage.name(), "counting pass (untimed, tracepoints on)");
        assert_eq!(v.ops_s, Some(40_000.0));
        let setup = Look {
            gen: 4,
            ..look(Stage::Timed, None, 0, Some(600_000), None)
        };
        let v = view(&setup, S / 2, &mut r);
        assert_eq!((v.eta_s, v.fraction, v.ops_s), (None, None, None));
        let timed = Look {
            gen: 6,
            ..look(Stage::Timed, Some(S), 0, Some(600_000), None)
        };
        let v = view(&timed, S + S / 10, &mut r);
        assert_eq!((v.eta_s, v.ops_s), (None, None));
        let timed = Look {
            done: 60_000,
            ..timed
        };
        let v = view(&timed, 2 * S, &mut r);
        assert!((v.eta_s.unwrap() - 9.0).abs() < 1e-9, "{v:?}");
    }

    #[test]
    fn the_board_reads_back_what_the_runner_wrote() {
        let b = Board::new().unwrap();
        let spec = crate::spec::RawSpec::new()
            .with("duration", "3")
            .with("bs", "8k")
            .resolve()
            .unwrap();
        b.begin(Stage::Timed, Some(&spec));
        let l = b.look().unwrap();
        assert_eq!(
            (l.stage, l.started_ns, l.goal_s, l.goal_ops, l.bs),
            (Stage::Timed, None, Some(3.0), None, 8192)
        );
        b.started(1000, 1e6);
        b.publish(1024, 3000);
        let l2 = b.look().unwrap();
        assert!(l2.started_ns.is_some() && l2.done == 1024 && l2.gen > l.gen);
        assert_eq!(
            (l2.start_tick, l2.last_tick, l2.hz, l2.ended),
            (1000, 3000, 1e6, false)
        );
        // 1024 ops in 2000 ticks of a 1 MHz clock, whenever the helper looks.
        let v = view(&l2, sys::monotonic_ns() + 5 * S, &mut Rate::default());
        assert_eq!(v.ops_s, Some(512_000.0));
        b.ended();
        let l3 = b.look().unwrap();
        assert!(l3.ended && view(&l3, 0, &mut Rate::default()).eta_s == Some(0.0));
        b.begin(Stage::Counting, None);
        let l4 = b.look().unwrap();
        assert!(!l4.ended && l4.done == 0 && l4.started_ns.is_none());
    }
}

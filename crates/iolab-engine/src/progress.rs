//! Progress displays that do not touch the measured process: a forked helper process reads a
//! [`Board`] in shared memory, which the runner fills (the pass it is in, the pass's bounds, when its
//! ops started and ended, and the ops finished so far with the clock tick they were counted at, added by
//! the workers about every 50 ms from the clock reads they make anyway), and draws from it. The measured process gains no thread (a second thread
//! makes a one-thread run's syscalls dearer, see cleanup.rs) and writes nothing to the terminal while it
//! runs. The drawing is the caller's (a [`Draw`]); this module owns the page, the fork, the helper's life
//! and what the board's numbers mean ([`View`]: the pass's name, how far it is, the live rate, the ETA).
//!
//! The helper is forked before the first run, so it never inherits the runner's perf counters (they
//! count the tasks forked after they were opened): a sweep, suite or `run --repeat` keeps one helper
//! for all its runs and tells it which run goes on (number, label) on the board. To print a run's line
//! the command puts the helper on hold ([`Board::hold`]: it clears its line and says so, woken at once
//! through a futex in the shared page) and lets it go on after ([`Board::release`]), so the two never
//! write to the terminal at once.

use iolab_sys as sys;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
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
/// The run of a series (number from 1, of how many; 0: not a series), the seconds the runs after it may
/// take (f64 bits; 0: unknown), and its label (length in bytes, then the bytes, 8 a counter).
const RUN_I: usize = 12;
const RUN_N: usize = 13;
const THEN: usize = 14;
const LABEL_LEN: usize = 15;
const LABEL: usize = 16;
const LABEL_MAX: usize = 256;
/// The command's hold on the display: the number of its latest hold, 0 when there is none.
const HOLD: usize = LABEL + LABEL_MAX / 8;
const N: usize = HOLD + 1;
// The futex words: bumped to wake the helper (stop, hold, release), and the hold the helper cleared for.
const SIG: usize = 0;
const HELD: usize = 1;
/// The longest the command waits for the helper to clear its line (it may have died).
const HOLD_WAIT: Duration = Duration::from_secs(1);

/// What a pass is bounded by: its ops, its duration (either may be unbounded), and its block size.
#[derive(Debug, Clone, Copy)]
pub struct Goal {
    pub ops: Option<u64>,
    pub duration_s: Option<f64>,
    pub bs: u64,
}

impl Goal {
    pub fn of(ops: Option<u64>, duration_s: Option<f64>, bs: u64) -> Goal {
        Goal {
            ops,
            duration_s,
            bs,
        }
    }

    /// A run's goal; with `--bs-split` the ops and bytes per op its mean length gives (a live estimate).
    pub fn of_spec(spec: &crate::spec::Spec) -> Goal {
        let mean = spec.mean_len();
        let ops = spec
            .ops
            .or(spec.bytes.map(|b| (b as f64 / mean).ceil() as u64));
        Goal::of(ops, spec.duration_s, mean.round() as u64)
    }
}

/// The page the measured process and the helper share.
#[derive(Clone, Copy)]
pub struct Board {
    c: &'static [AtomicU64; N],
    w: &'static [AtomicU32; 2],
}

/// One consistent reading of the board.
#[derive(Debug, Clone, PartialEq)]
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
    /// A series' run: its number and how many (from 1), its label and what the runs after it may take.
    pub run: Option<(u64, u64)>,
    pub label: String,
    pub then_s: Option<f64>,
}

impl Board {
    /// A new shared page, or None when it cannot be had (the command then runs without a display).
    pub fn new() -> Option<Board> {
        let c = sys::shared_counters::<N>().ok()?;
        let w = sys::shared_words::<2>().ok()?;
        Some(Board { c, w })
    }

    /// Run `i` of `n` (from 1) of a series begins, labelled `label` (cut to 256 bytes); the runs after it
    /// may take `then_s` seconds.
    pub fn set_run(&self, i: usize, n: usize, label: &str, then_s: Option<f64>) {
        let c = self.c;
        let mut end = label.len().min(LABEL_MAX);
        while !label.is_char_boundary(end) {
            end -= 1;
        }
        let bytes = &label.as_bytes()[..end];
        c[GEN].fetch_add(1, Ordering::AcqRel);
        c[RUN_I].store(i as u64, Ordering::Relaxed);
        c[RUN_N].store(n as u64, Ordering::Relaxed);
        c[THEN].store(then_s.unwrap_or(0.0).to_bits(), Ordering::Relaxed);
        c[LABEL_LEN].store(end as u64, Ordering::Relaxed);
        for (k, chunk) in bytes.chunks(8).enumerate() {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            c[LABEL + k].store(u64::from_le_bytes(word), Ordering::Relaxed);
        }
        c[GEN].fetch_add(1, Ordering::AcqRel);
    }

    /// Wakes the helper to look at the board now.
    fn signal(&self) {
        self.w[SIG].fetch_add(1, Ordering::SeqCst);
        let _ = sys::futex_wake_shared(&self.w[SIG], 1);
    }

    /// Puts the helper on hold: returns once it has cleared its line (or after a second, if it does not
    /// answer), so that the caller can print. [`Board::release`] lets it draw again.
    pub fn hold(&self) {
        let seq = (self.c[HOLD].load(Ordering::SeqCst) as u32)
            .wrapping_add(1)
            .max(1);
        // A hold's number never repeats the previous one, so an old answer is never taken for this one.
        let seq = if seq == self.w[HELD].load(Ordering::SeqCst) {
            seq.wrapping_add(1).max(1)
        } else {
            seq
        };
        self.c[HOLD].store(u64::from(seq), Ordering::SeqCst);
        self.signal();
        let until = Instant::now() + HOLD_WAIT;
        loop {
            let held = self.w[HELD].load(Ordering::SeqCst);
            let left = until.saturating_duration_since(Instant::now());
            if held == seq || left.is_zero() {
                return;
            }
            let _ = sys::futex_wait_shared(&self.w[HELD], held, left);
        }
    }

    /// Ends a hold: the helper draws again.
    pub fn release(&self) {
        self.c[HOLD].store(0, Ordering::SeqCst);
        self.signal();
    }

    /// A worker adds `n` ops it finished, counted at its clock's tick `tick`.
    #[inline]
    pub fn publish(&self, n: u64, tick: u64) {
        self.c[DONE].fetch_add(n, Ordering::Relaxed);
        self.c[LAST_TICK].fetch_max(tick, Ordering::Relaxed);
    }

    /// A pass of `stage` begins (nothing done, its ops not started yet), bounded by `goal` (that pass's:
    /// a counting pass's sample is smaller than the workload).
    pub fn begin(&self, stage: Stage, goal: Option<Goal>) {
        let c = self.c;
        c[GEN].fetch_add(1, Ordering::AcqRel);
        for i in [DONE, STARTED, HZ, START_TICK, LAST_TICK, ENDED] {
            c[i].store(0, Ordering::Relaxed);
        }
        c[STAGE].store(stage as u64, Ordering::Relaxed);
        let ops = goal.and_then(|g| g.ops).unwrap_or(0);
        let us = goal
            .and_then(|g| g.duration_s)
            .map_or(0, |d| (d * 1e6).ceil() as u64);
        c[GOAL_OPS].store(ops, Ordering::Relaxed);
        c[GOAL_US].store(us, Ordering::Relaxed);
        c[BS].store(goal.map_or(0, |g| g.bs), Ordering::Relaxed);
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
        let (run_i, run_n) = (
            c[RUN_I].load(Ordering::Relaxed),
            c[RUN_N].load(Ordering::Relaxed),
        );
        let then = f64::from_bits(c[THEN].load(Ordering::Relaxed));
        let len = (c[LABEL_LEN].load(Ordering::Relaxed) as usize).min(LABEL_MAX);
        let mut label: Vec<u8> = (0..len.div_ceil(8))
            .flat_map(|k| c[LABEL + k].load(Ordering::Relaxed).to_le_bytes())
            .collect();
        label.truncate(len);
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
            run: (run_n > 0).then_some((run_i, run_n)),
            label: String::from_utf8_lossy(&label).into_owned(),
            then_s: (then > 0.0).then_some(then),
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
    /// A series' run (number, how many), its label and what the runs after it may take (seconds).
    pub run: Option<(u64, u64)>,
    pub label: String,
    pub then_s: Option<f64>,
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
        run: look.run,
        label: look.label.clone(),
        then_s: look.then_s,
    }
}

/// The helper's drawing, given by the caller (the helper runs it in the forked process).
pub trait Draw {
    /// Every [`EVERY`] once the helper's quiet time is over.
    fn show(&mut self, v: &View);
    /// The helper was told to stop, or to hold: clear what was drawn.
    fn clear(&mut self);
}

/// A running helper process; [`Watcher::stop`] ends it.
pub struct Watcher {
    pid: i32,
    board: Board,
}

impl Watcher {
    /// Forks the helper drawing `board` with `draw`, which draws nothing for its first `quiet` (a short
    /// run shows no display). Call it only while the process has one thread, before any run (see the
    /// module's doc). `None` when the fork fails (the work then goes on without a display).
    pub fn start(board: Board, quiet: Duration, draw: impl Draw) -> Option<Watcher> {
        board.c[STOP].store(0, Ordering::SeqCst);
        let parent = std::process::id() as i32;
        match sys::fork() {
            Ok(0) => helper(board, quiet, draw, parent),
            Ok(pid) => {
                crate::cleanup::status_line_shown(true);
                Some(Watcher { pid, board })
            }
            Err(_) => None,
        }
    }

    /// Tells the helper to clear its display and exit, and waits for it.
    pub fn stop(self) {
        self.board.c[STOP].store(1, Ordering::SeqCst);
        self.board.signal();
        let _ = sys::waitpid(self.pid);
        crate::cleanup::status_line_shown(false);
    }
}

/// The forked helper's life: dies with the parent (and ignores the terminal's Ctrl-C: the parent's
/// handler cleans up, and clears the line), looks at the board every [`EVERY`] or when woken, draws once
/// `quiet` is over while the parent lives, clears on a hold (and answers it), clears and exits when told
/// to stop.
fn helper(board: Board, quiet: Duration, mut draw: impl Draw, parent: i32) -> ! {
    let _ = sys::child_dies_with_parent();
    let _ = sys::block_signals(&[libc::SIGINT, libc::SIGTERM, libc::SIGHUP]);
    let (c, w) = (board.c, board.w);
    let t0 = Instant::now();
    let mut rate = Rate::default();
    let mut drawn = false;
    loop {
        let sig = w[SIG].load(Ordering::SeqCst);
        if c[STOP].load(Ordering::SeqCst) == 1 {
            if drawn {
                draw.clear();
            }
            sys::exit_now(0);
        }
        let hold = c[HOLD].load(Ordering::SeqCst) as u32;
        if hold != 0 {
            if drawn {
                draw.clear();
                drawn = false;
            }
            if w[HELD].swap(hold, Ordering::SeqCst) != hold {
                let _ = sys::futex_wake_shared(&w[HELD], 1);
            }
        } else if let Some(look) = board.look() {
            let v = view(&look, sys::monotonic_ns(), &mut rate);
            if sys::getppid() != parent {
                sys::exit_now(0);
            }
            if t0.elapsed() >= quiet {
                drawn = true;
                draw.show(&v);
            }
        }
        let _ = sys::futex_wait_shared(&w[SIG], sig, EVERY);
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
            run: None,
            label: String::new(),
            then_s: None,
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
        b.begin(
            Stage::Timed,
            Some(Goal::of(spec.ops, spec.duration_s, spec.bs)),
        );
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
        // A series' run and its label (cut at 256 bytes, on a character's boundary).
        assert_eq!((l4.run, l4.label.as_str(), l4.then_s), (None, "", None));
        b.set_run(3, 12, "bs=4k method=psync", Some(25.0));
        let l5 = b.look().unwrap();
        assert_eq!(
            (l5.run, l5.label.as_str(), l5.then_s),
            (Some((3, 12)), "bs=4k method=psync", Some(25.0))
        );
        let long = "é".repeat(200);
        b.set_run(4, 12, &long, None);
        let l6 = b.look().unwrap();
        assert_eq!(l6.label, "é".repeat(128));
        assert_eq!(view(&l6, 0, &mut Rate::default()).run, Some((4, 12)));
    }
}

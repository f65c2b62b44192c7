//! `iolab run`'s progress display without touching the measured process: a forked helper process watches a
//! counter in shared memory that the runner's workers add to every 1024 ops, and draws from it. The
//! measured process gains no thread (a second thread makes a one-thread run's syscalls dearer, see
//! cleanup.rs) and writes nothing to the terminal while it is timed. The drawing itself is the caller's
//! (a [`Draw`]); this module owns the page, the fork, the helper's life and what the counter means.

use crate::spec::Spec;
use crate::sys;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often the helper looks at the counter.
const EVERY: Duration = Duration::from_millis(100);
/// The helper draws nothing before the run has taken this long (short runs show no bar).
const QUIET: Duration = Duration::from_secs(1);

/// What the display counts towards, from the spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Goal {
    /// Ops of the timed pass, out of `--ops`.
    Ops(u64),
    /// Milliseconds of the timed pass, out of `--duration`.
    Millis(u64),
    /// Neither bound known: only show that it is running.
    Open,
}

impl Goal {
    pub fn of(spec: &Spec) -> Goal {
        match (spec.ops, spec.duration_s) {
            (Some(n), _) => Goal::Ops(n),
            (None, Some(d)) => Goal::Millis((d * 1000.0) as u64),
            (None, None) => Goal::Open,
        }
    }
}

/// Where the display stands at one look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// This far towards the goal (ops, or ms since the first ops were counted).
    At(u64),
    /// Nothing to place yet: just show it is alive.
    Tick,
}

/// The position for `done` ops counted, the first of them counted `moving` ago (none yet: `None`).
pub fn position(goal: Goal, done: u64, moving: Option<Duration>) -> Position {
    match (goal, moving) {
        (Goal::Ops(n), _) => Position::At(done.min(n)),
        (_, Some(m)) => Position::At(m.as_millis() as u64),
        (_, None) => Position::Tick,
    }
}

/// The helper's drawing, given by the caller (the helper runs it in the forked process).
pub trait Draw {
    /// Every 100 ms once the run has taken a second.
    fn show(&mut self, goal: Goal, at: Position);
    /// The run ended: clear what was drawn.
    fn clear(&mut self);
}

/// A running helper process; [`Watcher::stop`] ends it.
pub struct Watcher {
    pid: i32,
    /// [0]: ops counted by the workers; [1]: set to 1 to stop the helper.
    shm: &'static [AtomicU64; 2],
}

impl Watcher {
    /// Forks the helper drawing with `draw` towards the spec's goal. Call it only while the process has one
    /// thread (before the run starts). `None` when the shared page or the fork cannot be had (the run then
    /// goes on without a display).
    pub fn start(spec: &Spec, draw: impl Draw) -> Option<Watcher> {
        let shm = sys::shared_counters().ok()?;
        let goal = Goal::of(spec);
        match sys::fork() {
            Ok(0) => helper(shm, goal, draw),
            Ok(pid) => Some(Watcher { pid, shm }),
            Err(_) => None,
        }
    }

    /// The counter the runner's workers add their finished ops to (give it to the runner).
    pub fn counter(&self) -> &'static AtomicU64 {
        &self.shm[0]
    }

    /// Tells the helper to clear its display and exit, and waits for it.
    pub fn stop(self) {
        self.shm[1].store(1, Ordering::SeqCst);
        let _ = sys::waitpid(self.pid);
    }
}

/// The forked helper's life: dies with the parent, looks every 100 ms, draws after the first second,
/// clears and exits when told to stop.
fn helper(shm: &'static [AtomicU64; 2], goal: Goal, mut draw: impl Draw) -> ! {
    let _ = sys::child_dies_with_parent();
    let t0 = Instant::now();
    let mut moving: Option<Instant> = None;
    let mut drawn = false;
    loop {
        std::thread::sleep(EVERY);
        let done = shm[0].load(Ordering::Relaxed);
        if shm[1].load(Ordering::SeqCst) == 1 {
            if drawn {
                draw.clear();
            }
            sys::exit_now(0);
        }
        if done > 0 && moving.is_none() {
            moving = Some(Instant::now());
        }
        if t0.elapsed() < QUIET {
            continue;
        }
        drawn = true;
        draw.show(goal, position(goal, done, moving.map(|m| m.elapsed())));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_follow_the_goal() {
        let s = Duration::from_millis(1500);
        assert_eq!(position(Goal::Ops(100), 250, Some(s)), Position::At(100));
        assert_eq!(position(Goal::Ops(100), 0, None), Position::At(0));
        assert_eq!(position(Goal::Millis(3000), 7, Some(s)), Position::At(1500));
        assert_eq!(position(Goal::Millis(3000), 0, None), Position::Tick);
        assert_eq!(position(Goal::Open, 0, None), Position::Tick);
    }
}

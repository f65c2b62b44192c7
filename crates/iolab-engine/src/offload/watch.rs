//! What iolab does while an offload client runs, wherever the client is (a sandboxed process, a guest
//! partition): it samples the client's completion counter, records each window's time per request, stops
//! the client at --duration, and notices a stopped broker or a client that makes no progress. Each caller
//! adds only how it hears from its client (a pipe, a word in the guest's header).

use super::broker;
use super::setup::Span;
use super::setup::STALL_S;
use crate::error::{Error, Result};
use crate::measure::cpu;
use crate::measure::cpu::Rusage;
use crate::measure::hist::{new_hist, Hist};
use crate::offload::shm::Ctl;
use crate::runner::Sample;
use crate::spec::{OffloadPath, Spec};
use iolab_sys as sys;
use std::sync::atomic::Ordering;

/// The timed span of a client run, wherever the client is: the SQPOLL thread woken first (`sq_ring`; it
/// sleeps since setup or the attack phase, and its first doorbell would otherwise be in the span), the
/// server threads' sleeps and the process's CPU sampled around it, and `go(t0, hist)` (tell the client
/// "go" at `t0`, then watch it: the time of its 'done' and the windows that saw completions) in between.
pub fn timed_span(
    spec: &Spec,
    ctl: &Ctl,
    sq_ring: Option<i32>,
    go: impl FnOnce(u64, &mut Hist) -> Result<(u64, u64)>,
) -> Result<Span> {
    if let Some(fd) = sq_ring {
        let _ = sys::io_uring_enter(fd, 0, 0, sys::IORING_ENTER_SQ_WAKEUP);
    }
    // The broker thread names itself once running: give it up to 50 ms to appear.
    let path = spec.offload.path;
    let mut sleeps0 = None;
    for _ in 0..250 {
        sleeps0 = super::server::server_sleeps(path);
        if sleeps0.is_some() || path == OffloadPath::Native {
            break;
        }
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
    let before = sample();
    let mut hist = new_hist();
    let t0 = sys::monotonic_ns();
    let (t1, windows) = go(t0, &mut hist)?;
    let after = sample();
    let sleeps1 = super::server::server_sleeps(path);
    Ok(Span {
        server_sleeps: super::server::sleeps_between(&sleeps0, &sleeps1),
        t0,
        t1,
        ops: ctl.completed.0.load(Ordering::Acquire),
        hist,
        windows,
        before,
        after,
    })
}

/// The state of one watched run.
pub struct Watch {
    t0: u64,
    last_t: u64,
    last_c: u64,
    stall_since: u64,
    stopped: bool,
    /// Windows that saw completions.
    pub windows: u64,
    /// The shortest window recorded, ns (0: every sample with progress is a window).
    min_window_ns: u64,
}

/// What a step saw.
pub enum Seen {
    Running,
    /// No completion for `STALL_S`: the caller kills or aborts the client; `completed` so far.
    Stalled {
        completed: u64,
    },
}

impl Watch {
    /// The run started at `t0` (CLOCK_MONOTONIC ns).
    pub fn new(t0: u64, min_window_ns: u64) -> Watch {
        Watch {
            t0,
            last_t: t0,
            last_c: 0,
            stall_since: t0,
            stopped: false,
            windows: 0,
            min_window_ns,
        }
    }

    /// One sample at `now`: the window's per-request time (tenths of ns) into `hist` when requests
    /// completed since the last window; the stop at --duration; the broker's failure (an error, and the
    /// client told to abort); a stall.
    pub fn step(
        &mut self,
        now: u64,
        ctl: &Ctl,
        spec: &Spec,
        shared: &broker::Shared,
        hist: &mut Hist,
    ) -> Result<Seen> {
        let c = ctl.completed.0.load(Ordering::Acquire);
        if c > self.last_c {
            self.stall_since = now;
            if now - self.last_t >= self.min_window_ns {
                let per_op_tenths =
                    ((now - self.last_t) as f64 * 10.0 / (c - self.last_c) as f64).round() as u64;
                let _ = hist.record_n(per_op_tenths.max(1), c - self.last_c);
                self.windows += 1;
                (self.last_t, self.last_c) = (now, c);
            }
        }
        let failure = shared
            .failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(msg) = failure {
            ctl.stop.0.store(2, Ordering::SeqCst);
            return Err(Error::Runtime(format!("the broker stopped: {msg}")));
        }
        if let Some(d) = spec.duration_s {
            if !self.stopped && (now - self.t0) as f64 * 1e-9 >= d {
                ctl.stop.0.store(1, Ordering::SeqCst);
                self.stopped = true;
            }
        }
        if (now - self.stall_since) as f64 * 1e-9 > STALL_S {
            return Ok(Seen::Stalled { completed: c });
        }
        Ok(Seen::Running)
    }
}

/// The process at one end of the timed span.
pub fn sample() -> Sample {
    let tasks = cpu::read_tasks();
    let steal = cpu::steal_per_cpu();
    let ru = Rusage::process();
    let psi_some_us = crate::disturbance::psi_cpu_some_us();
    let system_cpu_ns = crate::disturbance::system_cpu_ns();
    Sample {
        ru,
        tasks,
        steal,
        psi_some_us,
        system_cpu_ns,
        at: std::time::Instant::now(),
    }
}

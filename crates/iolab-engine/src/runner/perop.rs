//! What the loops hand over per op when a run asks for more than its histograms: the direction of each
//! op (`--op mixed`), each op's start, end and offset (the traced pass of `--layers`, and the timed pass
//! of `--op-log 0`), and the ops and latency sums of fixed windows of time (`--op-log MS`). One call out
//! of line per op, made only when one of them is on: the loops are compiled once per method and clock.
//!
//! `--op-log` is what fio's per-I/O logs (write_lat_log, write_bw_log, write_iops_log) are written from.
//! Its room is reserved before the timed loop and never grown inside it: every op's record needs the
//! run's op count ([`check_spec`] refuses a run without one, or one whose log would take more than
//! [`OP_LOG_MAX_BYTES`]); the windows need at most one entry per window of the run's duration, or of the
//! time a paced run's op count takes at its pace (refused beyond [`OP_LOG_MAX_WINDOWS`] a thread or
//! [`OP_LOG_MAX_BYTES`] in all). An unpaced run of an op count gets one per op within both bounds: its
//! windows depend on how fast the ops go, and the ops of those past the room are counted
//! (`ThreadOps::dropped`), never lost unsaid (the fio layer warns and fails the run).

use super::mixed::MixOut;
use crate::error::{Error, Result};
use crate::measure::blocktrace::OpRec;
pub use crate::measure::op_log::{
    OpLog, OpWindow, ThreadOps, OP_LOG_MAX_BYTES, OP_LOG_MAX_WINDOWS,
};
use crate::result::RunResult;
use crate::spec::Spec;
use crate::units::fmt_size;

pub(super) struct PerOp {
    pub(super) mix: Option<MixOut>,
    /// The ops logged, up to the capacity reserved before the loop (never grown inside it).
    pub(super) log: Option<Vec<OpRec>>,
    /// `--op-log MS`: the windows, their room reserved before the loop.
    windows: Option<Windows>,
    /// The first op's start (its records' time 0), and the ops not kept.
    origin: Option<u64>,
    dropped: u64,
}

/// The windows of one thread as they fill.
struct Windows {
    every: u64,
    /// The tick at which the current window ends.
    ends: u64,
    /// The room was full when the current window began: its ops are not kept.
    full: bool,
    list: Vec<OpWindow>,
}

impl Windows {
    /// Adds a completed op; false when it is not kept.
    #[inline]
    fn add(&mut self, origin: u64, write: bool, start: u64, end: u64) -> bool {
        // `ends` is 0 before the first op.
        if end >= self.ends {
            let k = end.saturating_sub(origin) / self.every;
            self.ends = origin.saturating_add((k + 1).saturating_mul(self.every));
            self.full = self.list.len() == self.list.capacity();
            if !self.full {
                self.list.push(OpWindow {
                    index: k,
                    ..OpWindow::default()
                });
            }
        }
        match (self.full, self.list.last_mut()) {
            (false, Some(w)) => {
                let d = usize::from(write);
                w.ops[d] += 1;
                w.lat_ticks[d] += end.saturating_sub(start);
                true
            }
            _ => false,
        }
    }
}

impl PerOp {
    /// For a worker: `None` unless the run is mixed, logs its ops (at most `log_ops` of them) or sums
    /// them per window (`op_windows`: ticks per window and the windows to make room for).
    pub(super) fn for_worker(
        mixed: bool,
        log_ops: u64,
        (every, room): (u64, u64),
    ) -> Result<Option<PerOp>> {
        if !mixed && log_ops == 0 && every == 0 {
            return Ok(None);
        }
        Ok(Some(PerOp {
            mix: mixed.then(MixOut::try_new).transpose()?,
            log: (log_ops > 0).then(|| Vec::with_capacity(log_ops as usize)),
            windows: (every > 0).then(|| Windows {
                every,
                ends: 0,
                full: false,
                list: Vec::with_capacity(room as usize),
            }),
            origin: None,
            dropped: 0,
        }))
    }

    /// One op done: its direction, its offset, and its (start, end) ticks where the loop timed it.
    #[inline(never)]
    pub(super) fn op(&mut self, write: bool, offset: u64, timed: Option<(u64, u64)>) {
        if let Some(m) = self.mix.as_mut() {
            m.op(write, timed.map(|(s, e)| e.saturating_sub(s)));
        }
        let Some((start, end)) = timed else {
            return;
        };
        let origin = *self.origin.get_or_insert(start);
        if let Some(log) = self.log.as_mut() {
            if log.len() < log.capacity() {
                log.push(OpRec {
                    write,
                    start,
                    end,
                    offset,
                });
            } else {
                self.dropped += 1;
            }
        }
        if let Some(w) = self.windows.as_mut() {
            if !w.add(origin, write, start, end) {
                self.dropped += 1;
            }
        }
    }
}

/// Checks `--op-log` against the rest of the workload (a clock read per op, its room known before the
/// run and within [`OP_LOG_MAX_BYTES`]); without `--clock-every` a run with a log reads the clock per op.
pub(crate) fn check_spec(spec: &mut Spec) -> Result<()> {
    let Some(ms) = spec.op_log_ms else {
        return Ok(());
    };
    let info = spec.method.info();
    if info.exec == crate::method::info::Exec::OutOfProcess {
        return Err(Error::usage(
            "--op-log",
            format!(
                "--method {} times its client from outside, per sampling window, never per op: drop --op-log (a fio \
                 job's write_bw_log, write_lat_log, write_iops_log and write_iolog)",
                spec.method.name()
            ),
        ));
    }
    match spec.clock_every {
        Some(n) if n > 1 => {
            return Err(Error::usage(
                "--op-log",
                format!(
                    "logs each op's start and end (for a fio job's write_*_log and write_iolog): it needs \
                     a clock read per op, not one every {n} (--clock-every)"
                ),
            ))
        }
        _ => spec.clock_every = Some(1),
    }
    if ms == 0 {
        let Some(ops) = spec.ops else {
            return Err(Error::usage(
                "--op-log",
                "0 (a fio job's log_avg_msec=0) keeps a record of every op, its room reserved before the run from \
                 the run's op count, and a run of a --duration alone has none: give --ops or --size, or --op-log MS \
                 (log_avg_msec=MS) for sums per MS ms",
            ));
        };
        let need = ops.saturating_mul(std::mem::size_of::<OpRec>() as u64);
        if need > OP_LOG_MAX_BYTES {
            return Err(Error::usage(
                "--op-log",
                format!(
                    "0 (a fio job's log_avg_msec=0) keeps a record of every op: {ops} ops would take {}, more than \
                     the {} an op log may take; give fewer ops, or --op-log MS (log_avg_msec=MS) for sums per MS ms",
                    fmt_size(need),
                    fmt_size(OP_LOG_MAX_BYTES)
                ),
            ));
        }
        return Ok(());
    }
    window_room_of(spec, ms).map(|_| ()).map_err(|why| {
        Error::usage(
            "--op-log",
            format!("{ms} ms windows: {why}; give longer windows (a larger MS; a fio job's log_avg_msec)"),
        )
    })
}

/// [`OpLog::window_room`] of `spec`'s run.
fn window_room_of(spec: &Spec, ms: u64) -> std::result::Result<u64, String> {
    OpLog::window_room(
        ms,
        u64::from(spec.threads.max(1)),
        spec.duration_s,
        spec.ops_for_thread(0),
        spec.rate_iops,
    )
}

impl OpLog {
    /// The windows a thread makes room for before the run with `--op-log MS` (`ms` > 0), from the run's
    /// threads, duration, op count a thread (the largest) and pace (a thread's ops a second). Known ahead:
    /// one per window of the duration, or of the time a paced run's ops take at its pace (the fastest it
    /// can go), and two more (the last op may complete past the end), never more than one per op. Not
    /// known (an unpaced run of an op count): one per op, within [`OP_LOG_MAX_WINDOWS`] a thread and
    /// [`OP_LOG_MAX_BYTES`] in all; the ops of windows past that are counted as dropped. Err: why the
    /// windows known ahead do not fit, for the caller to say with its own option's name.
    pub fn window_room(
        ms: u64,
        threads: u64,
        duration_s: Option<f64>,
        ops_per_thread: Option<u64>,
        rate_iops: Option<f64>,
    ) -> std::result::Result<u64, String> {
        let threads = threads.max(1);
        let per_window = std::mem::size_of::<OpWindow>() as u64;
        // `as` saturates: an absurd duration is many windows, refused below.
        let windows = |s: f64| ((s * 1000.0 / ms.max(1) as f64).ceil() as u64).saturating_add(2);
        let ops = ops_per_thread.unwrap_or(u64::MAX);
        let known = match (duration_s, rate_iops) {
            (Some(d), _) => Some((windows(d).min(ops), format!("over its {d} s"))),
            (None, Some(r)) if r > 0.0 && ops_per_thread.is_some() => {
                let s = ops as f64 / r;
                Some((
                    windows(s).min(ops),
                    format!("over the {s:.0} s its {ops} ops take at its pace of {r:.0} a second"),
                ))
            }
            _ => None,
        };
        if let Some((n, over)) = &known {
            let need = n.saturating_mul(threads).saturating_mul(per_window);
            if *n > OP_LOG_MAX_WINDOWS || need > OP_LOG_MAX_BYTES {
                return Err(format!(
                    "{n} windows a thread {over} ({} over {threads} thread(s)), more than the \
                     {OP_LOG_MAX_WINDOWS} windows a thread and {} in all an op log may take",
                    fmt_size(need),
                    fmt_size(OP_LOG_MAX_BYTES)
                ));
            }
        }
        Ok(match known {
            Some((n, _)) if duration_s.is_some() => n,
            // An op count: one window per op at most, within the bounds; paced, at least the windows its
            // pace fills (a slower run fills more).
            _ => ops
                .min(OP_LOG_MAX_WINDOWS)
                .min(OP_LOG_MAX_BYTES / threads / per_window)
                .max(known.map_or(0, |(n, _)| n)),
        })
    }
}

/// The loop's windows for `spec`: ticks per window and the room to make (zeros: none).
pub(super) fn op_windows(spec: &Spec, hz: f64) -> (u64, u64) {
    match spec.op_log_ms {
        Some(ms) if ms > 0 => (
            ((ms as f64 * 1e-3 * hz) as u64).max(1),
            // Checked when the spec was resolved (`check_spec`).
            window_room_of(spec, ms).unwrap_or(0),
        ),
        _ => (0, 0),
    }
}

/// After the timed pass: the workers' logs moved into the result (`op_log`), with a note of what they
/// hold and what was timed.
/// `workers`: each worker's first and last tick and its per-op state.
pub(super) fn collect<'a>(
    spec: &Spec,
    ns_per_tick: f64,
    workers: impl ExactSizeIterator<Item = (u64, u64, Option<&'a mut PerOp>)>,
    r: &mut RunResult,
) {
    let Some(ms) = spec.op_log_ms else {
        return;
    };
    let mut log = OpLog {
        window_ms: ms,
        ns_per_tick,
        bs: spec.bs,
        threads: Vec::with_capacity(workers.len()),
    };
    for (t, (t_first, t_last, p)) in workers.enumerate() {
        let Some(p) = p else { continue };
        log.threads.push(ThreadOps {
            thread: t as u32,
            // Every op's record: the loop's start; windows were numbered from the first op's start in the
            // loop (the same tick, or a round later for a queued method).
            origin: if ms == 0 {
                t_first
            } else {
                p.origin.unwrap_or(t_first)
            },
            end: t_last,
            ops: p.log.take().unwrap_or_default(),
            windows: p.windows.take().map(|w| w.list).unwrap_or_default(),
            dropped: p.dropped,
        });
    }
    let dropped: u64 = log.threads.iter().map(|t| t.dropped).sum();
    let kept = if ms == 0 {
        format!(
            "every op's start, end (its latency as `timed` says), offset and direction: {} ops",
            log.threads.iter().map(|t| t.ops.len()).sum::<usize>()
        )
    } else {
        format!(
            "per thread and direction, the ops that completed in each {ms} ms window from the thread's first \
             op start and the sum of their latencies: {} windows",
            log.threads.iter().map(|t| t.windows.len()).sum::<usize>()
        )
    };
    let cost = if spec.method.info().synchronous() {
        "a call out of line and a clock read per op (not the plain loop a lean method runs otherwise)"
    } else {
        "a call out of line per completion"
    };
    r.notes.push(format!(
        "--op-log: the timed pass kept {kept}{}; its cost is in the figures: {cost}",
        if dropped > 0 {
            format!(" ({dropped} ops not kept: the room reserved before the run was full)")
        } else {
            String::new()
        }
    ));
    r.op_log = Some(std::sync::Arc::new(log));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn windows(every: u64, room: usize) -> Windows {
        Windows {
            every,
            ends: 0,
            full: false,
            list: Vec::with_capacity(room),
        }
    }

    #[test]
    fn windows_sum_ops_by_completion_time_and_direction() {
        let mut w = windows(100, 8);
        // Origin 1000: completions at +10 (read), +90 (write), +100 and +150 (reads), +420 (write).
        for (write, s, e) in [
            (false, 1000, 1010),
            (true, 1010, 1090),
            (false, 1090, 1100),
            (false, 1100, 1150),
            (true, 1150, 1420),
        ] {
            assert!(w.add(1000, write, s, e));
        }
        let got: Vec<(u64, [u64; 2], [u64; 2])> = w
            .list
            .iter()
            .map(|x| (x.index, x.ops, x.lat_ticks))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, [1, 1], [10, 80]),
                (1, [2, 0], [10 + 50, 0]),
                (4, [0, 1], [0, 270])
            ]
        );
    }

    #[test]
    fn a_full_room_keeps_no_more_windows() {
        let mut w = windows(10, 2);
        let room = w.list.capacity();
        let kept = (0..room as u64 + 3)
            .filter(|i| w.add(0, false, i * 10, i * 10 + 1))
            .count();
        assert_eq!(kept, room);
        assert_eq!(w.list.len(), room);
    }

    #[test]
    fn an_op_log_needs_an_op_count_and_fits_its_bound() {
        let spec = |extra: &[(&str, &str)]| {
            let mut raw = crate::spec::RawSpec::new();
            for (k, v) in extra {
                raw.set(k, *v).unwrap();
            }
            raw.resolve()
        };
        let s = spec(&[("op-log", "0"), ("ops", "1000")]).unwrap();
        assert_eq!(s.clock_every, Some(1));
        let e = spec(&[("op-log", "0"), ("duration", "1")]).unwrap_err();
        assert!(e.to_string().contains("--op-log"), "{e}");
        let e = spec(&[("op-log", "0"), ("ops", "100M")]).unwrap_err();
        assert!(e.to_string().contains("256 MiB"), "{e}");
        assert!(spec(&[("op-log", "100"), ("duration", "1")]).is_ok());
        let e = spec(&[("op-log", "1"), ("duration", "3600")]).unwrap_err();
        assert!(e.to_string().contains("longer windows"), "{e}");
        let e = spec(&[("op-log", "0"), ("ops", "10"), ("clock-every", "8")]).unwrap_err();
        assert!(e.to_string().contains("--clock-every"), "{e}");
        // Paced: 70,000 ops at 1,000 a second fill 70,000 windows of 1 ms, past the bound; of 10 ms, not.
        let e = spec(&[("op-log", "1"), ("ops", "70000"), ("rate-iops", "1000")]).unwrap_err();
        let e = e.to_string();
        assert!(
            e.contains("70000 windows")
                && e.contains("longer windows")
                && e.contains("log_avg_msec"),
            "{e}"
        );
        assert!(spec(&[("op-log", "10"), ("ops", "70000"), ("rate-iops", "1000")]).is_ok());
    }

    #[test]
    fn window_room_is_known_ahead_where_it_can_be_and_bounded_where_not() {
        let room = OpLog::window_room;
        // A duration: a window per ms of it and two more, at most one per op.
        assert_eq!(room(1, 1, Some(1.0), None, None), Ok(1002));
        assert_eq!(room(1, 1, Some(1.0), Some(10), None), Ok(10));
        // Paced: at least the windows its pace fills, up to one per op within the bound (a slower run
        // fills more); past the bound, refused with what it would take.
        assert_eq!(
            room(10, 1, None, Some(70_000), Some(1000.0)),
            Ok(OP_LOG_MAX_WINDOWS)
        );
        assert_eq!(room(1, 1, None, Some(100), Some(1.0)), Ok(100));
        let e = room(1, 1, None, Some(70_000), Some(1000.0)).unwrap_err();
        assert!(e.contains("70000 windows a thread over the 70 s"), "{e}");
        let e = room(1, 2048, Some(10.0), None, None).unwrap_err();
        assert!(e.contains("256 MiB"), "{e}");
        // Unpaced, an op count: its windows are not known ahead; one per op within both bounds, never
        // refused (the ops of windows past the room are counted).
        assert_eq!(
            room(1, 1, None, Some(1 << 20), None),
            Ok(OP_LOG_MAX_WINDOWS)
        );
        let per_thread = OP_LOG_MAX_BYTES / 1024 / std::mem::size_of::<OpWindow>() as u64;
        assert_eq!(room(1, 1024, None, Some(1 << 20), None), Ok(per_thread));
    }
}

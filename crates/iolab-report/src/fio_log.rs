//! fio's log files (write_bw_log, write_lat_log, write_iops_log) from a run's op log (`--op-log`), in
//! the format fio 3.33 writes, so that fio's `fio2gnuplot` and fio-plot's log graphs read them: a line
//! per entry, `time, value, direction, block size[, offset], priority`, with
//!
//! - time: milliseconds from the thread's first op start (fio: from the job's start), whole;
//! - value: latency in ns (lat, clat), bandwidth (per I/O: bytes x 10^6 / latency in ns, fio's
//!   arithmetic; per window: KiB/s), IOPS (1 per I/O; per window, I/Os per second);
//! - direction: 0 read, 1 write; block size in bytes (0 in an averaged entry, as fio 3.33 writes);
//! - offset (log_offset=1): the I/O's byte offset in the file (0 in an averaged entry);
//! - priority: 0 (iolab sets no I/O priority).
//!
//! With log_avg_msec=N an entry per N ms window and direction that had I/O: the mean latency (rounded as
//! fio does), and for bw and iops the window's bytes or I/Os over its N ms. fio logs bw and iops at its
//! helper thread's ticks, whole windows only; its latency windows end at the I/O that crosses the
//! window's end, and the last one at the job's end. Here every window ends at its boundary, the last
//! latency window at the thread's last completion.

use iolab_engine::cleanup::Created;
use iolab_engine::error::Error;
use iolab_engine::result::RunResult;
use iolab_engine::runner::{OpLog, ThreadOps};
use iolab_lab::fio_job::logs::{LogFile, LogKind, LogPlan};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes the files of `plan` from the run `r`. `written`: the files this command wrote before; a file
/// among them (jobs sharing a log, per_job_logs=0) is appended to, as fio does. Returns notes for the run.
pub fn write(
    plan: &LogPlan,
    r: &RunResult,
    written: &mut Vec<PathBuf>,
) -> Result<Vec<String>, Error> {
    let log = r.op_log.as_deref().ok_or_else(|| {
        Error::Runtime(format!(
            "fio job '{}': the run kept no op log to write its fio logs from",
            plan.job
        ))
    })?;
    let mut said = Vec::new();
    for f in plan.files() {
        let threads: Vec<&ThreadOps> = f
            .threads
            .iter()
            .filter_map(|t| log.threads.iter().find(|x| x.thread == *t))
            .collect();
        let append = written.contains(&f.path);
        let n = write_file(&f, r.spec.overwrite, append, |w| {
            entries(f.kind, plan.offset, log, &threads, w)
        })?;
        let entries = if n == 1 { "entry" } else { "entries" };
        said.push(format!("{} ({n} {entries})", f.path.display()));
        if !append {
            written.push(f.path.clone());
        }
    }
    Ok(vec![format!(
        "fio job '{}': wrote {}",
        plan.job,
        said.join(", ")
    )])
}

/// The entries of log `kind` of `threads` (each thread's in turn) to `w`; how many.
pub fn entries(
    kind: LogKind,
    offset: bool,
    log: &OpLog,
    threads: &[&ThreadOps],
    w: &mut dyn Write,
) -> std::io::Result<u64> {
    let mut n = 0;
    for t in threads {
        n += if log.window_ms == 0 {
            per_io(kind, offset, log, t, w)?
        } else {
            windowed(kind, offset, log, t, w)?
        };
    }
    Ok(n)
}

/// One line of fio's format.
fn line(
    w: &mut dyn Write,
    (time, value, dir): (u64, u64, usize),
    bs: u64,
    offset: Option<u64>,
) -> std::io::Result<()> {
    match offset {
        Some(o) => writeln!(w, "{time}, {value}, {dir}, {bs}, {o}, 0"),
        None => writeln!(w, "{time}, {value}, {dir}, {bs}, 0"),
    }
}

/// An entry per I/O, in completion order: none in a slat log (iolab does not time submission apart).
fn per_io(
    kind: LogKind,
    offset: bool,
    log: &OpLog,
    t: &ThreadOps,
    w: &mut dyn Write,
) -> std::io::Result<u64> {
    if kind == LogKind::Slat {
        return Ok(0);
    }
    let ns = |ticks: u64| ticks as f64 * log.ns_per_tick;
    for op in &t.ops {
        let time = (ns(op.end.saturating_sub(t.origin)) / 1e6) as u64;
        let lat = ns(op.end.saturating_sub(op.start)).round() as u64;
        let value = match kind {
            LogKind::Bw => (log.bs.saturating_mul(1_000_000))
                .checked_div(lat)
                .unwrap_or(0),
            LogKind::Iops => 1,
            _ => lat,
        };
        let dir = usize::from(op.write);
        line(w, (time, value, dir), log.bs, offset.then_some(op.offset))?;
    }
    Ok(t.ops.len() as u64)
}

/// An entry per window and direction with I/O: bw and iops over whole windows only (as fio), latency
/// means over every window, the last one at the thread's end.
fn windowed(
    kind: LogKind,
    offset: bool,
    log: &OpLog,
    t: &ThreadOps,
    w: &mut dyn Write,
) -> std::io::Result<u64> {
    let ms = log.window_ms;
    let run_ms = t.end.saturating_sub(t.origin) as f64 * log.ns_per_tick / 1e6;
    let mut n = 0;
    for win in &t.windows {
        let ends = win.index.saturating_add(1).saturating_mul(ms);
        let whole = ends as f64 <= run_ms;
        for dir in 0..2 {
            let ops = win.ops[dir];
            if ops == 0 {
                continue;
            }
            let (time, value) = match kind {
                LogKind::Slat => continue,
                LogKind::Bw | LogKind::Iops if !whole => continue,
                LogKind::Bw => (ends, ops.saturating_mul(log.bs) * 1000 / ms / 1024),
                LogKind::Iops => (ends, ops * 1000 / ms),
                LogKind::Lat | LogKind::Clat => {
                    let mean = win.lat_ticks[dir] as f64 * log.ns_per_tick / ops as f64;
                    let time = if whole { ends } else { run_ms as u64 };
                    (time, (mean + 0.5) as u64)
                }
            };
            line(w, (time, value, dir), 0, offset.then_some(0))?;
            n += 1;
        }
    }
    Ok(n)
}

/// Writes file `f` with `fill`: appended to (`append`), or made new (a regular file there replaced only
/// with `overwrite`, checked before the run too); a file left part-written by a failure is removed.
fn write_file(
    f: &LogFile,
    overwrite: bool,
    append: bool,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<u64>,
) -> Result<u64, Error> {
    let p = &f.path;
    let failed = |e: std::io::Error| {
        Error::Output(format!(
            "cannot write the fio log {} ({}): {e}",
            p.display(),
            f.kind.option()
        ))
    };
    if append {
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(p)
            .map_err(failed)?;
        let mut w = std::io::BufWriter::new(file);
        let n = fill(&mut w).map_err(failed)?;
        w.flush().map_err(failed)?;
        return Ok(n);
    }
    if overwrite && is_regular_file(p) {
        std::fs::remove_file(p).map_err(failed)?;
    }
    let (fd, made) = Created::new_file(p, libc::O_WRONLY, 0o644, false).map_err(|e| {
        Error::Output(format!(
            "cannot create the fio log {}: {e} (made since iolab checked?)",
            p.display()
        ))
    })?;
    let mut w = std::io::BufWriter::new(std::fs::File::from(fd));
    // On failure `made` drops and removes the part-written file.
    let n = fill(&mut w).map_err(failed)?;
    let file = w.into_inner().map_err(|e| failed(e.into_error()))?;
    file.sync_all().map_err(failed)?;
    made.keep_for_good();
    Ok(n)
}

fn is_regular_file(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_engine::measure::blocktrace::OpRec;
    use iolab_engine::runner::OpWindow;

    fn text(kind: LogKind, offset: bool, log: &OpLog) -> String {
        let mut v = Vec::new();
        let t: Vec<&ThreadOps> = log.threads.iter().collect();
        entries(kind, offset, log, &t, &mut v).unwrap();
        String::from_utf8(v).unwrap()
    }

    /// One thread of three 4 KiB ops, a tick a nanosecond: writes at 0, 4096, 8192.
    fn per_io_log() -> OpLog {
        let ops = (0..3u64)
            .map(|i| OpRec {
                write: true,
                start: 1_000_000 * i,
                end: 1_000_000 * i + 2000 * (i + 1),
                offset: 4096 * i,
            })
            .collect();
        OpLog {
            window_ms: 0,
            ns_per_tick: 1.0,
            bs: 4096,
            threads: vec![ThreadOps {
                ops,
                end: 3_000_000,
                ..Default::default()
            }],
        }
    }

    #[test]
    fn an_entry_per_io_in_fios_columns() {
        let log = per_io_log();
        assert_eq!(
            text(LogKind::Lat, true, &log),
            "0, 2000, 1, 4096, 0, 0\n1, 4000, 1, 4096, 4096, 0\n2, 6000, 1, 4096, 8192, 0\n"
        );
        // fio's bw per I/O: bytes x 10^6 / ns; iops 1; no offset column without log_offset.
        assert_eq!(
            text(LogKind::Bw, false, &log),
            "0, 2048000, 1, 4096, 0\n1, 1024000, 1, 4096, 0\n2, 682666, 1, 4096, 0\n"
        );
        assert_eq!(text(LogKind::Iops, false, &log).lines().count(), 3);
        assert_eq!(text(LogKind::Slat, false, &log), "");
    }

    #[test]
    fn averaged_entries_per_window_and_direction() {
        // 100 ms windows, a tick a ns; the thread ran 250 ms: two whole windows and a part.
        let win = |index, ops: [u64; 2], lat: [u64; 2]| OpWindow {
            index,
            ops,
            lat_ticks: lat,
        };
        let log = OpLog {
            window_ms: 100,
            ns_per_tick: 1.0,
            bs: 4096,
            threads: vec![ThreadOps {
                end: 250_000_000,
                windows: vec![
                    win(0, [100, 50], [100 * 1000, 50 * 3001]),
                    win(1, [0, 25], [0, 25 * 2000]),
                    win(2, [10, 0], [10 * 7000, 0]),
                ],
                ..Default::default()
            }],
        };
        assert_eq!(
            text(LogKind::Bw, false, &log),
            "100, 4000, 0, 0, 0\n100, 2000, 1, 0, 0\n200, 1000, 1, 0, 0\n"
        );
        assert_eq!(
            text(LogKind::Iops, true, &log),
            "100, 1000, 0, 0, 0, 0\n100, 500, 1, 0, 0, 0\n200, 250, 1, 0, 0, 0\n"
        );
        assert_eq!(
            text(LogKind::Clat, false, &log),
            "100, 1000, 0, 0, 0\n100, 3001, 1, 0, 0\n200, 2000, 1, 0, 0\n250, 7000, 0, 0, 0\n"
        );
    }
}

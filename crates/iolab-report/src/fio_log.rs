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
//!
//! fio's I/O log (write_iolog, [`iolog`]) is written from the same ops, in fio's version 3 format.
//!
//! A file is made new (O_EXCL, never through a symbolic link); jobs sharing a log's name (per_job_logs=0)
//! append to the file the first one made, and only to it: it is opened without following a symbolic link
//! or blocking on a FIFO, and its identity (device, inode) must be the one iolab made. An I/O log that
//! exists is appended to, as fio does (checked before the run to be a fio I/O log or empty). An append
//! that fails is cut back to the file's length before it. The ops a run could
//! not keep (its windows' room was full) make the logs incomplete: said in a warning, which the command
//! turns into exit status 1.

use iolab_engine::cleanup::Created;
use iolab_engine::error::Error;
use iolab_engine::result::RunResult;
use iolab_engine::runner::{OpLog, ThreadOps};
use iolab_engine::spec::SyncEvery;
use iolab_lab::fio_job::logs::{self, LogFile, LogKind, LogPlan};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// A log file this command made: its path as compared ([`logs::normalized`]) and its identity (device,
/// inode), the only file a later job sharing its name appends to. A file that can be shared (per_job_logs=0)
/// is held open: its inode, removed and its name taken over, is never another file's number meanwhile.
#[derive(Debug)]
pub struct Made {
    path: PathBuf,
    id: (u64, u64),
    _held: Option<std::fs::File>,
}

/// What writing a job's logs says: a note of the files written, and a warning when they miss ops.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Written {
    pub notes: Vec<String>,
    /// The files are incomplete: the run could not keep some of its ops (what to do about it included).
    pub incomplete: Option<String>,
}

/// Writes the files of `plan` from the run `r`. `written`: the files this command made before; a file
/// among them (jobs sharing a log, per_job_logs=0) is appended to, as fio does.
pub fn write(plan: &LogPlan, r: &RunResult, written: &mut Vec<Made>) -> Result<Written, Error> {
    let log = r.op_log.as_deref().ok_or_else(|| {
        Error::Runtime(format!(
            "fio job '{}': the run kept no op log to write its fio logs from",
            plan.job
        ))
    })?;
    write_log(plan, log, (r.spec.overwrite, r.spec.fsync), written)
}

/// [`write`] from the op log `log` of a run of `overwrite` (an existing regular file is replaced) and
/// `fsync` (its flushes, in the I/O log).
fn write_log(
    plan: &LogPlan,
    log: &OpLog,
    (overwrite, fsync): (bool, SyncEvery),
    written: &mut Vec<Made>,
) -> Result<Written, Error> {
    let mut said = Vec::new();
    let mut short = Vec::new();
    for f in plan.files() {
        let threads: Vec<&ThreadOps> = f
            .threads
            .iter()
            .filter_map(|t| log.threads.iter().find(|x| x.thread == *t))
            .collect();
        let earlier = made_before(&f.path, written);
        let (n, id, file, appended) = write_file(&f, overwrite, earlier, |w| match f.kind {
            LogKind::Iolog => iolog(&plan.file, log, &threads, fsync, w),
            kind => entries(kind, plan.offset, log, &threads, w),
        })?;
        let entries = if n == 1 { "entry" } else { "entries" };
        let how = if appended { ", appended" } else { "" };
        said.push(format!("{} ({n} {entries}{how})", f.path.display()));
        if earlier.is_none() {
            written.push(Made {
                path: logs::normalized(&f.path),
                id,
                // An I/O log is named as given, so jobs may share it whatever per_job_logs.
                _held: (!plan.per_job || f.kind == LogKind::Iolog).then_some(file),
            });
        }
        if threads.iter().any(|t| t.dropped > 0) {
            short.push(f.path.display().to_string());
        }
    }
    Ok(Written {
        notes: vec![format!("fio job '{}': wrote {}", plan.job, said.join(", "))],
        incomplete: (!short.is_empty()).then(|| incomplete(plan, log, &short)),
    })
}

/// The identity of the file this command made at `p` before, if it did: the same path ([`logs::normalized`]:
/// `x` and `./x` alike), or another name of the file it made (through a symbolic link to a directory, say).
fn made_before(p: &Path, written: &[Made]) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let key = logs::normalized(p);
    if let Some(m) = written.iter().find(|m| m.path == key) {
        return Some(m.id);
    }
    let md = std::fs::symlink_metadata(p).ok().filter(|m| m.is_file())?;
    let id = (md.dev(), md.ino());
    written.iter().any(|m| m.id == id).then_some(id)
}

/// The warning for a job whose logs `short` miss ops: how many, why, and the remedy.
fn incomplete(plan: &LogPlan, log: &OpLog, short: &[String]) -> String {
    let threads: Vec<&ThreadOps> = log.threads.iter().filter(|t| t.dropped > 0).collect();
    let dropped: u64 = threads.iter().map(|t| t.dropped).sum();
    let (why, remedy) = if log.window_ms == 0 {
        (
            "the room for its I/Os, reserved before the run, was full".to_string(),
            "give log_avg_msec=N for an averaged entry per N ms".to_string(),
        )
    } else {
        // The fewest ms a window that the windows kept would have covered the thread's run with.
        let fits = threads
            .iter()
            .map(|t| {
                let run_ms = t.end.saturating_sub(t.origin) as f64 * log.ns_per_tick / 1e6;
                (run_ms / t.windows.len().max(1) as f64).ceil() as u64
            })
            .max()
            .unwrap_or(0)
            .max(log.window_ms + 1);
        (
            format!(
                "the room for its {} ms windows, made before the run ({} a thread), was full",
                log.window_ms,
                threads.iter().map(|t| t.windows.len()).max().unwrap_or(0)
            ),
            format!("give a larger log_avg_msec ({fits} or more for a run as long)"),
        )
    };
    format!(
        "fio job '{}': its logs are incomplete: {dropped} ops not kept ({why}), missing from {}; {remedy}",
        plan.job,
        short.join(", ")
    )
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

/// fio's I/O log (version 3) of `threads`, a section each as a fio clone appends it: the version line,
/// the file added and opened, a line per I/O in the order they started (`time file direction offset
/// length`, time in µs from the thread's first I/O start, where fio's is from its log's opening), the
/// run's flushes as fio logs its syncs (`--fsync every:N`: after every Nth I/O, at its end; `end`: at
/// the thread's end; each with the offset of the I/O before it and length 0), the file closed at the
/// thread's end. `file` is the job's file as fio names it, `{thread}` standing for the clone's number.
/// Returns the I/O lines written.
pub fn iolog(
    file: &str,
    log: &OpLog,
    threads: &[&ThreadOps],
    fsync: SyncEvery,
    w: &mut dyn Write,
) -> std::io::Result<u64> {
    let token = iolab_engine::target::per_thread::THREAD_TOKEN;
    let mut n = 0;
    for t in threads {
        let file = file.replace(token, &t.thread.to_string());
        let us = |tick: u64| (tick.saturating_sub(t.origin) as f64 * log.ns_per_tick / 1e3) as u64;
        writeln!(w, "fio version 3 iolog\n0 {file} add\n0 {file} open")?;
        let mut ops: Vec<_> = t.ops.iter().collect();
        ops.sort_by_key(|op| op.start);
        let flush =
            |w: &mut dyn Write, at: u64, offset: u64| writeln!(w, "{at} {file} {SYNC} {offset} 0");
        for (i, op) in ops.iter().enumerate() {
            let dir = if op.write { "write" } else { "read" };
            writeln!(w, "{} {file} {dir} {} {}", us(op.start), op.offset, log.bs)?;
            if let SyncEvery::Every(n) = fsync {
                if (i as u64 + 1).is_multiple_of(n) {
                    flush(w, us(op.end), op.offset)?;
                }
            }
        }
        if let (SyncEvery::End, Some(last)) = (fsync, ops.last()) {
            flush(w, us(t.end), last.offset)?;
        }
        writeln!(w, "{} {file} close", us(t.end))?;
        n += t.ops.len() as u64;
    }
    Ok(n)
}

/// fio's word for a sync in its I/O log.
const SYNC: &str = "sync";

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
                LogKind::Slat | LogKind::Iolog => continue,
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

/// Writes file `f` with `fill`: appended to (`append`: the identity of the file this command made
/// there, [`append_to`]; or an I/O log that exists, as fio appends to it), or made new (a regular file
/// there replaced only with `overwrite`, checked before the run too); a file left part-written by a
/// failure is removed, an appended one cut back to its length. Returns the entries, the file's identity,
/// the file and whether it was appended to.
fn write_file(
    f: &LogFile,
    overwrite: bool,
    append: Option<(u64, u64)>,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<u64>,
) -> Result<(u64, (u64, u64), std::fs::File, bool), Error> {
    let p = &f.path;
    let failed = |e: std::io::Error| {
        Error::Output(format!(
            "cannot write the fio log {} ({}): {e}",
            p.display(),
            f.kind.option()
        ))
    };
    let existing = f.kind == LogKind::Iolog && is_regular_file(p);
    if append.is_some() || existing {
        let (file, st) = match append {
            Some(id) => append_to(p, id)?,
            None => open_regular(p).map_err(|e| match e {
                Opened::Not(now) => failed(std::io::Error::other(format!(
                    "{now}, since iolab checked it"
                ))),
                Opened::Sys(e) => e,
            })?,
        };
        let n = append_or_cut_back(&file, st.st_size as u64, fill).map_err(failed)?;
        return Ok((n, iolab_sys::identity(&st), file, true));
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
    let id = iolab_sys::fstat(fd.as_raw_fd())
        .map(|st| iolab_sys::identity(&st))
        .map_err(|e| Error::sys_on(e, p.display().to_string()))?;
    let mut w = std::io::BufWriter::new(std::fs::File::from(fd));
    // On failure `made` drops and removes the part-written file.
    let n = fill(&mut w).map_err(failed)?;
    let file = w.into_inner().map_err(|e| failed(e.into_error()))?;
    file.sync_all().map_err(failed)?;
    made.keep_for_good();
    Ok((n, id, file, false))
}

/// Opens the log `p` to append to, only if it is still the regular file `id` (device, inode) this command
/// made there ([`open_regular`]). Anything else at that name since (a symbolic link to another file, a
/// FIFO, another file) is refused.
fn append_to(p: &Path, id: (u64, u64)) -> Result<(std::fs::File, libc::stat), Error> {
    let replaced = |now: &str| {
        Error::Output(format!(
            "cannot append to the fio log {}: it was replaced since iolab wrote it ({now}); iolab appends only \
             to the file it made: nothing written there",
            p.display()
        ))
    };
    let (file, st) = open_regular(p).map_err(|e| match e {
        Opened::Sys(e) => e,
        Opened::Not(now) => replaced(now),
    })?;
    if iolab_sys::identity(&st) != id {
        return Err(replaced("it is another file now"));
    }
    Ok((file, st))
}

/// Why [`open_regular`] failed: what is at the name instead, or the system's error.
enum Opened {
    Not(&'static str),
    Sys(Error),
}

/// `p` opened to append to, if it is a regular file: opened without following a symbolic link
/// (O_NOFOLLOW), without blocking on a FIFO (O_NONBLOCK: one without a reader is ENXIO) or taking a
/// terminal (O_NOCTTY), then checked by fstat; with its fstat.
fn open_regular(p: &Path) -> Result<(std::fs::File, libc::stat), Opened> {
    let flags = libc::O_WRONLY
        | libc::O_APPEND
        | libc::O_NOFOLLOW
        | libc::O_NONBLOCK
        | libc::O_NOCTTY
        | libc::O_CLOEXEC;
    let sys = |e| Opened::Sys(Error::sys_on(e, p.display().to_string()));
    let fd = iolab_sys::open(p, flags, 0).map_err(|e| match e.errno {
        libc::ELOOP => Opened::Not("it is a symbolic link now"),
        libc::ENXIO => Opened::Not("it is a FIFO or a socket now"),
        libc::ENOENT => Opened::Not("it is gone"),
        _ => sys(e),
    })?;
    let st = iolab_sys::fstat(fd.as_raw_fd()).map_err(sys)?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(Opened::Not("it is no regular file now"));
    }
    // A regular file: written as any other (O_NONBLOCK was for the open only).
    iolab_sys::set_nonblocking(fd.as_raw_fd(), false).map_err(sys)?;
    Ok((std::fs::File::from(fd), st))
}

/// `fill` appended to `file`, whose length was `before`; on a failure the file is cut back to that length,
/// so nothing of what it held is lost and no part of the append is left.
fn append_or_cut_back(
    file: &std::fs::File,
    before: u64,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<u64>,
) -> std::io::Result<u64> {
    let cut_back = |e: std::io::Error| {
        // The error is the one said; the length it had is restored where the file allows it.
        let _ = file.set_len(before);
        e
    };
    let mut w = std::io::BufWriter::new(file);
    let n = fill(&mut w).and_then(|n| w.flush().map(|_| n));
    drop(w);
    let n = n.map_err(cut_back)?;
    file.sync_all().map_err(cut_back)?;
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
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;

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

    /// fio 3.33's I/O log: a section per clone, its I/O lines in the order they started (a queued
    /// method's completions come in another order), each clone's own file name.
    #[test]
    fn an_io_log_in_fios_version_3_format() {
        let mut log = per_io_log();
        log.ns_per_tick = 2.0;
        let mut other = log.threads[0].clone();
        other.thread = 1;
        other.origin = 500;
        other.ops.reverse();
        other.ops[0].write = false;
        log.threads.push(other);
        let t: Vec<&ThreadOps> = log.threads.iter().collect();
        let mut v = Vec::new();
        assert_eq!(
            iolog("d/J.{thread}.0", &log, &t, SyncEvery::None, &mut v).unwrap(),
            6
        );
        let section = |n: u32, last: &str| {
            format!(
                "fio version 3 iolog\n0 d/J.{n}.0 add\n0 d/J.{n}.0 open\n\
                 0 d/J.{n}.0 write 0 4096\n{} d/J.{n}.0 write 4096 4096\n{} d/J.{n}.0 {last} 8192 4096\n\
                 {} d/J.{n}.0 close\n",
                (1_000_000 - 500 * n as u64) * 2 / 1000,
                (2_000_000 - 500 * n as u64) * 2 / 1000,
                (3_000_000 - 500 * n as u64) * 2 / 1000,
            )
        };
        assert_eq!(
            String::from_utf8(v).unwrap(),
            format!("{}{}", section(0, "write"), section(1, "read"))
        );
    }

    /// The run's flushes as fio logs its syncs: after every Nth I/O (at its end, with its offset), or one
    /// at the thread's end with the last I/O's offset.
    #[test]
    fn an_io_log_holds_the_runs_flushes_as_fio_logs_its_syncs() {
        let log = per_io_log();
        let t: Vec<&ThreadOps> = log.threads.iter().collect();
        let text = |fsync| {
            let mut v = Vec::new();
            iolog("f", &log, &t, fsync, &mut v).unwrap();
            String::from_utf8(v).unwrap()
        };
        let syncs = |s: &str| -> Vec<String> {
            s.lines()
                .filter(|l| l.contains(" sync "))
                .map(String::from)
                .collect()
        };
        assert_eq!(syncs(&text(SyncEvery::Every(2))), ["1004 f sync 4096 0"]);
        assert_eq!(syncs(&text(SyncEvery::Every(1))).len(), 3);
        assert_eq!(syncs(&text(SyncEvery::End)), ["3000 f sync 8192 0"]);
        assert!(syncs(&text(SyncEvery::None)).is_empty());
        let end = text(SyncEvery::End);
        assert!(end.ends_with("3000 f sync 8192 0\n3000 f close\n"), "{end}");
    }

    /// A plan of one job's bw log named `name` (per_job_logs=0), over thread 0.
    fn bw_plan(job: &str, name: &str) -> LogPlan {
        LogPlan {
            job: job.into(),
            logs: vec![(LogKind::Bw, name.into())],
            avg_msec: 0,
            offset: false,
            per_job: false,
            first: 1,
            clones: 1,
            file: "f".into(),
        }
    }

    fn lines(p: &Path) -> usize {
        std::fs::read_to_string(p).unwrap().lines().count()
    }

    #[test]
    fn jobs_sharing_a_log_append_to_the_file_made_under_any_spelling() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display();
        let log = per_io_log();
        let mut written = Vec::new();
        let first = write_log(
            &bw_plan("a", &format!("{d}/x")),
            &log,
            (false, SyncEvery::None),
            &mut written,
        )
        .unwrap();
        assert!(first.incomplete.is_none());
        // `./x` and `sub/../x` name the same file: appended to, not refused as existing.
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        for name in [format!("{d}/./x"), format!("{d}/sub/../x")] {
            write_log(
                &bw_plan("b", &name),
                &log,
                (false, SyncEvery::None),
                &mut written,
            )
            .unwrap();
        }
        assert_eq!(written.len(), 1);
        assert_eq!(
            lines(&dir.path().join("x_bw.log")),
            9,
            "three jobs' entries"
        );
    }

    #[test]
    fn an_append_goes_only_to_the_file_iolab_made() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let (p, victim) = (dir.path().join("x_bw.log"), dir.path().join("victim"));
        std::fs::write(&p, "0, 1, 1, 4096, 0\n").unwrap();
        std::fs::write(&victim, "precious\n").unwrap();
        let md = std::fs::metadata(&p).unwrap();
        let id = (md.dev(), md.ino());
        // Held open, as `write_log` holds a shared log: its inode number is not reused below.
        let _held = std::fs::File::open(&p).unwrap();
        // The file made: appended to.
        let (mut f, _) = append_to(&p, id).unwrap();
        f.write_all(b"1, 1, 1, 4096, 0\n").unwrap();
        drop(f);
        assert_eq!(lines(&p), 2);
        let refused = |why: &str| {
            let e = append_to(&p, id).unwrap_err().to_string();
            assert!(
                e.contains(&p.display().to_string())
                    && e.contains("replaced since iolab wrote it")
                    && e.contains(why),
                "{e}"
            );
        };
        // A symbolic link to another file in its place: refused, the other file unchanged.
        std::fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink(&victim, &p).unwrap();
        refused("symbolic link");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
        // A FIFO, without a reader: refused at once, never waiting for one.
        std::fs::remove_file(&p).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(&p)
            .status()
            .unwrap();
        assert!(made.success());
        let t = std::time::Instant::now();
        refused("FIFO");
        // With a reader (opened O_NONBLOCK itself): opened, then refused by fstat, nothing written.
        let reader = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&p)
            .unwrap();
        refused("no regular file");
        assert!(t.elapsed() < std::time::Duration::from_secs(2));
        let mut got = Vec::new();
        let _ = (&reader).read_to_end(&mut got);
        assert!(got.is_empty());
        // Another regular file of that name: refused.
        std::fs::remove_file(&p).unwrap();
        std::fs::write(&p, "other\n").unwrap();
        refused("another file");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "other\n");
        // Gone: refused, not made again.
        std::fs::remove_file(&p).unwrap();
        refused("gone");
        assert!(!p.exists());
    }

    #[test]
    fn ops_not_kept_make_a_warning_naming_the_logs_and_the_remedy() {
        let dir = tempfile::tempdir().unwrap();
        let win = |index| OpWindow {
            index,
            ops: [0, 10],
            lat_ticks: [0, 10_000],
        };
        // 1 ms windows, the room full at 4 windows over a 10 ms run: 60 ops not kept.
        let log = OpLog {
            window_ms: 1,
            ns_per_tick: 1.0,
            bs: 4096,
            threads: vec![ThreadOps {
                end: 10_000_000,
                windows: (0..4).map(win).collect(),
                dropped: 60,
                ..Default::default()
            }],
        };
        let mut plan = bw_plan("j", &format!("{}/x", dir.path().display()));
        plan.avg_msec = 1;
        let w = write_log(&plan, &log, (false, SyncEvery::None), &mut Vec::new()).unwrap();
        let warning = w.incomplete.expect("a warning");
        assert!(
            warning.contains("fio job 'j'")
                && warning.contains("x_bw.log")
                && warning.contains("60 ops not kept")
                && warning.contains("log_avg_msec (3 or more"),
            "{warning}"
        );
        // What was kept is written all the same.
        assert_eq!(lines(&dir.path().join("x_bw.log")), 4);
        let mut log = log;
        log.threads[0].dropped = 0;
        let w = write_log(&plan, &log, (true, SyncEvery::None), &mut Vec::new()).unwrap();
        assert!(w.incomplete.is_none());
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

//! fio's log options read from a job into a plan: write_bw_log, write_lat_log and write_iops_log (the
//! files, named as fio names them), log_avg_msec (0, fio's default: an entry per I/O; N: an averaged
//! entry per N ms and direction), log_offset (each entry's offset) and per_job_logs (a file per clone,
//! NAME_TYPE.N.log, N being fio's number of the job in the file from 1; or one file for all,
//! NAME_TYPE.log), and write_iolog (fio's I/O log, one file as named, every I/O of every clone). The
//! job's workload gets `--op-log` (the engine keeps its ops for the files); the files are written after
//! the run by `iolab_report::fio_log`.
//!
//! An entry per I/O needs the job's I/O count before it runs (its log's room is reserved then, never
//! grown while timed): a time-based job, or one whose log would take more than the engine's bound, is
//! refused here, naming the option and suggesting log_avg_msec. So are averaged windows the engine could
//! not make room for (a runtime, or a paced size, of more windows than its bound): the engine's own
//! refusal would speak its flags (`--op-log MS`) where the job says log_avg_msec.

use super::parse::Job;
use iolab_engine::error::Error;
use iolab_engine::runner::{OpLog, OP_LOG_MAX_BYTES};
use iolab_engine::spec::RawSpec;
use iolab_engine::units::fmt_size;
use std::path::{Path, PathBuf};

/// The options read here.
pub const OPTIONS: [&str; 7] = [
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "write_iolog",
    "log_avg_msec",
    "log_offset",
    "per_job_logs",
];

/// The options that shape the bw, lat and iops logs (not the I/O log).
const SHAPING: [&str; 3] = ["log_avg_msec", "log_offset", "per_job_logs"];

/// Bytes of memory per I/O of a log of every I/O (the engine's record: start, end, offset, direction).
const RECORD_BYTES: u64 = std::mem::size_of::<iolab_engine::measure::blocktrace::OpRec>() as u64;

/// What a log file holds: fio's log types (write_lat_log writes lat, slat and clat).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogKind {
    Bw,
    Lat,
    Slat,
    Clat,
    Iops,
    /// write_iolog: fio's I/O log (version 3), a line per I/O issued.
    Iolog,
}

impl LogKind {
    /// The type in the file's name (NAME_TYPE.N.log).
    pub fn suffix(self) -> &'static str {
        match self {
            LogKind::Bw => "bw",
            LogKind::Lat => "lat",
            LogKind::Slat => "slat",
            LogKind::Clat => "clat",
            LogKind::Iops => "iops",
            LogKind::Iolog => "iolog",
        }
    }

    /// The option that asks for it.
    pub fn option(self) -> &'static str {
        match self {
            LogKind::Bw => "write_bw_log",
            LogKind::Lat | LogKind::Slat | LogKind::Clat => "write_lat_log",
            LogKind::Iops => "write_iops_log",
            LogKind::Iolog => "write_iolog",
        }
    }
}

/// A job's logs.
#[derive(Debug, Clone, PartialEq)]
pub struct LogPlan {
    pub job: String,
    /// Each log asked, with the name its files start with (the option's value, else the job's name).
    pub logs: Vec<(LogKind, String)>,
    /// log_avg_msec: 0, an entry per I/O; N, an averaged entry per N ms and direction.
    pub avg_msec: u64,
    /// log_offset: each entry carries its I/O's offset.
    pub offset: bool,
    /// per_job_logs: a file per clone (NAME_TYPE.N.log), else one for all clones (NAME_TYPE.log).
    pub per_job: bool,
    /// fio's number of the job's first clone: 1 + the clones of the jobs before it ([`number`]).
    pub first: u32,
    /// numjobs: the clones, iolab's threads.
    pub clones: u32,
    /// The job's file as fio names it in an I/O log (`{thread}`: each clone's number).
    pub file: String,
}

/// One file of a plan: its log, path, and the threads (iolab's, from 0) whose entries it holds in turn.
#[derive(Debug, Clone, PartialEq)]
pub struct LogFile {
    pub kind: LogKind,
    pub path: PathBuf,
    pub threads: Vec<u32>,
}

impl LogPlan {
    /// Every file the job writes, as fio names them.
    pub fn files(&self) -> Vec<LogFile> {
        let mut out = Vec::new();
        for (kind, name) in &self.logs {
            if *kind == LogKind::Iolog {
                // fio's clones append to the one file named (fopen "a").
                out.push(LogFile {
                    kind: *kind,
                    path: PathBuf::from(name),
                    threads: (0..self.clones).collect(),
                });
            } else if self.per_job {
                for t in 0..self.clones {
                    out.push(LogFile {
                        kind: *kind,
                        path: PathBuf::from(format!(
                            "{name}_{}.{}.log",
                            kind.suffix(),
                            self.first + t
                        )),
                        threads: vec![t],
                    });
                }
            } else {
                out.push(LogFile {
                    kind: *kind,
                    path: PathBuf::from(format!("{name}_{}.log", kind.suffix())),
                    threads: (0..self.clones).collect(),
                });
            }
        }
        out
    }
}

/// The log options of `job` as a plan (`None` when it asks for no log), its workload given `--op-log`;
/// `m` is the job as mapped so far (its amount and block size).
pub fn plan(
    job: &Job,
    file: &str,
    raw: &mut RawSpec,
    notes: &mut Vec<String>,
) -> Result<Option<LogPlan>, String> {
    let flag = |k: &str, default: bool| match job.get(k) {
        None => Ok(default),
        Some("1" | "true") => Ok(true),
        Some("0" | "false") => Ok(false),
        Some(v) => Err(format!("{k}={v}: expected 0 or 1")),
    };
    let per_job = flag("per_job_logs", true)?;
    let offset = flag("log_offset", false)?;
    let avg_msec = match job.get("log_avg_msec") {
        None => 0,
        Some(v) => v
            .parse::<u64>()
            .ok()
            .filter(|ms| *ms <= iolab_engine::spec::defaults::MAX_DURATION_S as u64 * 1000)
            .ok_or_else(|| {
                format!(
                    "log_avg_msec={v}: expected a whole number of milliseconds, at most 365 days' worth"
                )
            })?,
    };
    let mut logs = asked(job)?;
    // The I/O log needs every I/O kept: log_avg_msec shapes the other logs only.
    let windowed = !logs.is_empty() && avg_msec > 0;
    if let Some(v) = job.get("write_iolog") {
        let name = iolog_name(v, windowed, raw).map_err(|e| format!("write_iolog={v}: {e}"))?;
        logs.push((LogKind::Iolog, name));
    }
    let given: Vec<&str> = SHAPING
        .iter()
        .copied()
        .filter(|k| job.get(k).is_some())
        .collect();
    if !given.is_empty() && !logs.iter().any(|(k, _)| *k != LogKind::Iolog) {
        notes.push(format!(
            "{} without write_bw_log, write_lat_log or write_iops_log: {} (as in fio)",
            given.join(", "),
            if logs.is_empty() {
                "no log is written"
            } else {
                "they do not shape the I/O log"
            }
        ));
    }
    if logs.is_empty() {
        return Ok(None);
    }
    let clones = raw
        .get("threads")
        .and_then(|v| v.text().parse::<u32>().ok())
        .unwrap_or(1);
    let plan = LogPlan {
        job: job.name.clone(),
        logs,
        avg_msec: if windowed { avg_msec } else { 0 },
        offset,
        per_job,
        first: 1,
        clones,
        file: file.to_string(),
    };
    if plan.avg_msec == 0 {
        check_per_io(&plan, job, raw)?;
    } else {
        check_windows(&plan, raw)?;
    }
    raw.set("op-log", plan.avg_msec as i64)
        .map_err(|e| format!("internal: --op-log: {e}"))?;
    notes.push(plan.said());
    Ok(Some(plan))
}

/// The bw, lat and iops logs the job asks for, each with the name its files start with.
fn asked(job: &Job) -> Result<Vec<(LogKind, String)>, String> {
    let mut logs = Vec::new();
    for (opt, kinds) in [
        ("write_bw_log", &[LogKind::Bw][..]),
        (
            "write_lat_log",
            &[LogKind::Lat, LogKind::Slat, LogKind::Clat][..],
        ),
        ("write_iops_log", &[LogKind::Iops][..]),
    ] {
        if let Some(v) = job.get(opt) {
            let name = log_name(v, &job.name).map_err(|e| format!("{opt}={v}: {e}"))?;
            logs.extend(kinds.iter().map(|k| (*k, name.clone())));
        }
    }
    Ok(logs)
}

/// write_iolog's file: the value as named (fio opens it so, every clone appending to it). It holds a
/// line per I/O, so it is refused beside averaged logs (`windowed`: iolab keeps a run's I/Os one way),
/// and where fio logs what iolab does otherwise: verify's read-back (after the run here, not among its
/// I/Os) and a mixed job's fsync=N (fio counts writes, iolab reads and writes).
fn iolog_name(v: &str, windowed: bool, raw: &RawSpec) -> Result<String, String> {
    if v.is_empty() || v.ends_with('/') {
        return Err("names no file; give the I/O log's file name".into());
    }
    if windowed {
        return Err(
            "logs every I/O, where log_avg_msec averages the job's other logs, and iolab keeps a \
                    run's I/Os one way: give the I/O log in a job of its own, or log_avg_msec=0"
                .into(),
        );
    }
    let text = |k: &str| raw.get(k).map(|v| v.text());
    if text("verify").as_deref() == Some("true") {
        return Err(
            "with verify: fio logs its verify reads too, where iolab's read-back after the run \
                    is not among the run's I/Os; give do_verify=0"
                .into(),
        );
    }
    let mixed = text("op").as_deref() == Some("mixed");
    if mixed && text("fsync").is_some_and(|f| f.starts_with("every:")) {
        return Err(
            "with fsync=N on a job that reads and writes: fio syncs after every N writes and logs \
                    each sync, where iolab flushes after every N reads and writes; drop fsync="
                .into(),
        );
    }
    Ok(v.to_string())
}

/// The name a log's files start with: the option's value, or the job's name for the option alone (a
/// bare `write_bw_log`, which the parser reads as 1, or an empty value: fio takes both so; fio would
/// take `write_bw_log=1` as the name "1").
fn log_name(v: &str, job: &str) -> Result<String, String> {
    let name = match v {
        "" | "1" => job,
        v => v,
    };
    if name.ends_with('/') {
        return Err("names a directory; give a file name to start the log's files with".into());
    }
    Ok(name.to_string())
}

/// A log of every I/O keeps each one in memory, room for the job's I/O count made before it runs: a
/// job whose count is not known then (time-based, or a runtime without a size) or too many are refused.
fn check_per_io(plan: &LogPlan, job: &Job, raw: &RawSpec) -> Result<(), String> {
    let iolog = plan.logs.iter().any(|(k, _)| *k == LogKind::Iolog);
    let (opt, unknown, too_many) = if iolog {
        (
            "write_iolog".to_string(),
            "drop time_based (with a size, the job ends at it)",
            "give the job a smaller size",
        )
    } else {
        let avg = "give log_avg_msec=N for an averaged entry per N ms";
        (
            format!(
                "{} with log_avg_msec=0 (fio's default)",
                plan.logs[0].0.option()
            ),
            avg,
            avg,
        )
    };
    let per_io = format!(
        "job '{}': {opt} logs every I/O, each kept in memory with room for the job's I/O count reserved \
         before it runs",
        plan.job
    );
    let text = |k: &str| raw.get(k).map(|v| v.text());
    let (size, duration) = (text("size"), text("duration"));
    let Some(size) = size else {
        return match duration {
            Some(d) => {
                let timed = matches!(job.get("time_based"), Some("1" | "true"));
                let (is, unknown) = match (timed, iolog) {
                    (true, _) => (format!("is time_based (runtime {d} s)"), unknown),
                    (false, true) => (
                        format!("has a runtime ({d} s) and no size"),
                        "give the job a size",
                    ),
                    (false, false) => (format!("has a runtime ({d} s) and no size"), unknown),
                };
                Err(format!(
                    "{per_io}; this job {is}, so that count is not known: {unknown}"
                ))
            }
            // Neither: iolab's default amount, a known count.
            None => Ok(()),
        };
    };
    // iolab's default --bs is fio's, 4 KiB.
    let bs = text("bs")
        .and_then(|b| b.parse::<u64>().ok())
        .unwrap_or(4096);
    let ios = size.parse::<u64>().unwrap_or(0) / bs.max(1);
    let need = ios.saturating_mul(RECORD_BYTES);
    if need > OP_LOG_MAX_BYTES {
        return Err(format!(
            "{per_io}: its {ios} I/Os would take {}, more than the {} iolab lets a log take: {too_many}",
            fmt_size(need),
            fmt_size(OP_LOG_MAX_BYTES)
        ));
    }
    Ok(())
}

/// Averaged windows: room for them is made before the run, from the job's runtime or, paced, from the
/// time its size takes at its rate; more than the engine's bound is refused in the job's own terms.
fn check_windows(plan: &LogPlan, raw: &RawSpec) -> Result<(), String> {
    let text = |k: &str| raw.get(k).map(|v| v.text());
    let num = |k: &str| text(k).and_then(|v| v.parse::<f64>().ok());
    let threads = num("threads").map_or(1, |t| t as u64).max(1);
    let bs = num("bs").unwrap_or(4096.0).max(1.0);
    let ops = num("size").map(|s| ((s / bs) as u64).div_ceil(threads));
    let rate = num("rate-iops").or_else(|| num("rate").map(|r| r / bs));
    OpLog::window_room(plan.avg_msec, threads, num("duration"), ops, rate)
        .map(|_| ())
        .map_err(|why| {
            format!(
                "job '{}': {} with log_avg_msec={}: {why}; give a larger log_avg_msec",
                plan.job,
                plan.logs[0].0.option(),
                plan.avg_msec
            )
        })
}

impl LogPlan {
    /// What the job's logs will hold, for its notes.
    fn said(&self) -> String {
        let (iolog, files): (Vec<LogFile>, Vec<LogFile>) = self
            .files()
            .into_iter()
            .partition(|f| f.kind == LogKind::Iolog);
        let iolog = iolog.first().map(|f| {
            format!(
                "I/O log {} (fio's version 3 iolog, a section per clone appended: a line per I/O at its \
                 start, in µs from the thread's first I/O start, with the file, direction, offset and length)",
                f.path.display()
            )
        });
        if files.is_empty() {
            return iolog.unwrap_or_default();
        }
        let files: Vec<String> = files.iter().map(|f| f.path.display().to_string()).collect();
        let entries = if self.avg_msec == 0 {
            "an entry per I/O: time (ms from the thread's first I/O start, at its completion), latency in ns \
             (lat and clat alike: iolab's per-op latency, see timed; slat, not timed apart, is left empty), \
             bandwidth as fio computes it per I/O (bytes x 10^6 / latency in ns) or 1 for iops"
                .to_string()
        } else {
            format!(
                "an entry per {} ms window and direction (from the thread's first I/O start, by completion): \
                 the mean latency in ns (lat, clat; slat left empty), KiB/s or IOPS over the window (whole \
                 windows only, as fio's)",
                self.avg_msec
            )
        };
        let logs = format!(
            "logs {} (fio's format: time, value, direction, block size{}, priority 0): {entries}",
            files.join(", "),
            if self.offset { ", offset" } else { "" }
        );
        match iolog {
            Some(i) => format!("{logs}; {i}"),
            None => logs,
        }
    }
}

/// A path as compared with another, to tell whether both name one file: relative to the current directory,
/// lexically without `.` parts or repeated separators, its directory resolved where it exists (its
/// symbolic links and `..`; lexically, `a/..` is not `.` when `a` is a symbolic link).
pub fn normalized(p: &Path) -> PathBuf {
    let abs = if p.is_relative() {
        std::env::current_dir().map_or_else(|_| p.to_path_buf(), |d| d.join(p))
    } else {
        p.to_path_buf()
    };
    let lexical: PathBuf = abs
        .components()
        .filter(|c| *c != std::path::Component::CurDir)
        .collect();
    match (lexical.parent(), lexical.file_name()) {
        (Some(d), Some(name)) => d
            .canonicalize()
            .map_or_else(|_| lexical.clone(), |d| d.join(name)),
        _ => lexical,
    }
}

/// Whether `a` and `b` name one file: the same [`normalized`] path, or the same file where both exist.
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let id = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    normalized(a) == normalized(b) || id(a).is_some_and(|x| Some(x) == id(b))
}

/// Checks the files of `plans` (each with the run's --overwrite) before any job runs: a file that
/// exists is replaced only with --overwrite (never a symbolic link or anything but a regular file; an I/O
/// log that exists is appended to, as fio does), and
/// its directory must exist. None may be one of `others`, the run's other files (what names each, and
/// its path: a job's data file, a result's output). With --across-methods every method's run would
/// write the same files. Jobs that share a log's name (per_job_logs=0) share its file, as in fio.
pub fn check_files(
    plans: &[(&LogPlan, bool)],
    others: &[(String, PathBuf)],
    across_methods: bool,
) -> Result<(), Error> {
    let Some((first, _)) = plans.first() else {
        return Ok(());
    };
    if across_methods {
        return Err(Error::usage(
            "--across-methods",
            format!(
                "job '{}' writes fio logs ({}), and every method's run would write the same files: run one \
                 method (drop --across-methods), or drop the job's log options",
                first.job,
                first.logs[0].0.option()
            ),
        ));
    }
    for (plan, overwrite) in plans {
        for f in plan.files() {
            if let Some((what, _)) = others.iter().find(|(_, p)| same_file(&f.path, p)) {
                return Err(Error::usage(
                    format!("--fio job '{}': {}", plan.job, f.kind.option()),
                    format!(
                        "{} is also {what}: the log would write over it, or it over the log; give {} another \
                         name",
                        f.path.display(),
                        f.kind.option()
                    ),
                ));
            }
            check_file(plan, &f, *overwrite)?;
        }
    }
    Ok(())
}

fn check_file(plan: &LogPlan, f: &LogFile, overwrite: bool) -> Result<(), Error> {
    let flag = format!("--fio job '{}': {}", plan.job, f.kind.option());
    let p = &f.path;
    match std::fs::symlink_metadata(p) {
        // fio appends to an I/O log that exists (fopen "a"): so does iolab, replacing nothing.
        Ok(md) if md.is_file() && f.kind == LogKind::Iolog => return check_io_log(&flag, p),
        Ok(md) if md.is_file() && overwrite => {}
        Ok(md) if md.is_file() => {
            return Err(Error::usage(
                flag,
                format!(
                    "{} exists; add --overwrite to replace it, or give {} another name",
                    p.display(),
                    f.kind.option()
                ),
            ))
        }
        Ok(md) if !md.file_type().is_symlink() => {
            use std::os::unix::fs::FileTypeExt;
            let t = md.file_type();
            let what = if t.is_dir() {
                "a directory"
            } else if t.is_block_device() || t.is_char_device() {
                "a device"
            } else {
                "a FIFO or a socket"
            };
            return Err(Error::usage(
                flag,
                format!(
                    "{} is {what}, not a file a log can be: give {} a file's name",
                    p.display(),
                    f.kind.option()
                ),
            ));
        }
        Ok(_) => return iolab_engine::paths::check_new_path(&flag, p),
        Err(_) => {}
    }
    let dir = p
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    iolab_engine::paths::check_writable_dir(&flag, dir)
}

/// An I/O log that exists, to be appended to: only a fio I/O log (its first line `fio version N iolog`)
/// or an empty file, never another file of the user's (fio appends to any file: an included job file
/// would be one), and one this process may open for appending, found before the run rather than after.
fn check_io_log(flag: &str, p: &Path) -> Result<(), Error> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(p)
        .map_err(|e| {
            Error::usage(
                flag,
                format!("{} exists and cannot be appended to: {e}", p.display()),
            )
        })?;
    let mut head = [0u8; 64];
    let n = opened.take(64).read(&mut head).unwrap_or(0);
    let first = String::from_utf8_lossy(&head[..n]);
    let first = first.lines().next().unwrap_or("");
    let is_log = first.starts_with("fio version ") && first.ends_with(" iolog");
    if n == 0 || is_log {
        return Ok(());
    }
    Err(Error::usage(
        flag,
        format!(
            "{} exists and is not a fio I/O log (its first line is not \"fio version N iolog\"): iolab appends \
             only to one (fio would append to any file); give write_iolog another name",
            p.display()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio_job::map::Mapped;
    use crate::fio_job::number;

    fn mapped(opts: &[(&str, &str)]) -> Result<Mapped, String> {
        let job = Job {
            name: "j".into(),
            opts: opts
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        super::super::map::map(&job, false)
    }

    fn names(p: &LogPlan) -> Vec<String> {
        p.files()
            .iter()
            .map(|f| f.path.display().to_string())
            .collect()
    }

    #[test]
    fn files_are_named_as_fio_names_them() {
        let m = mapped(&[("size", "64k"), ("write_lat_log", "1"), ("numjobs", "2")]).unwrap();
        let p = m.logs.as_ref().unwrap();
        assert_eq!(
            names(p),
            [
                "j_lat.1.log",
                "j_lat.2.log",
                "j_slat.1.log",
                "j_slat.2.log",
                "j_clat.1.log",
                "j_clat.2.log"
            ]
        );
        assert_eq!(m.raw.get("op-log").unwrap().text(), "0");
        let m = mapped(&[
            ("size", "64k"),
            ("write_bw_log", "sub/x"),
            ("write_iops_log", "y"),
            ("per_job_logs", "0"),
            ("numjobs", "3"),
            ("log_avg_msec", "100"),
            ("log_offset", "1"),
        ])
        .unwrap();
        let p = m.logs.as_ref().unwrap();
        assert_eq!(names(p), ["sub/x_bw.log", "y_iops.log"]);
        assert_eq!(p.files()[0].threads, [0, 1, 2]);
        assert!(p.offset);
        assert_eq!(m.raw.get("op-log").unwrap().text(), "100");
    }

    /// write_iolog: one file as named, every clone's section in it, the data file as fio names it; refused
    /// where iolab does otherwise than fio logs (verify's reads, a mixed job's fsync=N), beside averaged
    /// logs, and where the I/O count is not known before the run.
    #[test]
    fn the_io_log_is_one_file_as_named_and_refused_where_fio_logs_more() {
        let io = [("size", "64k"), ("rw", "write"), ("write_iolog", "L")];
        let m = mapped(&[&io[..], &[("numjobs", "2"), ("log_avg_msec", "50")]].concat()).unwrap();
        let p = m.logs.as_ref().unwrap();
        assert_eq!(names(p), ["L"]);
        assert_eq!(p.files()[0].threads, [0, 1]);
        assert_eq!(p.file, "j.{thread}.0");
        // log_avg_msec shapes no I/O log: every I/O is kept.
        assert_eq!(m.raw.get("op-log").unwrap().text(), "0");
        assert!(m.notes.iter().any(|n| n.contains("log_avg_msec without")));
        let m =
            mapped(&[&io[..], &[("filename", "data"), ("write_bw_log", "b")]].concat()).unwrap();
        let p = m.logs.unwrap();
        assert_eq!(
            (names(&p), p.file.as_str()),
            (vec!["b_bw.1.log".into(), "L".into()], "data")
        );
        let m = mapped(&[&io[..], &[("directory", "/tmp/"), ("filename", "d")]].concat()).unwrap();
        assert_eq!(m.logs.unwrap().file, "/tmp/d");
        for (more, says) in [
            (&[("verify", "md5")][..], "fio logs its verify reads"),
            (
                &[("fsync", "4"), ("rw", "randrw")][..],
                "fio syncs after every N writes",
            ),
            (
                &[("write_bw_log", "b"), ("log_avg_msec", "10")][..],
                "give the I/O log in a job of its own",
            ),
            (
                &[("runtime", "1"), ("time_based", "1")][..],
                "write_iolog logs every I/O",
            ),
        ] {
            let e = mapped(&[&io[..], more].concat()).unwrap_err();
            assert!(e.contains(says), "{more:?}: {e}");
        }
        let e = mapped(&[("size", "64k"), ("write_iolog", "")]).unwrap_err();
        assert!(e.contains("write_iolog=: names no file"), "{e}");
        // do_verify=0 reads nothing back; a write job's fsync=N and end_fsync are logged as fio's syncs.
        for sync in [("end_fsync", "1"), ("fsync", "4")] {
            let opts = [&io[..], &[("verify", "md5"), ("do_verify", "0"), sync]].concat();
            assert!(mapped(&opts).unwrap().logs.is_some(), "{sync:?}");
        }
    }

    #[test]
    fn clones_are_numbered_over_the_file() {
        let mut jobs = vec![
            mapped(&[("size", "64k"), ("numjobs", "2")]).unwrap(),
            mapped(&[("size", "64k"), ("write_bw_log", "b"), ("numjobs", "2")]).unwrap(),
        ];
        number(&mut jobs);
        assert_eq!(
            names(jobs[1].logs.as_ref().unwrap()),
            ["b_bw.3.log", "b_bw.4.log"]
        );
    }

    #[test]
    fn a_log_of_every_io_needs_a_known_count_that_fits() {
        let e = mapped(&[
            ("size", "1m"),
            ("runtime", "2"),
            ("time_based", "1"),
            ("write_lat_log", "x"),
        ])
        .unwrap_err();
        assert!(
            e.contains("write_lat_log") && e.contains("log_avg_msec=N") && e.contains("time_based"),
            "{e}"
        );
        let e = mapped(&[("size", "64g"), ("bs", "4k"), ("write_iops_log", "x")]).unwrap_err();
        assert!(e.contains("write_iops_log") && e.contains("256 MiB"), "{e}");
        // Averaged: a time-based job is fine.
        let m = mapped(&[
            ("size", "1m"),
            ("runtime", "2"),
            ("time_based", "1"),
            ("write_bw_log", "x"),
            ("log_avg_msec", "500"),
        ])
        .unwrap();
        assert_eq!(m.logs.unwrap().avg_msec, 500);
        // Log options alone write nothing, and say so.
        let m = mapped(&[("size", "64k"), ("log_offset", "1")]).unwrap();
        assert!(m.logs.is_none());
        assert!(
            m.notes.iter().any(|n| n.contains("no log is written")),
            "{:?}",
            m.notes
        );
        // Windows past the engine's bound are refused in the job's terms, not the engine's flag.
        for opts in [
            &[("size", "1m"), ("runtime", "3600"), ("time_based", "1")][..],
            &[("size", "280000k"), ("rate_iops", "1000")][..],
        ] {
            let mut opts = opts.to_vec();
            opts.extend([
                ("rw", "write"),
                ("write_bw_log", "x"),
                ("log_avg_msec", "1"),
            ]);
            let e = mapped(&opts).unwrap_err();
            assert!(
                e.contains("write_bw_log with log_avg_msec=1")
                    && e.contains("give a larger log_avg_msec")
                    && !e.contains("--op-log"),
                "{e}"
            );
            opts.pop();
            opts.push(("log_avg_msec", "100"));
            assert!(mapped(&opts).is_ok(), "{opts:?}");
        }
        assert!(mapped(&[("size", "64k"), ("write_bw_log", "d/")]).is_err());
        assert!(mapped(&[("size", "64k"), ("write_bw_log", "x"), ("log_offset", "2")]).is_err());
    }

    #[test]
    fn one_file_under_two_spellings_is_one_file() {
        assert_eq!(normalized(Path::new("x")), normalized(Path::new("./x")));
        assert_eq!(normalized(Path::new("x")), normalized(Path::new(".//x")));
        let here = std::env::current_dir().unwrap().canonicalize().unwrap();
        assert_eq!(normalized(Path::new("src/../x")), here.join("x"));
        assert_ne!(normalized(Path::new("x")), normalized(Path::new("y")));
    }

    #[test]
    fn a_log_that_is_another_file_of_the_run_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display();
        let m = mapped(&[
            ("size", "64k"),
            ("write_bw_log", &format!("{d}/x")),
            ("per_job_logs", "0"),
        ])
        .unwrap();
        let plan = m.logs.as_ref().unwrap();
        let other = |p: String| vec![("the --json file".to_string(), PathBuf::from(p))];
        assert!(check_files(&[(plan, false)], &other(format!("{d}/y_bw.log")), false).is_ok());
        let e = check_files(&[(plan, false)], &other(format!("{d}/./x_bw.log")), false)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("write_bw_log") && e.contains("is also the --json file"),
            "{e}"
        );
    }
}

//! `iolab survey --target PATH`: the user's own device and workload. Every method that can do the
//! workload runs it at the same number of requests in flight (`--inflight`: a synchronous method with
//! that many threads, a queued one at that depth on one thread), in rounds, ranked against pread()/
//! pwrite() (psync), each run with the verdict of what limited it ([`crate::verdict`]).
//!
//! The target: a directory (a new temporary directory in it, each run writing or reading a file of its
//! own there, made and removed by iolab), a regular file (read, never written unless `--overwrite`), or
//! a block device (read; written only with `--allow-device-writes`, under the rules of every run).
//! Without `--workload`, `--bs` and `--inflight` it runs a KDiskMark-like set: 1 MiB sequential at 8 and
//! 1 in flight, 4 KiB random at 32 and 1, reads (and writes, in a directory), buffered and O_DIRECT.

use crate::survey::{Cell, OnRun, SurveyRun};
use iolab_engine::cleanup::Created;
use iolab_engine::error::{Error, Result};
use iolab_engine::measure::clock::ClockInfo;
use iolab_engine::result::{Host, RunResult, SCHEMA_VERSION};
use iolab_engine::spec::{MethodKind, OpKind, RawSpec};
use iolab_engine::target::TargetKind;
use iolab_engine::units::fmt_size;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The method every row is put against: pread()/pwrite() at the workload's offsets.
pub const BASELINE: &str = iolab_engine::method::psync::INFO.name;

/// One workload: direction, pattern, block size, requests in flight, and whether O_DIRECT.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    pub op: OpKind,
    pub rand: bool,
    pub bs: u64,
    pub inflight: u32,
    pub direct: bool,
}

impl Workload {
    /// "4 KiB random reads, 32 in flight, O_DIRECT".
    pub fn label(&self) -> String {
        format!(
            "{} {}{}, {} in flight, {}",
            fmt_size(self.bs),
            if self.rand { "random " } else { "sequential " },
            match self.op {
                OpKind::Read => "reads",
                OpKind::Write => "writes",
                OpKind::Mixed => "reads and writes (half each)",
            },
            self.inflight,
            if self.direct { "O_DIRECT" } else { "buffered" }
        )
    }

    /// KDiskMark's short name with the direction: "RND4K Q32 read", "SEQ1M Q8 write".
    pub fn short(&self) -> String {
        let size = fmt_size(self.bs)
            .replace(' ', "")
            .replace("iB", "")
            .replace('B', "");
        format!(
            "{}{size} Q{} {}",
            if self.rand { "RND" } else { "SEQ" },
            self.inflight,
            match self.op {
                OpKind::Read => "read",
                OpKind::Write => "write",
                OpKind::Mixed => "mixed",
            }
        )
    }

    /// The baseline's name in the text: "pread()" or "pwrite()".
    pub fn baseline_label(&self) -> &'static str {
        match self.op {
            OpKind::Read => "pread()",
            OpKind::Write => "pwrite()",
            OpKind::Mixed => "pread()/pwrite()",
        }
    }
}

/// `--workload` words: (op, random).
pub fn parse_kind(word: &str) -> std::result::Result<(OpKind, bool), String> {
    Ok(match word {
        "read" => (OpKind::Read, false),
        "write" => (OpKind::Write, false),
        "randread" => (OpKind::Read, true),
        "randwrite" => (OpKind::Write, true),
        // fio's rw and randrw: each op reads or writes, half each (fio's rwmixread default).
        "rw" => (OpKind::Mixed, false),
        "randrw" => (OpKind::Mixed, true),
        w => {
            return Err(format!(
                "'{w}' is not a workload; expected read, write, randread, randwrite, rw or randrw"
            ))
        }
    })
}

/// What the user asked: the kinds, and block sizes, in-flight counts and cache modes (empty: the
/// defaults for each kind).
#[derive(Debug, Clone, Default)]
pub struct Asked {
    pub kinds: Vec<(OpKind, bool)>,
    pub bs: Vec<u64>,
    pub inflight: Vec<u32>,
    /// `[true]`: O_DIRECT only; `[false]`: buffered only; empty: both.
    pub direct: Vec<bool>,
}

/// The workloads of `asked` on a target that may (`writable`) or may not be written.
pub fn workloads(asked: &Asked, writable: bool) -> Vec<Workload> {
    let kinds = if asked.kinds.is_empty() {
        let mut k = vec![(OpKind::Read, false), (OpKind::Read, true)];
        if writable {
            k.extend([(OpKind::Write, false), (OpKind::Write, true)]);
        }
        k
    } else {
        asked.kinds.clone()
    };
    let direct = if asked.direct.is_empty() {
        vec![true, false]
    } else {
        asked.direct.clone()
    };
    let mut out = Vec::new();
    for (op, rand) in kinds {
        // KDiskMark's set: 1 MiB sequential at 8 and 1 in flight, 4 KiB random at 32 and 1.
        let bs = if asked.bs.is_empty() {
            vec![if rand { 4096 } else { 1 << 20 }]
        } else {
            asked.bs.clone()
        };
        let inflight = if asked.inflight.is_empty() {
            vec![if rand { 32 } else { 8 }, 1]
        } else {
            asked.inflight.clone()
        };
        for &d in &direct {
            for &b in &bs {
                for &n in &inflight {
                    out.push(Workload {
                        op,
                        rand,
                        bs: b,
                        inflight: n,
                        direct: d,
                    });
                }
            }
        }
    }
    out
}

/// The survey's options.
pub struct WorkloadOptions {
    pub target: PathBuf,
    pub asked: Asked,
    /// Size of each file made in a directory target (default: 64 MiB, less where memory or disk is short).
    pub file_size: Option<u64>,
    pub overwrite: bool,
    pub allow_device_writes: bool,
    pub ops: u64,
    pub max_s: f64,
    /// The first rounds, and the seconds after which no further round starts ([`crate::rounds`]).
    pub rounds: u32,
    pub max_time_s: f64,
    /// `--latency-sample N` for every synchronous method (None: every op timed: a device's ops cost far
    /// more than a clock read, and a probe would write to the target).
    pub latency_sample: Option<u64>,
    pub on_run: Option<OnRun>,
    /// Told what the survey will do ([`plan_lines`], a line at a time) before its first run.
    pub on_plan: Option<Box<dyn Fn(String)>>,
}

/// The survey's JSON document.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkloadSurvey {
    pub schema_version: u32,
    pub host: Host,
    pub clock: ClockInfo,
    /// The target as given, what it is ("a directory: a new file per run", ...) and its filesystem.
    pub target: String,
    pub target_kind: String,
    pub fs: String,
    /// Size of each file made in a directory target, bytes (null for a file or device target: iolab
    /// makes none).
    pub file_size: Option<u64>,
    pub ops_per_run: u64,
    pub max_s_per_run: f64,
    /// The most rounds any method ran.
    pub rounds: u32,
    /// How the rounds went; absent in older results.
    #[serde(default)]
    pub rounds_run: Option<crate::rounds::RoundsRun>,
    pub workloads: Vec<Workload>,
    /// Each method on each workload; `target` is the workload's label, `verdict` what limited it.
    pub runs: Vec<SurveyRun>,
    pub ranking: Vec<crate::ranking::RankingTable>,
    pub peak_rss_bytes: Option<u64>,
    /// Where each run's time per layer came from (each run's `layers`), or why there is none.
    #[serde(default)]
    pub layers: String,
    /// `--latency-sample N` as given: one op in N of every synchronous method; 0 also for the queued
    /// ones (absent: every op timed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_sample: Option<u64>,
}

/// What the target is.
enum Place {
    /// A new temporary directory in the user's (removed at the end when empty).
    Dir(Created),
    File,
    Device,
}

impl Place {
    fn of(path: &Path) -> Result<Place> {
        iolab_engine::paths::check_length("--target", path)?;
        let m = std::fs::metadata(path)
            .map_err(|e| Error::usage("--target", format!("{}: {e}", path.display())))?;
        use std::os::unix::fs::FileTypeExt;
        let t = m.file_type();
        if t.is_dir() {
            // A directory of procfs, sysfs ...: refused as a run's target in it would be.
            iolab_engine::target::check_kernel_interface(&path.join("iolab-survey"))?;
            let d = Created::temp_dir(path, "iolab-survey-").map_err(|e| {
                Error::usage(
                    "--target",
                    format!("cannot create a directory in {}: {e}", path.display()),
                )
            })?;
            Ok(Place::Dir(d))
        } else if t.is_file() {
            Ok(Place::File)
        } else if t.is_block_device() {
            Ok(Place::Device)
        } else if let Some(block) = t
            .is_char_device()
            .then(|| {
                use std::os::unix::fs::MetadataExt;
                iolab_engine::target::nvme::generic_block(m.rdev())
            })
            .flatten()
        {
            // The survey's ways go through the page cache or the block layer; this device takes NVMe
            // commands only.
            Err(Error::usage(
                "--target",
                format!(
                    "{} is an NVMe generic character device, which takes NVMe commands only: run them with \
                     `iolab run --method uring_cmd --target {}`; the survey's ways reach the same disk through \
                     its block device, --target /dev/{block}",
                    path.display(),
                    path.display()
                ),
            ))
        } else {
            Err(Error::usage(
                "--target",
                format!(
                    "{} is neither a directory, a regular file nor a block device",
                    path.display()
                ),
            ))
        }
    }

    fn kind(&self) -> TargetKind {
        match self {
            Place::Device => TargetKind::BlockDevice,
            _ => TargetKind::File,
        }
    }

    fn describe(&self) -> &'static str {
        match self {
            Place::Dir(_) => "a directory: reads share a file laid out once, writes make their own",
            Place::File => "an existing file",
            Place::Device => "a block device",
        }
    }
}

/// Options that belong to another kind of target are refused, naming the flag.
fn check_options(place: &Place, o: &WorkloadOptions) -> Result<()> {
    let dir = matches!(place, Place::Dir(_));
    let wrong = [
        (
            o.file_size.is_some() && !dir,
            "--file-size",
            "sizes the files a run makes in a directory",
        ),
        (
            o.overwrite && !matches!(place, Place::File),
            "--overwrite",
            "lets writes replace an existing file's contents",
        ),
        (
            o.allow_device_writes && !matches!(place, Place::Device),
            "--allow-device-writes",
            "lets writes reach a block device",
        ),
    ];
    match wrong.into_iter().find(|w| w.0) {
        Some((_, flag, what)) => Err(Error::usage(
            flag,
            format!(
                "{what}; --target {} is {}",
                o.target.display(),
                place.describe()
            ),
        )),
        None => Ok(()),
    }
}

/// A file size that fits where the files go (one file at a time: each run removes its own).
fn check_file_size(dir: &Path, size: u64) -> Result<()> {
    if size == 0 {
        return Err(Error::usage(
            "--file-size",
            "0 is not accepted; expected 1 byte or more",
        ));
    }
    match iolab_sys::fs_free_bytes(dir) {
        Ok(free) if size > free => Err(Error::usage(
            "--file-size",
            format!(
                "{} is more than the {} free where the files go ({})",
                fmt_size(size),
                fmt_size(free),
                dir.display()
            ),
        )),
        _ => Ok(()),
    }
}

/// What is on a block device target: a mounted file system (named, with where), or none iolab knows of.
fn device_fs(dev: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let mounted = std::fs::metadata(dev)
        .ok()
        .and_then(|m| iolab_engine::target::mounted_fs(m.rdev()));
    match mounted {
        Some((fs, at)) => format!(
            "{fs}, mounted at {at}: iolab reads the device beneath the file system, not its files"
        ),
        None => "no mounted file system: the device itself".into(),
    }
}

/// A read-only block device (`losetup -r`, `blockdev --setro`) takes no write: refused once, up front.
fn check_read_only(dev: &Path) -> Result<()> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let ro = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(dev)
        .ok()
        .and_then(|f| iolab_sys::blk_read_only(f.as_raw_fd()).ok());
    if ro == Some(true) {
        return Err(Error::usage(
            "--workload",
            format!(
                "{} is a read-only block device (losetup -r, blockdev --setro, or write-protected): the \
                 kernel refuses every write to it; survey its reads (--workload read,randread)",
                dev.display()
            ),
        ));
    }
    Ok(())
}

/// Writes to an existing file or a device are refused before any work unless the user said so.
fn check_writes(place: &Place, ws: &[Workload], o: &WorkloadOptions) -> Result<()> {
    if !ws.iter().any(|w| w.op.writes()) {
        return Ok(());
    }
    match place {
        Place::File if !o.overwrite => Err(Error::usage(
            "--workload",
            "writes to an existing file replace its contents: give --overwrite, or a directory as --target",
        )),
        Place::Device if !o.allow_device_writes => Err(Error::usage(
            "--workload",
            "writes to a block device destroy what is on it: give --allow-device-writes, or a directory as \
             --target",
        )),
        Place::Device => check_read_only(&o.target),
        _ => Ok(()),
    }
}

/// The default size of each file in a directory.
const DEFAULT_FILE: u64 = 64 << 20;

/// The default size of each file in a directory: [`DEFAULT_FILE`], at most a sixteenth of free memory and disk.
fn file_size_in(dir: &Path) -> u64 {
    let cap = |v: Option<u64>| v.map_or(u64::MAX, |b| b / 16);
    let free = iolab_sys::fs_free_bytes(dir).ok();
    let size = DEFAULT_FILE
        .min(cap(iolab_engine::mem::meminfo("MemAvailable")))
        .min(cap(free));
    (size >> 20).max(1) << 20
}

/// A cell per method that the target takes, per workload; a spec iolab refuses (mmap with O_DIRECT) is a
/// row with the refusal, not a cell.
fn cells(
    place: &Place,
    target: &Path,
    ws: &[Workload],
    o: &WorkloadOptions,
    (file_size, layers, reads): (u64, bool, Option<&Path>),
) -> (Vec<Cell>, Vec<SurveyRun>) {
    let rounds = o.rounds.max(1);
    let max_s = o.max_s / rounds as f64;
    let (mut cells, mut refused) = (Vec::new(), Vec::new());
    for (i, w) in ws.iter().enumerate() {
        let ops = ops_per_run(w, o, file_size);
        for m in MethodKind::all() {
            let info = m.info();
            if info.no_data || !info.targets.fit(place.kind()).ok() {
                continue;
            }
            // In a directory, the reads share one file laid out once; a run that writes makes its own.
            let shared = reads.filter(|_| w.op == OpKind::Read);
            let path = match (place, shared) {
                (Place::Dir(_), Some(f)) => f.to_path_buf(),
                (Place::Dir(d), None) => d.path().join(format!("{}-{i}.dat", m.name())),
                _ => target.to_path_buf(),
            };
            let mut raw = RawSpec::new()
                .with("target", path.display().to_string())
                .with("method", m.name())
                .with(
                    "op",
                    match w.op {
                        OpKind::Read => "read",
                        OpKind::Write => "write",
                        OpKind::Mixed => "mixed",
                    },
                )
                .with("pattern", if w.rand { "rand" } else { "seq" })
                .with("bs", w.bs)
                .with("inflight", w.inflight as u64)
                .with("ops", ops)
                .with("duration", max_s)
                .with("count", "none");
            if w.direct {
                raw = raw.with("direct", true);
            }
            if layers {
                raw = raw.with("layers", true);
            }
            if matches!(place, Place::Dir(_)) {
                if shared.is_none() {
                    raw = raw.with("file-size", file_size);
                }
                // The run's file was just written through the page cache: its reads start after it is
                // written back and dropped (untimed), so neither the writeback nor the cache is timed.
                if w.op.reads() {
                    raw = raw.with("cold-cache", true);
                }
            }
            if o.overwrite {
                raw = raw.with("overwrite", true);
            }
            if o.allow_device_writes {
                raw = raw.with("allow-device-writes", true);
            }
            let raw = crate::survey_timing::sampled(raw, m, o.latency_sample.unwrap_or(1));
            let target = w.label();
            match raw.resolve() {
                Ok(spec) => cells.push(Cell {
                    target,
                    method: m,
                    bs: w.bs,
                    spec,
                }),
                Err(e) => refused.push(SurveyRun {
                    target,
                    method: m,
                    bs: w.bs,
                    result: None,
                    unavailable: Some(e.to_string()),
                    rounds_ns_per_op: Vec::new(),
                    round_runs: Vec::new(),
                    rounds_disturbed: 0,
                    steal_s: None,
                    verdict: None,
                }),
            }
        }
    }
    (cells, refused)
}

/// The most a run that writes writes: its file once over (a device target, or an empty file:
/// [`DEFAULT_FILE`]), as KDiskMark writes its test file; past that a longer run only wears the device.
fn write_cap(file_size: u64) -> u64 {
    if file_size > 0 {
        file_size
    } else {
        DEFAULT_FILE
    }
}

/// A run's ops: its round's share of `--ops`, and for a workload that writes at most [`write_cap`] bytes
/// (but one op per request in flight: a synchronous method's threads each need one).
fn ops_per_run(w: &Workload, o: &WorkloadOptions, file_size: u64) -> u64 {
    let ops = (o.ops / o.rounds.max(1) as u64).max(1);
    if w.op.writes() {
        ops.min(
            (write_cap(file_size) / w.bs)
                .max(u64::from(w.inflight))
                .max(1),
        )
    } else {
        ops
    }
}

/// In a directory, the file every read run reads (laid out once, on the device before the first run, removed
/// at the end); none where no workload only reads.
fn shared_reads(place: &Place, ws: &[Workload], size: u64) -> Result<Option<Created>> {
    let Place::Dir(d) = place else {
        return Ok(None);
    };
    if !ws.iter().any(|w| w.op == OpKind::Read) {
        return Ok(None);
    }
    let spec = RawSpec::new()
        .with("target", d.path().join("reads.dat").display().to_string())
        .with("method", BASELINE)
        .with("op", "read")
        .with("bs", 1u64 << 20)
        .with("file-size", size)
        .resolve()?;
    iolab_engine::target::make_read_file(&spec).map(Some)
}

/// What the survey will do, said before its first run: the runs of its first rounds and the time bound,
/// then the most it writes and where.
fn plan_lines(
    place: &Place,
    ws: &[Workload],
    cells: &[Cell],
    o: &WorkloadOptions,
    size: u64,
) -> Vec<String> {
    let rounds = o.rounds.max(1) as usize;
    let per_run = o.max_s / rounds as f64;
    let more = if o.max_time_s > 0.0 {
        format!(
            "; then more rounds where an order is undecided until {:.0} s",
            o.max_time_s
        )
    } else {
        String::new()
    };
    let runs = format!(
        "plan: {} x {}, {} runs in {}, each timed for at most {per_run:.2} s{more}",
        count(ws.len(), "workload"),
        count(
            MethodKind::all()
                .filter(|m| cells.iter().any(|c| c.method == *m))
                .count(),
            "method"
        ),
        cells.len() * rounds,
        if rounds == 1 {
            "one round".to_string()
        } else {
            format!("the first {rounds} rounds")
        }
    );
    let mut lines = vec![runs, writes_line(place, cells, o, size)];
    if matches!(place, Place::File) && cells.iter().any(|c| c.spec.op.reads()) {
        lines.extend(sparse_line(&o.target, size));
    }
    lines
}

/// An existing file with holes, said before its reads run: they read zeros the kernel makes up.
fn sparse_line(target: &Path, size: u64) -> Option<String> {
    let fd = iolab_sys::open(target, libc::O_RDONLY | libc::O_NONBLOCK, 0).ok()?;
    let holes = iolab_sys::hole_bytes(std::os::fd::AsRawFd::as_raw_fd(&fd), 0, size).ok()?;
    (holes > 0).then(|| {
        format!(
            "sparse: {} of the file's {} ({}) are holes, which read as zeros the kernel makes up without \
             the device: the reads there are no device figure (write the file first)",
            fmt_size(holes),
            fmt_size(size),
            iolab_engine::units::pct1(holes as f64 / size.max(1) as f64)
        )
    })
}

/// The most the first rounds write (each write run's ops times its block size, and in a directory the file
/// the reads share), and where.
fn writes_line(place: &Place, cells: &[Cell], o: &WorkloadOptions, size: u64) -> String {
    let rounds = o.rounds.max(1);
    let writing: Vec<&Cell> = cells.iter().filter(|c| c.spec.op.writes()).collect();
    let most = first_rounds_writes(cells, rounds);
    let (at, reads) = match place {
        Place::Dir(d) => (
            format!("in {}", d.path().display()),
            cells
                .iter()
                .any(|c| c.spec.op == OpKind::Read)
                .then_some(size),
        ),
        _ => (format!("to {}", o.target.display()), None),
    };
    let mut parts: Vec<String> = reads
        .map(|r| format!("{} for the reads", fmt_size(r)))
        .into_iter()
        .collect();
    if !writing.is_empty() {
        let traced = writing.iter().filter(|c| c.spec.layers).count();
        parts.push(format!(
            "at most {} in each of {}{} of the first rounds; a further round's run starts only within that",
            // The most one run writes: its file once over, or one block where a block is larger.
            fmt_size(writing.iter().map(|c| crate::rounds::most_written(c)).max().unwrap_or(0)),
            count(writing.len() * rounds as usize, "write run"),
            match traced {
                0 => String::new(),
                1 => " and 1 untimed pass (the block layer traced)".to_string(),
                n => format!(" and {n} untimed passes (the block layer traced)"),
            }
        ));
    }
    match (parts.is_empty(), writing.is_empty()) {
        (true, _) => "writes: nothing (reads only)".into(),
        (false, true) => format!("writes: {} {at}", parts.join("")),
        (false, false) => format!(
            "writes: at most {} {at}: {}",
            fmt_size(most.saturating_add(reads.unwrap_or(0))),
            parts.join(", then ")
        ),
    }
}

/// The most the runs of the first `rounds` rounds write: each write run's ops times its block size, and
/// as much again for a run of the first round whose block layer is traced (its traced pass writes first).
fn first_rounds_writes(cells: &[Cell], rounds: u32) -> u64 {
    let each = |c: &Cell| {
        let passes = u64::from(rounds) + u64::from(c.spec.layers);
        crate::rounds::most_written(c).saturating_mul(passes)
    };
    cells.iter().map(each).fold(0u64, u64::saturating_add)
}

/// "1 workload", "16 workloads".
fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// Why no run has a time per layer though they were traced (the first run's note), if none has.
fn layers_missing(runs: &[SurveyRun]) -> Option<String> {
    let results: Vec<&RunResult> = runs.iter().filter_map(|r| r.result.as_ref()).collect();
    if results.is_empty() || results.iter().any(|r| r.layers.is_some()) {
        return None;
    }
    let why = results
        .iter()
        .flat_map(|r| r.notes.iter())
        .find_map(|n| n.strip_prefix("no time per layer (--layers): "))?;
    Some(format!("no time per layer: {why}"))
}

/// Runs the survey.
pub fn survey(o: &WorkloadOptions, clock: &ClockInfo) -> Result<WorkloadSurvey> {
    let place = Place::of(&o.target)?;
    let ws = workloads(
        &o.asked,
        matches!(place, Place::Dir(_)) || o.overwrite || o.allow_device_writes,
    );
    check_options(&place, o)?;
    check_writes(&place, &ws, o)?;
    let (fs, file_size) = match &place {
        Place::Dir(d) => {
            let size = o.file_size.unwrap_or_else(|| file_size_in(d.path()));
            check_file_size(d.path(), size)?;
            iolab_engine::paths::set_scratch_dir(d.path());
            (iolab_sys::fs_type_name(d.path()), size)
        }
        // A write run writes the file once over at most (its size caps the run's bytes).
        Place::File => (
            iolab_sys::fs_type_name(&o.target),
            std::fs::metadata(&o.target).map_or(0, |m| m.len()),
        ),
        Place::Device => (Ok(""), 0),
    };
    let fs = match &place {
        Place::Device => device_fs(&o.target),
        _ => fs.unwrap_or("unknown filesystem").to_string(),
    };
    let disk = iolab_engine::measure::blocktrace::disk_of_path(&o.target);
    let layers = match &disk {
        Ok(d) => format!(
            "time per layer: the block layer's tracepoints on {}, in an untimed pass of each run",
            d.name
        ),
        Err(why) => format!("no time per layer: {why}"),
    };
    let shared = shared_reads(&place, &ws, file_size)?;
    let reads = shared.as_ref().map(|c| c.path());
    let (cells, refused) = cells(&place, &o.target, &ws, o, (file_size, disk.is_ok(), reads));
    if let Some(f) = &o.on_plan {
        plan_lines(&place, &ws, &cells, o, file_size)
            .into_iter()
            .for_each(f);
    }
    let rounds = o.rounds.max(1);
    let plan = crate::rounds::Plan {
        first: rounds,
        max_time_s: o.max_time_s,
        // What the plan said the runs write at most, for every round: a further round's runs only
        // within it.
        write_budget: Some(first_rounds_writes(&cells, rounds)),
    };
    let (mut runs, rounds_run) = crate::rounds::run_rounds(&cells, plan, o.on_run.as_ref(), clock)?;
    let layers = layers_missing(&runs).unwrap_or(layers);
    runs.extend(refused);
    // The workloads' order, each method in the registry's order.
    let order = |r: &SurveyRun| ws.iter().position(|w| w.label() == r.target);
    runs.sort_by_key(|r| (order(r), MethodKind::all().position(|m| m == r.method)));
    let ranking = ws
        .iter()
        .flat_map(|w| {
            let mine: Vec<SurveyRun> = runs
                .iter()
                .filter(|r| r.target == w.label())
                .cloned()
                .collect();
            crate::survey::ranking_against(&mine, BASELINE, w.baseline_label())
        })
        .collect();
    Ok(WorkloadSurvey {
        schema_version: SCHEMA_VERSION,
        host: Host::current(),
        clock: clock.clone(),
        target: o.target.display().to_string(),
        target_kind: place.describe().into(),
        fs,
        file_size: matches!(place, Place::Dir(_)).then_some(file_size),
        ops_per_run: (o.ops / rounds as u64).max(1),
        max_s_per_run: o.max_s / rounds as f64,
        rounds: rounds_run.rounds,
        rounds_run: Some(rounds_run),
        workloads: ws,
        runs,
        ranking,
        peak_rss_bytes: iolab_engine::mem::peak_rss(),
        layers,
        latency_sample: o.latency_sample,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_set_is_kdiskmarks_and_writes_only_where_allowed() {
        let ws = workloads(&Asked::default(), false);
        let labels: Vec<String> = ws.iter().map(|w| w.label()).collect();
        assert_eq!(
            labels,
            [
                "1 MiB sequential reads, 8 in flight, O_DIRECT",
                "1 MiB sequential reads, 1 in flight, O_DIRECT",
                "1 MiB sequential reads, 8 in flight, buffered",
                "1 MiB sequential reads, 1 in flight, buffered",
                "4 KiB random reads, 32 in flight, O_DIRECT",
                "4 KiB random reads, 1 in flight, O_DIRECT",
                "4 KiB random reads, 32 in flight, buffered",
                "4 KiB random reads, 1 in flight, buffered",
            ]
        );
        assert_eq!(workloads(&Asked::default(), true).len(), 16);
        let asked = Asked {
            kinds: vec![parse_kind("randread").unwrap()],
            bs: vec![4096],
            inflight: vec![8],
            direct: vec![true],
        };
        assert_eq!(
            workloads(&asked, false)[0].label(),
            "4 KiB random reads, 8 in flight, O_DIRECT"
        );
        assert_eq!(workloads(&asked, false)[0].short(), "RND4K Q8 read");
        assert_eq!(
            workloads(&Asked::default(), true)[15].short(),
            "RND4K Q1 write"
        );
        assert!(parse_kind("trim")
            .unwrap_err()
            .contains("expected read, write, randread, randwrite, rw or randrw"));
        assert_eq!(parse_kind("randrw"), Ok((OpKind::Mixed, true)));
    }
}

//! io_uring NOPs through iolab against fio's own peak tester, t/io_uring, where `bench/t_io_uring.sh`
//! built it: alternating pairs of one-second runs at batch 1 and 32 (t/io_uring's the one per-second
//! line of a two-second run), and cached 4 KiB random reads at depth 32 of the script's data file. The
//! script pins fio's b46877ed, whose NOP is a bare IORING_OP_NOP as iolab sends it (later versions make
//! the kernel look up a file for each).

use iolab_engine::error::{Error, Result};
use iolab_engine::measure::clock::ClockInfo;
use iolab_engine::method::io_uring::INFO as URING;
use iolab_engine::spec::{RawSpec, Val};
use iolab_sys as sys;
use serde::Serialize;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// Where `bench/t_io_uring.sh` builds t/io_uring by default.
pub const DEFAULT_PLACE: &str = "/var/tmp/iolab-t-io-uring/fio-b46877ed/t/io_uring";

/// Pairs per batch: the issue's measure is the median of five.
pub const PAIRS: usize = 5;

/// iolab's NOPs against t/io_uring's.
#[derive(Debug, Clone, Serialize)]
pub struct AgainstTIoUring {
    pub path: String,
    pub pairs: usize,
    pub rows: Vec<TIoUringRow>,
    /// Cached 4 KiB random reads at depth 32, batch 32; Err: why they were not run.
    pub reads: std::result::Result<ReadRow, String>,
}

/// Cached 4 KiB random reads at depth 32 and batch 32 of `file`: medians of [`PAIRS`] alternating runs
/// (iolab timed, iolab untimed, t/io_uring), each ratio the median of the per-pair ones.
#[derive(Debug, Clone, Serialize)]
pub struct ReadRow {
    pub file: String,
    pub theirs: f64,
    pub timed: f64,
    pub timed_ratio: f64,
    pub untimed: f64,
    pub untimed_ratio: f64,
}

/// One batch size: medians of [`PAIRS`] alternating runs, each ratio the median of the per-pair ones.
#[derive(Debug, Clone, Serialize)]
pub struct TIoUringRow {
    pub batch: u32,
    /// t/io_uring's NOPs per second (it times no request by default).
    pub theirs: f64,
    /// iolab's on its defaults (every request timed, one clock read per submission round).
    pub timed: f64,
    pub timed_ratio: f64,
    /// iolab's under `--latency-sample 0` (no request timed): like with like.
    pub untimed: f64,
    pub untimed_ratio: f64,
    /// The raw loop's against t/io_uring: the most a loop of iolab's ring settings that records
    /// nothing gets, run beside each pair.
    pub raw_ratio: f64,
}

/// t/io_uring: `$IOLAB_T_IO_URING`, else [`DEFAULT_PLACE`]; Err: why there is none to run.
pub fn find() -> std::result::Result<PathBuf, String> {
    let (p, named) = match std::env::var_os("IOLAB_T_IO_URING") {
        Some(p) => (PathBuf::from(p), true),
        None => (PathBuf::from(DEFAULT_PLACE), false),
    };
    match p.is_file() {
        true => Ok(p),
        false if named => Err(format!("IOLAB_T_IO_URING={}: no such file", p.display())),
        false => Err(format!(
            "not built ({DEFAULT_PLACE}): bench/t_io_uring.sh builds it; IOLAB_T_IO_URING names another"
        )),
    }
}

/// iolab's io_uring NOPs to /dev/null at `batch` (its depth too), bounded by `bound` (`ops` or
/// `duration` and its value), without the kernel's counters, `--latency-sample` `sample` (1: every
/// request timed, the default; 0: none).
pub(crate) fn nop_spec(
    batch: u32,
    bound: (&str, i64),
    sample: i64,
) -> Result<iolab_engine::spec::Spec> {
    RawSpec::new()
        .with("latency-sample", Val::Int(sample))
        .with("method", URING.name)
        .with("target", "/dev/null")
        .with(bound.0, Val::Int(bound.1))
        .with("qd", Val::Int(batch as i64))
        .with("batch", Val::Int(batch as i64))
        .with("nop-requests", Val::Bool(true))
        .with("count", "none")
        .with("seed", Val::Int(1))
        .resolve()
}

/// [`PAIRS`] alternating pairs at batch 1 and 32 (each pair: iolab timed, iolab untimed, t/io_uring,
/// the raw loop).
pub fn against(exe: &Path, clock: &ClockInfo) -> Result<AgainstTIoUring> {
    let mut rows = Vec::new();
    for batch in [1u32, 32] {
        let timed_spec = nop_spec(batch, ("duration", 1), 1)?;
        let untimed_spec = nop_spec(batch, ("duration", 1), 0)?;
        let [mut theirs, mut timed, mut untimed, mut raw]: [Vec<f64>; 4] = Default::default();
        for _ in 0..PAIRS {
            timed.push(crate::run::run(&timed_spec, clock)?.iops);
            untimed.push(crate::run::run(&untimed_spec, clock)?.iops);
            theirs.push(nops_per_s(exe, batch)?);
            // About half a second of the raw loop at the rate t/io_uring just had.
            let ops = (theirs[theirs.len() - 1] / 2.0) as u64;
            raw.push(raw_nop_loop(ops.max(u64::from(batch)), batch)?);
        }
        let ratio = |a: &[f64]| ratio_to(a, &theirs);
        rows.push(TIoUringRow {
            batch,
            theirs: median(&theirs),
            timed: median(&timed),
            timed_ratio: ratio(&timed),
            untimed: median(&untimed),
            untimed_ratio: ratio(&untimed),
            raw_ratio: ratio(&raw),
        });
    }
    Ok(AgainstTIoUring {
        path: exe.display().to_string(),
        pairs: PAIRS,
        rows,
        reads: reads_against(exe, clock)?,
    })
}

/// The data file `bench/t_io_uring.sh` makes beside its build of t/io_uring (`WORK/data.bin`, the build
/// being `WORK/fio-REF/t/io_uring`); Err: why there is none.
fn data_file(exe: &Path) -> std::result::Result<PathBuf, String> {
    let work = exe.parent().and_then(Path::parent).and_then(Path::parent);
    let f = work.map(|w| w.join("data.bin"));
    match f {
        Some(f) if f.is_file() => Ok(f),
        _ => Err(format!(
            "not run: no data file beside {} (bench/t_io_uring.sh makes WORK/data.bin)",
            exe.display()
        )),
    }
}

/// Cached 4 KiB random reads at depth 32 and batch 32, iolab (on its defaults, then under
/// `--latency-sample 0`) against t/io_uring, in [`PAIRS`] alternating sets; the file is read through once
/// first so that every read hits the page cache.
fn reads_against(exe: &Path, clock: &ClockInfo) -> Result<std::result::Result<ReadRow, String>> {
    let file = match data_file(exe) {
        Ok(f) => f,
        Err(why) => return Ok(Err(why)),
    };
    let read_all = |f: &Path| -> std::io::Result<u64> {
        std::io::copy(&mut std::fs::File::open(f)?, &mut std::io::sink())
    };
    read_all(&file).map_err(|e| Error::Runtime(format!("{}: {e}", file.display())))?;
    let spec = |sample: i64| {
        RawSpec::new()
            .with("latency-sample", Val::Int(sample))
            .with("method", URING.name)
            .with("op", "read")
            .with("pattern", "rand")
            .with("bs", Val::Int(4096))
            .with("target", file.display().to_string().as_str())
            .with("duration", Val::Int(1))
            .with("qd", Val::Int(32))
            .with("batch", Val::Int(32))
            .with("count", "none")
            .with("seed", Val::Int(1))
            .resolve()
    };
    let (timed_spec, untimed_spec) = (spec(1)?, spec(0)?);
    let [mut theirs, mut timed, mut untimed]: [Vec<f64>; 3] = Default::default();
    for _ in 0..PAIRS {
        timed.push(crate::run::run(&timed_spec, clock)?.iops);
        untimed.push(crate::run::run(&untimed_spec, clock)?.iops);
        let f = file.display().to_string();
        theirs.push(t_rate(exe, &["-d32", "-s32", "-c32", "-R1", &f])?);
    }
    let ratio = |a: &[f64]| ratio_to(a, &theirs);
    Ok(Ok(ReadRow {
        file: file.display().to_string(),
        theirs: median(&theirs),
        timed: median(&timed),
        timed_ratio: ratio(&timed),
        untimed: median(&untimed),
        untimed_ratio: ratio(&untimed),
    }))
}

/// The median of the per-pair ratios of `ours` to `theirs`.
fn ratio_to(ours: &[f64], theirs: &[f64]) -> f64 {
    median(
        &ours
            .iter()
            .zip(theirs)
            .map(|(a, b)| a / b)
            .collect::<Vec<_>>(),
    )
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// t/io_uring's NOPs per second at `batch` (depth, submit and complete batch alike) in the one line it
/// prints of a two-second run (it prints none of a one-second run), without its registered files and
/// buffers and polling, as the script runs it.
fn nops_per_s(exe: &Path, batch: u32) -> Result<f64> {
    let b = batch.to_string();
    t_rate(exe, &["-N1", "-d", &b, "-s", &b, "-c", &b])
}

/// t/io_uring's IOPS with `args`, in the lines it prints of a two-second run, without registered files
/// or buffers, polling or O_DIRECT.
fn t_rate(exe: &Path, args: &[&str]) -> Result<f64> {
    let out = std::process::Command::new(exe)
        .args(["-r", "2", "-p0", "-B0", "-F0", "-O0"])
        .args(args)
        .output()
        .map_err(|e| Error::Runtime(format!("{}: {e}", exe.display())))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let rates: Vec<f64> = text.lines().filter_map(rate_of).collect();
    match rates.is_empty() {
        true => Err(Error::Runtime(format!(
            "{} printed no IOPS line (exit {:?}): {}",
            exe.display(),
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))),
        false => Ok(rates.iter().sum::<f64>() / rates.len() as f64),
    }
}

/// The rate of a t/io_uring line "IOPS=13.90M, IOS/call=32/32" ("Maximum IOPS=..." is not one).
fn rate_of(line: &str) -> Option<f64> {
    let v = line.strip_prefix("IOPS=")?.split(',').next()?;
    let (num, mult) = match v.chars().last()? {
        'M' => (&v[..v.len() - 1], 1e6),
        'K' => (&v[..v.len() - 1], 1e3),
        _ => (v, 1.0),
    };
    num.parse::<f64>().ok().map(|n| n * mult)
}

/// The raw loop's ring: what fio's t/io_uring sets up, the best a hand-written loop does.
pub const RAW_RING: &str =
    "COOP_TASKRUN, SINGLE_ISSUER, DEFER_TASKRUN, NO_SQARRAY, a registered ring fd, \
                            io_uring_enter by its instruction";

/// The raw loop: `ops` NOPs in batches of `batch` on a [`RAW_RING`] ring; returns NOPs per second.
pub fn raw_nop_loop(ops: u64, batch: u32) -> Result<f64> {
    use io_uring::{opcode, IoUring};
    let setup_err = |e: std::io::Error| {
        iolab_engine::error::Error::from(iolab_sys::SysErr::new(
            "io_uring_setup",
            e.raw_os_error().unwrap_or(0),
        ))
    };
    let mut ring: IoUring = IoUring::builder()
        .setup_coop_taskrun()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .setup_no_sqarray()
        .build(batch.next_power_of_two().max(2))
        .map_err(setup_err)?;
    let idx = sys::io_uring_register_ring_fd(ring.as_raw_fd())? as i32;
    let flags = sys::IORING_ENTER_GETEVENTS | sys::IORING_ENTER_REGISTERED_RING;
    let nop = opcode::Nop::new().build().user_data(7);
    let t0 = sys::monotonic_ns();
    let mut done = 0u64;
    while done < ops {
        {
            let mut sq = ring.submission();
            for _ in 0..batch {
                // SAFETY: a NOP references no memory.
                unsafe { sq.push(&nop) }.expect("room for one batch");
            }
        }
        sys::io_uring_enter(idx, batch, batch, flags)?;
        let n = ring.completion().count() as u64;
        done += n;
    }
    let dt = (sys::monotonic_ns() - t0) as f64 * 1e-9;
    sys::io_uring_unregister_ring_fd(ring.as_raw_fd(), idx as u32)?;
    Ok(done as f64 / dt)
}

#[cfg(test)]
mod tests {
    /// The data file is the script's, beside its build (WORK/data.bin for WORK/fio-REF/t/io_uring), and
    /// its absence is said.
    #[test]
    fn the_data_file_is_found_beside_the_build_or_its_absence_said() {
        let work = tempfile::tempdir().unwrap();
        let exe = work.path().join("fio-b46877ed/t/io_uring");
        let why = super::data_file(&exe).unwrap_err();
        assert!(
            why.contains("bench/t_io_uring.sh makes WORK/data.bin"),
            "{why}"
        );
        std::fs::write(work.path().join("data.bin"), b"x").unwrap();
        assert_eq!(
            super::data_file(&exe).unwrap(),
            work.path().join("data.bin")
        );
    }

    #[test]
    fn rates_are_read_from_t_io_urings_lines() {
        assert_eq!(super::rate_of("IOPS=13.90M, IOS/call=32/32"), Some(13.9e6));
        assert_eq!(
            super::rate_of("IOPS=950.12K, IOS/call=1/1"),
            Some(950_120.0)
        );
        assert_eq!(super::rate_of("IOPS=812, IOS/call=1/1"), Some(812.0));
        assert_eq!(super::rate_of("Maximum IOPS=13.90M"), None);
        assert_eq!(super::rate_of("submitter=0, tid=947"), None);
    }
}

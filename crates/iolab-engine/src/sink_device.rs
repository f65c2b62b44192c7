//! /dev/iolab_sink as iolab sees it: is it there (and is it iolab's driver, speaking this build's ABI), its
//! personalities, and its counters read around a run and checked against iolab's own counts.
//!
//! iolab never opens a character device to ask who it is unless sysfs says it is the misc device the
//! iolab_sink module registered (/sys/class/misc/iolab_sink/dev has its numbers): other character devices
//! are refused by their numbers alone, unopened.

use crate::error::{Error, Result};

use iolab_sys as sys;
use iolab_sys::{SinkCounters, SinkGaps, SinkInfo, IOLAB_SINK_GAP_SUB_BITS};
use serde::{Deserialize, Serialize};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

/// Where the driver's device appears.
pub const DEVICE: &str = "/dev/iolab_sink";
/// The module's name (lsmod, delete_module).
pub const MODULE: &str = "iolab_sink";
const SYSFS_DEV: &str = "/sys/class/misc/iolab_sink/dev";

/// How the driver's file takes data: chosen per open (`--sink`), defaulting to the module parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Personality {
    /// `.write`/`.read` only and no FMODE_NOWAIT, like the Pi thesis's logmodule: io_uring hands every
    /// request to an io-wq worker.
    Legacy,
    /// `.write_iter`/`.read_iter` and FMODE_NOWAIT: io_uring completes requests inline.
    Nowait,
}

impl Personality {
    pub fn name(self) -> &'static str {
        match self {
            Personality::Legacy => "legacy",
            Personality::Nowait => "nowait",
        }
    }

    pub fn abi(self) -> u32 {
        match self {
            Personality::Legacy => sys::IOLAB_SINK_LEGACY,
            Personality::Nowait => sys::IOLAB_SINK_NOWAIT,
        }
    }

    pub fn from_abi(v: u32) -> Personality {
        if v == sys::IOLAB_SINK_NOWAIT {
            Personality::Nowait
        } else {
            Personality::Legacy
        }
    }
}

/// The (major, minor) of the misc device the iolab_sink module registered, if it is loaded.
pub fn device_numbers() -> Option<(u32, u32)> {
    let t = std::fs::read_to_string(SYSFS_DEV).ok()?;
    let (a, b) = t.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Is a character device with these numbers iolab's sink?
pub fn is_sink_device(rdev: libc::dev_t) -> bool {
    device_numbers() == Some((libc::major(rdev), libc::minor(rdev)))
}

/// An open descriptor of the sink used to ask the driver (identify, counters, in-kernel writes).
#[derive(Debug)]
pub struct Sink {
    fd: OwnedFd,
    pub info: SinkInfo,
}

impl Sink {
    /// Opens `path` (read-only) and asks the driver who it is: the magic and this build's ABI version, or
    /// an error that says what is there instead. `path` must be the sink's node ([`is_sink_device`]).
    pub fn open(path: &Path) -> Result<Sink> {
        let shown = path.display().to_string();
        let fd = sys::open(path, libc::O_RDONLY | libc::O_CLOEXEC, 0)
            .map_err(|e| Error::sys_on(e, &shown))?;
        Sink::identify(fd, &shown)
    }

    /// Asks the driver behind `fd` (opened read-only) who it is, as [`Sink::open`] does.
    pub fn identify(fd: OwnedFd, shown: &str) -> Result<Sink> {
        let info = sys::sink_identify(fd.as_raw_fd()).map_err(|e| {
            Error::Runtime(format!(
                "{shown} did not answer iolab's IDENTIFY ioctl ({}): it is not iolab's sink driver",
                sys::errno_name(e.errno)
            ))
        })?;
        if info.magic != sys::IOLAB_SINK_MAGIC {
            return Err(Error::Runtime(format!(
                "{shown} answered IDENTIFY with magic {:#x}, not iolab's {:#x}: another driver",
                info.magic,
                sys::IOLAB_SINK_MAGIC
            )));
        }
        if info.abi != sys::IOLAB_SINK_ABI {
            return Err(Error::Runtime(format!(
                "{shown} is iolab's sink driver of ABI {}, this iolab speaks ABI {}: unload it (iolab driver \
                 unload) and load the one this iolab builds (iolab driver build, iolab driver load)",
                info.abi,
                sys::IOLAB_SINK_ABI
            )));
        }
        Ok(Sink { fd, info })
    }

    /// Opens the sink at [`DEVICE`], checking its numbers first.
    pub fn open_default() -> Result<Sink> {
        if let Some(why) = absent_reason() {
            return Err(Error::Runtime(why));
        }
        Sink::open(Path::new(DEVICE))
    }

    pub fn fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    pub fn counters(&self) -> Result<SinkCounters> {
        sys::sink_counters(self.fd.as_raw_fd()).map_err(Error::from)
    }

    pub fn default_personality(&self) -> Personality {
        Personality::from_abi(self.info.default_personality)
    }
}

/// Why /dev/iolab_sink cannot be used here (`None`: it is there and is iolab's driver of this ABI).
pub fn absent_reason() -> Option<String> {
    let loaded = Path::new("/sys/module").join(MODULE).exists();
    let Some((ma, mi)) = device_numbers() else {
        return Some(if loaded {
            format!("the {MODULE} module is loaded but registered no misc device ({SYSFS_DEV} is missing)")
        } else {
            format!(
                "the {MODULE} driver is not loaded (/sys/module/{MODULE} is absent): build it with `iolab driver \
                 build` and load it with `iolab driver load` (a guest with it: `iolab vm`)"
            )
        });
    };
    match sys::stat(Path::new(DEVICE)) {
        Ok(st)
            if st.st_mode & libc::S_IFMT == libc::S_IFCHR
                && (libc::major(st.st_rdev), libc::minor(st.st_rdev)) == (ma, mi) => {}
        Ok(_) => {
            return Some(format!(
                "{DEVICE} is not the character device {ma}:{mi} the {MODULE} module registered"
            ))
        }
        Err(e) => {
            return Some(format!(
                "the {MODULE} module is loaded as device {ma}:{mi}, but {DEVICE} cannot be reached ({}): is \
                 devtmpfs mounted on /dev?",
                sys::errno_name(e.errno)
            ))
        }
    }
    Sink::open(Path::new(DEVICE)).err().map(|e| e.to_string())
}

/// The driver's counters over one pass, and what they say against iolab's own counts (`RunResult.sink`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SinkFigures {
    /// The personality of the run's files.
    pub personality: Option<Personality>,
    /// The files' log switch (`--sink-log`): a log line and a tracepoint call per write.
    pub log: bool,
    /// Bytes of the driver's buffer (writes land there modulo its size; mmap maps it).
    pub buffer_bytes: u64,
    /// The driver's counters, after minus before the pass (every file of the device: another program
    /// using the sink at the same time shows up here, and in a disagreeing check).
    pub counted: SinkCounters,
    /// Share of the driver's data calls made by io_uring's io-wq worker threads (None: no calls).
    pub worker_share: Option<f64>,
    /// The driver's counts against iolab's: "write calls: driver 1000, iolab 1000: agree".
    pub checks: Vec<SinkCheck>,
    /// `--sink-log`: the time between the pass's logged writes as the driver saw them (absent without the
    /// log switch, and in older results).
    #[serde(default)]
    pub driver_gaps: Option<DriverGaps>,
}

/// The time between writes as the driver saw them: each logged write's ktime (the one its log line
/// prints) minus the previous logged write's, over one pass (the Pi thesis's Figures 19 and 37-40 took
/// theirs from its driver's tracepoint the same way). Percentiles are a histogram bucket's lowest value,
/// within 1/32 (3%) of the values it holds; the mean is exact.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DriverGaps {
    /// Gaps: the pass's logged writes but its first.
    pub count: u64,
    pub mean_ns: f64,
    pub p50_ns: f64,
    pub p99_ns: f64,
    /// The 99.9th percentile: the tail a real-time kernel is chosen for (0 in records made before it).
    #[serde(default)]
    pub p999_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
}

/// The lowest value of bucket `i` of the driver's gap histogram.
fn gap_value_of(i: usize) -> u64 {
    let sub = IOLAB_SINK_GAP_SUB_BITS;
    if i < 2 << sub {
        return i as u64;
    }
    let shift = (i >> sub) - 1;
    ((i - (shift << sub)) as u64) << shift
}

impl DriverGaps {
    /// The figures of a histogram the driver returned (None: no gap in it).
    pub fn of(g: &SinkGaps) -> Option<DriverGaps> {
        if g.count == 0 {
            return None;
        }
        let q = |q: f64| {
            let rank = ((q * g.count as f64).ceil() as u64).clamp(1, g.count);
            let mut seen = 0u64;
            let i = g.buckets.iter().position(|b| {
                seen += b;
                seen >= rank
            });
            i.map_or(g.max_ns, gap_value_of).clamp(g.min_ns, g.max_ns) as f64
        };
        Some(DriverGaps {
            count: g.count,
            mean_ns: g.sum_ns as f64 / g.count as f64,
            p50_ns: q(0.5),
            p99_ns: q(0.99),
            p999_ns: q(0.999),
            min_ns: g.min_ns as f64,
            max_ns: g.max_ns as f64,
        })
    }
}

/// One cross-check of a driver counter against iolab's own figure.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SinkCheck {
    pub what: String,
    pub driver: u64,
    pub iolab: u64,
    pub agrees: bool,
}

impl SinkCheck {
    pub fn text(&self) -> String {
        format!(
            "sink driver {}: driver {}, iolab {}: {}",
            self.what,
            self.driver,
            self.iolab,
            if self.agrees { "agree" } else { "DISAGREE" }
        )
    }
}

/// `after - before`, field by field.
pub fn delta(before: &SinkCounters, after: &SinkCounters) -> SinkCounters {
    let d = |a: u64, b: u64| b.saturating_sub(a);
    SinkCounters {
        write_calls: d(before.write_calls, after.write_calls),
        write_bytes: d(before.write_bytes, after.write_bytes),
        read_calls: d(before.read_calls, after.read_calls),
        read_bytes: d(before.read_bytes, after.read_bytes),
        nowait_calls: d(before.nowait_calls, after.nowait_calls),
        worker_calls: d(before.worker_calls, after.worker_calls),
        cmd_calls: d(before.cmd_calls, after.cmd_calls),
        cmd_bytes: d(before.cmd_bytes, after.cmd_bytes),
        kernel_writes: d(before.kernel_writes, after.kernel_writes),
        kernel_bytes: d(before.kernel_bytes, after.kernel_bytes),
        log_lines: d(before.log_lines, after.log_lines),
        mmaps: d(before.mmaps, after.mmaps),
        reserved: [0; 4],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_driver_is_named_with_what_to_do() {
        if device_numbers().is_some() {
            println!(
                "SKIPPED a_missing_driver_is_named_with_what_to_do: the sink driver is loaded here"
            );
            return;
        }
        let why = absent_reason().expect("no driver here");
        assert!(why.contains("iolab driver build"), "{why}");
        assert!(why.contains("/sys/module/iolab_sink"), "{why}");
    }

    /// The C driver's bucket of `v` (`sink_gap_bucket` in kmod/iolab_sink.c).
    fn gap_bucket(v: u64) -> usize {
        let sub = IOLAB_SINK_GAP_SUB_BITS;
        if v < 2 << sub {
            return v as usize;
        }
        let shift = 64 - v.leading_zeros() - sub - 1;
        ((shift as usize) << sub) + (v >> shift) as usize
    }

    #[test]
    fn driver_gaps_read_the_drivers_buckets_within_a_32nd() {
        for v in [0u64, 1, 63, 64, 65, 1_000, 4_321, 1 << 40, u64::MAX] {
            let i = gap_bucket(v);
            assert!(i < iolab_sys::IOLAB_SINK_GAP_BUCKETS, "{v}");
            let lo = gap_value_of(i);
            assert!(lo <= v && (v - lo) as f64 <= v as f64 / 32.0, "{v}: {lo}");
            assert_eq!(gap_bucket(lo), i, "{v}");
        }
        let mut g = SinkGaps::default();
        // 98 gaps of 1,000 ns and 2 of 50,000: p50 1,000, p99 50,000, mean 1,980.
        for v in [1_000u64; 98].into_iter().chain([50_000, 50_000]) {
            g.buckets[gap_bucket(v)] += 1;
            g.sum_ns += v;
            g.count += 1;
        }
        (g.min_ns, g.max_ns) = (1_000, 50_000);
        let d = DriverGaps::of(&g).expect("gaps");
        assert_eq!(d.count, 100);
        assert_eq!(d.mean_ns, 1_980.0);
        assert!((d.p50_ns - 1_000.0).abs() <= 1_000.0 / 32.0, "{d:?}");
        assert!((d.p99_ns - 50_000.0).abs() <= 50_000.0 / 32.0, "{d:?}");
        assert!((d.p999_ns - 50_000.0).abs() <= 50_000.0 / 32.0, "{d:?}");
        assert_eq!(d.max_ns, 50_000.0);
        assert_eq!(DriverGaps::of(&SinkGaps::default()), None);
    }

    #[test]
    fn deltas_are_per_field() {
        let a = SinkCounters {
            write_calls: 5,
            write_bytes: 20,
            ..Default::default()
        };
        let b = SinkCounters {
            write_calls: 8,
            write_bytes: 32,
            worker_calls: 3,
            ..Default::default()
        };
        let d = delta(&a, &b);
        assert_eq!((d.write_calls, d.write_bytes, d.worker_calls), (3, 12, 3));
    }
}

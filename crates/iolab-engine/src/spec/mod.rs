//! The workload description, as values: what a user asked for. Its validation, the one place where bad
//! input is rejected, is `crate::resolve`, above the methods and targets it checks.
//!
//! A [`RawSpec`] is what a user wrote, from a TOML file (`--spec FILE`, keys spelled like the flags without
//! the dashes: `bs = "4k"`, `file-size = "64m"`, `qd = 32`), from flags, which override the file key by key,
//! and from `--vary` points. Every key is declared once, in [`options::all`]. [`RawSpec::resolve`]
//! (`resolve/`) turns it into a [`Spec`] or an [`Error::Usage`] naming the flag and what it accepts.
//! Checks that need to look at the target (is it a directory, is it mounted, what O_DIRECT alignment does
//! it need) live in `target::setup`, which also returns usage errors.

pub mod defaults;
mod kinds;
pub mod method_kind;
pub mod method_opts;
pub mod options;
pub mod rw_flags;
mod warmup;

pub use defaults::*;
pub use options::Val;

use crate::error::{Error, Result};
pub use crate::measure::counters::CountMode;
pub use crate::pattern::Pattern;
pub use crate::pattern::Zones;
pub use crate::skew::Distribution;
use crate::units::parse_count;
pub use kinds::*;
pub use method_kind::MethodKind;
pub use method_opts::{Figure, MethodOpts};
pub use options::{RawSpec, OPTIONS};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
pub use warmup::Warmup;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    Write,
    Read,
    /// Reads and writes in one run, each op's direction drawn from the seed (`--read-pct`; fio's
    /// randrw/readwrite with rwmixread).
    Mixed,
}

impl OpKind {
    /// Some of its ops write.
    pub fn writes(self) -> bool {
        self != OpKind::Read
    }

    /// Some of its ops read.
    pub fn reads(self) -> bool {
        self != OpKind::Write
    }
}

/// Where a spec is resolved for ([`RawSpec::resolve_on`]): this machine, or another one that runs it
/// (`iolab vm`'s guest, a fleet's host), whose files, memory, CPUs and limits are its own. Resolved for
/// elsewhere, every check of the flags and their combinations is made, but none that asks this machine:
/// whether the target is a directory here, this machine's memory (the memory budget), its CPUs
/// (`--sq-cpu`), RLIMIT_MEMLOCK (`--fixed-bufs`, the offload's data area). Such a spec is for checking
/// only: the other machine resolves it again and runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunsOn {
    Here,
    Elsewhere,
}

/// When to flush: never, once at the end (timed), or after every N ops (timed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncEvery {
    None,
    End,
    Every(u64),
}

impl SyncEvery {
    pub(crate) fn parse(flag: &str, s: &str) -> Result<SyncEvery> {
        let t = s.trim();
        match t {
            "none" => Ok(SyncEvery::None),
            "end" => Ok(SyncEvery::End),
            _ => {
                let n = t
                    .strip_prefix("every:")
                    .and_then(|n| parse_count(n).ok())
                    .filter(|&n| n > 0);
                n.map(SyncEvery::Every).ok_or_else(|| {
                    Error::usage(
                        flag,
                        format!("'{s}' is not accepted; expected none, end or every:N with N >= 1"),
                    )
                })
            }
        }
    }

    pub fn is_none(self) -> bool {
        self == SyncEvery::None
    }
}

/// A resolved, valid workload. Serialized into every result as `spec`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Spec {
    /// What is written to or read from.
    pub target: PathBuf,
    pub method: MethodKind,
    pub op: OpKind,
    pub pattern: Pattern,
    /// `--distribution`: how random offsets spread over a region (fio's `random_distribution`); written
    /// only when not uniform.
    #[serde(default, skip_serializing_if = "Distribution::is_uniform")]
    pub distribution: Distribution,
    /// `--op mixed`: the share of ops that read, in percent (written only for mixed runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_pct: Option<u32>,
    /// `--rate-iops` (or `--rate` / `--bs`): each thread's ops per second (written only for paced runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_iops: Option<f64>,
    /// Bytes per operation (with `bs_split`, the smallest length: offsets are multiples of it).
    pub bs: u64,
    /// `--bs-split`: each op's length drawn (fio's bssplit and bsrange); written only when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bs_split: Option<crate::bs_split::BsSplit>,
    /// `--size` with `--bs-split`: the bytes the threads move, each its share, by ops of drawn lengths
    /// until it is reached (the last may pass it, as fio's do); `ops` is then none. Written only when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Total operations over all threads; `None` when only a duration bounds the run.
    pub ops: Option<u64>,
    /// Wall-clock bound in seconds; the run stops at whichever of `ops` and `duration_s` comes first.
    pub duration_s: Option<f64>,
    /// `--warmup`: operations run before timing starts, in no figure (the result's `warmup` counts them).
    /// Written only when set, so results without it read (and compare) as those of earlier versions.
    #[serde(default, skip_serializing_if = "Warmup::is_none")]
    pub warmup: Warmup,
    pub threads: u32,
    /// `--inflight N`: the requests in flight asked for, which set `threads` or `qd` by the method (see
    /// [`RawSpec::resolve`]); written only when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inflight: Option<u32>,
    /// O_DIRECT with aligned buffers.
    pub direct: bool,
    pub fsync: SyncEvery,
    /// `--cold-cache` (read runs): the target's pages are written back and dropped from the page cache
    /// before each pass. Written only when set, so results without it compare with older ones.
    #[serde(default, skip_serializing_if = "is_false")]
    pub cold_cache: bool,
    /// `--memory-limit`: the run inside a memory cgroup of iolab's own limited to this many bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<u64>,
    /// mmap only.
    pub msync: SyncEvery,
    /// vectored only: iovecs per operation.
    pub iovecs: u32,
    /// io_uring only: requests in flight.
    pub qd: u32,
    /// io_uring only: requests per io_uring_enter.
    pub batch: u32,
    /// stdio only: the FILE buffer in bytes (setvbuf _IOFBF).
    pub stdio_buffer: u64,
    /// Size of a file iolab creates (and the region the threads share); `None`: from the amount.
    pub file_size: Option<u64>,
    /// `--share-region`: every thread works the whole region (one file shared as fio's jobs share a
    /// filename) rather than a slice of its own; written only when set.
    #[serde(default, skip_serializing_if = "is_false")]
    pub share_region: bool,
    /// `--preallocate`: a file created for a write run has its blocks reserved before the run (fallocate);
    /// written only when set.
    #[serde(default, skip_serializing_if = "is_false")]
    pub preallocate: bool,
    /// `--walk-per-direction`: a mixed sequential run's reads and writes each walk the region from its
    /// start (fio's rw=rw); written only when set.
    #[serde(default, skip_serializing_if = "is_false")]
    pub walk_per_direction: bool,
    /// Byte offset in the target where the first thread's region starts.
    pub offset: u64,
    /// `--zone-size` and its range and skip: each thread's ops walk its region zone by zone (fio's
    /// zonemode=strided); absent: the whole region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<Zones>,
    /// `--skip`: bytes a sequential op's next starts after its end (negative: backwards; fio's
    /// `rw=read:N`); 0, written only when set: block after block.
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub skip: i64,
    /// Seed of the data pattern and the random offsets.
    pub seed: u64,
    /// `seed` as a decimal string beside the number: readers that parse JSON numbers as doubles (jq, most
    /// JavaScript) round seeds above 2^53, and a seed read back wrong regenerates other data. Written with
    /// every result; `seed` stays the value iolab reads.
    #[serde(default, skip_deserializing)]
    pub seed_text: String,
    pub verify: bool,
    pub overwrite: bool,
    pub keep: bool,
    pub allow_device_writes: bool,
    /// How kernel tracepoints are counted: a separate untimed pass (default), inline, or not at all.
    pub count: CountMode,
    /// `--layers`: an untimed pass with the block layer's tracepoints, for the time per layer.
    #[serde(default)]
    pub layers: bool,
    /// io_uring ring options (see `method/io_uring.rs`).
    pub ring: RingOpts,
    /// Per-syscall breakdown in the counting pass (each traced syscall adds 0.1-0.3 s of tracepoint
    /// teardown on this VM).
    pub breakdown: bool,
    /// `--method offload` options (see `offload/mod.rs`).
    #[serde(default)]
    pub offload: OffloadOpts,
    /// `--method pv2`: RWF_* flags of every call (`--rw-flags`). Written only when set, so results of
    /// runs without it read (and compare) as those of versions before it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rw_flags: u32,
    /// `--profile`: which pass is sampled, if any, and how often (`--profile-hz`); written only when on.
    #[serde(default, skip_serializing_if = "ProfileMode::is_none")]
    pub profile: ProfileMode,
    #[serde(
        default = "default_profile_hz",
        skip_serializing_if = "is_default_profile_hz"
    )]
    pub profile_hz: u32,
    /// `--log-interval`: milliseconds per interval of the result's `intervals`; 0: off; unset (`None`,
    /// not written): [`DEFAULT_LOG_INTERVAL_MS`], kept when the timed pass took
    /// [`AUTO_LOG_MIN_S`] or more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_interval_ms: Option<u64>,
    /// `--op-log MS`: the timed pass keeps its ops for log files (0: every op; MS: sums per MS ms window;
    /// see `measure::op_log::OpLog`); unset (`None`, not written): no log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op_log_ms: Option<u64>,
    /// `--sink`: the sink driver's personality for the run's files (None: the driver's default); written
    /// only when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sink: Option<crate::sink_device::Personality>,
    /// `--sink-log`: a log line and a tracepoint call per write to the sink; written only when on.
    #[serde(default, skip_serializing_if = "is_false")]
    pub sink_log: bool,
    /// `--clock-every N`: one clock read every N ops (synchronous methods); unset (`None`, not written): one
    /// per op, or [`crate::measure::clock::AUTO_CLOCK_EVERY`] where a clock read is a system call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_every: Option<u64>,
    /// `--latency-sample N`: one op in N timed on its own (0: none; 1: every op); unset (`None`, not
    /// written): every op. The loop reads the clock once per N ops (see
    /// [`crate::measure::clock::sparse_clock`]); `clock_every` stays unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_sample: Option<u64>,
    /// The values of options a method declares in its own folder (see `method_opts.rs`); written only
    /// when one is given.
    #[serde(default, skip_serializing_if = "MethodOpts::is_empty")]
    pub method_opts: MethodOpts,
}

fn is_zero_i64(v: &i64) -> bool {
    *v == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Which pass `--profile` samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProfileMode {
    #[default]
    None,
    /// An untimed pass of its own, before the timed pass.
    Separate,
    /// The timed pass itself.
    Inline,
}

fn default_profile_hz() -> u32 {
    DEFAULT_PROFILE_HZ
}

fn is_default_profile_hz(hz: &u32) -> bool {
    *hz == DEFAULT_PROFILE_HZ
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

impl ProfileMode {
    pub fn is_none(&self) -> bool {
        *self == ProfileMode::None
    }
}

impl Spec {
    /// The flag that asks for flushes (`--fsync`, else `--msync`), if either does: for refusing them on
    /// a target with nothing to flush.
    pub fn flush_flag(&self) -> Option<&'static str> {
        if !self.fsync.is_none() {
            Some("--fsync")
        } else if !self.msync.is_none() {
            Some("--msync")
        } else {
            None
        }
    }

    /// The same workload for the untimed counting pass: nothing verified or kept.
    pub fn for_counting_pass(&self) -> Spec {
        Spec {
            verify: false,
            keep: false,
            warmup: Warmup::None,
            log_interval_ms: Some(0),
            op_log_ms: None,
            // Counts per op do not need the pace, and the waits would add the runner's own sleeps.
            rate_iops: None,
            ..self.clone()
        }
    }

    /// The workload of the counting pass: with `--count separate` a sample, a tenth of the ops and of the
    /// duration (at most [`COUNT_SAMPLE_MAX_S`]), but at least [`COUNT_SAMPLE_MIN_OPS`] ops and four times
    /// the requests in flight (the whole workload when it is no larger); with `--count full` the whole
    /// workload.
    pub fn counting_sample(&self) -> Spec {
        let mut s = self.for_counting_pass();
        if self.count == CountMode::Full {
            return s;
        }
        let floor = COUNT_SAMPLE_MIN_OPS.max(4 * self.qd.max(1) as u64 * self.threads as u64);
        s.ops = self.ops.map(|n| {
            if n <= floor {
                n
            } else {
                (n / COUNT_SAMPLE_SHARE).max(floor)
            }
        });
        s.bytes = self.bytes.map(|n| {
            (n / COUNT_SAMPLE_SHARE)
                .max(self.buf_len() * self.threads as u64)
                .min(n)
        });
        s.duration_s = self
            .duration_s
            .map(|d| (d / COUNT_SAMPLE_SHARE as f64).min(COUNT_SAMPLE_MAX_S));
        s
    }

    /// Milliseconds per interval of the time series the timed pass records (0: none), and whether they
    /// are kept only when the pass took [`AUTO_LOG_MIN_S`] or more (`--log-interval` unset).
    pub fn log_interval(&self) -> (u64, bool) {
        match self.log_interval_ms {
            Some(ms) => (ms, false),
            None => (DEFAULT_LOG_INTERVAL_MS, true),
        }
    }

    /// Each buffer's bytes: the largest op's.
    pub fn buf_len(&self) -> u64 {
        self.bs_split.as_ref().map_or(self.bs, |b| b.max())
    }

    /// The mean bytes of an op away from a region's end (`--bs-split`'s, else `bs`), for estimates shown
    /// live; the figures count each op's bytes.
    pub fn mean_len(&self) -> f64 {
        self.bs_split.as_ref().map_or(self.bs as f64, |b| b.mean())
    }

    /// `bytes` per thread: the total split evenly, the remainder to the first threads.
    pub fn bytes_for_thread(&self, t: u32) -> Option<u64> {
        self.bytes.map(|n| {
            let th = self.threads as u64;
            n / th + u64::from((t as u64) < n % th)
        })
    }

    /// Ops per thread: the total split evenly, the remainder to the first threads.
    pub fn ops_for_thread(&self, t: u32) -> Option<u64> {
        self.ops.map(|n| {
            let th = self.threads as u64;
            n / th + u64::from((t as u64) < n % th)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(pairs: &[(&str, &str)]) -> RawSpec {
        let mut text = String::new();
        for (k, v) in pairs {
            text.push_str(&format!("{k} = \"{v}\"\n"));
        }
        RawSpec::from_toml_str(&text).unwrap()
    }

    fn err(pairs: &[(&str, &str)]) -> String {
        raw(pairs).resolve().unwrap_err().to_string()
    }

    #[test]
    fn defaults_are_safe() {
        let s = RawSpec::default().resolve().unwrap();
        assert_eq!(s.target, PathBuf::from("/dev/null"));
        assert_eq!(s.method, MethodKind::Psync);
        assert_eq!(s.ops, Some(DEFAULT_OPS));
        assert_eq!(s.duration_s, Some(DEFAULT_DURATION_S));
        assert!(!s.overwrite && !s.keep && !s.allow_device_writes);
    }

    #[test]
    fn inflight_is_threads_or_depth_by_the_method() {
        let s = raw(&[("method", "psync"), ("inflight", "8")])
            .resolve()
            .unwrap();
        assert_eq!((s.threads, s.qd, s.inflight), (8, 1, Some(8)));
        for m in ["io_uring", "aio"] {
            let s = raw(&[("method", m), ("inflight", "8")]).resolve().unwrap();
            assert_eq!((s.threads, s.qd, s.inflight), (1, 8, Some(8)), "{m}");
        }
        // Not both ways at once, and not beyond what the mapped option takes.
        assert!(err(&[("inflight", "8"), ("threads", "2")]).starts_with(
            "--inflight: sets --threads, --qd or an offload's --batch by the method; give --inflight or --threads"
        ));
        assert!(
            err(&[("method", "io_uring"), ("inflight", "8"), ("qd", "2")])
                .contains("or --qd, not both")
        );
        assert!(err(&[("inflight", "0")]).starts_with("--inflight: 0 is not accepted"));
        assert!(err(&[("inflight", "2000")]).contains("psync takes 1 to 1024 requests in flight"));
        // Without it, results read as before.
        let s = RawSpec::default().resolve().unwrap();
        assert!(s.inflight.is_none());
        assert!(!serde_json::to_string(&s).unwrap().contains("inflight"));
    }

    #[test]
    fn bad_values_name_the_flag() {
        assert!(err(&[("bs", "0")]).starts_with("--bs: 0 is not accepted"));
        assert!(err(&[("bs", "4q")]).starts_with("--bs: '4q' has an unknown unit"));
        assert!(err(&[("threads", "0")]).starts_with("--threads:"));
        assert!(err(&[("ops", "0")]).starts_with("--ops:"));
        assert!(err(&[("method", "dma")]).contains("accepted: sync, psync"));
        assert!(err(&[("fsync", "often")]).contains("none, end or every:N"));
        assert!(err(&[("method", "psync"), ("qd", "4")])
            .starts_with("--qd: applies to --method io_uring"));
        assert!(err(&[("method", "io_uring"), ("qd", "4"), ("batch", "8")]).starts_with("--batch:"));
        assert!(
            err(&[("method", "stdio"), ("direct", "true")]).starts_with("--direct: not possible")
        );
        assert!(
            err(&[("bs", "4"), ("method", "vectored"), ("iovecs", "8")]).starts_with("--iovecs:")
        );
        assert!(err(&[("ops", "5"), ("size", "4k")]).starts_with("--size:"));
        assert!(
            err(&[("method", "nop"), ("op", "read"), ("verify", "true")]).starts_with("--verify:")
        );
        assert!(err(&[("bs-split", "4k/50:8k/60")]).starts_with("--bs-split: '4k/50:8k/60'"));
        assert!(err(&[("bs-split", "4k/50:8k/50"), ("bs", "8k")]).contains("drop --bs"));
        assert!(err(&[("bs-split", "4k-8k"), ("method", "vectored")]).contains("--method vectored"));
        assert!(err(&[("bs-split", "4k-8k"), ("verify", "true")]).contains("not with --verify"));
        assert!(
            err(&[("bs-split", "4k-8k"), ("size", "4k"), ("threads", "2")])
                .starts_with("--size: 4096 bytes do not give each of 2 thread(s)")
        );
    }

    #[test]
    fn values_beyond_the_clock_the_kernel_or_one_ring_are_bad_input() {
        let e = err(&[("duration", "100000000000")]);
        assert!(
            e.starts_with("--duration:") && e.contains("31536000"),
            "{e}"
        );
        assert!(err(&[("duration", "31536001")]).starts_with("--duration:"));
        let year = raw(&[("duration", "31536000")]).resolve().unwrap();
        assert_eq!(year.duration_s, Some(MAX_DURATION_S));
        let e = err(&[("offset", "18446744073709547520")]);
        assert!(e.starts_with("--offset: 18446744073709547520 plus"), "{e}");
        let e = err(&[("file-size", "9000000t")]);
        assert!(
            e.starts_with("--file-size:") && e.contains("2^63 - 1"),
            "{e}"
        );
        let uring = [("method", "io_uring"), ("sqpoll", "true")];
        let e = err(&[uring[0], uring[1], ("sq-idle-ms", "4294967296")]);
        assert!(e.starts_with("--sq-idle-ms: 4294967296 ms"), "{e}");
        let ok = raw(&[uring[0], uring[1], ("sq-idle-ms", "4294967295")]).resolve();
        assert_eq!(ok.unwrap().ring.sq_idle_ms, u32::MAX);
        let e = err(&[uring[0], uring[1], ("sq-cpu", "4294967296")]);
        assert!(
            e.starts_with("--sq-cpu: CPU 4294967296 does not exist"),
            "{e}"
        );
        let shared = [("method", "io_uring"), ("ring", "shared"), ("qd", "4096")];
        let e = err(&[shared[0], shared[1], shared[2], ("threads", "16")]);
        assert!(
            e.starts_with("--qd:") && e.contains("IORING_MAX_ENTRIES"),
            "{e}"
        );
        // Per-thread rings hold one thread's requests each.
        assert!(raw(&[shared[0], shared[2], ("threads", "16")])
            .resolve()
            .is_ok());
        let e = err(&[
            shared[0],
            shared[1],
            shared[2],
            ("threads", "8"),
            ("fixed-bufs", "true"),
        ]);
        assert!(
            e.starts_with("--fixed-bufs:") && e.contains("32768 buffers"),
            "{e}"
        );
    }

    #[test]
    fn unknown_key_in_a_spec_file_is_named() {
        let e = RawSpec::from_toml_str("bs = 4\nblocksize = 8\n").unwrap_err();
        assert!(e.starts_with("unknown key 'blocksize'"), "{e}");
    }

    #[test]
    fn flags_override_the_file_and_numbers_work_in_toml() {
        let file =
            RawSpec::from_toml_str("bs = 4096\nqd = 8\nmethod = \"io_uring\"\nops = 10\n").unwrap();
        let flags = RawSpec::new().with("bs", "4");
        let s = file.merge(flags).resolve().unwrap();
        assert_eq!(s.bs, 4);
        assert_eq!(s.qd, 8);
        assert_eq!(s.ops, Some(10));
        assert_eq!(s.duration_s, None);
    }

    #[test]
    fn options_left_unset_are_not_written_so_older_results_compare() {
        let s = RawSpec::default().resolve().unwrap();
        let v = serde_json::to_value(&s).unwrap();
        for k in ["rw_flags", "profile", "profile_hz", "log_interval_ms"] {
            assert!(v.get(k).is_none(), "{k} written while unset: {v}");
        }
        let p = RawSpec::new()
            .with("method", "pv2")
            .with("rw-flags", "nowait")
            .with("profile", true)
            .resolve()
            .unwrap();
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(v["rw_flags"], libc::RWF_NOWAIT);
        assert_eq!(v["profile"], "separate");
        let back: Spec = serde_json::from_value(v).unwrap();
        assert_eq!((back.rw_flags, back.profile), (p.rw_flags, p.profile));
    }

    #[test]
    fn ops_split_over_threads() {
        let s = raw(&[("ops", "10"), ("threads", "3")]).resolve().unwrap();
        let per: Vec<u64> = (0..3).map(|t| s.ops_for_thread(t).unwrap()).collect();
        assert_eq!(per, vec![4, 3, 3]);
        assert_eq!(per.iter().sum::<u64>(), 10);
    }

    /// Resolved for another machine, what only this one can answer (a directory here, this machine's
    /// CPUs and memory) is left to it; every check of the flags themselves is made as here.
    #[test]
    fn another_machine_answers_for_its_own_files_cpus_and_memory() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap();
        let on = |pairs: &[(&str, &str)], at| raw(pairs).resolve_on(at).map_err(|e| e.to_string());
        let here = on(&[("target", d)], RunsOn::Here).unwrap_err();
        assert!(
            here.starts_with("--target: ") && here.contains("is a directory"),
            "{here}"
        );
        let there = on(&[("target", d)], RunsOn::Elsewhere).unwrap();
        assert_eq!(there.target, dir.path());
        let cpu_raw = RawSpec::new()
            .with("method", "io_uring")
            .with("sqpoll", true)
            .with("sq-cpu", 1_000_000u64);
        let here = cpu_raw.resolve_on(RunsOn::Here).unwrap_err().to_string();
        assert!(
            here.starts_with("--sq-cpu: CPU 1000000 does not exist"),
            "{here}"
        );
        assert_eq!(
            cpu_raw.resolve_on(RunsOn::Elsewhere).unwrap().ring.sq_cpu,
            Some(1_000_000)
        );
        // 1024 threads of 1 GiB blocks: a TiB of buffers, beyond this machine's memory.
        let big = [("bs", "1g"), ("threads", "1024"), ("ops", "1024")];
        let here = on(&big, RunsOn::Here).unwrap_err();
        assert!(here.starts_with("--bs: "), "{here}");
        assert_eq!(on(&big, RunsOn::Elsewhere).unwrap().bs, 1 << 30);
        for (pairs, flag) in [
            (
                &[("method", "nosuch")][..],
                "--method: unknown method 'nosuch'",
            ),
            (&[("ops", "0")][..], "--ops: "),
            (&[("bs", "2g")][..], "--bs: "),
            (&[("target", d), ("qd", "8")][..], "--qd: applies to"),
        ] {
            let e = on(pairs, RunsOn::Elsewhere).unwrap_err();
            assert!(e.starts_with(flag), "{pairs:?}: {e}");
        }
    }
}

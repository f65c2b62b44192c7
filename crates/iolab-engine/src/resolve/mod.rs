//! [`RawSpec::resolve`]: every check that can be made without touching the target, split by concern:
//! the amounts, the method and which options apply to it, its options' values (queues, ring, offload,
//! RWF flags), and the combinations the method's registry entry refuses.

mod bs_split;
mod combinations;
pub(crate) mod fits;
mod offload_opts;
mod ring_opts;
mod timing;
mod zones;

use crate::error::{Error, Result};
use crate::method::info::{Exec, MethodInfo};
use crate::spec::options::{nonzero, Applies};
use crate::spec::*;
use std::path::PathBuf;

/// The largest --bs and --stdio-buffer accepted: 1 GiB.
const MAX_BUFFER: u64 = 1 << 30;

fn fresh_seed() -> u64 {
    let t = iolab_sys::monotonic_ns();
    let p = std::process::id() as u64;
    crate::pattern::mix64(t ^ (p << 32) ^ 0x1017_ab00)
}

/// How much work: ops (or bytes) and a time bound.
struct Amounts {
    ops: Option<u64>,
    duration_s: Option<f64>,
    /// `--size` with `--bs-split`: bytes, the ops' count not known before they are drawn.
    bytes: Option<u64>,
}

/// The queue of an asynchronous method (or an offload client's batch).
struct Queue {
    qd: u32,
    batch: u32,
}

impl RawSpec {
    /// Validates everything that can be judged without touching the target, for a run on this machine.
    pub fn resolve(&self) -> Result<Spec> {
        self.resolve_on(RunsOn::Here)
    }

    /// [`RawSpec::resolve`] for a run `at` this machine or another (see [`RunsOn`]). `--inflight N` is
    /// mapped first: depth N on one thread for a method that takes `--qd`, else N threads.
    pub fn resolve_on(&self, at: RunsOn) -> Result<Spec> {
        let Some(n) = self.count("inflight")? else {
            return self.resolve_as_given(at);
        };
        let method = self.method()?;
        // An offload client keeps one batch in flight: its depth is its batch.
        let (key, most, how) = if method.info().exec == Exec::OutOfProcess {
            ("batch", 4096, "requests per round trip")
        } else if method.info().takes(Applies::Depth) {
            ("qd", 4096, "its queue depth")
        } else {
            ("threads", 1024, "one thread per request")
        };
        let taken = |k: &str| self.has(k) && (k != "batch" || key == "batch");
        if let Some(k) = ["threads", "qd", "batch"].into_iter().find(|k| taken(k)) {
            return Err(Error::usage(
                "--inflight",
                format!("sets --threads, --qd or an offload's --batch by the method; give --inflight or --{k}, not both"),
            ));
        }
        if n == 0 || n > most {
            return Err(Error::usage(
                "--inflight",
                format!(
                    "{n} is not accepted: {} takes 1 to {most} requests in flight ({how})",
                    method.name()
                ),
            ));
        }
        // A refusal that follows from the mapping says so: the user gave --inflight, not --qd.
        let mapped = format!("--inflight {n} is --{key} {n} for {}", method.name());
        let mut spec = self
            .clone()
            .with(key, n)
            .resolve_as_given(at)
            .map_err(|e| match e {
                Error::Usage { flag, msg } if flag == format!("--{key}") => {
                    Error::usage("--inflight", format!("{mapped}: {msg}"))
                }
                Error::Usage { flag, msg }
                    if msg.contains(&format!("--{key}")) || flag == "--ops" =>
                {
                    Error::Usage {
                        flag,
                        msg: format!("{msg} ({mapped})"),
                    }
                }
                e => e,
            })?;
        spec.inflight = Some(n as u32);
        Ok(spec)
    }

    fn resolve_as_given(&self, at: RunsOn) -> Result<Spec> {
        let method = self.method()?;
        let target = self.target(at)?;
        let op = self.word(
            "op",
            OpKind::Write,
            &[
                ("write", OpKind::Write),
                ("read", OpKind::Read),
                ("mixed", OpKind::Mixed),
            ],
        )?;
        let read_pct = self.read_pct(op, method)?;
        let pattern = self.word(
            "pattern",
            Pattern::Seq,
            &[("seq", Pattern::Seq), ("rand", Pattern::Rand)],
        )?;
        let distribution = self.distribution(pattern, method)?;
        let (bs, bs_split) = self.block_size()?;
        let threads = self.count_or("threads", 1, "expected 1 or more threads")?;
        if threads > 1024 {
            return Err(Error::usage(
                "--threads",
                "at most 1024 threads are accepted",
            ));
        }
        let amounts = self.amounts(bs, threads, bs_split.is_some())?;
        let direct = self.bool("direct")?;
        let fsync = self.when("fsync")?;
        let msync = self.when("msync")?;
        self.check_applies(method)?;
        let queue = self.queue(method.info())?;
        let iovecs = self.iovecs(bs)?;
        let stdio_buffer = self.size_within(
            "stdio-buffer",
            DEFAULT_STDIO_BUFFER,
            "expected a buffer of 1 byte or more",
            MAX_BUFFER,
            " (a buffer larger than the data written between flushes is never filled)",
        )?;
        let file_size = match self.size("file-size")? {
            None => None,
            Some(n) => Some(nonzero("file-size", n, "expected 1 byte or more")?),
        };
        let verify = self.bool("verify")?;
        let offload = self.offload_opts(method, threads)?;
        let mut ring = self.ring_opts(method, direct, verify, threads, at)?;
        if ring.min_wait_usec > 0 {
            ring.wait_nr = queue.batch;
        }
        if offload.no_user_data && !(ring.nop_requests && queue.batch == 1) {
            return Err(Error::usage(
                "--no-user-data",
                "needs --nop-requests --batch 1: with one NOP in flight the client needs no user_data to tell \
                 its completion apart (the thesis's Figure 4.2)",
            ));
        }
        if offload.sq_sleep && !self.has("sq-idle-ms") {
            // --sq-sleep waits for the SQ thread to idle out before every round trip: the shortest idle.
            ring.sq_idle_ms = 1;
        }
        let seed = match self.count("seed")? {
            None => fresh_seed(),
            Some(s) => s,
        };
        let zones = self.zones(bs, &distribution, method)?;
        let mut spec = Spec {
            target,
            method,
            op,
            pattern,
            distribution,
            read_pct,
            bs,
            bs_split,
            bytes: amounts.bytes,
            ops: amounts.ops,
            duration_s: amounts.duration_s,
            warmup: self.warmup(method)?,
            threads: threads as u32,
            inflight: None,
            direct,
            fsync,
            cold_cache: self.cold_cache(op)?,
            memory_limit: self.memory_limit(method)?,
            msync,
            iovecs: iovecs as u32,
            qd: queue.qd,
            batch: queue.batch,
            stdio_buffer,
            file_size,
            share_region: self.bool("share-region")?,
            preallocate: self.preallocate(op)?,
            walk_per_direction: self.walk_per_direction(op, pattern, zones.is_some(), method)?,
            offset: self.size("offset")?.unwrap_or(0),
            zones,
            skip: self.skip(pattern, op, zones.is_some(), method)?,
            seed,
            seed_text: seed.to_string(),
            verify,
            overwrite: self.bool("overwrite")?,
            keep: self.bool("keep")?,
            allow_device_writes: self.bool("allow-device-writes")?,
            count: self.count_mode()?,
            layers: self.bool("layers")?,
            ring,
            breakdown: !self.has("breakdown") || self.bool("breakdown")?,
            offload,
            rw_flags: self.rw_flags(op, verify, amounts.ops.is_some())?,
            profile: self.profile()?,
            profile_hz: self.profile_hz()?,
            log_interval_ms: self.log_interval(method)?,
            op_log_ms: self.window_ms("op-log")?,
            sink: self.sink()?,
            sink_log: self.bool("sink-log")?,
            clock_every: self.clock_every(method)?,
            latency_sample: self.latency_sample(method)?,
            rate_iops: self.rate_iops(method, bs)?,
            method_opts: self.method_opts()?,
        };
        // A paced run times every op from when it was due: a clock read per op, even where iolab would
        // otherwise read it every 64 ops.
        if spec.rate_iops.is_some() && spec.clock_every.is_none() {
            spec.clock_every = Some(1);
        }
        bs_split::check(&spec)?;
        check_pace_fits(&spec)?;
        crate::runner::check_op_log(&mut spec)?;
        combinations::check_method_combinations(&spec)?;
        check_memory_limit(&spec)?;
        check_extent(&spec)?;
        // The methods' own checks (io_uring's ring limits, its rw-flags and send-zc, its provided buffers).
        for check in crate::spec::method_opts::SPEC_CHECKS {
            check(&spec, at)?;
        }
        crate::target::remote_peer(&spec)?;
        if at == RunsOn::Here {
            // This machine's RLIMIT_MEMLOCK and memory: another machine has its own.
            offload_opts::check_offload_limits(&spec)?;
            fits::check_fits(&spec)?;
        }
        Ok(spec)
    }

    fn method(&self) -> Result<MethodKind> {
        match self.text("method")? {
            None => Ok(MethodKind::Psync),
            Some(s) => MethodKind::parse(&s).ok_or_else(|| {
                Error::usage(
                    "--method",
                    format!("unknown method '{s}'; accepted: {}", MethodKind::names()),
                )
            }),
        }
    }

    fn target(&self, at: RunsOn) -> Result<PathBuf> {
        match self.text("target")? {
            None => Ok(PathBuf::from("/dev/null")),
            Some(s) if s.is_empty() => Err(Error::usage(
                "--target",
                "empty path; expected a file, /dev/null, /dev/zero or a block device",
            )),
            Some(s) => {
                let p = PathBuf::from(s);
                crate::paths::check_length("--target", &p)?;
                // A directory is no target (said before any work: a sweep over other keys would record
                // every point as not run). The target's setup checks again, on the path it opens.
                if at == RunsOn::Here && p.is_dir() {
                    // A directory of procfs, sysfs ...: no file in it is a target either.
                    crate::target::check_kernel_interface(&p.join("iolab.dat"))?;
                    return Err(Error::usage(
                        "--target",
                        format!(
                            "{} is a directory; give a file path inside it, e.g. {}/iolab.dat",
                            crate::units::show_path(&p),
                            p.display().to_string().trim_end_matches('/')
                        ),
                    ));
                }
                Ok(p)
            }
        }
    }

    /// `--bs`, or `--bs-split` and its smallest length.
    fn block_size(&self) -> Result<(u64, Option<crate::bs_split::BsSplit>)> {
        match self.bs_split(MAX_BUFFER)? {
            Some(b) => Ok((b.min(), Some(b))),
            None => self
                .size_within(
                    "bs",
                    4096,
                    "the block size must be at least 1 byte",
                    MAX_BUFFER,
                    " per operation",
                )
                .map(|bs| (bs, None)),
        }
    }

    /// --ops, --size and --duration; neither amount given: the defaults, whichever comes first. `split`
    /// (`--bs-split`): `--size` is bytes, not ops of `bs`.
    fn amounts(&self, bs: u64, threads: u64, split: bool) -> Result<Amounts> {
        let mut bytes = None;
        let mut ops = match self.count("ops")? {
            None => None,
            Some(n) => Some(nonzero("ops", n, "expected 1 or more operations")?),
        };
        if let Some(size) = self.size("size")? {
            if ops.is_some() {
                return Err(Error::usage(
                    "--size",
                    "--ops and --size both set the amount; give one of them",
                ));
            }
            let size = nonzero("size", size, "expected at least one block")?;
            if split {
                bytes = Some(bs_split::size(size, bs, threads)?);
            } else if !size.is_multiple_of(bs) {
                return Err(Error::usage(
                    "--size",
                    format!("{size} bytes is not a whole number of --bs {bs} blocks"),
                ));
            } else {
                ops = Some(size / bs);
            }
        }
        let duration_s = match self.duration("duration")? {
            Some(d) if d.is_nan() || d <= 0.0 => {
                let v = self.get("duration").map(Val::text).unwrap_or_default();
                return Err(Error::usage(
                    "--duration",
                    format!("'{v}' is not accepted; expected a positive number of seconds"),
                ));
            }
            Some(d) if d > MAX_DURATION_S => {
                let v = self.get("duration").map(Val::text).unwrap_or_default();
                return Err(Error::usage(
                    "--duration",
                    format!("'{v}' ({d} s) is beyond the longest run iolab times: at most {MAX_DURATION_S} s (365 days)"),
                ));
            }
            d => d,
        };
        let (ops, duration_s) = match (ops, duration_s) {
            (None, None) if bytes.is_none() => (Some(DEFAULT_OPS), Some(DEFAULT_DURATION_S)),
            o => o,
        };
        if let Some(n) = ops.filter(|&n| n < threads) {
            return Err(Error::usage(
                "--ops",
                format!("{n} operations cannot be shared by {threads} threads; give at least one per thread"),
            ));
        }
        if let Some(n) = ops.filter(|&n| n > MAX_OPS || n.checked_mul(bs).is_none()) {
            return Err(Error::usage(
                "--ops",
                format!(
                    "{n} ops of {bs} bytes is beyond the longest run iolab times: at most {MAX_OPS} ops (an \
                     op a nanosecond for 365 days) and {} bytes",
                    u64::MAX
                ),
            ));
        }
        Ok(Amounts {
            ops,
            duration_s,
            bytes,
        })
    }

    /// --fsync / --msync.
    fn when(&self, key: &str) -> Result<SyncEvery> {
        match self.text(key)? {
            None => Ok(SyncEvery::None),
            Some(w) => SyncEvery::parse(&format!("--{key}"), &w),
        }
    }

    /// `--warmup` (see `spec::warmup`); not for a method whose client is a process of its own.
    fn warmup(&self, method: MethodKind) -> Result<crate::spec::Warmup> {
        let w = match self.text("warmup")? {
            None => crate::spec::Warmup::None,
            Some(s) => crate::spec::Warmup::parse(&s)?,
        };
        if !w.is_none() && method.info().exec == Exec::OutOfProcess {
            return Err(Error::usage(
                "--warmup",
                format!(
                    "--method {} runs its client as a process of its own, timed from outside; it has no \
                     warm-up yet: drop --warmup",
                    method.name()
                ),
            ));
        }
        Ok(w)
    }

    /// `--sink`: a personality of the sink driver, if given.
    fn sink(&self) -> Result<Option<crate::sink_device::Personality>> {
        use crate::sink_device::Personality as P;
        if !self.has("sink") {
            return Ok(None);
        }
        self.word(
            "sink",
            P::Legacy,
            &[("legacy", P::Legacy), ("nowait", P::Nowait)],
        )
        .map(Some)
    }

    fn count_mode(&self) -> Result<CountMode> {
        self.word(
            "count",
            CountMode::Separate,
            &[
                ("none", CountMode::None),
                ("separate", CountMode::Separate),
                ("full", CountMode::Full),
                ("inline", CountMode::Inline),
            ],
        )
    }

    /// Every option given must apply to the method (the table's `methods`); the offload client's queue is
    /// its batch, said first because --qd is what a user would try.
    fn check_applies(&self, method: MethodKind) -> Result<()> {
        if method.info().exec == Exec::OutOfProcess && self.has("qd") {
            return Err(Error::usage(
                "--qd",
                "an offload client keeps one batch in flight (it waits for every request of a batch before the \
                 next): use --batch",
            ));
        }
        match self.given().find(|o| !o.applies_to(method)) {
            Some(o) => Err(Error::usage(
                o.flag(),
                format!(
                    "applies to --method {} only, not {}",
                    o.method_list(),
                    method.name()
                ),
            )),
            None => Ok(()),
        }
    }

    fn iovecs(&self, bs: u64) -> Result<u64> {
        let iovecs = self.count_or("iovecs", 1, "expected 1 or more iovecs")?;
        if iovecs > 1024 {
            return Err(Error::usage(
                "--iovecs",
                "at most 1024 (IOV_MAX) iovecs are accepted",
            ));
        }
        if iovecs > bs {
            return Err(Error::usage(
                "--iovecs",
                format!("{iovecs} iovecs cannot split a {bs}-byte block; use at most --bs iovecs"),
            ));
        }
        Ok(iovecs)
    }

    /// --qd and --batch; an out-of-process client keeps exactly one batch in flight.
    fn queue(&self, info: &MethodInfo) -> Result<Queue> {
        let mut qd = self.count_or("qd", 1, "expected a queue depth of 1 or more")?;
        if qd > 4096 {
            return Err(Error::usage(
                "--qd",
                "at most 4096 requests in flight are accepted",
            ));
        }
        let batch = self.count_or("batch", 1, "expected a batch of 1 or more")?;
        if info.exec == Exec::OutOfProcess {
            if batch > 4096 {
                return Err(Error::usage(
                    "--batch",
                    "at most 4096 requests per batch are accepted",
                ));
            }
            qd = batch;
        }
        if batch > qd {
            return Err(Error::usage(
                "--batch",
                format!(
                    "a batch of {batch} cannot be in flight with --qd {qd}; use --batch <= --qd"
                ),
            ));
        }
        Ok(Queue {
            qd: qd as u32,
            batch: batch as u32,
        })
    }

    /// --profile: a pass, or true/false in a file (`profile = true` is `separate`).
    fn profile(&self) -> Result<ProfileMode> {
        let mode = match self.get("profile") {
            Some(Val::Bool(true)) => ProfileMode::Separate,
            Some(Val::Bool(false)) => ProfileMode::None,
            _ => self.word(
                "profile",
                ProfileMode::None,
                &[
                    ("none", ProfileMode::None),
                    ("separate", ProfileMode::Separate),
                    ("inline", ProfileMode::Inline),
                    ("true", ProfileMode::Separate),
                    ("false", ProfileMode::None),
                ],
            )?,
        };
        if mode == ProfileMode::None && self.has("profile-hz") {
            return Err(Error::usage("--profile-hz", "applies to --profile only"));
        }
        Ok(mode)
    }

    /// --profile-hz: at least 1, at most 10 kHz (the kernel's perf_event_max_sample_rate caps it anyway).
    fn profile_hz(&self) -> Result<u32> {
        let hz = self.count_or(
            "profile-hz",
            DEFAULT_PROFILE_HZ as u64,
            "expected 1 or more samples per second",
        )?;
        if hz > 10_000 {
            return Err(Error::usage(
                "--profile-hz",
                "at most 10000 samples per second are accepted",
            ));
        }
        Ok(hz as u32)
    }

    /// --rate-iops or --rate: ops per second per thread, for methods that complete each op in their call
    /// (a queued method's requests would each need their own due time); needs a clock read per op.
    fn rate_iops(&self, method: MethodKind, bs: u64) -> Result<Option<f64>> {
        let (iops, flag) = match (self.count("rate-iops")?, self.size("rate")?) {
            (None, None) => return Ok(None),
            (Some(_), Some(_)) => {
                return Err(Error::usage(
                    "--rate",
                    "and --rate-iops both set the pace: give one",
                ))
            }
            (Some(n), None) => (n as f64, "--rate-iops"),
            (None, Some(b)) => (b as f64 / bs as f64, "--rate"),
        };
        if iops < 1.0 {
            return Err(Error::usage(
                flag,
                "paces to less than one op per second: give at least one op's worth",
            ));
        }
        // An op due every nanosecond is past what any method does (a NOP takes 20 ns).
        if iops > 1e9 {
            return Err(Error::usage(
                flag,
                format!("paces to {iops:.0} ops per second a thread: at most 1,000,000,000 (an op a nanosecond)"),
            ));
        }
        if !method.info().synchronous() {
            return Err(Error::usage(
                flag,
                format!(
                    "paces methods that complete each op inside their call (psync, pv2, sync ...); --method {} \
                     queues its requests",
                    method.name()
                ),
            ));
        }
        if self.count("clock-every")?.is_some_and(|n| n > 1) {
            return Err(Error::usage(
                "--clock-every",
                format!("{flag} times every op from when it was due: it needs a clock read per op"),
            ));
        }
        Ok(Some(iops))
    }

    /// A window in milliseconds: at most the longest run iolab times (365 days).
    fn window_ms(&self, key: &str) -> Result<Option<u64>> {
        let ms = self.count(key)?;
        match ms {
            Some(ms) if ms as f64 > MAX_DURATION_S * 1e3 => Err(Error::usage(
                format!("--{key}"),
                format!(
                    "{ms} ms is longer than the longest run iolab times ({} ms, 365 days)",
                    crate::units::thousands_u64(MAX_DURATION_S as u64 * 1000)
                ),
            )),
            _ => Ok(ms),
        }
    }

    /// --log-interval: unset (automatic), 0 (off), or at least [`MIN_LOG_INTERVAL_MS`] ms.
    fn log_interval(&self, method: MethodKind) -> Result<Option<u64>> {
        let Some(ms) = self.window_ms("log-interval")? else {
            return Ok(None);
        };
        if ms > 0 && ms < MIN_LOG_INTERVAL_MS {
            return Err(Error::usage(
                "--log-interval",
                format!(
                    "{ms} ms is shorter than the {MIN_LOG_INTERVAL_MS} ms accepted (closing an interval scans each \
                     thread's latency histogram, 13 µs here); 0 turns the intervals off"
                ),
            ));
        }
        if ms > 0 && method.info().exec == Exec::OutOfProcess {
            return Err(Error::usage(
                "--log-interval",
                format!(
                    "--method {} times its client from outside, per sampling window (the result's \
                     offload.window_ns), and records no intervals: drop --log-interval",
                    method.name()
                ),
            ));
        }
        Ok(Some(ms))
    }

    /// --read-pct: mixed runs only, 0 to 100 (50 by default); --op mixed only with a method that picks
    /// the direction per op.
    fn read_pct(&self, op: OpKind, method: MethodKind) -> Result<Option<u32>> {
        let pct = self.count("read-pct")?;
        if op != OpKind::Mixed {
            return match pct {
                Some(_) => Err(Error::usage(
                    "--read-pct",
                    "is the share of reads of --op mixed; this run's ops all go one way",
                )),
                None => Ok(None),
            };
        }
        if !method.info().mixed {
            let can: Vec<&str> = MethodKind::all()
                .filter(|m| m.info().mixed)
                .map(|m| m.name())
                .collect();
            return Err(Error::usage(
                "--op",
                format!(
                    "mixed needs a method that reads or writes per op ({}); {} goes one way per run",
                    can.join(", "),
                    method.name()
                ),
            ));
        }
        match pct.unwrap_or(50) {
            p @ 0..=100 => Ok(Some(p as u32)),
            p => Err(Error::usage(
                "--read-pct",
                format!("is a percentage of the ops, 0 to 100, not {p}"),
            )),
        }
    }

    /// --distribution: random offsets only, and not for the offload client (its plan crosses into
    /// another process, which draws uniformly).
    fn distribution(&self, pattern: Pattern, method: MethodKind) -> Result<Distribution> {
        let Some(text) = self.text("distribution")? else {
            return Ok(Distribution::Uniform);
        };
        let d = Distribution::parse(&text)?;
        if d.is_uniform() {
            return Ok(d);
        }
        if pattern != Pattern::Rand {
            return Err(Error::usage(
                "--distribution",
                format!("'{text}' spreads random offsets: it needs --pattern rand"),
            ));
        }
        if method.info().exec == Exec::OutOfProcess {
            return Err(Error::usage(
                "--distribution",
                format!("the {} client draws its offsets uniformly", method.name()),
            ));
        }
        Ok(d)
    }

    /// --cold-cache: read runs only (a write run has no cached data to read; --fsync end makes its
    /// writes reach the device). Where the target has no page cache is said by the target's setup.
    fn cold_cache(&self, op: OpKind) -> Result<bool> {
        let on = self.bool("cold-cache")?;
        if on && op == OpKind::Write {
            return Err(Error::usage(
                "--cold-cache",
                "drops the target's cached pages before a read run; a write run reads nothing from the cache \
                 (use --fsync end to make its writes reach the device inside the timed span)",
            ));
        }
        Ok(on)
    }

    /// --preallocate reserves a new file's blocks before a run that writes; a read run's file is filled.
    fn preallocate(&self, op: OpKind) -> Result<bool> {
        let on = self.bool("preallocate")?;
        if on && !op.writes() {
            return Err(Error::usage(
                "--preallocate",
                "reserves the blocks of a file a write run creates; a read run's new file is filled with the \
                 pattern before it (every block already allocated)",
            ));
        }
        Ok(on)
    }

    /// --memory-limit: at least 32 MiB (iolab's own memory is charged to the cgroup too, and a limit its
    /// threads cannot live in ends the run by the OOM killer); not for a client process of its own.
    fn memory_limit(&self, method: MethodKind) -> Result<Option<u64>> {
        let Some(n) = self.size("memory-limit")? else {
            return Ok(None);
        };
        if method.info().exec == Exec::OutOfProcess {
            return Err(Error::usage(
                "--memory-limit",
                format!(
                    "--method {} runs its client as a process of its own, outside the limit",
                    method.name()
                ),
            ));
        }
        const LEAST: u64 = 32 << 20;
        if n < LEAST {
            return Err(Error::usage(
                "--memory-limit",
                format!(
                    "{} is too little: iolab's own buffers and threads are charged to it too; give 32 MiB or more",
                    crate::units::fmt_size(n)
                ),
            ));
        }
        Ok(Some(n))
    }

    /// --rw-flags as RWF_* bits.
    fn rw_flags(&self, op: OpKind, verify: bool, bounded: bool) -> Result<u32> {
        let Some(list) = self.text("rw-flags")? else {
            return Ok(0);
        };
        let accepted = crate::spec::rw_flags::RW_FLAG_NAMES.join(", ");
        if list.split(',').all(|w| w.trim().is_empty()) {
            return Err(Error::usage(
                "--rw-flags",
                format!("empty list; expected one or more of {accepted}"),
            ));
        }
        let mut bits = 0u32;
        for w in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            bits |= match crate::spec::rw_flags::named(w) {
                Some(f) => f.bit as u32,
                None => {
                    return Err(Error::usage(
                        "--rw-flags",
                        format!("'{w}' is not accepted; expected a comma list of {accepted}"),
                    ))
                }
            };
        }
        if bits & libc::RWF_APPEND as u32 != 0 {
            check_append(op, verify, bounded, self.bool("overwrite")?)?;
        }
        Ok(bits)
    }
}

/// The region must end inside what a file offset can say (off_t, 2^63 - 1): `--offset` plus `--file-size`
/// (or, without it, one `--bs` block per thread, the least any run needs).
fn check_extent(s: &Spec) -> Result<()> {
    const MAX_OFF: u64 = i64::MAX as u64;
    let (extent, what) = match s.file_size {
        Some(n) => (n, format!("--file-size {n}")),
        None => (
            s.bs * s.threads as u64,
            format!("one --bs {} block per thread", s.bs),
        ),
    };
    if s.offset
        .checked_add(extent)
        .is_some_and(|end| end <= MAX_OFF)
    {
        return Ok(());
    }
    let (flag, msg) = if s.offset == 0 {
        (
            "--file-size",
            format!("{extent} bytes is beyond the largest file offset the kernel takes ({MAX_OFF} = 2^63 - 1, off_t)"),
        )
    } else {
        (
            "--offset",
            format!(
                "{} plus {what} ends beyond the largest file offset the kernel takes ({MAX_OFF} = 2^63 - 1, \
                 off_t): give a smaller --offset",
                s.offset
            ),
        )
    };
    Err(Error::usage(flag, msg))
}

/// --memory-limit must hold what the run itself needs (its threads' buffers and bookkeeping), or the OOM
/// killer ends it without a word.
fn check_memory_limit(s: &Spec) -> Result<()> {
    let Some(limit) = s.memory_limit else {
        return Ok(());
    };
    let queued = s.method.info().takes(crate::spec::options::Applies::Depth);
    let per_thread = s.buf_len() * if queued { u64::from(s.qd) } else { 1 };
    let least = crate::memlimit::least_limit(u64::from(s.threads), per_thread);
    if limit >= least {
        return Ok(());
    }
    Err(Error::usage(
        "--memory-limit",
        format!(
            "{} cannot hold the run itself: {} thread{} x ({} of buffers + 2 MiB each) + 32 MiB = {}, and the \
             kernel's OOM killer would end it; give at least that, or fewer --threads, --qd or --bs",
            crate::units::fmt_size(limit),
            s.threads,
            if s.threads == 1 { "" } else { "s" },
            crate::units::fmt_size(per_thread),
            crate::units::fmt_size(least)
        ),
    ))
}

/// RWF_APPEND writes at the end of the file whatever the op's offset, so the file grows by every op:
/// only into a file iolab creates (removed at exit), and only for a bounded number of ops.
fn check_append(op: OpKind, verify: bool, bounded: bool, overwrite: bool) -> Result<()> {
    let why = if op.reads() || verify {
        "append writes at the end of the file, not at the op's offset: it cannot read, and --verify cannot \
         find its blocks"
    } else if overwrite {
        "append grows the file by every op: it never writes into a file iolab did not create (drop \
         --overwrite and give a new path)"
    } else if !bounded {
        "append grows the file by every op: give --ops or --size so the file stays bounded (it grows by \
         --ops x --bs beyond --file-size)"
    } else {
        return Ok(());
    };
    Err(Error::usage("--rw-flags", why))
}

/// A paced run bounded by `--duration` spans at least one interval of its pace: a shorter one holds no
/// rate (one op in 50 ms is not 10 ops/s). So does one bounded by `--ops`: a thread of one op runs it
/// when it is due, at once, and its rate would be the op's speed, not the pace.
fn check_pace_fits(spec: &Spec) -> Result<()> {
    let fewest = spec.ops_for_thread(spec.threads.saturating_sub(1));
    if let (Some(r), Some(n @ 0..=1)) = (spec.rate_iops, fewest) {
        let ops = spec.ops.unwrap_or(0);
        return Err(Error::usage(
            "--ops",
            format!(
                "{ops} ops over {} thread{} paced at {r} ops/s: a thread of {n} op{} spans no interval of the \
                 pace, so no rate can be measured over it; give at least {} ops",
                spec.threads,
                if spec.threads == 1 { "" } else { "s" },
                if n == 1 { "" } else { "s" },
                2 * u64::from(spec.threads)
            ),
        ));
    }
    let most = spec.ops_for_thread(0).unwrap_or(0) as f64;
    // A --duration ends the run first (it is bounded itself).
    let paced = spec.rate_iops.filter(|_| spec.duration_s.is_none());
    if let Some(r) = paced.filter(|r| most / r > MAX_DURATION_S) {
        return Err(Error::usage(
            "--ops",
            format!(
                "{most} ops a thread paced at {r} ops/s take {} s, beyond the longest run iolab times \
                 ({MAX_DURATION_S} s, 365 days); give fewer ops or a faster pace",
                most / r
            ),
        ));
    }
    match (spec.rate_iops, spec.duration_s) {
        (Some(r), Some(d)) if r * d < 1.0 => Err(Error::usage(
            "--duration",
            format!(
                "{d} s is shorter than one interval of the pace ({} at {r} ops/s): no rate can be measured over \
                 it; give at least that",
                crate::units::fmt_ns(1e9 / r)
            ),
        )),
        _ => Ok(()),
    }
}

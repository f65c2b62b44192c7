//! The workload description and its validation: the one place where bad input is rejected.
//!
//! A [`RawSpec`] is what a user wrote, from a TOML file (`--spec FILE`, keys spelled like the flags without
//! the dashes: `bs = "4k"`, `file-size = "64m"`, `qd = 32`) and from flags, which override the file key by key.
//! [`RawSpec::resolve`] turns it into a [`Spec`] or an [`Error::Usage`] naming the flag and what it accepts.
//! Checks that need to look at the target (is it a directory, is it mounted, what O_DIRECT alignment does it
//! need) live in `target::setup`, which also returns usage errors.

use crate::error::{Error, Result};
pub use crate::measure::counters::CountMode;
use crate::units::{parse_count, parse_duration, parse_size};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A value as written in a TOML spec or on the command line.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Val {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

impl Val {
    fn text(&self) -> String {
        match self {
            Val::Bool(b) => b.to_string(),
            Val::Int(i) => i.to_string(),
            Val::Float(f) => f.to_string(),
            Val::Str(s) => s.clone(),
        }
    }
}

impl From<&str> for Val {
    fn from(s: &str) -> Self {
        Val::Str(s.to_string())
    }
}

impl From<bool> for Val {
    fn from(b: bool) -> Self {
        Val::Bool(b)
    }
}

/// Every key a spec may hold; the TOML file may not hold any other (`deny_unknown_fields`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawSpec {
    pub target: Option<Val>,
    pub method: Option<Val>,
    pub op: Option<Val>,
    pub pattern: Option<Val>,
    pub bs: Option<Val>,
    pub ops: Option<Val>,
    pub size: Option<Val>,
    pub duration: Option<Val>,
    pub threads: Option<Val>,
    pub direct: Option<Val>,
    pub fsync: Option<Val>,
    pub msync: Option<Val>,
    pub iovecs: Option<Val>,
    pub qd: Option<Val>,
    pub batch: Option<Val>,
    pub stdio_buffer: Option<Val>,
    pub file_size: Option<Val>,
    pub offset: Option<Val>,
    pub seed: Option<Val>,
    pub verify: Option<Val>,
    pub overwrite: Option<Val>,
    pub keep: Option<Val>,
    pub allow_device_writes: Option<Val>,
    pub count: Option<Val>,
    pub breakdown: Option<Val>,
    pub sqpoll: Option<Val>,
    pub sq_idle_ms: Option<Val>,
    pub sq_cpu: Option<Val>,
    pub iopoll: Option<Val>,
    pub fixed_files: Option<Val>,
    pub fixed_bufs: Option<Val>,
    pub coop_taskrun: Option<Val>,
    pub single_issuer: Option<Val>,
    pub defer_taskrun: Option<Val>,
    pub registered_ring: Option<Val>,
    pub vectored: Option<Val>,
    pub nop_requests: Option<Val>,
    pub ring: Option<Val>,
    pub offload_path: Option<Val>,
    pub doorbell: Option<Val>,
    pub offload_attack: Option<Val>,
}

/// The keys of [`RawSpec`], for messages.
pub const SPEC_KEYS: &str = "target, method, op, pattern, bs, ops, size, duration, threads, direct, fsync, \
    msync, iovecs, qd, batch, stdio-buffer, file-size, offset, seed, verify, overwrite, keep, allow-device-writes, count, breakdown, sqpoll, sq-idle-ms, sq-cpu, iopoll, fixed-files, fixed-bufs, \
    coop-taskrun, single-issuer, defer-taskrun, registered-ring, vectored, nop-requests, ring, offload-path, doorbell, \
    offload-attack";

impl RawSpec {
    /// Reads a TOML spec file; unknown keys and bad syntax are usage errors naming `--spec`.
    pub fn from_toml_file(path: &Path) -> Result<RawSpec> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::usage("--spec", format!("cannot read {}: {e}", path.display())))?;
        Self::from_toml_str(&text)
            .map_err(|msg| Error::usage("--spec", format!("{}: {msg}", path.display())))
    }

    /// Parses TOML text; the error is one line.
    pub fn from_toml_str(text: &str) -> std::result::Result<RawSpec, String> {
        toml::from_str::<RawSpec>(text).map_err(|e| {
            let msg = e.message().replace('\n', " ");
            if msg.contains("unknown field") {
                let key = msg.split('`').nth(1).unwrap_or("?");
                format!("unknown key '{key}' (accepted keys: {SPEC_KEYS})")
            } else {
                format!("{msg} (a spec is TOML with keys: {SPEC_KEYS})")
            }
        })
    }

    /// Keys set in `over` replace those here (flags override the file).
    pub fn merge(mut self, over: RawSpec) -> RawSpec {
        macro_rules! take {
            ($($f:ident),*) => { $( if over.$f.is_some() { self.$f = over.$f; } )* };
        }
        take!(
            target,
            method,
            op,
            pattern,
            bs,
            ops,
            size,
            duration,
            threads,
            direct,
            fsync,
            msync,
            iovecs,
            qd,
            batch,
            stdio_buffer,
            file_size,
            offset,
            seed,
            verify,
            overwrite,
            keep,
            allow_device_writes,
            count,
            breakdown,
            sqpoll,
            sq_idle_ms,
            sq_cpu,
            iopoll,
            fixed_files,
            fixed_bufs,
            coop_taskrun,
            single_issuer,
            defer_taskrun,
            registered_ring,
            vectored,
            nop_requests,
            ring,
            offload_path,
            doorbell,
            offload_attack
        );
        self
    }
}

/// How data moves between user space and the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum MethodKind {
    Nop,
    Sync,
    Psync,
    Vectored,
    Stdio,
    Mmap,
    IoUring,
    Aio,
    Splice,
    Sendfile,
    CopyFileRange,
    Epoll,
    Offload,
}

impl MethodKind {
    pub const ALL: [MethodKind; 13] = [
        MethodKind::Sync,
        MethodKind::Psync,
        MethodKind::Vectored,
        MethodKind::Stdio,
        MethodKind::Mmap,
        MethodKind::IoUring,
        MethodKind::Aio,
        MethodKind::Splice,
        MethodKind::Sendfile,
        MethodKind::CopyFileRange,
        MethodKind::Epoll,
        MethodKind::Offload,
        MethodKind::Nop,
    ];

    /// Kernel-side copies: data moves from a source file without a user-space buffer.
    pub fn is_kernel_copy(self) -> bool {
        matches!(
            self,
            MethodKind::Splice | MethodKind::Sendfile | MethodKind::CopyFileRange
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            MethodKind::Nop => "nop",
            MethodKind::Sync => "sync",
            MethodKind::Psync => "psync",
            MethodKind::Vectored => "vectored",
            MethodKind::Stdio => "stdio",
            MethodKind::Mmap => "mmap",
            MethodKind::IoUring => "io_uring",
            MethodKind::Aio => "aio",
            MethodKind::Splice => "splice",
            MethodKind::Sendfile => "sendfile",
            MethodKind::CopyFileRange => "copy_file_range",
            MethodKind::Epoll => "epoll",
            MethodKind::Offload => "offload",
        }
    }

    pub fn parse(s: &str) -> Option<MethodKind> {
        let s = s.trim().to_ascii_lowercase().replace('-', "_");
        MethodKind::ALL.into_iter().find(|m| m.name() == s)
    }

    pub fn names() -> String {
        MethodKind::ALL.map(|m| m.name()).join(", ")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    Write,
    Read,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    Seq,
    Rand,
}

impl Pattern {
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Seq => "seq",
            Pattern::Rand => "rand",
        }
    }
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
    fn parse(flag: &str, s: &str) -> Result<SyncEvery> {
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
    /// Bytes per operation.
    pub bs: u64,
    /// Total operations over all threads; `None` when only a duration bounds the run.
    pub ops: Option<u64>,
    /// Wall-clock bound in seconds; the run stops at whichever of `ops` and `duration_s` comes first.
    pub duration_s: Option<f64>,
    pub threads: u32,
    /// O_DIRECT with aligned buffers.
    pub direct: bool,
    pub fsync: SyncEvery,
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
    /// Byte offset in the target where the first thread's region starts.
    pub offset: u64,
    /// Seed of the data pattern and the random offsets.
    pub seed: u64,
    pub verify: bool,
    pub overwrite: bool,
    pub keep: bool,
    pub allow_device_writes: bool,
    /// How kernel tracepoints are counted: a separate untimed pass (default), inline, or not at all.
    pub count: CountMode,
    /// io_uring ring options (see `method/io_uring.rs`).
    pub ring: RingOpts,
    /// Per-syscall breakdown in the counting pass (each traced syscall adds 0.1-0.3 s of tracepoint
    /// teardown on this VM).
    pub breakdown: bool,
    /// `--method offload` options (see `offload/mod.rs`).
    #[serde(default)]
    pub offload: OffloadOpts,
}

/// How a sandboxed client's requests reach the kernel (`--offload-path`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OffloadPath {
    /// An io_uring in shared memory, served by an SQPOLL kernel thread, limited by restrictions.
    #[default]
    Kernel,
    /// iolab's own request ring, served by a broker thread that checks a policy and uses its own io_uring.
    Broker,
    /// The same operations from an unsandboxed client through io_uring_enter(2): the baseline.
    Native,
}

impl OffloadPath {
    pub fn name(self) -> &'static str {
        match self {
            OffloadPath::Kernel => "kernel",
            OffloadPath::Broker => "broker",
            OffloadPath::Native => "native",
        }
    }
}

/// How the broker waits for requests and how the client wakes it (`--doorbell`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Doorbell {
    /// The broker polls the request ring without ever sleeping; the client never rings.
    Spin,
    /// The broker polls for a while (50 µs), then says it sleeps and blocks on an eventfd; the client rings
    /// only then (like SQPOLL's NEED_WAKEUP).
    #[default]
    SpinThenSleep,
    /// The broker blocks on an eventfd whenever the ring is empty; the client rings after every batch.
    Eventfd,
}

impl Doorbell {
    pub fn name(self) -> &'static str {
        match self {
            Doorbell::Spin => "spin",
            Doorbell::SpinThenSleep => "spin-then-sleep",
            Doorbell::Eventfd => "eventfd",
        }
    }
}

/// A forbidden request the client submits on purpose to test the sandbox (`--offload-attack`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Attack {
    /// An opcode outside the allowlist: IORING_OP_READ (not READ_FIXED) into the parent's canary page.
    Opcode,
    /// WRITE_FIXED on a raw descriptor number: the parent's unrelated open file.
    RawFd,
    /// WRITE_FIXED on file slot 1 (only slot 0 exists).
    Slot,
    /// READ_FIXED into the parent's canary page, outside the shared region.
    BufAddr,
    /// READ_FIXED that starts in the last page of the region and runs a page past its end.
    BufLen,
    /// (broker) A valid request rewritten in the ring right after it was published, into a raw-fd write.
    Rewrite,
    /// A forbidden system call (getppid): seccomp strict mode kills the client.
    Syscall,
    /// A wild memory access: the client dies of SIGSEGV.
    Crash,
}

impl Attack {
    pub const ALL: [Attack; 8] = [
        Attack::Opcode,
        Attack::RawFd,
        Attack::Slot,
        Attack::BufAddr,
        Attack::BufLen,
        Attack::Rewrite,
        Attack::Syscall,
        Attack::Crash,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Attack::Opcode => "opcode",
            Attack::RawFd => "raw-fd",
            Attack::Slot => "slot",
            Attack::BufAddr => "buf-addr",
            Attack::BufLen => "buf-len",
            Attack::Rewrite => "rewrite",
            Attack::Syscall => "syscall",
            Attack::Crash => "crash",
        }
    }
    /// Does the client die of this one (instead of getting an error completion)?
    pub fn kills_client(self) -> bool {
        matches!(self, Attack::Syscall | Attack::Crash)
    }
}

/// `--method offload` options.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OffloadOpts {
    pub path: OffloadPath,
    /// Broker path only.
    pub doorbell: Doorbell,
    /// Forbidden requests the client makes on purpose, in this order, before the workload.
    pub attacks: Vec<Attack>,
}

/// io_uring setup and registration options, each named after its kernel flag.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RingOpts {
    /// IORING_SETUP_SQPOLL: a kernel thread polls the submission queue.
    pub sqpoll: bool,
    /// sq_thread_idle in ms before the SQPOLL thread sleeps.
    pub sq_idle_ms: u32,
    /// IORING_SETUP_SQ_AFF: the CPU the SQPOLL thread is bound to.
    pub sq_cpu: Option<u32>,
    /// IORING_SETUP_IOPOLL: busy-poll for completions (O_DIRECT only, devices with poll queues).
    pub iopoll: bool,
    /// IORING_REGISTER_FILES: the target fd registered, SQEs use IOSQE_FIXED_FILE.
    pub fixed_files: bool,
    /// IORING_REGISTER_BUFFERS: the op buffers registered, READ_FIXED/WRITE_FIXED.
    pub fixed_bufs: bool,
    /// IORING_SETUP_COOP_TASKRUN (5.19+).
    pub coop_taskrun: bool,
    /// IORING_SETUP_SINGLE_ISSUER (6.0+).
    pub single_issuer: bool,
    /// IORING_SETUP_DEFER_TASKRUN (6.1+, needs SINGLE_ISSUER).
    pub defer_taskrun: bool,
    /// IORING_REGISTER_RING_FDS (5.18+): io_uring_enter by registered index.
    pub registered_ring: bool,
    /// READV/WRITEV (one iovec) instead of READ/WRITE.
    pub vectored: bool,
    /// IORING_OP_NOP instead of I/O: the ring's own cost (no data moves; the target is not touched).
    pub nop_requests: bool,
    /// Who owns and submits to the ring(s).
    pub design: RingDesign,
}

/// How threads share io_uring instances (`--ring`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RingDesign {
    /// Each worker thread owns a ring and submits to it.
    #[default]
    PerThread,
    /// One ring for all threads behind a mutex held while a thread submits, reaps and waits (the seed
    /// course report's design); each thread's completions are routed to it by user_data.
    Shared,
    /// One ring owned by a submitter thread; workers hand requests through lock-free per-thread queues
    /// and get completions back the same way (the report's suggested batching coordinator).
    SharedSubmitter,
    /// A ring per worker thread, filled by the worker (the producer) and reaped by a consumer thread of
    /// its own that waits for completions and hands them back: the seed Pi thesis's io_uring design.
    ProducerConsumer,
}

impl RingDesign {
    pub fn parse(s: &str) -> Option<RingDesign> {
        Some(match s {
            "per-thread" => RingDesign::PerThread,
            "shared" => RingDesign::Shared,
            "shared-submitter" => RingDesign::SharedSubmitter,
            "producer-consumer" => RingDesign::ProducerConsumer,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            RingDesign::PerThread => "per-thread",
            RingDesign::Shared => "shared",
            RingDesign::SharedSubmitter => "shared-submitter",
            RingDesign::ProducerConsumer => "producer-consumer",
        }
    }
}

/// Default sq_thread_idle: 1 s, so a run does not keep re-waking the thread.
pub const DEFAULT_SQ_IDLE_MS: u32 = 1000;

/// Ops when the user gives no amount at all (also capped by [`DEFAULT_DURATION_S`]).
pub const DEFAULT_OPS: u64 = 100_000;
pub const DEFAULT_DURATION_S: f64 = 10.0;
/// The glibc stdio buffer iolab sets by default: 4096 bytes, what glibc picks itself for files on most
/// filesystems (st_blksize), and what the seed's fputs program got.
pub const DEFAULT_STDIO_BUFFER: u64 = 4096;

fn bool_of(flag: &str, v: &Option<Val>) -> Result<bool> {
    match v {
        None => Ok(false),
        Some(Val::Bool(b)) => Ok(*b),
        Some(Val::Str(s)) if s == "true" => Ok(true),
        Some(Val::Str(s)) if s == "false" => Ok(false),
        Some(o) => Err(Error::usage(
            flag,
            format!("'{}' is not accepted; expected true or false", o.text()),
        )),
    }
}

fn size_of(flag: &str, v: &Val) -> Result<u64> {
    match v {
        Val::Int(i) if *i >= 0 => Ok(*i as u64),
        Val::Str(s) => parse_size(s).map_err(|m| Error::usage(flag, m)),
        o => Err(Error::usage(
            flag,
            format!(
                "'{}' is not a size; expected a byte count such as 4, 4k or 1MiB",
                o.text()
            ),
        )),
    }
}

fn count_of(flag: &str, v: &Val) -> Result<u64> {
    match v {
        Val::Int(i) if *i >= 0 => Ok(*i as u64),
        Val::Str(s) => parse_count(s).map_err(|m| Error::usage(flag, m)),
        o => Err(Error::usage(
            flag,
            format!("'{}' is not a count; expected a whole number", o.text()),
        )),
    }
}

fn str_of(flag: &str, v: &Val) -> Result<String> {
    match v {
        Val::Str(s) => Ok(s.clone()),
        o => Err(Error::usage(
            flag,
            format!("'{}' is not accepted here; expected text", o.text()),
        )),
    }
}

fn nonzero(flag: &str, n: u64, what: &str) -> Result<u64> {
    if n == 0 {
        Err(Error::usage(flag, format!("0 is not accepted; {what}")))
    } else {
        Ok(n)
    }
}

/// One of a fixed set of words, or `default` when unset.
fn choice<T: Copy>(flag: &str, v: &Option<Val>, default: T, words: &[(&str, T)]) -> Result<T> {
    let Some(v) = v else { return Ok(default) };
    let w = str_of(flag, v)?;
    words
        .iter()
        .find(|(n, _)| *n == w)
        .map(|(_, t)| *t)
        .ok_or_else(|| {
            let names: Vec<&str> = words.iter().map(|(n, _)| *n).collect();
            Error::usage(
                flag,
                format!("'{w}' is not accepted; expected {}", names.join(" or ")),
            )
        })
}

/// A count of at least 1 (`what` says what is expected), or `default` when unset.
fn count_or(flag: &str, v: &Option<Val>, default: u64, what: &str) -> Result<u64> {
    match v {
        None => Ok(default),
        Some(v) => nonzero(flag, count_of(flag, v)?, what),
    }
}

/// A size of at least 1 byte, or `default` when unset.
fn size_or(flag: &str, v: &Option<Val>, default: u64, what: &str) -> Result<u64> {
    match v {
        None => Ok(default),
        Some(v) => nonzero(flag, size_of(flag, v)?, what),
    }
}

fn fresh_seed() -> u64 {
    let t = crate::sys::monotonic_ns();
    let p = std::process::id() as u64;
    crate::pattern::mix64(t ^ (p << 32) ^ 0x1017_ab00)
}

impl RawSpec {
    /// Validates everything that can be judged without touching the target.
    pub fn resolve(&self) -> Result<Spec> {
        let method = match &self.method {
            None => MethodKind::Psync,
            Some(v) => {
                let s = str_of("--method", v)?;
                MethodKind::parse(&s).ok_or_else(|| {
                    Error::usage(
                        "--method",
                        format!("unknown method '{s}'; accepted: {}", MethodKind::names()),
                    )
                })?
            }
        };
        let target = match &self.target {
            None => PathBuf::from("/dev/null"),
            Some(v) => {
                let s = str_of("--target", v)?;
                if s.is_empty() {
                    return Err(Error::usage(
                        "--target",
                        "empty path; expected a file, /dev/null, /dev/zero or a block device",
                    ));
                }
                PathBuf::from(s)
            }
        };
        let op = choice(
            "--op",
            &self.op,
            OpKind::Write,
            &[("write", OpKind::Write), ("read", OpKind::Read)],
        )?;
        let pattern = choice(
            "--pattern",
            &self.pattern,
            Pattern::Seq,
            &[("seq", Pattern::Seq), ("rand", Pattern::Rand)],
        )?;
        let bs = size_or(
            "--bs",
            &self.bs,
            4096,
            "the block size must be at least 1 byte",
        )?;
        if bs > 1 << 30 {
            return Err(Error::usage(
                "--bs",
                "at most 1 GiB per operation is accepted",
            ));
        }
        let threads = count_or("--threads", &self.threads, 1, "expected 1 or more threads")?;
        if threads > 1024 {
            return Err(Error::usage(
                "--threads",
                "at most 1024 threads are accepted",
            ));
        }
        let mut ops = match &self.ops {
            None => None,
            Some(v) => Some(nonzero(
                "--ops",
                count_of("--ops", v)?,
                "expected 1 or more operations",
            )?),
        };
        if let Some(v) = &self.size {
            if ops.is_some() {
                return Err(Error::usage(
                    "--size",
                    "--ops and --size both set the amount; give one of them",
                ));
            }
            let size = nonzero(
                "--size",
                size_of("--size", v)?,
                "expected at least one block",
            )?;
            if !size.is_multiple_of(bs) {
                return Err(Error::usage(
                    "--size",
                    format!("{size} bytes is not a whole number of --bs {bs} blocks"),
                ));
            }
            ops = Some(size / bs);
        }
        let duration_s = match &self.duration {
            None => None,
            Some(v) => {
                let d = match v {
                    Val::Int(i) => *i as f64,
                    Val::Float(f) => *f,
                    Val::Str(s) => parse_duration(s).map_err(|m| Error::usage("--duration", m))?,
                    Val::Bool(_) => f64::NAN,
                };
                if d.is_nan() || d <= 0.0 {
                    return Err(Error::usage(
                        "--duration",
                        format!(
                            "'{}' is not accepted; expected a positive number of seconds",
                            v.text()
                        ),
                    ));
                }
                Some(d)
            }
        };
        let (ops, duration_s) = match (ops, duration_s) {
            (None, None) => (Some(DEFAULT_OPS), Some(DEFAULT_DURATION_S)),
            o => o,
        };
        if let Some(n) = ops {
            if n < threads {
                return Err(Error::usage(
                    "--ops",
                    format!("{n} operations cannot be shared by {threads} threads; give at least one per thread"),
                ));
            }
        }

        let direct = bool_of("--direct", &self.direct)?;
        let fsync = match &self.fsync {
            None => SyncEvery::None,
            Some(v) => SyncEvery::parse("--fsync", &str_of("--fsync", v)?)?,
        };
        let msync = match &self.msync {
            None => SyncEvery::None,
            Some(v) => SyncEvery::parse("--msync", &str_of("--msync", v)?)?,
        };
        let only = |flag: &str, set: bool, m: MethodKind| -> Result<()> {
            if set && method != m {
                Err(Error::usage(
                    flag,
                    format!(
                        "applies to --method {} only, not {}",
                        m.name(),
                        method.name()
                    ),
                ))
            } else {
                Ok(())
            }
        };
        only("--iovecs", self.iovecs.is_some(), MethodKind::Vectored)?;
        let queued = |flag: &str, set: bool| -> Result<()> {
            let offload_ok = flag == "--batch" && method == MethodKind::Offload;
            if set && !matches!(method, MethodKind::IoUring | MethodKind::Aio) && !offload_ok {
                Err(Error::usage(
                    flag,
                    format!(
                        "applies to --method {} only, not {}",
                        if flag == "--batch" {
                            "io_uring, aio or offload"
                        } else {
                            "io_uring or aio"
                        },
                        method.name()
                    ),
                ))
            } else {
                Ok(())
            }
        };
        if method == MethodKind::Offload && self.qd.is_some() {
            return Err(Error::usage(
                "--qd",
                "an offload client keeps one batch in flight (it waits for every request of a batch before the next): use --batch",
            ));
        }
        queued("--qd", self.qd.is_some())?;
        queued("--batch", self.batch.is_some())?;
        only("--msync", self.msync.is_some(), MethodKind::Mmap)?;
        only(
            "--stdio-buffer",
            self.stdio_buffer.is_some(),
            MethodKind::Stdio,
        )?;
        let iovecs = count_or("--iovecs", &self.iovecs, 1, "expected 1 or more iovecs")?;
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
        let mut qd = count_or("--qd", &self.qd, 1, "expected a queue depth of 1 or more")?;
        if qd > 4096 {
            return Err(Error::usage(
                "--qd",
                "at most 4096 requests in flight are accepted",
            ));
        }
        let batch = count_or("--batch", &self.batch, 1, "expected a batch of 1 or more")?;
        if method == MethodKind::Offload {
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
        let stdio_buffer = size_or(
            "--stdio-buffer",
            &self.stdio_buffer,
            DEFAULT_STDIO_BUFFER,
            "expected a buffer of 1 byte or more",
        )?;
        let file_size = match &self.file_size {
            None => None,
            Some(v) => Some(nonzero(
                "--file-size",
                size_of("--file-size", v)?,
                "expected 1 byte or more",
            )?),
        };
        let offset = match &self.offset {
            None => 0,
            Some(v) => size_of("--offset", v)?,
        };
        let seed = match &self.seed {
            None => fresh_seed(),
            Some(v) => count_of("--seed", v)?,
        };
        let verify = bool_of("--verify", &self.verify)?;
        let ring_flags = [
            ("--sqpoll", &self.sqpoll),
            ("--iopoll", &self.iopoll),
            ("--fixed-files", &self.fixed_files),
            ("--fixed-bufs", &self.fixed_bufs),
            ("--coop-taskrun", &self.coop_taskrun),
            ("--single-issuer", &self.single_issuer),
            ("--defer-taskrun", &self.defer_taskrun),
            ("--registered-ring", &self.registered_ring),
            ("--vectored", &self.vectored),
            ("--nop-requests", &self.nop_requests),
            ("--sq-idle-ms", &self.sq_idle_ms),
            ("--sq-cpu", &self.sq_cpu),
            ("--ring", &self.ring),
        ];
        let offload_path = match &self.offload_path {
            None => OffloadPath::Kernel,
            Some(v) => {
                only("--offload-path", true, MethodKind::Offload)?;
                choice(
                    "--offload-path",
                    &Some(v.clone()),
                    OffloadPath::Kernel,
                    &[
                        ("kernel", OffloadPath::Kernel),
                        ("broker", OffloadPath::Broker),
                        ("native", OffloadPath::Native),
                    ],
                )?
            }
        };
        for (flag, v) in ring_flags {
            let offload_ok = method == MethodKind::Offload
                && (flag == "--nop-requests"
                    || (offload_path == OffloadPath::Kernel
                        && matches!(flag, "--sq-idle-ms" | "--sq-cpu")));
            if offload_ok {
                continue;
            }
            if method == MethodKind::Offload && matches!(flag, "--sq-idle-ms" | "--sq-cpu") {
                if v.is_some() {
                    return Err(Error::usage(
                        flag,
                        format!(
                            "applies to --offload-path kernel (its SQPOLL thread), not {}",
                            offload_path.name()
                        ),
                    ));
                }
                continue;
            }
            only(flag, v.is_some(), MethodKind::IoUring)?;
        }
        only("--doorbell", self.doorbell.is_some(), MethodKind::Offload)?;
        only(
            "--offload-attack",
            self.offload_attack.is_some(),
            MethodKind::Offload,
        )?;
        if self.doorbell.is_some() && offload_path != OffloadPath::Broker {
            return Err(Error::usage(
                "--doorbell",
                format!(
                    "applies to --offload-path broker only, not {} (the kernel path's doorbell is SQPOLL's \
                     NEED_WAKEUP; --sq-idle-ms sets how long its thread spins)",
                    offload_path.name()
                ),
            ));
        }
        let doorbell = choice(
            "--doorbell",
            &self.doorbell,
            Doorbell::SpinThenSleep,
            &[
                ("spin", Doorbell::Spin),
                ("spin-then-sleep", Doorbell::SpinThenSleep),
                ("eventfd", Doorbell::Eventfd),
            ],
        )?;
        let mut attacks = Vec::new();
        if let Some(v) = &self.offload_attack {
            let text = str_of("--offload-attack", v)?;
            for w in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
                let a = Attack::ALL
                    .into_iter()
                    .find(|a| a.name() == w)
                    .ok_or_else(|| {
                        let names: Vec<&str> = Attack::ALL.iter().map(|a| a.name()).collect();
                        Error::usage(
                            "--offload-attack",
                            format!(
                                "'{w}' is not accepted; expected a comma list of {}",
                                names.join(", ")
                            ),
                        )
                    })?;
                if a == Attack::Rewrite && offload_path != OffloadPath::Broker {
                    return Err(Error::usage(
                        "--offload-attack",
                        "rewrite tests the broker's copy of each request: use it with --offload-path broker",
                    ));
                }
                if a.kills_client() && attacks.iter().any(|b: &Attack| b.kills_client()) {
                    return Err(Error::usage(
                        "--offload-attack",
                        "syscall and crash each end the client: give one of them",
                    ));
                }
                attacks.push(a);
            }
            if attacks.is_empty() {
                return Err(Error::usage(
                    "--offload-attack",
                    "empty list; expected one or more attacks",
                ));
            }
            if offload_path == OffloadPath::Native && attacks.iter().any(|a| !a.kills_client()) {
                return Err(Error::usage(
                    "--offload-attack",
                    "the native path has no sandbox to test (its client may do anything): use --offload-path kernel or broker",
                ));
            }
        }
        if method == MethodKind::Offload && threads != 1 {
            return Err(Error::usage(
                "--threads",
                "an offload run has one client process; use --threads 1",
            ));
        }
        let ring = RingOpts {
            sqpoll: bool_of("--sqpoll", &self.sqpoll)?,
            sq_idle_ms: match &self.sq_idle_ms {
                None => DEFAULT_SQ_IDLE_MS,
                Some(v) => count_of("--sq-idle-ms", v)?.min(u32::MAX as u64) as u32,
            },
            sq_cpu: match &self.sq_cpu {
                None => None,
                Some(v) => Some(count_of("--sq-cpu", v)?.min(u32::MAX as u64) as u32),
            },
            iopoll: bool_of("--iopoll", &self.iopoll)?,
            fixed_files: bool_of("--fixed-files", &self.fixed_files)?,
            fixed_bufs: bool_of("--fixed-bufs", &self.fixed_bufs)?,
            coop_taskrun: bool_of("--coop-taskrun", &self.coop_taskrun)?,
            single_issuer: bool_of("--single-issuer", &self.single_issuer)?,
            defer_taskrun: bool_of("--defer-taskrun", &self.defer_taskrun)?,
            registered_ring: bool_of("--registered-ring", &self.registered_ring)?,
            vectored: bool_of("--vectored", &self.vectored)?,
            nop_requests: bool_of("--nop-requests", &self.nop_requests)?,
            design: match &self.ring {
                None => RingDesign::PerThread,
                Some(v) => {
                    let w = str_of("--ring", v)?;
                    RingDesign::parse(&w).ok_or_else(|| {
                        Error::usage(
                            "--ring",
                            format!("'{w}' is not accepted; expected per-thread, shared, shared-submitter or producer-consumer"),
                        )
                    })?
                }
            },
        };
        if ring.design == RingDesign::ProducerConsumer && ring.defer_taskrun {
            return Err(Error::usage(
                "--defer-taskrun",
                "with --ring producer-consumer a consumer thread waits for completions, but DEFER_TASKRUN posts                  them only to the submitting thread: drop --defer-taskrun or use --ring per-thread",
            ));
        }
        if ring.design == RingDesign::Shared && threads > 1 && ring.single_issuer {
            return Err(Error::usage(
                "--single-issuer",
                "every thread submits to a --ring shared ring, but SINGLE_ISSUER allows one submitting task: \
                 use --ring shared-submitter (one submitting thread) or --ring per-thread",
            ));
        }
        if ring.nop_requests && verify {
            return Err(Error::usage(
                "--verify",
                "--nop-requests moves no data, so there is nothing to verify",
            ));
        }
        if !ring.sqpoll
            && method != MethodKind::Offload
            && (self.sq_idle_ms.is_some() || self.sq_cpu.is_some())
        {
            let flag = if self.sq_idle_ms.is_some() {
                "--sq-idle-ms"
            } else {
                "--sq-cpu"
            };
            return Err(Error::usage(flag, "applies to --sqpoll only"));
        }
        if let Some(c) = ring.sq_cpu {
            let n = std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1) as u32;
            if c >= n {
                return Err(Error::usage(
                    "--sq-cpu",
                    format!(
                        "CPU {c} does not exist; this machine has CPUs 0 to {}",
                        n - 1
                    ),
                ));
            }
        }
        if ring.iopoll && !direct {
            return Err(Error::usage(
                "--iopoll",
                "needs --direct: polled completions exist only for O_DIRECT I/O",
            ));
        }
        if ring.defer_taskrun && !ring.single_issuer {
            return Err(Error::usage(
                "--defer-taskrun",
                "needs --single-issuer (IORING_SETUP_DEFER_TASKRUN requires SINGLE_ISSUER)",
            ));
        }
        if ring.sqpoll && (ring.coop_taskrun || ring.defer_taskrun) {
            let flag = if ring.coop_taskrun {
                "--coop-taskrun"
            } else {
                "--defer-taskrun"
            };
            return Err(Error::usage(flag, "cannot be combined with --sqpoll (the kernel refuses task-run flags on SQPOLL rings)"));
        }
        if ring.fixed_bufs && ring.vectored {
            return Err(Error::usage(
                "--fixed-bufs",
                "uses READ_FIXED/WRITE_FIXED, which are not vectored; drop --vectored",
            ));
        }
        let count = match &self.count {
            None => CountMode::Separate,
            Some(v) => {
                let w = str_of("--count", v)?;
                CountMode::parse(&w).ok_or_else(|| {
                    Error::usage(
                        "--count",
                        format!("'{w}' is not accepted; expected none, separate or inline"),
                    )
                })?
            }
        };
        let spec = Spec {
            target,
            method,
            op,
            pattern,
            bs,
            ops,
            duration_s,
            threads: threads as u32,
            direct,
            fsync,
            msync,
            iovecs: iovecs as u32,
            qd: qd as u32,
            batch: batch as u32,
            stdio_buffer,
            file_size,
            offset,
            seed,
            verify,
            overwrite: bool_of("--overwrite", &self.overwrite)?,
            keep: bool_of("--keep", &self.keep)?,
            allow_device_writes: bool_of("--allow-device-writes", &self.allow_device_writes)?,
            count,
            ring,
            breakdown: match &self.breakdown {
                None => true,
                some => bool_of("--breakdown", some)?,
            },
            offload: OffloadOpts {
                path: offload_path,
                doorbell,
                attacks,
            },
        };
        spec.check_method_combinations()?;
        Ok(spec)
    }
}

impl Spec {
    fn check_method_combinations(&self) -> Result<()> {
        let m = self.method;
        if self.direct && matches!(m, MethodKind::Stdio | MethodKind::Mmap) {
            return Err(Error::usage(
                "--direct",
                format!(
                    "not possible with --method {}: it copies through {}; use sync, psync, vectored or io_uring",
                    m.name(),
                    if m == MethodKind::Stdio { "stdio's user-space buffer" } else { "the page cache mapping" }
                ),
            ));
        }
        if m == MethodKind::Nop {
            if self.verify {
                return Err(Error::usage(
                    "--verify",
                    "--method nop moves no data, so there is nothing to verify",
                ));
            }
            if !self.fsync.is_none() {
                return Err(Error::usage(
                    "--fsync",
                    "--method nop makes no kernel call at all",
                ));
            }
        }
        if m.is_kernel_copy() {
            if self.op == OpKind::Read {
                return Err(Error::usage(
                    "--op",
                    format!(
                        "--method {} copies a source file into the target: use --op write",
                        m.name()
                    ),
                ));
            }
            if self.direct && m != MethodKind::CopyFileRange {
                return Err(Error::usage("--direct", format!("not supported with --method {} here; use copy_file_range or a syscall method", m.name())));
            }
        }
        if self.verify && self.op == OpKind::Read && m != MethodKind::Offload {
            return Err(Error::usage(
                "--verify",
                "checks what a write run wrote; use it with --op write (--method offload also checks reads)",
            ));
        }
        Ok(())
    }

    /// The same workload for the untimed counting pass: nothing verified or kept.
    pub fn for_counting_pass(&self) -> Spec {
        Spec {
            verify: false,
            keep: false,
            ..self.clone()
        }
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
        assert!(err(&[("op", "read"), ("verify", "true")]).starts_with("--verify:"));
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
        let flags = RawSpec {
            bs: Some("4".into()),
            ..Default::default()
        };
        let s = file.merge(flags).resolve().unwrap();
        assert_eq!(s.bs, 4);
        assert_eq!(s.qd, 8);
        assert_eq!(s.ops, Some(10));
        assert_eq!(s.duration_s, None);
    }

    #[test]
    fn ops_split_over_threads() {
        let s = raw(&[("ops", "10"), ("threads", "3")]).resolve().unwrap();
        let per: Vec<u64> = (0..3).map(|t| s.ops_for_thread(t).unwrap()).collect();
        assert_eq!(per, vec![4, 3, 3]);
        assert_eq!(per.iter().sum::<u64>(), 10);
    }
}

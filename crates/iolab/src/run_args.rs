//! The workload flags of `iolab run` and `iolab sweep` (a run's spec), and their RawSpec.

use clap::Args;
use iolab_core::spec::{RawSpec, Val};
use std::path::PathBuf;

#[derive(Args)]
#[command(next_help_heading = "Workload")]
pub(crate) struct RunArgs {
    /// TOML spec file; keys are the flag names without dashes (bs = "4k", file-size = "64m", qd = 8).
    #[arg(long, value_name = "FILE")]
    pub(crate) spec: Option<PathBuf>,
    /// Write the result document (JSON) to FILE ("-" for stdout). An existing FILE is not replaced.
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
    /// Run the workload N times; report each figure's median, min, max and standard deviation, and say
    /// when the spread is too wide to trust a comparison [default: 1].
    #[arg(long, value_name = "N")]
    pub(crate) repeat: Option<String>,
    /// Write one CSV row per run to FILE (columns in the README). An existing FILE is not replaced.
    #[arg(long, value_name = "FILE")]
    pub(crate) csv: Option<PathBuf>,

    /// A regular file (created if missing), /dev/null (write sink), /dev/zero (read source) or a block device [default: /dev/null].
    #[arg(long, value_name = "PATH")]
    pub(crate) target: Option<String>,
    /// sync: write/read at the file position | psync: pwrite/pread | vectored: pwritev/preadv (--iovecs) |
    /// stdio: glibc fwrite/fread on a fully buffered FILE (_IOFBF, --stdio-buffer, default 4096 bytes, as glibc picks
    /// for files) | mmap: memcpy into/out of a MAP_SHARED mapping (--msync) | io_uring: a ring per thread (--qd, --batch,
    /// ring options below) | aio: Linux native AIO, io_submit/io_getevents (--qd, --batch) |
    /// splice, sendfile, copy_file_range: kernel-side copies from a source file iolab fills, no user-space
    /// copy (writes only) | offload: a sandboxed client process (seccomp strict) doing I/O through rings in shared
    /// memory (--offload-path) | nop: no kernel call, the harness's floor [default: psync].
    #[arg(long, value_name = "METHOD", verbatim_doc_comment)]
    pub(crate) method: Option<String>,
    /// write or read [default: write].
    #[arg(long, value_name = "OP")]
    pub(crate) op: Option<String>,
    /// seq or rand (uniform over the thread's region, replayable) [default: seq].
    #[arg(long, value_name = "PATTERN")]
    pub(crate) pattern: Option<String>,
    /// Bytes per op: 4, 512, 4k, 4KiB, 1m, 1MiB (powers of 1024) [default: 4k].
    #[arg(long, value_name = "SIZE")]
    pub(crate) bs: Option<String>,
    /// Total ops over all threads (1000, 1_000_000, 100k, 1M) [default: 100000, capped at 10 s].
    #[arg(long, value_name = "N")]
    pub(crate) ops: Option<String>,
    /// Total bytes over all threads (a whole number of --bs blocks); instead of --ops.
    #[arg(long, value_name = "BYTES")]
    pub(crate) size: Option<String>,
    /// Time bound (5, 2.5s, 500ms, 1m); with --ops or --size, whichever comes first.
    #[arg(long, value_name = "SECS")]
    pub(crate) duration: Option<String>,
    /// Threads, each with its own descriptor (and ring) and its own region of the target [default: 1].
    #[arg(long, value_name = "N")]
    pub(crate) threads: Option<String>,
    /// O_DIRECT with aligned buffers (--bs and --offset must be multiples of the device's alignment).
    #[arg(long)]
    pub(crate) direct: bool,
    /// none | end | every:N (timed, not in per-op latency) [default: none].
    #[arg(long, value_name = "WHEN")]
    pub(crate) fsync: Option<String>,
    /// Size of a file iolab creates, shared by the threads' regions; writes wrap around it [default: ops x bs, or 64 MiB for --duration runs].
    #[arg(long, value_name = "SIZE")]
    pub(crate) file_size: Option<String>,
    /// Byte offset in the target where the first region starts [default: 0].
    #[arg(long, value_name = "BYTES")]
    pub(crate) offset: Option<String>,
    /// Seed of the data pattern and random offsets [default: a fresh one, recorded in the result].
    #[arg(long, value_name = "N")]
    pub(crate) seed: Option<String>,

    #[command(flatten)]
    pub(crate) method_opts: MethodOpts,
    #[command(flatten)]
    pub(crate) safety: SafetyOpts,
}

#[derive(Args)]
#[command(next_help_heading = "Method options")]
pub(crate) struct MethodOpts {
    /// vectored: iovecs per op (the block split evenly) [default: 1].
    #[arg(long, value_name = "N")]
    pub(crate) iovecs: Option<String>,
    /// io_uring, aio: requests in flight [default: 1].
    #[arg(long, value_name = "N")]
    pub(crate) qd: Option<String>,
    /// io_uring, aio: requests per io_uring_enter / io_submit (at most --qd); offload: requests per round trip [default: 1].
    #[arg(long, value_name = "N")]
    pub(crate) batch: Option<String>,
    /// mmap: none | end | every:N msync(MS_SYNC) of the mapping [default: none].
    #[arg(long, value_name = "WHEN")]
    pub(crate) msync: Option<String>,
    /// stdio: FILE buffer size given to setvbuf(_IOFBF) [default: 4096].
    #[arg(long, value_name = "SIZE")]
    pub(crate) stdio_buffer: Option<String>,
    /// io_uring: IORING_SETUP_SQPOLL (5.1+; unprivileged since 5.11): a kernel thread (iou-sqp) polls the
    /// submission queue; it burns a CPU while awake, reported separately.
    #[arg(long)]
    pub(crate) sqpoll: bool,
    /// io_uring --sqpoll: sq_thread_idle, ms before the SQPOLL thread sleeps [default: 1000].
    #[arg(long, value_name = "MS")]
    pub(crate) sq_idle_ms: Option<String>,
    /// io_uring --sqpoll: IORING_SETUP_SQ_AFF, the CPU the SQPOLL thread is bound to.
    #[arg(long, value_name = "CPU")]
    pub(crate) sq_cpu: Option<String>,
    /// io_uring: IORING_SETUP_IOPOLL (5.1+): busy-poll for completions; needs --direct and a device with
    /// poll queues (refused with the reason otherwise).
    #[arg(long)]
    pub(crate) iopoll: bool,
    /// io_uring: IORING_REGISTER_FILES (5.1+): the target fd registered, IOSQE_FIXED_FILE.
    #[arg(long)]
    pub(crate) fixed_files: bool,
    /// io_uring: IORING_REGISTER_BUFFERS (5.1+): op buffers registered, READ_FIXED/WRITE_FIXED; counts
    /// against RLIMIT_MEMLOCK unless root.
    #[arg(long)]
    pub(crate) fixed_bufs: bool,
    /// io_uring: IORING_SETUP_COOP_TASKRUN (5.19+).
    #[arg(long)]
    pub(crate) coop_taskrun: bool,
    /// io_uring: IORING_SETUP_SINGLE_ISSUER (6.0+).
    #[arg(long)]
    pub(crate) single_issuer: bool,
    /// io_uring: IORING_SETUP_DEFER_TASKRUN (6.1+, needs --single-issuer): completions run only when the
    /// submitter waits.
    #[arg(long)]
    pub(crate) defer_taskrun: bool,
    /// io_uring: IORING_REGISTER_RING_FDS (5.18+): io_uring_enter by registered index.
    #[arg(long)]
    pub(crate) registered_ring: bool,
    /// io_uring: IORING_OP_READV/WRITEV with one iovec instead of READ/WRITE.
    #[arg(long, conflicts_with = "nonvectored")]
    pub(crate) vectored: bool,
    /// io_uring: IORING_OP_READ/WRITE (the default).
    #[arg(long)]
    pub(crate) nonvectored: bool,
    /// io_uring, offload: submit IORING_OP_NOP instead of I/O (the ring's own cost; the target is not touched).
    #[arg(long)]
    pub(crate) nop_requests: bool,
    /// offload: kernel (an io_uring in the shared memfd, SQPOLL, registered file and buffer, restrictions) |
    /// broker (iolab's request ring, a broker thread that copies, checks and runs each request) | native
    /// (the same requests from an unsandboxed client with io_uring_enter) [default: kernel].
    #[arg(long, value_name = "PATH")]
    pub(crate) offload_path: Option<String>,
    /// offload --offload-path broker: spin | spin-then-sleep (spin 50 us, then sleep on an eventfd the
    /// client rings) | eventfd (sleep whenever idle; the client rings every batch) [default: spin-then-sleep].
    #[arg(long, value_name = "MODE")]
    pub(crate) doorbell: Option<String>,
    /// offload: test the sandbox: the client also makes these forbidden requests (comma list): opcode,
    /// raw-fd, slot, buf-addr, buf-len, rewrite (broker), syscall, crash. Each must be refused with an error
    /// completion, and iolab's canary page and unrelated file must stay unchanged (exit 1 otherwise);
    /// syscall and crash end the client mid-run (exit 1, reported).
    #[arg(long, value_name = "LIST")]
    pub(crate) offload_attack: Option<String>,
    /// io_uring: per-thread (a ring per thread) | shared (one ring, a mutex around submit/reap/wait, as
    /// the seed course report) | shared-submitter (one ring fed by a submitter thread through lock-free
    /// per-thread queues) [default: per-thread].
    #[arg(long, value_name = "DESIGN")]
    pub(crate) ring: Option<String>,
}

#[derive(Args)]
#[command(next_help_heading = "Checking, safety and counting")]
pub(crate) struct SafetyOpts {
    /// After a write run, read the target back and check every written block; exit 1 on a mismatch.
    #[arg(long)]
    pub(crate) verify: bool,
    /// Allow writing into an existing regular file iolab did not create.
    #[arg(long)]
    pub(crate) overwrite: bool,
    /// Keep the file iolab created (it is removed at exit otherwise, also on Ctrl-C).
    #[arg(long)]
    pub(crate) keep: bool,
    /// Allow writing to a block device (always refused while it or a partition is mounted).
    #[arg(long)]
    pub(crate) allow_device_writes: bool,
    /// Kernel tracepoints (syscalls made, io_uring requests and punts, per-syscall breakdown): separate = a
    /// second, untimed pass of the same workload; inline = during the timed pass (each syscall ~30% dearer);
    /// none. Software counters (context switches, faults) are always on [default: separate].
    #[arg(long, value_name = "MODE")]
    pub(crate) count: Option<String>,
    /// Count only totals in the counting pass, no per-syscall breakdown (faster: releasing each traced
    /// syscall's tracepoint waits for an RCU grace period).
    #[arg(long)]
    pub(crate) no_breakdown: bool,
}

impl RunArgs {
    pub(crate) fn raw(&self) -> RawSpec {
        let s = |o: &Option<String>| o.as_ref().map(|v| Val::Str(v.clone()));
        let b = |f: bool| if f { Some(Val::Bool(true)) } else { None };
        let m = &self.method_opts;
        RawSpec {
            target: s(&self.target),
            method: s(&self.method),
            op: s(&self.op),
            pattern: s(&self.pattern),
            bs: s(&self.bs),
            ops: s(&self.ops),
            size: s(&self.size),
            duration: s(&self.duration),
            threads: s(&self.threads),
            direct: b(self.direct),
            fsync: s(&self.fsync),
            msync: s(&m.msync),
            iovecs: s(&m.iovecs),
            qd: s(&m.qd),
            batch: s(&m.batch),
            stdio_buffer: s(&m.stdio_buffer),
            file_size: s(&self.file_size),
            offset: s(&self.offset),
            seed: s(&self.seed),
            verify: b(self.safety.verify),
            overwrite: b(self.safety.overwrite),
            keep: b(self.safety.keep),
            allow_device_writes: b(self.safety.allow_device_writes),
            count: s(&self.safety.count),
            sqpoll: b(m.sqpoll),
            sq_idle_ms: s(&m.sq_idle_ms),
            sq_cpu: s(&m.sq_cpu),
            iopoll: b(m.iopoll),
            fixed_files: b(m.fixed_files),
            fixed_bufs: b(m.fixed_bufs),
            coop_taskrun: b(m.coop_taskrun),
            single_issuer: b(m.single_issuer),
            defer_taskrun: b(m.defer_taskrun),
            registered_ring: b(m.registered_ring),
            nop_requests: b(m.nop_requests),
            ring: s(&m.ring),
            offload_path: s(&m.offload_path),
            doorbell: s(&m.doorbell),
            offload_attack: s(&m.offload_attack),
            vectored: if m.vectored {
                Some(Val::Bool(true))
            } else if m.nonvectored {
                Some(Val::Bool(false))
            } else {
                None
            },
            breakdown: if self.safety.no_breakdown {
                Some(Val::Bool(false))
            } else {
                None
            },
        }
    }
}

//! The one table of options. Each option is declared once: the workload's and the shared ones here (key,
//! kind of value, help, default, the methods it applies to), a method's own in its folder, as a static
//! in [`METHOD_OPTIONS`] gathered at link time. The TOML spec file, flag merging, the accepted-keys
//! message, `--vary` in sweeps and suites, and the command line's arguments all come from [`all`].
//!
//! A [`RawSpec`] is what a user wrote: key -> value, before anything is judged. The typed getters at the
//! bottom turn one value into a number, size, duration or word, or a usage error naming the flag.

use crate::error::{Error, Result};
use crate::units::{parse_count, parse_duration, parse_size, parse_size_wide};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// What kind of value an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// A byte count: 4, 4k, 1MiB.
    Size,
    /// A byte count that may be negative: 512k, -8k.
    SignedSize,
    /// A whole number: 1000, 100k, 1M.
    Count,
    /// Seconds: 5, 2.5s, 500ms.
    Duration,
    /// One of a set of words.
    Word(&'static [&'static str]),
    /// One of a set of words, or the flag alone meaning the second word (`--profile` = `--profile separate`).
    WordOrFlag(&'static [&'static str], &'static str),
    /// A comma list of words from a set.
    List(&'static [&'static str]),
    /// Free text (a path).
    Text,
    /// On or off: a flag on the command line (`--direct`), `true`/`false` in a file. `off` names a flag
    /// that sets it false (`--no-breakdown`).
    Bool {
        on: Option<&'static str>,
        off: Option<&'static str>,
    },
}

/// Where `--help` lists an option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    Workload,
    Method,
    Safety,
}

/// One option of a workload spec.
#[derive(Debug)]
pub struct Opt {
    /// The TOML key; the flag is `--KEY`.
    pub key: &'static str,
    pub ty: Ty,
    /// What the value is, in the help (`SIZE`, `N`).
    pub value_name: &'static str,
    pub help: &'static str,
    /// What an unset option means, for the help.
    pub default: Option<&'static str>,
    /// The methods it applies to: every method, or those whose registry entry declares this kind of
    /// option (`MethodInfo::options`).
    pub applies: Applies,
    pub group: Group,
}

/// Which methods an option applies to: everyone's, or one kind of option that a method's registry entry
/// (`MethodInfo::options`) says it takes. No method list is kept here: a method's file says what it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applies {
    All,
    /// Requests in flight (`--qd`).
    Depth,
    /// Requests per submission or round trip (`--batch`).
    Batch,
    /// io_uring's ring: setup flags, registrations, opcodes, designs.
    Ring,
    /// A kernel submission thread (SQPOLL): its idle time and CPU.
    SqThread,
    /// NOP requests in place of the workload's.
    NopRequests,
    /// The offload paths' options.
    Offload,
    /// `--msync` points of a mapping.
    Msync,
    /// RWF_* flags per call.
    RwFlags,
    /// The C library's stream buffer.
    StdioBuffer,
    /// Pieces per block.
    Iovecs,
    /// Polled completions (IORING_SETUP_IOPOLL).
    Polling,
    /// When and how many completions a native AIO thread collects.
    Reaping,
}

impl Opt {
    pub fn flag(&self) -> String {
        format!("--{}", self.key)
    }
}

use Applies::{All, Offload as OFFLOAD, Ring as URING};
use Group::{Method as M, Safety as S, Workload as W};
const fn flag(on: &'static str) -> Ty {
    Ty::Bool {
        on: Some(on),
        off: None,
    }
}

/// Every option, in the order the help lists them.
pub static OPTIONS: &[Opt] = &[
    Opt { key: "target", ty: Ty::Text, value_name: "PATH", group: W, applies: All, default: Some("/dev/null"),
        help: "A regular file (created if missing), /dev/null (write sink), /dev/zero (read source), a block \
               device, an NVMe generic device /dev/ngXnY (--method uring_cmd), iolab's sink driver \
               /dev/iolab_sink, or pipe, socketpair, tcp (a stream per thread with iolab's peer at the far end), or \
               tcp:ADDR:PORT (writes to a TCP peer iolab does not run, IPv4); a path holding {thread} names a \
               regular file per thread ({thread} replaced by the thread's number)" },
    Opt { key: "method", ty: Ty::Text, value_name: "METHOD", group: W, applies: All, default: Some("psync"),
        help: "How each op talks to the kernel (see the list below)" },
    Opt { key: "op", ty: Ty::Word(&["write", "read", "mixed"]), value_name: "OP", group: W, applies: All,
        default: Some("write"),
        help: "write, read, or mixed (each op reads or writes: fio's randrw; psync, pv2, io_uring, aio, nop)" },
    Opt { key: "rate-iops", ty: Ty::Count, value_name: "N", group: W, applies: All, default: None,
        help: "Pace each thread to N ops/s (fio's rate_iops); latency runs from when each op was due" },
    Opt { key: "rate", ty: Ty::Size, value_name: "BYTES", group: W, applies: All, default: None,
        help: "Pace each thread to BYTES/s (fio's rate)" },
    Opt { key: "read-pct", ty: Ty::Count, value_name: "N", group: W, applies: All, default: Some("50"),
        help: "With --op mixed: the share of ops that read, in percent (fio's rwmixread)" },
    Opt { key: "pattern", ty: Ty::Word(&["seq", "rand"]), value_name: "PATTERN", group: W, applies: All,
        default: Some("seq"), help: "seq or rand (uniform over the thread's region, replayable)" },
    Opt { key: "distribution", ty: Ty::Text, value_name: "DIST", group: W, applies: All,
        default: Some("uniform"),
        help: "With --pattern rand: uniform (with replacement), once (every block once a pass: fio's random map), zipf:THETA, pareto:H, normal:PCT, zoned:ACCESS%/SIZE%:... or zoned_abs:ACCESS%/SIZE:..., as fio's random_distribution" },
    Opt { key: "bs", ty: Ty::Size, value_name: "SIZE", group: W, applies: All, default: Some("4k"),
        help: "Bytes per op: 4, 512, 4k, 4KiB, 1m, 1MiB (powers of 1024)" },
    Opt { key: "bs-split", ty: Ty::Text, value_name: "SPLIT", group: W, applies: All, default: None,
        help: "A length drawn per op, as fio's bssplit (4k/50:64k/30:1m/20: sizes with their share of the ops) or \
               bsrange (1k-4k); the smallest size is --bs, and --size counts bytes" },
    Opt { key: "ops", ty: Ty::Count, value_name: "N", group: W, applies: All,
        default: Some("100000, capped at 10 s"),
        help: "Total ops over all threads (1000, 1_000_000, 100k, 1M)" },
    Opt { key: "size", ty: Ty::Size, value_name: "BYTES", group: W, applies: All, default: None,
        help: "Total bytes over all threads (a whole number of --bs blocks); instead of --ops" },
    Opt { key: "duration", ty: Ty::Duration, value_name: "SECS", group: W, applies: All, default: None,
        help: "Time bound (5, 2.5s, 500ms, 1m); with --ops or --size, whichever comes first" },
    Opt { key: "warmup", ty: Ty::Text, value_name: "N|SECS", group: W, applies: All, default: None,
        help: "Operations before timing starts (1000, 10k; over all threads) or seconds with a unit (2s, \
               500ms; each thread): run with their own instance of the method on the same target and region, \
               in no figure; the result counts them apart" },
    Opt { key: "clock-every", ty: Ty::Count, value_name: "N", group: W, applies: All,
        default: Some("1; 64 where a clock read is a system call (no vDSO fast path), for synchronous methods"),
        help: "Read the clock once every N ops instead of after every op: throughput from the span, no per-op \
               latency (the result says why). For clocks whose read is a system call (a Cortex-A9 has no \
               user-readable timer) or to take the clock out of the per-op cost; synchronous methods only" },
    Opt { key: "latency-sample", ty: Ty::Count, value_name: "N", group: W, applies: All,
        default: Some("1: every op"),
        help: "Time one op in N on its own (a clock read just before and just after it) and no other: \
               latency percentiles from those ops (their count is stated), throughput from the loop's span. \
               0: no op timed (the clock read after as many ops as take about 1 ms, at most 1,024, for the \
               deadline and progress). For ops cheaper \
               than a few clock reads. The queued methods (io_uring, uring_cmd, aio) take 0 and 1 only" },
    Opt { key: "threads", ty: Ty::Count, value_name: "N", group: W, applies: All, default: Some("1"),
        help: "Threads, each with its own descriptor (and ring) and its own region of the target" },
    Opt { key: "inflight", ty: Ty::Count, value_name: "N", group: W, applies: All, default: None,
        help: "Requests in flight, whatever the method: a method that takes --qd runs that depth on one \
               thread, an offload client a batch of N, any other N threads of one request each; given instead \
               of --threads and --qd, so that methods compare at the same depth (the result's spec says how \
               it was mapped)" },
    Opt { key: "direct", ty: flag("direct"), value_name: "", group: W, applies: All, default: None,
        help: "O_DIRECT with aligned buffers (--bs and --offset must be multiples of the device's alignment)" },
    Opt { key: "fsync", ty: Ty::Text, value_name: "WHEN", group: W, applies: All, default: Some("none"),
        help: "none | end | every:N (timed, not in per-op latency)" },
    Opt { key: "memory-limit", ty: Ty::Size, value_name: "SIZE", group: W, applies: All, default: None,
        help: "Run inside a memory cgroup of iolab's own limited to SIZE (made under iolab's cgroup, removed \
               after, journaled for `iolab clean`; needs root): the page cache cannot grow beyond it, so \
               buffered I/O meets reclaim; the result's memory section gives the page cache at the end, the \
               limit's hits and the refaults" },
    Opt { key: "cold-cache", ty: flag("cold-cache"), value_name: "", group: W, applies: All, default: None,
        help: "Read runs of a file or block device: before each pass, write the target back and drop its pages \
               from the page cache (fsync, then posix_fadvise DONTNEED; not timed), so buffered reads come \
               from the device; the result's notes say how many pages stayed cached (tmpfs keeps them all: its \
               pages are the file)" },
    Opt { key: "file-size", ty: Ty::Size, value_name: "SIZE", group: W, applies: All,
        default: Some("ops x bs, or 64 MiB for --duration runs"),
        help: "Size of a file iolab creates, shared by the threads' regions; writes wrap around it" },
    Opt { key: "share-region", ty: flag("share-region"), value_name: "", group: W, applies: All, default: None,
        help: "Every thread works the whole region instead of a slice of its own (fio's jobs sharing one \
               filename): a file of --file-size, each thread's ops over all of it; a file or block device only" },
    Opt { key: "walk-per-direction", ty: flag("walk-per-direction"), value_name: "", group: W, applies: All,
        default: None,
        help: "--op mixed --pattern seq: reads and writes each walk the region block after block from its \
               start, as fio's rw=rw does, instead of taking turns along one walk" },
    Opt { key: "preallocate", ty: flag("preallocate"), value_name: "", group: W, applies: All, default: None,
        help: "A file iolab creates for a write run gets its blocks reserved first (fallocate, not timed; fio's \
               fallocate=native), so the timed writes do not allocate them; said where the filesystem cannot" },
    Opt { key: "offset", ty: Ty::Size, value_name: "BYTES", group: W, applies: All, default: Some("0"),
        help: "Byte offset in the target where the first region starts" },
    Opt { key: "zone-size", ty: Ty::Size, value_name: "BYTES", group: W, applies: All, default: None,
        help: "Walk each region zone by zone, as fio's zonemode=strided: this many bytes in a zone, then on to \
               the next (--zone-range and --zone-skip on), back to the region's start past its end; multiples \
               of --bs" },
    Opt { key: "zone-range", ty: Ty::Size, value_name: "BYTES", group: W, applies: All,
        default: Some("--zone-size"),
        help: "With --zone-size: the width of a zone, gone over again until --zone-size bytes are done there" },
    Opt { key: "zone-skip", ty: Ty::Size, value_name: "BYTES", group: W, applies: All, default: Some("0"),
        help: "With --zone-size: the bytes left out between one zone and the next" },
    Opt { key: "skip", ty: Ty::SignedSize, value_name: "BYTES", group: W, applies: All, default: Some("0"),
        help: "With --pattern seq: each op starts BYTES after the end of the one before (holes, fio's \
               rw=read:N); negative goes backwards (rw=read:-N); back to the region's start past its end" },
    Opt { key: "seed", ty: Ty::Count, value_name: "N", group: W, applies: All,
        default: Some("a fresh one, recorded in the result"),
        help: "Seed of the data pattern and random offsets" },
    Opt { key: "sink", ty: Ty::Word(&["legacy", "nowait"]), value_name: "PERSONALITY", group: W, applies: All,
        default: Some("the driver's module parameter (legacy unless loaded with personality=nowait)"),
        help: "With --target /dev/iolab_sink (iolab's sink driver): legacy (.write/.read only, no FMODE_NOWAIT: \
               io_uring hands every request to an io-wq worker, like the Pi thesis's driver) or nowait \
               (.write_iter/.read_iter and FMODE_NOWAIT: io_uring completes them inline)" },
    Opt { key: "sink-log", ty: flag("sink-log"), value_name: "", group: W, applies: All, default: None,
        help: "With the sink driver: a log line (ktime, count, pid; no printk) and an iolab_sink:sink_write \
               tracepoint call per write, like the thesis's LM_LOG, so their cost shows" },
    Opt { key: "iovecs", ty: Ty::Count, value_name: "N", group: M, applies: Applies::Iovecs, default: Some("1"),
        help: "iovecs per op (the block split evenly)" },
    Opt { key: "qd", ty: Ty::Count, value_name: "N", group: M, applies: Applies::Depth, default: Some("1"),
        help: "Requests in flight" },
    Opt { key: "batch", ty: Ty::Count, value_name: "N", group: M,
        applies: Applies::Batch,
        default: Some("1"),
        help: "Requests per io_uring_enter / io_submit (at most --qd); offload: requests per round trip" },
    Opt { key: "msync", ty: Ty::Text, value_name: "WHEN", group: M, applies: Applies::Msync, default: Some("none"),
        help: "none | end | every:N msync(MS_SYNC) of the mapping" },
    Opt { key: "stdio-buffer", ty: Ty::Size, value_name: "SIZE", group: M, applies: Applies::StdioBuffer,
        default: Some("4096"), help: "FILE buffer size given to setvbuf(_IOFBF)" },
    Opt { key: "rw-flags", ty: Ty::List(&super::rw_flags::RW_FLAG_NAMES), value_name: "LIST",
        group: M, applies: Applies::RwFlags, default: None,
        help: "RWF_* flags of every call, a comma list (what each does and the kernel it needs: \
               docs/methods.md); with nowait an op that would block answers EAGAIN, is counted, then finished \
               with a plain call" },
    Opt { key: "sqpoll", ty: flag("sqpoll"), value_name: "", group: M, applies: URING, default: None,
        help: "IORING_SETUP_SQPOLL (5.1+; unprivileged since 5.11): a kernel thread (iou-sqp) polls the \
               submission queue; it burns a CPU while awake, reported separately" },
    Opt { key: "sq-idle-ms", ty: Ty::Count, value_name: "MS", group: M, applies: Applies::SqThread, default: Some("1000"),
        help: "With --sqpoll (or the offload kernel path): sq_thread_idle, ms before the SQPOLL thread sleeps" },
    Opt { key: "sq-cpu", ty: Ty::Count, value_name: "CPU", group: M, applies: Applies::SqThread, default: None,
        help: "With --sqpoll (or the offload kernel path): IORING_SETUP_SQ_AFF, the CPU of the SQPOLL thread" },
    Opt { key: "iopoll", ty: flag("iopoll"), value_name: "", group: M, applies: Applies::Polling, default: None,
        help: "IORING_SETUP_IOPOLL (5.1+; uring_cmd on /dev/ngXnY 6.1+): busy-poll for completions; needs a \
               device with poll queues, and io_uring needs --direct (refused with the reason otherwise)" },
    Opt { key: "fixed-files", ty: flag("fixed-files"), value_name: "", group: M, applies: URING, default: None,
        help: "IORING_REGISTER_FILES (5.1+): the target fd registered, IOSQE_FIXED_FILE" },
    Opt { key: "fixed-bufs", ty: flag("fixed-bufs"), value_name: "", group: M, applies: URING, default: None,
        help: "IORING_REGISTER_BUFFERS (5.1+): op buffers registered, READ_FIXED/WRITE_FIXED; counts against \
               RLIMIT_MEMLOCK unless root" },
    Opt { key: "coop-taskrun", ty: flag("coop-taskrun"), value_name: "", group: M, applies: URING,
        default: None, help: "IORING_SETUP_COOP_TASKRUN (5.19+)" },
    Opt { key: "single-issuer", ty: flag("single-issuer"), value_name: "", group: M, applies: URING,
        default: None, help: "IORING_SETUP_SINGLE_ISSUER (6.0+)" },
    Opt { key: "defer-taskrun", ty: flag("defer-taskrun"), value_name: "", group: M, applies: URING,
        default: None,
        help: "IORING_SETUP_DEFER_TASKRUN (6.1+, needs --single-issuer): completions run only when the \
               submitter waits" },
    Opt { key: "registered-ring", ty: flag("registered-ring"), value_name: "", group: M, applies: URING,
        default: None, help: "IORING_REGISTER_RING_FDS (5.18+): io_uring_enter by registered index" },
    Opt { key: "ring-setup", ty: Ty::Word(&["recommended", "plain"]), value_name: "SETUP", group: M, applies: URING,
        default: Some("recommended"),
        help: "recommended: the ring fio and liburing's authors set up, where the ring design allows it: \
               COOP_TASKRUN, SINGLE_ISSUER and DEFER_TASKRUN (not with --sqpoll, a --ring shared by several \
               threads or producer-consumer), NO_SQARRAY and a registered ring fd; a flag this kernel refuses \
               is dropped and the output says so | plain: only the flags given (the seeds' rings)" },
    Opt { key: "vectored", ty: Ty::Bool { on: Some("vectored"), off: Some("nonvectored") }, value_name: "",
        group: M, applies: URING, default: None,
        help: "IORING_OP_READV/WRITEV with one iovec instead of READ/WRITE (--nonvectored: READ/WRITE, the \
               default)" },
    Opt { key: "min-wait", ty: Ty::Count, value_name: "USEC", group: M, applies: URING, default: None,
        help: "When waiting for completions, wait up to USEC µs for a whole --batch of them, then take any \
               that came (IORING_ENTER_EXT_ARG min_wait_usec, 6.12+): fewer wake-ups per op, each op waiting \
               at most USEC longer" },
    Opt { key: "wait-region", ty: flag("wait-region"), value_name: "", group: M, applies: URING, default: None,
        help: "With --min-wait: the wait's arguments in a region registered once (IORING_REGISTER_MEM_REGION, \
               6.13+) instead of copied from user memory at every io_uring_enter; --ring per-thread only" },
    Opt { key: "send-zc", ty: flag("send-zc"), value_name: "", group: M, applies: URING, default: None,
        help: "IORING_OP_SEND_ZC (6.0+) on a tcp target: zero-copy sends; a request ends with \
               the kernel's notification that it let go of the buffer (counted, with the sends it copied \
               anyway); --ring per-thread only" },
    Opt { key: "nop-requests", ty: flag("nop-requests"), value_name: "", group: M, applies: Applies::NopRequests,
        default: None,
        help: "Submit IORING_OP_NOP instead of I/O (the ring's own cost; the target is not touched)" },
    Opt { key: "ring", ty: Ty::Word(&["per-thread", "shared", "shared-submitter", "producer-consumer"]),
        value_name: "DESIGN", group: M, applies: URING, default: Some("per-thread"),
        help: "per-thread (a ring per thread) | shared (one ring, a mutex around submit/reap/wait, as the seed \
               course report) | shared-submitter (one ring fed by a submitter thread through lock-free \
               per-thread queues) | producer-consumer (a ring per thread, a consumer thread reaps, as the seed \
               Pi thesis)" },
    Opt { key: "offload-path", ty: Ty::Word(&["kernel", "broker", "native"]), value_name: "PATH", group: M,
        applies: OFFLOAD, default: Some("kernel"),
        help: "kernel (an io_uring in the shared memfd, SQPOLL, registered file and buffer, restrictions) | \
               broker (iolab's request ring, a broker thread that copies, checks and runs each request) | \
               native (the same requests from an unsandboxed client with io_uring_enter)" },
    Opt { key: "offload-partition", ty: Ty::Word(&["process", "vm"]), value_name: "WHERE", group: M,
        applies: OFFLOAD, default: Some("process"),
        help: "process (a client forked by iolab, in seccomp strict mode) | vm (the client in a QEMU guest \
               booted as `iolab vm` boots it, the shared region an ivshmem-plain PCI device backed by a file in \
               /dev/shm; kernel or broker path, the broker with --doorbell spin)" },
    Opt { key: "doorbell", ty: Ty::Word(&["spin", "spin-then-sleep", "eventfd"]), value_name: "MODE", group: M,
        applies: OFFLOAD, default: Some("spin-then-sleep"),
        help: "With --offload-path broker: spin | spin-then-sleep (spin 50 us, then sleep on an eventfd the \
               client rings) | eventfd (sleep whenever idle; the client rings every batch)" },
    Opt { key: "sq-sleep", ty: flag("sq-sleep"), value_name: "", group: M, applies: OFFLOAD, default: None,
        help: "With --offload-path kernel: before every round trip the client waits until the SQPOLL thread has \
               idled out (IORING_SQ_NEED_WAKEUP), so every request wakes it through the doorbell, the thesis's \
               interrupt model; --sq-idle-ms defaults to 1 then (each round trip waits that long, untimed by the \
               client)" },
    Opt { key: "no-user-data", ty: flag("no-user-data"), value_name: "", group: M, applies: OFFLOAD, default: None,
        help: "With --nop-requests --batch 1 on the kernel or native path: the client leaves each SQE's user_data \
               unwritten (the offload thesis's Figure 4.2, NOPs without io_uring_sqe_set_data); by default it \
               sets it (Figure 4.3)" },
    Opt { key: "offload-attack",
        ty: Ty::List(&["opcode", "raw-fd", "slot", "buf-addr", "buf-len", "rewrite", "syscall", "crash"]),
        value_name: "LIST", group: M, applies: OFFLOAD, default: None,
        help: "Test the sandbox: the client also makes these forbidden requests (comma list): opcode, raw-fd, \
               slot, buf-addr, buf-len, rewrite (broker), syscall, crash. Each must be refused with an error \
               completion, and iolab's canary page and unrelated file must stay unchanged (exit 1 otherwise); \
               syscall and crash end the client mid-run (exit 1, reported)" },
    Opt { key: "verify", ty: flag("verify"), value_name: "", group: S, applies: All, default: None,
        help: "After a write run, read the target back and check every written block; on a read run, check every \
               block read against the pattern a write run of this --seed, --bs and --offset writes (uring_cmd and \
               offload as each arrives, the others reading it again after the run); exit 1 on a mismatch" },
    Opt { key: "overwrite", ty: flag("overwrite"), value_name: "", group: S, applies: All, default: None,
        help: "Allow writing into an existing regular file iolab did not create" },
    Opt { key: "keep", ty: flag("keep"), value_name: "", group: S, applies: All, default: None,
        help: "Keep the file iolab created (it is removed at exit otherwise, also on Ctrl-C)" },
    Opt { key: "allow-device-writes", ty: flag("allow-device-writes"), value_name: "", group: S, applies: All,
        default: None,
        help: "Allow writing to a block device, or to an NVMe namespace through its generic device (always \
               refused while it or a partition is mounted)" },
    Opt { key: "count", ty: Ty::Word(&["none", "separate", "full", "inline"]), value_name: "MODE", group: S,
        applies: All, default: Some("separate"),
        help: "Kernel tracepoints (syscalls made, io_uring requests and punts, per-syscall breakdown): separate \
               = an untimed pass over a sample of the workload (a tenth: of the ops, at least 1,000; of the \
               duration, at most 0.25 s; per-op figures come from it); full = an untimed pass of the whole workload (exact totals); inline = during the \
               timed pass (each syscall ~30% dearer); none. Software counters (context switches, faults) are \
               always on" },
    Opt { key: "layers", ty: flag("layers"), value_name: "", group: S, applies: All, default: None,
        help: "Where each op's time went, by layer, for a block device or a file on one: an untimed pass traces \
               the block layer (bio queued, request issued, completed) and splits each op's time into before, \
               queued, device and after (needs root or perf_event_paranoid -1)" },
    Opt { key: "profile", ty: Ty::WordOrFlag(&["none", "separate", "inline"], "separate"), value_name: "PASS", group: S,
        applies: All, default: Some("none; --profile alone: separate"),
        help: "Sample where the CPU time goes (perf cpu-clock, or cycles where the hardware has them, with kernel \
               and user call stacks, over the process and its kernel helper threads): separate = an untimed pass \
               of its own; inline = during the timed pass (slows it; the output says so); none" },
    Opt { key: "profile-hz", ty: Ty::Count, value_name: "HZ", group: S, applies: All, default: Some("997"),
        help: "Samples per second of each running thread for --profile" },
    Opt { key: "log-interval", ty: Ty::Count, value_name: "MS", group: S, applies: All,
        default: Some("1000, kept when the timed pass took 2 s or more"),
        help: "Record the run over time: per interval of MS milliseconds its ops, IOPS, MiB/s and latency \
               percentiles (the result's `intervals`; --csv-intervals, and a chart in `iolab report`); 0 turns them off, \
               otherwise at least 10. No thread is added: each worker closes its interval at the first completion past \
               its end" },
    Opt { key: "op-log", ty: Ty::Count, value_name: "MS", group: S, applies: All, default: None, help: "Keep the timed pass's ops for log files (what `run --fio` writes a job's write_lat_log, write_bw_log and write_iops_log from; in memory only, not in the result's JSON): 0 = every op's start, end, offset and direction, room for the run's op count reserved before it (--ops or --size; at most 256 MiB); MS = per thread and direction, the ops and their latency sum in each MS ms window. A call more per op, and a clock read per op" },
    Opt { key: "breakdown", ty: Ty::Bool { on: None, off: Some("no-breakdown") }, value_name: "", group: S,
        applies: All, default: None,
        help: "Count only totals in the counting pass, no per-syscall breakdown (faster: releasing each traced \
               syscall's tracepoint waits for an RCU grace period)" },
];

/// Options a method declares in its own folder (`#[distributed_slice(METHOD_OPTIONS)]`), listed after
/// [`OPTIONS`] in the help; their values reach the method through [`crate::spec::Spec::method_opts`].
#[linkme::distributed_slice]
pub static METHOD_OPTIONS: [Opt];

/// Every option: [`OPTIONS`], then the methods' own.
pub fn all() -> impl Iterator<Item = &'static Opt> {
    OPTIONS.iter().chain(METHOD_OPTIONS.iter())
}

/// The option with this key.
pub fn option(key: &str) -> Option<&'static Opt> {
    all().find(|o| o.key == key)
}

/// "target, method, op, ...": every accepted key, for messages.
pub fn keys() -> String {
    let v: Vec<&str> = all().map(|o| o.key).collect();
    v.join(", ")
}

/// Keys that let a run write where it would otherwise refuse to (into an existing file, onto a block
/// device): only the person at the command line may give them, as flags. A spec or suite file, perhaps
/// written by someone else, that sets one is refused, as a fio job file's is.
pub const FLAG_ONLY: [&str; 2] = ["overwrite", "allow-device-writes"];

/// Why a file may not set `key` of [`FLAG_ONLY`], and what to do instead (`instead`).
pub fn flag_only_why(key: &str, instead: &str) -> String {
    format!(
        "'{key}' is not taken from a file: a file someone gave you could write over your files or \
         devices with it; {instead}"
    )
}

/// What a user wrote: option key -> value, from a TOML file, flags, `--vary` points or code.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawSpec {
    vals: BTreeMap<&'static str, Val>,
}

impl RawSpec {
    pub fn new() -> RawSpec {
        RawSpec::default()
    }

    /// Sets `key`; an unknown key is bad input naming `flag` and the accepted keys.
    pub fn set(&mut self, key: &str, v: impl Into<Val>) -> std::result::Result<(), String> {
        let o = option(key)
            .ok_or_else(|| format!("unknown key '{key}' (accepted keys: {})", keys()))?;
        self.vals.insert(o.key, v.into());
        Ok(())
    }

    /// Sets `key` in code that names it literally (a key not in [`all`] is a bug: it panics).
    pub fn with(mut self, key: &str, v: impl Into<Val>) -> RawSpec {
        if let Err(e) = self.set(key, v) {
            panic!("internal: {e}");
        }
        self
    }

    /// The spec without `key`.
    pub fn without(mut self, key: &str) -> RawSpec {
        self.vals.remove(key);
        self
    }

    /// The value given for `key`, if any.
    pub fn get(&self, key: &str) -> Option<&Val> {
        self.vals.get(key)
    }

    /// Was `key` given?
    pub fn has(&self, key: &str) -> bool {
        self.vals.contains_key(key)
    }

    /// The keys given, in table order.
    pub fn given(&self) -> impl Iterator<Item = &'static Opt> + '_ {
        all().filter(|o| self.vals.contains_key(o.key))
    }

    /// Keys set in `over` replace those here (flags override the file); `--inflight` in `over` replaces
    /// the threads and depth here too (it sets them itself), and `--threads` or `--qd` there an
    /// `inflight` here.
    pub fn merge(mut self, over: RawSpec) -> RawSpec {
        if over.has("inflight") {
            self.vals.remove("threads");
            self.vals.remove("qd");
        }
        if over.has("threads") || over.has("qd") {
            self.vals.remove("inflight");
        }
        self.vals.extend(over.vals);
        self
    }

    /// Reads a TOML spec file; unknown keys and bad syntax are usage errors naming `--spec`, and so is a
    /// key only the command line may give ([`FLAG_ONLY`]).
    pub fn from_toml_file(path: &Path) -> Result<RawSpec> {
        let text = crate::input::read_text(path, "--spec", "spec file", crate::input::SMALL_INPUT)?;
        let raw = Self::from_toml_str(&text)
            .map_err(|msg| Error::usage("--spec", format!("{}: {msg}", path.display())))?;
        match FLAG_ONLY.iter().find(|k| raw.has(k)) {
            Some(k) => Err(Error::usage(
                "--spec",
                format!(
                    "{}: {}",
                    path.display(),
                    flag_only_why(k, &format!("give --{k} on the command line"))
                ),
            )),
            None => Ok(raw),
        }
    }

    /// Parses TOML text; the error is one line, starting with where in the text: "line 3, column 7: ".
    pub fn from_toml_str(text: &str) -> std::result::Result<RawSpec, String> {
        let table: toml::Table = toml::from_str(text).map_err(|e| {
            format!(
                "{} (a spec is TOML with keys: {})",
                toml_error(text, &e),
                keys()
            )
        })?;
        Self::from_toml_table(table)
    }

    /// The keys of a parsed TOML table (a suite step's spec).
    pub fn from_toml_table(table: toml::Table) -> std::result::Result<RawSpec, String> {
        let mut raw = RawSpec::new();
        for (k, v) in table {
            if option(&k).is_none() {
                return Err(format!("unknown key '{k}' (accepted keys: {})", keys()));
            }
            let val = match v {
                toml::Value::Boolean(b) => Val::Bool(b),
                toml::Value::Integer(i) => Val::Int(i),
                toml::Value::Float(f) => Val::Float(f),
                toml::Value::String(s) => Val::Str(s),
                other => {
                    return Err(format!(
                    "key '{k}': '{other}' is not accepted; expected a string, number or true/false"
                ))
                }
            };
            raw.set(&k, val)?;
        }
        Ok(raw)
    }

    /// `key` as on/off (unset: false).
    pub fn bool(&self, key: &str) -> Result<bool> {
        let flag = format!("--{key}");
        match self.get(key) {
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

    /// `key` as a byte count, if given.
    pub fn size(&self, key: &str) -> Result<Option<u64>> {
        let Some(v) = self.get(key) else {
            return Ok(None);
        };
        let flag = format!("--{key}");
        match v {
            Val::Int(i) if *i >= 0 => Ok(Some(*i as u64)),
            Val::Str(s) => parse_size(s).map(Some).map_err(|m| Error::usage(flag, m)),
            o => Err(Error::usage(
                flag,
                format!(
                    "'{}' is not a size; expected a byte count such as 4, 4k or 1MiB",
                    o.text()
                ),
            )),
        }
    }

    /// `key` as a whole number, if given.
    pub fn count(&self, key: &str) -> Result<Option<u64>> {
        let Some(v) = self.get(key) else {
            return Ok(None);
        };
        let flag = format!("--{key}");
        match v {
            Val::Int(i) if *i >= 0 => Ok(Some(*i as u64)),
            Val::Str(s) => parse_count(s).map(Some).map_err(|m| Error::usage(flag, m)),
            o => Err(Error::usage(
                flag,
                format!("'{}' is not a count; expected a whole number", o.text()),
            )),
        }
    }

    /// `key` as seconds, if given.
    pub fn duration(&self, key: &str) -> Result<Option<f64>> {
        let Some(v) = self.get(key) else {
            return Ok(None);
        };
        let d = match v {
            Val::Int(i) => *i as f64,
            Val::Float(f) => *f,
            Val::Str(s) => parse_duration(s).map_err(|m| Error::usage(format!("--{key}"), m))?,
            Val::Bool(_) => f64::NAN,
        };
        Ok(Some(d))
    }

    /// `key` as text, if given.
    pub fn text(&self, key: &str) -> Result<Option<String>> {
        match self.get(key) {
            None => Ok(None),
            Some(Val::Str(s)) => Ok(Some(s.clone())),
            Some(o) => Err(Error::usage(
                format!("--{key}"),
                format!("'{}' is not accepted here; expected text", o.text()),
            )),
        }
    }

    /// `key` as one of `words` (given with their values), or `default` when unset.
    pub fn word<T: Copy>(&self, key: &str, default: T, words: &[(&str, T)]) -> Result<T> {
        let Some(w) = self.text(key)? else {
            return Ok(default);
        };
        words
            .iter()
            .find(|(n, _)| *n == w)
            .map(|(_, t)| *t)
            .ok_or_else(|| {
                let names: Vec<&str> = words.iter().map(|(n, _)| *n).collect();
                let list = match names.split_last() {
                    Some((last, rest)) if !rest.is_empty() => {
                        format!("{} or {last}", rest.join(", "))
                    }
                    _ => names.join(""),
                };
                Error::usage(
                    format!("--{key}"),
                    format!("'{w}' is not accepted; expected {list}"),
                )
            })
    }

    /// A count of at least 1 (`what` says what is expected), or `default` when unset.
    pub fn count_or(&self, key: &str, default: u64, what: &str) -> Result<u64> {
        match self.count(key)? {
            None => Ok(default),
            Some(n) => nonzero(key, n, what),
        }
    }

    /// A size of at least 1 byte and at most `max`, or `default` when unset: a size beyond `max` (even
    /// beyond 64 bits) is refused naming `max` and `why` it is the limit.
    pub fn size_within(
        &self,
        key: &str,
        default: u64,
        what: &str,
        max: u64,
        why: &str,
    ) -> Result<u64> {
        let flag = format!("--{key}");
        let n = match self.get(key) {
            Some(Val::Str(s)) => parse_size_wide(s).map_err(|m| Error::usage(flag.clone(), m))?,
            _ => self.size(key)?.or(Some(default)),
        };
        match n {
            Some(n) if n <= max => nonzero(key, n, what),
            n => {
                let asked = n.map_or_else(
                    || format!("'{}'", self.get(key).map(Val::text).unwrap_or_default()),
                    |n| format!("{} ({n} bytes)", crate::units::fmt_size(n)),
                );
                Err(Error::usage(
                    flag,
                    format!(
                        "{asked} is more than the {} accepted{why}",
                        crate::units::fmt_size(max)
                    ),
                ))
            }
        }
    }

    /// A size of at least 1 byte, or `default` when unset.
    pub fn size_or(&self, key: &str, default: u64, what: &str) -> Result<u64> {
        match self.size(key)? {
            None => Ok(default),
            Some(n) => nonzero(key, n, what),
        }
    }
}

/// `n`, or a usage error for 0 saying `what` is expected.
pub fn nonzero(key: &str, n: u64, what: &str) -> Result<u64> {
    if n == 0 {
        Err(Error::usage(
            format!("--{key}"),
            format!("0 is not accepted; {what}"),
        ))
    } else {
        Ok(n)
    }
}

/// A TOML parse error of `text` as one line: "line L, column C: what" (1-based; the column counts
/// characters), or just "what" when the parser gives no place.
pub fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let msg = e.message().replace('\n', " ");
    match e.span() {
        Some(span) => {
            let mut at = span.start.min(text.len());
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let before = &text[..at];
            let line = before.matches('\n').count() + 1;
            let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
            format!("line {line}, column {col}: {msg}")
        }
        None => msg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::MethodKind;

    #[test]
    fn every_key_is_declared_once_and_methods_exist() {
        let mut keys: Vec<&str> = all().map(|o| o.key).collect();
        keys.sort_unstable();
        let n = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), n, "a key is declared twice");
        for o in all() {
            for m in o.methods() {
                assert_eq!(MethodKind::parse(m.name()), Some(m));
            }
        }
    }

    /// The help's default method is the one a spec without `method` resolves to.
    #[test]
    fn the_default_method_in_the_help_is_the_one_resolved() {
        let said = OPTIONS.iter().find(|o| o.key == "method").unwrap().default;
        let spec = RawSpec::new()
            .with("target", "/dev/null")
            .resolve()
            .unwrap();
        assert_eq!(said, Some(spec.method.name()));
    }

    #[test]
    fn unknown_keys_name_the_accepted_ones() {
        let e = RawSpec::new().set("blocksize", "4k").unwrap_err();
        assert!(
            e.starts_with("unknown key 'blocksize' (accepted keys: target, method"),
            "{e}"
        );
    }

    #[test]
    fn method_lists_read_as_words() {
        assert_eq!(
            option("batch").unwrap().method_list(),
            "io_uring, aio, uring_cmd or offload"
        );
        assert_eq!(
            option("qd").unwrap().method_list(),
            "io_uring, aio or uring_cmd"
        );
        assert_eq!(option("iovecs").unwrap().method_list(), "vectored");
    }

    #[test]
    fn toml_errors_say_line_and_column() {
        let e = RawSpec::from_toml_str("bs = \"4k\"\nqd = = 8\n").unwrap_err();
        assert!(e.starts_with("line 2, column 6: "), "{e}");
        let e = RawSpec::from_toml_str("# é\nbs = \"4k\"\nmethod = \"psync").unwrap_err();
        assert!(e.starts_with("line 3, column "), "{e}");
    }
}

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
    pub fn text(&self) -> String {
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

impl From<String> for Val {
    fn from(s: String) -> Self {
        Val::Str(s)
    }
}

impl From<i64> for Val {
    fn from(i: i64) -> Self {
        Val::Int(i)
    }
}

impl From<u64> for Val {
    fn from(i: u64) -> Self {
        Val::Int(i.min(i64::MAX as u64) as i64)
    }
}

impl From<f64> for Val {
    fn from(f: f64) -> Self {
        Val::Float(f)
    }
}

//! The values of the io_uring ring options and the offload options, each named after what it selects.

use serde::{Deserialize, Serialize};

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
    /// A forbidden system call (getppid): the seccomp filter kills the client (SIGSYS).
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
    /// Kernel path: the client lets the SQ thread idle out before every round trip (`--sq-sleep`).
    #[serde(default)]
    pub sq_sleep: bool,
    /// NOPs whose SQE user_data the client leaves unwritten (`--no-user-data`; kernel and native paths,
    /// batch 1).
    #[serde(default)]
    pub no_user_data: bool,
    /// Where the client runs: a forked process (the sandbox) or a QEMU guest (`offload/partition/`).
    #[serde(default)]
    pub partition: Partition,
}

/// Where the offload client runs (`--offload-partition`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Partition {
    /// A process forked by iolab, in seccomp strict mode.
    #[default]
    Process,
    /// A QEMU guest that sees the shared region as an ivshmem-plain PCI device.
    Vm,
}

impl Partition {
    pub fn name(self) -> &'static str {
        match self {
            Partition::Process => "process",
            Partition::Vm => "vm",
        }
    }
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
    /// IORING_SETUP_NO_SQARRAY (6.6+): the kernel takes SQEs in ring order, no index array between.
    #[serde(default)]
    pub no_sqarray: bool,
    /// The flags `--ring-setup recommended` (the default) added to those asked for, by kernel name: the
    /// ring drops them one by one where the kernel refuses them (empty with `--ring-setup plain`).
    #[serde(default)]
    pub recommended: Vec<String>,
    /// `--min-wait`: when waiting for completions, wait this many µs for `wait_nr` of them, then take
    /// any (IORING_ENTER_EXT_ARG's min_wait_usec, 6.12+); 0: wait for what the loop needs.
    #[serde(default)]
    pub min_wait_usec: u32,
    /// With `--min-wait`: how many completions a wait asks for (the run's --batch).
    #[serde(default)]
    pub wait_nr: u32,
    /// `--wait-region`: the wait's arguments in a region registered once (IORING_REGISTER_MEM_REGION,
    /// 6.13+) instead of copied from user memory at every io_uring_enter.
    #[serde(default)]
    pub wait_region: bool,
    /// READV/WRITEV (one iovec) instead of READ/WRITE.
    pub vectored: bool,
    /// IORING_OP_SEND_ZC (6.0+) on a socket target: zero-copy sends, each finished by a notification.
    #[serde(default)]
    pub send_zc: bool,
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

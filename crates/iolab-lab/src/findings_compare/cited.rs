//! The figures of a row that are fields of its record, named by their paths in it (`Row::cited` takes
//! them with a cite: [`crate::cite`]).

/// A figure of a row that is one field of its record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fig {
    /// Wall-clock nanoseconds per op.
    NsPerOp,
    /// Ops per second.
    Iops,
    MibS,
    /// The mean latency of an op.
    LatMeanNs,
    /// The process's user and system CPU seconds.
    UserS,
    SysS,
    Ops,
    Bytes,
    /// The timed span, seconds.
    WallS,
    /// io_uring: requests per submission (iolab's count).
    MeanBatch,
    /// The kernel's count of system calls per op (raw_syscalls:sys_enter, clock reads apart).
    SyscallsPerOp,
    /// The share of io_uring's requests the kernel punted to io-wq.
    Punted,
    /// pwritev2/preadv2 RWF_NOWAIT: the share of ops that would have blocked.
    WouldBlock,
    /// Offload: the server threads' share of the CPU.
    ServiceCpuShare,
    /// CPU seconds of the kernel's SQPOLL threads over the run.
    SqpollCpuS,
    /// The SQPOLL threads' CPUs kept busy over the span they were read across.
    SqpollCpuShare,
    /// CPU seconds of the kernel's io-wq workers over the run, and of iolab's worker threads.
    IowqCpuS,
    WorkerCpuS,
    /// The process's CPU (user + system, all threads) per op, ns.
    CpuNsPerOp,
    /// Context switches (the kernel's count) per op.
    CtxSwitchesPerOp,
    /// Page faults (minor + major) per MiB moved.
    PageFaultsPerMib,
    /// read/write system calls per op (the kernel's count).
    RwCallsPerOp,
    /// The spec's block size (bytes), queue depth, batch and threads.
    Bs,
    Qd,
    Batch,
    Threads,
    /// io_uring: requests in flight on average, all rings together.
    Inflight,
    /// The method's own system calls per op (iolab's count).
    CallsPerOp,
    /// Time per op in TSC cycles (where iolab's clock is the TSC).
    CyclesPerOp,
    /// Bytes the device gave over the timed span (the disk's own count).
    DeviceReadBytes,
    /// Bytes the storage layer fetched for the process (/proc/self/io: where no disk counted them).
    ProcReadBytes,
    /// Bytes the device wrote over the timed span.
    DeviceWrittenBytes,
    /// Seconds of --fsync/--msync flushes inside the timed span.
    FlushS,
    /// The busiest CPU's kernel share over the timed span (0-1).
    BusiestCore,
}

impl Fig {
    /// The field's dot path in a record.
    pub fn field(self) -> &'static str {
        match self {
            Fig::NsPerOp => "result.ns_per_op",
            Fig::Iops => "result.iops",
            Fig::MibS => "result.mib_s",
            Fig::LatMeanNs => "result.latency.mean_ns",
            Fig::UserS => "result.cpu.process.user_s",
            Fig::SysS => "result.cpu.process.sys_s",
            Fig::Ops => "result.ops",
            Fig::Bytes => "result.bytes",
            Fig::WallS => "result.wall_s",
            Fig::MeanBatch => "result.uring.mean_batch",
            Fig::SyscallsPerOp => "result.derived.syscalls_per_op",
            Fig::Punted => "result.derived.punted_fraction",
            Fig::WouldBlock => "result.nowait.would_block_share",
            Fig::ServiceCpuShare => "result.offload.service_cpu_share",
            Fig::SqpollCpuS => "result.derived.sqpoll_cpu_s",
            Fig::SqpollCpuShare => "result.derived.sqpoll_cpu_share",
            Fig::IowqCpuS => "result.derived.iowq_cpu_s",
            Fig::WorkerCpuS => "result.derived.worker_cpu_s",
            Fig::CpuNsPerOp => "result.derived.cpu_ns_per_op",
            Fig::CtxSwitchesPerOp => "result.derived.ctx_switches_per_op",
            Fig::PageFaultsPerMib => "result.derived.page_faults_per_mib",
            Fig::RwCallsPerOp => "result.syscalls.kernel_rw_per_op",
            Fig::Bs => "result.spec.bs",
            Fig::Qd => "result.spec.qd",
            Fig::Batch => "result.spec.batch",
            Fig::Threads => "result.spec.threads",
            Fig::Inflight => "result.uring.mean_inflight_all_rings",
            Fig::CallsPerOp => "result.syscalls.method_per_op",
            Fig::CyclesPerOp => "result.derived.cycles_per_op",
            Fig::DeviceReadBytes => "result.device_io.read_bytes",
            Fig::ProcReadBytes => "result.syscalls.kernel_rw.read_bytes",
            Fig::DeviceWrittenBytes => "result.device_io.written_bytes",
            Fig::FlushS => "result.flushes.total_s",
            Fig::BusiestCore => "result.cpu.system_wide.busiest_kernel_share",
        }
    }
}

//! What a method is and needs, besides its code: the registry entry's data (`MethodInfo`), declared once
//! in the method's file.

pub use crate::spec::method_kind::{Exec, Fit, MethodKind};
use crate::spec::options::Applies;
use crate::spec::Spec;

/// What every method but uring_cmd answers an NVMe generic device (it has no read or write).
pub const NVME_COMMANDS_ONLY: Fit = Fit::OtherTarget(
    "cannot use {t}, an NVMe generic device: it takes NVMe commands only (--method uring_cmd); use the \
     namespace's block device (/dev/nvmeXnY) for the other methods",
);

/// The kinds of target a method can work on.
#[derive(Debug, Clone, Copy)]
pub struct Targets {
    pub file: Fit,
    pub block_device: Fit,
    pub dev_null: Fit,
    pub dev_zero: Fit,
    /// Pipes and sockets (no offsets, no mapping).
    pub stream: Fit,
    /// iolab's sink driver, /dev/iolab_sink (`kmod/`).
    pub sink: Fit,
    /// The sink driver's legacy personality (`--sink legacy`: `.write`/`.read` only, no
    /// `write_iter`/`read_iter`).
    pub sink_legacy: Fit,
    /// An NVMe namespace's generic device (/dev/ngXnY), which takes NVMe commands only.
    pub nvme_generic: Fit,
}

impl Targets {
    /// Files, devices and streams.
    pub const ANY: Targets = Targets {
        file: Fit::Yes,
        block_device: Fit::Yes,
        dev_null: Fit::Yes,
        dev_zero: Fit::Yes,
        stream: Fit::Yes,
        sink: Fit::Yes,
        sink_legacy: Fit::Yes,
        nvme_generic: NVME_COMMANDS_ONLY,
    };
    /// Whatever has file offsets: everything but streams, which refuse positioned I/O with ESPIPE.
    pub const fn with_offsets(why: &'static str) -> Targets {
        Targets {
            stream: Fit::No(why),
            ..Targets::ANY
        }
    }

    /// How this method fits a target kind.
    pub fn fit(&self, kind: crate::target_kind::TargetKind) -> Fit {
        use crate::target_kind::TargetKind as K;
        match kind {
            K::File => self.file,
            K::BlockDevice => self.block_device,
            K::DevNull => self.dev_null,
            K::DevZero => self.dev_zero,
            K::Pipe | K::Socketpair | K::Tcp => self.stream,
            K::Sink => self.sink,
            K::NvmeGeneric => self.nvme_generic,
        }
    }
}

/// What the sink driver should count of a run's ops (checked against its counters after each pass).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SinkCalls {
    /// One `.write`/`.read` call per op, and the op's bytes.
    PerOp,
    /// One call per iovec on the legacy personality (the kernel calls `.write` once per iovec), one per op
    /// on nowait.
    PerIovecOnLegacy,
    /// One call per io_uring request (the ring's request count, else one per op).
    PerRequest,
    /// One `uring_cmd` call per op, and its bytes.
    UringCmd,
    /// No `.write`/`.read` calls: one mmap per thread.
    Mapped,
    /// The bytes only: how many calls is the C library's choice (stdio).
    BytesOnly,
    /// Nothing: no data moves.
    Nothing,
}

/// Everything iolab needs to know about a method besides its code: declared once, in the method's file.
#[derive(Debug)]
pub struct MethodInfo {
    pub kind: MethodKind,
    /// The `--method` word.
    pub name: &'static str,
    /// fio's name for the same engine (`ioengine=`), where fio has one: job files map to the method by it
    /// and `--fio-json` names the method so.
    pub fio_engine: Option<&'static str>,
    /// One line for `--method`'s help: what one op is.
    pub help: &'static str,
    pub exec: Exec,
    /// Data moves kernel-side from a source file iolab fills (no user-space buffer; writes only).
    pub kernel_copy: bool,
    /// Moves no data at all (nop): nothing to verify, flush or write.
    pub no_data: bool,
    /// Maps the target (a shared writable mapping needs O_RDWR, and /dev/null cannot be mapped).
    pub maps: bool,
    /// Copies through a user-space buffer of its own (stdio): the kernel sees fewer, larger calls.
    pub user_buffered: bool,
    pub targets: Targets,
    /// `Some(why not)` when O_DIRECT cannot apply.
    pub no_direct: Option<&'static str>,
    /// `Some(why not)` when the method only writes.
    pub no_read: Option<&'static str>,
    /// Checks what a read run read as it arrives (the offload client, NVMe passthrough); the others'
    /// read runs with `--verify` read their blocks again after the run.
    pub verifies_reads: bool,
    /// Reads or writes per op (`Io::write`), so it can run `--op mixed`.
    pub mixed: bool,
    /// Takes each op's length as it comes (`Io::len`, not the run's `--bs`), so it can run `--bs-split`.
    pub drawn_lengths: bool,
    /// The one system call each write and read op makes, where there is exactly one (the kernel's count
    /// of it is cross-checked against the ops).
    pub per_op_call: Option<(&'static str, &'static str)>,
    /// Makes io_uring requests: the io_uring tracepoints are counted.
    pub io_uring_requests: bool,
    /// The system calls its ops make (tracepoint names: "pwrite64"), counted one by one in the
    /// per-syscall breakdown with the runner's own (`measure::counters::RUNNER_CALLS`).
    pub syscalls: &'static [&'static str],
    /// How to read its syscall figures: which calls it makes per op and what the kernel's counters see.
    pub syscall_note: &'static str,
    /// The run's options worth a word in a table's header ("qd 32 batch 8"), if any.
    pub describe: fn(&Spec) -> Option<String>,
    /// How findings name its way of doing the work ("write()", "io_uring (SQPOLL, qd 64 batch 1)").
    pub way: fn(&MethodInfo, &Spec) -> String,
    /// One plain system call per op on the file position or an offset (write/read, pwrite/pread): the
    /// reference every other way on the same workload is compared with.
    pub plain: bool,
    /// Its requests may be punted to io-wq worker threads (io_uring's reads and writes; `uring_cmd`
    /// completes each command at issue).
    pub punts: bool,
    /// What the sink driver should count of its ops.
    pub sink_calls: SinkCalls,
    /// What the gap between the starts of successive ops of one thread measures for it, for the suites'
    /// legends (`one`: one request in flight at a time; `sqpoll`: a kernel thread submits).
    pub gap: fn(&MethodInfo, one: bool, sqpoll: bool) -> String,
    /// The options beyond everyone's that it takes: the option table's `applies` names one of these.
    pub options: &'static [Applies],
}

fn no_options(_: &Spec) -> Option<String> {
    None
}

/// Its name, with the options its `describe` names: "io_uring (qd 32 batch 8)".
pub fn named_way(m: &MethodInfo, s: &Spec) -> String {
    match (m.describe)(s) {
        Some(d) => format!("{} ({d})", m.name),
        None => m.name.to_string(),
    }
}

/// The gap of a method that makes one call after the other.
pub fn gap_one_call_after_another(m: &MethodInfo, _one: bool, _sqpoll: bool) -> String {
    format!(
        "{}: one call after the other, so a gap is one whole call (entering the kernel, the write, returning) \
         plus iolab's few ns between calls; its p50 is the typical call",
        m.name
    )
}

/// No sentence: the method's file says nothing of its gap.
fn gap_unsaid(_: &MethodInfo, _one: bool, _sqpoll: bool) -> String {
    String::new()
}

impl MethodInfo {
    /// What most methods share: synchronous, any target, no special cases. Every `INFO` sets `kind`,
    /// `name`, `help` and `syscall_note` itself and takes the rest from here (`..MethodInfo::PLAIN`).
    pub const PLAIN: MethodInfo = MethodInfo {
        kind: MethodKind::Nop,
        name: "",
        fio_engine: None,
        help: "",
        exec: Exec::Sync,
        kernel_copy: false,
        no_data: false,
        maps: false,
        user_buffered: false,
        targets: Targets::ANY,
        no_direct: None,
        no_read: None,
        verifies_reads: false,
        mixed: false,
        drawn_lengths: false,
        per_op_call: None,
        io_uring_requests: false,
        syscalls: &[],
        syscall_note: "",
        describe: no_options,
        way: named_way,
        plain: false,
        punts: false,
        sink_calls: SinkCalls::PerOp,
        gap: gap_unsaid,
        options: &[],
    };

    pub fn synchronous(&self) -> bool {
        self.exec == Exec::Sync
    }

    /// Does option group `a` apply to it?
    pub fn takes(&self, a: Applies) -> bool {
        a == Applies::All || self.options.contains(&a)
    }

    /// The syscalls a run of this method's breakdown names: its own, then the runner's.
    pub fn breakdown(&self) -> Vec<&'static str> {
        let mut v: Vec<&'static str> = self.syscalls.to_vec();
        for c in crate::measure::counters::RUNNER_CALLS {
            if !v.contains(&c) {
                v.push(c);
            }
        }
        v
    }
}

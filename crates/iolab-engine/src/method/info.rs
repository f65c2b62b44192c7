//! What a method is and needs, besides its code: the registry entry's data (`MethodInfo`), declared once
//! in the method's file.

use super::kind::MethodKind;
use crate::spec::Spec;

/// How a method's operations are carried out, which decides the runner's loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exec {
    /// Every operation completes inside `submit` (a system call, a copy, or nothing).
    Sync,
    /// Operations are queued and completed later (`--qd`, `--batch`): `commit` and `reap`.
    Queued,
    /// A client process of its own does the operations, timed from outside (offload).
    OutOfProcess,
}

/// Whether a method takes a kind of target; `No` carries the reason, which names the kernel's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    Yes,
    /// Refused: the kernel cannot do it (`{t}` in the text stands for the target's name).
    No(&'static str),
    /// Not what this method is for (epoll on a file): refused too, and left out of the survey.
    Never(&'static str),
    /// As `Never`, but the remedy is another target: the refusal names `--target`.
    OtherTarget(&'static str),
}

impl Fit {
    pub fn ok(self) -> bool {
        self == Fit::Yes
    }
}

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
    };
    /// Whatever has file offsets: everything but streams, which refuse positioned I/O with ESPIPE.
    pub const fn with_offsets(why: &'static str) -> Targets {
        Targets {
            stream: Fit::No(why),
            ..Targets::ANY
        }
    }

    /// How this method fits a target kind.
    pub fn fit(&self, kind: crate::target::kind::TargetKind) -> Fit {
        use crate::target::kind::TargetKind as K;
        match kind {
            K::File => self.file,
            K::BlockDevice => self.block_device,
            K::DevNull => self.dev_null,
            K::DevZero => self.dev_zero,
            K::Pipe | K::Socketpair | K::Tcp => self.stream,
            K::Sink => self.sink,
        }
    }
}

/// Everything iolab needs to know about a method besides its code: declared once, in the method's file.
#[derive(Debug)]
pub struct MethodInfo {
    pub kind: MethodKind,
    /// The `--method` word.
    pub name: &'static str,
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
    /// Checks what a read run read (the offload client checks each block as it arrives).
    pub verifies_reads: bool,
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
}

fn no_options(_: &Spec) -> Option<String> {
    None
}

impl MethodInfo {
    /// What most methods share: synchronous, any target, no special cases. Every `INFO` sets `kind`,
    /// `name`, `help` and `syscall_note` itself and takes the rest from here (`..MethodInfo::PLAIN`).
    pub const PLAIN: MethodInfo = MethodInfo {
        kind: MethodKind::Nop,
        name: "",
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
        per_op_call: None,
        io_uring_requests: false,
        syscalls: &[],
        syscall_note: "",
        describe: no_options,
    };

    pub fn synchronous(&self) -> bool {
        self.exec == Exec::Sync
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

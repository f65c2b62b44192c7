//! I/O methods: one file per mechanism behind one small trait, like fio's `ioengine_ops`.
//!
//! A method declares a [`MethodInfo`] (what it targets, how it runs, what it calls) and implements `prepare` (open, map, set up rings), `submit` (perform one
//! operation, or queue it for asynchronous methods), `commit`/`reap` (asynchronous methods: pass queued
//! requests to the kernel, collect completions), `flush` (`--fsync`/`--msync` points) and `finish`.
//! Cleanup is `Drop`. The runner owns timing, accounting, the workload loop, buffers and verification: a
//! method never reads the clock. Adding a method is one file (its `INFO` and its `Method` impl), one
//! variant in [`MethodKind`] and one line in [`METHODS`], its options in the option table (`spec/options.rs`),
//! and its tests.

pub mod aio;
pub mod epoll;
pub mod io_uring;
pub mod kcopy;
pub mod mmap;
pub mod nop;
pub mod offload;
pub mod psync;
pub mod pv2;
pub mod stdio;
pub mod sync;
pub mod uring_cmd;
pub mod vectored;

use crate::error::{Error, Result};
use crate::spec::{OpKind, Spec};
use crate::target::PreparedTarget;
use iolab_sys::SysErr;
use serde::{Deserialize, Serialize};

/// How data moves between user space and the kernel: the name of a method. Everything else about a
/// method is in its [`MethodInfo`], declared in the method's own file and listed in [`METHODS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum MethodKind {
    Nop,
    Sync,
    Psync,
    Pv2,
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
    UringCmd,
}

/// Every method, in the order tables and the survey list them: the registry. Adding a method is one file
/// that declares its `INFO`, one variant in [`MethodKind`] and one line here.
pub static METHODS: &[&MethodInfo] = &[
    &sync::INFO,
    &psync::INFO,
    &pv2::INFO,
    &vectored::INFO,
    &stdio::INFO,
    &mmap::INFO,
    &io_uring::INFO,
    &uring_cmd::INFO,
    &aio::INFO,
    &kcopy::SPLICE_INFO,
    &kcopy::SENDFILE_INFO,
    &kcopy::COPY_FILE_RANGE_INFO,
    &epoll::INFO,
    &offload::INFO,
    &nop::INFO,
];

impl MethodKind {
    /// What the method is and needs, from its file.
    pub fn info(self) -> &'static MethodInfo {
        METHODS
            .iter()
            .find(|m| m.kind == self)
            .expect("every MethodKind has an entry in METHODS (tested)")
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The method a `--method` word names (case-insensitive; `-` may stand for `_`).
    pub fn parse(s: &str) -> Option<MethodKind> {
        let s = s.trim().to_ascii_lowercase().replace('-', "_");
        METHODS.iter().find(|m| m.name == s).map(|m| m.kind)
    }

    /// Every method, in registry order.
    pub fn all() -> impl Iterator<Item = MethodKind> {
        METHODS.iter().map(|m| m.kind)
    }

    /// "sync, psync, ...", for messages.
    pub fn names() -> String {
        let v: Vec<&str> = METHODS.iter().map(|m| m.name).collect();
        v.join(", ")
    }

    /// Kernel-side copies: data moves from a source file without a user-space buffer.
    pub fn is_kernel_copy(self) -> bool {
        self.info().kernel_copy
    }
}

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
    pub fn fit(&self, kind: crate::target::TargetKind) -> Fit {
        use crate::target::TargetKind as K;
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
    /// How the runner runs it.
    pub run: Run,
}

/// How the runner drives a method.
#[derive(Clone, Copy)]
pub enum Run {
    /// In iolab's worker threads through the [`Method`] trait (made by [`Run::threads`]): `drive` runs a
    /// workload of `--bs` blocks, `content` writes given bytes (the decimal-lines workload).
    Threads {
        drive: crate::runner::Drive,
        content: crate::runner::ContentDrive,
        /// The method's [`Method::QUEUED`], which its `exec` must agree with.
        queued: bool,
    },
    /// A process of its own, timed from outside, assembling its own figures.
    Process(fn(&Spec, &crate::measure::clock::ClockInfo) -> Result<crate::result::RunResult>),
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Run::Threads { .. } => "Threads",
            Run::Process(_) => "Process",
        })
    }
}

impl Run {
    /// The runner's entries for method `M`: what a method's `INFO` names.
    pub const fn threads<M: Method>() -> Run {
        Run::Threads {
            drive: crate::runner::drive::<M>,
            content: crate::runner::write_content::<M>,
            queued: M::QUEUED,
        }
    }
}

fn no_options(_: &Spec) -> Option<String> {
    None
}

fn not_set(_: &Spec, _: &crate::measure::clock::ClockInfo) -> Result<crate::result::RunResult> {
    Err(Error::Runtime(
        "internal: this method's INFO sets no runner".into(),
    ))
}

impl MethodInfo {
    /// What most methods share: synchronous, any target, no special cases. Every `INFO` sets `kind`,
    /// `name`, `help`, `syscall_note` and `run` itself and takes the rest from here (`..MethodInfo::PLAIN`).
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
        run: Run::Process(not_set),
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

/// A method's own figures of one thread (see [`Method::stats`]); each is `None` for the methods that
/// have no such figure.
#[derive(Debug, Clone, Default)]
pub struct MethodStats {
    pub uring: Option<crate::result::UringStats>,
    pub aio: Option<crate::result::AioStats>,
    pub nowait: Option<crate::result::NowaitStats>,
}

/// fsync(2) of `fd`, counted in `calls`, with errors naming `path`.
pub(crate) fn fsync_counted(
    calls: &mut u64,
    fd: std::os::fd::RawFd,
    path: &std::path::Path,
) -> Result<()> {
    *calls += 1;
    iolab_sys::fsync(fd).map_err(|e| op_err(e, path))
}

/// One operation handed to a method. `buf` points to `len` bytes owned by the runner, valid (and not
/// reused) until the operation completes: for synchronous methods until `submit` returns, for asynchronous
/// ones until `reap` reports the operation's `slot`.
#[derive(Debug, Clone, Copy)]
pub struct Io {
    pub slot: u32,
    pub offset: u64,
    pub buf: *mut u8,
    pub len: usize,
}

impl Io {
    /// The buffer as a slice.
    ///
    /// # Safety
    /// `buf` must point to `len` bytes that nothing else accesses while the slice lives (the runner's
    /// contract above).
    #[inline(always)]
    pub unsafe fn bytes<'a>(&self) -> &'a [u8] {
        // SAFETY: the caller upholds the runner's contract stated above.
        unsafe { std::slice::from_raw_parts(self.buf, self.len) }
    }

    /// The buffer as a mutable slice.
    ///
    /// # Safety
    /// As for [`Io::bytes`], and nothing else may hold a reference into the buffer.
    #[inline(always)]
    pub unsafe fn bytes_mut<'a>(&self) -> &'a mut [u8] {
        // SAFETY: the caller upholds the runner's contract stated above.
        unsafe { std::slice::from_raw_parts_mut(self.buf, self.len) }
    }
}

/// Which flush the runner asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flush {
    /// fsync(2) of the file.
    Fsync,
    /// msync(2) of the mapping (mmap only).
    Msync,
}

/// What a method is given to prepare one thread's work.
pub struct ThreadCtx<'a> {
    pub spec: &'a Spec,
    pub target: &'a PreparedTarget,
    pub thread: u32,
    /// Absolute byte offset of this thread's region and its length.
    pub region_offset: u64,
    pub region_len: u64,
    /// State the threads of one run share (io_uring --ring shared/shared-submitter), made by the first
    /// thread that asks.
    pub shared: &'a SharedSlot,
    /// The bytes the ops write, when they are given rather than iolab's pattern (the decimal-lines
    /// workload): a kernel copy fills its source with them.
    pub content: Option<&'a [u8]>,
}

/// One value shared by the method instances of one run (each pass of a run gets a fresh slot).
#[derive(Default)]
pub struct SharedSlot(std::sync::Mutex<Option<std::sync::Arc<dyn std::any::Any + Send + Sync>>>);

impl SharedSlot {
    /// The shared value, made by `make` if no thread has made it yet (a failed `make` leaves the slot
    /// empty, so the next thread tries again and reports the same error).
    pub fn get_or_init<T: std::any::Any + Send + Sync>(
        &self,
        make: impl FnOnce() -> Result<T>,
    ) -> Result<std::sync::Arc<T>> {
        let mut g = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(a) = g.as_ref() {
            return a.clone().downcast::<T>().map_err(|_| {
                Error::Runtime("internal: shared method state of another type".into())
            });
        }
        let a = std::sync::Arc::new(make()?);
        *g = Some(a.clone());
        Ok(a)
    }

    /// Drops the slot's hold on the shared value (it goes when the last instance using it goes).
    pub fn clear(&self) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

impl ThreadCtx<'_> {
    pub fn writes(&self) -> bool {
        self.spec.op == OpKind::Write
    }

    /// /dev/null and /dev/zero ignore file offsets, so positional bookkeeping is skipped there.
    pub fn positionless(&self) -> bool {
        !self.target.kind.keeps_data()
    }
}

pub trait Method: Sized + Send {
    /// Its ops are queued and completed later (`Exec::Queued` in its `INFO`; a unit test checks the two
    /// agree). A constant, so that the runner compiles only the loop a method runs: the synchronous
    /// loops (and their `--clock-every` variant) for a synchronous method, the asynchronous one for a
    /// queued method, not both for each (a smaller binary for the boards).
    const QUEUED: bool = false;
    fn prepare(ctx: &ThreadCtx) -> Result<Self>;
    /// Synchronous methods: perform `io` and return the bytes moved. Asynchronous: queue it (return 0).
    fn submit(&mut self, io: &Io) -> Result<usize>;
    /// Asynchronous methods: queue the requests of one submission round, in order. Returns how many were
    /// queued and, if one failed, its error (the requests after it were not queued).
    #[inline(always)]
    fn submit_round(&mut self, ios: &[Io]) -> (usize, Result<()>) {
        for (i, io) in ios.iter().enumerate() {
            if let Err(e) = self.submit(io) {
                return (i, Err(e));
            }
        }
        (ios.len(), Ok(()))
    }
    /// Asynchronous methods: hand queued requests to the kernel and wait for `min_complete` completions.
    fn commit(&mut self, _min_complete: u32) -> Result<()> {
        Ok(())
    }
    /// Asynchronous methods: requests queued by `submit` that the kernel has not taken yet (after a failed
    /// `commit`, the runner counts the others as in flight, whose buffers must outlive them).
    fn unsubmitted(&self) -> u32 {
        0
    }
    /// The completion result that means success for an op of `len` bytes (io_uring NOPs complete with 0).
    fn expected_result(&self, len: usize) -> i32 {
        len as i32
    }
    /// Called once with the runner's op buffers (slot order) after `prepare` (io_uring --fixed-bufs
    /// registers them). The buffers outlive the method.
    fn register_buffers(&mut self, _bufs: &[(*mut u8, usize)]) -> Result<()> {
        Ok(())
    }
    /// A message for a failed completion with this errno, when the method knows better than the errno
    /// (io_uring --iopoll: EOPNOTSUPP means the device has no poll queues).
    fn describe_failure(&self, _errno: i32) -> Option<String> {
        None
    }
    /// Figures only some methods have (ring batches, AIO inline completions, RWF_NOWAIT refusals), read
    /// once after the thread's last op; the runner merges them over threads.
    fn stats(&self) -> MethodStats {
        MethodStats::default()
    }
    /// Asynchronous methods: report each available completion as (slot, result: bytes or -errno);
    /// returns how many were reported (the runner's in-flight count relies on it).
    fn reap<F: FnMut(u32, i32)>(&mut self, _f: F) -> u32 {
        0
    }
    /// Flush at an `--fsync`/`--msync` point (asynchronous methods are drained first by the runner).
    fn flush(&mut self, what: Flush) -> Result<()>;
    /// Called once after the last operation, inside the timed span (stdio flushes its buffer here).
    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
    /// System calls this method made over `ops` completed ops, where it knows (stdio does not: glibc
    /// decides). Methods with one syscall per op compute it from `ops` rather than counting in the hot loop.
    fn syscalls(&self, ops: u64) -> Option<u64>;
    /// Kernel submissions (io_uring_enter calls) and requests in them, for asynchronous methods.
    fn submissions(&self) -> Option<(u64, u64)> {
        None
    }
}

/// A pipe or socket may move fewer bytes than asked (it takes what fits, or gives what has arrived).
/// Finishes `io` from byte `done` with plain write(2)/read(2) calls, each counted in `calls`; stops early
/// only at end of stream (the runner then reports the short transfer).
pub(crate) fn finish_stream_io(
    fd: std::os::fd::RawFd,
    write: bool,
    io: &Io,
    mut done: usize,
    calls: &mut u64,
    path: &std::path::Path,
) -> Result<usize> {
    while done < io.len {
        *calls += 1;
        let r = if write {
            // SAFETY: the runner's Io contract: `buf` holds `len` bytes nothing else touches during the call.
            iolab_sys::write(fd, &unsafe { io.bytes() }[done..])
        } else {
            // SAFETY: as above.
            iolab_sys::read(fd, &mut unsafe { io.bytes_mut() }[done..])
        };
        match r {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.errno == libc::EINTR => continue,
            Err(e) => return Err(op_err(e, path)),
        }
    }
    Ok(done)
}

/// A syscall error during an op, with the target named.
pub(crate) fn op_err(e: SysErr, ctx_path: &std::path::Path) -> Error {
    Error::sys_on(e, ctx_path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The runner picks a method's loop by `Method::QUEUED` and sizes its slots by `exec`: the two agree.
    #[test]
    fn every_threaded_method_is_queued_exactly_when_its_exec_says_so() {
        let mut threaded = 0;
        for k in MethodKind::all() {
            let info = k.info();
            if let Run::Threads { queued, .. } = info.run {
                threaded += 1;
                assert_eq!(queued, info.exec == Exec::Queued, "--method {}", info.name);
            }
        }
        assert!(threaded > 10, "{threaded} methods run in threads");
    }
}

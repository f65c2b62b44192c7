//! The trait every method implements (like fio's `ioengine_ops`), what a method is given (`ThreadCtx`,
//! `Io`) and the helpers methods share. The runner owns timing, accounting, the workload loop, buffers and
//! verification: a method never reads the clock.

use crate::error::{Error, Result};
use crate::spec::{OpKind, Spec};
use crate::target::PreparedTarget;
use iolab_sys::SysErr;

/// A method's own figures of one thread (see [`Method::stats`]); each is `None` for the methods that
/// have no such figure.
#[derive(Debug, Clone, Default)]
pub struct MethodStats {
    pub uring: Option<crate::result::UringStats>,
    pub aio: Option<crate::result::AioStats>,
    pub nowait: Option<crate::result::NowaitStats>,
    /// `--verify` of a read run, where the method checks each block it read (uring_cmd on NVMe).
    pub read_check: Option<crate::result::VerifyFigures>,
    /// Figures of the method's own (an option of its own at work), by name: see `spec::method_opts`.
    pub figures: Vec<crate::spec::Figure>,
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
    /// The op writes (every op of a write run; drawn per op for `--op mixed`, which only methods whose
    /// registry entry says `mixed` run).
    pub write: bool,
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
    /// The runner gives its plain runs (a clock read per op, no per-op record, no pace) a loop of their
    /// own, whose state stays in registers: for the one-call-per-op methods whose harness cost is measured
    /// against bare loops (psync, sync). A constant, so that the other methods compile no second loop (a
    /// smaller binary for the boards).
    const LEAN: bool = false;
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
    /// Asynchronous methods: report available completions, at most `max` (the others stay for the next
    /// reap; a stream target reports all it has), as (slot, result: bytes or -errno); returns how many
    /// were reported (the runner's in-flight count relies on it).
    fn reap<F: FnMut(u32, i32)>(&mut self, _max: u32, _f: F) -> u32 {
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

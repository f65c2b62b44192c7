//! Writing given bytes instead of a workload of blocks: the decimal-lines workload (lines.rs) hands the
//! runner its rendered text and how to cut it into ops (a line each, or the whole text as one), and any
//! method of the registry writes it through its own [`Method`] code, timed with the runner's clock.
//!
//! One thread, ops in order. A synchronous method does one op per `submit` (more where the kernel took
//! part of it); a queued one (io_uring) keeps up to `--qd` ops in flight, `--batch` per submission. Then
//! `finish`, msync for a mapping and fsync (unless the content says not to): the timed span ends when fsync
//! returns, and the writes and the flush are timed apart. Setting the method up
//! (open, mapping, ring, a kernel copy's source) happens before the timer starts, and tearing it down
//! (close, munmap, the ring, removing a kernel copy's source) after it stops.

use crate::error::{Error, Result};
#[cfg(test)]
use crate::measure::clock::MockClock;
use crate::measure::clock::{Clock, ClockInfo, ClockKind, CounterClock, MonoClock};
use crate::measure::cpu::{ProcIo, Rusage, RusageDelta};
use crate::method::api::{Flush, Io, Method, SharedSlot, ThreadCtx};
use crate::spec::Spec;
use crate::target::PreparedTarget;

/// The bytes to write and the ops that write them: (offset, length) each, in order, covering `bytes`.
pub struct Content<'a> {
    pub bytes: &'a [u8],
    pub ops: &'a [(u64, u32)],
    /// Flush to the device at the end (msync for a mapping, then fsync), inside the timed span; false:
    /// the span ends when the last write (and stdio's fflush) returned, as the note's user program did.
    pub fsync: bool,
}

/// What writing the content took.
#[derive(Debug, Clone)]
pub struct ContentTiming {
    /// From just before the first op to after fsync returned (or the last write, without fsync), in
    /// seconds.
    pub wall_s: f64,
    /// From just before the first op until the last write (and stdio's fflush) returned.
    pub write_s: f64,
    /// msync and fsync, when the content was flushed.
    pub fsync_s: Option<f64>,
    /// The process's CPU over the same span.
    pub cpu: RusageDelta,
    /// System calls the method counted (None where it cannot know: stdio).
    pub syscalls: Option<u64>,
    /// Write-family system calls the kernel counted over the span (/proc/self/io syscw).
    pub write_calls: Option<u64>,
}

/// How a method's file names its content writer (`Run::threads::<M>()` makes it).
pub type ContentDrive = fn(&Spec, &PreparedTarget, &ClockInfo, &Content) -> Result<ContentTiming>;

/// Writes `content` into the prepared target by method `M`, with the clock the calibration chose.
pub fn write_content<M: Method>(
    spec: &Spec,
    target: &PreparedTarget,
    clock: &ClockInfo,
    content: &Content,
) -> Result<ContentTiming> {
    match clock.kind {
        ClockKind::Tsc | ClockKind::Cntvct => {
            timed::<M, CounterClock>(spec, target, clock, &CounterClock, content)
        }
        ClockKind::Monotonic => timed::<M, MonoClock>(spec, target, clock, &MonoClock, content),
        #[cfg(test)]
        ClockKind::Mock => {
            timed::<M, MockClock>(spec, target, clock, &MockClock::new(100), content)
        }
        #[cfg(not(test))]
        ClockKind::Mock => Err(super::threads::mock_outside_tests()),
    }
}

fn timed<M: Method, C: Clock>(
    spec: &Spec,
    target: &PreparedTarget,
    clock: &ClockInfo,
    clk: &C,
    content: &Content,
) -> Result<ContentTiming> {
    let shared = SharedSlot::default();
    let ctx = ThreadCtx {
        spec,
        target,
        thread: 0,
        region_offset: spec.offset,
        region_len: content.bytes.len() as u64,
        shared: &shared,
        content: Some(content.bytes),
    };
    let mut m = M::prepare(&ctx)?;
    let maps = spec.method.info().maps;
    // /proc/self/io is read last before the span and first after it (its own read is a read, not a write).
    let io0 = ProcIo::read_self();
    let ru0 = Rusage::process();
    let t0 = clk.now();
    // M::QUEUED, a constant (the method's INFO says the same): one writer compiled per method.
    if !M::QUEUED {
        write_sync(&mut m, content, &target.path)?;
    } else {
        write_queued(&mut m, content, spec.qd, spec.batch, &target.path)?;
    }
    m.finish()?;
    let tw = clk.now();
    // Without a flush the span ends with the writes.
    let t1 = if content.fsync {
        if maps {
            m.flush(Flush::Msync)?;
        }
        m.flush(Flush::Fsync)?;
        clk.now()
    } else {
        tw
    };
    let ru1 = Rusage::process();
    let io1 = ProcIo::read_self();
    let syscalls = m.syscalls(content.ops.len() as u64);
    drop(m);
    let s = |a: u64, b: u64| b.saturating_sub(a) as f64 * clock.ns_per_tick * 1e-9;
    Ok(ContentTiming {
        wall_s: s(t0, t1),
        write_s: s(t0, tw),
        fsync_s: content.fsync.then(|| s(tw, t1)),
        cpu: RusageDelta::between(&ru0, &ru1),
        syscalls,
        write_calls: io0
            .zip(io1)
            .map(|((a, n), (b, _))| ProcIo::delta(&a, n, &b).syscw),
    })
}

/// The op that writes bytes [off, off + len) of the content, from slot `slot`.
fn io_of(content: &Content, i: usize, slot: u32) -> Io {
    let (off, len) = content.ops[i];
    Io {
        slot,
        offset: off,
        // The content is only read by the kernel or the method; `Io` carries a mutable pointer because
        // read ops fill their buffer, which a content write never is.
        buf: content.bytes[off as usize..].as_ptr().cast_mut(),
        len: len as usize,
        write: true,
    }
}

fn short(path: &std::path::Path, off: u64, len: usize, n: usize) -> Error {
    Error::Runtime(format!(
        "{}: a write of {len} bytes at offset {off} moved {n}",
        path.display()
    ))
}

/// Each op in order; a write the kernel took only part of goes on from where it stopped.
fn write_sync<M: Method>(m: &mut M, content: &Content, path: &std::path::Path) -> Result<()> {
    for i in 0..content.ops.len() {
        let mut io = io_of(content, i, 0);
        loop {
            let n = m.submit(&io)?;
            if n == io.len {
                break;
            }
            if n == 0 {
                return Err(short(path, io.offset, io.len, n));
            }
            // SAFETY: n < io.len, so the rest of the op stays inside the content.
            io.buf = unsafe { io.buf.add(n) };
            io.offset += n as u64;
            io.len -= n;
        }
    }
    Ok(())
}

/// Up to `qd` ops in flight, `batch` queued per submission, each completion checked. On a failure the
/// requests still in flight are waited for before returning: the kernel may read the content until then.
fn write_queued<M: Method>(
    m: &mut M,
    content: &Content,
    qd: u32,
    batch: u32,
    path: &std::path::Path,
) -> Result<()> {
    let total = content.ops.len();
    let mut free: Vec<u32> = (0..qd).rev().collect();
    // The op each slot carries: (offset, length).
    let mut op_of = vec![(0u64, 0usize); qd as usize];
    let (mut next, mut in_flight) = (0usize, 0u32);
    let mut ios = Vec::with_capacity(batch as usize);
    let mut failed: Option<Error> = None;
    while (next < total && failed.is_none()) || in_flight > 0 {
        ios.clear();
        while failed.is_none() && ios.len() < batch as usize && next < total {
            let Some(slot) = free.pop() else { break };
            let io = io_of(content, next, slot);
            op_of[slot as usize] = (io.offset, io.len);
            ios.push(io);
            next += 1;
        }
        let (queued, r) = m.submit_round(&ios);
        in_flight += queued as u32;
        if let Err(e) = r {
            failed.get_or_insert(e);
        }
        let wait =
            u32::from(in_flight > 0 && (next == total || free.is_empty() || failed.is_some()));
        if let Err(e) = m.commit(wait) {
            // Nothing more can be waited for through this ring. Requests still in it only read the content
            // (writes): the worst a late one can do is put stale bytes in the file, which the caller's
            // read-back check reports; nothing in this process is written by the kernel.
            return Err(failed.unwrap_or(e));
        }
        in_flight -= m.reap(u32::MAX, |slot, res| {
            let (off, want) = op_of[slot as usize];
            if res != want as i32 && failed.is_none() {
                failed = Some(completion_error(path, off, want, res));
            }
            free.push(slot);
        });
    }
    failed.map_or(Ok(()), Err)
}

fn completion_error(path: &std::path::Path, off: u64, want: usize, res: i32) -> Error {
    if res < 0 {
        Error::Runtime(format!(
            "{}: a write of {want} bytes at offset {off} failed: {}",
            path.display(),
            iolab_sys::errno_name(-res)
        ))
    } else {
        short(path, off, want, res as usize)
    }
}

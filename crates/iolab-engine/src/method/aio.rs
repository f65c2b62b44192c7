//! `aio`: Linux native asynchronous I/O through raw io_setup/io_submit/io_getevents (no libaio needed),
//! `--qd` requests in flight, `--batch` per io_submit.
//!
//! Native AIO is only asynchronous for O_DIRECT on filesystems and devices that support it; buffered
//! files and tmpfs complete every request inside io_submit. iolab measures this instead of assuming it:
//! right after each io_submit a non-blocking io_getevents collects what has already completed, and the
//! result states the fraction of requests that completed inside io_submit (a finding names the case).
//!
//! `--reap-at-most N` reaps as fio's libaio engine does instead: no look after io_submit, io_getevents
//! only when the queue is full or the run drains, waiting for one completion and taking at most N
//! (fio's `iodepth_batch_complete_max`, by default 1). The option is declared here.

use super::api::{op_err, Flush, Io, Method, ThreadCtx};
use super::info::{Exec, Fit, MethodInfo, Targets};
use super::kind::MethodKind;
use crate::error::{Error, Result};
use crate::result::AioStats;
use crate::spec::options::{Applies, Group, Opt, Ty, METHOD_OPTIONS};
use crate::spec::Spec;
use iolab_sys as sys;
use iolab_sys::{AioContext, IoEvent, Iocb};
use linkme::distributed_slice;
use std::collections::VecDeque;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

/// The `aio` method, as the registry (`registry::METHODS`) lists it.
pub const INFO: MethodInfo = MethodInfo {
    kind: MethodKind::Aio,
    name: "aio",
    fio_engine: Some("libaio"),
    help: "Linux native AIO, io_submit/io_getevents (--qd, --batch)",
    exec: Exec::Queued,
    targets: Targets {
        sink_legacy: Fit::No(
            "native AIO needs the driver's write_iter/read_iter, which the legacy personality does not have \
             (io_submit answers EINVAL): use --sink nowait",
        ),
        ..Targets::with_offsets(
            "reads and writes at file offsets (IOCB_CMD_PWRITE/PREAD); {t} has none (ESPIPE)",
        )
    },
    syscalls: &["io_submit", "io_getevents"],
    syscall_note: "counted calls are io_submit(2) and io_getevents(2) (plus fsync); the kernel's syscr/syscw do not see AIO requests",
    gap: |_, _, _| {
        "aio: as io_uring, 0 within a batch of io_submit, then io_submit (which did the writes inline where \
         they could not be asynchronous) and io_getevents"
            .into()
    },
    options: &[Applies::Depth, Applies::Batch, Applies::Reaping],
    describe: |s| {
        let n = reap_max(s)?;
        Some(format!(
            "reaping as fio's libaio: at most {n} completion{} a call, when the queue is full",
            if n == 1 { "" } else { "s" }
        ))
    },
    mixed: true,
    drawn_lengths: true,
    ..MethodInfo::PLAIN
};

/// The option's key, `--reap-at-most`.
const KEY: &str = "reap-at-most";

#[distributed_slice(METHOD_OPTIONS)]
static OPTION: Opt = Opt {
    key: KEY,
    ty: Ty::Count,
    value_name: "N",
    group: Group::Method,
    applies: Applies::Reaping,
    default: None,
    help: "Reap as fio's libaio engine does: io_getevents only when --qd requests are in flight or no more \
           will come, waiting for one completion and taking at most N (fio's iodepth_batch_complete_max, 1 by \
           default; more than --qd is --qd), instead of a non-blocking io_getevents after each io_submit; the \
           share of requests completed inside io_submit is then not measured. 0 is iolab's own way (the \
           default, and how to measure that share for a libaio job of a fio file)",
};

/// `--reap-at-most`, where given above 0: at most that many completions a call, --qd at most.
fn reap_max(s: &Spec) -> Option<usize> {
    let n = s.method_opts.int(KEY).filter(|n| *n > 0)?;
    Some(n.min(u64::from(s.qd)) as usize)
}

pub struct Aio {
    ctx: AioContext,
    fd: OwnedFd,
    write: bool,
    /// `--op mixed`: each request reads or writes as its `Io` says.
    mixed: bool,
    positionless: bool,
    path: PathBuf,
    /// One iocb per slot; `pending` holds pointers to the queued ones.
    iocbs: Vec<Iocb>,
    pending: Vec<*mut Iocb>,
    events: Vec<IoEvent>,
    /// Completions collected but not yet handed to the runner.
    ready: VecDeque<(u32, i32)>,
    stats: AioStats,
    /// Requests already complete when their io_submit returned (a look right after it).
    inside: u64,
    /// `--reap-at-most`: no look after io_submit, at most this many completions a call.
    reap_max: Option<usize>,
    other_calls: u64,
    /// Slots handed to the kernel by the io_submit just made.
    just_submitted: Vec<bool>,
}

// SAFETY: the raw iocb pointers point into `self.iocbs` (owned) and are only used by the owning thread.
unsafe impl Send for Aio {}

impl Aio {
    fn collect(&mut self, min: usize, nowait: bool) -> Result<usize> {
        self.stats.io_getevents_calls += 1;
        let max = self.reap_max.unwrap_or(self.events.len());
        let n = loop {
            match self
                .ctx
                .getevents(min.min(max), &mut self.events[..max], nowait)
            {
                Ok(n) => break n,
                Err(e) if e.errno == libc::EINTR => continue,
                Err(e) => return Err(op_err(e, &self.path)),
            }
        };
        for ev in &self.events[..n] {
            self.ready.push_back((ev.data as u32, ev.res as i32));
        }
        Ok(n)
    }

    /// Which of the requests just submitted were already complete when io_submit returned: a non-blocking
    /// look right after it (completions of earlier requests that arrive in the same look are not counted).
    fn look(&mut self) -> Result<()> {
        let before = self.ready.len();
        self.collect(0, true)?;
        let inside = self
            .ready
            .iter()
            .skip(before)
            .filter(|(slot, _)| self.just_submitted[*slot as usize])
            .count();
        self.inside += inside as u64;
        self.just_submitted.iter_mut().for_each(|b| *b = false);
        Ok(())
    }
}

impl Method for Aio {
    const QUEUED: bool = true;

    fn prepare(ctx: &ThreadCtx) -> Result<Self> {
        let qd = ctx.spec.qd as usize;
        let actx = AioContext::new(ctx.spec.qd).map_err(|e| {
            if e.errno == libc::EAGAIN {
                Error::sys_hint(
                    e,
                    "the system-wide AIO limit (fs.aio-max-nr) is used up: lower --qd or --threads",
                )
            } else {
                Error::from(e)
            }
        })?;
        Ok(Aio {
            ctx: actx,
            fd: ctx.target.open_for(ctx.spec, false)?,
            write: ctx.writes(),
            mixed: ctx.spec.op == crate::spec::OpKind::Mixed,
            positionless: ctx.positionless(),
            path: ctx.target.path.clone(),
            iocbs: vec![Iocb::default(); qd],
            pending: Vec::with_capacity(qd),
            events: vec![IoEvent::default(); qd],
            ready: VecDeque::with_capacity(qd),
            stats: AioStats::default(),
            inside: 0,
            reap_max: reap_max(ctx.spec),
            other_calls: 0,
            just_submitted: vec![false; qd],
        })
    }

    #[inline(always)]
    fn submit(&mut self, io: &Io) -> Result<usize> {
        let cb = &mut self.iocbs[io.slot as usize];
        *cb = Iocb {
            aio_data: io.slot as u64,
            aio_lio_opcode: if io.write {
                sys::IOCB_CMD_PWRITE
            } else {
                sys::IOCB_CMD_PREAD
            },
            aio_fildes: self.fd.as_raw_fd() as u32,
            aio_buf: io.buf as u64,
            aio_nbytes: io.len as u64,
            aio_offset: if self.positionless {
                0
            } else {
                io.offset as i64
            },
            ..Default::default()
        };
        self.pending.push(cb as *mut Iocb);
        Ok(0)
    }

    /// A failed completion is an aio request's: named so (the runner's own default names io_uring).
    fn describe_failure(&self, errno: i32) -> Option<String> {
        let call = match (self.mixed, self.write) {
            (true, _) => "aio read or write",
            (false, true) => "aio write",
            (false, false) => "aio read",
        };
        Some(op_err(sys::SysErr::new(call, errno), &self.path).to_string())
    }

    fn commit(&mut self, min_complete: u32) -> Result<()> {
        while !self.pending.is_empty() {
            self.stats.io_submit_calls += 1;
            // SAFETY: the pending pointers point into `self.iocbs`, whose buffers the runner keeps valid and
            // untouched until their slots are reaped (Io contract).
            let taken = match unsafe { self.ctx.submit(&self.pending) } {
                Ok(n) => n,
                Err(e) if e.errno == libc::EINTR || e.errno == libc::EAGAIN => continue,
                Err(e) => return Err(op_err(e, &self.path)),
            };
            self.stats.requests += taken as u64;
            if self.reap_max.is_none() {
                for &cb in &self.pending[..taken] {
                    // SAFETY: `cb` points into `self.iocbs`, alive and not otherwise borrowed here.
                    let slot = unsafe { (*cb).aio_data } as usize;
                    self.just_submitted[slot] = true;
                }
            }
            self.pending.drain(..taken);
            if self.reap_max.is_none() {
                self.look()?;
            }
        }
        let have = self.ready.len();
        if (min_complete as usize) > have {
            self.collect(min_complete as usize - have, false)?;
        }
        Ok(())
    }

    fn unsubmitted(&self) -> u32 {
        self.pending.len() as u32
    }

    #[inline(always)]
    fn reap<F: FnMut(u32, i32)>(&mut self, max: u32, mut f: F) -> u32 {
        let mut n = 0;
        while n < max {
            let Some((slot, res)) = self.ready.pop_front() else {
                break;
            };
            f(slot, res);
            n += 1;
        }
        n
    }

    fn flush(&mut self, _what: Flush) -> Result<()> {
        self.other_calls += 1;
        sys::fsync(self.fd.as_raw_fd()).map_err(|e| op_err(e, &self.path))
    }

    fn syscalls(&self, _ops: u64) -> Option<u64> {
        Some(self.stats.io_submit_calls + self.stats.io_getevents_calls + self.other_calls)
    }

    fn stats(&self) -> super::api::MethodStats {
        super::api::MethodStats {
            aio: Some(AioStats {
                completed_inside_submit: self.reap_max.is_none().then_some(self.inside),
                ..self.stats.clone()
            }),
            ..Default::default()
        }
    }
}

//! How a thread's SQEs are built: one shape per thread, fixed at `prepare`, so a round of requests is built
//! in one tight loop straight into the submission queue (or the thread's staging vector).

use super::super::api::{Io, ThreadCtx};
use crate::spec::RingOpts;
use io_uring::{opcode, squeue, types};

/// Which request a thread's SQEs carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReqKind {
    Nop,
    VectoredFixed,
    Fixed,
    Vectored,
    Socket,
    SendZc,
    Plain,
}

impl ReqKind {
    /// The opcode's name as the kernel's tracepoints print it, and its number.
    pub(crate) fn opcode(self, write: bool) -> (&'static str, u8) {
        use opcode as o;
        let (w, r) = match self {
            ReqKind::Nop => return ("NOP", o::Nop::CODE),
            ReqKind::VectoredFixed => (
                ("WRITEV_FIXED", o::WritevFixed::CODE),
                ("READV_FIXED", o::ReadvFixed::CODE),
            ),
            ReqKind::Fixed => (
                ("WRITE_FIXED", o::WriteFixed::CODE),
                ("READ_FIXED", o::ReadFixed::CODE),
            ),
            ReqKind::Vectored => (("WRITEV", o::Writev::CODE), ("READV", o::Readv::CODE)),
            ReqKind::Socket => (("SEND", o::Send::CODE), ("RECV", o::Recv::CODE)),
            ReqKind::SendZc => (("SEND_ZC", o::SendZc::CODE), ("RECV", o::Recv::CODE)),
            ReqKind::Plain => (("WRITE", o::Write::CODE), ("READ", o::Read::CODE)),
        };
        if write {
            w
        } else {
            r
        }
    }
}

/// What a thread's SQEs look like (kept apart from the ring so a round can be built straight into the SQ).
pub(super) struct SqeShape {
    write: bool,
    /// `--op mixed`: each request reads or writes as its `Io` says (plain READ/WRITE only).
    mixed: bool,
    positionless: bool,
    /// A socket target: IORING_OP_SEND/RECV with MSG_WAITALL, so the kernel finishes a partial transfer.
    socket: bool,
    /// --send-zc: IORING_OP_SEND_ZC, reporting whether the kernel copied after all.
    send_zc: bool,
    nop: bool,
    fixed_bufs: bool,
    vectored: bool,
    /// --vectored --fixed-bufs on a kernel with IORING_OP_READV_FIXED/WRITEV_FIXED (6.15+).
    vectored_fixed: bool,
    /// RWF_* of every read and write (`--rw-flags`), in the SQE's rw_flags.
    rw_flags: i32,
    fixed_files: bool,
    /// The thread's target fd (owned by `Uring::fd`).
    fd: i32,
    /// Fixed-file index of this thread's target fd, and fixed-buffer index of its slot 0.
    file_index: u32,
    pub(super) buf_base: u32,
    /// This thread's number in the high half of user_data (shared rings route completions by it).
    tag: u64,
    /// --provided-buffers: reads name no buffer; the kernel takes one from the thread's buffer ring.
    pub(super) provided: bool,
    /// One iovec per slot for --vectored (pointing into the runner's buffer while the request is in flight).
    iovecs: Vec<libc::iovec>,
}

impl SqeShape {
    /// The shape of thread `ctx.thread`'s SQEs on `fd`, whose file and buffers sit at `file_index` and
    /// `buf_base` of its ring's registered tables; `vectored_fixed`: the kernel has the vectored
    /// fixed-buffer opcodes that `--vectored --fixed-bufs` asks for.
    pub(super) fn new(
        ctx: &ThreadCtx,
        o: &RingOpts,
        (fd, file_index, buf_base): (i32, u32, u32),
        vectored_fixed: bool,
    ) -> SqeShape {
        SqeShape {
            write: ctx.writes(),
            mixed: ctx.spec.op == crate::spec::OpKind::Mixed,
            positionless: ctx.positionless(),
            socket: matches!(
                ctx.target.kind,
                crate::target::TargetKind::Socketpair | crate::target::TargetKind::Tcp
            ),
            send_zc: o.send_zc,
            nop: o.nop_requests,
            fixed_bufs: o.fixed_bufs,
            vectored: o.vectored,
            vectored_fixed: vectored_fixed && o.vectored && o.fixed_bufs,
            rw_flags: ctx.spec.rw_flags as i32,
            fixed_files: o.fixed_files,
            fd,
            file_index,
            buf_base,
            tag: (ctx.thread as u64) << 32,
            provided: super::provided::asked(ctx),
            iovecs: vec![
                libc::iovec {
                    iov_base: std::ptr::null_mut(),
                    iov_len: 0
                };
                ctx.spec.qd as usize
            ],
        }
    }

    /// The kernel's name and number of the opcode this thread's requests use ("WRITEV_FIXED").
    pub(super) fn opcode(&self) -> (&'static str, u8) {
        let kind = if self.nop {
            ReqKind::Nop
        } else if self.vectored_fixed {
            ReqKind::VectoredFixed
        } else if self.fixed_bufs {
            ReqKind::Fixed
        } else if self.vectored {
            ReqKind::Vectored
        } else if self.socket && self.send_zc {
            ReqKind::SendZc
        } else if self.socket {
            ReqKind::Socket
        } else {
            ReqKind::Plain
        };
        if self.mixed {
            return ("READ and WRITE", kind.opcode(true).1);
        }
        kind.opcode(self.write)
    }

    /// The SQE for `len` bytes at `buf` (inside slot `slot`'s buffer) at file offset `offset`.
    #[inline(always)]
    pub(super) fn build(
        &mut self,
        slot: u32,
        buf: *mut u8,
        len: u32,
        offset: u64,
    ) -> squeue::Entry {
        let mut out = None;
        let io = Io {
            slot,
            offset,
            buf,
            len: len as usize,
            write: self.write,
        };
        self.build_round(std::slice::from_ref(&io), |e| out = Some(e));
        out.expect("one request gives one SQE")
    }

    /// Hands `sink` the SQE of each request of `ios`, in order. The opcode (and fd kind) is chosen once per
    /// round, so each loop builds one kind of SQE with no per-request branching on the options.
    ///
    /// Inlined on x86_64: a call to it went through the GOT (rustc's calls without a PLT are not relaxed
    /// to direct ones by the linker), and the GOT's page was one more that a round touches after each
    /// system call: a NOP round at batch 1 touched 16 pages out of line, 14 inlined (`bench/pages.sh`),
    /// and `iolab bench nop` went from 0.924x to 0.969x t/io_uring's rate under `--latency-sample 0`.
    /// Out of line elsewhere: the boards' binaries are built for size, and inlined into every loop it
    /// added 21 KB to the armv7 one.
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    #[cfg_attr(not(target_arch = "x86_64"), inline(never))]
    pub(super) fn build_round(&mut self, ios: &[Io], mut sink: impl FnMut(squeue::Entry)) {
        let tag = self.tag;
        // Devices that ignore the position get offset 0, as the io_uring documentation asks.
        let positional = !self.positionless;
        let off = |io: &Io| if positional { io.offset } else { 0 };
        let base = self.buf_base;
        let write = self.write;
        let rwf = self.rw_flags;
        macro_rules! each {
            (|$io:ident| $e:expr) => {
                for $io in ios {
                    sink(($e).user_data(tag | $io.slot as u64));
                }
            };
        }
        // The write or the read opcode of a pair, with the same arguments.
        macro_rules! by_dir {
            ($w:ident / $r:ident, |$io:ident| $($rest:tt)*) => {
                if write {
                    each!(|$io| opcode::$w::new $($rest)*)
                } else {
                    each!(|$io| opcode::$r::new $($rest)*)
                }
            };
        }
        macro_rules! ops {
            ($fd:expr) => {{
                let fd = $fd;
                if self.provided {
                    // No address: the kernel picks the buffer from the group (reads only: checked).
                    let group = super::provided::GROUP;
                    each!(
                        |io| opcode::Read::new(fd, std::ptr::null_mut(), io.len as u32)
                            .offset(off(io))
                            .rw_flags(rwf)
                            .buf_group(group)
                            .build()
                            .flags(squeue::Flags::BUFFER_SELECT)
                    )
                } else if self.vectored_fixed {
                    let iov = &mut self.iovecs;
                    each!(|io| {
                        let v = &mut iov[io.slot as usize];
                        v.iov_base = io.buf.cast();
                        v.iov_len = io.len;
                        let b = (base + io.slot) as u16;
                        if write {
                            opcode::WritevFixed::new(fd, v, 1, b)
                                .offset(off(io))
                                .rw_flags(rwf)
                                .build()
                        } else {
                            opcode::ReadvFixed::new(fd, v, 1, b)
                                .offset(off(io))
                                .rw_flags(rwf)
                                .build()
                        }
                    })
                } else if self.fixed_bufs {
                    by_dir!(WriteFixed / ReadFixed, |io| (
                        fd,
                        io.buf,
                        io.len as u32,
                        (base + io.slot) as u16
                    )
                        .offset(off(io))
                        .rw_flags(rwf)
                        .build())
                } else if self.vectored {
                    let iov = &mut self.iovecs;
                    each!(|io| {
                        let v = &mut iov[io.slot as usize];
                        v.iov_base = io.buf.cast();
                        v.iov_len = io.len;
                        if write {
                            opcode::Writev::new(fd, v, 1)
                                .offset(off(io))
                                .rw_flags(rwf)
                                .build()
                        } else {
                            opcode::Readv::new(fd, v, 1)
                                .offset(off(io))
                                .rw_flags(rwf)
                                .build()
                        }
                    })
                } else if self.send_zc && write {
                    let zc = iolab_sys::IORING_SEND_ZC_REPORT_USAGE;
                    each!(|io| opcode::SendZc::new(fd, io.buf, io.len as u32)
                        .flags(libc::MSG_WAITALL)
                        .zc_flags(zc)
                        .build())
                } else if self.socket {
                    by_dir!(Send / Recv, |io| (fd, io.buf, io.len as u32)
                        .flags(libc::MSG_WAITALL)
                        .build())
                } else if self.mixed {
                    // --op mixed: each request's own direction.
                    each!(|io| if io.write {
                        opcode::Write::new(fd, io.buf, io.len as u32)
                            .offset(off(io))
                            .rw_flags(rwf)
                            .build()
                    } else {
                        opcode::Read::new(fd, io.buf, io.len as u32)
                            .offset(off(io))
                            .rw_flags(rwf)
                            .build()
                    })
                } else {
                    by_dir!(Write / Read, |io| (fd, io.buf, io.len as u32)
                        .offset(off(io))
                        .rw_flags(rwf)
                        .build())
                }
            }};
        }
        if self.nop {
            each!(|io| opcode::Nop::new().build())
        } else if self.fixed_files {
            ops!(types::Fixed(self.file_index))
        } else {
            ops!(types::Fd(self.fd))
        }
    }
}

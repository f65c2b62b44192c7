//! Kernel-side data paths, the user-space answer to the seed note on kernel-space writes: the data never
//! passes through a user-space buffer. Each op moves `--bs` bytes from a source file to the target at the
//! op's offset:
//! - `copy_file_range` (Linux 4.5; cross-filesystem 5.3): one copy_file_range(2) per op (file targets);
//! - `sendfile` (Linux 2.2; to any file since 2.6.33): one sendfile(2) per op, at the target's file position
//!   (an lseek(2) where the offset jumps, counted; never on /dev/null);
//! - `splice` (Linux 2.6.17): source -> pipe -> target, two splice(2) calls per op (per pipe-full for blocks
//!   larger than the pipe, which iolab asks to be `--bs` bytes).
//!
//! The source is a file iolab creates next to the target and fills with the run's pattern before the run
//! (not timed), block b at the same offset as in the target, so `--verify` checks the copies like any
//! write. Writes only.

use super::api::{op_err, Flush, Io, Method, ThreadCtx};
use super::info::{Fit, MethodInfo, Targets};
use super::kind::MethodKind;
use crate::cleanup::Created;
use crate::error::{Error, Result};
use crate::pattern;
use crate::target::TargetKind;
use iolab_sys as sys;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// Which kernel copy: the MethodKind it implements.
/// The three kernel-side copies, as the registry names them.
pub type Splice = KernelCopy<SPLICE>;
pub type Sendfile = KernelCopy<SENDFILE>;
pub type CopyFileRange = KernelCopy<COPY_FILE_RANGE>;

pub struct KernelCopy<const K: u8> {
    src: OwnedFd,
    _src_file: Created,
    dst: OwnedFd,
    /// splice: the pipe (read end, write end) and its capacity.
    pipe: Option<(OwnedFd, OwnedFd, usize)>,
    positionless: bool,
    pos: u64,
    /// The source holds this many bytes from `base`; offsets beyond wrap (sinks only).
    src_len: u64,
    base: u64,
    path: PathBuf,
    extra_calls: u64,
}

pub const COPY_FILE_RANGE: u8 = 0;
pub const SENDFILE: u8 = 1;
pub const SPLICE: u8 = 2;

/// What the three kernel copies share in the registry: writes only, from a source file iolab fills.
const KERNEL_COPY: MethodInfo = MethodInfo {
    kernel_copy: true,
    no_direct: Some("use copy_file_range or a syscall method"),
    no_read: Some("copies a source file into the target: use --op write"),
    targets: Targets {
        sink: Fit::No(
            "needs the target's splice_write, which the sink driver does not have (the kernel answers EINVAL)",
        ),
        ..Targets::ANY
    },
    gap: gap_kernel_copy,
    ..MethodInfo::PLAIN
};

/// The gap of a kernel-side copy.
fn gap_kernel_copy(m: &MethodInfo, _one: bool, _sqpoll: bool) -> String {
    format!(
        "{}: one kernel-side copy after the other, no data through user space",
        m.name
    )
}

/// `splice`, as the registry lists it.
pub const SPLICE_INFO: MethodInfo = MethodInfo {
    kind: MethodKind::Splice,
    name: "splice",
    fio_engine: Some("splice"),
    help: "source file -> pipe -> target, two splice(2) per op (no user-space copy; writes only)",
    syscalls: &["splice"],
    syscall_note: "two splice(2) per op (source -> pipe -> target); no user-space copy",
    ..KERNEL_COPY
};

/// `sendfile`, as the registry lists it.
pub const SENDFILE_INFO: MethodInfo = MethodInfo {
    kind: MethodKind::Sendfile,
    name: "sendfile",
    help: "sendfile(2) from a source file (no user-space copy; writes only)",
    syscalls: &["sendfile64", "lseek"],
    syscall_note: "one sendfile(2) per op (plus lseek where the offset jumps); no user-space copy; the kernel \
                   counts it as a read and a write",
    ..KERNEL_COPY
};

const NOT_A_FILE: Fit =
    Fit::No("copies between regular files; {t} is not one (use splice or sendfile)");

/// `copy_file_range`, as the registry lists it.
pub const COPY_FILE_RANGE_INFO: MethodInfo = MethodInfo {
    kind: MethodKind::CopyFileRange,
    name: "copy_file_range",
    help: "copy_file_range(2) from a source file (regular files; no user-space copy; writes only)",
    targets: Targets {
        file: Fit::Yes,
        block_device: NOT_A_FILE,
        dev_null: NOT_A_FILE,
        dev_zero: NOT_A_FILE,
        stream: NOT_A_FILE,
        sink: NOT_A_FILE,
        sink_legacy: NOT_A_FILE,
        nvme_generic: super::info::NVME_COMMANDS_ONLY,
    },
    no_direct: None,
    syscalls: &["copy_file_range"],
    syscall_note: "one copy_file_range(2) per op; no user-space copy",
    ..KERNEL_COPY
};

/// Source size for sinks (/dev/null): offsets wrap around it.
const SINK_SOURCE: u64 = 16 << 20;

/// Beside a regular-file target (same filesystem: copy_file_range needs it); for devices in
/// [`crate::paths::scratch_dir`] ($TMPDIR, or the survey's --tmp-dir).
fn source_path(target: &Path, kind: TargetKind, thread: u32) -> PathBuf {
    let dir = match target.parent() {
        // A bare name ("t.dat") is in the current directory: its source goes there too.
        Some(d) if kind == TargetKind::File && d.as_os_str().is_empty() => PathBuf::from("."),
        Some(d) if kind == TargetKind::File => d.to_path_buf(),
        _ => crate::paths::scratch_dir(),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "target".into());
    dir.join(format!(
        ".{name}.iolab-source-{}-{thread}",
        std::process::id()
    ))
}

/// Fills the source with the pattern, laid out like the target: block b at base + b * bs.
fn fill_pattern(src: &OwnedFd, sp: &Path, ctx: &ThreadCtx, base: u64, src_len: u64) -> Result<()> {
    let spec = ctx.spec;
    let bs = spec.bs as usize;
    let per = ((1usize << 20) / bs).max(1);
    let what = "the chunk that fills the source file (at least one --bs block)";
    let mut chunk = crate::mem::zeroed::<u8>(per * bs, what, "lower --bs")?;
    for b in chunk.chunks_mut(bs) {
        pattern::fill_body(b, spec.seed);
    }
    let first_block = ctx.target.region_first_block(ctx.thread);
    let mut done = 0u64;
    while done < src_len {
        let n = ((src_len - done) as usize).min(chunk.len());
        let b0 = first_block + done / spec.bs;
        for (i, b) in chunk[..n].chunks_mut(bs).enumerate() {
            pattern::stamp(b, spec.seed, b0 + i as u64);
        }
        // The source file is laid out like the target: block b at base + b * bs.
        let w = sys::pwrite(src.as_raw_fd(), &chunk[..n], base + done)
            .map_err(|e| Error::sys_on(e, sp.display().to_string()))?;
        done += w as u64;
    }
    Ok(())
}

/// pwrite(2) until all of `buf` is at `off`.
fn write_all_at(fd: i32, mut buf: &[u8], mut off: u64) -> sys::SysResult<()> {
    while !buf.is_empty() {
        let n = sys::pwrite(fd, buf, off)?;
        buf = &buf[n..];
        off += n as u64;
    }
    Ok(())
}

impl<const K: u8> Method for KernelCopy<K> {
    fn prepare(ctx: &ThreadCtx) -> Result<Self> {
        let spec = ctx.spec;
        let positionless = ctx.positionless();
        let (base, src_len) = if positionless {
            (
                ctx.region_offset,
                SINK_SOURCE.min(ctx.region_len).max(spec.bs) / spec.bs * spec.bs,
            )
        } else {
            (ctx.region_offset, ctx.region_len)
        };
        // The source: a new file beside the target (same filesystem, so copy_file_range can reflink or copy
        // in place), filled with the pattern so block b holds what a write of block b would.
        let sp = source_path(&ctx.target.path, ctx.target.kind, ctx.thread);
        let (src, guard) = Created::new_file(&sp, libc::O_RDWR, 0o600, false)?;
        let bs = spec.bs as usize;
        let src_len = match ctx.content {
            // Given bytes (the decimal-lines workload): the source holds them at the target's offsets.
            Some(c) => {
                write_all_at(src.as_raw_fd(), c, base)
                    .map_err(|e| Error::sys_on(e, sp.display().to_string()))?;
                c.len() as u64
            }
            None => {
                fill_pattern(&src, &sp, ctx, base, src_len)?;
                src_len
            }
        };
        let dst = ctx.target.open_for(spec, false)?;
        let pipe = if K == SPLICE {
            let (r, w) = sys::pipe()?;
            let cap = sys::set_pipe_size(w.as_raw_fd(), bs.max(4096)).unwrap_or(65536);
            Some((r, w, cap))
        } else {
            None
        };
        Ok(KernelCopy {
            src,
            _src_file: guard,
            dst,
            pipe,
            positionless,
            pos: 0,
            src_len,
            base,
            path: ctx.target.path.clone(),
            extra_calls: 0,
        })
    }

    #[inline(always)]
    fn submit(&mut self, io: &Io) -> Result<usize> {
        let rel = io.offset - self.base;
        let src_off = self.base
            + if self.positionless {
                rel % self.src_len
            } else {
                rel
            };
        let (s, d) = (self.src.as_raw_fd(), self.dst.as_raw_fd());
        let mut moved = 0usize;
        while moved < io.len {
            if moved > 0 {
                // A further round for the same op (a partial copy, or a block larger than the pipe):
                // its calls are beyond the per-op count `syscalls` starts from.
                self.extra_calls += if K == SPLICE { 2 } else { 1 };
            }
            let left = io.len - moved;
            let n = match K {
                COPY_FILE_RANGE => sys::copy_file_range(
                    s,
                    src_off + moved as u64,
                    d,
                    io.offset + moved as u64,
                    left,
                ),
                SENDFILE => {
                    let want = io.offset + moved as u64;
                    if !self.positionless && self.pos != want {
                        self.extra_calls += 1;
                        self.pos = sys::lseek_set(d, want).map_err(|e| op_err(e, &self.path))?;
                    }
                    sys::sendfile(d, s, src_off + moved as u64, left)
                }
                _ => {
                    let (r, w, cap) = self.pipe.as_ref().expect("splice has a pipe");
                    let part = left.min(*cap);
                    let into =
                        sys::splice(s, Some(src_off + moved as u64), w.as_raw_fd(), None, part)
                            .map_err(|e| op_err(e, &self.path))?;
                    // Everything spliced into the pipe goes on to the target before the next part, or
                    // the pipe would keep what a stream target did not take at once and fill up.
                    let mut out = 0usize;
                    while out < into {
                        if out > 0 {
                            self.extra_calls += 1;
                        }
                        let dst_off = if self.positionless {
                            None
                        } else {
                            Some(io.offset + (moved + out) as u64)
                        };
                        let k = sys::splice(r.as_raw_fd(), None, d, dst_off, into - out)
                            .map_err(|e| op_err(e, &self.path))?;
                        if k == 0 {
                            break;
                        }
                        out += k;
                    }
                    Ok(out)
                }
            }
            .map_err(|e| op_err(e, &self.path))?;
            if n == 0 {
                break;
            }
            moved += n;
            self.pos += n as u64;
        }
        Ok(moved)
    }

    fn flush(&mut self, _what: Flush) -> Result<()> {
        self.extra_calls += 1;
        sys::fsync(self.dst.as_raw_fd()).map_err(|e| op_err(e, &self.path))
    }

    fn syscalls(&self, ops: u64) -> Option<u64> {
        let per = if K == SPLICE { 2 } else { 1 };
        Some(ops * per + self.extra_calls)
    }
}

/// The MethodKind of each const.
pub fn kind_of(k: u8) -> MethodKind {
    match k {
        COPY_FILE_RANGE => MethodKind::CopyFileRange,
        SENDFILE => MethodKind::Sendfile,
        _ => MethodKind::Splice,
    }
}

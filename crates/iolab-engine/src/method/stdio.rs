//! `stdio`: glibc buffered streams, as the seed thesis's fputs program used them. The stream is made fully
//! buffered (`setvbuf(_IOFBF)`) with a `--stdio-buffer`-byte buffer (default 4096 bytes, what glibc itself
//! picks for files: st_blksize); each op is one fwrite(3)/fread(3) of `--bs` bytes, so most ops are a
//! memcpy into the buffer and every buffer-full is one write(2). Seeking (random pattern, a wrapping
//! region) is fseeko(3), which flushes first. glibc decides when to call the kernel, so iolab cannot count
//! the syscalls itself: the result takes them from the kernel (/proc/self/io).

use super::api::{op_err, Flush, Io, Method, ThreadCtx};
use super::info::MethodInfo;
use super::info::SinkCalls;
use super::kind::MethodKind;
use crate::error::Result;
use crate::spec::options::Applies;
use iolab_sys as sys;
use iolab_sys::CFile;
use std::path::PathBuf;

/// The table header's word on the run's buffer.
fn describe(s: &crate::spec::Spec) -> Option<String> {
    Some(format!(
        "stdio buffer {} (_IOFBF)",
        crate::units::fmt_size(s.stdio_buffer)
    ))
}

/// The `stdio` method, as the registry (`registry::METHODS`) lists it.
pub const INFO: MethodInfo = MethodInfo {
    kind: MethodKind::Stdio,
    name: "stdio",
    help: "glibc fwrite/fread on a fully buffered FILE (_IOFBF, --stdio-buffer, default 4096 bytes, as glibc picks for files)",
    user_buffered: true,
    no_direct: Some("it copies through stdio's user-space buffer"),
    syscalls: &["write", "read"],
    syscall_note: "glibc calls write(2)/read(2) when its stdio buffer fills or is flushed; iolab cannot see those calls, the kernel's syscr/syscw count them",
    describe,
    gap: |_, _, _| {
        "stdio: one fwrite after the other: most only copy into the FILE buffer (the p50), and every \
         buffer-full adds a write(2) (the tail)"
            .into()
    },
    options: &[Applies::StdioBuffer],
    sink_calls: SinkCalls::BytesOnly,
    drawn_lengths: true,
    ..MethodInfo::PLAIN
};

pub struct Stdio {
    f: CFile,
    write: bool,
    positionless: bool,
    pos: u64,
    path: PathBuf,
}

impl Method for Stdio {
    fn prepare(ctx: &ThreadCtx) -> Result<Self> {
        let fd = ctx.target.open_for(ctx.spec, false)?;
        let path = ctx.target.path.clone();
        let buf = crate::mem::zeroed::<u8>(
            ctx.spec.stdio_buffer as usize,
            "the stdio buffer (--stdio-buffer, one per thread)",
            "lower --stdio-buffer or --threads",
        )?;
        let f = CFile::fdopen(fd, ctx.writes(), buf).map_err(|e| op_err(e, &path))?;
        Ok(Stdio {
            f,
            write: ctx.writes(),
            positionless: ctx.positionless(),
            pos: 0,
            path,
        })
    }

    #[inline(always)]
    fn submit(&mut self, io: &Io) -> Result<usize> {
        if !self.positionless && io.offset != self.pos {
            self.f.seek(io.offset).map_err(|e| op_err(e, &self.path))?;
            self.pos = io.offset;
        }
        let r = if self.write {
            // SAFETY: the runner's Io contract: `buf` holds `len` bytes nothing else touches during the call.
            self.f.write_all(unsafe { io.bytes() })
        } else {
            // SAFETY: as above.
            self.f.read(unsafe { io.bytes_mut() })
        };
        let n = r.map_err(|e| op_err(e, &self.path))?;
        self.pos += n as u64;
        Ok(n)
    }

    fn flush(&mut self, _what: Flush) -> Result<()> {
        self.f.flush().map_err(|e| op_err(e, &self.path))?;
        sys::fsync(self.f.fd()).map_err(|e| op_err(e, &self.path))
    }

    fn finish(&mut self) -> Result<()> {
        if self.write {
            self.f.flush().map_err(|e| op_err(e, &self.path))?;
        }
        Ok(())
    }

    fn syscalls(&self, _ops: u64) -> Option<u64> {
        None
    }
}

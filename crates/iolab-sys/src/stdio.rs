//! C stdio streams: glibc's buffered `FILE` ([`CFile`]), as the seed program's fputs used.

use std::ffi::CStr;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use super::errno::{result, SysErr, SysResult};
use super::lfs;

/// A glibc `FILE*` stream over a descriptor, closed (and so flushed) on drop.
pub struct CFile {
    f: *mut libc::FILE,
    /// The buffer handed to setvbuf; must outlive the stream.
    _buf: Vec<u8>,
}

// SAFETY: the FILE is used by one thread at a time (it is owned); glibc streams may migrate threads.
unsafe impl Send for CFile {}

impl CFile {
    /// fdopen(3) the descriptor and make the stream fully buffered (_IOFBF) with `buf` as its buffer (the
    /// caller allocates it, so that a buffer too large for memory is the caller's error, not an abort).
    /// Takes ownership of `fd`: fclose closes it.
    pub fn fdopen(fd: OwnedFd, write: bool, mut buf: Vec<u8>) -> SysResult<CFile> {
        let mode: &CStr = if write { c"w" } else { c"r" };
        let raw = fd.as_raw_fd();
        // SAFETY: `raw` is an open descriptor and `mode` is NUL-terminated.
        let f = result("fdopen", unsafe { libc::fdopen(raw, mode.as_ptr()) })?;
        // The stream owns the descriptor now.
        std::mem::forget(fd);
        if buf.is_empty() {
            buf.push(0);
        }
        // SAFETY: `f` is a fresh stream with no I/O done yet (setvbuf's precondition); `buf` lives as long
        // as the stream because both are owned by the returned value and the stream is closed first in Drop.
        let r = unsafe { libc::setvbuf(f, buf.as_mut_ptr().cast(), libc::_IOFBF, buf.len()) };
        let file = CFile { f, _buf: buf };
        // Not an errno convention: setvbuf fails with any nonzero value and need not set errno.
        if r != 0 {
            return Err(SysErr::new("setvbuf", libc::EINVAL));
        }
        Ok(file)
    }

    /// fwrite(3) of the whole buffer; an error names fwrite with the errno glibc left.
    #[inline]
    pub fn write_all(&mut self, buf: &[u8]) -> SysResult<usize> {
        // SAFETY: `buf` is readable for its length and `self.f` is a live stream.
        let n = unsafe { libc::fwrite(buf.as_ptr().cast(), 1, buf.len(), self.f) };
        // Not an errno sentinel: fwrite reports failure as a short count (and sets errno).
        if n != buf.len() {
            return Err(SysErr::last("fwrite"));
        }
        Ok(n)
    }

    /// fread(3); returns bytes read (short at end of file).
    #[inline]
    pub fn read(&mut self, buf: &mut [u8]) -> SysResult<usize> {
        // SAFETY: `buf` is writable for its length and `self.f` is a live stream.
        let n = unsafe { libc::fread(buf.as_mut_ptr().cast(), 1, buf.len(), self.f) };
        // Not an errno sentinel: a short count is also end of file; only the stream's error flag tells them
        // apart.
        // SAFETY: `self.f` is a live stream.
        if n != buf.len() && unsafe { libc::ferror(self.f) } != 0 {
            return Err(SysErr::last("fread"));
        }
        Ok(n)
    }

    /// fseek(3) to an absolute offset (also drops the read buffer).
    pub fn seek(&mut self, off: u64) -> SysResult<()> {
        // SAFETY: `self.f` is a live stream.
        result("fseeko", unsafe {
            lfs::fseeko(self.f, off as lfs::off_t, libc::SEEK_SET)
        })
        .map(|_| ())
    }

    /// fflush(3).
    pub fn flush(&mut self) -> SysResult<()> {
        // SAFETY: `self.f` is a live stream.
        result("fflush", unsafe { libc::fflush(self.f) }).map(|_| ())
    }

    /// The descriptor underneath (fileno(3)), for fsync.
    pub fn fd(&self) -> RawFd {
        // SAFETY: `self.f` is a live stream.
        unsafe { libc::fileno(self.f) }
    }
}

impl Drop for CFile {
    fn drop(&mut self) {
        // SAFETY: `self.f` is live and closed exactly once, here; the buffer is freed after this.
        unsafe { libc::fclose(self.f) };
    }
}

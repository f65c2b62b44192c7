//! Linux native AIO (io_setup/io_submit/io_getevents, <linux/aio_abi.h>), no libaio needed.

use super::errno::{result, SysResult};

pub const IOCB_CMD_PREAD: u16 = 0;
pub const IOCB_CMD_PWRITE: u16 = 1;

/// struct iocb (little-endian layout: aio_key before aio_rw_flags).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Iocb {
    pub aio_data: u64,
    pub aio_key: u32,
    pub aio_rw_flags: i32,
    pub aio_lio_opcode: u16,
    pub aio_reqprio: i16,
    pub aio_fildes: u32,
    pub aio_buf: u64,
    pub aio_nbytes: u64,
    pub aio_offset: i64,
    pub aio_reserved2: u64,
    pub aio_flags: u32,
    pub aio_resfd: u32,
}

/// struct io_event.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct IoEvent {
    pub data: u64,
    pub obj: u64,
    pub res: i64,
    pub res2: i64,
}

/// An AIO context (io_setup), destroyed on drop (io_destroy waits for requests still in flight).
pub struct AioContext(libc::c_ulong);

impl AioContext {
    pub fn new(nr_events: u32) -> SysResult<AioContext> {
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: `ctx` is a valid, zero-initialised aio_context_t out-pointer, as io_setup requires.
        result("io_setup", unsafe {
            libc::syscall(
                libc::SYS_io_setup,
                nr_events,
                &mut ctx as *mut libc::c_ulong,
            )
        })?;
        Ok(AioContext(ctx))
    }

    /// io_submit(2) of the iocbs behind `iocbs`; returns how many the kernel took.
    ///
    /// # Safety
    /// Every pointer in `iocbs` must point to a valid Iocb whose buffer stays valid (and, for reads, not
    /// otherwise accessed) until its completion is reaped.
    pub unsafe fn submit(&self, iocbs: &[*mut Iocb]) -> SysResult<usize> {
        // SAFETY: the caller guarantees the iocbs and their buffers; the array is a valid slice.
        result("io_submit", unsafe {
            libc::syscall(
                libc::SYS_io_submit,
                self.0,
                iocbs.len() as libc::c_long,
                iocbs.as_ptr(),
            )
        })
        .map(|n| n as usize)
    }

    /// io_getevents(2): at least `min` events into `out`; with `nowait` a zero timeout (poll).
    pub fn getevents(&self, min: usize, out: &mut [IoEvent], nowait: bool) -> SysResult<usize> {
        let zero = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let t: *const libc::timespec = if nowait { &zero } else { std::ptr::null() };
        // SAFETY: `out` is a valid writable array of `out.len()` io_events; `t` is null or points to `zero`.
        result("io_getevents", unsafe {
            libc::syscall(
                libc::SYS_io_getevents,
                self.0,
                min as libc::c_long,
                out.len() as libc::c_long,
                out.as_mut_ptr(),
                t,
            )
        })
        .map(|n| n as usize)
    }
}

impl Drop for AioContext {
    fn drop(&mut self) {
        // SAFETY: the context was created by io_setup and is destroyed once.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.0) };
    }
}

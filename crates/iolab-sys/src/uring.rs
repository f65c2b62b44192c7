//! io_uring pieces the io-uring crate does not expose in the form iolab needs: io_uring_enter (plain, with
//! a timeout, through a registered ring fd), and for system-call offload (see `crate::offload`) rings in
//! user memory (IORING_SETUP_NO_MMAP), registration and restrictions. These go through `syscall(3)`, which
//! turns the kernel's -errno into -1 and errno, so `errno::result` checks them like any
//! other call.

use std::os::fd::{FromRawFd, OwnedFd, RawFd};

use super::errno::{result, SysResult};

pub const IORING_ENTER_GETEVENTS: u32 = 1 << 0;
pub const IORING_ENTER_SQ_WAKEUP: u32 = 1 << 1;
pub const IORING_ENTER_REGISTERED_RING: u32 = 1 << 4;
const IORING_REGISTER_RING_FDS: u32 = 20;

/// io_uring_enter(2) without a signal mask. `fd` is the ring fd, or its registered index when `flags`
/// holds IORING_ENTER_REGISTERED_RING. On x86_64 and aarch64 it is the system call instruction itself,
/// inlined into the submission loop (libc's variadic syscall(3) cost as much user time as the rest of a
/// NOP round); elsewhere syscall(3).
#[inline]
pub fn io_uring_enter(fd: i32, to_submit: u32, min_complete: u32, flags: u32) -> SysResult<u32> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        // SAFETY: io_uring_enter with a null argument pointer and size 0 reads no user memory besides the
        // rings, which the ring's owner keeps mapped for its whole life; the kernel reads and writes the
        // rings, so the asm is not marked nomem.
        let r = unsafe {
            crate::raw::raw_syscall6(
                libc::SYS_io_uring_enter as u64,
                [
                    fd as u32 as u64,
                    u64::from(to_submit),
                    u64::from(min_complete),
                    u64::from(flags),
                    0,
                    0,
                ],
            )
        };
        if (-4095..0).contains(&r) {
            Err(super::errno::SysErr::new("io_uring_enter", -r as i32))
        } else {
            Ok(r as u32)
        }
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        // SAFETY: as above.
        result("io_uring_enter", unsafe {
            libc::syscall(
                libc::SYS_io_uring_enter,
                fd,
                to_submit,
                min_complete,
                flags,
                std::ptr::null::<libc::c_void>(),
                0usize,
            )
        })
        .map(|n| n as u32)
    }
}

/// io_uring_enter(2) that only waits: for `min_complete` completions or `timeout_ns`, whichever comes first
/// (IORING_ENTER_EXT_ARG, Linux 5.11+). Submits nothing, so it may run on a thread other than the one
/// filling the submission queue. A timeout is `Ok(false)`.
pub fn io_uring_wait_timeout(fd: i32, min_complete: u32, timeout_ns: u64) -> SysResult<bool> {
    match io_uring_enter_ext(fd, 0, min_complete, IORING_ENTER_GETEVENTS, 0, timeout_ns) {
        Ok(_) => Ok(true),
        Err(e) if e.errno == libc::ETIME => Ok(false),
        Err(e) => Err(e),
    }
}

pub const IORING_ENTER_EXT_ARG: u32 = 1 << 3;

/// io_uring_enter(2) with struct io_uring_getevents_arg (IORING_ENTER_EXT_ARG, 5.11+): submits
/// `to_submit`, then (with GETEVENTS in `flags`) waits for `min_complete` completions for at most
/// `timeout_ns`; with `min_wait_usec` (6.12+, IORING_FEAT_MIN_TIMEOUT) it waits that long for
/// `min_complete`, then returns as soon as there is any completion at all. `fd`/`flags` as for
/// [`io_uring_enter`]. A timeout is the error ETIME.
pub fn io_uring_enter_ext(
    fd: i32,
    to_submit: u32,
    min_complete: u32,
    flags: u32,
    min_wait_usec: u32,
    timeout_ns: u64,
) -> SysResult<u32> {
    #[repr(C)]
    struct KernelTimespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    /// struct io_uring_getevents_arg (6.12+ layout: min_wait_usec is where older headers have pad).
    #[repr(C)]
    struct GetEventsArg {
        sigmask: u64,
        sigmask_sz: u32,
        min_wait_usec: u32,
        ts: u64,
    }
    let ts = KernelTimespec {
        tv_sec: (timeout_ns / 1_000_000_000) as i64,
        tv_nsec: (timeout_ns % 1_000_000_000) as i64,
    };
    let arg = GetEventsArg {
        sigmask: 0,
        sigmask_sz: 0,
        min_wait_usec,
        ts: &ts as *const KernelTimespec as u64,
    };
    // SAFETY: `arg` and the timespec it points to are locals alive for the whole call; the size passed is
    // exactly that of `arg`; SQEs the call submits are the ring owner's, valid until their completions.
    result("io_uring_enter", unsafe {
        libc::syscall(
            libc::SYS_io_uring_enter,
            fd,
            to_submit,
            min_complete,
            flags | IORING_ENTER_EXT_ARG,
            &arg as *const GetEventsArg,
            std::mem::size_of::<GetEventsArg>(),
        )
    })
    .map(|n| n as u32)
}

/// struct io_uring_reg_wait (6.13+): one wait's arguments in a registered wait region.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct RegWait {
    pub ts_sec: i64,
    pub ts_nsec: i64,
    pub min_wait_usec: u32,
    /// IORING_REG_WAIT_TS: `ts_*` is the wait's timeout.
    pub flags: u32,
    pub sigmask: u64,
    pub sigmask_sz: u32,
    pub pad: [u32; 3],
    pub pad2: [u64; 2],
}

pub const IORING_REG_WAIT_TS: u32 = 1;
pub const IORING_ENTER_EXT_ARG_REG: u32 = 1 << 6;
const IORING_REGISTER_MEM_REGION: u32 = 34;

/// IORING_REGISTER_MEM_REGION of `size` bytes of user memory at `addr` as the ring's wait region
/// (IORING_MEM_REGION_REG_WAIT_ARG, 6.13+): the ring must have been set up with IORING_SETUP_R_DISABLED
/// and not enabled yet.
///
/// # Safety
/// `addr` must be page-aligned memory of `size` bytes that stays mapped while the ring lives (the kernel
/// pins the pages and reads each wait's arguments from them).
pub unsafe fn io_uring_register_wait_region(
    ring_fd: RawFd,
    addr: *mut u8,
    size: usize,
) -> SysResult<()> {
    #[repr(C)]
    struct RegionDesc {
        user_addr: u64,
        size: u64,
        flags: u32,
        id: u32,
        mmap_offset: u64,
        resv: [u64; 4],
    }
    #[repr(C)]
    struct MemRegionReg {
        region_uptr: u64,
        flags: u64,
        resv: [u64; 2],
    }
    const IORING_MEM_REGION_TYPE_USER: u32 = 1;
    const IORING_MEM_REGION_REG_WAIT_ARG: u64 = 1;
    let mut rd = RegionDesc {
        user_addr: addr as u64,
        size: size as u64,
        flags: IORING_MEM_REGION_TYPE_USER,
        id: 0,
        mmap_offset: 0,
        resv: [0; 4],
    };
    let reg = MemRegionReg {
        region_uptr: &mut rd as *mut RegionDesc as u64,
        flags: IORING_MEM_REGION_REG_WAIT_ARG,
        resv: [0; 2],
    };
    // SAFETY: `reg` and the descriptor it points to are locals alive for the call (the kernel writes the
    // descriptor back); the caller guarantees the region's memory; nr_args 1 matches.
    result("io_uring_register(MEM_REGION)", unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            ring_fd,
            IORING_REGISTER_MEM_REGION,
            &reg as *const MemRegionReg,
            1u32,
        )
    })
    .map(|_| ())
}

/// io_uring_enter(2) whose wait arguments are the `io_uring_reg_wait` at byte `offset` of the ring's
/// registered wait region (IORING_ENTER_EXT_ARG_REG): nothing is copied from user memory per call.
/// A timeout is the error ETIME.
pub fn io_uring_enter_reg_wait(
    fd: i32,
    to_submit: u32,
    min_complete: u32,
    flags: u32,
    offset: u64,
) -> SysResult<u32> {
    // SAFETY: the argument is an offset into the region the kernel pinned at registration, not a pointer;
    // the kernel checks it against the region's size and alignment.
    result("io_uring_enter", unsafe {
        libc::syscall(
            libc::SYS_io_uring_enter,
            fd,
            to_submit,
            min_complete,
            flags | IORING_ENTER_EXT_ARG | IORING_ENTER_EXT_ARG_REG,
            offset,
            std::mem::size_of::<RegWait>(),
        )
    })
    .map(|n| n as u32)
}

/// IORING_REGISTER_RING_FDS for `ring_fd` (Linux 5.18+): returns the registered index to pass to
/// io_uring_enter with IORING_ENTER_REGISTERED_RING, which skips the fd lookup on every call.
pub fn io_uring_register_ring_fd(ring_fd: i32) -> SysResult<u32> {
    #[repr(C)]
    struct RsrcUpdate {
        offset: u32,
        resv: u32,
        data: u64,
    }
    let mut up = RsrcUpdate {
        offset: u32::MAX,
        resv: 0,
        data: ring_fd as u64,
    };
    // SAFETY: `up` is a valid io_uring_rsrc_update the kernel reads and writes (the chosen index) during
    // the call; nr_args 1 matches.
    result("io_uring_register(RING_FDS)", unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            ring_fd,
            IORING_REGISTER_RING_FDS,
            &mut up as *mut RsrcUpdate,
            1u32,
        )
    })?;
    Ok(up.offset)
}

/// IORING_UNREGISTER_RING_FDS: frees the calling thread's registered index `idx` (a thread has 16; a ring
/// whose index stays registered lives until the thread exits).
pub fn io_uring_unregister_ring_fd(ring_fd: i32, idx: u32) -> SysResult<()> {
    #[repr(C)]
    struct RsrcUpdate {
        offset: u32,
        resv: u32,
        data: u64,
    }
    let up = RsrcUpdate {
        offset: idx,
        resv: 0,
        data: 0,
    };
    // SAFETY: `up` is a valid io_uring_rsrc_update the kernel only reads; nr_args 1 matches.
    result("io_uring_register(UNREGISTER_RING_FDS)", unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            ring_fd,
            IORING_REGISTER_RING_FDS + 1,
            &up as *const RsrcUpdate,
            1u32,
        )
    })?;
    Ok(())
}

/// struct io_sqring_offsets (6.5+ layout: `user_addr` is where older headers have resv2).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SqringOffsets {
    pub head: u32,
    pub tail: u32,
    pub ring_mask: u32,
    pub ring_entries: u32,
    pub flags: u32,
    pub dropped: u32,
    pub array: u32,
    pub resv1: u32,
    pub user_addr: u64,
}

/// struct io_cqring_offsets (6.5+ layout).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct CqringOffsets {
    pub head: u32,
    pub tail: u32,
    pub ring_mask: u32,
    pub ring_entries: u32,
    pub overflow: u32,
    pub cqes: u32,
    pub flags: u32,
    pub resv1: u32,
    pub user_addr: u64,
}

/// struct io_uring_params.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct UringParams {
    pub sq_entries: u32,
    pub cq_entries: u32,
    pub flags: u32,
    pub sq_thread_cpu: u32,
    pub sq_thread_idle: u32,
    pub features: u32,
    pub wq_fd: u32,
    pub resv: [u32; 3],
    pub sq_off: SqringOffsets,
    pub cq_off: CqringOffsets,
}

pub const IORING_SETUP_SQPOLL: u32 = 1 << 1;
pub const IORING_SETUP_SQ_AFF: u32 = 1 << 2;
pub const IORING_SETUP_CQSIZE: u32 = 1 << 3;
pub const IORING_SETUP_R_DISABLED: u32 = 1 << 6;
pub const IORING_SETUP_NO_MMAP: u32 = 1 << 14;
/// The kernel takes SQE i from SQ slot i: the ring has no index array (6.6+).
pub const IORING_SETUP_NO_SQARRAY: u32 = 1 << 16;
/// The SQ and CQ rings are one mapping at offset 0 of the ring fd (5.4+).
pub const IORING_FEAT_SINGLE_MMAP: u32 = 1;
/// mmap(2) offset of a ring's SQE array.
pub const IORING_OFF_SQES: u64 = 0x1000_0000;
pub const IORING_SQ_NEED_WAKEUP: u32 = 1;
/// SEND_ZC's zc_flags (in the SQE's ioprio): report in the notification whether the kernel copied.
pub const IORING_SEND_ZC_REPORT_USAGE: u16 = 1 << 3;
/// In a SEND_ZC notification's result: the kernel copied the data after all (6.2+).
pub const IORING_NOTIF_USAGE_ZC_COPIED: u32 = 1 << 31;
pub const IOSQE_FIXED_FILE: u8 = 1;
pub const IORING_REGISTER_BUFFERS: u32 = 0;
pub const IORING_REGISTER_FILES: u32 = 2;
pub const IORING_REGISTER_RESTRICTIONS: u32 = 11;
pub const IORING_REGISTER_ENABLE_RINGS: u32 = 12;
pub const IORING_RESTRICTION_SQE_OP: u16 = 1;
pub const IORING_RESTRICTION_SQE_FLAGS_ALLOWED: u16 = 2;
pub const IORING_RESTRICTION_SQE_FLAGS_REQUIRED: u16 = 3;

/// struct io_uring_restriction: `arg` is the opcode (SQE_OP) or the flag bits (SQE_FLAGS_*).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct UringRestriction {
    pub opcode: u16,
    pub arg: u8,
    pub resv: u8,
    pub resv2: [u32; 3],
}

/// io_uring_setup(2). With IORING_SETUP_NO_MMAP, `p.sq_off.user_addr` and `p.cq_off.user_addr` must point
/// to page-aligned memory large enough for the SQEs and for the rings; the kernel pins those pages.
pub fn io_uring_setup(entries: u32, p: &mut UringParams) -> SysResult<OwnedFd> {
    // SAFETY: `p` is a valid, exclusively borrowed io_uring_params the kernel reads and fills during the
    // call. The user memory it may name is checked by the kernel (EFAULT when unmapped or too small).
    let r = result("io_uring_setup", unsafe {
        libc::syscall(libc::SYS_io_uring_setup, entries, p as *mut UringParams)
    })?;
    // SAFETY: the kernel just returned `r` as a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(r as RawFd) })
}

/// io_uring_register(2) with an argument array of `nr` elements of `T`.
///
/// # Safety
/// `arg` must be the array of `nr` elements that the register opcode `op` expects (iovecs for BUFFERS, i32
/// fds for FILES, restrictions for RESTRICTIONS, empty for ENABLE_RINGS), and registered buffers must stay
/// mapped while the ring can use them.
pub unsafe fn io_uring_register<T>(fd: RawFd, op: u32, arg: &[T]) -> SysResult<()> {
    let ptr = if arg.is_empty() {
        std::ptr::null()
    } else {
        arg.as_ptr()
    };
    // SAFETY: the caller guarantees `arg` matches `op`; the slice is alive for the whole call.
    result("io_uring_register", unsafe {
        libc::syscall(libc::SYS_io_uring_register, fd, op, ptr, arg.len() as u32)
    })
    .map(|_| ())
}

//! Perf events (counting perf_event_open, reading, enabling and disabling this task's counters) and the
//! tracefs mount the tracepoint ids come from.

use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::path::Path;

use super::errno::{result, SysErr, SysResult};
use super::files::{cpath, read};

pub use perf_event_open_sys::bindings as perf;

/// perf_event_open(2) of a counting event for this process (pid 0, any CPU), inherited by threads created
/// afterwards (and so by io_uring's kernel helper threads), counting from the start.
pub fn perf_event_open_counter(type_: u32, config: u64) -> SysResult<OwnedFd> {
    let mut attr = perf::perf_event_attr {
        type_,
        size: std::mem::size_of::<perf::perf_event_attr>() as u32,
        config,
        ..Default::default()
    };
    attr.set_inherit(1);
    attr.set_disabled(0);
    // SAFETY: `attr` is a fully initialised perf_event_attr whose `size` matches the struct; pid 0 / cpu -1
    // / group -1 ask for a counter on this process; the result is checked and owned below.
    let fd = unsafe {
        perf_event_open_sys::perf_event_open(
            &mut attr,
            0,
            -1,
            -1,
            perf::PERF_FLAG_FD_CLOEXEC as libc::c_ulong,
        )
    };
    let fd = result("perf_event_open", fd)?;
    // SAFETY: the kernel just returned `fd` as a new descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// perf_event_open(2) of a counting event on one other process `pid` (not inherited), counting from now.
pub fn perf_event_open_task(type_: u32, config: u64, pid: i32) -> SysResult<OwnedFd> {
    let mut attr = perf::perf_event_attr {
        type_,
        size: std::mem::size_of::<perf::perf_event_attr>() as u32,
        config,
        ..Default::default()
    };
    attr.set_disabled(0);
    // SAFETY: `attr` is a fully initialised perf_event_attr whose `size` matches the struct; `pid` names
    // one task, cpu -1 any CPU, group -1 none; the result is checked and owned below.
    let fd = unsafe {
        perf_event_open_sys::perf_event_open(
            &mut attr,
            pid,
            -1,
            -1,
            perf::PERF_FLAG_FD_CLOEXEC as libc::c_ulong,
        )
    };
    let fd = result("perf_event_open", fd)?;
    // SAFETY: the kernel just returned `fd` as a new descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Reads a counting perf event's value (read_format 0: one u64, inherited children included).
pub fn perf_read(fd: RawFd) -> SysResult<u64> {
    let mut v = [0u8; 8];
    let n = read(fd, &mut v)?;
    if n != 8 {
        return Err(SysErr::new("read(perf)", libc::EIO));
    }
    Ok(u64::from_ne_bytes(v))
}

/// prctl(PR_TASK_PERF_EVENTS_DISABLE / _ENABLE): stops or restarts, in one call, every counter this task
/// created (and their inherited copies), so reading them does not count the reads.
pub fn perf_task_events(enable: bool) -> SysResult<()> {
    let op = if enable {
        libc::PR_TASK_PERF_EVENTS_ENABLE
    } else {
        libc::PR_TASK_PERF_EVENTS_DISABLE
    };
    // SAFETY: these prctl options take no pointer arguments.
    result("prctl", unsafe { libc::prctl(op, 0, 0, 0, 0) }).map(|_| ())
}

/// mount(2) a tracefs instance on `dir`.
pub fn mount_tracefs(dir: &Path) -> SysResult<()> {
    let d = cpath(dir)?;
    // SAFETY: all strings are NUL-terminated and outlive the call; no data argument.
    result("mount(tracefs)", unsafe {
        libc::mount(
            c"nodev".as_ptr(),
            d.as_ptr(),
            c"tracefs".as_ptr(),
            0,
            std::ptr::null(),
        )
    })
    .map(|_| ())
}

/// umount2(2) with MNT_DETACH.
pub fn umount_detach(dir: &Path) -> SysResult<()> {
    let d = cpath(dir)?;
    // SAFETY: `d` is NUL-terminated and outlives the call.
    result("umount2", unsafe {
        libc::umount2(d.as_ptr(), libc::MNT_DETACH)
    })
    .map(|_| ())
}

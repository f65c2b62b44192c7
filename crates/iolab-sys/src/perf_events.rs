//! Perf events (counting perf_event_open, reading, enabling and disabling this task's counters) and the
//! private tracefs instances the tracepoint ids come from (a detached mount, or one in a helper's namespace).

use std::ffi::CStr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

use super::errno::{result, SysErr, SysResult};
use super::files::{cpath, read};

pub use super::perf_abi as perf;
use perf::attr_flag;

/// perf_event_open(2) through syscall(2) (the C library has no wrapper).
///
/// # Safety
/// `attr` must point to a fully initialised perf_event_attr whose `size` is its size.
unsafe fn perf_event_open(
    attr: &perf::perf_event_attr,
    pid: libc::pid_t,
    cpu: libc::c_int,
    group: libc::c_int,
) -> libc::c_int {
    // SAFETY: the caller vouches for `attr`; the other arguments are integers the kernel checks.
    unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr as *const perf::perf_event_attr,
            pid,
            cpu,
            group,
            perf::PERF_FLAG_FD_CLOEXEC as libc::c_ulong,
        ) as libc::c_int
    }
}

/// perf_event_open(2) of a counting event for this process (pid 0, any CPU), inherited by threads created
/// afterwards (and so by io_uring's kernel helper threads), counting from the start.
pub fn perf_event_open_counter(type_: u32, config: u64) -> SysResult<OwnedFd> {
    let mut attr = perf::perf_event_attr::new(type_, config);
    attr.set_flag(attr_flag::INHERIT, true);
    // SAFETY: `attr` is a fully initialised perf_event_attr whose `size` matches the struct; pid 0 / cpu -1
    // / group -1 ask for a counter on this process; the result is checked and owned below.
    let fd = unsafe { perf_event_open(&attr, 0, -1, -1) };
    let fd = result("perf_event_open", fd)?;
    // SAFETY: the kernel just returned `fd` as a new descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// perf_event_open(2) of a counting event on one other process `pid` (not inherited), counting from now.
pub fn perf_event_open_task(type_: u32, config: u64, pid: i32) -> SysResult<OwnedFd> {
    let attr = perf::perf_event_attr::new(type_, config);
    // SAFETY: `attr` is a fully initialised perf_event_attr whose `size` matches the struct; `pid` names
    // one task, cpu -1 any CPU, group -1 none; the result is checked and owned below.
    let fd = unsafe { perf_event_open(&attr, pid, -1, -1) };
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

/// fsconfig(2) command that creates the superblock (linux/mount.h).
const FSCONFIG_CMD_CREATE: libc::c_uint = 6;
/// fsopen(2)/fsmount(2) flag: the new descriptor is close-on-exec (linux/mount.h; both are 1).
const FS_CLOEXEC: libc::c_uint = 1;

/// A tracefs instance that is mounted nowhere: fsopen(2), fsconfig(FSCONFIG_CMD_CREATE) and fsmount(2)
/// (Linux 5.2) give a descriptor of a detached mount that no mount namespace holds, so it never appears in
/// any mountinfo; it ends when the descriptor is closed, also when the process dies (SIGKILL included).
/// Files are reached through the descriptor (`/proc/self/fd/N/...`). Needs CAP_SYS_ADMIN; ENOSYS on kernels
/// before 5.2.
pub fn tracefs_detached() -> SysResult<OwnedFd> {
    // SAFETY: fsopen takes a NUL-terminated name that outlives the call and a flags word.
    let fs = result("fsopen(tracefs)", unsafe {
        libc::syscall(libc::SYS_fsopen, c"tracefs".as_ptr(), FS_CLOEXEC)
    })?;
    // SAFETY: the kernel just returned `fs` as a new descriptor nothing else owns.
    let fs = unsafe { OwnedFd::from_raw_fd(fs as RawFd) };
    // SAFETY: FSCONFIG_CMD_CREATE takes no key, value or aux argument (null, null, 0).
    result("fsconfig(tracefs)", unsafe {
        libc::syscall(
            libc::SYS_fsconfig,
            fs.as_raw_fd(),
            FSCONFIG_CMD_CREATE,
            std::ptr::null::<libc::c_char>(),
            std::ptr::null::<libc::c_void>(),
            0,
        )
    })?;
    // SAFETY: fsmount takes the configured context's descriptor, flags and mount attributes (none).
    let mnt = result("fsmount(tracefs)", unsafe {
        libc::syscall(libc::SYS_fsmount, fs.as_raw_fd(), FS_CLOEXEC, 0)
    })?;
    // SAFETY: the kernel just returned `mnt` as a new descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(mnt as RawFd) })
}

/// A child process that mounted tracefs in a mount namespace of its own (see [`tracefs_in_child`]); its
/// files are reached through `/proc/PID/root`. Dropping it lets the child exit, which ends the namespace
/// and the mount with it.
#[derive(Debug)]
pub struct TracefsChild {
    pid: i32,
    /// Closing this (the write end of a pipe the child waits on) tells the child to exit; the kernel closes
    /// it too if this process dies, so the child never outlives it.
    go: Option<OwnedFd>,
    mountpoint: PathBuf,
}

impl TracefsChild {
    /// Where the child's tracefs is seen from here.
    pub fn root(&self) -> PathBuf {
        let rel = self
            .mountpoint
            .strip_prefix("/")
            .unwrap_or(&self.mountpoint);
        PathBuf::from(format!("/proc/{}/root", self.pid)).join(rel)
    }
}

impl Drop for TracefsChild {
    fn drop(&mut self) {
        drop(self.go.take());
        let _ = super::process::waitpid(self.pid);
    }
}

/// What the child reports through its status pipe: the step that failed (0 = none) and its errno.
fn child_status(step: i32, errno: i32) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[..4].copy_from_slice(&step.to_ne_bytes());
    b[4..].copy_from_slice(&errno.to_ne_bytes());
    b
}

/// The forked child of [`tracefs_in_child`]: raw system calls only (the parent may have had other threads,
/// so nothing that allocates or takes a lock). Never returns.
fn tracefs_child_main(mp: &CStr, status: RawFd, go: RawFd) -> ! {
    let fail = |step: i32| -> ! {
        let b = child_status(step, super::errno::SysErr::last("").errno);
        // SAFETY: `b` is a valid buffer; write and _exit are async-signal-safe.
        unsafe {
            libc::write(status, b.as_ptr().cast(), b.len());
            libc::_exit(1)
        }
    };
    // SAFETY: each call below is a plain system call on integers or on NUL-terminated strings that live in
    // the parent's memory, copied into this child by fork and valid until it exits.
    unsafe {
        if libc::unshare(libc::CLONE_NEWNS) != 0 {
            fail(1);
        }
        // Nothing mounted here propagates back to the parent's namespace.
        let private = libc::MS_REC | libc::MS_PRIVATE;
        if libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            private,
            std::ptr::null(),
        ) != 0
        {
            fail(2);
        }
        // EBUSY: tracefs is mounted there already (systemd mounts it on most distributions), and this
        // namespace, a copy of the parent's, has it too: nothing to mount.
        if libc::mount(
            c"nodev".as_ptr(),
            mp.as_ptr(),
            c"tracefs".as_ptr(),
            0,
            std::ptr::null(),
        ) != 0
            && *libc::__errno_location() != libc::EBUSY
        {
            fail(3);
        }
        let ok = child_status(0, 0);
        libc::write(status, ok.as_ptr().cast(), ok.len());
        // Wait until the parent closes its end (done, or dead), then end the namespace by exiting.
        let mut b = [0u8; 1];
        while libc::read(go, b.as_mut_ptr().cast(), 1) < 0 {}
        libc::_exit(0)
    }
}

/// The fallback for kernels without fsmount(2): a forked child makes a mount namespace of its own
/// (unshare(CLONE_NEWNS), which a multi-threaded process cannot do itself: EINVAL), makes every mount in it
/// private, mounts tracefs on `mountpoint` (an existing directory, normally /sys/kernel/tracing) and waits.
/// The mount exists only in the child's namespace, which ends when the child exits: when the returned value
/// is dropped, when this process dies (the child's pipe reaches end of file) and when the child is killed.
/// The child takes SIGINT, SIGTERM and SIGHUP with their default action (never the parent's cleanup
/// handler). Needs CAP_SYS_ADMIN.
pub fn tracefs_in_child(mountpoint: &Path) -> SysResult<TracefsChild> {
    let mp = cpath(mountpoint)?;
    let (status_r, status_w) = super::ipc::pipe()?;
    let (go_r, go_w) = super::ipc::pipe()?;
    let signals = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];
    let old = super::process::block_signals(&signals)?;
    let pid = super::process::fork();
    if pid == Ok(0) {
        // Raw calls only (prctl, signal); a failure leaves the child as it is, still bounded by its pipe.
        let _ = super::process::child_dies_with_parent();
        super::process::restore_signal_mask(&old);
        // SAFETY: closing the ends this child does not use; raw close is async-signal-safe.
        unsafe {
            libc::close(status_r.as_raw_fd());
            libc::close(go_w.as_raw_fd());
        }
        tracefs_child_main(&mp, status_w.as_raw_fd(), go_r.as_raw_fd());
    }
    super::process::restore_signal_mask(&old);
    let pid = pid?;
    drop((status_w, go_r));
    let child = TracefsChild {
        pid,
        go: Some(go_w),
        mountpoint: mountpoint.to_path_buf(),
    };
    let mut b = [0u8; 8];
    let n = loop {
        match read(status_r.as_raw_fd(), &mut b) {
            Err(e) if e.errno == libc::EINTR => continue,
            r => break r?,
        }
    };
    if n != 8 {
        return Err(SysErr::new("fork(tracefs helper)", libc::ECHILD));
    }
    let step = i32::from_ne_bytes(b[..4].try_into().expect("4 bytes"));
    let errno = i32::from_ne_bytes(b[4..].try_into().expect("4 bytes"));
    match step {
        0 => Ok(child),
        1 => Err(SysErr::new("unshare(CLONE_NEWNS)", errno)),
        2 => Err(SysErr::new("mount(MS_PRIVATE)", errno)),
        _ => Err(SysErr::new("mount(tracefs)", errno)),
    }
}

/// What a sampling event samples (see [`perf_event_open_sampler`]).
#[derive(Debug, Clone, Copy)]
pub struct SamplerAttr {
    /// PERF_TYPE_HARDWARE/CPU_CYCLES or PERF_TYPE_SOFTWARE/CPU_CLOCK.
    pub type_: u32,
    pub config: u64,
    /// Samples per second of each running task (freq mode: the kernel adjusts the period).
    pub freq_hz: u64,
    /// Sample kernel code and kernel call chains too (else user space only).
    pub kernel: bool,
    /// Ask for the lost-sample count on read (PERF_FORMAT_LOST, Linux 6.0; older kernels refuse it).
    pub read_lost: bool,
}

/// perf_event_open(2) of a sampling event on this thread (pid 0) and one `cpu`, inherited by the threads
/// created afterwards (the kernel writes their samples into this event's ring buffer), opened disabled.
/// Each sample has the IP, the pid/tid and the call chain (kernel and user, with PERF_CONTEXT_* markers);
/// PERF_RECORD_COMM records name the threads; reading the descriptor gives (count, lost samples)
/// (read_format PERF_FORMAT_LOST). An inherited per-task event with cpu -1 cannot be mmapped (the kernel
/// refuses, so that all children do not write one buffer), hence one event per CPU.
pub fn perf_event_open_sampler(a: &SamplerAttr, cpu: i32) -> SysResult<OwnedFd> {
    let mut attr = perf::perf_event_attr::new(a.type_, a.config);
    attr.sample_type =
        (perf::PERF_SAMPLE_IP | perf::PERF_SAMPLE_TID | perf::PERF_SAMPLE_CALLCHAIN) as u64;
    if a.read_lost {
        attr.read_format = perf::PERF_FORMAT_LOST as u64;
    }
    attr.sample_period_or_freq = a.freq_hz;
    // Nobody polls the ring: a watermark above its size means the kernel never queues a wake-up.
    attr.wakeup_events_or_watermark = u32::MAX;
    for bit in [
        attr_flag::FREQ,
        attr_flag::WATERMARK,
        attr_flag::DISABLED,
        attr_flag::INHERIT,
        attr_flag::COMM,
        attr_flag::EXCLUDE_HV,
    ] {
        attr.set_flag(bit, true);
    }
    attr.set_flag(attr_flag::EXCLUDE_KERNEL, !a.kernel);
    attr.set_flag(attr_flag::EXCLUDE_CALLCHAIN_KERNEL, !a.kernel);
    // SAFETY: `attr` is a fully initialised perf_event_attr whose `size` matches the struct; pid 0 is
    // this thread, `cpu` one CPU, group -1 none; the result is checked and owned below.
    let fd = unsafe { perf_event_open(&attr, 0, cpu, -1) };
    let fd = result("perf_event_open", fd)?;
    // SAFETY: the kernel just returned `fd` as a new descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// PERF_EVENT_IOC_ENABLE / _DISABLE on one event and its inherited copies in the threads created since.
pub fn perf_event_enable(fd: RawFd, enable: bool) -> SysResult<()> {
    let req = if enable {
        perf::PERF_EVENT_IOC_ENABLE
    } else {
        perf::PERF_EVENT_IOC_DISABLE
    };
    // SAFETY: these ioctls take an integer argument (0: this event, not its group) and no pointer.
    let r = unsafe { libc::ioctl(fd, req, 0 as libc::c_ulong) };
    result("ioctl(perf enable)", r).map(|_| ())
}

/// Reads a sampling event's (count, lost samples) (opened with `read_lost`: the samples the kernel could
/// not write into the ring, its inherited copies' included, as they write through this event).
pub fn perf_read_lost(fd: RawFd) -> SysResult<(u64, u64)> {
    let mut v = [0u8; 16];
    let n = read(fd, &mut v)?;
    if n != 16 {
        return Err(SysErr::new("read(perf)", libc::EIO));
    }
    let word = |i: usize| u64::from_ne_bytes(v[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    Ok((word(0), word(1)))
}

/// A sampling event's ring buffer: the control page, then 2^n data pages the kernel writes records into.
/// iolab reads it after the kernel stopped writing (or while it writes: the head is read with acquire
/// ordering and the tail released after the copy, as the kernel's perf_event_mmap_page documents).
pub struct PerfRing {
    map: super::memory::Mapping,
    data_off: usize,
    data_size: usize,
}

// SAFETY: through a shared reference a PerfRing only reports its size; reading and moving the tail
// (`drain_into`) needs `&mut self`, so one thread at a time touches the ring.
unsafe impl Sync for PerfRing {}

impl PerfRing {
    /// mmap(2) the ring of event `fd`: one control page and `data_pages` (a power of two) data pages.
    pub fn map(fd: RawFd, data_pages: usize) -> SysResult<PerfRing> {
        let page = page_size();
        let map = super::memory::Mapping::shared(fd, (1 + data_pages) * page, 0, true)?;
        // SAFETY: the mapping starts with the kernel's perf_event_mmap_page (page aligned, so aligned for
        // it); data_offset/data_size were written by the kernel at mmap time and do not change.
        let (off, size) = unsafe {
            let mp = map.as_ptr() as *const perf::perf_event_mmap_page;
            (
                std::ptr::read_volatile(std::ptr::addr_of!((*mp).data_offset)),
                std::ptr::read_volatile(std::ptr::addr_of!((*mp).data_size)),
            )
        };
        // Kernels before 4.1 leave both 0: the data then starts after the first page.
        let (data_off, data_size) = if size == 0 {
            (page, data_pages * page)
        } else {
            (off as usize, size as usize)
        };
        Ok(PerfRing {
            map,
            data_off,
            data_size,
        })
    }

    /// Size of the data area in bytes.
    pub fn data_size(&self) -> usize {
        self.data_size
    }

    fn head_tail(&self) -> (&std::sync::atomic::AtomicU64, &std::sync::atomic::AtomicU64) {
        let mp = self.map.as_ptr() as *const perf::perf_event_mmap_page;
        // SAFETY: data_head and data_tail are 8-byte aligned u64 fields of the control page this value
        // maps for its whole life; the kernel and this reader access them only as whole words, so viewing
        // them as atomics is sound.
        unsafe {
            (
                &*(std::ptr::addr_of!((*mp).data_head) as *const std::sync::atomic::AtomicU64),
                &*(std::ptr::addr_of!((*mp).data_tail) as *const std::sync::atomic::AtomicU64),
            )
        }
    }

    /// Appends every byte the kernel wrote since the last call to `out`, in order (a record that wraps
    /// around the end of the ring comes out whole), and hands the space back to the kernel.
    pub fn drain_into(&mut self, out: &mut Vec<u8>) {
        let (head_a, tail_a) = self.head_tail();
        // Acquire: the kernel writes a record, then publishes data_head; reading head first with acquire
        // makes the record's bytes visible below.
        let head = head_a.load(std::sync::atomic::Ordering::Acquire);
        // Only this reader writes data_tail.
        let tail = tail_a.load(std::sync::atomic::Ordering::Relaxed);
        let len = head.wrapping_sub(tail).min(self.data_size as u64) as usize;
        let start = (tail % self.data_size as u64) as usize;
        let first = len.min(self.data_size - start);
        // SAFETY: data_off + data_size lies inside the mapping (the kernel reported both for this
        // mapping), start < data_size and first <= data_size - start, len - first <= start; the kernel
        // does not write the bytes between tail and head until data_tail moves past them.
        unsafe {
            let data = self.map.as_ptr().add(self.data_off);
            out.extend_from_slice(std::slice::from_raw_parts(data.add(start), first));
            out.extend_from_slice(std::slice::from_raw_parts(data, len - first));
        }
        // Release: the copy above is done before the kernel may overwrite that space.
        tail_a.store(head, std::sync::atomic::Ordering::Release);
    }
}

/// The page size (sysconf(_SC_PAGESIZE)); 4096 if it cannot be read.
pub fn page_size() -> usize {
    // SAFETY: sysconf takes no pointer and has no side effect.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

/// PERF_EVENT_IOC_SET_FILTER: an ftrace filter ("id == 18") on a tracepoint counter; inherited counters
/// (worker threads) use their parent's filter.
pub fn perf_set_filter(fd: &OwnedFd, filter: &CStr) -> SysResult<()> {
    // SAFETY: `fd` is an open perf event descriptor and `filter` a NUL-terminated string the kernel only
    // reads (the ioctl copies the string in).
    result("ioctl(PERF_EVENT_IOC_SET_FILTER)", unsafe {
        libc::ioctl(
            fd.as_raw_fd(),
            perf::PERF_EVENT_IOC_SET_FILTER,
            filter.as_ptr(),
        )
    })
    .map(|_| ())
}

/// The system call number of a syscall as its tracepoint names it (the `id` field of
/// raw_syscalls:sys_enter), for the names iolab's methods and runner make.
pub fn syscall_nr(name: &str) -> Option<i64> {
    syscall_nr_native(name).map(widen_nr)
}

/// A system call number (`c_long`: 32-bit on armv7) as an i64.
fn widen_nr<T: Into<i64>>(nr: T) -> i64 {
    nr.into()
}

fn syscall_nr_native(name: &str) -> Option<libc::c_long> {
    Some(match name {
        "write" => libc::SYS_write,
        "read" => libc::SYS_read,
        "pwrite64" => libc::SYS_pwrite64,
        "pread64" => libc::SYS_pread64,
        "pwritev" => libc::SYS_pwritev,
        "preadv" => libc::SYS_preadv,
        "pwritev2" => libc::SYS_pwritev2,
        "preadv2" => libc::SYS_preadv2,
        "writev" => libc::SYS_writev,
        "readv" => libc::SYS_readv,
        // glibc's lseek64 on 32-bit ARM is _llseek, and its sendfile64 is sendfile64.
        #[cfg(not(target_arch = "arm"))]
        "lseek" => libc::SYS_lseek,
        #[cfg(target_arch = "arm")]
        "lseek" => libc::SYS__llseek,
        "fsync" => libc::SYS_fsync,
        "msync" => libc::SYS_msync,
        "futex" => libc::SYS_futex,
        "getrusage" => libc::SYS_getrusage,
        // 32-bit ARM has only mmap2 (offsets in pages), the call glibc's mmap64 makes.
        #[cfg(not(target_arch = "arm"))]
        "mmap" => libc::SYS_mmap,
        #[cfg(target_arch = "arm")]
        "mmap" => libc::SYS_mmap2,
        "munmap" => libc::SYS_munmap,
        "io_submit" => libc::SYS_io_submit,
        "io_getevents" => libc::SYS_io_getevents,
        "io_uring_enter" => libc::SYS_io_uring_enter,
        "splice" => libc::SYS_splice,
        #[cfg(not(target_arch = "arm"))]
        "sendfile64" => libc::SYS_sendfile,
        #[cfg(target_arch = "arm")]
        "sendfile64" => libc::SYS_sendfile64,
        "copy_file_range" => libc::SYS_copy_file_range,
        #[cfg(target_arch = "x86_64")]
        "epoll_wait" => libc::SYS_epoll_wait,
        _ => return None,
    })
}

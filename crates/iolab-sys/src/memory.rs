//! Memory: file and anonymous mappings ([`Mapping`]), a page of counters shared with forked children,
//! memfd files, the locked-memory limit (RLIMIT_MEMLOCK) that io_uring's registered buffers count
//! against, the address-space limit (RLIMIT_AS, `ulimit -v`) and glibc malloc's arena count.

use std::ffi::CStr;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

use super::errno::{result, SysResult};
use super::lfs;

/// A MAP_SHARED file mapping, unmapped on drop.
pub struct Mapping {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is plain memory owned by this value; moving it to another thread is sound.
unsafe impl Send for Mapping {}

impl Mapping {
    /// mmap(2) `len` bytes of `fd` at `off` (page aligned) with MAP_SHARED.
    pub fn shared(fd: RawFd, len: usize, off: u64, writable: bool) -> SysResult<Mapping> {
        let prot = if writable {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        // SAFETY: a NULL hint lets the kernel choose the address; the result is checked for MAP_FAILED
        // and owned by the returned value, which unmaps it exactly once.
        let p = result("mmap", unsafe {
            lfs::mmap(
                std::ptr::null_mut(),
                len,
                prot,
                libc::MAP_SHARED,
                fd,
                off as lfs::off_t,
            )
        })?;
        Ok(Mapping { ptr: p.cast(), len })
    }

    /// mmap(2) of `len` zeroed anonymous bytes shared with children forked later (MAP_SHARED).
    pub fn shared_anonymous(len: usize) -> SysResult<Mapping> {
        Self::anonymous_with(len, libc::MAP_SHARED)
    }

    /// mmap(2) of `len` fresh private anonymous bytes (every page faults on its first touch).
    pub fn anonymous(len: usize) -> SysResult<Mapping> {
        Self::anonymous_with(len, libc::MAP_PRIVATE)
    }

    fn anonymous_with(len: usize, sharing: libc::c_int) -> SysResult<Mapping> {
        // SAFETY: a NULL hint and no descriptor; the result is checked for MAP_FAILED and owned by the
        // returned value, which unmaps it exactly once.
        let p = result("mmap", unsafe {
            lfs::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                sharing | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        })?;
        Ok(Mapping { ptr: p.cast(), len })
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// msync(2) with MS_SYNC over the whole mapping.
    pub fn msync(&self) -> SysResult<()> {
        // SAFETY: (ptr, len) is exactly the live mapping this value owns.
        result("msync", unsafe {
            libc::msync(self.ptr.cast(), self.len, libc::MS_SYNC)
        })
        .map(|_| ())
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: (ptr, len) is the mapping created in `shared` and not unmapped before.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// `N` zeroed counters in a MAP_SHARED anonymous page that children forked later see too; the page stays
/// mapped for the life of the process.
pub fn shared_counters<const N: usize>() -> SysResult<&'static [std::sync::atomic::AtomicU64; N]> {
    const { assert!(N * 8 <= 4096, "the counters fit in one page") };
    let m = Mapping::shared_anonymous(4096)?;
    let p = m.as_ptr() as *const [std::sync::atomic::AtomicU64; N];
    // The mapping is never unmapped, so the reference below stays valid for the whole process.
    std::mem::forget(m);
    // SAFETY: the page is 4096 zeroed, page-aligned bytes (aligned and large enough for N AtomicU64, as
    // asserted above, whose all-zero bit pattern is a valid value), mapped until the process ends, and
    // only ever accessed through atomics.
    Ok(unsafe { &*p })
}

/// `N` zeroed 32-bit words (futex words) in a MAP_SHARED anonymous page that children forked later see too;
/// the page stays mapped for the life of the process.
pub fn shared_words<const N: usize>() -> SysResult<&'static [std::sync::atomic::AtomicU32; N]> {
    const { assert!(N * 4 <= 4096, "the words fit in one page") };
    let m = Mapping::shared_anonymous(4096)?;
    let p = m.as_ptr() as *const [std::sync::atomic::AtomicU32; N];
    // The mapping is never unmapped, so the reference below stays valid for the whole process.
    std::mem::forget(m);
    // SAFETY: as in `shared_counters`: 4096 zeroed, page-aligned bytes, large enough for N AtomicU32
    // (asserted above), mapped until the process ends, only accessed through atomics.
    Ok(unsafe { &*p })
}

/// memfd_create(2): an anonymous tmpfs file, closed on exec.
pub fn memfd_create(name: &CStr) -> SysResult<OwnedFd> {
    // SAFETY: `name` is NUL-terminated and outlives the call.
    let fd = result("memfd_create", unsafe {
        libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC)
    })?;
    // SAFETY: the kernel just returned `fd` as a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// RLIMIT_MEMLOCK soft limit in bytes (None: unlimited).
pub fn memlock_limit() -> Option<u64> {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `rl` is a valid out-pointer.
    let got = result("getrlimit", unsafe {
        libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut rl)
    });
    if got.is_err() || rl.rlim_cur == libc::RLIM_INFINITY {
        None
    } else {
        Some(widen(rl.rlim_cur))
    }
}

/// A C integer field (rlim_t is 32-bit on armv7 glibc, 64-bit elsewhere) as a u64, without a cast that
/// is a no-op on one target and a lint on another.
fn widen<T: Into<u64>>(v: T) -> u64 {
    v.into()
}

/// RLIMIT_AS soft limit in bytes (`ulimit -v`; None: unlimited). Async-signal-safe (one getrlimit call).
pub fn address_space_limit() -> Option<u64> {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `rl` is a valid out-pointer.
    let got = result("getrlimit", unsafe {
        libc::getrlimit(libc::RLIMIT_AS, &mut rl)
    });
    if got.is_err() || rl.rlim_cur == libc::RLIM_INFINITY {
        None
    } else {
        Some(widen(rl.rlim_cur))
    }
}

/// mallopt(M_ARENA_MAX): at most `n` glibc malloc arenas. Each arena beyond the first reserves 64 MiB of
/// address space when a thread first allocates, which counts against RLIMIT_AS although it is never used.
/// Other C libraries (musl, in the static board builds) have one heap and no such knob: false.
#[cfg(target_env = "gnu")]
pub fn limit_malloc_arenas(n: u32) -> bool {
    // SAFETY: mallopt takes integers only; M_ARENA_MAX is a documented parameter.
    unsafe { libc::mallopt(libc::M_ARENA_MAX, n.max(1) as libc::c_int) == 1 }
}

/// See the glibc version: musl's malloc has no arenas to limit.
#[cfg(not(target_env = "gnu"))]
pub fn limit_malloc_arenas(_n: u32) -> bool {
    false
}

/// malloc_trim(0): hands the heap's free pages back to the kernel, wherever in the heap they are (glibc
/// returns only its top otherwise). After many small allocations were freed among ones kept (records
/// parsed whole, then cut down to what is shown), the freed pages no longer count as resident.
#[cfg(target_env = "gnu")]
pub fn release_free_heap() {
    // SAFETY: malloc_trim takes a size only and touches no memory the caller holds.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// See the glibc version: musl's malloc returns freed memory itself.
#[cfg(not(target_env = "gnu"))]
pub fn release_free_heap() {}

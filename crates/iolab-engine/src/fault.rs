//! Failures that would otherwise end iolab without a word, leaving its files behind.
//!
//! - A write through a shared mapping cannot return ENOSPC: when the filesystem has no block for a page,
//!   the store faults with SIGBUS. [`reserve_for_mapping`] is the root fix: before a file is mapped for
//!   writing, fallocate(2) gives the mapped range its blocks, so a full filesystem is an ENOSPC error
//!   before the run (exit 1, the file removed, a sweep goes on to its next point). Where fallocate is not
//!   supported (EOPNOTSUPP), statvfs's free space is checked instead, and the result says the blocks were
//!   not reserved.
//! - Some faults remain possible (a copy-on-write filesystem needs new blocks to rewrite reserved ones, a
//!   quota or another program can shrink what is left, the file can be truncated under iolab): the
//!   SIGBUS handler that [`MappedTarget`] installs recognises a fault inside a registered target mapping,
//!   removes what iolab created, says what happened and what to do, and exits 1. Other SIGBUS go to the
//!   handler that was there before (Rust's) or the default action.
//! - An allocation that fails outside the fallible paths of `mem.rs` aborts (SIGABRT). [`install`]'s
//!   handler removes what iolab created and, when the allocator saw an allocation fail
//!   ([`crate::mem::Tracked`]), says "out of memory" with the size and the limit and exits 1; any other
//!   abort keeps its status (134) after the files are removed.
//!
//! Handlers run only async-signal-safe code: atomics, getrlimit, unlink/rmdir, write and _exit; their
//! messages are put together in a buffer on the stack.

use crate::error::{Error, Result, SysFailure};
use crate::units::fmt_size;
use iolab_sys as sys;
use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

// ---------------------------------------------------------------------------------------------------
// Reserving the blocks of a mapped range.

/// Gives [off, end) of the file open at `fd` (for writing) its blocks before it is mapped for writing (fallocate mode 0;
/// the data already there is unchanged). Returns the note the result carries. A full filesystem is an
/// error naming ENOSPC and what to do; a filesystem without fallocate is checked with statvfs instead.
pub fn reserve_for_mapping(fd: OwnedFd, off: u64, end: u64, shown: &str) -> Result<String> {
    let len = end.saturating_sub(off);
    let path = &sys::fd_path(fd.as_raw_fd());
    match sys::fallocate(fd.as_raw_fd(), off, len) {
        Ok(()) => Ok(format!(
            "mmap: iolab reserved the mapped range's {} with fallocate(2) before the run (not timed): a store to a \
             page the filesystem has no block for faults with SIGBUS, so a full filesystem is found before the run \
             (ENOSPC); the run's page faults find their blocks allocated",
            fmt_size(len)
        )),
        Err(e) if e.errno == libc::ENOSPC || e.errno == libc::EDQUOT => {
            let free = sys::fs_free_bytes(path)
                .map(|f| format!("{} is free there", fmt_size(f)))
                .unwrap_or_else(|_| "its free space is unknown".into());
            Err(Error::Sys(SysFailure {
                err: e,
                context: Some(shown.to_string()),
                hint: Some(format!(
                    "the filesystem cannot hold the {} the mmap run maps for writing ({free}); a full filesystem \
                     cannot be reported during a mapped write (it faults), so iolab reserves the blocks first: \
                     free space, use a smaller --file-size or --ops, or a target on another filesystem",
                    fmt_size(len)
                )),
            }))
        }
        Err(e) if e.errno == libc::EOPNOTSUPP => check_free_space(path, fd.as_raw_fd(), len, shown),
        Err(e) => Err(Error::sys_on(e, shown)),
    }
}

/// Without fallocate: the free space statvfs reports must cover what the mapped writes may allocate (the
/// range less the blocks the file already has).
fn check_free_space(path: &Path, fd: i32, len: u64, shown: &str) -> Result<String> {
    let have = sys::fstat(fd)
        .map(|st| st.st_blocks as u64 * 512)
        .unwrap_or(0);
    let need = len.saturating_sub(have);
    let free = sys::fs_free_bytes(path).map_err(|e| Error::sys_on(e, shown))?;
    if free < need {
        return Err(Error::Runtime(format!(
            "{shown}: no space for the mmap run (ENOSPC): its filesystem has {} free, less than the {} the mapped \
             writes may need, and it cannot reserve blocks (fallocate: EOPNOTSUPP), so the writes would fault with \
             SIGBUS; free space, use a smaller --file-size or --ops, or a target on another filesystem",
            fmt_size(free),
            fmt_size(need)
        )));
    }
    Ok(format!(
        "mmap: this filesystem cannot reserve blocks (fallocate(2): EOPNOTSUPP), so the mapped range's blocks were \
         not reserved; statvfs showed {} free for the {} the writes may need. Should it fill during the run, a \
         mapped write faults (SIGBUS: iolab stops with exit 1 and a message, its files removed) or, where blocks \
         are allocated at writeback, fails at --msync/--fsync or is lost (--verify finds it)",
        fmt_size(free),
        fmt_size(need)
    ))
}

// ---------------------------------------------------------------------------------------------------
// SIGBUS in a mapped target.

/// Target mappings at once: one per worker thread (at most 1024).
const MAPS: usize = 1024;

/// Slot i: the mapping's first address (0: free), its length and its file's path (a leaked C string,
/// freed after the slot is cleared). Written under `MAP_LOCK`, read by the handler without locking.
static MAP_START: [AtomicUsize; MAPS] = [const { AtomicUsize::new(0) }; MAPS];
static MAP_LEN: [AtomicUsize; MAPS] = [const { AtomicUsize::new(0) }; MAPS];
static MAP_PATH: [AtomicPtr<libc::c_char>; MAPS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; MAPS];
static MAP_LOCK: Mutex<()> = Mutex::new(());
/// The SIGBUS action before iolab's (Rust's handler), to hand other faults to.
static OLD_BUS: OnceLock<libc::sigaction> = OnceLock::new();
/// The process that installed the handlers: a forked child (the progress helper) leaves faults and
/// aborts to the default action and removes none of its parent's files.
static OWNER: AtomicU32 = AtomicU32::new(0);

/// A target mapping registered for the SIGBUS handler while this value lives.
pub struct MappedTarget {
    slot: Option<usize>,
}

impl MappedTarget {
    /// Registers [start, start + len), a mapping of the file at `path` (installs the handler once).
    pub fn register(start: *const u8, len: usize, path: &Path) -> MappedTarget {
        OLD_BUS.get_or_init(|| {
            OWNER.store(std::process::id(), Ordering::Relaxed);
            sys::set_fault_handler(libc::SIGBUS, on_bus).unwrap_or_else(|e| {
                eprintln!(
                    "iolab: warning: cannot install the SIGBUS handler ({}): a mapped write into a full filesystem \
                     would end iolab without a message",
                    sys::errno_name(e.errno)
                );
                // SAFETY: an all-zero sigaction is a valid value (SIG_DFL).
                unsafe { std::mem::zeroed() }
            })
        });
        let Ok(c) = CString::new(path.as_os_str().as_encoded_bytes()) else {
            return MappedTarget { slot: None };
        };
        let _g = MAP_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        let Some(i) = MAP_START
            .iter()
            .position(|s| s.load(Ordering::Relaxed) == 0)
        else {
            return MappedTarget { slot: None };
        };
        MAP_LEN[i].store(len, Ordering::Relaxed);
        MAP_PATH[i].store(c.into_raw(), Ordering::Relaxed);
        // Release: the handler that sees the start (Acquire) sees the length and the path too.
        MAP_START[i].store(start as usize, Ordering::Release);
        MappedTarget { slot: Some(i) }
    }
}

impl Drop for MappedTarget {
    fn drop(&mut self) {
        let Some(i) = self.slot else { return };
        let _g = MAP_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        MAP_START[i].store(0, Ordering::Release);
        let p = MAP_PATH[i].swap(std::ptr::null_mut(), Ordering::AcqRel);
        if !p.is_null() {
            // SAFETY: `p` came from CString::into_raw in `register`; the slot no longer holds it. A handler
            // that read it before ends the process without returning here.
            drop(unsafe { CString::from_raw(p) });
        }
    }
}

/// The registered target mapping holding `addr`: its path.
fn mapping_of(addr: usize) -> Option<*const libc::c_char> {
    (0..MAPS).find_map(|i| {
        let start = MAP_START[i].load(Ordering::Acquire);
        let len = MAP_LEN[i].load(Ordering::Relaxed);
        (start != 0 && addr >= start && addr - start < len)
            .then(|| MAP_PATH[i].load(Ordering::Relaxed) as *const libc::c_char)
            .filter(|p| !p.is_null())
    })
}

extern "C" fn on_bus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler; si_addr is the faulting address
    // for SIGBUS.
    let addr = unsafe { (*info).si_addr() } as usize;
    let path = (std::process::id() == OWNER.load(Ordering::Relaxed))
        .then(|| mapping_of(addr))
        .flatten();
    let Some(path) = path else {
        if let Some(old) = OLD_BUS.get() {
            // SAFETY: called from the SIGBUS handler with the kernel's arguments; `old` came from sigaction.
            unsafe { sys::chain_signal(old, sig, info, ctx) };
        } else {
            sys::default_signal(sig);
        }
        return;
    };
    let removed = crate::cleanup::remove_registered();
    let mut m = Line::new();
    m.push(b"iolab: SIGBUS: a page of the mapping of ");
    // SAFETY: registered paths are NUL-terminated strings that stay allocated while registered; the
    // process ends below.
    m.push(unsafe { std::ffi::CStr::from_ptr(path) }.to_bytes());
    m.push(b" (at 0x");
    m.push_hex(addr as u64);
    m.push(
        b") could not be given a block: its filesystem is full (ENOSPC) or over quota (EDQUOT), or the file was \
          truncated under iolab. Free space on that filesystem, use a smaller --file-size or --ops, or a target on \
          another filesystem",
    );
    if removed {
        m.push(b"; removed what iolab created");
    }
    m.push(b"\n");
    sys::write_stderr_and_exit(m.bytes(), 1);
}

// ---------------------------------------------------------------------------------------------------
// SIGABRT after a failed allocation.

static OLD_ABRT: OnceLock<libc::sigaction> = OnceLock::new();
/// A panic said ENOMEM (Rust's runtime panics, then aborts, when a new thread cannot map its signal
/// stack, "failed to allocate an alternative stack: Cannot allocate memory (os error 12)").
static ENOMEM_PANIC: AtomicBool = AtomicBool::new(false);

/// Installs the SIGABRT handler and a panic hook that notes panics for want of memory (once; the `iolab`
/// binary calls this first thing) and, under an address-space limit, keeps glibc's malloc arenas within it
/// ([`crate::mem::fit_malloc_to_limit`]).
pub fn install() {
    crate::mem::fit_malloc_to_limit();
    OLD_ABRT.get_or_init(|| {
        OWNER.store(std::process::id(), Ordering::Relaxed);
        let before = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let text = info.payload_as_str().unwrap_or("");
            if text.contains("(os error 12)") {
                ENOMEM_PANIC.store(true, Ordering::Relaxed);
            }
            before(info)
        }));
        // SAFETY: an all-zero sigaction is a valid value (SIG_DFL).
        sys::set_fault_handler(libc::SIGABRT, on_abort).unwrap_or(unsafe { std::mem::zeroed() })
    });
}

/// What an out-of-memory message tells a run to do ([`set_oom_remedy`] for another command).
const RUN_REMEDY: &str = "lower --bs, --qd, --threads or --stdio-buffer";
static OOM_REMEDY: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// What the out-of-memory message tells this command's user to do, where a run's flags are not what
/// took the memory (a reader of record files: "give it fewer or smaller files"). Set once, first.
pub fn set_oom_remedy(remedy: &'static str) {
    let _ = OOM_REMEDY.set(remedy);
}

extern "C" fn on_abort(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    if std::process::id() == OWNER.load(Ordering::Relaxed) {
        let removed = crate::cleanup::remove_registered();
        let mut m = Line::new();
        let failed = crate::mem::unhandled_failure();
        if failed.is_some() || ENOMEM_PANIC.load(Ordering::Relaxed) {
            match failed {
                Some(size) => {
                    m.push(b"iolab: out of memory (ENOMEM): an allocation of ");
                    m.push_u64(size as u64);
                    m.push(b" bytes failed; ");
                }
                None => m.push(
                    b"iolab: out of memory (ENOMEM): a thread could not get memory (said above); ",
                ),
            }
            match sys::address_space_limit() {
                Some(l) => {
                    m.push(b"the address-space limit (ulimit -v, RLIMIT_AS) is ");
                    m.push_u64(l);
                    m.push(b" bytes (");
                    m.push_u64(l >> 20);
                    m.push(b" MiB): raise it, or");
                }
                None => m.push(
                    b"no address-space limit is set (ulimit -v), so the machine's memory ran out (see MemAvailable \
                      in /proc/meminfo):",
                ),
            }
            m.push(b" ");
            m.push(OOM_REMEDY.get().copied().unwrap_or(RUN_REMEDY).as_bytes());
            if removed {
                m.push(b"; removed what iolab created");
            }
            m.push(b"\n");
            sys::write_stderr_and_exit(m.bytes(), 1);
        }
        if removed {
            sys::write_stderr_raw(b"iolab: aborted; removed what iolab created\n");
        }
    }
    match OLD_ABRT.get() {
        // SAFETY: called from the SIGABRT handler with the kernel's arguments; `old` came from sigaction.
        Some(old) => unsafe { sys::chain_signal(old, sig, info, ctx) },
        None => sys::default_signal(sig),
    }
    // Returning lets abort(3) restore the default action and raise SIGABRT again: the status stays 134.
}

/// A message line put together without allocating (for signal handlers); longer text is cut.
struct Line {
    buf: [u8; 1024],
    len: usize,
}

impl Line {
    fn new() -> Line {
        Line {
            buf: [0; 1024],
            len: 0,
        }
    }
    fn push(&mut self, b: &[u8]) {
        let n = b.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&b[..n]);
        self.len += n;
    }
    fn push_u64(&mut self, v: u64) {
        self.push_radix(v, 10);
    }
    fn push_hex(&mut self, v: u64) {
        self.push_radix(v, 16);
    }
    fn push_radix(&mut self, mut v: u64, radix: u64) {
        let mut d = [0u8; 20];
        let mut i = d.len();
        loop {
            i -= 1;
            d[i] = b"0123456789abcdef"[(v % radix) as usize];
            v /= radix;
            if v == 0 {
                break;
            }
        }
        self.push(&d[i..]);
    }
    fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_format_numbers_and_stop_at_their_end() {
        let mut l = Line::new();
        l.push(b"n=");
        l.push_u64(0);
        l.push(b" ");
        l.push_u64(18_446_744_073_709_551_615);
        l.push(b" 0x");
        l.push_hex(0xdead_beef);
        assert_eq!(l.bytes(), b"n=0 18446744073709551615 0xdeadbeef");
        l.push(&[b'x'; 2000]);
        assert_eq!(l.bytes().len(), 1024);
    }

    #[test]
    fn registered_mappings_are_found_by_address_until_dropped() {
        // An address no real mapping uses, on 64-bit and 32-bit targets alike (registration only records it).
        let base = ((usize::MAX / 16) * 7) & !0xfff;
        let m = MappedTarget::register(base as *const u8, 8192, Path::new("/tmp/x"));
        let p = mapping_of(base + 8191).expect("inside");
        // SAFETY: registered paths are NUL-terminated and live while `m` does.
        assert_eq!(unsafe { std::ffi::CStr::from_ptr(p) }.to_bytes(), b"/tmp/x");
        assert!(mapping_of(base + 8192).is_none());
        assert!(mapping_of(base - 1).is_none());
        drop(m);
        assert!(mapping_of(base).is_none());
    }
}

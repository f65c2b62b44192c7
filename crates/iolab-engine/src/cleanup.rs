//! Files and directories iolab created, removed at exit unless `--keep`, also on Ctrl-C, SIGTERM and SIGHUP.
//! Each is also journaled (`crate::leftovers`) for `iolab clean`, which removes what a SIGKILL or SIGQUIT
//! left.
//!
//! Normal exits remove them through [`Created`]'s Drop. A signal runs a plain sigaction handler that only
//! makes async-signal-safe calls: it unlinks the registered files, removes the registered directories
//! (newest first, so a directory's files go before it), writes one line to stderr and `_exit(130)`s.
//!
//! This deliberately does not use a handler thread (as the `ctrlc` crate does): a second thread makes the
//! process multi-threaded, and then every syscall of a one-thread run costs more than in the programs being
//! compared (glibc's cancellation bookkeeping and the kernel's reference counting on a shared file table:
//! +40 to 60 ns on a 140 ns write to /dev/null here).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::{Mutex, Once};

/// Registered paths at once; more are removed at normal exit but not by the signal handler (said on stderr).
const SLOTS: usize = 64;

/// Written by `register`/`Drop` under `LOCK`, read by the signal handler without locking: each slot is an
/// atomic pointer to a leaked C string (null = empty), so the handler sees either a whole path or none.
static PATHS: [AtomicPtr<libc::c_char>; SLOTS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];
static IS_DIR: [AtomicBool; SLOTS] = [const { AtomicBool::new(false) }; SLOTS];
static LOCK: Mutex<()> = Mutex::new(());
/// A path was registered without a slot: the handler cannot remove everything, so it keeps the journal.
static OVERFLOWED: AtomicBool = AtomicBool::new(false);
static HANDLER: Once = Once::new();
/// A progress helper may have a status line on the terminal (`crate::progress`): the handler's message
/// clears it first, instead of following it on the same line.
static STATUS_LINE: AtomicBool = AtomicBool::new(false);

/// Says whether a status line may be on stderr's terminal (see `STATUS_LINE`).
pub fn status_line_shown(shown: bool) {
    STATUS_LINE.store(shown, Ordering::SeqCst);
}

/// A zram device a suite made, for the signal handler: its reset attribute's path and its number as text
/// (C strings leaked by [`register_zram`]; null: none).
static ZRAM_RESET: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());
static ZRAM_NUMBER: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());
/// The handler could not reset the zram device (it stays in the journal for `iolab clean`).
static ZRAM_LEFT: AtomicBool = AtomicBool::new(false);

/// Registers /dev/zram`dev` for a reset and hot_remove on Ctrl-C, SIGTERM or SIGHUP (its Drop does it at a
/// normal exit; `iolab clean` after a kill).
pub fn register_zram(dev: u32) {
    install_signal_handler();
    let c = |s: String| CString::new(s).expect("no NUL").into_raw();
    let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    ZRAM_NUMBER.store(c(dev.to_string()), Ordering::Release);
    ZRAM_RESET.store(c(format!("/sys/block/zram{dev}/reset")), Ordering::Release);
}

/// The zram device is reset and removed (or about to be, by its Drop): the handler leaves it.
pub fn unregister_zram() {
    let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    for a in [&ZRAM_RESET, &ZRAM_NUMBER] {
        let p = a.swap(std::ptr::null_mut(), Ordering::AcqRel);
        if !p.is_null() {
            // SAFETY: `p` came from CString::into_raw in `register_zram` and no slot holds it any more; a
            // handler that loaded it before the swap ends the process without returning here.
            drop(unsafe { CString::from_raw(p) });
        }
    }
}

/// In the handler: resets and removes the registered zram device; None when there is none.
fn reset_registered_zram() -> Option<bool> {
    let (reset, number) = (
        ZRAM_RESET.load(Ordering::Acquire),
        ZRAM_NUMBER.load(Ordering::Acquire),
    );
    if reset.is_null() || number.is_null() {
        return None;
    }
    let reset_once = || {
        // SAFETY: both are C strings leaked by `register_zram`, freed only after being cleared; the
        // caller ends the process.
        unsafe { iolab_sys::write_file_raw(reset, c"1".as_ptr()) }
    };
    // The kernel refuses the reset while the device is open, and during a zram step iolab holds it open
    // (its O_EXCL claim, the method's descriptors, an io_uring's or an AIO context's references): let go
    // of every descriptor but stdin/out/err, then try for up to a second (a ring's teardown is deferred).
    let mut reset_ok = reset_once();
    if !reset_ok {
        iolab_sys::close_from_raw(3);
        for _ in 0..20 {
            iolab_sys::sleep_ms_raw(50);
            reset_ok = reset_once();
            if reset_ok {
                break;
            }
        }
    }
    // SAFETY: as above.
    Some(
        reset_ok
            && unsafe {
                iolab_sys::write_file_raw(c"/sys/class/zram-control/hot_remove".as_ptr(), number)
            },
    )
}

/// Removes every registered path (newest first) and the registered zram device and, when nothing the
/// journal records is left, the journal of them; true if something was removed. Async-signal-safe: for
/// handlers that end the process right after (the paths' strings stay allocated, their Created values are
/// not dropped).
pub(crate) fn remove_registered() -> bool {
    let (mut removed, mut all) = (0, !OVERFLOWED.load(Ordering::SeqCst));
    match reset_registered_zram() {
        Some(true) => removed += 1,
        Some(false) => {
            all = false;
            ZRAM_LEFT.store(true, Ordering::SeqCst);
        }
        None => {}
    }
    for i in (0..SLOTS).rev() {
        // Acquire: pairs with the Release store in `register`, so the string's bytes are visible.
        let p = PATHS[i].load(Ordering::Acquire);
        if !p.is_null() {
            // SAFETY: non-null slots hold C strings leaked by `register` and freed only after the slot is
            // cleared; the caller ends the process, so nothing frees them during this loop.
            if unsafe { iolab_sys::remove_path_raw(p, IS_DIR[i].load(Ordering::Relaxed)) } {
                removed += 1;
            } else {
                all = false;
            }
        }
    }
    // The journal of what iolab created goes too when nothing it records is left.
    crate::leftovers::unlink_journal_if_all_removed(all, removed);
    removed > 0
}

extern "C" fn on_signal(_sig: libc::c_int) {
    if STATUS_LINE.load(Ordering::SeqCst) {
        iolab_sys::write_stderr_raw(b"\r\x1b[K");
    }
    let removed = remove_registered();
    let msg: &[u8] = if ZRAM_LEFT.load(Ordering::SeqCst) {
        b"iolab: interrupted; its zram device could not be reset (still in use): `iolab clean` resets it\n"
    } else if removed {
        b"iolab: interrupted; removed what iolab created\n"
    } else {
        b"iolab: interrupted\n"
    };
    iolab_sys::write_stderr_and_exit(msg, 130);
}

/// Installs the signal handler once per process.
pub fn install_signal_handler() {
    HANDLER.call_once(|| {
        if let Err(e) = iolab_sys::set_signal_handler(&[libc::SIGINT, libc::SIGTERM, libc::SIGHUP], on_signal) {
            eprintln!(
                "iolab: warning: cannot install the Ctrl-C handler ({}); files iolab creates may stay behind if interrupted",
                iolab_sys::errno_name(e.errno)
            );
        }
    });
}

/// A path iolab created: removed when dropped, unless kept.
#[derive(Debug)]
pub struct Created {
    path: PathBuf,
    keep: bool,
    slot: Option<usize>,
    /// Its entry in the leftovers journal (`crate::leftovers`).
    journal: Option<u64>,
}

impl Created {
    /// Registers `path` for removal at exit (and on a signal) unless `keep`.
    pub fn register(path: &Path, keep: bool) -> Created {
        let mut slot = None;
        let mut journal = None;
        if !keep {
            install_signal_handler();
            // Journaled first, so that a signal from now on finds it in the journal or removes it.
            journal = crate::leftovers::record(path);
            let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
            if let (Some(i), Ok(c)) = (
                PATHS
                    .iter()
                    .position(|p| p.load(Ordering::Relaxed).is_null()),
                CString::new(path.as_os_str().as_bytes()),
            ) {
                IS_DIR[i].store(path.is_dir(), Ordering::Relaxed);
                PATHS[i].store(c.into_raw(), Ordering::Release);
                slot = Some(i);
            } else {
                OVERFLOWED.store(true, Ordering::SeqCst);
                eprintln!(
                    "iolab: warning: {} will not be removed if iolab is interrupted (`iolab clean` removes it)",
                    path.display()
                );
            }
        }
        Created {
            path: path.to_path_buf(),
            keep,
            slot,
            journal,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn kept(&self) -> bool {
        self.keep
    }
}

impl Drop for Created {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        if let Some(i) = self.slot {
            let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
            let p = PATHS[i].swap(std::ptr::null_mut(), Ordering::AcqRel);
            if !p.is_null() {
                // SAFETY: `p` came from CString::into_raw in `register` and the slot no longer holds it. A
                // signal handler that loaded it before the swap exits the process without returning here.
                drop(unsafe { CString::from_raw(p) });
            }
        }
        let removed = if self.path.is_dir() {
            std::fs::remove_dir_all(&self.path)
        } else {
            std::fs::remove_file(&self.path)
        };
        // A path that could not be removed stays in the journal, for `iolab clean`.
        if removed.is_ok() || !self.path.exists() {
            if let Some(id) = self.journal {
                crate::leftovers::forget(id);
            }
        }
    }
}

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

use crate::error::{Error, Result};
use crate::names::open_parent;
use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU64, Ordering};
use std::sync::{Mutex, Once};

/// Registered paths at once; more are removed at normal exit but not by the signal handler (said on stderr).
const SLOTS: usize = 64;

/// Written by `register`/`Drop` under `LOCK`, read by the signal handler without locking: each slot is an
/// atomic pointer to a leaked C string, a name in the directory `DIRS[i]` (null = empty), so the handler
/// sees either a whole name or none; the other arrays are written before the name (Release) and read
/// after it (Acquire). The handler removes a name only while it is still the file (`DEVS`, `INOS`) iolab
/// made.
static NAMES: [AtomicPtr<libc::c_char>; SLOTS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];
static DIRS: [AtomicI32; SLOTS] = [const { AtomicI32::new(-1) }; SLOTS];
static DEVS: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];
static INOS: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];
static IS_DIR: [AtomicBool; SLOTS] = [const { AtomicBool::new(false) }; SLOTS];
/// Set by [`remove_registered`] when something it should remove was left (the message says so).
static SOME_LEFT: AtomicBool = AtomicBool::new(false);
/// A directory whose files iolab's children write (`Created::temp_tree`): the handler unlinks the files
/// in it before removing it.
static TREE: [AtomicBool; SLOTS] = [const { AtomicBool::new(false) }; SLOTS];
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

/// The memory cgroup of `--memory-limit`, for the signal handler: the cgroup.procs file of the cgroup the
/// process came from, the process id as text, and the cgroup's directory (C strings leaked by
/// [`register_cgroup`]; null: none).
static CGROUP: [AtomicPtr<libc::c_char>; 3] = [const { AtomicPtr::new(std::ptr::null_mut()) }; 3];
/// The registered cgroup exists (made by iolab): only then may the handler remove it.
static CGROUP_MADE: AtomicBool = AtomicBool::new(false);

/// The registered cgroup is made: from now on the handler removes it.
pub fn cgroup_made() {
    CGROUP_MADE.store(true, Ordering::SeqCst);
}

/// Registers the memory cgroup `dir` the process moved into from the cgroup whose cgroup.procs is `home`:
/// on Ctrl-C, SIGTERM or SIGHUP the handler moves the process back and removes it (its Drop at a normal
/// exit; `iolab clean` after a kill).
pub fn register_cgroup(home: &Path, dir: &Path) {
    install_signal_handler();
    let c = |s: &OsStr| {
        CString::new(s.as_bytes())
            .expect("no NUL in a path")
            .into_raw()
    };
    let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let pid = std::process::id().to_string();
    for (slot, s) in CGROUP
        .iter()
        .zip([home.as_os_str(), OsStr::new(&pid), dir.as_os_str()])
    {
        slot.store(c(s), Ordering::Release);
    }
}

/// The cgroup is left and removed (or about to be, by its Drop): the handler leaves it.
pub fn unregister_cgroup() {
    let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    CGROUP_MADE.store(false, Ordering::SeqCst);
    for a in &CGROUP {
        let p = a.swap(std::ptr::null_mut(), Ordering::AcqRel);
        if !p.is_null() {
            // SAFETY: `p` came from CString::into_raw in `register_cgroup` and no slot holds it any more; a
            // handler that loaded it before the swap ends the process without returning here.
            drop(unsafe { CString::from_raw(p) });
        }
    }
}

/// In the handler: moves the process back to its cgroup and removes the registered one; None when there
/// is none.
fn leave_registered_cgroup() -> Option<bool> {
    let [home, pid, dir] = [0, 1, 2].map(|i| CGROUP[i].load(Ordering::Acquire));
    if home.is_null() || pid.is_null() || dir.is_null() {
        return None;
    }
    if !CGROUP_MADE.load(Ordering::SeqCst) {
        // Not made yet (or its making failed): nothing of iolab's to remove; the journal keeps the name.
        return Some(false);
    }
    // SAFETY: C strings leaked by `register_cgroup`, freed only after being cleared; the caller ends the
    // process.
    Some(unsafe { iolab_sys::write_file_raw(home, pid) && iolab_sys::remove_path_raw(dir, true) })
}

/// The ftrace instance of `--layers` (a C string leaked by [`register_trace_instance`]; null: none), and
/// whether it is made.
static TRACE_INSTANCE: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());
static TRACE_INSTANCE_MADE: AtomicBool = AtomicBool::new(false);
/// The descriptor of the detached tracefs the instance is reached through (-1: a mounted tracefs): the
/// handler lets go of every other descriptor before it tries again, never of this one.
static TRACE_MOUNT_FD: AtomicI32 = AtomicI32::new(-1);

/// Registers the ftrace instance directory `dir` (before it is made): on Ctrl-C, SIGTERM or SIGHUP the
/// handler removes it once made (its Drop at a normal exit; `iolab clean` after a kill). `mount`: the
/// descriptor of the detached tracefs that `dir` is reached through, if it is.
pub fn register_trace_instance(dir: &Path, mount: Option<RawFd>) {
    install_signal_handler();
    let c = CString::new(dir.as_os_str().as_bytes()).expect("no NUL in a path");
    let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    TRACE_MOUNT_FD.store(mount.unwrap_or(-1), Ordering::SeqCst);
    let old = TRACE_INSTANCE.swap(c.into_raw(), Ordering::AcqRel);
    if !old.is_null() {
        // SAFETY: `old` came from CString::into_raw here and no slot holds it any more.
        drop(unsafe { CString::from_raw(old) });
    }
}

/// The registered instance is made: from now on the handler removes it.
pub fn trace_instance_made() {
    TRACE_INSTANCE_MADE.store(true, Ordering::SeqCst);
}

/// The instance is removed (or about to be): the handler leaves it.
pub fn unregister_trace_instance() {
    let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    TRACE_INSTANCE_MADE.store(false, Ordering::SeqCst);
    TRACE_MOUNT_FD.store(-1, Ordering::SeqCst);
    let p = TRACE_INSTANCE.swap(std::ptr::null_mut(), Ordering::AcqRel);
    if !p.is_null() {
        // SAFETY: `p` came from CString::into_raw in `register_trace_instance` and no slot holds it any
        // more; a handler that loaded it before the swap ends the process without returning here.
        drop(unsafe { CString::from_raw(p) });
    }
}

/// In the handler: removes the registered ftrace instance; None when there is none.
fn remove_registered_instance() -> Option<bool> {
    let dir = TRACE_INSTANCE.load(Ordering::Acquire);
    if dir.is_null() {
        return None;
    }
    if !TRACE_INSTANCE_MADE.load(Ordering::SeqCst) {
        return Some(false);
    }
    // SAFETY: a C string leaked by `register_trace_instance`, freed only after being cleared; the caller
    // ends the process.
    let remove = || unsafe { iolab_sys::remove_path_raw(dir, true) };
    if remove() {
        return Some(true);
    }
    // The kernel refuses (EBUSY) while a file of the instance is open, as when the signal came while one
    // of its settings was being written: let go of every descriptor but stdin/out/err (and the detached
    // tracefs the instance is reached through) and try again.
    let_go_of_descriptors();
    Some(remove())
}

/// In the handler: closes every descriptor but stdin/out/err and the detached tracefs the ftrace instance
/// is reached through (which the handler removes last).
fn let_go_of_descriptors() {
    match TRACE_MOUNT_FD.load(Ordering::SeqCst) {
        fd if fd >= 3 => iolab_sys::close_from_except_raw(3, fd as u32),
        _ => iolab_sys::close_from_raw(3),
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
        let_go_of_descriptors();
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
    match leave_registered_cgroup() {
        Some(true) => removed += 1,
        Some(false) => all = false,
        None => {}
    }
    for i in (0..SLOTS).rev() {
        // Acquire: pairs with the Release store in `register`, so the string's bytes and the slot's other
        // fields are visible.
        let p = NAMES[i].load(Ordering::Acquire);
        if !p.is_null() {
            let (dir, dev, ino) = (
                DIRS[i].load(Ordering::Relaxed),
                DEVS[i].load(Ordering::Relaxed),
                INOS[i].load(Ordering::Relaxed),
            );
            let is_dir = IS_DIR[i].load(Ordering::Relaxed);
            if is_dir && TREE[i].load(Ordering::Relaxed) {
                // SAFETY: as below; the directory's files are its children's, made for this run.
                unsafe { iolab_sys::empty_dir_files_raw(dir, p, dev, ino) };
            }
            // SAFETY: non-null slots hold C strings leaked by `register` and freed only after the slot is
            // cleared; the caller ends the process, so nothing frees them (or closes `dir`) during this loop.
            let gone = unsafe { iolab_sys::remove_same_at_raw(dir, p, dev, ino, is_dir) };
            if gone {
                removed += 1;
            } else {
                all = false;
            }
        }
    }
    // Last: removing it may take closing every descriptor, the registered paths' directories among them.
    match remove_registered_instance() {
        Some(true) => removed += 1,
        Some(false) => all = false,
        None => {}
    }
    // The journal of what iolab created goes too when nothing it records is left.
    crate::leftovers::unlink_journal_if_all_removed(all, removed);
    SOME_LEFT.store(!all, Ordering::SeqCst);
    removed > 0
}

extern "C" fn on_signal(_sig: libc::c_int) {
    if STATUS_LINE.load(Ordering::SeqCst) {
        iolab_sys::write_stderr_raw(b"\r\x1b[K");
    }
    let removed = remove_registered();
    let msg: &[u8] = if ZRAM_LEFT.load(Ordering::SeqCst) {
        b"iolab: interrupted; its zram device could not be reset (still in use): `iolab clean` resets it\n"
    } else if removed && SOME_LEFT.load(Ordering::SeqCst) {
        b"iolab: interrupted; removed part of what iolab created: `iolab clean` removes the rest\n"
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

/// A file or directory iolab made. It is journaled at once by its descriptor, and removed when dropped
/// (and by the Ctrl-C handler) unless kept, through the descriptor of its directory and only while its
/// name still refers to it: a name taken over meanwhile is left alone, and iolab says so.
#[derive(Debug)]
pub struct Created {
    path: PathBuf,
    /// Its directory (O_PATH) and its name there.
    dir: OwnedFd,
    name: OsString,
    /// The object itself (O_PATH): where iolab's file went when the name was taken over.
    own: OwnedFd,
    dev: u64,
    ino: u64,
    is_dir: bool,
    /// A directory whose whole tree is iolab's (what its child processes wrote there): removed with its
    /// contents; any other directory only when empty.
    tree: bool,
    keep: bool,
    slot: Option<usize>,
    /// Its entry in the leftovers journal (`crate::leftovers`).
    journal: Option<u64>,
}

impl Created {
    /// Creates the file `path` (`flags` | O_CREAT | O_EXCL | O_NOFOLLOW, through its directory's
    /// descriptor: a name that exists, a symbolic link included, is EEXIST) and registers it for removal
    /// unless `keep`. The descriptor is the file iolab made, whatever happens to the name afterwards.
    pub fn new_file(
        path: &Path,
        flags: libc::c_int,
        mode: libc::mode_t,
        keep: bool,
    ) -> Result<(OwnedFd, Created)> {
        let (dir, name) = open_parent(path)?;
        let fd = iolab_sys::openat(
            dir.as_raw_fd(),
            &name,
            flags | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW,
            mode,
        )
        .map_err(|e| Error::sys_on(e, path.display().to_string()))?;
        let own = fd
            .try_clone()
            .map_err(|e| Error::Runtime(format!("{}: dup: {e}", path.display())))?;
        let c = Created::register(path, dir, name, own, keep)?;
        Ok((fd, c))
    }

    /// Creates the directory `path` (mode 0700; EEXIST when the name is taken) and registers it.
    pub fn new_dir(path: &Path, keep: bool) -> Result<Created> {
        let (dir, name) = open_parent(path)?;
        iolab_sys::mkdirat(dir.as_raw_fd(), &name, 0o700)
            .map_err(|e| Error::sys_on(e, path.display().to_string()))?;
        let own = Created::open_own(&dir, &name, path)?;
        let st = iolab_sys::fstat(own.as_raw_fd())
            .map_err(|e| Error::sys_on(e, path.display().to_string()))?;
        crate::names::register_made_dir(path, iolab_sys::identity(&st));
        Created::register(path, dir, name, own, keep)
    }

    /// Creates a new directory in `parent` named `prefix` and a unique suffix, and registers it.
    pub fn temp_dir(parent: &Path, prefix: &str) -> Result<Created> {
        for n in 0..100 {
            let name = format!("{prefix}{}", unique_suffix(n));
            match Created::new_dir(&parent.join(&name), false) {
                Err(Error::Sys(f)) if f.err.errno == libc::EEXIST => continue,
                other => return other,
            }
        }
        Err(Error::Runtime(format!(
            "cannot make a directory of iolab's in {}: every name tried exists",
            parent.display()
        )))
    }

    /// As [`Created::temp_dir`], for a directory whose contents iolab's child processes write (a
    /// guest's scratch files): removed with everything in it on the same filesystem (never below a mount
    /// point), only while its name is still it.
    pub fn temp_tree(parent: &Path, prefix: &str) -> Result<Created> {
        let mut c = Created::temp_dir(parent, prefix)?;
        c.tree = true;
        if let Some(i) = c.slot {
            TREE[i].store(true, Ordering::Relaxed);
        }
        if let Some(id) = c.journal {
            crate::leftovers::mark_tree(id);
        }
        Ok(c)
    }

    /// Creates a new file in `parent` named `prefix` and a unique suffix (`flags` as for [`new_file`]).
    pub fn temp_file(
        parent: &Path,
        prefix: &str,
        flags: libc::c_int,
        mode: libc::mode_t,
    ) -> Result<(OwnedFd, Created)> {
        for n in 0..100 {
            let name = format!("{prefix}{}", unique_suffix(n));
            match Created::new_file(&parent.join(&name), flags, mode, false) {
                Err(Error::Sys(f)) if f.err.errno == libc::EEXIST => continue,
                other => return other,
            }
        }
        Err(Error::Runtime(format!(
            "cannot make a file of iolab's in {}: every name tried exists",
            parent.display()
        )))
    }

    /// What something else just made on iolab's behalf at `path` (the kernel module's file): registered as
    /// it is now.
    pub fn adopt(path: &Path, keep: bool) -> Result<Created> {
        let (dir, name) = open_parent(path)?;
        let own = Created::open_own(&dir, &name, path)?;
        Created::register(path, dir, name, own, keep)
    }

    fn open_own(dir: &OwnedFd, name: &OsStr, path: &Path) -> Result<OwnedFd> {
        iolab_sys::openat(dir.as_raw_fd(), name, libc::O_PATH | libc::O_NOFOLLOW, 0)
            .map_err(|e| Error::sys_on(e, path.display().to_string()))
    }

    /// Journals it (by its descriptor) and gives it a slot of the signal handler's, unless `keep`.
    fn register(
        path: &Path,
        dir: OwnedFd,
        name: OsString,
        own: OwnedFd,
        keep: bool,
    ) -> Result<Created> {
        let st = iolab_sys::fstat(own.as_raw_fd())
            .map_err(|e| Error::sys_on(e, path.display().to_string()))?;
        let (dev, ino) = iolab_sys::identity(&st);
        let is_dir = st.st_mode & libc::S_IFMT == libc::S_IFDIR;
        let mut slot = None;
        let mut journal = None;
        if !keep {
            install_signal_handler();
            // Journaled first, so that a signal from now on finds it in the journal or removes it.
            journal = crate::leftovers::record(path, dir.as_raw_fd(), own.as_raw_fd());
            slot = take_slot(&name, dir.as_raw_fd(), dev, ino, is_dir);
            if slot.is_none() {
                eprintln!(
                    "iolab: warning: {} will not be removed if iolab is interrupted (`iolab clean` removes it)",
                    path.display()
                );
            }
        }
        Ok(Created {
            path: path.to_path_buf(),
            dir,
            name,
            own,
            dev,
            ino,
            is_dir,
            tree: false,
            keep,
            slot,
            journal,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn kept(&self) -> bool {
        self.keep
    }

    /// Opens it again by its name with `flags` (| O_NOFOLLOW), and only if the name still refers to it.
    pub fn reopen(&self, flags: libc::c_int) -> Result<OwnedFd> {
        crate::names::open_same(
            &self.dir,
            &self.name,
            flags,
            (self.dev, self.ino),
            &self.path,
        )
    }

    /// Removes it through its directory's descriptor while the name is still its own; says where it went
    /// when the name was taken over.
    fn remove(&self) -> bool {
        let dir = self.dir.as_raw_fd();
        let same = iolab_sys::fstatat_nofollow(dir, &self.name)
            .map(|st| iolab_sys::identity(&st) == (self.dev, self.ino));
        match same {
            Err(e) if e.errno == libc::ENOENT => true,
            Err(_) => false,
            Ok(false) => {
                let left = iolab_sys::fstat(self.own.as_raw_fd()).map_or(1, |s| s.st_nlink);
                let whereabouts = if left == 0 && !self.is_dir {
                    "is unnamed now (removed by something else)".to_string()
                } else {
                    let parent = self
                        .path
                        .parent()
                        .filter(|p| !p.as_os_str().is_empty())
                        .map_or(".".into(), |p| p.display().to_string());
                    format!(
                        "was renamed (inode {}: `find {parent} -xdev -inum {}` finds it)",
                        self.ino, self.ino
                    )
                };
                eprintln!(
                    "iolab: {} is not iolab's any more (the name now refers to something else): left it as \
                     it is; iolab's {} {whereabouts}",
                    self.path.display(),
                    if self.is_dir { "directory" } else { "file" }
                );
                true
            }
            Ok(true) if self.is_dir && self.tree => {
                iolab_sys::remove_tree_at(dir, &self.name, self.dev, self.ino).is_ok()
            }
            Ok(true) if self.is_dir => match iolab_sys::unlinkat(dir, &self.name, true) {
                Ok(()) => true,
                Err(e) => {
                    // What iolab made in it went on its own; anything left is not iolab's to remove.
                    eprintln!(
                        "iolab: left {} as it is: {} (it holds what iolab did not make); look, then remove it \
                         yourself",
                        self.path.display(),
                        iolab_sys::errno_name(e.errno)
                    );
                    false
                }
            },
            Ok(true) => {
                // Unmarked first: a hard link someone made to it keeps the file, and must not name it
                // a killed iolab's leftover.
                let _ = iolab_sys::remove_xattr(self.own.as_raw_fd(), crate::leftovers::XATTR);
                iolab_sys::unlinkat(dir, &self.name, false).is_ok()
            }
        }
    }
}

/// "PID-NANOS-N": a name part no other iolab is likely to pick at the same time (O_EXCL decides).
fn unique_suffix(attempt: u32) -> String {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let n = N.fetch_add(1, Ordering::Relaxed);
    format!("{}-{nanos:x}-{n}-{attempt}", std::process::id())
}

/// A free slot of the signal handler's for a name in `dir`, filled (None when all are taken).
fn take_slot(name: &OsStr, dir: RawFd, dev: u64, ino: u64, is_dir: bool) -> Option<usize> {
    let c = CString::new(name.as_bytes()).ok()?;
    let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let Some(i) = NAMES
        .iter()
        .position(|p| p.load(Ordering::Relaxed).is_null())
    else {
        OVERFLOWED.store(true, Ordering::SeqCst);
        return None;
    };
    DIRS[i].store(dir, Ordering::Relaxed);
    DEVS[i].store(dev, Ordering::Relaxed);
    INOS[i].store(ino, Ordering::Relaxed);
    IS_DIR[i].store(is_dir, Ordering::Relaxed);
    TREE[i].store(false, Ordering::Relaxed);
    NAMES[i].store(c.into_raw(), Ordering::Release);
    Some(i)
}

impl Created {
    /// Keeps it for good (a result file written whole): no longer removed at exit, on Ctrl-C, or by
    /// `iolab clean`.
    pub fn keep_for_good(mut self) {
        self.release_slot();
        if let Some(id) = self.journal.take() {
            crate::leftovers::forget(id);
            // Unmarked too: a later iolab must not take it for a killed run's leftover.
            let _ = iolab_sys::remove_xattr(self.own.as_raw_fd(), crate::leftovers::XATTR);
        }
        self.keep = true;
    }

    /// Gives the signal handler's slot back.
    fn release_slot(&mut self) {
        if let Some(i) = self.slot.take() {
            let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
            let p = NAMES[i].swap(std::ptr::null_mut(), Ordering::AcqRel);
            if !p.is_null() {
                // SAFETY: `p` came from CString::into_raw in `take_slot` and the slot no longer holds it. A
                // signal handler that loaded it before the swap exits the process without returning here.
                drop(unsafe { CString::from_raw(p) });
            }
        }
    }
}

impl Drop for Created {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        self.release_slot();
        // A name that could not be removed stays in the journal, for `iolab clean`.
        if self.remove() {
            if let Some(id) = self.journal {
                crate::leftovers::forget(id);
            }
        }
    }
}

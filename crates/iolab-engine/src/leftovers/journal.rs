//! Writing this process's journal: created with the first recorded path, a line per path created and per
//! path removed, deleted when no recorded path is left (and by the signal handler after it removed them).
//! Every call here happens where a path is created or removed, never inside a timed span.

use super::format::header;
use super::format::mark_value;
use super::format::open_journal_dir;
use super::format::Entry;
use super::format::Process;
use super::format::ZramEntry;
use super::format::XATTR;
use iolab_sys as sys;
use std::ffi::{CString, OsStr};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, Once, OnceLock};

struct Writer {
    dir: OwnedFd,
    /// The journal, opened O_APPEND and locked (flock) for as long as it exists.
    file: OwnedFd,
}

static WRITER: Mutex<Option<Writer>> = Mutex::new(None);
/// Entries recorded and not removed (what the signal handler compares its count of removals with). Raised
/// before a line is written and lowered after its removal line: a handler that runs between them keeps the
/// journal.
static LIVE: AtomicUsize = AtomicUsize::new(0);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
/// The journal's full path as a C string, for the signal handler (set once; the name is fixed per process).
static PATH: OnceLock<CString> = OnceLock::new();
static WARNED: Once = Once::new();

fn warn(why: &str) {
    WARNED.call_once(|| {
        eprintln!(
            "iolab: warning: the paths iolab creates are not journaled ({why}); `iolab clean` will not find \
             what a killed iolab leaves"
        );
    });
}

fn write_all(fd: &OwnedFd, mut b: &[u8]) -> sys::SysResult<()> {
    while !b.is_empty() {
        match sys::write(fd.as_raw_fd(), b) {
            Ok(0) => return Err(sys::SysErr::new("write", libc::EIO)),
            Ok(n) => b = &b[n..],
            Err(e) if e.errno == libc::EINTR => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn open_writer() -> Result<Writer, String> {
    let (dir_path, dir) = open_journal_dir(true)?.expect("created");
    let me = Process::me();
    let name = me.journal_name();
    let flags = libc::O_RDWR | libc::O_CREAT | libc::O_APPEND | libc::O_NOFOLLOW;
    let file = sys::openat(dir.as_raw_fd(), OsStr::new(&name), flags, 0o600).map_err(|e| {
        format!(
            "{}/{name}: {}",
            dir_path.display(),
            sys::errno_name(e.errno)
        )
    })?;
    match sys::flock_exclusive_nb(file.as_raw_fd()) {
        Ok(true) => {}
        _ => {
            return Err(format!(
                "{}/{name} is locked by another process",
                dir_path.display()
            ))
        }
    }
    // A journal of this very process (pid and start time) left by a removal that failed: start afresh.
    sys::ftruncate(file.as_raw_fd(), 0).map_err(|e| sys::errno_name(e.errno).to_string())?;
    write_all(&file, header(me).as_bytes()).map_err(|e| sys::errno_name(e.errno).to_string())?;
    let _ = PATH.set(CString::new(dir_path.join(&name).as_os_str().as_bytes()).expect("no NUL"));
    Ok(Writer { dir, file })
}

/// The entry for `path`, a regular file or directory this process has just created, and sets its mark.
pub(super) fn entry_of(path: &Path, dir: RawFd, fd: RawFd, id: u64) -> Option<Entry> {
    let name = path.file_name()?;
    // The directory as the descriptor found it (its symbolic links resolved by the kernel), not as a
    // second lookup of its path would: what iolab created is what is journaled.
    let parent = std::fs::read_link(sys::fd_path(dir)).ok()?;
    let st = sys::fstat(fd).ok()?;
    let is_dir = match st.st_mode & libc::S_IFMT {
        libc::S_IFDIR => true,
        libc::S_IFREG => false,
        _ => return None,
    };
    let pst = sys::fstat(dir).ok()?;
    let marked = sys::set_xattr(fd, XATTR, mark_value(Process::me(), id).as_bytes()).is_ok();
    Some(Entry {
        id,
        is_dir,
        dev: st.st_dev,
        ino: st.st_ino,
        uid: st.st_uid,
        btime: sys::statx_btime(fd).ok().flatten(),
        pdev: pst.st_dev,
        pino: pst.st_ino,
        marked,
        path: parent.join(name),
        tree: false,
    })
}

/// Journals `path`, which iolab has just created (before anything is timed), by the descriptors of what
/// it created (`fd`, any open mode) and of its directory (`dir`); returns the entry's id for [`forget`]. `None` (with one warning per process) when it cannot be journaled.
pub fn record(path: &Path, dir: RawFd, fd: RawFd) -> Option<u64> {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let Some(entry) = entry_of(path, dir, fd, id) else {
        warn(&format!("{} could not be examined", path.display()));
        return None;
    };
    append(id, &entry.line())
}

/// Journals /dev/zram`dev`, which iolab has just made and sized to `disksize` bytes; returns the entry's
/// id for [`forget`].
pub fn record_zram(dev: u32, disksize: u64) -> Option<u64> {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    append(id, &ZramEntry { id, dev, disksize }.line())
}

/// Journals the memory cgroup directory `path`, which iolab has just made (`--memory-limit`); returns the
/// entry's id for [`forget`].
pub fn record_cgroup(path: &Path) -> Option<u64> {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    append(
        id,
        &super::format::CgroupEntry {
            id,
            path: path.to_path_buf(),
        }
        .line(),
    )
}

/// Appends entry `id`'s line, opening the journal with the first one.
fn append(id: u64, line: &str) -> Option<u64> {
    let mut w = WRITER.lock().unwrap_or_else(|p| p.into_inner());
    if w.is_none() {
        match open_writer() {
            Ok(n) => *w = Some(n),
            Err(why) => {
                warn(&why);
                return None;
            }
        }
    }
    let file = &w.as_ref().expect("opened").file;
    LIVE.fetch_add(1, Ordering::SeqCst);
    if let Err(e) = write_all(file, line.as_bytes()) {
        LIVE.fetch_sub(1, Ordering::SeqCst);
        warn(&format!(
            "writing the journal: {}",
            sys::errno_name(e.errno)
        ));
        return None;
    }
    Some(id)
}

/// Entry `id`, a directory, holds what iolab's child processes write: `iolab clean` removes it with its
/// contents (on its own filesystem, only while its name is still it).
pub fn mark_tree(id: u64) {
    let w = WRITER.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(wr) = w.as_ref() {
        // Not written: `clean` finds the directory not empty and says so.
        let _ = write_all(&wr.file, format!("t {id}\n").as_bytes());
    }
}

/// The path of entry `id` is gone (removed at a normal exit): says so in the journal, and deletes the
/// journal when no entry is left.
pub fn forget(id: u64) {
    let mut w = WRITER.lock().unwrap_or_else(|p| p.into_inner());
    let Some(wr) = w.as_ref() else { return };
    if write_all(&wr.file, format!("- {id}\n").as_bytes()).is_err() {
        return; // the entry stays: `iolab clean` finds its path gone
    }
    if LIVE.fetch_sub(1, Ordering::SeqCst) == 1 {
        let name = Process::me().journal_name();
        if sys::unlinkat(wr.dir.as_raw_fd(), OsStr::new(&name), false).is_ok() {
            *w = None;
        }
    }
}

/// In the signal handler, after it removed `removed` registered paths: deletes the journal when that was
/// every journaled path (`complete`: every registered path had a slot and its removal succeeded).
/// Async-signal-safe: atomics and one unlink(2).
pub(crate) fn unlink_journal_if_all_removed(complete: bool, removed: usize) {
    if !complete || LIVE.load(Ordering::SeqCst) != removed {
        return;
    }
    if let Some(p) = PATH.get() {
        // SAFETY: the C string lives in a static that is set once and never freed.
        unsafe { sys::remove_path_raw(p.as_ptr(), false) };
    }
}

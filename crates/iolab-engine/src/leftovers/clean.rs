//! `iolab clean [DIR]`: removes what iolab processes that are gone left behind, as their journals record it,
//! and refuses whatever is no longer what iolab created.

use super::format::mark_value;
use super::format::open_journal_dir;
use super::format::parse;
use super::format::split;
use super::format::Contents;
use super::format::Entry;
use super::format::Process;
use super::format::ZramEntry;
use super::format::XATTR;
use crate::error::{Error, Result};
use crate::leftovers::report::CleanReport;
use crate::leftovers::report::Outcome;
use crate::leftovers::report::Verdict;
use iolab_sys as sys;
use std::ffi::OsStr;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::Path;

/// Removes what gone iolab processes of this user left (only under `under` when given).
pub fn clean(under: Option<&Path>) -> Result<CleanReport> {
    let under = match under {
        None => None,
        Some(d) => Some(std::fs::canonicalize(d).map_err(|e| {
            Error::usage(
                "DIR",
                format!(
                    "{}: {}; give a directory that exists",
                    d.display(),
                    sys::errno_name(e.raw_os_error().unwrap_or(0))
                ),
            )
        })?),
    };
    let mut rep = CleanReport {
        journal_dir: super::format::journal_dir(),
        ..Default::default()
    };
    let dir = match open_journal_dir(false) {
        Ok(Some((_, fd))) => fd,
        Ok(None) => return Ok(rep),
        Err(why) => {
            return Err(Error::Runtime(format!(
                "clean: refusing the journal directory: {why}"
            )))
        }
    };
    let mut names: Vec<String> = std::fs::read_dir(&rep.journal_dir)
        .map_err(|e| Error::Runtime(format!("cannot list {}: {e}", rep.journal_dir.display())))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".journal"))
        .collect();
    names.sort();
    for name in names {
        clean_journal(dir.as_raw_fd(), &name, under.as_deref(), &mut rep);
    }
    Ok(rep)
}

/// Opens a journal (never following a symbolic link, never blocking on a FIFO) and reads it, if it is a
/// regular file of this user in the journal format; else a note says why it is left alone.
fn open_journal(
    dir: RawFd,
    name: &str,
    shown: &Path,
    rep: &mut CleanReport,
) -> Option<(OwnedFd, Contents)> {
    let fd = match sys::openat(
        dir,
        OsStr::new(name),
        libc::O_RDWR | libc::O_NOFOLLOW | libc::O_NONBLOCK,
        0,
    ) {
        Ok(fd) => fd,
        Err(e) if e.errno == libc::ENOENT => return None, // its process removed it meanwhile
        Err(e) => {
            rep.notes.push(format!(
                "{}: {} (not a journal of iolab's?)",
                shown.display(),
                sys::errno_name(e.errno)
            ));
            return None;
        }
    };
    let st = match sys::fstat(fd.as_raw_fd()) {
        Ok(st) => st,
        Err(_) => return None,
    };
    if st.st_mode & libc::S_IFMT != libc::S_IFREG || st.st_uid != sys::geteuid() {
        rep.notes.push(format!(
            "{}: not a regular file of this user: left alone",
            shown.display()
        ));
        return None;
    }
    let read = |fd: &OwnedFd| parse(&String::from_utf8_lossy(&journal_text(fd)));
    if let Some(c) = read(&fd) {
        return Some((fd, c));
    }
    // Empty or cut short: an iolab has just created it (the name says which: leave a running one's alone,
    // never contending for its lock), or another `iolab clean` is rewriting it (it truncates, then writes,
    // under the lock): read it again under the lock.
    if named_owner_alive(name) || !lock_briefly(fd.as_raw_fd()) {
        return None;
    }
    match read(&fd) {
        Some(c) => Some((fd, c)),
        None => {
            let st = sys::fstat(fd.as_raw_fd()).ok()?;
            if st.st_nlink > 0 {
                rep.notes.push(format!(
                    "{}: not an iolab journal: left alone",
                    shown.display()
                ));
            }
            None
        }
    }
}

/// Is the process a journal's name (`PID-START.journal`) gives still running?
/// The most a journal holds: a line per file, directory, cgroup or device an iolab made (each with a
/// path of at most 4 KiB); a larger file is read as none (a 2 GB sparse one took 2 GB to read whole).
const MAX_JOURNAL: u64 = 64 << 20;

/// A journal's text, read through its descriptor; empty where it is larger than [`MAX_JOURNAL`] (or
/// cannot be read), which no journal is.
fn journal_text(fd: &OwnedFd) -> Vec<u8> {
    use std::io::Read;
    let mut text = Vec::new();
    let read = std::fs::File::open(sys::fd_path(fd.as_raw_fd()))
        .and_then(|f| f.take(MAX_JOURNAL + 1).read_to_end(&mut text));
    match read {
        Ok(n) if n as u64 <= MAX_JOURNAL => text,
        _ => Vec::new(),
    }
}

fn named_owner_alive(name: &str) -> bool {
    let Some((pid, start)) = name
        .strip_suffix(".journal")
        .and_then(|n| n.split_once('-'))
    else {
        return false;
    };
    match (pid.parse(), start.parse()) {
        (Ok(pid), Ok(start)) => Process {
            pid,
            start,
            boot: super::format::boot_id(),
        }
        .alive(),
        _ => false,
    }
}

/// One journal: left alone while its process runs; else its paths removed or refused, and the journal
/// rewritten with what is left to try again (deleted when nothing is).
fn clean_journal(dir: RawFd, name: &str, under: Option<&Path>, rep: &mut CleanReport) {
    let shown = rep.journal_dir.join(name);
    let Some((fd, c)) = open_journal(dir, name, &shown, rep) else {
        return;
    };
    // The lock is held by a running iolab (in any pid namespace); a free lock and a gone process: dead.
    if c.owner.alive() {
        rep.running.push(c.owner.pid);
        return;
    }
    if !lock_briefly(fd.as_raw_fd()) {
        rep.notes.push(format!(
            "{}: in use (iolab pid {} in another pid namespace, or another iolab clean): left alone",
            shown.display(),
            c.owner.pid
        ));
        return;
    }
    // Read again under the lock: the file may have changed (or been deleted) before it was taken.
    let text = journal_text(&fd);
    let (Some(c), Ok(st)) = (
        parse(&String::from_utf8_lossy(&text)),
        sys::fstat(fd.as_raw_fd()),
    ) else {
        return;
    };
    if st.st_nlink == 0 {
        return;
    }
    if c.bad_lines > 0 {
        rep.notes.push(format!(
            "{}: {} line(s) cut short or damaged (the kill came while it was written): ignored",
            shown.display(),
            c.bad_lines
        ));
    }
    let keep = clean_entries(&c, under, rep);
    let keep_zram = super::zram::clean_zram(&c, under, rep);
    let keep_cg = super::cgroup::clean_cgroups(&c, under, rep);
    let rewritten = if keep.is_empty() && keep_zram.is_empty() && keep_cg.is_empty() {
        sys::unlinkat(dir, OsStr::new(name), false)
    } else {
        rewrite(&fd, &c.owner, &keep, &keep_zram, &keep_cg)
    };
    if let Err(e) = rewritten {
        rep.notes.push(format!(
            "{}: cannot update it: {}",
            shown.display(),
            sys::errno_name(e.errno)
        ));
    }
}

/// The journal's lock, waiting up to 2 s for another `iolab clean` that holds it for a moment; a lock held
/// longer is a running iolab's (one that /proc does not show: another pid namespace).
fn lock_briefly(fd: RawFd) -> bool {
    for _ in 0..200 {
        match sys::flock_exclusive_nb(fd) {
            Ok(true) => return true,
            Ok(false) => std::thread::sleep(std::time::Duration::from_millis(10)),
            Err(_) => return false,
        }
    }
    false
}

/// Each live entry of a gone process, newest first (a directory's files before it); returns the entries to
/// keep in the journal (outside `under`, or failed).
fn clean_entries(c: &Contents, under: Option<&Path>, rep: &mut CleanReport) -> Vec<Entry> {
    let mut keep = Vec::new();
    for e in c.live.iter().rev() {
        // A recorded path that is not there (a tracing instance never made where tracefs was not
        // mounted) is gone wherever it was, not left elsewhere.
        let absent = || {
            std::fs::symlink_metadata(&e.path)
                .is_err_and(|x| x.kind() == std::io::ErrorKind::NotFound)
        };
        if under.is_some_and(|u| !e.path.starts_with(u)) && !absent() {
            rep.outside += 1;
            keep.push(e.clone());
            continue;
        }
        let verdict = remove_entry(e, &c.owner);
        if matches!(verdict, Verdict::Failed(_)) {
            keep.push(e.clone());
        }
        rep.outcomes.push(Outcome {
            path: e.path.clone(),
            is_dir: e.is_dir,
            zram: false,
            pid: c.owner.pid,
            verdict,
        });
    }
    keep.reverse();
    keep
}

fn rewrite(
    fd: &OwnedFd,
    owner: &Process,
    keep: &[Entry],
    zram: &[ZramEntry],
    cgroups: &[super::format::CgroupEntry],
) -> sys::SysResult<()> {
    let mut text = super::format::header(owner);
    for e in keep {
        text.push_str(&e.line());
        if e.tree {
            text.push_str(&format!("t {}\n", e.id));
        }
    }
    for z in zram {
        text.push_str(&z.line());
    }
    for g in cgroups {
        text.push_str(&g.line());
    }
    sys::ftruncate(fd.as_raw_fd(), 0)?;
    let mut off = 0usize;
    while off < text.len() {
        off += sys::pwrite(fd.as_raw_fd(), &text.as_bytes()[off..], off as u64)?;
    }
    Ok(())
}

fn kind_name(mode: libc::mode_t) -> &'static str {
    match mode & libc::S_IFMT {
        libc::S_IFREG => "a regular file",
        libc::S_IFDIR => "a directory",
        libc::S_IFLNK => "a symbolic link",
        libc::S_IFIFO => "a FIFO",
        libc::S_IFSOCK => "a socket",
        libc::S_IFBLK => "a block device",
        libc::S_IFCHR => "a character device",
        _ => "of an unknown type",
    }
}

/// Why the file open as `fd` (O_PATH|O_NOFOLLOW) is not the one `e` records, or `None` if it is.
fn not_iolabs(fd: RawFd, st: &iolab_sys::Stat, e: &Entry, owner: &Process) -> Option<String> {
    let made = if e.is_dir {
        "a directory"
    } else {
        "a regular file"
    };
    let is = kind_name(st.st_mode);
    if is != made {
        let to = if st.st_mode & libc::S_IFMT == libc::S_IFLNK {
            sys::read_link_fd(fd)
                .map(|t| format!(" to {}", String::from_utf8_lossy(&t)))
                .unwrap_or_default()
        } else {
            String::new()
        };
        return Some(format!("it is now {is}{to}; iolab created {made} there"));
    }
    if (st.st_dev, st.st_ino) != (e.dev, e.ino) {
        return Some(format!(
            "it is another file (inode {}, iolab's was {}): made after iolab's was removed",
            st.st_ino, e.ino
        ));
    }
    if st.st_uid != e.uid {
        return Some(format!(
            "it is owned by uid {}; iolab's was uid {}",
            st.st_uid, e.uid
        ));
    }
    if let (Some(b), Ok(Some(now))) = (e.btime, sys::statx_btime(fd)) {
        if b != now {
            return Some(format!(
                "it was created at {}.{:09} (birth time), iolab's at {}.{:09}: the inode number was reused",
                now.0, now.1, b.0, b.1
            ));
        }
    }
    if e.marked {
        let want = mark_value(owner, e.id);
        match sys::get_xattr(fd, XATTR) {
            Ok(Some(v)) if v == want.as_bytes() => {}
            Ok(_) | Err(_) => {
                return Some(format!(
                    "it does not carry iolab's mark ({XATTR}) that iolab's had"
                ));
            }
        }
    }
    None
}

/// Removes one recorded path if it is still iolab's; never follows a symbolic link at the name, and unlinks
/// only in the directory whose identity was recorded.
fn remove_entry(e: &Entry, owner: &Process) -> Verdict {
    let Some((parent, name)) = split(&e.path) else {
        return Verdict::Refused("not an absolute path to a file".into());
    };
    let dir = match sys::open(parent, libc::O_PATH | libc::O_DIRECTORY, 0) {
        Ok(fd) => fd,
        Err(e) if matches!(e.errno, libc::ENOENT | libc::ENOTDIR) => return Verdict::Gone,
        Err(err) => {
            return Verdict::Failed(format!(
                "cannot open its directory: {}",
                sys::errno_name(err.errno)
            ))
        }
    };
    match sys::fstat(dir.as_raw_fd()) {
        Ok(st) if (st.st_dev, st.st_ino) == (e.pdev, e.pino) => {}
        Ok(_) => {
            return Verdict::Refused(format!(
                "{} is no longer the directory iolab created it in (another inode)",
                parent.display()
            ))
        }
        Err(err) => return Verdict::Failed(sys::errno_name(err.errno).to_string()),
    }
    let fd = match sys::openat(dir.as_raw_fd(), name, libc::O_PATH | libc::O_NOFOLLOW, 0) {
        Ok(fd) => fd,
        Err(err) if err.errno == libc::ENOENT => return Verdict::Gone,
        Err(err) => return Verdict::Failed(sys::errno_name(err.errno).to_string()),
    };
    let st = match sys::fstat(fd.as_raw_fd()) {
        Ok(st) => st,
        Err(err) => return Verdict::Failed(sys::errno_name(err.errno).to_string()),
    };
    if let Some(why) = not_iolabs(fd.as_raw_fd(), &st, e, owner) {
        return Verdict::Refused(why);
    }
    if e.tree {
        // What iolab's child processes wrote there is iolab's too.
        return match sys::remove_tree_at(dir.as_raw_fd(), name, st.st_dev, st.st_ino) {
            Ok(()) => Verdict::Removed,
            Err(err) => Verdict::Failed(format!(
                "removing the directory and what it holds: {}: {}",
                err.call,
                sys::errno_name(err.errno)
            )),
        };
    }
    match sys::unlinkat(dir.as_raw_fd(), name, e.is_dir) {
        Ok(()) => Verdict::Removed,
        Err(err) if err.errno == libc::ENOENT => Verdict::Gone,
        Err(err) if err.errno == libc::ENOTEMPTY || err.errno == libc::EEXIST => Verdict::Failed(
            "the directory is not empty: it holds files iolab did not record; look inside, and remove it yourself"
                .into(),
        ),
        Err(err) => Verdict::Failed(format!("unlinkat: {}", sys::errno_name(err.errno))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::leftovers::journal;

    /// The journal entry of the file at `p`, made from its descriptors as iolab makes them.
    fn entry_of(p: &std::path::Path, id: u64) -> Option<crate::leftovers::format::Entry> {
        let (dir, _) = crate::names::open_parent(p).ok()?;
        let fd = sys::open(p, libc::O_PATH | libc::O_NOFOLLOW, 0).ok()?;
        journal::entry_of(p, dir.as_raw_fd(), fd.as_raw_fd(), id)
    }

    #[test]
    fn an_unchanged_file_is_removed_and_a_changed_mark_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let me = Process::me();
        let f = d.path().join("x.dat");
        std::fs::write(&f, b"iolab's").unwrap();
        let e = entry_of(&f, 1).expect("entry");
        assert_eq!(remove_entry(&e, me), Verdict::Removed);
        assert!(!f.exists());
        assert_eq!(remove_entry(&e, me), Verdict::Gone);

        let g = d.path().join("y.dat");
        std::fs::write(&g, b"iolab's").unwrap();
        let mut e = entry_of(&g, 2).expect("entry");
        if !e.marked {
            println!(
                "SKIPPED the mark half: no user xattrs on {}",
                d.path().display()
            );
            return;
        }
        // Same inode and no birth time to compare (as on a filesystem without one): the mark decides.
        e.btime = None;
        sys::set_xattr(
            sys::open(&g, libc::O_PATH, 0).unwrap().as_raw_fd(),
            XATTR,
            b"someone else's",
        )
        .unwrap();
        match remove_entry(&e, me) {
            Verdict::Refused(why) => assert!(why.contains("mark"), "{why}"),
            v => panic!("{v:?}"),
        }
        assert!(g.exists(), "kept");
    }

    #[test]
    fn a_replaced_directory_and_a_foreign_owner_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let me = Process::me();
        let sub = d.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let f = sub.join("x.dat");
        std::fs::write(&f, b"iolab's").unwrap();
        let mut e = entry_of(&f, 3).expect("entry");
        e.uid += 1;
        match remove_entry(&e, me) {
            Verdict::Refused(why) => assert!(why.contains("owned by uid"), "{why}"),
            v => panic!("{v:?}"),
        }
        e.uid -= 1;
        std::fs::rename(&sub, d.path().join("old")).unwrap();
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(&f, b"someone else's").unwrap();
        match remove_entry(&e, me) {
            Verdict::Refused(why) => assert!(why.contains("no longer the directory"), "{why}"),
            v => panic!("{v:?}"),
        }
        assert_eq!(std::fs::read(&f).unwrap(), b"someone else's");
        assert!(d.path().join("old/x.dat").exists());
    }

    /// Under DIR, a recorded path elsewhere is left for another `clean` when it is there, and counted
    /// gone when it is not (a tracing instance never made was "1 left elsewhere").
    #[test]
    fn a_recorded_path_elsewhere_is_left_only_when_it_is_there() {
        let (d, other) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let f = other.path().join("x.dat");
        std::fs::write(&f, b"iolab's").unwrap();
        let there = entry_of(&f, 1).expect("entry");
        let mut absent = there.clone();
        absent.path = other.path().join("instances/iolab-1-never-made");
        let c = Contents {
            owner: Process::me().clone(),
            live: vec![there.clone(), absent],
            zram: Vec::new(),
            cgroups: Vec::new(),
            bad_lines: 0,
        };
        let mut rep = CleanReport::default();
        let kept = clean_entries(&c, Some(d.path()), &mut rep);
        assert_eq!(rep.outside, 1);
        assert_eq!(kept, vec![there]);
        assert_eq!(rep.outcomes.len(), 1);
        assert_eq!(rep.outcomes[0].verdict, Verdict::Gone);
        assert!(f.exists(), "left as it is");
    }

    #[test]
    fn a_tree_goes_with_what_it_holds_and_a_plain_directory_does_not() {
        let d = tempfile::tempdir().unwrap();
        let me = Process::me();
        let fill = |t: &std::path::Path| {
            std::fs::create_dir_all(t.join("sub")).unwrap();
            std::fs::write(t.join("sub/a"), b"written by a child").unwrap();
        };
        let (tree, plain) = (d.path().join("tree"), d.path().join("plain"));
        std::fs::create_dir(&tree).unwrap();
        std::fs::create_dir(&plain).unwrap();
        let mut t = entry_of(&tree, 4).expect("entry");
        let p = entry_of(&plain, 5).expect("entry");
        fill(&tree);
        fill(&plain);
        match remove_entry(&p, me) {
            Verdict::Failed(why) => assert!(why.contains("not empty"), "{why}"),
            v => panic!("{v:?}"),
        }
        assert!(plain.join("sub/a").exists());
        // The journal's `t ID` line marks it.
        let text = format!("{}{}t 4\n", crate::leftovers::format::header(me), t.line());
        let c = crate::leftovers::format::parse(&text).expect("a journal");
        assert!(c.live[0].tree, "{text}");
        t.tree = true;
        // A journal rewritten by a clean that could not remove it keeps the mark.
        let f = tempfile::tempfile().unwrap();
        let f = std::os::fd::OwnedFd::from(f);
        rewrite(&f, me, std::slice::from_ref(&t), &[], &[]).unwrap();
        let again = std::fs::read_to_string(sys::fd_path(f.as_raw_fd())).unwrap();
        assert!(
            crate::leftovers::format::parse(&again)
                .expect("a journal")
                .live[0]
                .tree,
            "{again}"
        );
        assert_eq!(remove_entry(&t, me), Verdict::Removed);
        assert!(!tree.exists());
    }
}

//! A target is its descriptor. Its name is looked up once: the directory is opened (O_PATH), the name's
//! identity (device and inode) is taken from a descriptor of it (O_PATH | O_NOFOLLOW), every check is
//! made on that descriptor, and every later open goes through the directory's descriptor with O_NOFOLLOW
//! and is refused unless it is still the same file. A name swapped for a symbolic link, renamed away or
//! replaced by another file after the lookup never receives iolab's writes. A symbolic link the user
//! named is followed once, at the lookup, and the result says so.

use crate::cleanup::Created;
use crate::error::{Error, Result};
use crate::names::{open_parent, open_same, replaced};
use iolab_sys as sys;
use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// An existing target, looked up once.
#[derive(Debug)]
pub struct Pin {
    dir: OwnedFd,
    name: OsString,
    /// The looked-up object (O_PATH): checks are made on it.
    fd: OwnedFd,
    pub st: sys::Stat,
    /// The path the lookup ended at (a symbolic link the user named followed).
    pub path: PathBuf,
}

/// What a target's name referred to when this process first looked it up, and the files iolab made
/// under it since: a run's passes, a sweep's points and a suite's steps each look the name up again, and
/// the name must mean the same every time (nothing, the same file, or a file iolab made under it).
struct Seen {
    path: PathBuf,
    first: Option<Made>,
    made: Vec<Made>,
}

/// A file as found or made: its identity, and its birth time where the filesystem keeps one. An inode
/// number freed and given to a later file is told apart by the later file's birth; where either look
/// found no birth time, the identity alone is trusted.
#[derive(Clone, Copy)]
struct Made {
    id: (u64, u64),
    born: Option<(i64, u32)>,
}

impl Made {
    fn of(fd: &OwnedFd, st: &sys::Stat) -> Made {
        Made {
            id: sys::identity(st),
            born: sys::statx_btime(fd.as_raw_fd()).ok().flatten(),
        }
    }

    fn same(&self, o: &Made) -> bool {
        self.id == o.id && (self.born.is_none() || o.born.is_none() || self.born == o.born)
    }
}

static SEEN: std::sync::Mutex<Vec<Seen>> = std::sync::Mutex::new(Vec::new());

/// Refuses a name that, since this process first looked it up, came to refer to something else: a file
/// or symbolic link that appeared where there was none (between two passes, say, after iolab removed its
/// own file), or another file than the one found. `now` is what the lookup found.
pub fn check_same_meaning(path: &Path, now: Option<&Pin>, shown: &str) -> Result<()> {
    let now = now.map(|p| Made::of(&p.fd, &p.st));
    let mut seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    let Some(s) = seen.iter().find(|s| s.path == path) else {
        seen.push(Seen {
            path: path.to_path_buf(),
            first: now,
            made: Vec::new(),
        });
        return Ok(());
    };
    match now {
        None => Ok(()),
        Some(m) if s.first.iter().chain(&s.made).any(|x| x.same(&m)) => Ok(()),
        Some(_) => Err(Error::Runtime(format!(
            "{shown} {}: iolab writes nothing under a name whose meaning changed during the run; run again",
            if s.first.is_none() {
                "appeared after iolab first found nothing there (something else made it, or put a \
                 symbolic link there)"
            } else {
                "now refers to another file than the one iolab found first"
            }
        ))),
    }
}

/// Records a file iolab made under `path` (see [`check_same_meaning`]): `fd` is the file, just made.
pub fn record_made(path: &Path, fd: &OwnedFd) -> Result<()> {
    let st =
        sys::fstat(fd.as_raw_fd()).map_err(|e| Error::sys_on(e, path.display().to_string()))?;
    let made = Made::of(fd, &st);
    let mut seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    match seen.iter_mut().find(|s| s.path == path) {
        Some(s) => s.made.push(made),
        None => seen.push(Seen {
            path: path.to_path_buf(),
            first: None,
            made: vec![made],
        }),
    }
    Ok(())
}

/// Did this process make the file `pin` found (a file it kept from an earlier run)? Its identity must
/// be one iolab made under that name, and its birth time that file's where the filesystem keeps one.
pub fn made_here(pin: &Pin) -> bool {
    let now = Made::of(&pin.fd, &pin.st);
    let seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    seen.iter()
        .any(|s| s.path == pin.path && s.made.iter().any(|m| m.same(&now)))
}

/// Where a chain of symbolic links ends in a descriptor's object that has no path ("pipe:[81]",
/// "socket:[9]", "anon_inode:[eventfd]": procfs's links of /proc/PID/fd), if it does.
fn descriptor_end(path: &Path) -> Option<String> {
    let mut at = path.to_path_buf();
    for _ in 0..8 {
        let to = std::fs::read_link(&at).ok()?;
        let text = to.to_string_lossy();
        if ["pipe:[", "socket:[", "anon_inode:"]
            .iter()
            .any(|p| text.starts_with(p))
        {
            return Some(text.into_owned());
        }
        at = match to.is_absolute() {
            true => to,
            false => at.parent()?.join(to),
        };
    }
    None
}

impl Pin {
    /// The existing target at `path`, or `None` when nothing has that name. A symbolic link is followed
    /// once (said in `notes`); every later open goes to what was found.
    pub fn lookup(path: &Path, notes: &mut Vec<String>) -> Result<Option<Pin>> {
        let shown = path.display().to_string();
        let (dir, name) = open_parent(path)?;
        let st = match sys::fstatat_nofollow(dir.as_raw_fd(), &name) {
            Ok(st) => st,
            Err(e) if e.errno == libc::ENOENT => return Ok(None),
            Err(e) => return Err(Error::sys_on(e, &shown)),
        };
        if st.st_mode & libc::S_IFMT != libc::S_IFLNK {
            return Pin::open_found(dir, name, path).map(Some);
        }
        let real = std::fs::canonicalize(path).map_err(|e| {
            let to = std::fs::read_link(path).map_or("?".into(), |t| t.display().to_string());
            if let Some(end) = descriptor_end(path) {
                // /dev/stdout and the like: a link of procfs to what a descriptor holds.
                return Error::usage(
                    "--target",
                    format!(
                        "{shown} leads to {end}, an open descriptor's pipe, socket or other object, not a \
                         file iolab can open by name: give a file, a device, or the targets pipe, \
                         socketpair or tcp"
                    ),
                );
            }
            Error::usage(
                "--target",
                format!(
                "{shown} is a dangling symlink (it points to {to}: {e}); iolab creates nothing through a \
                 symbolic link: name the file itself"
                ),
            )
        })?;
        notes.push(format!(
            "{shown} is a symbolic link: iolab followed it once, to {}, and used that file throughout",
            real.display()
        ));
        let (dir, name) = open_parent(&real)?;
        Pin::open_found(dir, name, &real).map(Some)
    }

    fn open_found(dir: OwnedFd, name: OsString, path: &Path) -> Result<Pin> {
        let shown = path.display().to_string();
        let fd = sys::openat(dir.as_raw_fd(), &name, libc::O_PATH | libc::O_NOFOLLOW, 0)
            .map_err(|e| Error::sys_on(e, &shown))?;
        let st = sys::fstat(fd.as_raw_fd()).map_err(|e| Error::sys_on(e, &shown))?;
        if st.st_mode & libc::S_IFMT == libc::S_IFLNK {
            return Err(replaced(&shown));
        }
        Ok(Pin {
            dir,
            name,
            fd,
            st,
            path: path.to_path_buf(),
        })
    }

    /// The looked-up object as a path the kernel resolves to it (`/proc/self/fd/N`), for calls that take
    /// a path (statfs).
    pub fn proc_path(&self) -> PathBuf {
        sys::fd_path(self.fd.as_raw_fd())
    }

    /// The iolab process that marked this file as its own, if one did (see [`crate::leftovers`]).
    pub fn iolab_owner(&self) -> Option<crate::leftovers::Process> {
        crate::leftovers::marked_by(self.fd.as_raw_fd())
    }

    /// Opens the target with `flags`, only while its name is still the file looked up.
    pub fn open(&self, flags: libc::c_int) -> Result<OwnedFd> {
        open_same(
            &self.dir,
            &self.name,
            flags,
            sys::identity(&self.st),
            &self.path,
        )
    }
}

/// What a prepared target's opens go through: the existing file looked up, or the file iolab made.
#[derive(Debug)]
pub enum Handle {
    Existing(Pin),
    Made(Created),
}

impl Handle {
    /// Opens the target with `flags`, only while its name is still the file iolab looked up or made.
    pub fn open(&self, flags: libc::c_int) -> Result<OwnedFd> {
        match self {
            Handle::Existing(p) => p.open(flags),
            Handle::Made(c) => c.reopen(flags),
        }
    }

    /// The file iolab made, if it made it.
    pub fn made(&self) -> Option<&Created> {
        match self {
            Handle::Made(c) => Some(c),
            Handle::Existing(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file put under the name of one iolab made, after that one was removed, is not taken for it (to
    /// grow, or to write into), also when it got the removed file's inode number (ext4 hands a freed
    /// number out again): its birth time tells them apart where the filesystem keeps one.
    #[test]
    fn a_file_put_where_a_made_one_was_is_not_taken_for_it() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("kept");
        let make = || OwnedFd::from(std::fs::File::create(&path).unwrap());
        let look = || Pin::lookup(&path, &mut Vec::new()).unwrap().unwrap();
        let first = make();
        record_made(&path, &first).unwrap();
        let id = sys::identity(&look().st);
        assert!(made_here(&look()), "the file iolab made is its own");
        drop(first);
        for _ in 0..50 {
            std::fs::remove_file(&path).unwrap();
            let second = make();
            let pin = look();
            if sys::identity(&pin.st) != id {
                assert!(!made_here(&pin), "another inode is not the file iolab made");
                continue;
            }
            match sys::statx_btime(second.as_raw_fd()).unwrap() {
                Some(_) => {
                    assert!(!made_here(&pin), "a reused inode number, born later");
                    let e = check_same_meaning(&path, Some(&pin), "kept").unwrap_err();
                    assert!(e.to_string().contains("appeared after"), "{e}");
                }
                None => println!("this filesystem keeps no birth time: a reused inode is trusted"),
            }
            return;
        }
        println!("the filesystem gave the removed file's inode number to none of 50 new files");
    }
}

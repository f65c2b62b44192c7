//! The journal's format: where journals live, what a line records (a path's identity, a zram device's),
//! and reading one back.

use iolab_sys as sys;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The extended attribute iolab marks what it creates with (where the filesystem allows user attributes).
pub const XATTR: &str = "user.iolab";

/// First line of every journal.
pub(super) const MAGIC: &str = "iolab-journal 1";

/// The journal directory of the user iolab runs as (by effective uid; the environment is not asked, so
/// that `iolab clean` finds what an iolab under sudo or cron left).
pub fn journal_dir() -> PathBuf {
    let uid = sys::geteuid();
    if uid == 0 {
        return PathBuf::from("/run/iolab");
    }
    let run = PathBuf::from(format!("/run/user/{uid}"));
    match std::fs::symlink_metadata(&run) {
        Ok(m) if m.is_dir() && std::os::unix::fs::MetadataExt::uid(&m) == uid => run.join("iolab"),
        _ => PathBuf::from(format!("/tmp/iolab-{uid}")),
    }
}

/// Opens the journal directory (creating it, mode 0700, when `create`), refusing one that is a symbolic
/// link, not a directory, not owned by this user or open to others. `Ok(None)`: it does not exist.
pub(crate) fn open_journal_dir(create: bool) -> Result<Option<(PathBuf, OwnedFd)>, String> {
    let dir = journal_dir();
    if create {
        match sys::mkdir(&dir, 0o700) {
            Ok(()) => {}
            Err(e) if e.errno == libc::EEXIST => {}
            Err(e) => {
                return Err(format!(
                    "cannot create {}: {}",
                    dir.display(),
                    sys::errno_name(e.errno)
                ))
            }
        }
    }
    let fd = match sys::open(
        &dir,
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW,
        0,
    ) {
        Ok(fd) => fd,
        Err(e) if e.errno == libc::ENOENT && !create => return Ok(None),
        Err(e) if e.errno == libc::ELOOP || e.errno == libc::ENOTDIR => {
            return Err(format!(
                "{} is not a directory (a symbolic link or a file): not iolab's",
                dir.display()
            ))
        }
        Err(e) => {
            return Err(format!(
                "cannot open {}: {}",
                dir.display(),
                sys::errno_name(e.errno)
            ))
        }
    };
    let st = sys::fstat(fd.as_raw_fd())
        .map_err(|e| format!("{}: {}", dir.display(), sys::errno_name(e.errno)))?;
    let uid = sys::geteuid();
    if st.st_uid != uid || st.st_mode & 0o077 != 0 {
        return Err(format!(
            "{} is owned by uid {} with mode {:o}; iolab keeps its journal only in a directory of uid {uid} with \
             mode 700 (remove or fix it)",
            dir.display(),
            st.st_uid,
            st.st_mode & 0o7777
        ));
    }
    Ok(Some((dir, fd)))
}

/// A process, told apart from a later one with the same pid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Process {
    pub pid: i32,
    /// Field 22 of /proc/PID/stat: clock ticks after boot.
    pub start: u64,
    /// /proc/sys/kernel/random/boot_id.
    pub boot: String,
}

/// (start time, state) from /proc/PID/stat.
pub(super) fn stat_of(pid: i32) -> Option<(u64, char)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces or parentheses: fields follow the last ')'.
    let rest = &s[s.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some((f.get(19)?.parse().ok()?, f.first()?.chars().next()?))
}

pub(super) fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

impl Process {
    /// This process.
    pub fn me() -> &'static Process {
        static ME: OnceLock<Process> = OnceLock::new();
        ME.get_or_init(|| {
            let pid = std::process::id() as i32;
            Process {
                pid,
                start: stat_of(pid).map(|s| s.0).unwrap_or(0),
                boot: boot_id(),
            }
        })
    }

    /// Is it still running (not a zombie, not a later process with its pid, not from an earlier boot)?
    pub fn alive(&self) -> bool {
        self.boot == boot_id()
            && matches!(stat_of(self.pid), Some((start, state)) if start == self.start && !matches!(state, 'Z' | 'X'))
    }

    pub(super) fn journal_name(&self) -> String {
        format!("{}-{}.journal", self.pid, self.start)
    }
}

/// One path iolab created, as the journal records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub id: u64,
    pub is_dir: bool,
    pub dev: u64,
    pub ino: u64,
    pub uid: u32,
    pub btime: Option<(i64, u32)>,
    /// The directory it was created in.
    pub pdev: u64,
    pub pino: u64,
    /// iolab set [`XATTR`] on it (to [`mark_value`]).
    pub marked: bool,
    pub path: PathBuf,
    /// A directory whose whole tree is iolab's (its child processes wrote there: a `t ID` line after
    /// the entry's): `clean` removes it with what it holds.
    pub tree: bool,
}

/// A zram block device iolab made (hot_add) and sized for a suite, as the journal records it: after a
/// kill, `clean` resets and removes it (see `zram.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZramEntry {
    pub id: u64,
    /// N of /dev/zramN.
    pub dev: u32,
    /// The disksize iolab gave it, bytes.
    pub disksize: u64,
}

impl ZramEntry {
    pub(super) fn line(&self) -> String {
        format!("z {} {} {}\n", self.id, self.dev, self.disksize)
    }

    pub(super) fn parse(l: &str) -> Option<ZramEntry> {
        let f: Vec<&str> = l.split(' ').collect();
        match f.as_slice() {
            ["z", id, dev, size] => Some(ZramEntry {
                id: id.parse().ok()?,
                dev: dev.parse().ok()?,
                disksize: size.parse().ok()?,
            }),
            _ => None,
        }
    }
}

/// What iolab writes into [`XATTR`] of the entry `id` of `p`'s journal.
pub fn mark_value(p: &Process, id: u64) -> String {
    format!("{}:{}:{}:{id}", p.boot, p.pid, p.start)
}

/// The iolab process whose mark [`XATTR`] the file `fd` carries (any descriptor, `O_PATH` too), if it
/// carries one that parses.
pub fn marked_by(fd: std::os::fd::RawFd) -> Option<Process> {
    let v = sys::get_xattr(fd, XATTR).ok()??;
    let v = String::from_utf8(v).ok()?;
    let mut f = v.split(':');
    let (boot, pid, start) = (f.next()?, f.next()?, f.next()?);
    Some(Process {
        pid: pid.parse().ok()?,
        start: start.parse().ok()?,
        boot: boot.to_string(),
    })
}

pub(super) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub(super) fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

impl Entry {
    pub(super) fn line(&self) -> String {
        let bt = self
            .btime
            .map(|(s, n)| format!("{s}.{n:09}"))
            .unwrap_or_else(|| "-".into());
        format!(
            "+ {} {} {} {} {} {bt} {} {} {} {}\n",
            self.id,
            if self.is_dir { 'd' } else { 'f' },
            self.dev,
            self.ino,
            self.uid,
            self.pdev,
            self.pino,
            u8::from(self.marked),
            hex(self.path.as_os_str().as_bytes())
        )
    }

    pub(super) fn parse(l: &str) -> Option<Entry> {
        let f: Vec<&str> = l.split(' ').collect();
        if f.len() != 11 || f[0] != "+" {
            return None;
        }
        let btime = match f[6] {
            "-" => None,
            t => {
                let (s, n) = t.split_once('.')?;
                Some((s.parse().ok()?, n.parse().ok()?))
            }
        };
        Some(Entry {
            id: f[1].parse().ok()?,
            is_dir: match f[2] {
                "d" => true,
                "f" => false,
                _ => return None,
            },
            dev: f[3].parse().ok()?,
            ino: f[4].parse().ok()?,
            uid: f[5].parse().ok()?,
            btime,
            pdev: f[7].parse().ok()?,
            pino: f[8].parse().ok()?,
            marked: f[9] == "1",
            path: PathBuf::from(std::ffi::OsStr::from_bytes(&unhex(f[10])?)),
            tree: false,
        })
    }
}

/// A cgroup directory iolab made, as the journal records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupEntry {
    pub id: u64,
    pub path: PathBuf,
}

impl CgroupEntry {
    pub(super) fn line(&self) -> String {
        format!("g {} {}\n", self.id, hex(self.path.as_os_str().as_bytes()))
    }

    pub(super) fn parse(l: &str) -> Option<CgroupEntry> {
        let f: Vec<&str> = l.split(' ').collect();
        match f.as_slice() {
            ["g", id, path] => Some(CgroupEntry {
                id: id.parse().ok()?,
                path: PathBuf::from(std::ffi::OsStr::from_bytes(&unhex(path)?)),
            }),
            _ => None,
        }
    }
}

/// A journal's contents: whose it is, and the entries not removed.
#[derive(Debug)]
pub(crate) struct Contents {
    pub owner: Process,
    pub live: Vec<Entry>,
    /// zram devices made and not removed.
    pub zram: Vec<ZramEntry>,
    /// Memory cgroups made and not removed.
    pub cgroups: Vec<CgroupEntry>,
    /// Lines that could not be read (a journal cut short by the kill, or damaged).
    pub bad_lines: usize,
}

pub(super) fn header(p: &Process) -> String {
    format!("{MAGIC} {} {} {}\n", p.pid, p.start, p.boot)
}

pub(crate) fn parse(text: &str) -> Option<Contents> {
    let mut lines = text.split_inclusive('\n');
    let h = lines.next()?.strip_suffix('\n')?.strip_prefix(MAGIC)?;
    let f: Vec<&str> = h.split_whitespace().collect();
    let owner = Process {
        pid: f.first()?.parse().ok()?,
        start: f.get(1)?.parse().ok()?,
        boot: f.get(2)?.to_string(),
    };
    let mut live: Vec<Entry> = Vec::new();
    let mut zram: Vec<ZramEntry> = Vec::new();
    let mut cgroups = Vec::new();
    let mut bad_lines = 0;
    for l in lines {
        // A line without its newline was cut short by the kill: not trusted.
        let Some(l) = l.strip_suffix('\n') else {
            bad_lines += 1;
            continue;
        };
        if let Some(id) = l.strip_prefix("t ").and_then(|i| i.parse::<u64>().ok()) {
            live.iter_mut()
                .filter(|e| e.id == id && e.is_dir)
                .for_each(|e| e.tree = true);
        } else if let Some(id) = l.strip_prefix("- ").and_then(|i| i.parse::<u64>().ok()) {
            live.retain(|e| e.id != id);
            zram.retain(|z| z.id != id);
            cgroups.retain(|g: &CgroupEntry| g.id != id);
        } else if let Some(e) = Entry::parse(l) {
            live.push(e);
        } else if let Some(z) = ZramEntry::parse(l) {
            zram.push(z);
        } else if let Some(g) = CgroupEntry::parse(l) {
            cgroups.push(g);
        } else {
            bad_lines += 1;
        }
    }
    Some(Contents {
        owner,
        live,
        zram,
        cgroups,
        bad_lines,
    })
}

/// The directory part and the name of an absolute recorded path.
pub(crate) fn split(p: &Path) -> Option<(&Path, &std::ffi::OsStr)> {
    Some((p.parent()?, p.file_name()?))
}

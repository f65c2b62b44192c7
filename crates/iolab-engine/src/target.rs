//! What is written to or read from, and the safety rules around it.
//!
//! - A regular file: created if missing (sparse, sized by `--file-size`; prefilled with the pattern for a
//!   read run) and removed at exit unless `--keep`. Writing into a file iolab did not create needs
//!   `--overwrite`.
//! - `/dev/null` (write sink) and `/dev/zero` (read source; writes are discarded too).
//! - A block device (loop, zram ...): writing needs `--allow-device-writes` and is refused while the device,
//!   a partition of it, or a device built on it is mounted (in any mount namespace), used as swap, held by
//!   another driver, or the backing of a loop device. Then iolab opens it with O_EXCL, the kernel's own
//!   exclusive claim (EBUSY while anything mounts or claims it, whatever the namespace), and keeps that
//!   descriptor until the pass ends, so nothing can mount or claim it while iolab writes.
//! - Never a file of a kernel-interface filesystem (procfs, sysfs, debugfs, tracefs, cgroupfs, configfs,
//!   securityfs, efivarfs ...; [`sys::pseudo_fs_name`]), nor a new path in a directory of one, whatever the
//!   flags: those files are settings and counters, not storage.
//!
//! - A stream: `pipe`, `socketpair` (AF_UNIX) or `tcp` (a connection over 127.0.0.1), one per thread, with a
//!   peer thread of iolab's at the other end (`iolab-peer`) that reads and discards what a write run sends,
//!   or writes the pattern for a read run to consume. The peer counts the bytes; for writes the run checks
//!   they all arrived. These words are targets, not paths (a file called `pipe` is `./pipe`).
//! - iolab's sink driver, /dev/iolab_sink, once it answers IDENTIFY (target/sink.rs).
//!
//! Every refusal here is a usage error naming the flag to change.

mod cache;
mod dio;
mod peer;
mod sink;
pub mod space;

use crate::cleanup::Created;
use crate::error::{Error, Result};
use crate::method::{Fit, METHODS};
use crate::pattern;
use crate::spec::{OpKind, Spec};
use dio::{check_direct_before_creating, check_direct_multiples};
use iolab_sys as sys;
use serde::{Deserialize, Serialize};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    File,
    DevNull,
    DevZero,
    BlockDevice,
    Pipe,
    Socketpair,
    Tcp,
    /// iolab's sink driver, /dev/iolab_sink.
    Sink,
}

impl TargetKind {
    /// Does the target keep what is written (so it can be verified)?
    pub fn keeps_data(self) -> bool {
        matches!(self, Self::File | Self::BlockDevice | Self::Sink)
    }

    /// A pipe or socket with iolab's peer at the other end.
    pub fn is_stream(self) -> bool {
        matches!(
            self,
            TargetKind::Pipe | TargetKind::Socketpair | TargetKind::Tcp
        )
    }

    /// The stream target a `--target` word names, if it is one.
    pub fn stream_named(path: &Path) -> Option<TargetKind> {
        match path.to_str()? {
            "pipe" => Some(TargetKind::Pipe),
            "socketpair" => Some(TargetKind::Socketpair),
            "tcp" => Some(TargetKind::Tcp),
            _ => None,
        }
    }
}

/// What the peers at the far end of a stream target did, all threads together.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct PeerFigures {
    /// Bytes the peers received (write runs) or sent (read runs: they write ahead of the reader, so this is
    /// more than the run read).
    pub bytes: u64,
    /// The peer threads' own CPU time (RUSAGE_THREAD), seconds.
    pub user_s: f64,
    pub sys_s: f64,
}

/// The far end of one thread's stream.
type PeerHandle = std::thread::JoinHandle<std::result::Result<PeerFigures, String>>;

/// Region the threads share: `threads` consecutive regions of `region_blocks` blocks from `--offset`.
/// For /dev/null and /dev/zero the regions are nominal (offsets are ignored by those devices).
#[derive(Debug)]
pub struct PreparedTarget {
    pub path: PathBuf,
    pub kind: TargetKind,
    /// iolab created the file for this run.
    pub created: bool,
    pub region_blocks: u64,
    /// O_DIRECT alignment (memory, offset) when `--direct`.
    pub dio_align: Option<(u32, u32)>,
    /// Alignment of I/O buffers: at least a page, more if O_DIRECT asks for it.
    pub buf_align: usize,
    /// Things the user should know (prefill done, alignment assumed ...).
    pub notes: Vec<String>,
    guard: Option<Created>,
    /// A block device written to: the O_EXCL descriptor that claims it for as long as this value lives (the
    /// runner and the offload run keep it to the end of the pass, after the last write and --verify).
    claim: Option<OwnedFd>,
    /// Stream targets: the peer threads started by `open_for`.
    peers: std::sync::Mutex<Vec<PeerHandle>>,
    /// The sink driver's target: its settings and a descriptor for its counters.
    sink: Option<sink::SinkTarget>,
}

const PAGE: usize = 4096;
/// Region of a stream target per thread, in bytes (nominal: nothing maps it). /dev/null's and /dev/zero's
/// come from the address space ([`space::sink_region`]).
const SINK_REGION: u64 = space::SINK_REGION_MAX;
/// File size when the run is bounded only by a duration.
pub const DEFAULT_FILE_SIZE: u64 = 64 << 20;

fn major_minor(rdev: libc::dev_t) -> (u32, u32) {
    (libc::major(rdev), libc::minor(rdev))
}

/// A block device, a partition of it, or a device stacked on it: (major, minor, how to name it).
type DevIds = Vec<(u32, u32, String)>;

/// Why a block device must not be written now: mounted (in this or any other mount namespace iolab can
/// read), swap, held by another driver, or the backing of a loop device. `None` if none of these.
pub fn device_in_use(dev: &Path, rdev: libc::dev_t) -> Option<String> {
    let (ma, mi) = major_minor(rdev);
    let sys_dir = PathBuf::from(format!("/sys/dev/block/{ma}:{mi}"));
    let ids = device_ids(&sys_dir, dev, (ma, mi));
    if let Some(why) = std::fs::read_to_string("/proc/self/mountinfo")
        .ok()
        .and_then(|text| mounted_in(&text, &ids))
    {
        return Some(why);
    }
    if let Some(why) = mounted_elsewhere(&ids) {
        return Some(why);
    }
    if let Ok(sw) = std::fs::read_to_string("/proc/swaps") {
        for line in sw.lines().skip(1) {
            if let Some(name) = line.split_whitespace().next() {
                if let Ok(st) = sys::stat(Path::new(name)) {
                    if let Some(what) = named(&ids, major_minor(st.st_rdev)) {
                        return Some(format!("{what} is in use as swap"));
                    }
                }
            }
        }
    }
    if let Ok(h) = std::fs::read_dir(sys_dir.join("holders")) {
        let holders: Vec<String> = h
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if !holders.is_empty() {
            return Some(format!("it is held by {}", holders.join(", ")));
        }
    }
    loop_over(&ids)
}

/// The device itself and its partitions.
fn device_ids(sys_dir: &Path, dev: &Path, (ma, mi): (u32, u32)) -> DevIds {
    let mut ids = vec![(ma, mi, dev.display().to_string())];
    if let Ok(entries) = std::fs::read_dir(sys_dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.join("partition").exists() {
                if let Some((a, b)) = read_dev_numbers(&p.join("dev")) {
                    ids.push((
                        a,
                        b,
                        format!("partition {}", e.file_name().to_string_lossy()),
                    ));
                }
            }
        }
    }
    ids
}

/// A sysfs `dev` file: "major:minor".
fn read_dev_numbers(file: &Path) -> Option<(u32, u32)> {
    let d = std::fs::read_to_string(file).ok()?;
    let (a, b) = d.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

fn named(ids: &DevIds, (a, b): (u32, u32)) -> Option<&str> {
    ids.iter()
        .find(|(x, y, _)| *x == a && *y == b)
        .map(|(_, _, what)| what.as_str())
}

/// "X is mounted at M" if a mountinfo text mounts one of `ids`.
fn mounted_in(mountinfo: &str, ids: &DevIds) -> Option<String> {
    for line in mountinfo.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 5 {
            continue;
        }
        if let Some((a, b)) = f[2].split_once(':') {
            let ab = (a.parse().unwrap_or(u32::MAX), b.parse().unwrap_or(u32::MAX));
            if let Some(what) = named(ids, ab) {
                return Some(format!("{what} is mounted at {}", f[4]));
            }
        }
    }
    None
}

/// A mount of one of `ids` in another mount namespace: each namespace read once, from the first process
/// in it whose mountinfo iolab may read (all of them as root).
fn mounted_elsewhere(ids: &DevIds) -> Option<String> {
    let mut seen = std::collections::HashSet::new();
    if let Ok(own) = std::fs::read_link("/proc/self/ns/mnt") {
        seen.insert(own);
    }
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(ns) = std::fs::read_link(format!("/proc/{pid}/ns/mnt")) else {
            continue;
        };
        if !seen.insert(ns) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/mountinfo")) else {
            continue;
        };
        if let Some(m) = mounted_in(&text, ids) {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            return Some(format!(
                "{m} in another mount namespace (that of process {pid}, {})",
                comm.trim()
            ));
        }
    }
    None
}

/// A loop device whose backing file is one of `ids` (loop devices do not appear in holders/; their
/// backing is in /sys/block/loopN/loop/backing_file), with what in turn uses that loop device.
fn loop_over(ids: &DevIds) -> Option<String> {
    for e in std::fs::read_dir("/sys/block").ok()?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(back) = std::fs::read_to_string(e.path().join("loop/backing_file")) else {
            continue;
        };
        let back = back.trim_end_matches('\n');
        let back = back.strip_suffix(" (deleted)").unwrap_or(back);
        let Ok(bst) = sys::stat(Path::new(back)) else {
            continue;
        };
        if bst.st_mode & libc::S_IFMT != libc::S_IFBLK {
            continue;
        }
        let Some(what) = named(ids, major_minor(bst.st_rdev)) else {
            continue;
        };
        let loop_dev = format!("/dev/{name}");
        let used = read_dev_numbers(&e.path().join("dev"))
            .and_then(|(a, b)| device_in_use(Path::new(&loop_dev), libc::makedev(a, b)));
        return Some(match used {
            Some(why) => format!("the loop device {loop_dev} is stacked on {what}, and {why}"),
            None => {
                format!("the loop device {loop_dev} is stacked on {what} (losetup -d {loop_dev})")
            }
        });
    }
    None
}

/// Claims a block device about to be written: the checks of [`device_in_use`] (before any open), then the
/// kernel's exclusive open (O_EXCL fails with EBUSY while anything mounts or claims the device or a
/// partition of it, in any namespace), then the checks again. The returned descriptor keeps the claim:
/// nothing can mount or claim the device while it is open.
fn claim_device(path: &Path, rdev: libc::dev_t, shown: &str) -> Result<OwnedFd> {
    let refuse = |why: String| {
        let undo = if why.contains("is mounted at") {
            "unmount it"
        } else if why.contains("as swap") {
            "swapoff it"
        } else if why.contains("stacked on") {
            "detach it"
        } else {
            "free it"
        };
        Error::usage(
            "--target",
            format!("refusing to write to {shown}: {why}; {undo} or choose another device"),
        )
    };
    if let Some(why) = device_in_use(path, rdev) {
        return Err(refuse(why));
    }
    let claim = match sys::open(path, libc::O_RDONLY | libc::O_EXCL, 0) {
        Ok(fd) => fd,
        Err(e) if e.errno == libc::EBUSY => {
            return Err(refuse(device_in_use(path, rdev).unwrap_or_else(|| {
                "the kernel refuses iolab an exclusive open (O_EXCL: EBUSY), so something holds it that \
                 iolab cannot name (a mount in a mount namespace it cannot read, another program's exclusive \
                 open, or a driver; see lsblk and fuser -m)"
                    .into()
            })))
        }
        Err(e) => return Err(Error::sys_on(e, shown)),
    };
    // Again with the claim held: what started using it since the first look (a stacked loop device, say).
    match device_in_use(path, rdev) {
        Some(why) => Err(refuse(why)),
        None => Ok(claim),
    }
}

/// Refuses a file of a kernel-interface filesystem (procfs, sysfs, debugfs ...), or a new path in a
/// directory of one, whatever the flags.
fn check_not_pseudo(path: &Path, exists: bool, shown: &str) -> Result<()> {
    let on = if exists { path } else { parent_of(path) };
    // A missing parent is reported by check_parent.
    let Ok(magic) = sys::fs_magic(on) else {
        return Ok(());
    };
    let Some(fs) = sys::pseudo_fs_name(magic) else {
        return Ok(());
    };
    let what = if exists {
        format!("{shown} is a file of {fs}")
    } else {
        format!(
            "{shown} would be created in {}, a directory of {fs}",
            on.display()
        )
    };
    Err(target_err(format!(
        "{what}, a kernel-interface filesystem whose files are settings and counters, not storage: iolab \
         never uses them as targets, not even with --overwrite; choose a path on a disk filesystem or tmpfs"
    )))
}

fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

fn target_err(msg: impl Into<String>) -> Error {
    Error::usage("--target", msg)
}

/// Inspects the target, applies the safety rules, creates/sizes/prefills a file, and works out regions and
/// alignment. Nothing is written into a pre-existing target here.
pub fn setup(spec: &Spec) -> Result<PreparedTarget> {
    let path = spec.target.clone();
    if let Some(kind) = TargetKind::stream_named(&path) {
        sink::check_flags(spec, kind, &path.display().to_string())?;
        cache::check(spec, kind, &path.display().to_string())?;
        return setup_stream(spec, kind);
    }
    let writes = spec.op == OpKind::Write && !spec.method.info().no_data;
    let shown = path.display().to_string();
    let st = match sys::stat(&path) {
        Ok(st) => Some(st),
        Err(e) if e.errno == libc::ENOENT => None,
        Err(e) if e.errno == libc::ENOTDIR => {
            return Err(target_err(format!(
                "{shown}: a parent of this path is not a directory"
            )))
        }
        Err(e) => return Err(Error::sys_on(e, &shown)),
    };
    check_not_pseudo(&path, st.is_some(), &shown)?;
    if let Some(t) = sink::setup_if_sink(spec, st.as_ref(), &shown)? {
        return Ok(t);
    }
    let bs = spec.bs;
    let threads = spec.threads as u64;
    let mut notes = Vec::new();

    let kind = kind_of(st.as_ref(), &shown)?;
    sink::check_flags(spec, kind, &shown)?;
    cache::check(spec, kind, &shown)?;

    // Rules that depend on the kind.
    if kind == TargetKind::DevNull && spec.op == OpKind::Read {
        return Err(Error::usage(
            "--op",
            "read from /dev/null returns no data (end of file at once); read from /dev/zero instead",
        ));
    }
    if spec.verify && !kind.keeps_data() {
        return Err(Error::usage(
            "--verify",
            format!("{shown} keeps no data to read back; verify a regular file or a block device"),
        ));
    }
    check_fit(spec, kind, &shown)?;
    let existing_file = kind == TargetKind::File && st.is_some();
    if existing_file && writes && !spec.overwrite {
        return Err(Error::usage(
            "--overwrite",
            format!("{shown} exists and iolab did not create it; add --overwrite to write into it, or choose a new path (a file a killed iolab left: `iolab clean` removes it)"),
        ));
    }
    let claim = if kind == TargetKind::BlockDevice && writes {
        if !spec.allow_device_writes {
            return Err(Error::usage(
                "--allow-device-writes",
                format!("{shown} is a block device; writing destroys its contents: add --allow-device-writes to do it"),
            ));
        }
        let rdev = st.as_ref().expect("device exists").st_rdev;
        Some(claim_device(&path, rdev, &shown)?)
    } else {
        None
    };
    if kind == TargetKind::File && st.is_none() {
        check_parent(&path)?;
        if spec.direct {
            check_direct_before_creating(spec, &path, &shown)?;
        }
    }

    // Sizes.
    let mut created = None;
    let usable = usable_bytes(spec, kind, &shown, st.as_ref(), existing_file)?;
    let region_blocks = usable / threads / bs;
    if region_blocks == 0 {
        let flag = if spec.file_size.is_some() {
            "--file-size"
        } else {
            "--target"
        };
        return Err(Error::usage(
            flag,
            format!("{usable} bytes of {shown} cannot hold one --bs {bs} block per thread ({threads} threads)"),
        ));
    }
    let end = spec.offset + region_blocks * threads * bs;

    // Create the file now (so its filesystem can be asked about O_DIRECT).
    if kind == TargetKind::File && !existing_file {
        let fd = sys::open(&path, libc::O_RDWR | libc::O_CREAT | libc::O_EXCL, 0o644)
            .map_err(|e| Error::sys_on(e, &shown))?;
        created = Some(Created::register(&path, spec.keep));
        sys::ftruncate(fd.as_raw_fd(), end).map_err(|e| Error::sys_on(e, &shown))?;
        if spec.op == OpKind::Read {
            prefill(fd.as_raw_fd(), spec, end, &shown)?;
            notes.push(format!(
                "iolab created {shown} and filled {end} bytes with its pattern before the run (not timed); \
                 buffered reads may be served from the page cache"
            ));
        }
    }

    // A mapped write cannot report a full filesystem (it faults): reserve the blocks first.
    if kind == TargetKind::File && writes && spec.method.info().maps {
        notes.push(crate::fault::reserve_for_mapping(
            &path,
            spec.offset,
            end,
            &shown,
        )?);
    }

    if spec.cold_cache {
        notes.push(cache::drop_pages(&path, spec.offset, end, &shown)?);
    }
    let dio_align = direct_align(spec, kind, &shown, &mut notes)?;
    let buf_align = dio_align
        .map(|(m, _)| (m as usize).max(PAGE))
        .unwrap_or(PAGE);

    Ok(PreparedTarget {
        path,
        kind,
        created: created.is_some(),
        region_blocks,
        dio_align,
        buf_align,
        notes,
        guard: created,
        claim,
        peers: Default::default(),
        sink: None,
    })
}

/// What kind of target a path is, from its stat (none: a new file); other kinds are refused.
fn kind_of(st: Option<&iolab_sys::Stat>, shown: &str) -> Result<TargetKind> {
    Ok(match st {
        None => TargetKind::File,
        Some(st) => match st.st_mode & libc::S_IFMT {
            libc::S_IFDIR => {
                return Err(target_err(format!(
                    "{shown} is a directory; give a file path inside it, e.g. {}/iolab.dat",
                    shown.trim_end_matches('/')
                )))
            }
            libc::S_IFREG => TargetKind::File,
            libc::S_IFCHR => match major_minor(st.st_rdev) {
                (1, 3) => TargetKind::DevNull,
                (1, 5) => TargetKind::DevZero,
                _ => {
                    return Err(target_err(format!(
                        "{shown} is a character device other than /dev/null or /dev/zero (and not iolab's sink \
                         driver); accepted: a regular file, /dev/null, /dev/zero, /dev/iolab_sink or a block device"
                    )))
                }
            },
            libc::S_IFBLK => TargetKind::BlockDevice,
            _ => {
                return Err(target_err(format!(
                    "{shown} is a pipe or socket; accepted: a regular file, /dev/null, /dev/zero or a block device"
                )))
            }
        },
    })
}

/// A new file's parent must be an existing directory.
fn check_parent(path: &Path) -> Result<()> {
    let parent = parent_of(path);
    match sys::stat(parent) {
        Ok(p) if p.st_mode & libc::S_IFMT == libc::S_IFDIR => {}
        Ok(_) => {
            return Err(target_err(format!(
                "{}: parent is not a directory",
                parent.display()
            )))
        }
        Err(_) => {
            return Err(target_err(format!(
                "the parent directory {} does not exist; create it first or choose another path",
                parent.display()
            )))
        }
    }
    Ok(())
}

/// The bytes of the target the threads' regions may use, from its kind, size and the amounts asked.
fn usable_bytes(
    spec: &Spec,
    kind: TargetKind,
    shown: &str,
    st: Option<&iolab_sys::Stat>,
    existing_file: bool,
) -> Result<u64> {
    let bs = spec.bs;
    let threads = spec.threads as u64;
    let path = &spec.target;
    let needed_default = match spec.ops {
        Some(n) if spec.duration_s.is_none() || n.saturating_mul(bs) <= DEFAULT_FILE_SIZE * 16 => {
            n.div_ceil(threads).max(1) * threads * bs
        }
        _ => DEFAULT_FILE_SIZE,
    };
    Ok(match kind {
        TargetKind::DevNull | TargetKind::DevZero => space::sink_region(threads) * threads,
        TargetKind::Pipe | TargetKind::Socketpair | TargetKind::Tcp | TargetKind::Sink => {
            unreachable!("stream and sink targets are set up by their own functions")
        }
        TargetKind::BlockDevice => {
            let fd = sys::open(path, libc::O_RDONLY, 0).map_err(|e| Error::sys_on(e, shown))?;
            let size = sys::blk_size(fd.as_raw_fd()).map_err(|e| Error::sys_on(e, shown))?;
            let avail = size.saturating_sub(spec.offset);
            match spec.file_size {
                Some(fs) if fs > avail => {
                    return Err(Error::usage(
                        "--file-size",
                        format!(
                            "{fs} bytes from --offset {} do not fit on {shown} ({size} bytes)",
                            spec.offset
                        ),
                    ))
                }
                Some(fs) => fs,
                None => avail,
            }
        }
        TargetKind::File if existing_file => {
            let size = st.map(|s| s.st_size as u64).unwrap_or(0);
            if spec.op == OpKind::Read {
                let avail = size.saturating_sub(spec.offset);
                match spec.file_size {
                    Some(fs) if fs > avail => {
                        return Err(Error::usage(
                            "--file-size",
                            format!("{shown} holds only {avail} bytes from --offset {}; reads past the end return no data", spec.offset),
                        ))
                    }
                    Some(fs) => fs,
                    None => avail,
                }
            } else {
                spec.file_size.unwrap_or(needed_default)
            }
        }
        TargetKind::File => spec.file_size.unwrap_or(needed_default),
    })
}

/// The O_DIRECT alignment (memory, offset) of the target, with --bs and --offset checked against it.
fn direct_align(
    spec: &Spec,
    kind: TargetKind,
    shown: &str,
    notes: &mut Vec<String>,
) -> Result<Option<(u32, u32)>> {
    if spec.direct && kind != TargetKind::DevNull && kind != TargetKind::DevZero {
        let dfd = sys::open(&spec.target, libc::O_RDONLY | libc::O_DIRECT, 0).map_err(|e| {
            if e.errno == libc::EINVAL {
                Error::usage(
                    "--direct",
                    format!("the filesystem of {shown} does not support O_DIRECT"),
                )
            } else {
                Error::sys_on(e, shown)
            }
        })?;
        let align = if kind == TargetKind::BlockDevice {
            let s =
                sys::blk_logical_sector(dfd.as_raw_fd()).map_err(|e| Error::sys_on(e, shown))?;
            Some((s, s))
        } else {
            match sys::statx_dio_align(dfd.as_raw_fd()) {
                Ok(Some(a)) => Some(a),
                _ => {
                    notes.push("the filesystem does not report its O_DIRECT alignment (statx STATX_DIOALIGN); assumed 512 bytes".into());
                    Some((512, 512))
                }
            }
        };
        if let Some((mem, off)) = align {
            check_direct_multiples(spec, shown, off)?;
            return Ok(Some((mem, off)));
        }
    } else if spec.direct {
        notes.push(format!(
            "--direct has no effect on {shown}: the device ignores O_DIRECT"
        ));
    }
    Ok(None)
}

/// Refuses a target the method's registry entry says it cannot take (`{t}` in its reason is `shown`),
/// naming the methods that can.
fn check_fit(spec: &Spec, kind: TargetKind, shown: &str) -> Result<()> {
    let info = spec.method.info();
    let (why, flag) = match info.targets.fit(kind) {
        Fit::Yes => return Ok(()),
        Fit::No(w) | Fit::Never(w) => (w.replace("{t}", shown), "--method"),
        Fit::OtherTarget(w) => (w.replace("{t}", shown), "--target"),
    };
    let mut msg = format!("{} {why}", info.name);
    if kind.is_stream() && !why.contains("use ") {
        let fit: Vec<&str> = METHODS
            .iter()
            .filter(|m| m.targets.stream.ok() && !m.no_data)
            .map(|m| m.name)
            .collect();
        msg.push_str(&format!(": use {}", fit.join(", ")));
    }
    Err(Error::usage(flag, msg))
}

/// A stream target: nothing exists before the run; each thread's `open_for` makes its stream and peer.
fn setup_stream(spec: &Spec, kind: TargetKind) -> Result<PreparedTarget> {
    let name = match kind {
        TargetKind::Pipe => "pipe",
        TargetKind::Socketpair => "socketpair",
        _ => "TCP connection",
    };
    check_fit(spec, kind, &format!("a {name}"))?;
    if spec.verify {
        return Err(Error::usage(
            "--verify",
            format!("a {name} keeps nothing to read back; iolab's peer counts the bytes that arrive instead (in the result)"),
        ));
    }
    if spec.direct {
        return Err(Error::usage(
            "--direct",
            format!("O_DIRECT applies to files and block devices, not to a {name}"),
        ));
    }
    if !spec.fsync.is_none() {
        return Err(Error::usage(
            "--fsync",
            format!("a {name} has nothing to sync to storage (fsync answers EINVAL)"),
        ));
    }
    let peer = if spec.op == OpKind::Write {
        "reads and discards what the thread writes"
    } else {
        "writes the pattern in --bs chunks ahead of the thread's reads"
    };
    let what = match kind {
        TargetKind::Pipe => "pipe (pipe2, 64 KiB of buffer by default)",
        TargetKind::Socketpair => "AF_UNIX stream socketpair",
        _ => "TCP connection over 127.0.0.1 (TCP_NODELAY)",
    };
    Ok(PreparedTarget {
        path: spec.target.clone(),
        kind,
        created: false,
        region_blocks: SINK_REGION / spec.bs,
        dio_align: None,
        buf_align: PAGE,
        notes: vec![
            format!(
                "each thread has its own {what}; a peer thread of iolab's (iolab-peer) {peer}; its CPU is in the \
                 process total, not in the worker threads' figures, and shown as the peer's"
            ),
            "the kernel's read/write counters (syscr/syscw, rchar/wchar) are per process and include the peer's \
             calls, which go the other way: the per-op figure counts only the run's direction (syscw for writes, \
             syscr for reads)"
                .into(),
        ],
        guard: None,
        claim: None,
        peers: Default::default(),
        sink: None,
    })
}

/// Writes the pattern into [0, end) of a file iolab just created, so read runs read known data.
fn prefill(fd: i32, spec: &Spec, end: u64, shown: &str) -> Result<()> {
    let bs = spec.bs as usize;
    let per = (1usize << 20).div_ceil(bs).max(1);
    let what = "the chunk that fills a new file before a read run (at least one --bs block)";
    let mut chunk = crate::mem::zeroed::<u8>(bs * per, what, "lower --bs")?;
    for b in chunk.chunks_mut(bs) {
        pattern::fill_body(b, spec.seed);
    }
    let mut off = spec.offset;
    while off < end {
        let first_block = (off - spec.offset) / spec.bs;
        let n = ((end - off) as usize).min(chunk.len());
        for (i, b) in chunk[..n].chunks_mut(bs).enumerate() {
            pattern::stamp(b, spec.seed, first_block + i as u64);
        }
        let w = sys::pwrite(fd, &chunk[..n], off).map_err(|e| Error::sys_on(e, shown))?;
        off += w as u64;
    }
    Ok(())
}

impl PreparedTarget {
    /// Absolute byte offset of thread `t`'s region.
    pub fn region_first_block(&self, t: u32) -> u64 {
        t as u64 * self.region_blocks
    }

    /// Opens the target for one thread: O_WRONLY/O_RDONLY (O_RDWR when the method maps it), plus O_DIRECT.
    /// For a stream target: makes the thread's stream, starts its peer, and returns the thread's end.
    pub fn open_for(&self, spec: &Spec, needs_rdwr: bool) -> Result<OwnedFd> {
        if self.kind.is_stream() {
            return self.open_stream(spec);
        }
        let mut flags = match (spec.op, needs_rdwr) {
            (_, true) => libc::O_RDWR,
            (OpKind::Write, false) => libc::O_WRONLY,
            (OpKind::Read, false) => libc::O_RDONLY,
        };
        if spec.direct && self.dio_align.is_some() {
            flags |= libc::O_DIRECT;
        }
        if self.kind == TargetKind::Sink {
            return self.open_sink(flags);
        }
        sys::open(&self.path, flags, 0)
            .map_err(|e| Error::sys_on(e, self.path.display().to_string()))
    }

    fn open_stream(&self, spec: &Spec) -> Result<OwnedFd> {
        let write = spec.op == OpKind::Write;
        let (mine, theirs) = match self.kind {
            TargetKind::Pipe => {
                let (r, w) = sys::pipe()?;
                if write {
                    (w, r)
                } else {
                    (r, w)
                }
            }
            TargetKind::Socketpair => sys::socketpair_stream()?,
            _ => sys::tcp_loopback_pair()?,
        };
        let (bs, seed) = (spec.bs as usize, spec.seed);
        let h = std::thread::Builder::new()
            .name("iolab-peer".into())
            .spawn(move || {
                if write {
                    peer::drain(theirs)
                } else {
                    peer::feed(theirs, bs, seed)
                }
            })
            .map_err(|e| {
                crate::mem::thread_failed("the stream's peer thread", &e, "lower --threads")
            })?;
        self.peers.lock().unwrap_or_else(|p| p.into_inner()).push(h);
        Ok(mine)
    }

    /// Waits for the stream peers (after every thread closed its end) and sums what they did.
    pub fn join_peers(&self) -> Result<Option<PeerFigures>> {
        let handles: Vec<PeerHandle> =
            std::mem::take(&mut *self.peers.lock().unwrap_or_else(|p| p.into_inner()));
        if handles.is_empty() {
            return Ok(None);
        }
        let mut t = PeerFigures::default();
        for h in handles {
            let f = h
                .join()
                .map_err(|_| Error::Runtime("a stream peer thread panicked".into()))?
                .map_err(Error::Runtime)?;
            t.bytes += f.bytes;
            t.user_s += f.user_s;
            t.sys_s += f.sys_s;
        }
        Ok(Some(t))
    }

    /// Does this value hold the O_EXCL claim on the block device it writes to?
    pub fn holds_device_claim(&self) -> bool {
        self.claim.is_some()
    }

    /// Keeps the created file past this value's life (used by `--keep`).
    pub fn is_kept(&self) -> bool {
        self.guard.as_ref().map(|g| g.kept()).unwrap_or(true)
    }
}

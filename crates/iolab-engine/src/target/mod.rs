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
mod device;
mod dio;
mod fill;
mod fit;
pub mod nvme;
mod others;
mod peer;
pub mod per_thread;
pub mod pin;
pub mod prepared;
mod relayout;
mod sink;
pub mod space;

use crate::target::device::claim_device;
use crate::target::device::major_minor;
pub use crate::target::device::mounted_fs;
use crate::target::fit::check_fit;
use crate::target::others::{check_not_measured, check_not_own_output, running};
use crate::target::pin::{Handle, Pin};
use crate::target::prepared::target_err;
pub use crate::target_kind::TargetKind;
pub use peer::PeerFigures;
pub use prepared::{
    parent_of, PeerHandle, PreparedTarget, DEFAULT_FILE_SIZE, PAGE, REMOTE_ACK_WAIT, SINK_REGION,
};
pub use relayout::lay_out_again;

use crate::cleanup::Created;
use crate::error::{Error, Result};
use crate::pattern;
use crate::spec::{OpKind, Spec};
use dio::{check_direct_before_creating, check_direct_multiples};
use fill::{preallocate, prefill};
use iolab_sys as sys;
use std::os::fd::AsRawFd;
use std::path::Path;

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
         never uses them as targets, whatever the flags; choose a path on a disk filesystem or tmpfs"
    )))
}

/// A path that is, or would be made in, a kernel-interface filesystem, refused as [`setup`] refuses it:
/// for a caller checking targets before any run (a fio job file's jobs).
pub fn check_kernel_interface(path: &Path) -> Result<()> {
    let exists = std::fs::symlink_metadata(path).is_ok();
    check_not_pseudo(path, exists, &crate::units::show_path(path))
}

/// A path of a kind no run takes (a directory, a FIFO, a character device but /dev/null, /dev/zero,
/// iolab's sink and an NVMe generic device), refused as [`setup`] refuses it: for a caller checking
/// targets before any run (a fio job file's jobs). A path that does not exist passes (a new file).
pub fn check_kind(path: &Path) -> Result<()> {
    let shown = crate::units::show_path(path);
    let Ok(st) = sys::stat(path) else {
        return Ok(());
    };
    if st.st_mode & libc::S_IFMT == libc::S_IFCHR
        && (crate::sink_device::is_sink_device(st.st_rdev)
            || nvme::generic_block(st.st_rdev).is_some())
    {
        return Ok(());
    }
    kind_of(Some(&st), &shown).map(|_| ())
}

/// Inspects the target, applies the safety rules, creates/sizes/prefills a file, and works out regions and
/// alignment. Nothing is written into a pre-existing target here. The target is looked up once ([`Pin`]) or
/// made with O_EXCL ([`Created`]): every check after, and every open, goes to that file.
pub fn setup(spec: &Spec) -> Result<PreparedTarget> {
    let path = spec.target.clone();
    if let Some(template) = per_thread::template(&path) {
        return per_thread::setup_per_thread(spec, template, setup);
    }
    if let Some(kind) = TargetKind::stream_named(&path) {
        refuse_share(spec, &format!("a {} stream", path.display()))?;
        check_split(spec, false, &format!("a {} stream", path.display()))?;
        if spec.op == OpKind::Mixed {
            return Err(Error::usage(
                "--op",
                format!("mixed reads and writes blocks of a regular file or a block device; a {} stream goes one way", path.display()),
            ));
        }
        sink::check_flags(spec, kind, &path.display().to_string())?;
        cache::check(spec, kind, &path.display().to_string())?;
        if let Some(to) = remote_peer(spec)? {
            return setup_stream(spec, kind).map(|t| remote_stream(t, to));
        }
        return setup_stream(spec, kind);
    }
    let writes = spec.op.writes() && !spec.method.info().no_data;
    let shown = crate::units::show_path(&path);
    let mut notes = Vec::new();
    check_named_dev(&path, &shown)?;
    let pin = match Pin::lookup(&path, &mut notes) {
        Ok(p) => p,
        Err(Error::Sys(f)) if f.err.errno == libc::ENOTDIR => {
            return Err(target_err(format!(
                "{shown}: a parent of this path is not a directory"
            )))
        }
        Err(Error::Sys(f)) if f.err.errno == libc::ENOENT => {
            // Its directory is missing: said as for a new file's.
            check_parent(&path)?;
            return Err(Error::Sys(f));
        }
        Err(e) => return Err(e),
    };
    let st = pin.as_ref().map(|p| p.st);
    crate::target::pin::check_same_meaning(&path, pin.as_ref(), &shown)?;
    match &pin {
        Some(p) => check_not_pseudo(&p.proc_path(), true, &shown)?,
        None => check_not_pseudo(&path, false, &shown)?,
    }
    if sink::is_sink(spec, st.as_ref(), &shown)? {
        let pin = pin.expect("the sink exists");
        refuse_share(spec, "iolab's sink driver")?;
        return sink::setup(spec, pin, &shown);
    }
    let generic = st
        .as_ref()
        .filter(|s| s.st_mode & libc::S_IFMT == libc::S_IFCHR)
        .and_then(|s| nvme::generic_block(s.st_rdev));
    if let Some(block) = generic {
        let pin = pin.expect("a character device exists");
        refuse_share(spec, "an NVMe generic device")?;
        return nvme::setup(spec, pin, block, &shown);
    }
    let kind = kind_of(st.as_ref(), &shown)?;
    check_kind_rules(spec, kind, &shown)?;
    let existing_file = kind == TargetKind::File && st.is_some();
    if let Some(p) = &pin {
        check_not_own_output(p, &shown)?;
    }
    if existing_file && !writes {
        // A file another iolab measures on is refused to readers too: two runs on one file measure each
        // other.
        check_not_measured(pin.as_ref().expect("it exists"), &shown)?;
    }
    if existing_file && writes {
        let p = pin.as_ref().expect("it exists");
        check_existing_file(spec, p, &shown)?;
        if p.st.st_nlink > 1 {
            notes.push(format!(
                "{shown} has {} names (hard links): what iolab wrote is in the file under each of them",
                p.st.st_nlink
            ));
        }
    }
    let claim = match (&pin, kind == TargetKind::BlockDevice && writes) {
        (Some(p), true) => Some(claim_block_device(spec, p, &shown)?),
        _ => None,
    };
    if kind == TargetKind::File && st.is_none() {
        check_parent(&path)?;
        if spec.direct {
            check_direct_before_creating(spec, &path, &shown)?;
        }
    }
    let usable = space::usable_bytes(spec, kind, &shown, pin.as_ref(), existing_file)?;
    let (region_blocks, end) = regions(spec, usable, &shown)?;
    space::check_walk(spec, region_blocks, &mut notes)?;
    if pin.is_none() && spec.method.info().no_data {
        return Ok(untouched(spec, region_blocks, notes, &shown));
    }
    // Create the file now (so its filesystem can be asked about O_DIRECT).
    let handle = match pin {
        Some(p) => Handle::Existing(p),
        None => Handle::Made(create_file(spec, &path, end, &shown, &mut notes)?),
    };
    let holes = prepare_contents(spec, kind, writes, &handle, end, &shown, &mut notes)?;
    let dio_align = direct_align(spec, kind, &handle, &shown, &mut notes)?;
    let buf_align = dio_align
        .map(|(m, _)| (m as usize).max(PAGE))
        .unwrap_or(PAGE);
    // Said where the run reads the file: its ops, or --verify after them.
    let reads = spec.op != OpKind::Write || spec.verify;
    let noatime = kind == TargetKind::File && keeps_atime(&handle, reads, &mut notes);
    Ok(PreparedTarget {
        path,
        kind,
        created: handle.made().is_some(),
        region_blocks,
        dio_align,
        buf_align,
        notes,
        noatime,
        handle: Some(handle),
        claim,
        peers: Default::default(),
        remote: None,
        sink: None,
        nvme: None,
        holes,
        shared: spec.share_region,
        file_per_thread: false,
        others: Vec::new(),
    })
}

/// --share-region shares the blocks of a file or block device; other targets have none to share.
fn refuse_share(spec: &Spec, what: &str) -> Result<()> {
    if !spec.share_region {
        return Ok(());
    }
    Err(Error::usage(
        "--share-region",
        format!("shares the blocks of a file or a block device among the threads; {what} has none to share"),
    ))
}

/// The blocks of each thread's region and the end of the last, from the bytes usable: a slice per thread,
/// or with --share-region the whole span for every thread.
fn regions(spec: &Spec, usable: u64, shown: &str) -> Result<(u64, u64)> {
    let threads = spec.threads as u64;
    let slices = if spec.share_region { 1 } else { threads };
    let region_blocks = usable / slices / spec.bs;
    if region_blocks == 0 {
        let flag = if spec.file_size.is_some() {
            "--file-size"
        } else {
            "--target"
        };
        let each = if spec.share_region {
            "one --bs block".to_string()
        } else {
            format!("one --bs block per thread ({threads} threads)")
        };
        return Err(Error::usage(
            flag,
            format!(
                "{usable} bytes of {shown} cannot hold {each} of {} bytes",
                spec.bs
            ),
        ));
    }
    Ok((
        region_blocks,
        spec.offset + region_blocks * slices * spec.bs,
    ))
}

/// A method that moves no data (nop) on a file that does not exist: the file is not made, nothing is
/// written (fio's null engine touches no file); the regions are nominal, as for /dev/null.
fn untouched(
    spec: &Spec,
    region_blocks: u64,
    mut notes: Vec<String>,
    shown: &str,
) -> PreparedTarget {
    notes.push(format!(
        "--method {} moves no data: {shown} does not exist and was not created (nothing was written)",
        spec.method.name()
    ));
    PreparedTarget {
        path: spec.target.clone(),
        kind: TargetKind::File,
        created: false,
        region_blocks,
        dio_align: None,
        buf_align: PAGE,
        notes,
        noatime: false,
        handle: None,
        claim: None,
        peers: Default::default(),
        remote: None,
        sink: None,
        nvme: None,
        holes: None,
        shared: spec.share_region,
        file_per_thread: false,
        others: Vec::new(),
    }
}

/// A path under /dev that does not exist is refused: iolab never makes a regular file there.
/// An existing file is written only with --overwrite, and never while a running iolab measures on it
/// (iolab marks what it creates): a killed iolab's file is `iolab clean`'s.
fn check_existing_file(spec: &Spec, pin: &Pin, shown: &str) -> Result<()> {
    let owner = pin.iolab_owner();
    if let Some(p) = owner.as_ref().filter(|p| p.alive()) {
        return Err(running(shown, p.pid));
    }
    if spec.overwrite {
        if let Some(why) = device::loop_backed_by(sys::identity(&pin.st)) {
            return Err(target_err(format!(
                "refusing to write into {shown}: {why}; writing the file rewrites that device behind its \
                 back: detach it (losetup -d) or choose another file"
            )));
        }
        return check_attributes(pin, shown);
    }
    let what = match owner {
        Some(p) => format!(
            "{shown} {TARGET_LEFT} (pid {}); `iolab clean` removes it, or add --overwrite to write into it",
            p.pid
        ),
        None => format!("{shown} {TARGET_EXISTS}; add --overwrite to write into it, or choose a new path"),
    };
    Err(Error::usage("--overwrite", what))
}

/// A file marked immutable or append-only (`chattr +i`/`+a`) refuses writes even to root (EPERM): said
/// before the work, with the attribute, rather than as a permission a user could have.
fn check_attributes(pin: &Pin, shown: &str) -> Result<()> {
    let Ok(fd) = pin.open(libc::O_RDONLY | libc::O_NONBLOCK) else {
        return Ok(());
    };
    let flags = sys::inode_flags(fd.as_raw_fd()).unwrap_or(0);
    let (what, letter) = if flags & sys::FS_IMMUTABLE_FL != 0 {
        ("immutable", 'i')
    } else if flags & sys::FS_APPEND_FL != 0 {
        ("append-only", 'a')
    } else {
        return Ok(());
    };
    Err(target_err(format!(
        "{shown} is {what} (lsattr shows '{letter}'): no user, root included, may write into it; \
         `chattr -{letter}` it first, or choose another --target"
    )))
}

/// How the refusal of an existing file without --overwrite says it: one iolab did not make ...
pub const TARGET_EXISTS: &str = "exists and was not made by this run";
/// ... and one an iolab that was killed left (its mark names a process no longer running).
pub const TARGET_LEFT: &str = "exists, left by an iolab that was killed";

fn check_named_dev(path: &Path, shown: &str) -> Result<()> {
    let in_dev = path.starts_with("/dev/") && !path.starts_with("/dev/shm/");
    if in_dev && !path.exists() && path != Path::new(crate::sink_device::DEVICE) {
        return Err(target_err(format!(
            "{shown} does not exist, and iolab makes no files in /dev: name an existing device, or a file path \
             elsewhere"
        )));
    }
    Ok(())
}

/// The rules that depend on the kind of target alone.
/// `--bs-split` walks ops of drawn lengths over a region's offsets, which a stream or a sink has not.
fn check_split(spec: &Spec, keeps_data: bool, shown: &str) -> Result<()> {
    if spec.bs_split.is_some() && !keeps_data {
        return Err(Error::usage(
            "--bs-split",
            format!("{shown} has no offsets for ops of drawn lengths to walk; give a file or a block device"),
        ));
    }
    Ok(())
}

fn check_kind_rules(spec: &Spec, kind: TargetKind, shown: &str) -> Result<()> {
    check_split(spec, kind.keeps_data(), shown)?;
    sink::check_flags(spec, kind, shown)?;
    cache::check(spec, kind, shown)?;
    if spec.op == OpKind::Mixed && !matches!(kind, TargetKind::File | TargetKind::BlockDevice) {
        return Err(Error::usage(
            "--op",
            format!("mixed reads and writes blocks of a regular file or a block device; {shown} keeps none"),
        ));
    }
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
    check_fit(spec, kind, shown)
}

/// A block device about to be written: refused without --allow-device-writes, else claimed (O_EXCL) after
/// every check, each made on the device number of the file looked up.
fn claim_block_device(spec: &Spec, pin: &Pin, shown: &str) -> Result<std::os::fd::OwnedFd> {
    if !spec.allow_device_writes {
        return Err(Error::usage(
            "--allow-device-writes",
            format!("{shown} is a block device; writing destroys its contents: add --allow-device-writes to do it"),
        ));
    }
    let ro = pin
        .open(libc::O_RDONLY | libc::O_NONBLOCK)
        .ok()
        .and_then(|fd| sys::blk_read_only(fd.as_raw_fd()).ok());
    if ro == Some(true) {
        return Err(target_err(format!(
            "{shown} is a read-only block device (losetup -r, blockdev --setro, or write-protected): the \
             kernel refuses every write to it; read it, or choose a writable device"
        )));
    }
    claim_device(pin, shown)
}

/// A file for read runs to share (a survey's reads): made as a read run makes its own (O_EXCL, never
/// following a link, filled with the pattern and on the device), at `spec.target`, `spec.file_size` long;
/// removed when the value returned drops, or by the signal handler.
pub fn make_read_file(spec: &Spec) -> Result<Created> {
    let shown = spec.target.display().to_string();
    check_parent(&spec.target)?;
    let end = spec.offset + spec.file_size.unwrap_or(0);
    create_file(spec, &spec.target, end, &shown, &mut Vec::new())
}

/// Makes the target file (O_EXCL, never following a link), sized to `end`, prefilled for a read run.
fn create_file(
    spec: &Spec,
    path: &Path,
    end: u64,
    shown: &str,
    notes: &mut Vec<String>,
) -> Result<Created> {
    let (fd, created) = Created::new_file(path, libc::O_RDWR, 0o644, spec.keep)?;
    crate::target::pin::record_made(path, &fd)?;
    sys::ftruncate(fd.as_raw_fd(), end).map_err(|e| Error::sys_on(e, shown))?;
    if spec.preallocate && !spec.op.reads() {
        notes.push(preallocate(fd.as_raw_fd(), spec.offset, end, shown)?);
    }
    if spec.op.reads() {
        prefill(fd.as_raw_fd(), spec, end, shown)?;
        notes.push(format!(
            "iolab created {shown} and filled {end} bytes with its pattern before the run (not timed); \
             buffered reads may be served from the page cache"
        ));
    }
    Ok(created)
}

/// A mapped write's blocks reserved, and with --cold-cache the page cache dropped: both through the
/// target's handle. An existing file read where it has holes: the holes' bytes and the region's.
fn prepare_contents(
    spec: &Spec,
    kind: TargetKind,
    writes: bool,
    handle: &Handle,
    end: u64,
    shown: &str,
    notes: &mut Vec<String>,
) -> Result<Option<(u64, u64)>> {
    // A mapped write cannot report a full filesystem (it faults): reserve the blocks first.
    if kind == TargetKind::File && writes && spec.method.info().maps {
        let fd = handle.open(libc::O_WRONLY)?;
        notes.push(crate::fault::reserve_for_mapping(
            fd,
            spec.offset,
            end,
            shown,
        )?);
    }
    if spec.cold_cache {
        let fd = handle.open(libc::O_RDONLY)?;
        notes.push(cache::drop_pages(fd, spec.offset, end, shown)?);
    }
    if kind == TargetKind::File && !writes && handle.made().is_none() {
        let fd = handle.open(libc::O_RDONLY)?;
        let end = read_end(spec, end);
        let holes = sys::hole_bytes(fd.as_raw_fd(), spec.offset, end)
            .ok()
            .filter(|&h| h > 0);
        let span = end.saturating_sub(spec.offset).max(1);
        notes.extend(holes.map(|h| holes_note(h, span, shown)));
        return Ok(holes.map(|h| (h, span)));
    }
    Ok(None)
}

/// Where a run's reads end: one thread's sequential ops bounded by a count (no warm-up) read the first
/// of them, else the whole region may be read (its holes are counted over it all).
fn read_end(spec: &Spec, end: u64) -> u64 {
    match (spec.pattern, spec.zones, spec.threads, spec.ops) {
        (pattern::Pattern::Seq, None, 1, Some(ops)) if spec.warmup.is_none() && spec.skip == 0 => {
            end.min(spec.offset.saturating_add(ops.saturating_mul(spec.bs)))
        }
        _ => end,
    }
}

/// A file read where it has holes is read as zeros the kernel makes up, without touching the device:
/// said, with how much of the region is holes, since the rate is then not the device's.
fn holes_note(holes: u64, span: u64, shown: &str) -> String {
    format!(
        "{shown} is sparse: {} of the {} region read ({}) are holes, which the kernel fills with zeros without \
         reading storage, so the rate is not the storage's (write the file first, e.g. with --op write)",
        crate::units::fmt_size(holes),
        crate::units::fmt_size(span),
        crate::units::pct1(holes as f64 / span as f64)
    )
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
                         driver or an NVMe generic device); accepted: a regular file, /dev/null, /dev/zero, \
                         /dev/iolab_sink, /dev/ngXnY (uring_cmd) or a block device"
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
    // A read-only filesystem is said before any work (the file's creation failed with EROFS, exit 1).
    match sys::access_writable_dir(parent) {
        Err(e) if e.errno == libc::EROFS => Err(target_err(format!(
            "{} is on a read-only filesystem: iolab cannot create its file there; choose a place on a \
             writable one",
            crate::units::show_path(path)
        ))),
        _ => Ok(()),
    }
}

/// The O_DIRECT alignment (memory, offset) of the target, with --bs and --offset checked against it.
fn direct_align(
    spec: &Spec,
    kind: TargetKind,
    handle: &Handle,
    shown: &str,
    notes: &mut Vec<String>,
) -> Result<Option<(u32, u32)>> {
    if spec.direct && kind != TargetKind::DevNull && kind != TargetKind::DevZero {
        let dfd = handle
            .open(libc::O_RDONLY | libc::O_DIRECT)
            .map_err(|e| match e {
                Error::Sys(f) if f.err.errno == libc::EINVAL => Error::usage(
                    "--direct",
                    format!("the filesystem of {shown} does not support O_DIRECT"),
                ),
                e => e,
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
        noatime: false,
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
        handle: None,
        claim: None,
        peers: Default::default(),
        remote: None,
        sink: None,
        nvme: None,
        holes: None,
        shared: false,
        file_per_thread: false,
        others: Vec::new(),
    })
}

/// A `tcp:ADDR:PORT` target's peer address, with what such a target cannot do refused: called by the
/// spec's checks too, before anything is made or connected.
pub(crate) fn remote_peer(spec: &Spec) -> Result<Option<std::net::SocketAddrV4>> {
    let Some(remote) = crate::tcp_peer::tcp_remote(&spec.target) else {
        return Ok(None);
    };
    let to = remote.map_err(target_err)?;
    let shown = spec.target.display();
    if spec.op != OpKind::Write {
        return Err(Error::usage(
            "--op",
            format!("{shown}: iolab does not run a remote peer and cannot know what it sends: a remote TCP peer is written to (--op write)"),
        ));
    }
    if spec.verify {
        return Err(Error::usage(
            "--verify",
            format!("{shown}: a TCP connection keeps nothing to read back; the bytes the peer's TCP acknowledged are counted instead (in the result)"),
        ));
    }
    Ok(Some(to))
}

/// A TCP target whose peer is at `to`, run by someone else: each thread connects to it, and what the peer
/// acknowledged (TCP_INFO) stands for what iolab's peer would have counted.
fn remote_stream(mut t: PreparedTarget, to: std::net::SocketAddrV4) -> PreparedTarget {
    t.notes[0] = format!(
        "each thread has its own TCP connection to {to} (TCP_NODELAY), a peer iolab does not run: the bytes \
         it received are those its TCP acknowledged (TCP_INFO's bytes acked, waited for at the end of the \
         run), and its CPU is not counted"
    );
    // The kernel's read/write counters count only this process's calls: no peer's go the other way.
    t.notes.truncate(1);
    t.remote = Some(prepared::Remote {
        to,
        socks: Default::default(),
    });
    t
}

/// May reads of the file leave its access time as it was (O_NOATIME: the file's owner or CAP_FOWNER)? A
/// measurement reads the user's file without changing it, and the kernel's atime check is no part of a
/// read's cost (t/io_uring opens every file so; fio its devices). Tried once here, said in a note where
/// the run `reads`.
fn keeps_atime(handle: &Handle, reads: bool, notes: &mut Vec<String>) -> bool {
    match handle.open(libc::O_RDONLY | libc::O_NOATIME) {
        Ok(_) if !reads => true,
        Err(Error::Sys(f)) if f.err.errno == libc::EPERM && !reads => false,
        Ok(_) => {
            notes.push(
                "reads open the file O_NOATIME: its access time stays as it was, and no read's time holds the \
                 kernel's atime check"
                    .into(),
            );
            true
        }
        Err(Error::Sys(f)) if f.err.errno == libc::EPERM => {
            notes.push(
                "O_NOATIME refused (the file is not this user's): reads update its access time as the \
                 mount's atime rule says, in their time"
                    .into(),
            );
            false
        }
        // Any other refusal is the threads' open's to report, with its own reason.
        Err(_) => false,
    }
}

//! An NVMe namespace's generic character device (/dev/ngXnY: the device since Linux 5.13, its io_uring
//! commands since 5.19) as a target. It takes NVMe commands only (IORING_OP_URING_CMD with
//! NVME_URING_CMD_IO, `--method uring_cmd`), which go to the NVMe driver as requests, past the page cache,
//! the filesystem, the bio submission path and the I/O scheduler. It addresses the same blocks as the
//! namespace's block device (/dev/nvmeXnY), so its size and logical block size are read from that
//! device's sysfs, and writing through it is writing that disk: refused without --allow-device-writes,
//! and then the block device is claimed (O_EXCL) for the run, exactly as a write to /dev/nvmeXnY would
//! be, so nothing mounts it meanwhile; its cached pages, stale after such writes, are dropped at the end
//! of the pass.

use super::pin::{Handle, Pin};
use super::prepared::{target_err, NvmeTarget, PreparedTarget, PAGE};
use crate::error::{Error, Result};
use crate::spec::{OpKind, Spec};
use crate::target_kind::TargetKind;
use iolab_sys as sys;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

pub use crate::measure::device_io::generic_block;

fn sysfs_number(block: &str, file: &str, shown: &str) -> Result<u64> {
    let p = PathBuf::from(format!("/sys/block/{block}/{file}"));
    std::fs::read_to_string(&p)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| target_err(format!("{shown}: cannot read {}", p.display())))
}

/// Refuses what a device taking only NVMe commands cannot do, and blocks that are not whole LBAs.
fn check(spec: &Spec, shown: &str, lba: u64) -> Result<()> {
    if spec.op == OpKind::Mixed {
        return Err(Error::usage(
            "--op",
            "uring_cmd sends one kind of NVMe command per run: read or write",
        ));
    }
    if spec.verify && spec.op == OpKind::Write {
        return Err(Error::usage(
            "--verify",
            format!(
                "reads a write run back with read(2), which {shown} does not take (it takes NVMe commands \
                 only): verify a read run instead (--op read --verify checks every block against the pattern)"
            ),
        ));
    }
    if spec.cold_cache {
        return Err(Error::usage(
            "--cold-cache",
            format!("{shown} has no page cache: its commands go to the device"),
        ));
    }
    if let Some(flag) = spec.flush_flag() {
        return Err(Error::usage(
            flag,
            format!(
                "uring_cmd sends {shown} NVMe Read and Write commands only, no Flush: its writes go to the \
                 device without the page cache, and when they reach its media is up to the device's own cache"
            ),
        ));
    }
    if spec.layers {
        return Err(Error::usage(
            "--layers",
            format!(
                "splits an op's time by the block layer's bio and request events; {shown}'s commands skip the \
                 bio path, so their ops cannot be matched: use --layers on the namespace's block device"
            ),
        ));
    }
    for (flag, v) in [("--bs", spec.bs), ("--offset", spec.offset)] {
        if v % lba != 0 {
            return Err(Error::usage(
                flag,
                format!("{v} is not a whole number of {shown}'s {lba}-byte logical blocks"),
            ));
        }
    }
    Ok(())
}

/// What the namespace itself limits: --offset within it, a command's transfer within the controller's
/// limit (and the command's 16-bit block count), and no metadata or protection information, which its
/// commands would need a buffer for.
fn check_device(spec: &Spec, block: &str, shown: &str, lba: u64, size: u64) -> Result<()> {
    if spec.offset >= size {
        return Err(Error::usage(
            "--offset",
            format!(
                "{} is at or beyond the end of {shown} ({size} bytes)",
                spec.offset
            ),
        ));
    }
    let max = sysfs_number(block, "queue/max_hw_sectors_kb", shown)? * 1024;
    let max = max.min(lba << 16);
    if spec.bs > max {
        return Err(Error::usage(
            "--bs",
            format!(
                "{} is more than one NVMe command to {shown} can move ({max} bytes: \
                 /sys/block/{block}/queue/max_hw_sectors_kb, at most 65,536 blocks)",
                spec.bs
            ),
        ));
    }
    let md = ["metadata_bytes", "integrity/tuple_size"]
        .into_iter()
        .find_map(|f| {
            sysfs_number(block, f, shown)
                .ok()
                .filter(|&n| n > 0)
                .map(|n| (f, n))
        });
    if let Some((file, n)) = md {
        return Err(target_err(format!(
            "{shown}'s namespace is formatted with metadata or protection information (/sys/block/{block}/{file} \
             is {n}): its commands would need a metadata buffer, which iolab does not send"
        )));
    }
    Ok(())
}

/// Sets the NVMe generic device looked up as `pin` (whose namespace's block device is `block`) up as the
/// run's target.
pub(super) fn setup(spec: &Spec, pin: Pin, block: String, shown: &str) -> Result<PreparedTarget> {
    super::fit::check_fit(spec, TargetKind::NvmeGeneric, shown)?;
    super::sink::check_flags(spec, TargetKind::NvmeGeneric, shown)?;
    let lba = sysfs_number(&block, "queue/logical_block_size", shown)?;
    let size = sysfs_number(&block, "size", shown)? * 512;
    check(spec, shown, lba)?;
    check_device(spec, &block, shown, lba, size)?;
    let nsid = {
        let fd = pin.open(libc::O_RDONLY)?;
        sys::nvme_ns_id(fd.as_raw_fd()).map_err(|e| Error::sys_on(e, shown))?
    };
    let mut notes = vec![format!(
        "{shown} is the NVMe generic device of /dev/{block} (namespace {nsid}, {lba}-byte blocks): each op is \
         one NVMe command handed straight to the NVMe driver, past the page cache, the filesystem, the bio \
         submission path and the I/O scheduler"
    )];
    let claim = if spec.op.writes() {
        Some(claim_block(spec, &block, shown, &mut notes)?)
    } else {
        None
    };
    let usable = super::space::device_span(spec, size, shown)?;
    let region_blocks = usable / spec.threads as u64 / spec.bs;
    if region_blocks == 0 {
        return Err(target_err(format!(
            "{usable} bytes of {shown} cannot hold one --bs {} block per thread",
            spec.bs
        )));
    }
    super::space::check_walk(spec, region_blocks, &mut notes)?;
    Ok(PreparedTarget {
        path: spec.target.clone(),
        kind: TargetKind::NvmeGeneric,
        created: false,
        region_blocks,
        dio_align: None,
        buf_align: PAGE,
        noatime: false,
        notes,
        handle: Some(Handle::Existing(pin)),
        claim,
        peers: Default::default(),
        remote: None,
        sink: None,
        nvme: Some(NvmeTarget {
            nsid,
            lba_shift: lba.trailing_zeros(),
            block,
        }),
        holes: None,
        shared: false,
        file_per_thread: false,
        others: Vec::new(),
    })
}

/// Writing through the generic device writes the block device's blocks: the same consent and the same
/// exclusive claim as a write to /dev/`block`.
fn claim_block(
    spec: &Spec,
    block: &str,
    shown: &str,
    notes: &mut Vec<String>,
) -> Result<std::os::fd::OwnedFd> {
    let dev = PathBuf::from(format!("/dev/{block}"));
    if !spec.allow_device_writes {
        return Err(Error::usage(
            "--allow-device-writes",
            format!(
                "{shown} writes the blocks of {}; writing destroys its contents: add --allow-device-writes to \
                 do it",
                dev.display()
            ),
        ));
    }
    let pin = Pin::lookup(&dev, notes)?.ok_or_else(|| {
        target_err(format!(
            "{shown} writes the blocks of {}, which has no device node to claim while iolab writes: \
             refused (iolab never writes a disk it cannot claim)",
            dev.display()
        ))
    })?;
    let want = std::fs::read_to_string(format!("/sys/block/{block}/dev")).unwrap_or_default();
    let (ma, mi) = (libc::major(pin.st.st_rdev), libc::minor(pin.st.st_rdev));
    if pin.st.st_mode & libc::S_IFMT != libc::S_IFBLK || want.trim() != format!("{ma}:{mi}") {
        return Err(target_err(format!(
            "{shown} writes the blocks of {block}, but {} is not that block device (sysfs says {}): refused \
             (iolab never writes a disk it cannot claim)",
            dev.display(),
            want.trim()
        )));
    }
    super::device::claim_device(&pin, &dev.display().to_string())
}

impl PreparedTarget {
    /// The NVMe namespace behind an NVMe generic target (None: another target).
    pub fn nvme(&self) -> Option<&NvmeTarget> {
        self.nvme.as_ref()
    }

    /// After a pass that wrote through the generic device: the namespace's block device may hold pages
    /// cached before, now stale (the commands went past its page cache); they are dropped through the
    /// claim, so that a later buffered read of /dev/nvmeXnY sees what was written.
    pub(crate) fn nvme_end(&self) {
        if let (Some(_), Some(claim)) = (&self.nvme, &self.claim) {
            // Best effort: a failure leaves the cache as any other tool's raw write would.
            let _ = sys::fadvise_dontneed(claim.as_raw_fd(), 0, 0);
        }
    }
}

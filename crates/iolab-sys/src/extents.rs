//! Where a file's bytes lie on its device: FS_IOC_FIEMAP (linux/fiemap.h), so that the block layer's
//! requests (which name device sectors) can be matched to the file offsets iolab's ops named.

use std::os::fd::RawFd;

use super::errno::{result, SysResult};

/// One extent: `len` bytes at file offset `logical` lie at byte `physical` of the filesystem's device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    pub logical: u64,
    pub physical: u64,
    pub len: u64,
    /// The extent is not at a plain device position (delayed allocation, inline, encoded or unknown).
    pub unmapped: bool,
}

/// struct fiemap's header (32 bytes), followed by `fm_extent_count` struct fiemap_extent (56 bytes).
#[repr(C)]
struct FiemapHead {
    start: u64,
    length: u64,
    flags: u32,
    mapped_extents: u32,
    extent_count: u32,
    reserved: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct FiemapExtent {
    logical: u64,
    physical: u64,
    length: u64,
    reserved64: [u64; 2],
    flags: u32,
    reserved: [u32; 3],
}

const BATCH: usize = 256;

#[repr(C)]
struct Fiemap {
    head: FiemapHead,
    extents: [FiemapExtent; BATCH],
}

/// FS_IOC_FIEMAP = _IOWR('f', 11, struct fiemap).
const FS_IOC_FIEMAP: libc::Ioctl = libc::_IOWR::<FiemapHead>(b'f' as u32, 11);
/// Flush the file's dirty pages first, so that delayed allocations have places.
const FIEMAP_FLAG_SYNC: u32 = 1;
const FIEMAP_EXTENT_LAST: u32 = 0x1;
/// UNKNOWN | DELALLOC | ENCODED | DATA_INLINE | DATA_TAIL | NOT_ALIGNED.
const FIEMAP_EXTENT_UNPLACED: u32 = 0x2 | 0x4 | 0x8 | 0x200 | 0x400 | 0x100;

/// The extents of the open file `fd` (flushed first), in file order; EOPNOTSUPP where the filesystem
/// cannot say (tmpfs among others).
pub fn file_extents(fd: RawFd) -> SysResult<Vec<Extent>> {
    let mut out = Vec::new();
    let mut from = 0u64;
    loop {
        let mut fm = Box::new(Fiemap {
            head: FiemapHead {
                start: from,
                length: u64::MAX - from,
                flags: FIEMAP_FLAG_SYNC,
                mapped_extents: 0,
                extent_count: BATCH as u32,
                reserved: 0,
            },
            extents: [FiemapExtent::default(); BATCH],
        });
        // SAFETY: `fm` is a struct fiemap with room for `extent_count` extents after its header; the
        // kernel writes at most that many and reads only the header.
        result("ioctl(FS_IOC_FIEMAP)", unsafe {
            libc::ioctl(fd, FS_IOC_FIEMAP, &mut *fm as *mut Fiemap)
        })?;
        let n = (fm.head.mapped_extents as usize).min(BATCH);
        let mut last = n == 0;
        for e in &fm.extents[..n] {
            out.push(Extent {
                logical: e.logical,
                physical: e.physical,
                len: e.length,
                unmapped: e.flags & FIEMAP_EXTENT_UNPLACED != 0,
            });
            from = e.logical + e.length;
            last |= e.flags & FIEMAP_EXTENT_LAST != 0;
        }
        if last {
            return Ok(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_is_the_kernels() {
        assert_eq!(std::mem::size_of::<FiemapHead>(), 32);
        assert_eq!(std::mem::size_of::<FiemapExtent>(), 56);
    }

    #[test]
    fn a_written_file_has_extents_covering_its_bytes() {
        use std::io::Write;
        use std::os::fd::AsRawFd;
        let dir = std::env::temp_dir();
        let path = dir.join(format!("iolab-extents-{}", std::process::id()));
        let mut f = std::fs::File::create(&path).expect("create");
        f.write_all(&vec![7u8; 1 << 20]).expect("write");
        let r = file_extents(f.as_raw_fd());
        std::fs::remove_file(&path).ok();
        match r {
            Err(e) if e.errno == libc::EOPNOTSUPP => {
                println!(
                    "SKIPPED a_written_file_has_extents_covering_its_bytes: {} has no FIEMAP",
                    dir.display()
                )
            }
            Err(e) => panic!("fiemap: {e:?}"),
            Ok(ext) => {
                let covered: u64 = ext.iter().filter(|e| !e.unmapped).map(|e| e.len).sum();
                assert!(covered >= 1 << 20, "{ext:?}");
                assert_eq!(ext[0].logical, 0);
            }
        }
    }
}

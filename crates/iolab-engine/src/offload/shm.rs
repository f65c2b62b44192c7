//! The memory iolab shares with an offload client: one memfd mapping (MAP_SHARED, so the forked client
//! sees the same pages) holding the control block, the rings and the data buffers.
//!
//! Layout, each part page aligned: `[control block][client cycles][rings][data buffers][verify scratch]
//! [attack page]`. The client cycles area is the client's own timing (`cycles.rs` documents it).
//! The data buffers, the scratch block and the attack page form the *data area*: the one range registered
//! as an io_uring fixed buffer (kernel and native paths) and the only range the broker's policy accepts.

use crate::error::{Error, Result};
use iolab_sys as sys;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64};

pub const PAGE: usize = 4096;

pub fn page_up(x: usize) -> usize {
    x.div_ceil(PAGE) * PAGE
}

/// A value alone on its cache line (the client and iolab write different lines).
#[repr(C, align(64))]
#[derive(Default)]
pub struct Line<T>(pub T);

/// `attack_res` value of an attack that has not been run.
pub const NOT_RUN: i64 = i64::MIN;

/// The control block at offset 0 of the region. All-zero bytes (a fresh memfd) are its initial state.
#[repr(C)]
#[derive(Default)]
pub struct Ctl {
    /// Client: ops completed so far (stored after every batch; iolab samples it to time the client).
    pub completed: Line<AtomicU64>,
    /// iolab: 1 = stop after the current batch (duration reached), 2 = abort at once.
    pub stop: Line<AtomicU32>,
    /// Client: doorbells rung (eventfd writes because the server slept).
    pub doorbells: AtomicU64,
    /// Client: the doorbell count when the timed workload began.
    pub doorbells_at_go: AtomicU64,
    /// Client: system calls it made after entering the sandbox (read/write of the control pipes,
    /// doorbells; io_uring_enter on the native path).
    pub syscalls: AtomicU64,
    /// Client: system calls made during the timed workload only.
    pub timed_syscalls: AtomicU64,
    /// Client: failed completions of workload requests, and the first one's result and file offset.
    pub errors: AtomicU64,
    pub first_error_res: AtomicI64,
    pub first_error_offset: AtomicU64,
    /// Client: fsync requests completed.
    pub flushes: AtomicU64,
    /// Client (read runs with --verify): blocks compared with the pattern, mismatches, first bad offset.
    pub blocks_checked: AtomicU64,
    pub mismatches: AtomicU64,
    pub first_mismatch_offset: AtomicU64,
    /// Client: the completion result of each attack, by index in `Attack::ALL` ([`NOT_RUN`] if not run).
    pub attack_res: [AtomicI64; 8],
    /// Client (rewrite attack): tries, and how the broker answered them.
    pub rewrite_tries: AtomicU64,
    pub rewrite_refused: AtomicU64,
    pub rewrite_ran_original: AtomicU64,
    pub rewrite_other: AtomicU64,
    /// Client: the sandbox could not be entered (the errno of prctl), 0 when it was.
    pub sandbox_errno: AtomicI64,
}

/// Sizes of the parts of a region.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub ring_len: usize,
    /// Bytes between successive data buffers (bs rounded up to a page).
    pub slot: usize,
    pub buffers: usize,
}

impl Layout {
    pub fn ctl_len(&self) -> usize {
        page_up(std::mem::size_of::<Ctl>())
    }
    /// The client's cycle histograms (`cycles::Area`), right after the control block.
    pub fn cycles_off(&self) -> usize {
        self.ctl_len()
    }
    pub fn cycles_len(&self) -> usize {
        page_up(super::cycles::AREA_BYTES)
    }
    pub fn ring_off(&self) -> usize {
        self.cycles_off() + self.cycles_len()
    }
    pub fn data_off(&self) -> usize {
        self.ring_off() + page_up(self.ring_len)
    }
    /// Buffers, one scratch block (read verification), one attack page.
    pub fn data_len(&self) -> usize {
        self.slot * (self.buffers + 1) + PAGE
    }
    pub fn total(&self) -> usize {
        self.data_off() + self.data_len()
    }
}

/// The shared region, unmapped (and its memfd closed) on drop.
pub struct Region {
    map: sys::Mapping,
    _fd: OwnedFd,
    pub layout: Layout,
}

impl Region {
    pub fn new(layout: Layout) -> Result<Region> {
        let fd = sys::memfd_create(c"iolab-offload")
            .map_err(|e| Error::sys_hint(e, "the offload region is a memfd"))?;
        let len = layout.total();
        sys::ftruncate(fd.as_raw_fd(), len as u64)
            .map_err(|e| Error::sys_hint(e, "sizing the offload region"))?;
        Region::map(fd, 0, layout)
    }

    /// The region at byte `offset` (page aligned) of a file already `offset + layout.total()` long: the
    /// ivshmem file of `--offload-partition vm`, whose first page is the partition's header.
    pub fn in_file(fd: OwnedFd, offset: u64, layout: Layout) -> Result<Region> {
        Region::map(fd, offset, layout)
    }

    fn map(fd: OwnedFd, offset: u64, layout: Layout) -> Result<Region> {
        let len = layout.total();
        let map = sys::Mapping::shared(fd.as_raw_fd(), len, offset, true).map_err(|e| {
            match e.errno {
            libc::ENOMEM => crate::mem::out_of_memory(
                len as u64,
                "the offload region (rings and --batch buffers of --bs, shared with the client)",
                "lower --bs or --batch",
            ),
            _ => Error::sys_hint(e, "mapping the offload region"),
        }
        })?;
        // SAFETY: the mapping is `len` writable bytes; touching every page now keeps page faults out of
        // the timed loop (the kernel pins ring pages anyway).
        unsafe { std::ptr::write_bytes(map.as_ptr(), 0, len) };
        let r = Region {
            map,
            _fd: fd,
            layout,
        };
        for i in 0..8 {
            r.ctl().attack_res[i].store(NOT_RUN, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(r)
    }

    pub fn ctl(&self) -> &Ctl {
        // SAFETY: offset 0 of a page-aligned mapping at least size_of::<Ctl>() long, zero-initialized
        // (a valid Ctl: every field is an atomic integer); it lives as long as `self`.
        unsafe { &*(self.map.as_ptr() as *const Ctl) }
    }

    /// The client's cycle area (zeroed until its writer initialises it).
    pub fn cycles_ptr(&self) -> *mut u8 {
        // SAFETY: cycles_off is inside the mapping (see Layout::total).
        unsafe { self.map.as_ptr().add(self.layout.cycles_off()) }
    }

    pub fn cycles(&self) -> &super::cycles::Area {
        // SAFETY: a page-aligned part of the mapping AREA_BYTES long (Layout::cycles_len), zeroed or
        // written by the client's writer (every bit pattern of its atomics is valid); lives as long as `self`.
        unsafe { &*(self.cycles_ptr() as *const super::cycles::Area) }
    }

    pub fn ring_ptr(&self) -> *mut u8 {
        // SAFETY: ring_off is inside the mapping (see Layout::total).
        unsafe { self.map.as_ptr().add(self.layout.ring_off()) }
    }

    pub fn data_ptr(&self) -> *mut u8 {
        // SAFETY: data_off is inside the mapping (see Layout::total).
        unsafe { self.map.as_ptr().add(self.layout.data_off()) }
    }

    /// Buffer `i` of the data area (i == buffers is the verify scratch block).
    pub fn buffer(&self, i: usize) -> *mut u8 {
        // SAFETY: i <= buffers, so the block lies inside the data area.
        unsafe { self.data_ptr().add(i * self.layout.slot) }
    }

    /// The last page of the data area.
    pub fn attack_page(&self) -> *mut u8 {
        // SAFETY: the data area ends with one page.
        unsafe { self.data_ptr().add(self.layout.data_len() - PAGE) }
    }
}

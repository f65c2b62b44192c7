//! What an offload run is set up with, shared by the forked client's run (`mod.rs`) and the guest
//! partition's (the lab's): the shape of the shared region, the CPUs each party runs on, the checks
//! before and after, the timed span, and the seed thesis's figures.

use super::broker;
use super::client::Work;
use super::ring;
use super::shm;
use super::shm::{Layout, Region};
use crate::error::{Error, Result};
use crate::measure::hist::Hist;
use crate::runner::Sample;
use crate::spec::{OffloadPath, OpKind, Spec};
use crate::target::PreparedTarget;
use iolab_sys as sys;

/// The seed thesis's NOP round trips with user_data set, as iolab's requests always have it (Jailhouse in
/// QEMU, x86, its Figure 4.3); its Figure 4.2 (no user_data: 4,137 and 340,567) is context only.
pub const SEED_NATIVE_CYCLES: u64 = 4_170;

pub const SEED_OFFLOADED_CYCLES: u64 = 487_894;

/// Its Figure 4.1: one rdtsc's overhead, in the application and in the inmate, cycles.
pub const SEED_RDTSC_APP_CYCLES: u64 = 20;

pub const SEED_RDTSC_INMATE_CYCLES: u64 = 21;

/// Set (to anything) to skip IORING_SETUP_NO_MMAP and take the fallback that kernels before 6.5 need, so
/// the fallback can be tested on a kernel that has NO_MMAP.
pub const FORCE_RING_MMAP: &str = "IOLAB_FORCE_RING_MMAP";

/// How often iolab samples the client's progress.
pub const WINDOW_MS: i32 = 10;

/// A client that completes nothing for this long is declared hung and killed.
pub const STALL_S: f64 = 20.0;

pub(crate) const CANARY_BYTE: u8 = 0xC5;

pub(crate) const UNRELATED_BYTE: u8 = b'U';

/// Refuses targets the offload paths cannot use, before anything is set up for them.
pub fn check_target(spec: &Spec, target: &PreparedTarget) -> Result<()> {
    if target.kind.is_stream() {
        return Err(Error::usage(
            "--target",
            "--method offload registers the target as an io_uring fixed file: use a regular file, /dev/null, \
             /dev/zero or a block device, not a stream",
        ));
    }
    if spec.verify
        && spec.op == OpKind::Read
        && !(target.kind == crate::target::TargetKind::File && target.created)
    {
        return Err(Error::usage(
            "--verify",
            "a read run is checked against iolab's pattern, which only a file iolab creates (and fills) holds: \
             give a new file as --target",
        ));
    }
    Ok(())
}

/// The data area of `--bs` and `--batch` (every path registers it with an io_uring), against
/// RLIMIT_MEMLOCK without root: checked with the spec (resolve/offload_opts.rs), before anything is made.
pub fn check_data_area_for(bs: u64, batch: u32) -> Result<()> {
    check_data_area(&Layout {
        ring_len: 0,
        slot: shm::page_up(bs.max(1) as usize),
        buffers: batch as usize,
    })
}

pub(crate) fn check_data_area(layout: &Layout) -> Result<()> {
    if let Some(lim) = sys::memlock_limit() {
        if sys::geteuid() != 0 && layout.data_len() as u64 > lim {
            return Err(Error::usage(
                "--batch",
                format!(
                    "the data area of --batch {} ({} bytes: --batch + 1 blocks of --bs, and a page) is registered with \
                     io_uring and would exceed RLIMIT_MEMLOCK ({lim} bytes): lower --batch or --bs",
                    layout.buffers,
                    layout.data_len()
                ),
            ));
        }
    }
    Ok(())
}

/// The workload as the shared region holds it.
pub struct Shape {
    pub work: Work,
    pub bs: usize,
    pub batch: u32,
    /// Entries of the kernel and native paths' ring, and the bytes of its rings and SQEs.
    pub entries: u32,
    pub rings_len: usize,
    pub layout: Layout,
    /// Blocks in the target's region.
    pub nblocks: u64,
}

impl Shape {
    pub fn of(spec: &Spec, target: &PreparedTarget) -> Result<Shape> {
        let work = if spec.ring.nop_requests {
            Work::Nop
        } else if spec.op == OpKind::Write {
            Work::Write
        } else {
            Work::Read
        };
        let bs = spec.bs as usize;
        let batch = spec.batch;
        let entries = batch.next_power_of_two().max(8);
        let (rings_len, sqes_len) = ring::ring_bytes(entries);
        let ring_len = match spec.offload.path {
            OffloadPath::Broker => std::mem::size_of::<broker::Rings>(),
            _ => rings_len + sqes_len,
        };
        let layout = Layout {
            ring_len,
            slot: shm::page_up(bs.max(1)),
            buffers: batch as usize,
        };
        check_data_area(&layout)?;
        Ok(Shape {
            work,
            bs,
            batch,
            entries,
            rings_len,
            layout,
            nblocks: target.region_blocks,
        })
    }

    /// The shared region, its blocks (and the scratch block) filled with the pattern unless the requests
    /// are NOPs.
    pub fn region(&self, seed: u64) -> Result<Region> {
        self.fill(Region::new(self.layout)?, seed)
    }

    /// `region`'s blocks filled with the pattern (unless the requests are NOPs).
    pub fn fill(&self, region: Region, seed: u64) -> Result<Region> {
        if self.work != Work::Nop {
            for i in 0..=self.layout.buffers {
                // SAFETY: block i (i == buffers: the scratch block) holds `slot` >= bs bytes of the region,
                // which nothing else uses yet.
                let b = unsafe { std::slice::from_raw_parts_mut(region.buffer(i), self.bs) };
                crate::pattern::fill_body(b, seed);
            }
        }
        Ok(region)
    }
}

/// Where the client and its server run: the client on the last allowed CPU, the server (SQ thread or
/// broker) on the first, when there are two.
pub struct Cpus {
    pub allowed: usize,
    pub client: Option<u32>,
    /// The broker's CPU, and the SQ thread's unless --sq-cpu names one.
    pub service: Option<u32>,
    pub sq: Option<u32>,
}

impl Cpus {
    pub fn choose(spec: &Spec) -> Cpus {
        let cpus = sys::allowed_cpus();
        let (client, service) = if cpus.len() >= 2 {
            (cpus.last().copied(), cpus.first().copied())
        } else {
            (None, None)
        };
        Cpus {
            allowed: cpus.len(),
            client,
            service,
            sq: spec.ring.sq_cpu.or(service),
        }
    }

    /// What the reader should know about this placement.
    pub fn notes(&self, spec: &Spec) -> Vec<String> {
        let path = spec.offload.path;
        let mut notes = Vec::new();
        if self.allowed < 2 && path != OffloadPath::Native {
            notes.push(
                "only one CPU is usable: the client and its server share it, so every round trip waits for \
                 the scheduler"
                    .into(),
            );
        }
        if path == OffloadPath::Kernel && self.sq.is_some() && self.sq == self.client {
            notes.push(format!(
                "--sq-cpu {} is the client's CPU: the SQ thread and the spinning client take turns at scheduler ticks",
                self.sq.unwrap_or(0)
            ));
        }
        notes
    }

    /// The CPU of the server: the SQPOLL thread's or the broker thread's.
    pub fn server(&self, path: OffloadPath) -> Option<u32> {
        match path {
            OffloadPath::Kernel => self.sq,
            OffloadPath::Broker => self.service,
            OffloadPath::Native => None,
        }
    }
}

/// What the timed span measured.
pub struct Span {
    pub t0: u64,
    pub t1: u64,
    pub ops: u64,
    pub hist: Hist,
    pub windows: u64,
    /// The process at 'go' and at 'done'.
    pub before: Sample,
    pub after: Sample,
    /// Times the server thread went to sleep in between (`server::server_sleeps`).
    pub server_sleeps: Option<u64>,
}

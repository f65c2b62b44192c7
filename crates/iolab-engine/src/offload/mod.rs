//! `--method offload`: a sandboxed client process does I/O without making system calls, through rings in
//! memory it shares with iolab (after the seed hypervisor thesis, which offloaded an isolated partition's
//! syscalls through an io_uring in shared memory).
//!
//! iolab forks the client, which confines itself with a seccomp filter (read, write, exit and exit_group
//! only; any other system call kills it with SIGSYS), then performs the workload by writing requests into
//! shared memory and reading completions back. Three paths:
//! - `kernel`: an io_uring whose rings live in the shared memfd (IORING_SETUP_NO_MMAP), served by an SQPOLL
//!   kernel thread pinned away from the client. The ring is made R_DISABLED, the target is registered as
//!   fixed file 0 and the data area as fixed buffer 0, then IORING_REGISTER_RESTRICTIONS allows only NOP,
//!   READ_FIXED, WRITE_FIXED and FSYNC with IOSQE_FIXED_FILE, and no further registration. When the SQ
//!   thread sleeps the client writes an inherited eventfd (the doorbell) and an iolab thread wakes it.
//!   With `--sq-sleep` the client lets the SQ thread idle out before every round trip, so every request
//!   wakes it through the doorbell (the thesis's interrupt model).
//! - `broker`: iolab's own request format in a shared ring (`broker.rs`); a broker thread copies, checks
//!   and executes each request through its own io_uring.
//! - `native`: the same ring and requests from an unsandboxed client entering the kernel with
//!   io_uring_enter(2): the baseline.
//!
//! Timing, two ways: the client reads the cycle counter itself around each request and each round trip
//! (`cycles.rs`: histograms in the shared region, the figures the thesis's rdtsc gave), and from outside
//! iolab's thread sends "go", then samples the client's completion counter every few milliseconds
//! (CLOCK_MONOTONIC) until the client says "done" (wall time, ops/s).

pub mod broker;
pub mod client;
pub mod cycles;
pub mod figures;
pub mod ring;
pub mod sandbox;
pub mod server;
pub mod shm;
pub mod watch;

use crate::error::{Error, Result};
use crate::measure::clock::ClockInfo;
use crate::measure::hist::Hist;
use crate::result::*;
use crate::runner::Sample;
use crate::spec::{OffloadPath, OpKind, Spec};
use crate::target::{self, PreparedTarget};
use client::Work;
use iolab_sys as sys;
use shm::{Layout, Region};
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;

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
const CANARY_BYTE: u8 = 0xC5;
const UNRELATED_BYTE: u8 = b'U';

/// Runs one offload workload and measures it: the server side (`server.rs`) is set up, the client
/// (`sandbox.rs`) forked, attacked with and timed, the sandbox checked, and the figures (`figures.rs`)
/// assembled.
pub fn run(spec: &Spec, clock: &ClockInfo) -> Result<RunResult> {
    if spec.offload.partition == crate::spec::Partition::Vm {
        return Err(Error::Runtime(
            "internal: --offload-partition vm runs through the lab's run, which boots the guest"
                .into(),
        ));
    }
    let host = Host::current();
    let target = target::setup(spec)?;
    check_target(spec, &target)?;
    let file = target.open_for(spec, spec.op == OpKind::Write)?;
    let shape = Shape::of(spec, &target)?;
    // Declared before every ring and thread that uses it, so it is unmapped last.
    let region = shape.region(spec.seed)?;
    let ctl = region.ctl();
    let mut bait = sandbox::Bait::new(&spec.offload.attacks)?;
    let cpus = Cpus::choose(spec);
    let mut notes = target.notes.clone();
    notes.extend(cpus.notes(spec));
    let mut server = server::Server::setup(spec, &shape, &region, file.as_raw_fd(), &cpus)?;
    let mut client = sandbox::Client::start(spec, &shape, &region, &bait, &server, cpus.client)?;
    let span = server.serve(&region, &shape.layout, |shared, sq_ring| {
        client.drive(spec, shared, sq_ring)
    })?;
    let ended = client.end()?;
    server.close_ring();
    check_requests(&server, ctl, &target, shape.bs)?;
    let checks = bait.check(
        spec.offload.path,
        &spec.offload.attacks,
        ctl,
        &server.shared,
    )?;
    figures::result(figures::Parts {
        spec,
        clock,
        host,
        target: &target,
        shape: &shape,
        cpus: &cpus,
        ctl,
        cycles: region.cycles(),
        server: &server,
        span,
        client: ended,
        checks,
        notes,
    })
}

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
/// RLIMIT_MEMLOCK without root: checked with the spec (spec/offload_opts.rs), before anything is made.
pub fn check_data_area_for(bs: u64, batch: u32) -> Result<()> {
    check_data_area(&Layout {
        ring_len: 0,
        slot: shm::page_up(bs.max(1) as usize),
        buffers: batch as usize,
    })
}

fn check_data_area(layout: &Layout) -> Result<()> {
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

/// Did every request go through? The broker's failure, or the first failed request the client saw.
pub fn check_requests(
    server: &server::Server,
    ctl: &shm::Ctl,
    target: &PreparedTarget,
    bs: usize,
) -> Result<()> {
    if let Some(msg) = server
        .shared
        .failure
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
    {
        return Err(Error::Runtime(msg));
    }
    let errors = ctl.errors.load(Ordering::Relaxed);
    if errors > 0 {
        let res = ctl.first_error_res.load(Ordering::Relaxed);
        return Err(Error::Runtime(format!(
            "{errors} offloaded request(s) failed; the first, at byte offset {} of {}, with {}",
            ctl.first_error_offset.load(Ordering::Relaxed),
            target.path.display(),
            if res < 0 {
                format!("{} ({})", sys::errno_name(-res as i32), -res)
            } else {
                format!("a short transfer of {res} bytes (expected {bs})")
            }
        )));
    }
    Ok(())
}

/// What the timed span measured.
pub struct Span {
    t0: u64,
    t1: u64,
    pub ops: u64,
    pub hist: Hist,
    pub windows: u64,
    /// The process at 'go' and at 'done'.
    pub before: Sample,
    pub after: Sample,
    /// Times the server thread went to sleep in between (`server::server_sleeps`).
    pub server_sleeps: Option<u64>,
}
